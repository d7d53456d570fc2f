//! The device the tests share, or a skip when there is none.

// Each test binary uses part of it.
#![allow(clippy::expect_used, dead_code)]

use std::sync::{Arc, OnceLock};

use broadphase::{BroadPhase, Config};
use broadphase_gpu::{GpuContext, GpuGrid, GpuGridSettings};

/// The shared device (its kernels compiled once for every test), or `None` when there is no
/// adapter: the test is then skipped, unless `BROADPHASE_REQUIRE_GPU=1` makes that a failure.
pub fn context() -> Option<Arc<GpuContext>> {
    static CTX: OnceLock<Option<Arc<GpuContext>>> = OnceLock::new();
    CTX.get_or_init(|| match GpuContext::new() {
        Ok(ctx) => {
            eprintln!("{}", ctx.adapter());
            Some(ctx)
        }
        Err(e) => {
            assert!(
                std::env::var("BROADPHASE_REQUIRE_GPU").as_deref() != Ok("1"),
                "BROADPHASE_REQUIRE_GPU=1, but there is no device: {e}"
            );
            eprintln!("skipped: {e}");
            None
        }
    })
    .clone()
}

/// A grid with `settings` on the shared device.
pub fn grid(ctx: &Arc<GpuContext>, config: Config, settings: GpuGridSettings) -> GpuGrid {
    broadphase_gpu::with_context(config, settings, Arc::clone(ctx)).expect("valid settings")
}

/// The same, boxed, for the differential suite.
pub fn boxed(ctx: &Arc<GpuContext>, settings: GpuGridSettings) -> Box<dyn BroadPhase> {
    Box::new(grid(ctx, Config::default(), settings))
}

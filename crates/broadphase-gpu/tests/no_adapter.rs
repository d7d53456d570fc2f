//! With no backend to run on, the constructor says so: an error, never a panic. A test binary
//! of its own, since it sets the backend through the environment.

#![allow(clippy::expect_used, clippy::panic)]

use broadphase::Config;
use broadphase_gpu::GpuError;

#[test]
fn no_adapter_is_an_error() {
    // GL is not built in: asking for it alone finds no adapter.
    std::env::set_var("WGPU_BACKEND", "gl");
    assert_eq!(
        broadphase_gpu::new(Config::default()).err(),
        Some(GpuError::NoAdapter)
    );
    assert_eq!(broadphase_gpu::adapter_summary(), Err(GpuError::NoAdapter));
}

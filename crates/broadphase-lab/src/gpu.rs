//! GpuGrid in the lab (cargo feature `gpu`): whether a device is there, what it is, GpuGrid as
//! a broad phase for `bplab run`, and the GpuGrid contender of `bplab bench`.
//!
//! Without the feature, or without a device, the lab runs as before: `bplab gpu-info` says why
//! there is no device, `bplab run` and `bplab bench` leave GpuGrid out, and asking for it is an
//! error that says why.

use serde::{Deserialize, Serialize};

/// The contender's name in bench results and on the command line (`bplab run --algo gpugrid`).
pub const NAME: &str = "gpugrid";

/// The name in `bplab run`'s rows, beside the algorithms' type names.
pub const DISPLAY_NAME: &str = "GpuGrid";

/// The device GpuGrid would run on, as the lab reports it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Adapter {
    /// The adapter's name (`NVIDIA H100`, `llvmpipe (LLVM 15.0.6, 256 bits)`).
    pub name: String,
    /// The backend: Vulkan, Metal, Dx12.
    pub backend: String,
    /// wgpu's device type: DiscreteGpu, IntegratedGpu, VirtualGpu, Cpu or Other.
    pub device_type: String,
    /// The driver and its version.
    pub driver: String,
    /// Whether it is a CPU: a software driver, whose times are not a GPU's.
    pub cpu: bool,
}

impl Adapter {
    /// `name (backend, type)`, as tables print it.
    ///
    /// ```
    /// let a = broadphase_lab::gpu::Adapter {
    ///     name: "llvmpipe".into(),
    ///     backend: "Vulkan".into(),
    ///     device_type: "Cpu".into(),
    ///     driver: "llvmpipe".into(),
    ///     cpu: true,
    /// };
    /// assert_eq!(a.label(), "llvmpipe (Vulkan, Cpu)");
    /// ```
    pub fn label(&self) -> String {
        format!("{} ({}, {})", self.name, self.backend, self.device_type)
    }
}

/// Why there is no GpuGrid in a lab built without the `gpu` feature.
#[cfg(not(feature = "gpu"))]
const NO_FEATURE: &str = "this bplab was built without the `gpu` feature";

/// A description of the device GpuGrid would run on (adapter, backend, limits), or why there
/// is none.
///
/// # Errors
/// The reason, as text: no device, or a lab built without the `gpu` feature.
pub fn info() -> Result<String, String> {
    #[cfg(feature = "gpu")]
    {
        broadphase_gpu::adapter_summary()
            .map(|s| s.to_string())
            .map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "gpu"))]
    {
        Err(NO_FEATURE.to_string())
    }
}

/// The device GpuGrid would run on, or why there is none.
///
/// # Errors
/// The reason, as text: no device (`GpuError::NoAdapter`'s message), or a lab built without
/// the `gpu` feature.
pub fn adapter() -> Result<Adapter, String> {
    #[cfg(feature = "gpu")]
    {
        broadphase_gpu::adapter_summary()
            .map(|s| Adapter {
                cpu: s.is_cpu(),
                name: s.name,
                backend: s.backend,
                device_type: s.device_type,
                driver: s.driver,
            })
            .map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "gpu"))]
    {
        Err(NO_FEATURE.to_string())
    }
}

/// Whether GpuGrid can run here: the `gpu` feature is on and a device answers.
pub fn available() -> bool {
    info().is_ok()
}

/// A GpuGrid with the lab's defaults, as a broad phase.
///
/// # Errors
/// The reason there is none, as text.
pub fn grid(config: broadphase::Config) -> Result<Box<dyn broadphase::BroadPhase>, String> {
    #[cfg(feature = "gpu")]
    {
        broadphase_gpu::new(config)
            .map(|g| Box::new(g) as Box<dyn broadphase::BroadPhase>)
            .map_err(|e| e.to_string())
    }
    #[cfg(not(feature = "gpu"))]
    {
        let _ = config;
        Err(NO_FEATURE.to_string())
    }
}

//! GpuGrid in the lab (cargo feature `gpu`): whether a device is there, what it is, and the
//! GpuGrid contender of `bplab bench`.
//!
//! Without the feature, or without a device, the lab runs as before: `bplab gpu-info` says why
//! there is no device, and `bplab bench` leaves GpuGrid out.

/// The contender's name in bench results.
pub const NAME: &str = "gpugrid";

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
        Err("this bplab was built without the `gpu` feature".to_string())
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
        Err("this bplab was built without the `gpu` feature".to_string())
    }
}

//! What the GPU can refuse.

/// Why a [`GpuGrid`](crate::GpuGrid) could not be made or could not update.
///
/// [`update`](broadphase::BroadPhase::update) reports these as
/// [`broadphase::Error::Device`], with this error's text as the message.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GpuError {
    /// No adapter (GPU or software driver) was found: nothing to run the kernels on.
    #[error("no GPU adapter found (no Vulkan, Metal or DirectX 12 device)")]
    NoAdapter,
    /// The adapter refused to open a device.
    #[error("the GPU device could not be opened: {0}")]
    RequestDevice(String),
    /// The device was lost (a driver reset, a removed GPU): a fresh device is opened at the
    /// next update.
    #[error("the GPU device was lost: {0}")]
    DeviceLost(String),
    /// The device ran out of memory.
    #[error("the GPU ran out of memory: {0}")]
    OutOfMemory(String),
    /// The device refused a command (a buffer beyond its limits, say).
    #[error("the GPU refused a command: {0}")]
    Validation(String),
    /// A result could not be read back from the device.
    #[error("a GPU buffer could not be read back: {0}")]
    Readback(String),
    /// An invalid setting ([`GpuGridSettings::validate`](crate::GpuGridSettings::validate)).
    #[error(transparent)]
    Settings(#[from] broadphase::Error),
}

impl From<GpuError> for broadphase::Error {
    fn from(e: GpuError) -> Self {
        match e {
            GpuError::Settings(inner) => inner,
            other => broadphase::Error::Device {
                message: other.to_string(),
            },
        }
    }
}

impl From<wgpu::Error> for GpuError {
    fn from(e: wgpu::Error) -> Self {
        match e {
            wgpu::Error::OutOfMemory { .. } => GpuError::OutOfMemory(e.to_string()),
            _ => GpuError::Validation(e.to_string()),
        }
    }
}

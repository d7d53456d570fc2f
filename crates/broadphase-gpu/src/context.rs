//! The device: adapter, device and queue, the compiled kernels, and what went wrong on it.

use std::fmt;
use std::sync::{Arc, Mutex, PoisonError};

use crate::kernels::Kernels;
use crate::GpuError;

/// The adapter a [`GpuContext`] runs on: its name, backend and the limits that bound a
/// [`GpuGrid`](crate::GpuGrid) (buffers hold every box and every cell id of a frame).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct AdapterSummary {
    /// The adapter's name (`llvmpipe (LLVM 15.0.6, 256 bits)` for Mesa's software Vulkan).
    pub name: String,
    /// The backend: Vulkan, Metal, Dx12.
    pub backend: String,
    /// Discrete, integrated, virtual GPU, or CPU (a software driver).
    pub device_type: String,
    /// The driver and its version, as the driver says.
    pub driver: String,
    /// The largest buffer, in bytes.
    pub max_buffer_size: u64,
    /// The largest storage buffer a kernel may bind, in bytes.
    pub max_storage_buffer_binding_size: u32,
    /// Storage buffers a kernel may bind (the grid's kernels bind at most 7).
    pub max_storage_buffers_per_shader_stage: u32,
    /// Workgroups per dispatch dimension (dispatches spill into a second dimension).
    pub max_compute_workgroups_per_dimension: u32,
    /// Invocations per workgroup (the scan's workgroups have 256).
    pub max_compute_invocations_per_workgroup: u32,
}

impl AdapterSummary {
    fn new(adapter: &wgpu::Adapter) -> Self {
        let info = adapter.get_info();
        let limits = adapter.limits();
        Self {
            name: info.name,
            backend: format!("{:?}", info.backend),
            device_type: format!("{:?}", info.device_type),
            driver: format!("{} {}", info.driver, info.driver_info)
                .trim()
                .to_string(),
            max_buffer_size: limits.max_buffer_size,
            max_storage_buffer_binding_size: limits.max_storage_buffer_binding_size,
            max_storage_buffers_per_shader_stage: limits.max_storage_buffers_per_shader_stage,
            max_compute_workgroups_per_dimension: limits.max_compute_workgroups_per_dimension,
            max_compute_invocations_per_workgroup: limits.max_compute_invocations_per_workgroup,
        }
    }
}

impl AdapterSummary {
    /// Whether the adapter is a CPU: a software driver such as Mesa's lavapipe (llvmpipe),
    /// whose frame times say that the kernels run, not how fast a GPU runs them.
    ///
    /// ```no_run
    /// let adapter = broadphase_gpu::adapter_summary()?;
    /// if adapter.is_cpu() {
    ///     eprintln!("{} is a software driver: not a GPU figure", adapter.name);
    /// }
    /// # Ok::<(), broadphase_gpu::GpuError>(())
    /// ```
    #[must_use]
    pub fn is_cpu(&self) -> bool {
        self.device_type == format!("{:?}", wgpu::DeviceType::Cpu)
    }
}

impl fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "adapter: {} ({}, {})",
            self.name, self.backend, self.device_type
        )?;
        writeln!(f, "driver: {}", self.driver)?;
        writeln!(f, "max buffer size: {} bytes", self.max_buffer_size)?;
        writeln!(
            f,
            "max storage buffer binding: {} bytes",
            self.max_storage_buffer_binding_size
        )?;
        writeln!(
            f,
            "storage buffers per kernel: {}",
            self.max_storage_buffers_per_shader_stage
        )?;
        writeln!(
            f,
            "workgroups per dimension: {}",
            self.max_compute_workgroups_per_dimension
        )?;
        write!(
            f,
            "invocations per workgroup: {}",
            self.max_compute_invocations_per_workgroup
        )
    }
}

/// Finds the adapter a [`GpuContext`] would run on, without opening a device: what
/// `bplab` prints about the GPU.
///
/// # Errors
/// [`GpuError::NoAdapter`] when there is none.
pub fn adapter_summary() -> Result<AdapterSummary, GpuError> {
    let (_, adapter) = find_adapter()?;
    Ok(AdapterSummary::new(&adapter))
}

/// The backends from `WGPU_BACKEND` (as wgpu reads it) and the first adapter they offer,
/// preferring a GPU to a software driver.
fn find_adapter() -> Result<(wgpu::Instance, wgpu::Adapter), GpuError> {
    let instance = wgpu::Instance::new(&wgpu::InstanceDescriptor::from_env_or_default());
    let options = wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::from_env()
            .unwrap_or(wgpu::PowerPreference::HighPerformance),
        force_fallback_adapter: false,
        compatible_surface: None,
    };
    let adapter =
        pollster::block_on(instance.request_adapter(&options)).map_err(|_| GpuError::NoAdapter)?;
    Ok((instance, adapter))
}

/// What the device reported outside an error scope, and whether it was lost.
#[derive(Debug, Default)]
struct Faults {
    lost: Option<String>,
    uncaptured: Option<String>,
}

/// An open device with the grid's kernels compiled: made once, shared by every
/// [`GpuGrid`](crate::GpuGrid) made from it ([`crate::with_context`]), which saves compiling
/// the kernels again for each (on a software driver that takes a good part of a second).
pub struct GpuContext {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) kernels: Kernels,
    summary: AdapterSummary,
    faults: Arc<Mutex<Faults>>,
}

impl fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GpuContext")
            .field("adapter", &self.summary.name)
            .field("backend", &self.summary.backend)
            .finish_non_exhaustive()
    }
}

impl GpuContext {
    /// Opens the first adapter's device (see [`adapter_summary`]) with the adapter's own
    /// limits, and compiles the kernels.
    ///
    /// # Errors
    /// [`GpuError::NoAdapter`] when there is no adapter, [`GpuError::RequestDevice`] when it
    /// refuses a device, [`GpuError::Validation`] if a kernel does not compile.
    pub fn new() -> Result<Arc<Self>, GpuError> {
        let (_instance, adapter) = find_adapter()?;
        let summary = AdapterSummary::new(&adapter);
        let descriptor = wgpu::DeviceDescriptor {
            label: Some("broadphase-gpu"),
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&descriptor))
            .map_err(|e| GpuError::RequestDevice(e.to_string()))?;
        let faults = Arc::new(Mutex::new(Faults::default()));
        // Without a handler wgpu panics on an error outside a scope: keep it for the next
        // update instead.
        let sink = Arc::clone(&faults);
        device.on_uncaptured_error(Box::new(move |e| {
            let mut f = sink.lock().unwrap_or_else(PoisonError::into_inner);
            f.uncaptured.get_or_insert_with(|| e.to_string());
        }));
        let sink = Arc::clone(&faults);
        device.set_device_lost_callback(move |reason, message| {
            let mut f = sink.lock().unwrap_or_else(PoisonError::into_inner);
            f.lost
                .get_or_insert_with(|| format!("{reason:?}: {message}"));
        });
        device.push_error_scope(wgpu::ErrorFilter::Validation);
        let kernels = Kernels::new(&device);
        if let Some(e) = pollster::block_on(device.pop_error_scope()) {
            return Err(GpuError::Validation(e.to_string()));
        }
        Ok(Arc::new(Self {
            device,
            queue,
            kernels,
            summary,
            faults,
        }))
    }

    /// The adapter the device is on.
    #[must_use]
    pub fn adapter(&self) -> &AdapterSummary {
        &self.summary
    }

    /// The device lost (for good), or an error raised outside an update's error scopes
    /// since the last call (reported once: it failed one update, not the device).
    pub(crate) fn fault(&self) -> Option<GpuError> {
        let mut f = self.faults.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = &f.lost {
            return Some(GpuError::DeviceLost(m.clone()));
        }
        f.uncaptured.take().map(GpuError::Validation)
    }

    /// Destroys the device, as a driver reset would: every later use fails, and the grids on
    /// it open a fresh device at their next update. For tests of that recovery.
    #[doc(hidden)]
    pub fn lose_device(&self) {
        self.device.destroy();
    }
}

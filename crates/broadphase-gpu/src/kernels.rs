//! The compiled kernels, their bind group layouts, and the helpers that bind buffers and size
//! dispatches.

/// The grid's geometry, prepended to the kernels that read boxes or cells.
const COMMON: &str = include_str!("shaders/common.wgsl");
const UPLOAD: &str = include_str!("shaders/upload.wgsl");
const CELLS: &str = include_str!("shaders/cells.wgsl");
const SCAN: &str = include_str!("shaders/scan.wgsl");
const RADIX: &str = include_str!("shaders/radix.wgsl");
const COLLIDE: &str = include_str!("shaders/collide.wgsl");

/// Invocations per workgroup of every kernel but the scan's.
pub(crate) const GROUP: u32 = 64;
/// Values per workgroup of the scan.
pub(crate) const TILE: u32 = 256;
/// Entries per invocation of the radix passes (`BLOCK` in `radix.wgsl`).
pub(crate) const RADIX_BLOCK: u32 = 256;
/// Workgroups per dispatch dimension that every device allows.
const MAX_GROUPS_X: u32 = 65_535;

/// How a kernel binds one buffer.
#[derive(Clone, Copy)]
enum Slot {
    Uniform,
    Read,
    Write,
}

/// One module's layout and its entry points' pipelines.
pub(crate) struct Module {
    pub layout: wgpu::BindGroupLayout,
}

/// Every kernel of the grid.
pub(crate) struct Kernels {
    pub upload: Module,
    pub cells: Module,
    pub scan: Module,
    pub radix: Module,
    pub collide: Module,
    pub scatter_boxes: wgpu::ComputePipeline,
    pub assign_levels: wgpu::ComputePipeline,
    pub count_entries: wgpu::ComputePipeline,
    pub emit_entries: wgpu::ComputePipeline,
    pub scan_blocks: wgpu::ComputePipeline,
    pub add_offsets: wgpu::ComputePipeline,
    pub radix_count: wgpu::ComputePipeline,
    pub radix_scatter: wgpu::ComputePipeline,
    pub find_cells: wgpu::ComputePipeline,
    pub test_pairs: wgpu::ComputePipeline,
}

fn layout(device: &wgpu::Device, label: &str, slots: &[Slot]) -> wgpu::BindGroupLayout {
    let entries: Vec<wgpu::BindGroupLayoutEntry> = slots
        .iter()
        .enumerate()
        .map(|(i, slot)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match slot {
                    Slot::Uniform => wgpu::BufferBindingType::Uniform,
                    Slot::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    Slot::Write => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect();
    device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    })
}

fn module(
    device: &wgpu::Device,
    label: &str,
    source: String,
    slots: &[Slot],
) -> (Module, wgpu::ShaderModule) {
    let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    (
        Module {
            layout: layout(device, label, slots),
        },
        shader,
    )
}

fn pipeline(
    device: &wgpu::Device,
    module: &Module,
    shader: &wgpu::ShaderModule,
    entry: &str,
) -> wgpu::ComputePipeline {
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(entry),
        bind_group_layouts: &[&module.layout],
        push_constant_ranges: &[],
    });
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(&layout),
        module: shader,
        entry_point: Some(entry),
        compilation_options: wgpu::PipelineCompilationOptions::default(),
        cache: None,
    })
}

impl Kernels {
    /// Compiles every kernel (errors surface in the device's error scope).
    pub fn new(device: &wgpu::Device) -> Self {
        use Slot::{Read, Uniform, Write};
        let with_common = |s: &str| format!("{COMMON}\n{s}");
        let (upload, upload_shader) = module(
            device,
            "upload",
            with_common(UPLOAD),
            &[Uniform, Read, Write],
        );
        let (cells, cells_shader) = module(
            device,
            "cells",
            with_common(CELLS),
            &[Uniform, Read, Write, Write, Write, Write, Write, Write],
        );
        let (scan, scan_shader) =
            module(device, "scan", SCAN.to_string(), &[Uniform, Write, Write]);
        let (radix, radix_shader) = module(
            device,
            "radix",
            RADIX.to_string(),
            &[Uniform, Read, Read, Write, Write, Write],
        );
        let (collide, collide_shader) = module(
            device,
            "collide",
            with_common(COLLIDE),
            &[Uniform, Read, Read, Read, Read, Write, Write],
        );
        Self {
            scatter_boxes: pipeline(device, &upload, &upload_shader, "scatter_boxes"),
            assign_levels: pipeline(device, &cells, &cells_shader, "assign_levels"),
            count_entries: pipeline(device, &cells, &cells_shader, "count_entries"),
            emit_entries: pipeline(device, &cells, &cells_shader, "emit_entries"),
            scan_blocks: pipeline(device, &scan, &scan_shader, "scan_blocks"),
            add_offsets: pipeline(device, &scan, &scan_shader, "add_offsets"),
            radix_count: pipeline(device, &radix, &radix_shader, "radix_count"),
            radix_scatter: pipeline(device, &radix, &radix_shader, "radix_scatter"),
            find_cells: pipeline(device, &collide, &collide_shader, "find_cells"),
            test_pairs: pipeline(device, &collide, &collide_shader, "test_pairs"),
            upload,
            cells,
            scan,
            radix,
            collide,
        }
    }
}

/// A bind group of `buffers`, bound in order.
pub(crate) fn bind(
    device: &wgpu::Device,
    module: &Module,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
        .iter()
        .enumerate()
        .map(|(i, b)| wgpu::BindGroupEntry {
            binding: i as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &module.layout,
        entries: &entries,
    })
}

/// A uniform buffer holding `value`, written through the queue (a buffer mapped at creation
/// would be read through a call that panics when the device is lost).
pub(crate) fn uniform<T: bytemuck::Pod>(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    value: &T,
) -> wgpu::Buffer {
    let bytes = bytemuck::bytes_of(value);
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: bytes.len() as u64,
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    queue.write_buffer(&buffer, 0, bytes);
    buffer
}

/// Dispatches enough workgroups of `per_group` invocations for `n`, laid out in x and then
/// y (the kernels compute their index from both), or nothing for `n == 0`.
pub(crate) fn dispatch(pass: &mut wgpu::ComputePass<'_>, n: u32, per_group: u32) {
    if n == 0 {
        return;
    }
    let groups = n.div_ceil(per_group);
    let x = groups.min(MAX_GROUPS_X);
    pass.dispatch_workgroups(x, groups.div_ceil(x), 1);
}

/// The uniform of the scan kernels.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct Span {
    pub n: u32,
    pub pad: [u32; 3],
}

/// The uniform of a radix pass.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct RadixPass {
    pub n: u32,
    pub shift: u32,
    pub width: u32,
    pub blocks: u32,
}

/// The uniform of the grid kernels (`Grid` in `common.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct GridUniform {
    pub counts: [u32; 4],
    pub extra: [u32; 4],
    pub inv: [[f32; 4]; 8],
    pub rules: [[u32; 4]; 32],
}

//! The device buffers of a grid, grown as the proxies, cell ids and pairs need, and the one
//! way results come back (a copy into a mappable buffer, then a map).

use crate::context::GpuContext;
use crate::GpuError;

/// Bytes of one box on the device (`Box` in `common.wgsl`: two `vec4<u32>`).
pub(crate) const BOX_BYTES: u64 = 32;
/// Bytes of one upload record (`Update` in `upload.wgsl`).
pub(crate) const UPDATE_BYTES: u64 = 48;
/// Counters in `state` (`S_*` in `common.wgsl`), padded.
pub(crate) const STATE_WORDS: u64 = 8;

const STORAGE: wgpu::BufferUsages = wgpu::BufferUsages::STORAGE;
const COPY_SRC: wgpu::BufferUsages = wgpu::BufferUsages::COPY_SRC;
const COPY_DST: wgpu::BufferUsages = wgpu::BufferUsages::COPY_DST;

/// A buffer and how many items of `item` bytes it holds.
pub(crate) struct Grown {
    pub buffer: wgpu::Buffer,
    pub items: u64,
    item: u64,
    usage: wgpu::BufferUsages,
    label: &'static str,
}

impl Grown {
    fn new(
        device: &wgpu::Device,
        label: &'static str,
        item: u64,
        items: u64,
        usage: wgpu::BufferUsages,
    ) -> Self {
        // A first guess (the cell ids' is 8 per box) above the limit would fail where the
        // items needed fit: start at the limit, and grow when a frame needs more.
        let items = items.min(bindable(device, item, usage)).max(1);
        Self {
            buffer: create(device, label, item * items, usage),
            items,
            item,
            usage,
            label,
        }
    }

    /// Makes room for `items`, doubling, and says whether the buffer was replaced (its
    /// contents are then zeros, or a copy of the old ones when `keep` records it).
    fn reserve(
        &mut self,
        device: &wgpu::Device,
        items: u64,
        keep: Option<&mut wgpu::CommandEncoder>,
    ) -> bool {
        if items <= self.items {
            return false;
        }
        // Doubling past what the adapter binds would refuse a buffer that the items
        // themselves fit in (4 million boxes' cell ids are 128 MiB, lavapipe's whole binding
        // limit): grow at most to the limit, and beyond it only as far as asked (the device
        // then refuses the buffer with an error, which fails the update).
        let grown = items.max((self.items * 2).min(bindable(device, self.item, self.usage)));
        let buffer = create(device, self.label, grown * self.item, self.usage);
        if let Some(encoder) = keep {
            encoder.copy_buffer_to_buffer(&self.buffer, 0, &buffer, 0, self.items * self.item);
        }
        self.buffer = buffer;
        self.items = grown;
        true
    }

    /// Bytes on the device.
    pub fn bytes(&self) -> u64 {
        self.items * self.item
    }
}

/// The most items of `item` bytes one buffer of `usage` may hold on `device`: a storage buffer
/// is bound whole, so the adapter's binding limit (which `GpuContext` requests, rather than
/// wgpu's defaults) bounds it; any other buffer, the largest buffer.
fn bindable(device: &wgpu::Device, item: u64, usage: wgpu::BufferUsages) -> u64 {
    let limits = device.limits();
    let bytes = if usage.contains(STORAGE) {
        u64::from(limits.max_storage_buffer_binding_size).min(limits.max_buffer_size)
    } else {
        limits.max_buffer_size
    };
    bytes / item.max(1)
}

fn create(
    device: &wgpu::Device,
    label: &'static str,
    bytes: u64,
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    // A binding must not be empty, and copies move whole words.
    let size = bytes.max(16).next_multiple_of(wgpu::COPY_BUFFER_ALIGNMENT);
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage,
        mapped_at_creation: false,
    })
}

/// Every buffer of one grid on one device.
pub(crate) struct Buffers {
    /// Per slot: the box and its filter data, kept between updates.
    pub boxes: Grown,
    /// Per slot: the level the box lives on.
    pub levels: Grown,
    /// Per slot and one more: cell ids to write, then (scanned) where to write them.
    pub counts: Grown,
    /// The slots no level holds, for the CPU.
    pub oversized: Grown,
    /// The frame's upload records.
    pub updates: Grown,
    /// The counters (`S_*` in `common.wgsl`).
    pub state: Grown,
    /// Cell ids: keys and values, twice (the radix passes go back and forth).
    pub keys: [Grown; 2],
    pub vals: [Grown; 2],
    /// The radix passes' digit counts per block.
    pub hist: Grown,
    /// Tile totals of the scan, one buffer per level of its recursion.
    pub sums: Vec<Grown>,
    /// The pairs found, as (smaller slot, larger slot).
    pub pairs: Grown,
    /// Where results are copied to be read.
    pub staging: Grown,
}

impl Buffers {
    pub fn new(device: &wgpu::Device, slots: u64, pair_capacity: u64) -> Self {
        let entries = |label| Grown::new(device, label, 4, slots * 8, STORAGE);
        Self {
            boxes: Grown::new(
                device,
                "boxes",
                BOX_BYTES,
                slots,
                STORAGE | COPY_SRC | COPY_DST,
            ),
            levels: Grown::new(device, "levels", 4, slots, STORAGE),
            counts: Grown::new(device, "counts", 4, slots + 1, STORAGE | COPY_SRC),
            oversized: Grown::new(device, "oversized", 4, slots, STORAGE | COPY_SRC),
            updates: Grown::new(device, "updates", UPDATE_BYTES, slots, STORAGE | COPY_DST),
            state: Grown::new(
                device,
                "state",
                4,
                STATE_WORDS,
                STORAGE | COPY_SRC | COPY_DST,
            ),
            keys: [entries("keys"), entries("keys")],
            vals: [entries("values"), entries("values")],
            hist: Grown::new(device, "histogram", 4, 256, STORAGE),
            sums: Vec::new(),
            pairs: Grown::new(device, "pairs", 8, pair_capacity, STORAGE | COPY_SRC),
            staging: Grown::new(
                device,
                "staging",
                4,
                64,
                wgpu::BufferUsages::MAP_READ | COPY_DST,
            ),
        }
    }

    /// Room for `slots` proxies; the boxes are copied into a grown buffer by `encoder`.
    pub fn reserve_slots(
        &mut self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        slots: u64,
    ) {
        self.boxes.reserve(device, slots, Some(encoder));
        self.levels.reserve(device, slots, None);
        self.counts.reserve(device, slots + 1, None);
        self.oversized.reserve(device, slots, None);
    }

    pub fn reserve_updates(&mut self, device: &wgpu::Device, updates: u64) {
        self.updates.reserve(device, updates, None);
    }

    /// Room for `entries` cell ids and a radix histogram of `hist` counts.
    pub fn reserve_entries(&mut self, device: &wgpu::Device, entries: u64, hist: u64) {
        for b in self.keys.iter_mut().chain(self.vals.iter_mut()) {
            b.reserve(device, entries, None);
        }
        self.hist.reserve(device, hist, None);
    }

    /// Room for `pairs` pairs (the old ones are not kept: the pass runs again).
    pub fn reserve_pairs(&mut self, device: &wgpu::Device, pairs: u64) -> bool {
        self.pairs.reserve(device, pairs, None)
    }

    /// The tile-total buffer of scan level `depth`, with room for `n` totals.
    pub fn sums(&mut self, device: &wgpu::Device, depth: usize, n: u64) -> &wgpu::Buffer {
        while self.sums.len() <= depth {
            self.sums
                .push(Grown::new(device, "scan totals", 4, n, STORAGE));
        }
        let g = &mut self.sums[depth];
        g.reserve(device, n, None);
        &g.buffer
    }

    /// Bytes held on the device.
    pub fn bytes(&self) -> u64 {
        [
            &self.boxes,
            &self.levels,
            &self.counts,
            &self.oversized,
            &self.updates,
            &self.state,
            &self.hist,
            &self.pairs,
            &self.staging,
        ]
        .into_iter()
        .chain(&self.keys)
        .chain(&self.vals)
        .chain(&self.sums)
        .map(Grown::bytes)
        .sum()
    }
}

/// Submits `encoder`, which ends by copying `words` u32 into `staging` from its start, and
/// reads them back (blocking until the device is done).
pub(crate) fn submit_and_read(
    ctx: &GpuContext,
    encoder: wgpu::CommandEncoder,
    staging: &wgpu::Buffer,
    words: u64,
) -> Result<Vec<u32>, GpuError> {
    ctx.queue.submit([encoder.finish()]);
    if words == 0 {
        return Ok(Vec::new());
    }
    let slice = staging.slice(0..words * 4);
    let (tx, rx) = std::sync::mpsc::channel();
    slice.map_async(wgpu::MapMode::Read, move |r| {
        // The receiver waits below; if it is gone there is no one to tell.
        let _ = tx.send(r);
    });
    // A lost device makes wgpu's poll panic: ask first.
    if let Some(fault) = ctx.fault() {
        return Err(fault);
    }
    ctx.device
        .poll(wgpu::PollType::Wait)
        .map_err(|e| GpuError::Readback(e.to_string()))?;
    match rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(ctx.fault().unwrap_or(GpuError::Readback(e.to_string()))),
        Err(_) => {
            return Err(ctx
                .fault()
                .unwrap_or_else(|| GpuError::Readback("the map never completed".into())))
        }
    }
    let words: Vec<u32> = {
        let data = slice.get_mapped_range();
        data.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    };
    staging.unmap();
    Ok(words)
}

/// Makes sure `staging` holds `words`.
pub(crate) fn reserve_staging(bufs: &mut Buffers, device: &wgpu::Device, words: u64) {
    bufs.staging.reserve(device, words, None);
}

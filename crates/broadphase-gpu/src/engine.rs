//! [`GpuGridEngine`]: the frame on the device, and the CPU's part (boxes no level holds, the
//! diff of the sorted pair keys).

use std::ops::ControlFlow;
use std::sync::Arc;

use broadphase::engine::{pair_key, Engine, PairChanges, PairList, Store};
use broadphase::{Aabb, Algorithm, Error, Figures, GridFigures, Layer, Stats};

use crate::buffers::{reserve_staging, submit_and_read, Buffers, STATE_WORDS};
use crate::context::GpuContext;
use crate::kernels::{
    bind, dispatch, uniform, GridUniform, RadixPass, Span, GROUP, RADIX_BLOCK, TILE,
};
use crate::{GpuError, GpuGridSettings};

/// Levels of the hierarchical grid, each four times coarser than the last (the bits of the
/// level mask and of an entry's level field).
const LEVELS: u32 = 32;
/// Cell size ratio between consecutive levels.
const LEVEL_RATIO: f64 = 4.0;
/// Slots a cell id can name (`SLOT_MASK` in `common.wgsl`).
const MAX_SLOTS: usize = 1 << 24;
/// Boxes sampled to choose the cell size.
const SAMPLE: usize = 4096;
/// The extents of the sampled boxes: the cell is the largest of their largest extents, or
/// this quantile of them when the largest is an outlier, so that most boxes live on level 0
/// and cover at most two cells per axis.
const CELL_QUANTILE: f64 = 0.9;
/// Flags of a box on the device (`ALIVE`, `FIXED` in `common.wgsl`).
const ALIVE: u32 = 1;
const FIXED: u32 = 2;
/// Indices of the counters (`S_*` in `common.wgsl`).
const S_MASK: usize = 0;
const S_OVERSIZED: usize = 1;
const S_HOME: usize = 2;
const S_PAIRS: usize = 3;
const S_TESTS: usize = 4;
const S_CELLS: usize = 5;

/// One changed slot as uploaded (`Update` in `upload.wgsl`).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Update {
    lo: [u32; 4],
    hi: [u32; 4],
    slot: [u32; 4],
}

/// The order-preserving key of a coordinate: keys compare as the floats do (`-0.0` and
/// `0.0` share one), and the kernels compare keys, never floats.
fn coordinate_key(x: f32) -> u32 {
    let bits = if x == 0.0 { 0 } else { x.to_bits() };
    if bits & 0x8000_0000 != 0 {
        !bits
    } else {
        bits | 0x8000_0000
    }
}

/// Slot `s` as the device keeps it: a live proxy's box keys, flags and group, or zeros.
fn record(store: &Store, s: usize) -> Update {
    let mut u = Update::zeroed_with_slot(s as u32);
    if store.is_alive(s) {
        let (b, d) = (store.aabb_at(s), store.desc_at(s));
        let fixed = if d.is_fixed() { FIXED } else { 0 };
        let flags = ALIVE | fixed | (u32::from(d.layer.0) << 8);
        u.lo = [
            coordinate_key(b.min[0]),
            coordinate_key(b.min[1]),
            coordinate_key(b.min[2]),
            flags,
        ];
        u.hi = [
            coordinate_key(b.max[0]),
            coordinate_key(b.max[1]),
            coordinate_key(b.max[2]),
            d.group.0,
        ];
    }
    u
}

impl Update {
    fn zeroed_with_slot(slot: u32) -> Self {
        Self {
            lo: [0; 4],
            hi: [0; 4],
            slot: [slot, 0, 0, 0],
        }
    }
}

/// What the last update counted, on the device and on the CPU.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct GpuFigures {
    /// Cell ids written (home and phantom, on every level a box lives on or visits).
    pub cell_ids: u64,
    /// Home cells written: the cell holding a box's centre, on the level it lives on.
    pub home_cells: u64,
    /// Cells holding two entries or more.
    pub collision_cells: u64,
    /// Candidate pairs tested on the device.
    pub gpu_tests: u64,
    /// Pairs found on the device (before the CPU adds the oversized boxes' pairs).
    pub gpu_pairs: u64,
    /// (slot, box) records uploaded: every live box at the first update (and after a
    /// failure), then only the changed slots.
    pub uploaded: u64,
    /// Boxes no level holds, tested on the CPU against every box.
    pub oversized: u64,
    /// Candidate pairs tested on the CPU (the oversized boxes').
    pub cpu_tests: u64,
    /// Radix passes over the cell ids.
    pub radix_passes: u64,
    /// Bits of a cell id the sort orders.
    pub key_bits: u64,
    /// Levels holding boxes.
    pub levels: u64,
    /// Times the pair buffer overflowed and the pair pass ran again, since the engine was made.
    pub overflows: u64,
    /// The pair buffer's capacity, in pairs.
    pub pair_capacity: u64,
    /// Bytes held on the device.
    pub device_bytes: u64,
    /// Times a fresh device was opened after a failure.
    pub recoveries: u64,
}

/// [`GpuGrid`](crate::GpuGrid)'s engine: the boxes on the device, updated each frame with the
/// moved ones only, and the sorted pair keys of the last update on the CPU.
///
/// Each update with a change runs the whole grid on the device (cell ids, sort, collision
/// cells, pair tests) and diffs the pairs found against the last update's on the CPU.
pub struct GpuGridEngine {
    settings: GpuGridSettings,
    ctx: Arc<GpuContext>,
    /// `None` before the first update, and after a failure: the next update uploads every box.
    bufs: Option<Buffers>,
    /// Every pair of the last update, sorted.
    keys: Vec<u64>,
    /// This update's pairs, then (swapped) the last update's memory.
    next: Vec<u64>,
    /// The fine cell size and the live proxies it was chosen for.
    cell: Option<f64>,
    cell_for: usize,
    /// The layer matrix as the kernels read it.
    rules: [[u32; 4]; 32],
    pair_capacity: u64,
    failed: bool,
    figures: GpuFigures,
}

impl std::fmt::Debug for GpuGridEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuGridEngine")
            .field("settings", &self.settings)
            .field("context", &self.ctx)
            .field("pairs", &self.keys.len())
            .field("figures", &self.figures)
            .finish_non_exhaustive()
    }
}

impl GpuGridEngine {
    /// An engine holding nothing, on `ctx`'s device, with `settings` (already validated:
    /// [`GpuGridSettings::validate`]).
    #[must_use]
    pub fn new(settings: GpuGridSettings, ctx: Arc<GpuContext>) -> Self {
        Self {
            pair_capacity: settings.pair_capacity.max(1) as u64,
            settings,
            ctx,
            bufs: None,
            keys: Vec::new(),
            next: Vec::new(),
            cell: None,
            cell_for: 0,
            rules: [[u32::MAX; 4]; 32],
            failed: false,
            figures: GpuFigures::default(),
        }
    }

    /// The settings.
    #[must_use]
    pub fn settings(&self) -> &GpuGridSettings {
        &self.settings
    }

    /// The device the engine runs on (a fresh one after a lost device).
    #[must_use]
    pub fn context(&self) -> &Arc<GpuContext> {
        &self.ctx
    }

    /// The fine cell size in use (`None` before the first update with proxies chooses it).
    #[must_use]
    pub fn cell_size(&self) -> Option<f64> {
        self.cell
    }

    /// What the last update counted.
    #[must_use]
    pub fn figures(&self) -> GpuFigures {
        self.figures
    }

    /// Chooses the fine cell size when there is none yet or the population changed much
    /// since: the largest of the sampled boxes' largest extents (a high quantile of them when
    /// the largest is an outlier). Any size is exact; the size only decides how many cells a
    /// box writes and how many boxes share a cell.
    fn choose_cell(&mut self, store: &Store) {
        if let Some(c) = self.settings.cell_size {
            self.cell = Some(c);
            return;
        }
        let n = store.len();
        let built = self.cell_for;
        let stale = self.cell.is_none() || n > 2 * built + 256 || (4 * n < built && built > 1024);
        if !stale || n == 0 {
            return;
        }
        let step = (n / SAMPLE).max(1);
        let mut extents: Vec<f64> = (0..store.slot_count())
            .filter(|&s| store.is_alive(s))
            .step_by(step)
            .map(|s| {
                let b = store.aabb_at(s);
                (0..3)
                    .map(|a| f64::from(b.max[a]) - f64::from(b.min[a]))
                    .fold(0.0, f64::max)
            })
            .collect();
        extents.sort_by(f64::total_cmp);
        let at =
            ((extents.len() as f64 * CELL_QUANTILE) as usize).min(extents.len().saturating_sub(1));
        let quantile = extents.get(at).copied().unwrap_or(0.0);
        let largest = extents.last().copied().unwrap_or(0.0);
        // The largest box, unless it is an outlier: a single box on a coarser level makes
        // every box of level 0 visit that level (10,000 boxes of sizes up to 1.5 wrote 48,000
        // cell ids on two levels with the quantile's cell).
        let mut cell = if largest <= 2.0 * quantile {
            largest
        } else {
            quantile
        };
        if cell <= 0.0 || !cell.is_finite() {
            // Points: cells of about one box each over the bounds.
            cell = store.bounds().map_or(1.0, |b| {
                let spread = (0..3)
                    .map(|a| f64::from(b.max[a]) - f64::from(b.min[a]))
                    .fold(0.0, f64::max);
                spread / (n as f64).cbrt()
            });
        }
        if !(cell > 0.0 && cell.is_finite()) {
            cell = 1.0;
        }
        self.cell = Some(cell.clamp(1e-30, 1e30));
        self.cell_for = n;
    }

    /// The layer matrix, read from the store.
    fn read_rules(&mut self, store: &Store) {
        let mut rules = [[0u32; 4]; 32];
        for a in 0..Layer::COUNT {
            for b in 0..Layer::COUNT {
                if store.layers_collide(Layer(a as u8), Layer(b as u8)) {
                    let w = a * 2 + b / 32;
                    rules[w / 4][w % 4] |= 1 << (b % 32);
                }
            }
        }
        self.rules = rules;
    }

    /// The uniform of the grid kernels.
    fn grid_uniform(&self, slots: u32, key_mask: u32, n: u32) -> GridUniform {
        let cell = self.cell.unwrap_or(1.0);
        let mut inv = [[0.0f32; 4]; 8];
        for l in 0..LEVELS as usize {
            inv[l / 4][l % 4] = (1.0 / (cell * LEVEL_RATIO.powi(l as i32))) as f32;
        }
        GridUniform {
            counts: [slots, LEVELS, key_mask, n],
            extra: [self.pair_capacity.min(u64::from(u32::MAX)) as u32, 0, 0, 0],
            inv,
            rules: self.rules,
        }
    }

    /// Runs one update on the device, inside error scopes, and leaves the sorted pairs in
    /// `next`.
    fn run(&mut self, store: &Store) -> Result<(), GpuError> {
        let ctx = Arc::clone(&self.ctx);
        if let Some(fault) = ctx.fault() {
            return Err(fault);
        }
        ctx.device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
        ctx.device.push_error_scope(wgpu::ErrorFilter::Validation);
        // wgpu panics on a few errors it deems fatal (a poll or a mapping on a device lost
        // mid-frame): those become errors here. Nothing the frame leaves half done survives
        // a failure (the buffers are dropped, the pairs kept from the last update).
        let result =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.frame(&ctx, store)))
                .unwrap_or_else(|_| {
                    Err(ctx.fault().unwrap_or_else(|| {
                        GpuError::DeviceLost("the device failed in the middle of an update".into())
                    }))
                });
        let validation = pollster::block_on(ctx.device.pop_error_scope());
        let memory = pollster::block_on(ctx.device.pop_error_scope());
        if let Some(fault) = ctx.fault() {
            return Err(fault);
        }
        if let Some(e) = memory.or(validation) {
            return Err(e.into());
        }
        result
    }

    /// The frame: upload the changed slots, find every pair on the device, read them back,
    /// add the oversized boxes' pairs, sort.
    fn frame(&mut self, ctx: &GpuContext, store: &Store) -> Result<(), GpuError> {
        self.next.clear();
        if store.is_empty() {
            // Nothing lives: the next update with proxies starts from a clean device.
            self.bufs = None;
            self.figures = GpuFigures {
                overflows: self.figures.overflows,
                pair_capacity: self.pair_capacity,
                recoveries: self.figures.recoveries,
                ..GpuFigures::default()
            };
            return Ok(());
        }
        if store.slot_count() > MAX_SLOTS {
            // An entry's value holds a slot in 24 bits.
            return Err(GpuError::Validation(format!(
                "{} slots: the device's cell ids hold at most {MAX_SLOTS}",
                store.slot_count()
            )));
        }
        let device = &ctx.device;
        self.choose_cell(store);
        let slots = store.slot_count() as u64;
        let fresh = self.bufs.is_none();
        if fresh {
            self.read_rules(store);
        }
        let updates: Vec<Update> = if fresh {
            (0..store.slot_count())
                .filter(|&s| store.is_alive(s))
                .map(|s| record(store, s))
                .collect()
        } else {
            store
                .dirty()
                .iter()
                .map(|&s| record(store, s as usize))
                .collect()
        };
        // Out of `self` while the frame runs; put back only when it succeeds (a failed frame
        // leaves none, and the next update uploads every box again).
        let mut bufs = match self.bufs.take() {
            Some(b) => b,
            None => Buffers::new(device, slots, self.pair_capacity),
        };
        self.on_device(ctx, store, &mut bufs, &updates)?;
        self.bufs = Some(bufs);
        Ok(())
    }

    /// The device's part of [`frame`](Self::frame), on `bufs`.
    fn on_device(
        &mut self,
        ctx: &GpuContext,
        store: &Store,
        bufs: &mut Buffers,
        updates: &[Update],
    ) -> Result<(), GpuError> {
        let device = &ctx.device;
        let k = &ctx.kernels;
        let slots = store.slot_count() as u64;

        // Phase 1: upload, levels, cell counts and their scan; read the counters.
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        bufs.reserve_slots(device, &mut encoder, slots);
        bufs.reserve_updates(device, updates.len() as u64);
        if !updates.is_empty() {
            ctx.queue
                .write_buffer(&bufs.updates.buffer, 0, bytemuck::cast_slice(updates));
        }
        ctx.queue
            .write_buffer(&bufs.state.buffer, 0, &[0u8; STATE_WORDS as usize * 4]);
        let slots32 = slots as u32;
        let u = uniform(
            device,
            &ctx.queue,
            &self.grid_uniform(slots32, 0, updates.len() as u32),
        );
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
            if !updates.is_empty() {
                let bg = bind(
                    device,
                    &k.upload,
                    &[&u, &bufs.updates.buffer, &bufs.boxes.buffer],
                );
                pass.set_pipeline(&k.scatter_boxes);
                pass.set_bind_group(0, &bg, &[]);
                dispatch(&mut pass, updates.len() as u32, GROUP);
            }
            let bg = cells_bind(ctx, bufs, &u);
            pass.set_pipeline(&k.assign_levels);
            pass.set_bind_group(0, &bg, &[]);
            dispatch(&mut pass, slots32, GROUP);
            pass.set_pipeline(&k.count_entries);
            dispatch(&mut pass, slots32 + 1, GROUP);
            scan(ctx, bufs, &mut pass, Which::Counts, slots32 + 1);
        }
        encoder.copy_buffer_to_buffer(
            &bufs.state.buffer,
            0,
            &bufs.staging.buffer,
            0,
            STATE_WORDS * 4,
        );
        encoder.copy_buffer_to_buffer(
            &bufs.counts.buffer,
            slots * 4,
            &bufs.staging.buffer,
            STATE_WORDS * 4,
            4,
        );
        let head = submit_and_read(ctx, encoder, &bufs.staging.buffer, STATE_WORDS + 1)?;
        let word = |i: usize| head.get(i).copied().unwrap_or(0);
        let entries = word(STATE_WORDS as usize);
        let mask = word(S_MASK);
        let oversized = u64::from(word(S_OVERSIZED));
        let mut figures = GpuFigures {
            cell_ids: u64::from(entries),
            oversized,
            levels: u64::from(mask.count_ones()),
            uploaded: updates.len() as u64,
            overflows: self.figures.overflows,
            recoveries: self.figures.recoveries,
            ..GpuFigures::default()
        };

        // Phase 2: cell ids, sorted; collision cells; pair tests; read the counters.
        let mut found = 0u64;
        if entries > 0 {
            let width = self.settings.radix_bits;
            let bits = key_bits(entries, width);
            let key_mask = if bits >= 32 {
                u32::MAX
            } else {
                (1u32 << bits) - 1
            };
            let blocks = entries.div_ceil(RADIX_BLOCK);
            let hist = u64::from(blocks) << width;
            bufs.reserve_entries(device, u64::from(entries), hist);
            let u = uniform(
                device,
                &ctx.queue,
                &self.grid_uniform(slots32, key_mask, entries),
            );
            let mut encoder =
                device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
            let passes = bits.div_ceil(width);
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                let bg = cells_bind(ctx, bufs, &u);
                pass.set_pipeline(&k.emit_entries);
                pass.set_bind_group(0, &bg, &[]);
                dispatch(&mut pass, slots32, GROUP);
                for p in 0..passes {
                    let (from, to) = ((p % 2) as usize, ((p + 1) % 2) as usize);
                    let shift = p * width;
                    let params = RadixPass {
                        n: entries,
                        shift,
                        width: width.min(bits - shift),
                        blocks,
                    };
                    let pu = uniform(device, &ctx.queue, &params);
                    let bg = bind(
                        device,
                        &k.radix,
                        &[
                            &pu,
                            &bufs.keys[from].buffer,
                            &bufs.vals[from].buffer,
                            &bufs.keys[to].buffer,
                            &bufs.vals[to].buffer,
                            &bufs.hist.buffer,
                        ],
                    );
                    pass.set_pipeline(&k.radix_count);
                    pass.set_bind_group(0, &bg, &[]);
                    dispatch(&mut pass, blocks, GROUP);
                    scan(ctx, bufs, &mut pass, Which::Hist, blocks << params.width);
                    pass.set_pipeline(&k.radix_scatter);
                    pass.set_bind_group(0, &bg, &[]);
                    dispatch(&mut pass, blocks, GROUP);
                }
                let bg = collide_bind(ctx, bufs, &u, passes);
                pass.set_pipeline(&k.find_cells);
                pass.set_bind_group(0, &bg, &[]);
                dispatch(&mut pass, entries, GROUP);
                pass.set_pipeline(&k.test_pairs);
                dispatch(&mut pass, entries, GROUP);
            }
            encoder.copy_buffer_to_buffer(
                &bufs.state.buffer,
                0,
                &bufs.staging.buffer,
                0,
                STATE_WORDS * 4,
            );
            let mut counters = submit_and_read(ctx, encoder, &bufs.staging.buffer, STATE_WORDS)?;
            // The pair buffer overflowed: grow it to hold every pair counted and run the pair
            // pass again (the sorted cell ids are still there). Never drops a pair.
            for _ in 0..4 {
                let count = u64::from(counters.get(S_PAIRS).copied().unwrap_or(0));
                if count <= self.pair_capacity {
                    break;
                }
                self.pair_capacity = count.next_power_of_two();
                figures.overflows += 1;
                bufs.reserve_pairs(device, self.pair_capacity);
                ctx.queue
                    .write_buffer(&bufs.state.buffer, (S_PAIRS * 4) as u64, &[0u8; 8]);
                let u = uniform(
                    device,
                    &ctx.queue,
                    &self.grid_uniform(slots32, key_mask, entries),
                );
                let mut encoder =
                    device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
                {
                    let mut pass =
                        encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                    let bg = collide_bind(ctx, bufs, &u, passes);
                    pass.set_pipeline(&k.test_pairs);
                    pass.set_bind_group(0, &bg, &[]);
                    dispatch(&mut pass, entries, GROUP);
                }
                encoder.copy_buffer_to_buffer(
                    &bufs.state.buffer,
                    0,
                    &bufs.staging.buffer,
                    0,
                    STATE_WORDS * 4,
                );
                counters = submit_and_read(ctx, encoder, &bufs.staging.buffer, STATE_WORDS)?;
            }
            let word = |i: usize| u64::from(counters.get(i).copied().unwrap_or(0));
            found = word(S_PAIRS);
            if found > self.pair_capacity {
                return Err(GpuError::Readback(format!(
                    "{found} pairs counted, yet the pass ran again with room for them"
                )));
            }
            figures.home_cells = word(S_HOME);
            figures.collision_cells = word(S_CELLS);
            figures.gpu_tests = word(S_TESTS);
            figures.radix_passes = u64::from(passes);
            figures.key_bits = u64::from(bits);
        }
        figures.gpu_pairs = found;

        // Phase 3: the pairs and the oversized boxes come back.
        let words = found * 2 + oversized;
        if words > 0 {
            reserve_staging(bufs, device, words);
            let mut encoder =
                device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
            if found > 0 {
                encoder.copy_buffer_to_buffer(
                    &bufs.pairs.buffer,
                    0,
                    &bufs.staging.buffer,
                    0,
                    found * 8,
                );
            }
            if oversized > 0 {
                encoder.copy_buffer_to_buffer(
                    &bufs.oversized.buffer,
                    0,
                    &bufs.staging.buffer,
                    found * 8,
                    oversized * 4,
                );
            }
            let back = submit_and_read(ctx, encoder, &bufs.staging.buffer, words)?;
            let (pairs, over) = back
                .split_at_checked((found * 2) as usize)
                .ok_or_else(|| GpuError::Readback("fewer pairs came back than counted".into()))?;
            self.next
                .extend(pairs.chunks_exact(2).map(|p| pair_key(p[0], p[1])));
            figures.cpu_tests = oversized_pairs(store, over, &mut self.next);
        }
        figures.pair_capacity = self.pair_capacity;
        figures.device_bytes = bufs.bytes();
        self.next.sort_unstable();
        self.figures = figures;
        Ok(())
    }

    /// After a failed update: a fresh device (a lost one does not always say so at once, and
    /// failures are rare enough not to tell them apart) and fresh buffers, into which every
    /// box is uploaded again from the store.
    fn recover(&mut self) -> Result<(), GpuError> {
        self.ctx = GpuContext::new()?;
        self.figures.recoveries += 1;
        self.bufs = None;
        self.failed = false;
        Ok(())
    }

    /// The device's boxes, for the structure check.
    fn read_boxes(&self, slots: u64) -> Result<Vec<u32>, GpuError> {
        let Some(bufs) = &self.bufs else {
            return Ok(Vec::new());
        };
        let ctx = &self.ctx;
        let words = slots * 8;
        let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("check"),
            size: (words * 4).max(16),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = ctx
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        encoder.copy_buffer_to_buffer(&bufs.boxes.buffer, 0, &staging, 0, words * 4);
        submit_and_read(ctx, encoder, &staging, words)
    }
}

/// Bits of the cell keys the sort orders for `entries` ids: a few more than needed to tell
/// them apart (fewer hash collisions), rounded up to whole digits, at most 32.
fn key_bits(entries: u32, width: u32) -> u32 {
    let needed = 32 - entries.leading_zeros() + 2;
    (needed.clamp(4, 32).div_ceil(width) * width).min(32)
}

/// Which buffer [`scan`] scans.
#[derive(Clone, Copy)]
enum Which {
    Counts,
    Hist,
}

/// Records the exclusive scan of the first `n` values of a buffer, in place: tiles of 256,
/// the tiles' totals scanned the same way, and the offsets added back.
fn scan(
    ctx: &GpuContext,
    bufs: &mut Buffers,
    pass: &mut wgpu::ComputePass<'_>,
    which: Which,
    n: u32,
) {
    let device = &ctx.device;
    // The buffer of each level: the data, then the totals of the level before.
    let mut levels: Vec<(wgpu::Buffer, u32)> = vec![(
        match which {
            Which::Counts => bufs.counts.buffer.clone(),
            Which::Hist => bufs.hist.buffer.clone(),
        },
        n,
    )];
    let mut depth = 0;
    loop {
        let (data, len) = levels[depth].clone();
        let tiles = len.div_ceil(TILE);
        let sums = bufs.sums(device, depth, u64::from(tiles)).clone();
        scan_step(ctx, pass, &ctx.kernels.scan_blocks, (&data, len), &sums);
        if tiles <= 1 {
            break;
        }
        levels.push((sums, tiles));
        depth += 1;
    }
    // Back down: each level's tiles get the scanned totals of the level above.
    while depth > 0 {
        depth -= 1;
        let (data, len) = &levels[depth];
        let sums = &levels[depth + 1].0;
        scan_step(ctx, pass, &ctx.kernels.add_offsets, (data, *len), sums);
    }
}

/// One scan kernel over the first `len` values of `data`, a workgroup per tile, with the
/// tiles' totals in `sums`.
fn scan_step(
    ctx: &GpuContext,
    pass: &mut wgpu::ComputePass<'_>,
    kernel: &wgpu::ComputePipeline,
    (data, len): (&wgpu::Buffer, u32),
    sums: &wgpu::Buffer,
) {
    let u = uniform(
        &ctx.device,
        &ctx.queue,
        &Span {
            n: len,
            pad: [0; 3],
        },
    );
    let bg = bind(&ctx.device, &ctx.kernels.scan, &[&u, data, sums]);
    pass.set_pipeline(kernel);
    pass.set_bind_group(0, &bg, &[]);
    dispatch(pass, len.div_ceil(TILE) * TILE, TILE);
}

/// The cell kernels' bind group.
fn cells_bind(ctx: &GpuContext, bufs: &Buffers, u: &wgpu::Buffer) -> wgpu::BindGroup {
    bind(
        &ctx.device,
        &ctx.kernels.cells,
        &[
            u,
            &bufs.boxes.buffer,
            &bufs.levels.buffer,
            &bufs.counts.buffer,
            &bufs.state.buffer,
            &bufs.oversized.buffer,
            &bufs.keys[0].buffer,
            &bufs.vals[0].buffer,
        ],
    )
}

/// The pair kernels' bind group, on the entries as the last of `passes` radix passes left them.
fn collide_bind(
    ctx: &GpuContext,
    bufs: &Buffers,
    u: &wgpu::Buffer,
    passes: u32,
) -> wgpu::BindGroup {
    let sorted = (passes % 2) as usize;
    bind(
        &ctx.device,
        &ctx.kernels.collide,
        &[
            u,
            &bufs.boxes.buffer,
            &bufs.levels.buffer,
            &bufs.keys[sorted].buffer,
            &bufs.vals[sorted].buffer,
            &bufs.state.buffer,
            &bufs.pairs.buffer,
        ],
    )
}

/// The pairs of the boxes no level holds, found on the CPU: each against every live box, a
/// pair of two of them once. Returns the tests made.
fn oversized_pairs(store: &Store, over: &[u32], out: &mut Vec<u64>) -> u64 {
    let mut over = over.to_vec();
    over.sort_unstable();
    let mut tests = 0;
    for &o in &over {
        let (oi, ob) = (o as usize, *store.aabb_at(o as usize));
        for s in 0..store.slot_count() {
            let both = over.binary_search(&(s as u32)).is_ok();
            if s == oi || !store.is_alive(s) || (both && s < oi) {
                continue;
            }
            tests += 1;
            if ob.overlaps(store.aabb_at(s)) && store.allows(oi, s) {
                out.push(pair_key(o, s as u32));
            }
        }
    }
    tests
}

impl Engine for GpuGridEngine {
    /// [`Algorithm::Grid`]: the same algorithm as the CPU grid, on the device.
    fn algorithm(&self) -> Algorithm {
        Algorithm::Grid
    }

    fn update(&mut self, store: &Store, changes: &mut PairChanges) -> Result<(), Error> {
        if self.failed {
            self.recover()?;
        }
        // Read at the update the rules changed, even one with nothing else to do: the next
        // updates no longer say they changed.
        if store.rules_changed() != 0 {
            self.read_rules(store);
        }
        if store.dirty().is_empty() && self.bufs.is_some() {
            // Nothing changed (a rule change marks its layers' proxies changed): the pairs
            // are those of the last update, and the device has nothing to do.
            self.figures.uploaded = 0;
            self.figures.gpu_tests = 0;
            self.figures.cpu_tests = 0;
            return Ok(());
        }
        if let Err(e) = self.run(store) {
            // The pairs of the last update stay; the store keeps its changes, and the next
            // update uploads every box again (on a fresh device if this one is gone).
            self.failed = true;
            self.bufs = None;
            return Err(e.into());
        }
        changes.tests = self.figures.gpu_tests + self.figures.cpu_tests;
        // Both lists are sorted: what is new was created, what is gone was deleted.
        let (old, new) = (&self.keys, &self.next);
        let (mut i, mut j) = (0, 0);
        while i < old.len() || j < new.len() {
            match (old.get(i), new.get(j)) {
                (Some(a), Some(b)) if a == b => (i, j) = (i + 1, j + 1),
                (Some(&a), Some(&b)) if a < b => {
                    changes.deleted.push(a);
                    i += 1;
                }
                (Some(&a), None) => {
                    changes.deleted.push(a);
                    i += 1;
                }
                (_, Some(&b)) => {
                    changes.created.push(b);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        std::mem::swap(&mut self.keys, &mut self.next);
        Ok(())
    }

    fn pair_lists(&self) -> Vec<PairList<'_>> {
        vec![PairList::new(&self.keys)]
    }

    /// Every slot: queries run on the CPU, from the store, which tests each candidate
    /// exactly.
    fn candidates(
        &self,
        store: &Store,
        _bounds: &Aabb,
        visit: &mut dyn FnMut(u32) -> ControlFlow<()>,
    ) -> ControlFlow<()> {
        (0..store.slot_count() as u32).try_for_each(visit)
    }

    /// The pair keys sorted and distinct, and the device's boxes those of the store: every
    /// slot unchanged since the last update holds its box, flags and group there (dead
    /// slots zeros).
    fn check_structure(&self, store: &Store) -> Result<(), String> {
        if let Some(w) = self.keys.windows(2).find(|w| w[0] >= w[1]) {
            return Err(format!(
                "pair keys {:#x} and {:#x} out of order",
                w[0], w[1]
            ));
        }
        if self.failed || self.bufs.is_none() {
            return Ok(());
        }
        let slots = store.slot_count();
        let held = self
            .bufs
            .as_ref()
            .map_or(0, |b| b.boxes.items.min(slots as u64));
        let words = self.read_boxes(held).map_err(|e| e.to_string())?;
        for (s, got) in words.chunks_exact(8).enumerate() {
            if store.is_dirty(s) {
                continue;
            }
            let want = record(store, s);
            let want: Vec<u32> = want.lo.iter().chain(&want.hi).copied().collect();
            if got != want.as_slice() {
                return Err(format!(
                    "slot {s}: the device holds {got:?}, the store says {want:?}"
                ));
            }
        }
        Ok(())
    }

    fn stats(&self, store: &Store, stats: &mut Stats) {
        stats.memory_bytes += (self.keys.capacity() + self.next.capacity()) * 8;
        let f = &self.figures;
        let n = store.len() as u64;
        let mut g = GridFigures::default();
        g.brute_force_pairs = n * n.saturating_sub(1) / 2;
        g.cell_ids = f.cell_ids;
        g.home_cells = f.home_cells;
        g.phantom_cells = f.cell_ids - f.home_cells.min(f.cell_ids);
        g.collision_cells = f.collision_cells;
        g.collision_cells_tested = f.collision_cells;
        g.radix_passes = f.radix_passes;
        g.candidate_pairs_tested = f.gpu_tests + f.cpu_tests;
        g.pairs_found = self.keys.len() as u64;
        g.levels = f.levels;
        stats.figures = Figures::Grid(g);
    }
}

// Cell ids: each box's level, how many cells it writes, and the cells themselves (its home
// cell, the one holding its centre, and its phantom cells), each with its control bits.
//
// A box lives on the finest level where it covers at most two cells per axis (levels are four
// times coarser each); it also visits every coarser level holding boxes, to meet them there.
// A box no level holds is listed in `oversized` and tested on the CPU.

@group(0) @binding(1) var<storage, read> boxes: array<Box>;
@group(0) @binding(2) var<storage, read_write> levels: array<u32>;
@group(0) @binding(3) var<storage, read_write> counts: array<u32>;
@group(0) @binding(4) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> oversized: array<u32>;
@group(0) @binding(6) var<storage, read_write> keys: array<u32>;
@group(0) @binding(7) var<storage, read_write> vals: array<u32>;

fn set_aside(s: u32) {
    let at = atomicAdd(&state[S_OVERSIZED], 1u);
    oversized[at] = s;
    levels[s] = OVERSIZED;
}

@compute @workgroup_size(64)
fn assign_levels(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let s = flat_index(gid, nwg);
    if s >= grid.counts.x {
        return;
    }
    let b = boxes[s];
    if (b.lo.w & ALIVE) == 0u {
        levels[s] = NO_LEVEL;
        return;
    }
    for (var l = 0u; l < grid.counts.y; l++) {
        let inv = inv_of(l);
        let span = cells_of(b.hi.xyz, inv) - cells_of(b.lo.xyz, inv);
        if all(span <= vec3<i32>(1)) {
            levels[s] = l;
            atomicOr(&state[S_MASK], 1u << l);
            return;
        }
    }
    set_aside(s);
}

// The levels a box writes cells on: its own, and every coarser one holding boxes.
fn visits(own: u32, l: u32, mask: u32) -> bool {
    return l == own || ((mask >> l) & 1u) != 0u;
}

// counts[s]: the cells box s writes; counts[slots] = 0, so that the exclusive scan of counts
// ends with the total.
@compute @workgroup_size(64)
fn count_entries(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let s = flat_index(gid, nwg);
    if s > grid.counts.x {
        return;
    }
    if s == grid.counts.x {
        counts[s] = 0u;
        return;
    }
    let own = levels[s];
    if own >= 32u {
        counts[s] = 0u;
        return;
    }
    let b = boxes[s];
    let mask = atomicLoad(&state[S_MASK]);
    var n = 0u;
    for (var l = own; l < grid.counts.y; l++) {
        if !visits(own, l, mask) {
            continue;
        }
        let inv = inv_of(l);
        let span = cells_of(b.hi.xyz, inv) - cells_of(b.lo.xyz, inv);
        // Coarser cells never cover more of a box; should rounding say otherwise, the box is
        // tested on the CPU rather than written with offsets its entries cannot hold.
        if any(span > vec3<i32>(1)) {
            set_aside(s);
            counts[s] = 0u;
            return;
        }
        n += u32(span.x + 1) * u32(span.y + 1) * u32(span.z + 1);
    }
    counts[s] = n;
}

// Writes box s's cells from counts[s] (the scanned offsets): key = hashed cell id, value =
// slot, control bits and level.
@compute @workgroup_size(64)
fn emit_entries(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let s = flat_index(gid, nwg);
    if s >= grid.counts.x {
        return;
    }
    let own = levels[s];
    if own >= 32u {
        return;
    }
    let b = boxes[s];
    let mask = atomicLoad(&state[S_MASK]);
    let centre = vec3<f32>(
        0.5 * to_float(b.lo.x) + 0.5 * to_float(b.hi.x),
        0.5 * to_float(b.lo.y) + 0.5 * to_float(b.hi.y),
        0.5 * to_float(b.lo.z) + 0.5 * to_float(b.hi.z),
    );
    var at = counts[s];
    var home = 0u;
    for (var l = own; l < grid.counts.y; l++) {
        if !visits(own, l, mask) {
            continue;
        }
        let inv = inv_of(l);
        let lo = cells_of(b.lo.xyz, inv);
        let span = cells_of(b.hi.xyz, inv) - lo;
        let h = vec3<i32>(cell_of(centre.x, inv), cell_of(centre.y, inv), cell_of(centre.z, inv));
        for (var z = 0; z <= span.z; z++) {
            for (var y = 0; y <= span.y; y++) {
                for (var x = 0; x <= span.x; x++) {
                    let c = lo + vec3<i32>(x, y, z);
                    keys[at] = cell_key(l, c);
                    vals[at] = s | (u32(x) << 24u) | (u32(y) << 25u) | (u32(z) << 26u) | (l << 27u);
                    if l == own && all(c == h) {
                        home += 1u;
                    }
                    at += 1u;
                }
            }
        }
    }
    if home != 0u {
        atomicAdd(&state[S_HOME], home);
    }
}

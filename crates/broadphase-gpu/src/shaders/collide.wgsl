// Collision cells and their pairs, on the sorted entries: a run of equal keys is a cell, and
// a run of two entries or more a collision cell.
//
// Each pair is tested in exactly one cell, the one holding the lower corner of the two boxes'
// overlap (per axis the larger of their lowest cells), on the level of the coarser box: there
// one of the two lives (a resident) and the other lives or visits. The control bits (an
// entry's offset from its box's lowest cell) say whether an entry's cell is that corner, so no
// table of pairs already tested is needed, and hash collisions (cells of other places or
// levels sharing a key) are rejected by the same check.

@group(0) @binding(1) var<storage, read> boxes: array<Box>;
@group(0) @binding(2) var<storage, read> levels: array<u32>;
@group(0) @binding(3) var<storage, read> keys: array<u32>;
@group(0) @binding(4) var<storage, read> vals: array<u32>;
@group(0) @binding(5) var<storage, read_write> state: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> pairs: array<vec2<u32>>;

// Counts the collision cells: runs of two entries or more, counted at their first entry.
@compute @workgroup_size(64)
fn find_cells(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = flat_index(gid, nwg);
    let n = grid.counts.w;
    if i + 1u >= n {
        return;
    }
    let k = keys[i];
    if keys[i + 1u] != k {
        return;
    }
    if i > 0u && keys[i - 1u] == k {
        return;
    }
    atomicAdd(&state[S_CELLS], 1u);
}

// The filter: not both fixed, not one non-zero group, layers that collide.
fn allowed(a: Box, b: Box) -> bool {
    if (a.lo.w & b.lo.w & FIXED) != 0u {
        return false;
    }
    if a.hi.w != 0u && a.hi.w == b.hi.w {
        return false;
    }
    let la = (a.lo.w >> 8u) & 63u;
    let lb = (b.lo.w >> 8u) & 63u;
    let w = la * 2u + (lb >> 5u);
    return ((grid.rules[w / 4u][w % 4u] >> (lb & 31u)) & 1u) != 0u;
}

fn offsets(v: u32) -> vec3<i32> {
    return vec3<i32>(i32((v >> 24u) & 1u), i32((v >> 25u) & 1u), i32((v >> 26u) & 1u));
}

// Entry i against every later entry of its cell; pairs appended while they fit, and counted
// all the same, so that the host sees an overflow and runs the pass again with room.
@compute @workgroup_size(64)
fn test_pairs(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = flat_index(gid, nwg);
    let n = grid.counts.w;
    if i >= n {
        return;
    }
    let k = keys[i];
    let vi = vals[i];
    let si = vi & SLOT_MASK;
    let level = vi >> 27u;
    let resident = levels[si] == level;
    let a = boxes[si];
    var tests = 0u;
    for (var j = i + 1u; j < n; j++) {
        if keys[j] != k {
            break;
        }
        let vj = vals[j];
        let sj = vj & SLOT_MASK;
        // Another level's cell under the same key, or another cell of the same box.
        if (vj >> 27u) != level || sj == si {
            continue;
        }
        // Two visitors meet where one of them lives.
        if !resident && levels[sj] != level {
            continue;
        }
        tests += 1u;
        let b = boxes[sj];
        if any(a.lo.xyz > b.hi.xyz) || any(b.lo.xyz > a.hi.xyz) {
            continue;
        }
        let inv = inv_of(level);
        let la = cells_of(a.lo.xyz, inv);
        let lb = cells_of(b.lo.xyz, inv);
        let corner = max(la, lb);
        if any(la + offsets(vi) != corner) || any(lb + offsets(vj) != corner) {
            continue;
        }
        if !allowed(a, b) {
            continue;
        }
        let at = atomicAdd(&state[S_PAIRS], 1u);
        if at < grid.extra.x {
            pairs[at] = vec2<u32>(min(si, sj), max(si, sj));
        }
    }
    if tests != 0u {
        atomicAdd(&state[S_TESTS], tests);
    }
}

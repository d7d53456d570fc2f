// Exclusive prefix sum of a u32 array, in place: each workgroup scans a tile of 256 values
// and writes the tile's total to `sums`; the host scans `sums` the same way (recursively) and
// `add_offsets` adds each tile's offset back.

struct Span {
    n: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

@group(0) @binding(0) var<uniform> span: Span;
@group(0) @binding(1) var<storage, read_write> data: array<u32>;
@group(0) @binding(2) var<storage, read_write> sums: array<u32>;

var<workgroup> tile: array<u32, 256>;

@compute @workgroup_size(256)
fn scan_blocks(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let block = wid.x + wid.y * nwg.x;
    let i = block * 256u + lid.x;
    var v = 0u;
    if i < span.n {
        v = data[i];
    }
    tile[lid.x] = v;
    workgroupBarrier();
    // Hillis-Steele: after the step of distance d, each value sums the 2d values up to it.
    for (var d = 1u; d < 256u; d <<= 1u) {
        var add = 0u;
        if lid.x >= d {
            add = tile[lid.x - d];
        }
        workgroupBarrier();
        tile[lid.x] += add;
        workgroupBarrier();
    }
    if i < span.n {
        data[i] = tile[lid.x] - v;
    }
    // Workgroups past the last tile (a dispatch laid out in two dimensions) write nothing: an
    // index out of range would be clamped onto a real one.
    if lid.x == 255u && block * 256u < span.n {
        sums[block] = tile[255];
    }
}

@compute @workgroup_size(256)
fn add_offsets(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let block = wid.x + wid.y * nwg.x;
    let i = block * 256u + lid.x;
    if i < span.n {
        data[i] += sums[block];
    }
}

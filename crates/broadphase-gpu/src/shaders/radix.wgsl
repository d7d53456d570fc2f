// One pass of the stable LSD radix sort of (cell key, value) entries on one digit of `width`
// bits at `shift`: `radix_count` counts each block's digits into `hist` (digit-major, so the
// exclusive scan of `hist` gives every (digit, block) its first place), `radix_scatter` moves
// each block's entries there in order. A block of BLOCK entries is one invocation's, walked in
// order, which keeps the sort stable without any ranking inside a workgroup.

struct Pass {
    n: u32,
    shift: u32,
    width: u32,
    blocks: u32,
}

const BLOCK: u32 = 256u;

@group(0) @binding(0) var<uniform> pass_: Pass;
@group(0) @binding(1) var<storage, read> keys_in: array<u32>;
@group(0) @binding(2) var<storage, read> vals_in: array<u32>;
@group(0) @binding(3) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(4) var<storage, read_write> vals_out: array<u32>;
@group(0) @binding(5) var<storage, read_write> hist: array<u32>;

// The digit of key k this pass sorts on.
fn digit(k: u32) -> u32 {
    return (k >> pass_.shift) & ((1u << pass_.width) - 1u);
}

// The entries of block b: start and end.
fn block_range(b: u32) -> vec2<u32> {
    return vec2<u32>(b * BLOCK, min(b * BLOCK + BLOCK, pass_.n));
}

@compute @workgroup_size(64)
fn radix_count(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let b = gid.x + gid.y * nwg.x * 64u;
    if b >= pass_.blocks {
        return;
    }
    // Digits are at most 8 bits wide.
    var tally: array<u32, 256>;
    let r = block_range(b);
    for (var i = r.x; i < r.y; i++) {
        tally[digit(keys_in[i])] += 1u;
    }
    for (var d = 0u; d < (1u << pass_.width); d++) {
        hist[d * pass_.blocks + b] = tally[d];
    }
}

// Each entry to the next free place of its digit: the block's places come from the scanned
// counts, and the block is walked in order, so equal digits keep their order.
@compute @workgroup_size(64)
fn radix_scatter(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let b = gid.x + gid.y * nwg.x * 64u;
    if b >= pass_.blocks {
        return;
    }
    var next: array<u32, 256>;
    for (var d = 0u; d < (1u << pass_.width); d++) {
        next[d] = hist[d * pass_.blocks + b];
    }
    let r = block_range(b);
    for (var i = r.x; i < r.y; i++) {
        let k = keys_in[i];
        let at = next[digit(k)];
        next[digit(k)] = at + 1u;
        keys_out[at] = k;
        vals_out[at] = vals_in[i];
    }
}

// The grid's geometry, shared by the upload, cell and pair kernels (prepended to each).
//
// Boxes are stored as order-preserving u32 keys of their f32 coordinates: comparing keys is
// comparing the floats exactly, with no flush of denormals to zero (which a device may do to
// float arithmetic) ever changing an overlap test.

struct Box {
    // xyz: min corner keys; w: flags (ALIVE, FIXED, layer in bits 8..15).
    lo: vec4<u32>,
    // xyz: max corner keys; w: the proxy's group.
    hi: vec4<u32>,
}

struct Grid {
    // x: slots, y: levels, z: mask of a cell key's bits, w: entries (or updates, for the
    // upload kernel).
    counts: vec4<u32>,
    // x: capacity of the pair buffer, in pairs.
    extra: vec4<u32>,
    // 1 / cell size of level L, at inv[L / 4][L % 4].
    inv: array<vec4<f32>, 8>,
    // The layer matrix: row r's bits 0..32 at word 2r, bits 32..64 at word 2r + 1, word w at
    // rules[w / 4][w % 4].
    rules: array<vec4<u32>, 32>,
}

@group(0) @binding(0) var<uniform> grid: Grid;

const ALIVE: u32 = 1u;
const FIXED: u32 = 2u;
// levels[slot] of a dead slot, and of a box no level holds (tested on the CPU).
const NO_LEVEL: u32 = 0xffffffffu;
const OVERSIZED: u32 = 0xfffffffeu;
// An entry's value: slot in bits 0..24, the cell's offset from the box's lowest cell on x, y,
// z in bits 24, 25, 26 (the control bits), the level in bits 27..32.
const SLOT_MASK: u32 = 0x00ffffffu;
// Cell coordinates are clamped to +-2^29: they and their differences fit an i32, and the
// clamp, being monotone, keeps the corner cell of two overlapping boxes shared.
const LIMIT: f32 = 536870912.0;

// Indices of the counters in `state`.
const S_MASK: u32 = 0u;
const S_OVERSIZED: u32 = 1u;
const S_HOME: u32 = 2u;
const S_PAIRS: u32 = 3u;
const S_TESTS: u32 = 4u;
const S_CELLS: u32 = 5u;

// The invocation's index in a dispatch of 64-wide workgroups laid out in x, then y.
fn flat_index(gid: vec3<u32>, nwg: vec3<u32>) -> u32 {
    return gid.x + gid.y * nwg.x * 64u;
}

// The float a coordinate key stands for.
fn to_float(k: u32) -> f32 {
    if k >= 0x80000000u {
        return bitcast<f32>(k ^ 0x80000000u);
    }
    return bitcast<f32>(~k);
}

fn inv_of(level: u32) -> f32 {
    return grid.inv[level / 4u][level % 4u];
}

// The cell of coordinate x: monotone in x (a rounded product, a clamp and a floor), so two
// boxes that overlap share the cell holding the lower corner of their overlap.
fn cell_of(x: f32, inv: f32) -> i32 {
    return i32(floor(clamp(x * inv, -LIMIT, LIMIT)));
}

fn cells_of(k: vec3<u32>, inv: f32) -> vec3<i32> {
    return vec3<i32>(
        cell_of(to_float(k.x), inv),
        cell_of(to_float(k.y), inv),
        cell_of(to_float(k.z), inv),
    );
}

// The hashed id of a cell of a level. Two cells share an id only by a hash collision, which
// adds candidates that the exact tests reject.
fn cell_key(level: u32, c: vec3<i32>) -> u32 {
    var h = (bitcast<u32>(c.x) * 0x9e3779b1u) ^ (bitcast<u32>(c.y) * 0x85ebca77u)
        ^ (bitcast<u32>(c.z) * 0xc2b2ae3du) ^ (level * 0x27d4eb2fu);
    h ^= h >> 15u;
    h *= 0x2c1b3c6du;
    h ^= h >> 12u;
    h *= 0x297a2d39u;
    h ^= h >> 15u;
    return h & grid.counts.z;
}

// The frame's upload: the (slot, box) records of the changed slots, scattered into the boxes
// the device keeps from one update to the next.

struct Update {
    lo: vec4<u32>,
    hi: vec4<u32>,
    // x: the slot.
    slot: vec4<u32>,
}

@group(0) @binding(1) var<storage, read> updates: array<Update>;
@group(0) @binding(2) var<storage, read_write> boxes: array<Box>;

@compute @workgroup_size(64)
fn scatter_boxes(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let i = flat_index(gid, nwg);
    if i >= grid.counts.w {
        return;
    }
    let u = updates[i];
    boxes[u.slot.x] = Box(u.lo, u.hi);
}

//! The scene-file parser on arbitrary bytes: it must never panic, and whatever it accepts must
//! be valid input for a broad phase.
#![no_main]

use broadphase_lab::scene_file;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(file) = scene_file::parse(&text) {
        for o in &file.objects {
            assert!(o.aabb.is_valid(), "accepted an invalid box: {o:?}");
            assert!(o.velocity.iter().all(|v| v.is_finite()));
            assert!(usize::from(o.desc.layer.0) < broadphase::Layer::COUNT);
        }
    }
});

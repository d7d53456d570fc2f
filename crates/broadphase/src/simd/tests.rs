//! The dispatch policy (what `--cfg broadphase_scalar` switches and what it leaves alone), and
//! Sap's swap test of the other-axis keys on both paths. The other kernels are compared with
//! their scalar twins beside those twins (`prune/tests.rs`, `grid/scan.rs`, `grid/layout.rs`,
//! `cells/grid.rs`, `quadtree/node.rs`).

use proptest::prelude::*;

use super::*;

/// Under `--cfg broadphase_scalar` every dispatch reports the scalar path: CI runs the unit
/// tests so, and this test is what proves the switch works there.
#[cfg(broadphase_scalar)]
#[test]
fn the_switch_makes_every_dispatch_scalar() {
    assert!(avx2().is_none(), "AVX2 dispatched under broadphase_scalar");
    assert!(sse2().is_none(), "SSE2 dispatched under broadphase_scalar");
    // Sap's probe keeps the plain keys.
    assert_eq!(UvProbe::new(&[1, 2, 3, 4]).0 .0, [1, 2, 3, 4]);
}

/// Without the switch, dispatch takes what the CPU runs: AVX2 exactly where the standard
/// library detects it (with POPCNT), SSE2 on every x86-64, and nothing elsewhere.
#[cfg(not(broadphase_scalar))]
#[test]
fn dispatch_takes_what_the_cpu_runs() {
    #[cfg(target_arch = "x86_64")]
    {
        let has = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt");
        assert_eq!(avx2().is_some(), has);
        assert_eq!(avx2().is_some(), has, "the cached answer");
        assert!(sse2().is_some());
        if !has {
            eprintln!("this CPU has no AVX2: only the SSE2 and scalar paths run here");
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        assert!(avx2().is_none());
        assert!(sse2().is_none());
    }
}

/// Detection ignores the switch, so the tests that compare both paths run them wherever the
/// CPU has the feature, in either build.
#[test]
fn detection_ignores_the_switch() {
    #[cfg(target_arch = "x86_64")]
    assert_eq!(
        Avx2::detect().is_some(),
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("popcnt")
    );
    #[cfg(not(target_arch = "x86_64"))]
    assert!(Avx2::detect().is_none());
    assert_eq!(
        Sse2::detect().is_some(),
        cfg!(all(target_arch = "x86_64", target_feature = "sse2"))
    );
}

/// The prefetch hint is harmless on any address, live or not.
#[test]
fn a_prefetch_reads_nothing() {
    let v = [7u8; 3];
    prefetch_line(v.as_ptr());
    prefetch_line(std::ptr::null());
    prefetch_line(v.as_ptr().wrapping_add(1 << 40));
    assert_eq!(v, [7; 3]);
}

/// Keys near the ends of the range, around the sign flip, and equal ones.
fn key() -> impl Strategy<Value = u32> {
    prop_oneof![
        0u32..8,
        0x7FFF_FFF8u32..0x8000_0008,
        u32::MAX - 8..=u32::MAX,
        any::<u32>(),
    ]
}

proptest! {
    /// Sap's swap test: the SSE2 lanes (wherever SSE2 is built, whatever the dispatch) and the
    /// scalar arithmetic, each called directly, against the four plain comparisons; and the
    /// dispatched probe too. Boxes may be inverted: the paths agree on those as well.
    #[test]
    fn uv_probe_paths_match_the_plain_comparisons(
        p in prop::array::uniform4(key()),
        q in prop::array::uniform4(key()),
    ) {
        let want = p[0] <= q[2] && q[0] <= p[2] && p[1] <= q[3] && q[1] <= p[3];
        prop_assert_eq!(uv_overlap_scalar(&p, &q) == 1, want);
        let scalar = UvKeys::new(&p).misses(&q);
        prop_assert!(scalar < 16);
        prop_assert_eq!(scalar == 0, want);
        let dispatched = UvProbe::new(&p).misses(&q);
        prop_assert!(dispatched < 16);
        prop_assert_eq!(dispatched == 0, want);
        #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
        {
            let m = sse2::UvLanes::new(&p).misses(&q);
            prop_assert!(m < 16);
            prop_assert_eq!(m == 0, want);
        }
    }
}

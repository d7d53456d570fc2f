//! `BROADPHASE_SCALAR=1` at build time has the same effect as `--cfg broadphase_scalar`: every
//! SIMD dispatch takes the scalar path (src/simd/). Through the environment it rebuilds only
//! this crate, where `RUSTFLAGS` would rebuild every dependency too.

fn main() {
    println!("cargo::rerun-if-env-changed=BROADPHASE_SCALAR");
    println!("cargo::rustc-check-cfg=cfg(broadphase_scalar)");
    let scalar = std::env::var_os("BROADPHASE_SCALAR").is_some_and(|value| value != "0");
    if scalar {
        println!("cargo::rustc-cfg=broadphase_scalar");
    }
}

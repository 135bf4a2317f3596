//! Tells the crate which HDF5 API generation it is built against. hdf5-metno-sys
//! (`links = "hdf5"`) publishes `DEP_HDF5_VERSION_<x>_<y>_<z>` for every known version
//! up to the one it found: the bundled static HDF5 is 2.x, a shared one (feature
//! `static-hdf5` off) may be 1.12 or 1.14, whose `H5Dread_chunk` lacks the 2.0 size
//! argument.
//!
//! It also sets cfg `marquet_fixtures` where the large test fixture sets (testdata/bad,
//! testdata/peers) are present: in the repository, not in the crates.io package, whose
//! tests that need them are then skipped (docs/VERSIONING.md, "Packaging").
fn main() {
    println!("cargo::rustc-check-cfg=cfg(marquet_fixtures)");
    let root = std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    if root.join("testdata/bad/README.md").is_file() && root.join("testdata/peers/SOURCES.md").is_file() {
        println!("cargo::rustc-cfg=marquet_fixtures");
    }
    println!("cargo::rustc-check-cfg=cfg(hdf5_1_14)");
    if std::env::var_os("DEP_HDF5_VERSION_1_14_0").is_some() {
        println!("cargo::rustc-cfg=hdf5_1_14");
    }
    println!("cargo::rustc-check-cfg=cfg(hdf5_2)");
    if std::env::var_os("DEP_HDF5_VERSION_2_0_0").is_some() {
        println!("cargo::rustc-cfg=hdf5_2");
    }
}

//! Tells the crate which HDF5 API generation it is built against. hdf5-metno-sys
//! (`links = "hdf5"`) publishes `DEP_HDF5_VERSION_<x>_<y>_<z>` for every known version
//! up to the one it found: the bundled static HDF5 is 2.x, a shared one (feature
//! `static-hdf5` off) may be 1.12 or 1.14, whose `H5Dread_chunk` lacks the 2.0 size
//! argument.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(hdf5_2)");
    if std::env::var_os("DEP_HDF5_VERSION_2_0_0").is_some() {
        println!("cargo::rustc-cfg=hdf5_2");
    }
}

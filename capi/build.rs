//! Without the `static-hdf5` feature libmarquet.so links the shared HDF5 that
//! hdf5-metno-sys found through HDF5_DIR; record `HDF5_DIR/lib` as its run path so that
//! programs linking libmarquet find that libhdf5 without LD_LIBRARY_PATH (the same
//! library the caller links, which `marquet_file_from_hid` needs). The default build
//! links HDF5 statically and needs nothing here.
fn main() {
    println!("cargo::rerun-if-env-changed=HDF5_DIR");
    if std::env::var_os("CARGO_FEATURE_STATIC_HDF5").is_some() {
        return;
    }
    if let Some(dir) = std::env::var_os("HDF5_DIR") {
        let lib = std::path::Path::new(&dir).join("lib");
        println!("cargo::rustc-cdylib-link-arg=-Wl,-rpath,{}", lib.display());
    }
}

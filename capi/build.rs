//! Link arguments of libmarquet.so:
//!
//! * its soname, `libmarquet.so.<ABI>` ([`ABI`]; docs/VERSIONING.md), so that programs
//!   record the ABI they were linked against and the loader refuses an incompatible
//!   library; scripts/install-capi.sh installs `libmarquet.so.<version>` with the
//!   `libmarquet.so.<ABI>` and `libmarquet.so` links;
//! * without the `static-hdf5` feature, libmarquet.so links the shared HDF5 that
//!   hdf5-metno-sys found through HDF5_DIR: `HDF5_DIR/lib` is recorded as its run path so
//!   that programs linking libmarquet find that libhdf5 without LD_LIBRARY_PATH (the same
//!   library the caller links, which `marquet_file_from_hid` needs). The default build
//!   links HDF5 statically and needs nothing there.

/// The C ABI's major number: the `N` of `libmarquet.so.N`, and `MARQUET_ABI_VERSION` in
/// include/marquet.h (capi/cbindgen.toml; scripts/check-header.sh checks that the two
/// agree). Raised on every incompatible change of the C ABI (docs/VERSIONING.md).
const ABI: u32 = 0;

fn main() {
    println!("cargo::rerun-if-env-changed=HDF5_DIR");
    println!("cargo::rerun-if-changed=build.rs");
    // ELF platforms take -soname; macOS (-install_name) and Windows have no sonames.
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if !matches!(os.as_str(), "macos" | "ios" | "windows") {
        println!("cargo::rustc-cdylib-link-arg=-Wl,-soname,libmarquet.so.{ABI}");
    }
    if std::env::var_os("CARGO_FEATURE_STATIC_HDF5").is_some() {
        return;
    }
    if let Some(dir) = std::env::var_os("HDF5_DIR") {
        let lib = std::path::Path::new(&dir).join("lib");
        println!("cargo::rustc-cdylib-link-arg=-Wl,-rpath,{}", lib.display());
    }
}

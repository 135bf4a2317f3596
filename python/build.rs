//! The wheel carries PROJ (issue #30): the extension names libproj among its needed
//! libraries so that maturin's auditwheel repair copies it, and the libraries it needs, into
//! `marquet.libs/`. The marquet crate itself opens PROJ at run time (src/crs/proj.rs, issue
//! #33); the package's `__init__.py` hands it the carried file (`_set_proj_library`), which
//! the dynamic loader has then already loaded. `--no-as-needed`: the extension calls nothing
//! in libproj directly, and the linker would otherwise drop it. Needs libproj-dev to build
//! (scripts/build-wheel.sh installs it through scripts/bootstrap.sh).
fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo::rustc-link-arg-cdylib=-Wl,--push-state,--no-as-needed,-lproj,--pop-state");
    }
}

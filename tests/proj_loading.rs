//! PROJ is opened at run time, on first use (issue #33, a fast start): the `marquet`
//! command does not link libproj (nor, in the default build, HDF5 or SQLite), commands that
//! need no CRS work run when PROJ cannot be found, and those that need it stop with an error
//! that says what to install: exit status 2, no output file, no panic.
#![cfg(feature = "proj")]

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::TempDir;

fn marquet(args: &[&str], proj_lib: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_marquet"));
    c.args(args);
    match proj_lib {
        Some(p) => c.env("MARQUET_PROJ_LIB", p),
        None => c.env_remove("MARQUET_PROJ_LIB"),
    };
    c.output().unwrap_or_else(|e| panic!("cannot run marquet {args:?}: {e}"))
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The shared libraries an ELF file names in its dynamic section (DT_NEEDED), read with
/// binutils' `readelf` (there wherever a C compiler is, which the build needs).
fn needed(path: &Path) -> Vec<String> {
    let o = Command::new("readelf").arg("-d").arg(path).output().unwrap_or_else(|e| panic!("readelf (binutils) is needed: {e}"));
    assert!(o.status.success(), "readelf -d {}: {}", path.display(), text(&o.stderr));
    text(&o.stdout)
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split_once('[')?.1.split_once(']')?.0.to_string()))
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn the_command_links_neither_proj_nor_its_libraries() {
    let libs = needed(Path::new(env!("CARGO_BIN_EXE_marquet")));
    // The C library is always there: the list was read.
    assert!(libs.iter().any(|l| l.starts_with("libc.so")), "{libs:?}");
    for banned in ["libproj", "libcurl", "libtiff", "libsqlite3", "libstdc++"] {
        assert!(!libs.iter().any(|l| l.starts_with(banned)), "the marquet command links {banned}: {libs:?}");
    }
    // The bundled HDF5 is linked statically (a shared libhdf5 only without `static-hdf5`).
    if cfg!(feature = "static-hdf5") {
        assert!(!libs.iter().any(|l| l.starts_with("libhdf5")), "{libs:?}");
    }
}

/// Two points in GeoJSON (RFC 7946: CRS84, nothing to resolve).
fn points_geojson(dir: &TempDir) -> String {
    let p = dir.join("points.geojson");
    std::fs::write(
        &p,
        r#"{"type":"FeatureCollection","features":[
{"type":"Feature","properties":{"id":1},"geometry":{"type":"Point","coordinates":[10.0,50.0]}},
{"type":"Feature","properties":{"id":2},"geometry":{"type":"Point","coordinates":[11.5,51.25]}}]}"#,
    )
    .unwrap();
    p.to_str().unwrap().to_string()
}

#[test]
fn without_proj_what_needs_no_crs_work_runs_and_the_rest_says_what_to_install() {
    let dir = TempDir::new("proj-missing");
    let src = points_geojson(&dir);
    let missing = dir.join("no-such-dir/libproj.so.25");
    let missing = missing.to_str().unwrap();

    let o = marquet(&["--version"], Some(missing));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).starts_with("marquet "), "{}", text(&o.stdout));

    // Import, query, validate and GeoJSON export of CRS84 data need no PROJ.
    let h5 = dir.join("points.h5");
    let h5s = h5.to_str().unwrap();
    let o = marquet(&["convert", &src, h5s], Some(missing));
    assert!(o.status.success(), "convert without PROJ: {}", text(&o.stderr));
    let o = marquet(&["query", h5s, "--bbox", "9,49,10.5,50.5", "--count"], Some(missing));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout).trim(), "1");
    let o = marquet(&["validate", h5s], Some(missing));
    assert!(o.status.success(), "{}{}", text(&o.stdout), text(&o.stderr));
    let o = marquet(&["dump", h5s, "--format", "geojson"], Some(missing));
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(text(&o.stdout).contains("[11.5,51.25]"), "{}", text(&o.stdout));

    // Reprojection needs PROJ: exit 2, the loader's reason, what to install, no file.
    let out = dir.join("mercator.h5");
    let o = marquet(&["convert", &src, out.to_str().unwrap(), "--to-crs", "EPSG:3857"], Some(missing));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("PROJ is needed here") && err.contains(missing), "{err}");
    assert!(err.contains("apt-get install proj-bin") && err.contains("MARQUET_PROJ_LIB"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!out.exists(), "a failed convert left {}", out.display());

    // So does stating a CRS by its code.
    let o = marquet(&["convert", &src, out.to_str().unwrap(), "--crs", "EPSG:25832"], Some(missing));
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("apt-get install proj-bin"), "{}", text(&o.stderr));
    assert!(!out.exists());
}

#[test]
fn a_file_that_is_not_proj_is_refused_by_its_missing_functions() {
    let dir = TempDir::new("proj-not-proj");
    let src = points_geojson(&dir);
    let out = dir.join("m.h5");
    // The C library opens but is not PROJ.
    let o = marquet(&["convert", &src, out.to_str().unwrap(), "--to-crs", "EPSG:3857"], Some("libc.so.6"));
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("libc.so.6 lacks the PROJ function proj_context_create"), "{err}");
    assert!(!out.exists());
}

#[test]
fn proj_named_by_the_environment_variable_is_the_one_used() {
    // The name this process finds PROJ by (scripts/bootstrap.sh installs it for the tests).
    let name = marquet::crs::proj::load().unwrap_or_else(|e| panic!("{e}"));
    let dir = TempDir::new("proj-env");
    let src = points_geojson(&dir);
    let out = dir.join("mercator.h5");
    let o = marquet(&["convert", &src, out.to_str().unwrap(), "--to-crs", "EPSG:3857"], Some(name));
    assert!(o.status.success(), "MARQUET_PROJ_LIB={name}: {}", text(&o.stderr));
    let o = marquet(&["info", out.to_str().unwrap()], None);
    assert!(text(&o.stdout).contains("EPSG:3857"), "{}", text(&o.stdout));
}

//! The C ABI from C (and Fortran): compiles examples/c/stations.c, tests/c/test_capi.c and tests/c/test_arrow.c
//! with `cc -Wall -Wextra -Werror -std=c11` against the libmarquet just built (shared and
//! static), runs them, runs them under valgrind when it is installed, builds the Fortran
//! example when gfortran is installed, and checks the header against the sources.
//!
//! The examples' stdout is compared exactly with `examples/{c,fortran}/stations.expected`
//! and the file the C example writes with the HEP002 §15.1 golden DDL
//! (`testdata/golden/hep002_15_1_stations.ddl`); `MARQUET_BLESS=1` rewrites the expected
//! files (review the diff). Every test holds `common::serial()`: the child processes
//! would inherit HDF5 file locks of files another test has open.

// tests/common names the Rust crate `marquet`; here it is the dependency `mq` (the
// package's own lib is the C library, which has no rlib to link).
extern crate mq as marquet;
#[path = "../../tests/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mq::marquet::File;
use mq::marquet::MarquetTable;

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `MARQUET_ABI_VERSION` of include/marquet.h: the N of the soname libmarquet.so.N.
fn abi_version() -> u32 {
    let header = std::fs::read_to_string(root().join("include/marquet.h")).unwrap();
    header
        .lines()
        .find_map(|l| l.strip_prefix("#define MARQUET_ABI_VERSION "))
        .and_then(|v| v.trim().parse().ok())
        .expect("include/marquet.h defines MARQUET_ABI_VERSION")
}

/// Where cargo put libmarquet.{so,a}: the profile directory above this test binary
/// (target/debug/deps/c_api-* → target/debug). Programs linked with `-lmarquet` record
/// the soname libmarquet.so.N (capi/build.rs), which cargo does not create: the
/// `libmarquet.so.N -> libmarquet.so` link an install would make is made here.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap().to_path_buf();
    assert!(dir.join("libmarquet.so").exists(), "libmarquet.so not found in {}", dir.display());
    assert!(dir.join("libmarquet.a").exists(), "libmarquet.a not found in {}", dir.display());
    let link = dir.join(format!("libmarquet.so.{}", abi_version()));
    if std::fs::read_link(&link).ok().as_deref() != Some(Path::new("libmarquet.so")) {
        let _ = std::fs::remove_file(&link);
        // Another test process may have made it meanwhile: only a wrong link is an error.
        if let Err(e) = std::os::unix::fs::symlink("libmarquet.so", &link) {
            assert_eq!(std::fs::read_link(&link).ok().as_deref(), Some(Path::new("libmarquet.so")), "{}: {e}", link.display());
        }
    }
    dir
}

/// A scratch directory, removed when its test ends well (kept for inspection after a
/// failure).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn scratch(name: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("marquet-capi-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

fn have(tool: &str) -> bool {
    Command::new(tool).arg("--version").output().map(|o| o.status.success()).unwrap_or(false)
}

fn run(cmd: &mut Command) -> Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{cmd:?} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// The libraries libmarquet.a needs (as in capi/marquet.pc.in's Libs.private); no libproj:
/// PROJ is opened at run time (src/crs/proj.rs, issue #33).
const STATIC_LIBS: &[&str] = &["-lgcc_s", "-lpthread", "-lm", "-ldl", "-lrt", "-lutil"];

/// Compile `src` into `out`, linked to libmarquet.so (rpath) or libmarquet.a.
fn compile_c(src: &Path, out: &Path, static_link: bool) {
    let lib = lib_dir();
    let mut cmd = Command::new("cc");
    cmd.args(["-Wall", "-Wextra", "-Werror", "-std=c11", "-g"]).arg("-I").arg(root().join("include")).arg(src).arg("-o").arg(out);
    if static_link {
        cmd.arg(lib.join("libmarquet.a")).args(STATIC_LIBS);
    } else {
        cmd.arg("-L").arg(&lib).arg("-lmarquet").arg(format!("-Wl,-rpath,{}", lib.display())).arg("-lm");
    }
    run(&mut cmd);
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Run `exe args` under valgrind's memcheck with full leak checking, if valgrind is
/// installed; errors and leaks fail the test.
fn valgrind(exe: &Path, args: &[&Path]) -> Option<String> {
    if !have("valgrind") {
        eprintln!("valgrind is not installed: skipping the memcheck run of {}", exe.display());
        return None;
    }
    let supp = root().join("capi/valgrind.supp");
    let out = run(Command::new("valgrind")
        .args(["--leak-check=full", "--error-exitcode=1", "--errors-for-leak-kinds=definite,indirect,possible"])
        .arg(format!("--suppressions={}", supp.display()))
        .arg(exe)
        .args(args));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(err.contains("ERROR SUMMARY: 0 errors"), "{err}");
    Some(stdout(&out))
}

/// Compare a program's stdout with the committed `examples/<rel>` exactly (or write it
/// when `MARQUET_BLESS=1`).
fn check_expected(rel: &str, actual: &str) {
    let path = root().join("examples").join(rel);
    if std::env::var("MARQUET_BLESS").as_deref() == Ok("1") {
        std::fs::write(&path, actual).unwrap();
        eprintln!("blessed {}", path.display());
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(actual, expected, "stdout differs from examples/{rel} (MARQUET_BLESS=1 rewrites it)");
}

#[test]
fn c_stations_example_writes_the_hep002_15_1_table() {
    let _serial = common::serial();
    let d = scratch("stations");
    let exe = d.join("stations");
    compile_c(&root().join("examples/c/stations.c"), &exe, false);
    let h5 = d.join("stations.h5");
    let out = stdout(&run(Command::new(&exe).arg(&h5)));
    check_expected("c/stations.expected", &out);
    // The queries found the station (row 0) and nothing else.
    assert!(out.contains("location intersects [-89 40 -88 41]: 1 row: row 0 POINT (-88.2434 40.1164)\n"), "{out}");
    assert!(out.contains("location intersects [0 0 10 10]: 0 rows\n"), "{out}");
    assert!(out.ends_with("validate (strict): conformant, 0 findings\n"), "{out}");

    // h5dump shows the file exactly as the §15.1 table the Rust example writes.
    if let Some(h5dump) = common::h5dump_or_skip("c_stations_example_writes_the_hep002_15_1_table") {
        let ddl = common::normalize_ddl(&common::run_h5dump(&h5dump, &["-p"], &h5), &h5);
        // The golden file belongs to tests/marquet_forms.rs (which blesses it); here it
        // is only read.
        let golden = root().join("testdata/golden/hep002_15_1_stations.ddl");
        let want = std::fs::read_to_string(&golden).unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
        assert!(ddl == want, "h5dump -p of the C example's file differs from {}:\n{ddl}", golden.display());
    }

    // The file the C program wrote reads back through the Rust API exactly like the
    // §15.1 rows.
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/stations").unwrap();
    assert_eq!(t.geometry_column_names().unwrap(), ["location", "location_wkb", "location_wkb_list"]);
    let mut empty = vec![0x01, 0x01, 0, 0, 0];
    empty.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0xf8, 0x7f, 0, 0, 0, 0, 0, 0, 0xf8, 0x7f]);
    for name in ["location", "location_wkb", "location_wkb_list"] {
        let b = t.read_wkb(name, 0, 3).unwrap();
        assert_eq!(b.get(0).map(|w| w.len()), Some(21), "{name}");
        assert_eq!(b.get(1), None, "{name}");
        let e = b.get(2).unwrap();
        assert_eq!(&e[..5], &empty[..5], "{name}");
        let (x, y) = (f64::from_le_bytes(e[5..13].try_into().unwrap()), f64::from_le_bytes(e[13..21].try_into().unwrap()));
        assert!(x.is_nan() && y.is_nan(), "{name}");
    }

    // ...and passes the validator, strictly.
    let opts = mq::validate::Options { strict: true, ..Default::default() };
    let report = mq::validate::validate_file(&h5, &opts).unwrap();
    assert_eq!(report.status, mq::validate::Status::Conformant, "{:?}", report.to_json());

    if let Some(vg) = valgrind(&exe, &[&d.join("stations-vg.h5")]) {
        check_expected("c/stations.expected", &vg);
    }
}

#[test]
fn c_contract_tests_pass_shared_and_static() {
    let _serial = common::serial();
    let d = scratch("contract");
    let src = root().join("tests/c/test_capi.c");
    for (static_link, name) in [(false, "test_capi"), (true, "test_capi_static")] {
        let exe = d.join(name);
        compile_c(&src, &exe, static_link);
        let out = stdout(&run(Command::new(&exe).arg(&d)));
        let last = out.lines().last().unwrap_or_default().to_string();
        assert!(last.ends_with(" passed, 0 failed"), "{name}: {out}");
        eprintln!("{name}: {last}");
    }
    if let Some(vg) = valgrind(&d.join("test_capi"), &[&d]) {
        assert!(vg.trim_end().ends_with(" passed, 0 failed"), "{vg}");
    }
}

/// tests/c/test_arrow.c: the Arrow C stream reads and the Arrow writer (capi/src/arrow.rs)
/// from a hand-written C consumer and producer, shared and static, and under valgrind.
#[test]
fn c_arrow_tests_pass_shared_and_static() {
    let _serial = common::serial();
    let d = scratch("arrow");
    let src = root().join("tests/c/test_arrow.c");
    for (static_link, name) in [(false, "test_arrow"), (true, "test_arrow_static")] {
        let exe = d.join(name);
        compile_c(&src, &exe, static_link);
        let out = stdout(&run(Command::new(&exe).arg(&d)));
        let last = out.lines().last().unwrap_or_default().to_string();
        assert!(last.ends_with(" passed, 0 failed"), "{name}: {out}");
        eprintln!("{name}: {last}");
    }
    if let Some(vg) = valgrind(&d.join("test_arrow"), &[&d]) {
        assert!(vg.trim_end().ends_with(" passed, 0 failed"), "{vg}");
    }
    // benches/c/query_arrow.c (the measurement of a query's answer read as Arrow, kept
    // geometries against a second read) builds, and both of its ways read the same rows
    // and geometry bytes: on test_arrow's table of 300 points (i, 2i), every point, the
    // 41 of x in [10, 50], and none.
    let exe = d.join("query_arrow");
    compile_c(&root().join("benches/c/query_arrow.c"), &exe, false);
    let windows = d.join("windows.txt");
    std::fs::write(&windows, "0,0,300,600\n10,0,50.5,1000\n100.5,0,100.9,1000\n").unwrap();
    let ways: Vec<String> = ["take", "kept"]
        .iter()
        .map(|way| {
            let out = stdout(&run(Command::new(&exe).arg(d.join("arrow.h5")).args(["/pts", "geom"]).arg(&windows).args([way, "2"])));
            out.split_once(": ").map(|(_, r)| r.split(" geometry bytes").next().unwrap_or_default().to_string()).unwrap_or(out)
        })
        .collect();
    assert_eq!(ways[0], format!("3 windows, 341 rows, {}", 341 * 21), "{ways:?}");
    assert_eq!(ways[0], ways[1]);
}

#[test]
fn fortran_stations_example_runs() {
    if !have("gfortran") {
        eprintln!("gfortran is not installed: skipping examples/fortran/stations.f90");
        return;
    }
    let _serial = common::serial();
    let d = scratch("fortran");
    let lib = lib_dir();
    let exe = d.join("stations_f");
    run(Command::new("gfortran")
        .args(["-Wall", "-Werror", "-std=f2018"])
        .arg("-J")
        .arg(&d)
        .arg(root().join("include/marquet.f90"))
        .arg(root().join("examples/fortran/stations.f90"))
        .arg("-o")
        .arg(&exe)
        .arg("-L")
        .arg(&lib)
        .arg("-lmarquet")
        .arg(format!("-Wl,-rpath,{}", lib.display())));
    let out = stdout(&run(Command::new(&exe).arg(d.join("stations_f.h5"))));
    assert!(out.starts_with("wrote 3 rows\nPOINT (-88.2434 40.1164)\nNULL\nPOINT EMPTY\n"), "{out}");
    check_expected("fortran/stations.expected", &out);
}

/// Identifiers starting with `marquet_` or `MARQUET_` in `text`.
fn identifiers(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        if word(b[i]) && (i == 0 || !word(b[i - 1])) {
            let s = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            let w = &text[s..i];
            if w.starts_with("marquet_") || w.starts_with("MARQUET_") {
                out.push(w.to_string());
            }
        } else {
            i += 1;
        }
    }
    out
}

#[test]
fn header_declares_every_entry_point_and_names_fit_fortran() {
    let header = std::fs::read_to_string(root().join("include/marquet.h")).unwrap();
    assert!(header.contains("#ifndef MARQUET_H") && header.contains("#include <stdint.h>"));
    for id in identifiers(&header) {
        assert!(id.len() <= 63, "{id} is longer than 63 characters");
    }
    // Every #[no_mangle] function in capi/src is declared in the committed header (a
    // cheap drift check; scripts/check-header.sh compares the whole text).
    let mut n = 0;
    for entry in std::fs::read_dir(root().join("capi/src")).unwrap() {
        let src = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in src.lines() {
            if let Some(rest) = line.trim_start().strip_prefix("pub unsafe extern \"C\" fn ").or_else(|| line.trim_start().strip_prefix("pub extern \"C\" fn ")) {
                let name = rest.split('(').next().unwrap();
                assert!(header.contains(&format!("{name}(")), "{name} is missing from include/marquet.h: run scripts/check-header.sh --update");
                assert!(name.starts_with("marquet_") && name.len() <= 63, "{name}");
                n += 1;
            }
        }
    }
    assert!(n >= 60, "found only {n} entry points");
}

/// The soname is versioned (capi/build.rs) and agrees with the header's
/// MARQUET_ABI_VERSION, and the library reports the header's version at run time.
#[test]
fn soname_and_version_match_the_header() {
    let lib = lib_dir();
    if have("readelf") {
        let out = stdout(&run(Command::new("readelf").arg("-d").arg(lib.join("libmarquet.so"))));
        let want = format!("Library soname: [libmarquet.so.{}]", abi_version());
        assert!(out.contains(&want), "{want} not in:\n{out}");
    }
    let _serial = common::serial();
    let d = scratch("version");
    let exe = d.join("version_check");
    compile_c(&root().join("examples/c/version_check.c"), &exe, false);
    let out = stdout(&run(&mut Command::new(&exe)));
    let v = env!("CARGO_PKG_VERSION");
    assert_eq!(out, format!("header {v} (ABI {}), library {v}: compatible\n", abi_version()));
}

/// scripts/test-install.sh on the library this test run built: install into a temporary
/// prefix, check the layout, soname links and pkg-config version, and build and run the C
/// and Fortran examples and the README's programs with pkg-config.
#[test]
fn install_script_and_pkg_config_build_the_examples_and_readme_programs() {
    if !have("pkg-config") {
        eprintln!("pkg-config is not installed: skipping the install test");
        return;
    }
    let _serial = common::serial();
    let profile = lib_dir().file_name().unwrap().to_string_lossy().into_owned();
    let mut cmd = Command::new("bash");
    cmd.arg(root().join("scripts/test-install.sh"));
    if profile == "debug" {
        cmd.arg("--debug");
    }
    // The target dir of this build, wherever it is.
    cmd.arg("--no-build").env("CARGO_TARGET_DIR", lib_dir().parent().unwrap());
    let out = run(&mut cmd);
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("layout ok") && log.contains("C: stations.c"), "{log}");
    if have("gfortran") {
        assert!(log.contains("Fortran: the module"), "{log}");
    }
}

//! Issue 16 / HEP002 §1.1: a Marquet file written with the default filters opens in any
//! HDF5 reader without plugins. Every dataset of a default table (point column, WKB
//! VALUES and OFFSETS, covering column, BLOCK_BBOX and PACKED_RTREE, written partly through
//! our libdeflate direct-chunk path and partly through HDF5's pipeline) is read back by
//! h5dump 1.14 (`-b`, binary) and by h5py without hdf5plugin, and must give exactly the
//! bytes our reader gives. The same readers fail on the zstd option (which is why it is not
//! the default), and `marquet info` says which columns need which plugin.

use marquet_dev::info;

mod common;

use common::synth;

use std::path::Path;
use std::process::Command;

use marquet::h5::{self, Dtype, Filter};
use marquet::h5col::File;
use marquet::marquet::{Compression, GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::Dimensions;

/// Write `/t` with points `pt` and polygons `poly` (covering `poly_bbox`), in two appends of
/// odd sizes, with a BLOCK_BBOX on `pt` and a PACKED_RTREE on `poly`. Returns the paths of
/// the indexes.
fn write_table(path: &Path, compression: Option<Compression>) -> (String, String) {
    let f = File::create(path).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    let spec = match compression {
        Some(c) => GeometryColumnSpec::default().with_compression(c),
        None => GeometryColumnSpec::default(),
    };
    t.add_geometry_column("pt", &spec.clone().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    t.add_geometry_column("poly", &spec.with_form(StorageForm::VarWkb).with_covering("poly_bbox")).unwrap();
    let n = 30_000;
    let (x, y) = crate::synth::clustered_points(n, 5);
    let polys: Vec<Option<Vec<u8>>> = crate::synth::polygons(n, 5).into_iter().map(Some).collect();
    for (a, b) in [(0, 12_345), (12_345, n)] {
        let batch = GeoBatch::new()
            .with_geometry(
                "pt",
                GeometryValues::Points { dims: Dimensions::Xy, x: x[a..b].to_vec(), y: y[a..b].to_vec(), z: None, m: None, valid: None },
            )
            .with_geometry("poly", GeometryValues::Wkb(polys[a..b].to_vec()));
        t.append(&batch).unwrap();
    }
    let block = t.build_block_bbox("pt", None).unwrap();
    let rtree = t.build_rtree("poly", None).unwrap();
    (block, rtree)
}

/// Every dataset below `/t` (absolute path) with its filters.
fn datasets(f: &File) -> Vec<(String, Vec<Filter>)> {
    datasets_below(f, "/t")
}

/// Every dataset below group `root` (absolute path) with its filters.
fn datasets_below(f: &File, root: &str) -> Vec<(String, Vec<Filter>)> {
    fn walk(loc: &h5::Hid, path: &str, out: &mut Vec<(String, Vec<Filter>)>) {
        if h5::is_group(loc.id()) {
            for m in h5::member_names(loc.id(), path).unwrap() {
                let o = h5::object_open(loc.id(), &m).unwrap();
                walk(&o, &format!("{path}/{m}"), out);
            }
        } else {
            out.push((path.to_string(), h5::dataset_info(loc.id(), path).unwrap().filters));
        }
    }
    let mut out = Vec::new();
    walk(&h5::object_open(f.id(), root).unwrap(), root, &mut out);
    out
}

/// Our reader's bytes of a rank-1 dataset (little-endian, packed).
fn our_bytes(f: &File, path: &str) -> Vec<u8> {
    let ds = h5::dataset_open(f.id(), path).unwrap();
    let info = h5::dataset_info(ds.id(), path).unwrap();
    assert_eq!(info.dims.len(), 1, "{path}");
    h5::dataset_read(ds.id(), 0, info.dims[0], &info.dtype.to_le(), path).unwrap()
}

/// The numbers of compound dataset `path` as h5dump prints them (`-m %.17g`: every double
/// round-trips), in element and field order. h5dump's binary output (`-b`) writes nothing
/// for compound types, so compounds are compared as text.
fn h5dump_numbers(h5dump: &Path, file: &Path, path: &str) -> Vec<f64> {
    let out = Command::new(h5dump).args(["-A", "0", "-y", "-m", "%.17g", "-d", path]).arg(file).env_remove("HDF5_PLUGIN_PATH").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "h5dump -d {path}: {}", String::from_utf8_lossy(&out.stderr));
    let data = &text[text.find("DATA {").unwrap_or_else(|| panic!("h5dump -d {path}: no DATA:\n{text}")) + 6..];
    data.split(|c: char| c.is_whitespace() || c == ',' || c == '{' || c == '}')
        .filter(|t| !t.is_empty())
        .map(|t| t.parse::<f64>().unwrap_or_else(|_| panic!("h5dump -d {path}: {t:?} is not a number")))
        .collect()
}

/// Our bytes of a compound dataset as numbers, element by element and field by field.
fn compound_numbers(dtype: &Dtype, bytes: &[u8]) -> Vec<f64> {
    let Dtype::Compound { size, fields } = dtype else { panic!("{dtype:?} is not a compound") };
    let mut out = Vec::new();
    for e in bytes.chunks(*size) {
        for f in fields {
            let raw = &e[f.offset..f.offset + f.dtype.size()];
            out.push(match &f.dtype {
                Dtype::Float { size: 8, .. } => f64::from_le_bytes(raw.try_into().unwrap()),
                Dtype::Float { size: 4, .. } => f32::from_le_bytes(raw.try_into().unwrap()) as f64,
                Dtype::Int { signed, .. } => h5::int_from_bytes(raw, *signed, false) as f64,
                other => panic!("field {} of type {other:?}", f.name),
            });
        }
    }
    out
}

/// The test venv's python when it has h5py (scripts/pyvenv.sh); `None` after a notice, or
/// a failure under CI.
fn python_with_h5py(test: &str) -> Option<std::path::PathBuf> {
    common::venv_python_with("h5py", test)
}

/// Run `script` with h5py and no plugin path; its stdout.
fn run_h5py(py: &Path, script: &str, args: &[String]) -> (bool, String, String) {
    let o = Command::new(py).arg("-c").arg(script).args(args).env_remove("HDF5_PLUGIN_PATH").output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

const H5PY_READ: &str = r#"
import sys
import h5py
assert "hdf5plugin" not in sys.modules
f = h5py.File(sys.argv[1], "r")
for path, expected in zip(sys.argv[2::2], sys.argv[3::2]):
    got = f[path][...].tobytes()
    want = open(expected, "rb").read()
    assert got == want, (path, len(got), len(want))
    print("ok", path, f[path].compression, f[path].shuffle, len(got))
"#;

#[test]
fn default_files_read_in_h5dump_and_h5py_without_plugins() {
    let _s = common::serial();
    let dir = common::TempDir::new("plain-hdf5");
    let path = dir.join("default.h5");
    let (block, rtree) = write_table(&path, None);
    let f = File::open(&path).unwrap();
    let all = datasets(&f);
    // Every dataset uses only filters built into HDF5, and the geometry data, offsets,
    // covering boxes are deflated; R-tree entries are stored as they are.
    for (p, filters) in &all {
        assert!(filters.iter().all(Filter::is_predefined), "{p}: {filters:?}");
    }
    let level = marquet::marquet::compression::DEFAULT_DEFLATE_LEVEL;
    for (p, want) in [
        ("/t/pt".to_string(), vec![Filter::Shuffle, Filter::Deflate(level)]),
        ("/t/poly/VALUES".to_string(), vec![Filter::Deflate(level)]),
        ("/t/poly/OFFSETS".to_string(), vec![Filter::Shuffle, Filter::Deflate(level)]),
        ("/t/poly_bbox".to_string(), vec![Filter::Shuffle, Filter::Deflate(level)]),
        // Index entries are stored unfiltered (issue #33 item 3).
        (rtree.clone(), vec![]),
    ] {
        let got = all.iter().find(|(q, _)| *q == p).unwrap_or_else(|| panic!("no dataset {p} in {all:?}"));
        assert_eq!(got.1, want, "{p}");
    }
    assert!(all.iter().any(|(p, _)| *p == block), "{block}");
    // Our bytes of every dataset, for the other readers to match.
    let mut pairs = Vec::new();
    for (k, (p, _)) in all.iter().enumerate() {
        let bytes = our_bytes(&f, p);
        let e = dir.join(&format!("expected_{k}.bin"));
        std::fs::write(&e, &bytes).unwrap();
        let ds = h5::dataset_open(f.id(), p).unwrap();
        let dtype = h5::dataset_info(ds.id(), p).unwrap().dtype;
        pairs.push((p.clone(), e, bytes, dtype));
    }
    drop(f);
    let mut checked = 0;
    if let Some(h5dump) = common::h5dump_or_skip("default_files_read_in_h5dump_and_h5py_without_plugins") {
        for (k, (p, _, bytes, dtype)) in pairs.iter().enumerate() {
            if matches!(dtype, Dtype::Compound { .. }) {
                let want = compound_numbers(dtype, bytes);
                assert!(!want.is_empty(), "{p}");
                assert!(h5dump_numbers(&h5dump, &path, p) == want, "h5dump -d {p}: different numbers");
                checked += 1;
                continue;
            }
            let out = dir.join(&format!("h5dump_{k}.bin"));
            let o = Command::new(&h5dump)
                .args(["-d", p, "-b", "LE", "-o"])
                .arg(&out)
                .arg(&path)
                .env_remove("HDF5_PLUGIN_PATH")
                .output()
                .unwrap();
            assert!(o.status.success(), "h5dump -d {p}: {}", String::from_utf8_lossy(&o.stderr));
            assert!(std::fs::read(&out).unwrap() == *bytes, "h5dump -d {p}: different bytes");
            checked += 1;
        }
    }
    if let Some(py) = python_with_h5py("default_files_read_in_h5dump_and_h5py_without_plugins") {
        let mut args = vec![path.display().to_string()];
        for (p, e, _, _) in &pairs {
            args.push(p.clone());
            args.push(e.display().to_string());
        }
        let (ok, out, err) = run_h5py(&py, H5PY_READ, &args);
        assert!(ok, "h5py:\n{out}\n{err}");
        assert_eq!(out.lines().filter(|l| l.starts_with("ok ")).count(), pairs.len(), "{out}");
        assert!(out.contains(&format!("ok {rtree} None False")), "{out}");
        checked += 1;
    }
    println!("{} datasets, {checked} reader checks", pairs.len());
    // `marquet info`: every column and index readable without plugins.
    let v = crate::info::describe_file(&path, None).unwrap();
    assert_eq!(v["plain_hdf5"], true, "{v}");
    let text = crate::info::render_text(&v);
    assert!(text.contains("readable without HDF5 plugins: yes"), "{text}");
    assert!(text.contains(&format!("filters: shuffle, deflate({level})\n")), "{text}");
    assert!(text.contains(&format!("filters: OFFSETS shuffle, deflate({level}); VALUES deflate({level})\n")), "{text}");
    assert!(!text.contains("needs HDF5 plugin"), "{text}");
}

#[test]
fn zstd_option_needs_the_plugin_and_info_says_so() {
    let _s = common::serial();
    let dir = common::TempDir::new("plain-hdf5-zstd");
    let path = dir.join("zstd.h5");
    let (_, rtree) = write_table(&path, Some(Compression::zstd()));
    let f = File::open(&path).unwrap();
    let all = datasets(&f);
    let z = Filter::Zstd(marquet::marquet::GEOMETRY_ZSTD_LEVEL);
    // The R-tree is stored unfiltered whatever its column's compression (issue #33 item 3).
    assert_eq!(all.iter().find(|(p, _)| *p == rtree).unwrap().1, vec![]);
    assert_eq!(all.iter().find(|(p, _)| p == "/t/poly/VALUES").unwrap().1, vec![z.clone()]);
    let t = MarquetTable::open(&f, "/t").unwrap();
    assert_eq!(t.geometry_compression("poly").unwrap(), Some(Compression::zstd()));
    // Our own reader is unaffected.
    let (x, _) = crate::synth::clustered_points(30_000, 5);
    assert_eq!(t.read_points("pt", 0, 30_000).unwrap().x, x);
    let v = crate::info::describe_file(&path, None).unwrap();
    assert_eq!(v["plain_hdf5"], false);
    let cols = v["tables"][0]["columns"].as_array().unwrap();
    let pt = cols.iter().find(|c| c["name"] == "pt").unwrap();
    assert_eq!(pt["plain_hdf5"], false);
    assert_eq!(pt["plugins"], serde_json::json!([{"id": 32015, "name": "zstd"}]));
    assert_eq!(pt["filters"], serde_json::json!([{"dataset": "pt", "filters": ["shuffle", "zstd(1)"]}]));
    let text = crate::info::render_text(&v);
    assert!(text.contains("filters: shuffle, zstd(1); needs HDF5 plugin 32015 (zstd)\n"), "{text}");
    assert!(text.contains("readable without HDF5 plugins: no"), "{text}");
    drop((t, f));
    // And the plain readers indeed fail on it: the reason deflate is the default.
    if let Some(h5dump) = common::h5dump_or_skip("zstd_option_needs_the_plugin_and_info_says_so") {
        let o = Command::new(&h5dump).args(["-d", "/t/poly/VALUES", "-b", "LE", "-o"]).arg(dir.join("v.bin")).arg(&path).env_remove("HDF5_PLUGIN_PATH").output().unwrap();
        let all_out = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        assert!(!o.status.success(), "h5dump read zstd data without a plugin:\n{all_out}");
    }
    if let Some(py) = python_with_h5py("zstd_option_needs_the_plugin_and_info_says_so") {
        let script = "import sys, h5py\nf = h5py.File(sys.argv[1], 'r')\ntry:\n    f['/t/pt'][...]\nexcept OSError as e:\n    print('refused:', e)\n";
        let (ok, out, err) = run_h5py(&py, script, &[path.display().to_string()]);
        assert!(ok && out.starts_with("refused:"), "h5py read zstd data without hdf5plugin:\n{out}\n{err}");
    }
}

/// The values of columns `argv[4:]` read by h5py (no plugins) from table `argv[2]` of the
/// Marquet file `argv[1]` equal, row by row, those pyarrow reads from the GeoParquet
/// `argv[3]` (converted with `--keep-order`).
const H5PY_ATTRIBUTES: &str = r#"
import sys
import h5py
import pyarrow.parquet as pq
assert "hdf5plugin" not in sys.modules
f = h5py.File(sys.argv[1], "r")
t = pq.read_table(sys.argv[3])
for name in sys.argv[4:]:
    got = f[sys.argv[2] + "/" + name][...].tolist()
    got = [g.decode() if isinstance(g, bytes) else g for g in got]
    want = t.column(name).to_pylist()
    assert got == want, (name, got[:5], want[:5])
    print(name, len(got))
"#;

/// `marquet convert` stores attribute columns with the layout's compression: shuffle first
/// for numbers of more than one byte, the compressor alone for strings, nothing under
/// `--compression none`; h5py without plugins reads the values pyarrow reads from the
/// source. Inputs written by geopandas (nybb) and by Overture's pipeline.
#[test]
fn converted_attribute_columns_follow_the_layout_compression() {
    let _s = common::serial();
    let dir = common::TempDir::new("plain-hdf5-attributes");
    let level = marquet::marquet::compression::DEFAULT_DEFLATE_LEVEL;
    let inputs: [(&str, &str, &[&str], &[&str]); 2] = [
        ("testdata/peers/geoarrow-rs/nybb.parquet", "/nybb", &["BoroCode", "Shape_Leng", "Shape_Area"], &["BoroName"]),
        ("testdata/peers/geoarrow-rs/overture_infrastructure.parquet", "/overture_infrastructure", &["version"], &["id"]),
    ];
    for (src, table, numbers, strings) in inputs {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(src);
        for compression in ["deflate", "none"] {
            let out = dir.join(&format!("{}-{compression}.h5", &table[1..]));
            let o = Command::new(env!("CARGO_BIN_EXE_marquet"))
                .args(["convert", "--keep-order", "--compression", compression])
                .arg(&src)
                .arg(&out)
                .output()
                .unwrap();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let f = File::open(&out).unwrap();
            let all = datasets_below(&f, table);
            let filters = |c: &str| all.iter().find(|(p, _)| *p == format!("{table}/{c}")).unwrap_or_else(|| panic!("no dataset {c} in {all:?}")).1.clone();
            let (want_number, want_string) = match compression {
                "deflate" => (vec![Filter::Shuffle, Filter::Deflate(level)], vec![Filter::Deflate(level)]),
                _ => (vec![], vec![]),
            };
            for c in numbers {
                assert_eq!(filters(c), want_number, "{table}/{c}, {compression}");
            }
            for c in strings {
                assert_eq!(filters(c), want_string, "{table}/{c}, {compression}");
            }
            drop(f);
            if let Some(py) = python_with_h5py("converted_attribute_columns_follow_the_layout_compression") {
                let mut args = vec![out.display().to_string(), table.to_string(), src.display().to_string()];
                args.extend(numbers.iter().chain(strings).map(|c| c.to_string()));
                let (ok, stdout, err) = run_h5py(&py, H5PY_ATTRIBUTES, &args);
                assert!(ok, "h5py:\n{stdout}\n{err}");
                assert_eq!(stdout.lines().count(), numbers.len() + strings.len(), "{stdout}");
            }
        }
    }
}

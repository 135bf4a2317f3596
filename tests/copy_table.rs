//! Issue #32: `marquet convert a.h5 b.h5 --table /t` (Rust `convert::convert`) copies a
//! Marquet or H5Col table between HDF5 files as stored (`convert::copy`): into a new file
//! (any of `.h5 .hdf5 .hdf .he5`) or an existing one, all-or-nothing (docs/FAULTS.md F2),
//! refusing a table name the output already has. Checked: `validate --full` finds the copy
//! conformant; every column reads back equal; queries (spatial and attribute, through the
//! indexes) answer equal to the source's; and h5dump ≥ 1.12 (`-p -A`: every attribute,
//! datatype, chunking, filter, fill value and storage size, object references by the file
//! and path they resolve to) prints the source and the copy alike, so every reference of
//! the copy points into the new file. (h5py cannot read these `H5T_STD_REF` attributes:
//! "Unknown reference type".)

mod common;

use std::path::Path;
use std::process::Command;

use marquet::convert::{convert, ConvertOptions};
use marquet::h5::Dtype;
use marquet::h5col::categorical::{add_categorical_column, create_categories};
use marquet::h5col::search_index::{self as index, build_bitmap, build_sorted_rows, range_filter, DEFAULT_BITMAP_MAX_VALUES};
use marquet::h5col::{Array, Batch, ColumnKind, ColumnSpec, ColumnValues, File};
use marquet::marquet::MarquetTable;
use marquet::query::{Predicate, Query, TableQuery, Window};
use marquet::BBox;

const COUNTRIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet";
const CITIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet";

fn data(rel: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel).display().to_string()
}

fn cli(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn conformant(p: &Path) {
    let opts = marquet::validate::Options { full: true, ..Default::default() };
    let r = marquet::validate::validate_file(p, &opts).unwrap();
    let errors: Vec<String> = r.errors().map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{}: {errors:?}", p.display());
}

/// Every column of table `t` in `a` and `b` reads back equal (datasets and list columns).
fn same_columns(a: &Path, b: &Path, t: &str) {
    let (fa, fb) = (File::open(a).unwrap(), File::open(b).unwrap());
    let (ta, tb) = (fa.table(t).unwrap(), fb.table(t).unwrap());
    let n = ta.nrows().unwrap();
    assert_eq!(tb.nrows().unwrap(), n);
    let names = ta.column_names().unwrap();
    assert_eq!(tb.column_names().unwrap(), names);
    for c in &names {
        match ta.kind_of(c).unwrap() {
            Some(ColumnKind::Dataset) => assert_eq!(ta.read(c, 0, n).unwrap(), tb.read(c, 0, n).unwrap(), "{t}/{c}"),
            Some(ColumnKind::List) => assert_eq!(ta.read_list(c, 0, n).unwrap(), tb.read_list(c, 0, n).unwrap(), "{t}/{c}"),
            None => panic!("{t}/{c}: no column"),
        }
    }
}

/// h5dump -p -A of the table group in both files, file names normalized: equal.
fn same_h5dump(a: &Path, b: &Path, t: &str) {
    let Some(h5dump) = common::h5dump_or_skip("copy_table") else { return };
    // The file offset of a contiguous dataset is where the copy put it; all else is equal.
    let dump = |p: &Path| -> Vec<String> {
        let d = common::normalize_ddl(&common::run_h5dump(&h5dump, &["-p", "-A", "-g", t], p), p);
        d.lines().filter(|l| !l.trim_start().starts_with("OFFSET ")).map(str::to_string).collect()
    };
    let (da, db) = (dump(a), dump(b));
    assert!(da.iter().any(|l| l.contains("H5T_REFERENCE")), "the table should hold object references");
    if let Some(i) = (0..da.len().max(db.len())).find(|&i| da.get(i) != db.get(i)) {
        let ctx = |v: &[String]| v[i.saturating_sub(8)..(i + 3).min(v.len())].join("\n");
        panic!("h5dump -p -A -g {t} differs at line {i}:\n--- source\n{}\n--- copy\n{}", ctx(&da), ctx(&db));
    }
}

/// Spatial queries on `t` answer the same rows, through the same layers, in both files.
fn same_queries(a: &Path, b: &Path, t: &str) {
    let (fa, fb) = (File::open(a).unwrap(), File::open(b).unwrap());
    let (ta, tb) = (MarquetTable::open(&fa, t).unwrap(), MarquetTable::open(&fb, t).unwrap());
    let col = ta.primary_geometry_column().unwrap();
    let mut hits = 0;
    for w in [BBox::xy(-10.0, 35.0, 30.0, 60.0), BBox::xy(100.0, -45.0, 160.0, -10.0), BBox::xy(-180.0, -90.0, 180.0, 90.0), BBox::xy(0.0, -89.0, 0.5, -88.5)] {
        for p in [Predicate::Intersects, Predicate::Within, Predicate::BBoxOnly] {
            let q = Query::new(Window::BBox(w), p);
            let (ra, rb) = (ta.query(&col, &q).unwrap(), tb.query(&col, &q).unwrap());
            assert_eq!(ra.rows, rb.rows, "{w:?} {p:?}");
            assert_eq!((ra.stats.used_rtree, ra.stats.used_block_index), (rb.stats.used_rtree, rb.stats.used_block_index));
            assert!(rb.stats.ignored_indexes.is_empty(), "{:?}", rb.stats.ignored_indexes);
            hits += rb.rows.len();
        }
    }
    assert!(hits > 0);
    let (ia, ib) = (ta.spatial_indexes(&col).unwrap(), tb.spatial_indexes(&col).unwrap());
    assert!(!ib.is_empty() && ib.iter().all(|i| i.valid), "{ib:?}");
    assert_eq!(ia.iter().map(|i| (i.kind, &i.info.path)).collect::<Vec<_>>(), ib.iter().map(|i| (i.kind, &i.info.path)).collect::<Vec<_>>());
}

#[test]
fn a_marquet_table_is_copied_with_its_layout_and_indexes_by_the_cli() {
    let _s = common::serial();
    let dir = common::TempDir::new("copy-cli");
    let src = dir.join("src.h5");
    for (input, table) in [(COUNTRIES, "/countries"), (CITIES, "/places/cities")] {
        let (ok, _, err) = cli(&["convert", &data(input), s(&src), "--table", table]);
        assert!(ok, "{err}");
    }
    // Two tables in the source: --table chooses one; without it the copy is refused.
    let (ok, _, err) = cli(&["convert", s(&src), s(&dir.join("x.h5"))]);
    assert!(!ok && err.contains("several") && err.contains("--table"), "{err}");
    assert!(!dir.join("x.h5").exists());
    let (ok, _, err) = cli(&["convert", s(&src), s(&dir.join("x.h5")), "--table", "/nope"]);
    assert!(!ok && err.contains("/nope"), "{err}");
    assert!(!dir.join("x.h5").exists());

    // Into a new file, under every HDF5 extension.
    for ext in ["h5", "hdf5", "hdf", "he5"] {
        let out = dir.join(&format!("copy.{ext}"));
        let (ok, o, err) = cli(&["convert", s(&src), s(&out), "--table", "/countries"]);
        assert!(ok, "{ext}: {err}");
        assert!(o.contains("copied Marquet table /countries (177 rows)"), "{o}");
        let f = File::open(&out).unwrap();
        assert_eq!(f.tables().unwrap(), vec!["/countries".to_string()]);
        drop(f);
        conformant(&out);
    }
    let out = dir.join("copy.h5");
    let (ok, o, _) = cli(&["validate", "--full", s(&out)]);
    assert!(ok && o.contains("conformant"), "{o}");
    same_columns(&src, &out, "/countries");
    same_queries(&src, &out, "/countries");
    same_h5dump(&src, &out, "/countries");

    // Into an existing file: added beside its table, in a group path created on the way.
    let (ok, _, err) = cli(&["convert", s(&src), s(&out), "--table", "/places/cities"]);
    assert!(ok, "{err}");
    let f = File::open(&out).unwrap();
    assert_eq!(f.tables().unwrap(), vec!["/countries".to_string(), "/places/cities".to_string()]);
    drop(f);
    conformant(&out);
    same_columns(&src, &out, "/places/cities");
    same_queries(&src, &out, "/places/cities");
    same_h5dump(&src, &out, "/places/cities");
    // Into a group that exists (a GeoParquet import, published by the same copy): the
    // copy is linked in /places; nothing else appears at the root (no anonymous holder, no
    // `~obj_pointed_by_*` link of HDF5's reference-expanding copy).
    let (ok, _, err) = cli(&["convert", &data(COUNTRIES), s(&out), "--table", "/places/countries"]);
    assert!(ok, "{err}");
    let f = File::open(&out).unwrap();
    assert_eq!(f.tables().unwrap(), ["/countries", "/places/cities", "/places/countries"].map(String::from).to_vec());
    let members = |g: &str| {
        let o = marquet::h5::object_open(f.id(), g).unwrap();
        let mut m = marquet::h5::member_names(o.id(), g).unwrap();
        m.sort();
        m
    };
    assert_eq!(members("/"), ["countries", "places"]);
    assert_eq!(members("/places"), ["cities", "countries"]);
    drop(f);
    conformant(&out);
    same_columns(&out, &out, "/places/countries");
    // The same name again: refused, the output unchanged byte for byte.
    let before = std::fs::read(&out).unwrap();
    let (ok, _, err) = cli(&["convert", s(&src), s(&out), "--table", "/countries"]);
    assert!(!ok && err.contains("/countries already exists"), "{err}");
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().contains(".partial.")).collect();
    assert!(left.is_empty(), "staging files left: {left:?}");
}

/// Several tables published at once under a group the output does not have yet
/// (`File::copy_tables_from`, the step that publishes a staged conversion): one new group
/// holds both, nothing else appears at the root, every column reads as in the source.
#[test]
fn tables_under_one_new_group_are_published_together() {
    let _s = common::serial();
    let dir = common::TempDir::new("copy-group");
    let src = dir.join("src.h5");
    for (input, table) in [(COUNTRIES, "/grp/countries"), (CITIES, "/grp/cities")] {
        let (ok, _, err) = cli(&["convert", &data(input), s(&src), "--table", table]);
        assert!(ok, "{err}");
    }
    let out = dir.join("out.h5");
    let (ok, _, err) = cli(&["convert", &data(CITIES), s(&out), "--table", "/t"]);
    assert!(ok, "{err}");
    let paths = ["/grp/countries".to_string(), "/grp/cities".to_string()];
    File::open_rw(&out).unwrap().copy_tables_from(&File::open(&src).unwrap(), &paths).unwrap();
    let f = File::open(&out).unwrap();
    let mut tables = f.tables().unwrap();
    tables.sort();
    assert_eq!(tables, ["/grp/cities", "/grp/countries", "/t"]);
    let root = marquet::h5::object_open(f.id(), "/").unwrap();
    let mut m = marquet::h5::member_names(root.id(), "/").unwrap();
    m.sort();
    assert_eq!(m, ["grp", "t"]);
    drop((root, f));
    conformant(&out);
    for p in &paths {
        same_columns(&src, &out, p);
    }
}

/// An H5Col table (no geometry) with a categorical column and HEP001 search indexes, whose
/// `CATEGORIES`, `VALUES` and index references must point at the copies.
#[test]
fn an_h5col_table_with_references_is_copied_by_the_rust_api() {
    let _s = common::serial();
    let dir = common::TempDir::new("copy-h5col");
    let src = dir.join("h5col.h5");
    const LABELS: [&str; 3] = ["low", "mid", "high"];
    {
        let f = File::create(&src).unwrap();
        let t = f.create_table("/obs/t").unwrap();
        let spec = |d: Dtype| ColumnSpec::new(d).with_chunk_rows(64);
        t.add_column("i", &spec(Dtype::I64)).unwrap();
        t.add_column("f", &spec(Dtype::F64)).unwrap();
        let cats = create_categories(&t, "levels", &LABELS, true).unwrap();
        add_categorical_column(&t, "c", &spec(Dtype::I8), &cats).unwrap();
        let n = 1000i64;
        let i: Vec<i64> = (0..n).map(|k| (k * 7919) % 1000).collect();
        let fv: Vec<f64> = (0..n).map(|k| k as f64 * 0.5).collect();
        let c: Vec<i8> = (0..n).map(|k| (k % 3) as i8).collect();
        t.append(
            &Batch::new()
                .with("i", ColumnValues::Array { values: Array::from_i64(&i), missing: None })
                .with("f", ColumnValues::Array { values: Array::from_f64(&fv), missing: None })
                .with("c", ColumnValues::Array { values: Array::from_i8(&c), missing: None }),
        )
        .unwrap();
        index::build_chunk_minmax(&t, "i").unwrap();
        build_sorted_rows(&t, "f").unwrap();
        build_bitmap(&t, "c", DEFAULT_BITMAP_MAX_VALUES).unwrap();
    }
    conformant(&src);
    let out = dir.join("copy.hdf5");
    // Without --table: the file's only table.
    let r = convert(&src, &out, &ConvertOptions::default()).unwrap();
    let c = r.copy.as_ref().unwrap();
    assert_eq!((c.table.as_str(), c.rows, c.marquet), ("/obs/t", 1000, false));
    assert!(r.to_string().contains("copied H5Col table /obs/t (1000 rows)"), "{r}");
    conformant(&out);
    same_columns(&src, &out, "/obs/t");
    same_h5dump(&src, &out, "/obs/t");
    let (fa, fb) = (File::open(&src).unwrap(), File::open(&out).unwrap());
    let (ta, tb) = (fa.table("/obs/t").unwrap(), fb.table("/obs/t").unwrap());
    for kind in ["CHUNK_MINMAX", "SORTED_ROWS", "BITMAP"] {
        let col = match kind {
            "CHUNK_MINMAX" => "i",
            "SORTED_ROWS" => "f",
            _ => "c",
        };
        assert!(index::valid_index(&tb, col, kind).unwrap().is_some(), "{kind} on {col} valid in the copy");
    }
    let (ra, sa) = range_filter(&ta, "i", 100.0, 120.0).unwrap();
    let (rb, sb) = range_filter(&tb, "i", 100.0, 120.0).unwrap();
    assert_eq!(ra, rb);
    assert_eq!(ra.len(), 21);
    assert_eq!(format!("{sa:?}"), format!("{sb:?}"));
    assert_eq!(
        marquet::h5col::categorical::read_labels(&tb, "c", 0, 4).unwrap(),
        ["low", "mid", "high", "low"].map(|s| Some(s.to_string())).to_vec()
    );
}

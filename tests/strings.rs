//! One rule for strings (issues #35 and #38, local ruling L17): every HEP001 string form
//! other producers write reads right, and every text value Marquet writes reads back
//! exactly — `''`, U+FFFF, NUL and nulls stay what they were, through appends too; text
//! stays text in every output.
//!
//! Fixtures: testdata/strings/ (make_fixtures.py: h5py and netCDF4-python wrote them;
//! expected.json is h5py's reading, the oracle).
#![cfg(feature = "geoparquet")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, BinaryArray, NullArray, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use marquet::convert::{append_record_batches, export_geoparquet, import_record_batches, AppendOptions, ExportOptions, ImportOptions};
use marquet::h5col::categorical::{categories_of, read_labels};
use marquet::h5col::predicate::{filter_rows, ColumnFilter, Scalar};
use marquet::h5col::{ColumnKind, File};
use marquet::marquet::WriteLayout;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/strings").join(name)
}

fn marquet(args: &[&str]) -> (bool, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.success(), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Every row of column `c` of table `t` as Marquet's library reads it (labels for a
/// categorical column; `None` = missing by the HEP001 §8.5 fill test).
fn read_column(f: &File, t: &str, c: &str) -> Vec<Option<String>> {
    let tab = f.table(t).unwrap();
    let n = tab.nrows().unwrap();
    if categories_of(&tab, c).unwrap().is_some() {
        return read_labels(&tab, c, 0, n).unwrap();
    }
    assert_eq!(tab.kind_of(c).unwrap(), Some(ColumnKind::Dataset), "{c}");
    let col = tab.column(c).unwrap();
    let a = col.read(0, n).unwrap();
    let miss = a.missing(col.fill());
    (0..a.len()).map(|i| (!miss[i]).then(|| a.get_str(i).unwrap())).collect()
}

fn expected() -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("expected.json")).unwrap()).unwrap()
}

fn as_rows(v: &serde_json::Value) -> Vec<Option<String>> {
    v.as_array().unwrap().iter().map(|x| x.as_str().map(str::to_string)).collect()
}

/// Issue #35 item 1: fixed-length ASCII and UTF-8, variable-length ASCII and UTF-8, with
/// a fill of `""`, of 0xFF and without one, categorical labels of both lengths — written by
/// h5py and netCDF4-python — read as h5py reads them (before: variable-length columns read
/// as pointer bytes or nulls).
#[test]
fn other_producers_string_forms_read_like_h5py() {
    let _s = common::serial();
    let exp = expected();
    for (file, cols) in exp.as_object().unwrap() {
        let f = File::open(fixture(file)).unwrap();
        for (c, rows) in cols.as_object().unwrap() {
            assert_eq!(read_column(&f, "/t", c), as_rows(rows), "{file}: column {c}");
        }
    }
}

/// The same through `marquet dump --format csv`: every value as text (no hex pointer
/// bytes), one line per row, in column order.
#[test]
fn dump_prints_other_producers_strings_as_text() {
    let _s = common::serial();
    let exp = expected();
    for (file, cols) in exp.as_object().unwrap() {
        let path = fixture(file);
        let (ok, out, err) = marquet(&["dump", path.to_str().unwrap(), "--table", "/t", "--format", "csv"]);
        assert!(ok, "{file}: {err}");
        let mut lines = out.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let rows: Vec<&str> = lines.collect();
        for (c, want) in cols.as_object().unwrap() {
            let k = header.iter().position(|h| h.trim_matches('"') == c).unwrap_or_else(|| panic!("{file}: no column {c} in {header:?}"));
            for (i, w) in as_rows(want).iter().enumerate() {
                let cell = csv_cells(rows[i])[k].clone();
                assert_eq!(cell, w.clone().unwrap_or_default(), "{file}: column {c} row {i}: {}", rows[i]);
            }
        }
    }
}

/// Split one CSV line (RFC 4180 quoting).
fn csv_cells(line: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match (ch, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                out.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => out.push(String::new()),
            (c, _) => out.last_mut().unwrap().push(c),
        }
    }
    out
}

/// `query --where` on a variable-length string column of another producer (before:
/// "filters are implemented for … fixed-length string …").
#[test]
fn where_filters_variable_length_strings() {
    let _s = common::serial();
    let path = fixture("h5py_strings.h5");
    let f = File::open(&path).unwrap();
    let t = f.table("/t").unwrap();
    let r = filter_rows(&t, "vlen_utf8_fill_ff", &ColumnFilter::Eq(Scalar::Text(String::new()))).unwrap();
    assert_eq!(r.rows, vec![1], "the empty string is a value of row 1; the fill row 5 is missing");
    let r = filter_rows(&t, "vlen_utf8_fill_empty", &ColumnFilter::Eq(Scalar::Text("Zürich".into()))).unwrap();
    assert_eq!(r.rows, vec![2]);
}

// ------------------------------------------------------------------ Marquet's own writes

fn point_wkb(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1u8, 1, 0, 0, 0];
    v.extend_from_slice(&x.to_le_bytes());
    v.extend_from_slice(&y.to_le_bytes());
    v
}

/// A batch of points with column `name` = `names` (Arrow type `dt`: Utf8 or Null).
fn batch(names: ArrayRef, x0: f64) -> RecordBatch {
    let n = names.len();
    let g: Vec<Vec<u8>> = (0..n).map(|i| point_wkb(x0 + i as f64, 1.0)).collect();
    let geom = BinaryArray::from_iter_values(g.iter().map(|v| v.as_slice()));
    let schema = Schema::new(vec![Field::new("name", names.data_type().clone(), true), Field::new("geometry", DataType::Binary, true)]);
    RecordBatch::try_new(Arc::new(schema), vec![names, Arc::new(geom)]).unwrap()
}

fn texts(v: &[Option<&str>]) -> ArrayRef {
    Arc::new(StringArray::from(v.to_vec()))
}

fn import(dir: &common::TempDir, name: &str, b: RecordBatch) -> PathBuf {
    let h5 = dir.join(name);
    let f = File::create(&h5).unwrap();
    let opts = ImportOptions { layout: WriteLayout::plain(), ..ImportOptions::new("/t") };
    import_record_batches(&f, b.schema(), [Ok(b)], &["geometry".to_string()], &opts).unwrap();
    h5
}

fn append(h5: &Path, b: RecordBatch) -> marquet::Result<u64> {
    let f = File::open_rw(h5).unwrap();
    append_record_batches(&f, "/t", b.schema(), [Ok(b)], &["geometry".to_string()], &AppendOptions::default()).map(|r| r.rows)
}

/// The `name` column of the table exported to GeoParquet, read with the parquet crate.
fn exported_names(h5: &Path, dir: &common::TempDir) -> Vec<Option<String>> {
    let out = dir.join("back.parquet");
    let f = File::open(h5).unwrap();
    export_geoparquet(&f, "/t", &out, &ExportOptions::default()).unwrap();
    let r = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&out).unwrap()).unwrap().build().unwrap();
    let mut v = Vec::new();
    for b in r {
        let b = b.unwrap();
        let c = b.column_by_name("name").unwrap();
        assert_eq!(c.data_type(), &DataType::Utf8, "text stays text");
        v.extend(c.as_string::<i32>().iter().map(|x| x.map(str::to_string)));
    }
    v
}

fn owned(v: &[Option<&str>]) -> Vec<Option<String>> {
    v.iter().map(|x| x.map(str::to_string)).collect()
}

/// Issue #38: a table whose first batch had no empty string got fill `""`; every appended
/// `''` became null.
#[test]
fn appended_empty_strings_stay_empty() {
    let _s = common::serial();
    let dir = common::TempDir::new("strings-append-empty");
    let h5 = import(&dir, "t.h5", batch(texts(&[Some("a"), Some("b"), None]), 0.0));
    append(&h5, batch(texts(&[Some(""), None, Some("c"), Some("")]), 10.0)).unwrap();
    assert_eq!(exported_names(&h5, &dir), owned(&[Some("a"), Some("b"), None, Some(""), None, Some("c"), Some("")]));
}

/// Issue #38: a column whose fill was U+FFFF (first batch had `''` and nulls) turned an
/// appended `'\u{FFFF}'` into null.
#[test]
fn appended_uffff_stays_a_value() {
    let _s = common::serial();
    let dir = common::TempDir::new("strings-append-uffff");
    let h5 = import(&dir, "t.h5", batch(texts(&[Some(""), None, Some("xyzw")]), 0.0));
    append(&h5, batch(texts(&[Some("\u{FFFF}"), None, Some("")]), 10.0)).unwrap();
    assert_eq!(exported_names(&h5, &dir), owned(&[Some(""), None, Some("xyzw"), Some("\u{FFFF}"), None, Some("")]));
}

/// Issue #38: `convert` stored `'a\0b'` as `'a'`. Now the column keeps the bytes exactly
/// (a list of UTF-8 bytes with a null mask, local ruling L17), and an append of a NUL value
/// into a fixed-length string column is refused naming the row, never cut.
#[test]
fn text_with_nul_round_trips_or_is_refused() {
    let _s = common::serial();
    let dir = common::TempDir::new("strings-nul");
    let h5 = import(&dir, "t.h5", batch(texts(&[Some("a\0b"), Some(""), None, Some("\u{FFFF}")]), 0.0));
    assert_eq!(exported_names(&h5, &dir), owned(&[Some("a\0b"), Some(""), None, Some("\u{FFFF}")]));
    append(&h5, batch(texts(&[Some("c"), Some("\0")]), 10.0)).unwrap();
    assert_eq!(exported_names(&h5, &dir), owned(&[Some("a\0b"), Some(""), None, Some("\u{FFFF}"), Some("c"), Some("\0")]));

    let h5 = import(&dir, "fixed.h5", batch(texts(&[Some("plain"), None]), 0.0));
    let e = append(&h5, batch(texts(&[Some("ok"), Some("x\0y")]), 10.0)).unwrap_err().to_string();
    assert!(e.contains("NUL") && e.contains("element 1"), "{e}");
    assert_eq!(exported_names(&h5, &dir), owned(&[Some("plain"), None]), "a failed append leaves the table as it was");
}

/// Issue #38: the GeoParquet export wrote `''` as null (885 of 7,593 names in one seed).
#[test]
fn geoparquet_export_keeps_empty_strings_apart_from_nulls() {
    let _s = common::serial();
    let dir = common::TempDir::new("strings-export");
    // The finding's shape: a first batch without '' (main gave the column fill ""), then
    // appends and converts that bring many.
    let v: Vec<Option<String>> = (0..3000).map(|i| match i % 5 { 0 if i >= 1000 => Some(String::new()), 1 => None, _ => Some(format!("n{i:04}")) }).collect();
    let refs: Vec<Option<&str>> = v.iter().map(|x| x.as_deref()).collect();
    let h5 = import(&dir, "t.h5", batch(texts(&refs[..1000]), 0.0));
    append(&h5, batch(texts(&refs[1000..]), 1000.0)).unwrap();
    assert_eq!(exported_names(&h5, &dir), v);
    let h5 = import(&dir, "all.h5", batch(texts(&refs), 0.0));
    assert_eq!(exported_names(&h5, &dir), v);
}

/// Issue #38: a string column stored as a list of UTF-8 bytes was printed by `dump` and
/// `query --format csv|wkt` as byte lists (`[239 191 191]`), and `query --where` on it said
/// "is not a column dataset".
#[test]
fn text_stored_as_bytes_prints_and_filters_as_text() {
    let _s = common::serial();
    let dir = common::TempDir::new("strings-bytes");
    let h5 = import(&dir, "t.h5", batch(texts(&[Some("\u{FFFF}"), Some("a\0b"), Some(""), None, Some("zz")]), 0.0));
    let p = h5.to_str().unwrap();
    let (ok, out, err) = marquet(&["dump", p, "--format", "csv"]);
    assert!(ok, "{err}");
    let names: Vec<String> = out.lines().skip(1).map(|l| csv_cells(l)[0].clone()).collect();
    assert_eq!(names, ["\u{FFFF}", "a\0b", "", "", "zz"], "{out}");
    assert!(!out.contains("[239"), "{out}");
    let (ok, out, err) = marquet(&["query", p, "--where", "name = 'zz'", "--format", "csv"]);
    assert!(ok, "{err}");
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.lines().nth(1).unwrap().starts_with("zz,"), "{out}");
    let (ok, out, err) = marquet(&["query", p, "--where", "name = ''", "--count"]);
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "1", "'' is one value, the null row is not: {out}");
}

/// Issue #38: a batch whose string column is entirely null (Arrow type `null`, what pandas
/// gives for a column of None) could not be appended ("only in the target: name"), and
/// `convert` dropped such a column.
#[test]
fn all_null_column_is_kept_and_appendable() {
    let _s = common::serial();
    let dir = common::TempDir::new("strings-null-type");
    let h5 = import(&dir, "t.h5", batch(Arc::new(NullArray::new(3)), 0.0));
    assert_eq!(exported_names(&h5, &dir), vec![None, None, None]);
    append(&h5, batch(texts(&[Some(""), Some("b")]), 10.0)).unwrap();
    append(&h5, batch(Arc::new(NullArray::new(2)), 20.0)).unwrap();
    assert_eq!(exported_names(&h5, &dir), owned(&[None, None, None, Some(""), Some("b"), None, None]));

    let h5 = import(&dir, "s.h5", batch(texts(&[Some("x")]), 0.0));
    append(&h5, batch(Arc::new(NullArray::new(2)), 10.0)).unwrap();
    assert_eq!(exported_names(&h5, &dir), owned(&[Some("x"), None, None]));
}

/// Categorical labels are variable-length UTF-8 (netCDF-C reads them; local ruling L17) and
/// read back.
#[test]
fn categorical_labels_are_variable_length() {
    let _s = common::serial();
    let dir = common::TempDir::new("strings-cats");
    let keys = arrow_array::Int8Array::from(vec![Some(0), Some(1), None, Some(0)]);
    let vals = StringArray::from(vec!["", "Zürich"]);
    let d: ArrayRef = Arc::new(arrow_array::DictionaryArray::try_new(keys, Arc::new(vals)).unwrap());
    let h5 = import(&dir, "t.h5", batch(d, 0.0));
    let f = File::open(&h5).unwrap();
    let t = f.table("/t").unwrap();
    let cats = categories_of(&t, "name").unwrap().expect("categorical");
    assert_eq!(cats.labels, ["", "Zürich"]);
    let ds = marquet::h5::dataset_open(t.id(), &cats.path).unwrap();
    let info = marquet::h5::dataset_info(ds.id(), &cats.path).unwrap();
    assert_eq!(info.dtype, marquet::h5::Dtype::VarString { utf8: true });
    assert_eq!(info.fill, None);
    assert_eq!(read_column(&f, "/t", "name"), owned(&[Some(""), Some("Zürich"), None, Some("")]));
}

/// The script that turns Marquet's `name` column into another producer's variable-length
/// form (h5py): the HEP001 forms a consumer must read, inside a Marquet table.
const H5PY_VLEN: &str = r#"
import sys, h5py, numpy as np
path, form = sys.argv[1], sys.argv[2]
with h5py.File(path, "r+") as f:
    t = f["t"]
    n = int(t.attrs["NROWS"])
    names = [None, "", "Zürich", "\uffff", "東京"] * (n // 5)
    fill = {"vlen_fill_ff": b"\xff", "vlen_fill_empty": b"", "vlen_ascii": b""}[form]
    enc = "ascii" if form == "vlen_ascii" else "utf-8"
    if form == "vlen_ascii":
        names = [None if x is None else x.encode("ascii", "replace").decode() for x in names]
    del t["name"]
    d = t.create_dataset("name", (n,), dtype=h5py.string_dtype(enc), fillvalue=fill, chunks=(n,))
    d[...] = np.array([fill if x is None else x.encode() for x in names], dtype=object)
    # h5py's own reading under the HEP001 §8.5 fill test: the oracle.
    got = [None if bytes(x) == fill else bytes(x).decode() for x in d[...]]
    print("\n".join("\u0000" if x is None else x for x in got))
"#;

/// Issue #35 item 1 for the outputs: a Marquet table whose string column another producer
/// wrote variable-length (UTF-8 with fill 0xFF or "", ASCII) exports to GeoParquet and
/// GeoJSON as h5py reads it (before: all names null, or pointer bytes).
#[test]
fn variable_length_columns_export_like_h5py_reads_them() {
    let _s = common::serial();
    let Some(py) = common::venv_python_with("h5py", "the h5py export check") else { return };
    let dir = common::TempDir::new("strings-vlen-export");
    for form in ["vlen_fill_ff", "vlen_fill_empty", "vlen_ascii"] {
        let v: Vec<Option<String>> = (0..10).map(|i| Some(format!("placeholder {i}"))).collect();
        let refs: Vec<Option<&str>> = v.iter().map(|x| x.as_deref()).collect();
        let h5 = import(&dir, &format!("{form}.h5"), batch(texts(&refs), 0.0));
        let o = Command::new(&py).arg("-c").arg(H5PY_VLEN).arg(&h5).arg(form).output().unwrap();
        assert!(o.status.success(), "{form}: {}", String::from_utf8_lossy(&o.stderr));
        let want: Vec<Option<String>> =
            String::from_utf8(o.stdout).unwrap().lines().map(|l| (l != "\u{0}").then(|| l.to_string())).collect();
        assert_eq!(want.len(), 10);
        assert_eq!(exported_names(&h5, &dir), want, "{form}: GeoParquet");
        let gj = dir.join(&format!("{form}.geojson"));
        let (ok, _, err) = marquet(&["convert", h5.to_str().unwrap(), gj.to_str().unwrap(), "--crs", "OGC:CRS84"]);
        assert!(ok, "{err}");
        let doc: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&gj).unwrap()).unwrap();
        let got: Vec<Option<String>> =
            doc["features"].as_array().unwrap().iter().map(|f| f["properties"]["name"].as_str().map(str::to_string)).collect();
        assert_eq!(got, want, "{form}: GeoJSON");
        let (ok, out, err) = marquet(&["validate", h5.to_str().unwrap()]);
        assert!(ok, "{form}: {out}{err}");
    }
}

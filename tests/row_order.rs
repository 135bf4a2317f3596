//! A table remembers its row-order choice (issue #38, local ruling L19): a table written with
//! `--keep-order` (no Hilbert order) gets appended rows in the order given — by
//! `marquet append`, by the library's writer with its default options, by
//! `MarquetTable::append` — and a table in Hilbert order keeps sorting each append. On main
//! before this rule, `append` into a `--keep-order` table stored the new rows in Hilbert order.

mod common;

use std::process::Command;

use common::synth;
use marquet::h5col::File;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteLayout, WriteOptions};
use marquet::spatial::hilbert_order;
use marquet::spec::names;

const CITIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet";

fn marquet(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).current_dir(env!("CARGO_MANIFEST_DIR")).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// The rows of the file's only table as CSV lines (header dropped).
fn rows(h5: &str) -> Vec<String> {
    let (code, out, err) = marquet(&["dump", h5, "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    out.lines().skip(1).map(str::to_string).collect()
}

fn row_order_attr(h5: &str, table: &str) -> Option<String> {
    let f = File::open(h5).unwrap();
    let t = f.table(table).unwrap();
    marquet::h5col::read_token(t.id(), names::ROW_ORDER).unwrap()
}

#[test]
fn marquet_append_into_a_keep_order_table_keeps_the_input_order() {
    let dir = common::TempDir::new("row-order-cli");
    let keep = dir.join("keep.h5").display().to_string();
    let (code, _, err) = marquet(&["convert", CITIES, &keep, "--table", "/c", "--keep-order"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(row_order_attr(&keep, "/c").as_deref(), Some("input"));
    let first = rows(&keep);
    assert_eq!(first.len(), 243);
    let (code, _, err) = marquet(&["append", &keep, "--from", CITIES]);
    assert_eq!(code, 0, "{err}");
    let all = rows(&keep);
    assert_eq!(all.len(), 486);
    // The appended rows are the source's rows in the source's order: exactly what the
    // --keep-order convert stored.
    assert_eq!(all[243..], first[..], "the appended rows were reordered");
    let (code, out, _) = marquet(&["validate", "--full", &keep]);
    assert_eq!(code, 0, "{out}");

    // A table in Hilbert order (the default) still sorts what is appended: the same source
    // appended comes out in another order than the input's — so the check above can fail.
    let hil = dir.join("hilbert.h5").display().to_string();
    let (code, _, err) = marquet(&["convert", CITIES, &hil, "--table", "/c"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(row_order_attr(&hil, "/c"), None);
    let (code, _, err) = marquet(&["append", &hil, "--from", CITIES]);
    assert_eq!(code, 0, "{err}");
    let h = rows(&hil);
    assert_eq!(h[243..], h[..243], "a Hilbert-ordered table sorts its appends the same way");
    assert_ne!(h[243..], first[..], "the source is in Hilbert order already: the test cannot fail");
}

/// Points in a deliberately scattered order (not Hilbert order), as WKB.
fn scattered_points(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let (xs, ys) = synth::clustered_points(n, seed);
    xs.iter().zip(&ys).map(|(x, y)| {
        let mut w = vec![1u8, 1, 0, 0, 0];
        w.extend_from_slice(&x.to_le_bytes());
        w.extend_from_slice(&y.to_le_bytes());
        w
    }).collect()
}

fn batch(points: &[Vec<u8>]) -> GeoBatch {
    GeoBatch::new().with_geometry("g", GeometryValues::Wkb(points.iter().cloned().map(Some).collect()))
}

fn stored(t: &MarquetTable, from: u64) -> Vec<Vec<u8>> {
    let n = t.nrows().unwrap();
    let w = t.read_wkb("g", from, n).unwrap();
    (0..w.len()).map(|i| w.get(i).unwrap().to_vec()).collect()
}

#[test]
fn every_library_write_into_a_keep_order_table_keeps_the_input_order() {
    // The other test's `marquet` children inherit HDF5's descriptors (and their file locks)
    // for as long as they run: wait for them instead of failing the reopen.
    marquet::h5col::set_lock_timeout(std::time::Duration::from_secs(20));
    let dir = common::TempDir::new("row-order-lib");
    let h5 = dir.join("lib.h5");
    let f = File::create(&h5).unwrap();
    let mut t = MarquetTable::create(&f, "/p").unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
    let a = scattered_points(500, 1);
    // The first write chooses input order (what `convert --keep-order` passes the writer).
    let keep = WriteLayout::default().with_spatial_order(false);
    t.write(&batch(&a), WriteOptions::default().with_spatial_order(false).with_layout(Some(keep))).unwrap();
    assert!(t.keeps_input_order().unwrap());
    assert_eq!(stored(&t, 0), a);
    // The default writer options (Hilbert order of each batch) follow the table's choice.
    let b = scattered_points(300, 2);
    let boxes: Vec<marquet::BBox> = b.iter().map(|w| {
        let x = f64::from_le_bytes(w[5..13].try_into().unwrap());
        let y = f64::from_le_bytes(w[13..21].try_into().unwrap());
        marquet::BBox::xy(x, y, x, y)
    }).collect();
    assert_ne!(hilbert_order(&boxes), (0..b.len()).collect::<Vec<_>>(), "the batch is in Hilbert order already");
    t.write(&batch(&b), WriteOptions::default()).unwrap();
    assert_eq!(stored(&t, 500), b, "MarquetTable::write reordered the rows of a keep-order table");
    // MarquetTable::append keeps the order given (it always did).
    let c = scattered_points(200, 3);
    t.append(&batch(&c)).unwrap();
    assert_eq!(stored(&t, 800), c);
    drop(t);
    drop(f);
    let r = marquet::validate::validate_file(&h5, &marquet::validate::Options { full: true, ..Default::default() }).unwrap();
    assert_eq!(r.errors().count(), 0, "{:?}", r.errors().collect::<Vec<_>>());
    assert_eq!(row_order_attr(&h5.display().to_string(), "/p").as_deref(), Some("input"));
}

/// What Python's `marquet.append(h5, arrow_table)` calls (`convert::append_record_batches`):
/// into a `--keep-order` table the rows stay in the stream's order.
#[test]
fn an_arrow_append_into_a_keep_order_table_keeps_the_input_order() {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    marquet::h5col::set_lock_timeout(std::time::Duration::from_secs(20));
    let dir = common::TempDir::new("row-order-arrow");
    let keep = dir.join("keep.h5").display().to_string();
    let (code, _, err) = marquet(&["convert", CITIES, &keep, "--table", "/c", "--keep-order"]);
    assert_eq!(code, 0, "{err}");
    let first = rows(&keep);
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(CITIES);
    let b = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(src).unwrap()).unwrap();
    let schema = b.schema().clone();
    let r = b.build().unwrap();
    let batches: Vec<_> = r.map(|b| b.map_err(|e| marquet::Error::InvalidArgument(e.to_string()))).collect();
    {
        let f = File::open_rw(&keep).unwrap();
        let rep = marquet::convert::append_record_batches(&f, "/c", schema, batches, &["geometry".to_string()], &Default::default()).unwrap();
        assert_eq!(rep.nrows, 486);
    }
    let all = rows(&keep);
    assert_eq!(all[243..], first[..], "the appended rows were reordered");
}

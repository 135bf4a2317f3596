//! Import and export stream in batches and report progress after each one (issue #8: the
//! `marquet convert` progress bar), and appending a file maintains the table.
#![cfg(feature = "geoparquet")]

mod common;

use std::path::Path;
use std::sync::{Arc, Mutex};

use marquet::convert::{append_file, export_geoparquet, import_geoparquet, AppendOptions, ExportOptions, ImportOptions};
use marquet::h5col::File;
use marquet::marquet::MarquetTable;
use marquet::Progress;

const CITIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet";

/// What a recorder saw: (done, total) per report.
type Seen = Arc<Mutex<Vec<(u64, Option<u64>)>>>;

fn recorder() -> (Progress, Seen) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    (Progress::new(move |d, t| s.lock().unwrap().push((d, t))), seen)
}

#[test]
fn import_export_and_append_report_each_batch() {
    let _s = common::serial();
    let dir = common::TempDir::new("gp-progress");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(CITIES);
    let f = File::create(dir.join("c.h5")).unwrap();
    let (p, seen) = recorder();
    let r = import_geoparquet(&src, &f, &ImportOptions { batch_rows: 100, progress: p, ..ImportOptions::new("/cities") }).unwrap();
    assert_eq!(r.rows, 243);
    assert_eq!(*seen.lock().unwrap(), vec![(100, Some(243)), (200, Some(243)), (243, Some(243))]);
    let (p, seen) = recorder();
    let out = dir.join("c.parquet");
    let e = export_geoparquet(&f, "/cities", &out, &ExportOptions { row_group_rows: 120, progress: p, ..ExportOptions::default() }).unwrap();
    assert_eq!((e.rows, e.row_groups), (243, 3));
    assert_eq!(*seen.lock().unwrap(), vec![(120, Some(243)), (240, Some(243)), (243, Some(243))]);
    // Append the export back in batches of 100: the rows stream straight into the target's
    // writer (issue #31: no staging table first), so each batch is reported once.
    let t = MarquetTable::open(&f, "/cities").unwrap();
    t.build_block_bbox("geometry", Some(16)).unwrap();
    let (p, seen) = recorder();
    let a = append_file(&f, "/cities", &out, &AppendOptions { batch_rows: Some(100), progress: p, ..AppendOptions::default() }).unwrap();
    assert_eq!((a.rows, a.nrows), (243, 486));
    assert_eq!(*seen.lock().unwrap(), vec![(100, Some(243)), (200, Some(243)), (243, Some(243))]);
    let idx = t.spatial_indexes("geometry").unwrap();
    assert_eq!(idx.len(), 1);
    assert!(idx[0].valid, "the block index is extended, not left stale");
    let info = t.geometry_column("geometry").unwrap();
    let (b, _, _) = info.bbox.unwrap();
    assert!(b.xmin < -170.0 && b.xmax > 170.0, "{b:?}");
}

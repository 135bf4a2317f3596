//! The warm spatial reader (issue #20): one `SpatialReader` answering many windows gives
//! exactly the one-shot `MarquetTable::query`'s result (rows, WKB, every statistic) and the
//! answer of an independent full scan (every row decoded and tested with `geo`), for points
//! and polygons, with the default indexes, with an R-tree on points, without indexes, with
//! indexes ignored, with nulls and empty geometries, and after this process writes to the
//! table (appends, index builds) while the reader is open.

use marquet_dev::synth;
use marquet_dev::bench;

use bench::write_marquet;
use geo::Intersects;
use marquet::h5col::Array;
use marquet::marquet::File;
use marquet::marquet::layout::RTreeChoice;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteLayout};
use marquet::query::reader::{ColumnReaders, SpatialReader};
use marquet::query::{Predicate, Query, TableQuery, Window};
use marquet::wkb::{self, ByteOrder, Coord, Geometry, Point, Polygon};
use marquet::{BBox, Dimensions};

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("marquet-reader-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

/// Rows of `path`'s `/bench` table matching `w` by a full scan: every row read as WKB,
/// decoded and tested with `geo` (closed box).
fn full_scan(path: &std::path::Path, w: &BBox) -> Vec<u64> {
    let f = File::open(path).unwrap();
    let t = MarquetTable::open(&f, "/bench").unwrap();
    let n = t.nrows().unwrap();
    let all = t.read_wkb("geometry", 0, n).unwrap();
    let rect = geo::Rect::new((w.xmin, w.ymin), (w.xmax, w.ymax));
    (0..n)
        .filter(|&i| {
            all.get(i as usize).is_some_and(|b| {
                let g: geo::Geometry<f64> = wkb::decode(b).unwrap().into();
                !wkb::scan(b).unwrap().is_empty && g.intersects(&rect)
            })
        })
        .collect()
}

/// The benchmark's windows plus some larger ones, so answers range from empty to thousands.
fn windows() -> Vec<BBox> {
    let mut w = synth::windows(60, 7, 0.5);
    w.extend(synth::windows(15, 8, 6.0));
    w.push(BBox::xy(-180.0, -90.0, 180.0, 90.0));
    w.push(BBox::xy(500.0, 500.0, 501.0, 501.0));
    w
}

fn check_file(path: &std::path::Path, label: &str) -> u64 {
    let f = File::open(path).unwrap();
    let one_shot = MarquetTable::open(&f, "/bench").unwrap();
    let mut reader = SpatialReader::open(&f, "/bench", None).unwrap();
    assert_eq!(reader.column(), "geometry");
    // What the shells hold for a read-only file: the byte-range path, the same answers.
    let mut fast = SpatialReader::for_file(&f, "bench", None).unwrap();
    assert_eq!((fast.read_path(), fast.column()), ("byte-range", "geometry"));
    // The shells' held readers (ColumnReaders): a read-only file keeps one; one open for
    // writing is queried one-shot, holds none.
    let held = ColumnReaders::new();
    // (A copy: HDF5 opens a file either read-only or for writing within one process.)
    let copy = path.with_extension("rw.h5");
    std::fs::copy(path, &copy).unwrap();
    let rw = File::open_rw(&copy).unwrap();
    let rw_table = MarquetTable::open(&rw, "/bench").unwrap();
    let unheld = ColumnReaders::new();
    // The one-shot query of a file libhdf5 has open read-only reads by byte range (no
    // chunk through libhdf5); of a file open for writing, through libhdf5.
    let everything = Query::bbox(BBox::xy(-180.0, -90.0, 180.0, 90.0)).with_wkb(true);
    let before = marquet::h5::direct::chunks_moved().1;
    let a = one_shot.query("geometry", &everything).unwrap();
    assert_eq!(marquet::h5::direct::chunks_moved().1, before, "{label}: one-shot query of a read-only file");
    assert_eq!(rw_table.query("geometry", &everything).unwrap(), a, "{label}: the same through libhdf5");
    assert!(marquet::h5::direct::chunks_moved().1 > before, "{label}: one-shot query of a file open for writing");
    let mut matched = 0;
    for (k, w) in windows().iter().enumerate() {
        let want = full_scan(path, w);
        matched += want.len() as u64;
        for indexes in [true, false] {
            for with_wkb in [false, true] {
                let q = Query::bbox(*w).with_indexes(indexes).with_wkb(with_wkb);
                let got = reader.query(&q).unwrap();
                assert_eq!(got.rows, want, "{label}: window {k} {w:?}, indexes {indexes}");
                assert_eq!(fast.query(&q).unwrap(), got, "{label}: window {k}, indexes {indexes}, byte range");
                assert_eq!(held.query(&f, &one_shot, "geometry", &q).unwrap(), got, "{label}: window {k}, held reader");
                if indexes && !with_wkb {
                    assert_eq!(unheld.query(&rw, &rw_table, "geometry", &q).unwrap(), got, "{label}: window {k}, file open rw");
                }
                // Row for row, layer for layer what the one-shot query answers.
                assert_eq!(got, one_shot.query("geometry", &q).unwrap(), "{label}: window {k}, indexes {indexes}");
                if with_wkb {
                    assert_eq!(got.wkb.unwrap(), one_shot.take_wkb("geometry", &want).unwrap());
                }
            }
        }
        // Other predicates through the same reader.
        for p in [Predicate::Within, Predicate::Contains, Predicate::BBoxOnly] {
            let q = Query::new(Window::BBox(*w), p);
            assert_eq!(reader.query(&q).unwrap(), one_shot.query("geometry", &q).unwrap(), "{label}: {p:?} window {k}");
        }
    }
    assert_eq!((format!("{held:?}"), format!("{unheld:?}")), ("ColumnReaders { open: 1 }".into(), "ColumnReaders { open: 0 }".into()));
    matched
}

#[test]
fn reader_equals_query_and_full_scan_points_and_polygons() {
    let (x, y) = synth::clustered_points(30_000, 42);
    let points = GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None };
    let polys = GeometryValues::Wkb(synth::polygons(5_000, 42).into_iter().map(Some).collect());
    let layout = |f: &dyn Fn(&mut WriteLayout)| {
        let mut l = WriteLayout::default();
        f(&mut l);
        l
    };
    let layouts = [
        ("default", WriteLayout::default()),
        ("rtree everywhere", layout(&|l| l.rtree = RTreeChoice::Always)),
        (
            "no indexes",
            layout(&|l| {
                l.block_index = false;
                l.rtree = RTreeChoice::Never;
                l.covering = false;
            }),
        ),
        (
            "small chunks",
            layout(&|l| {
                l.chunk_rows = 256;
                l.values_chunk_bytes = 4096;
            }),
        ),
    ];
    for (name, layout) in &layouts {
        for (kind, values) in [("points", &points), ("polygons", &polys)] {
            let p = tmp(&format!("{kind}-{}.h5", name.replace(' ', "-")));
            write_marquet(&p, values, layout).unwrap();
            let m = check_file(&p, &format!("{kind}, {name}"));
            // A file open for writing: through libhdf5, which holds its last changes.
            let rw = File::open_rw(&p).unwrap();
            assert_eq!(SpatialReader::for_file(&rw, "/bench", None).unwrap().read_path(), "libhdf5");
            assert!(m > 100, "{kind} {name}: the windows should match rows ({m})");
        }
    }
}

fn poly(cx: f64, cy: f64, h: f64) -> Vec<u8> {
    let ring = vec![Coord::xy(cx - h, cy - h), Coord::xy(cx + h, cy - h), Coord::xy(cx + h, cy + h), Coord::xy(cx - h, cy + h), Coord::xy(cx - h, cy - h)];
    wkb::encode(&Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring] }), ByteOrder::LittleEndian)
}

/// Polygons with nulls and empty geometries, one per row of a 40x40 grid.
fn grid_rows(first: usize, n: usize) -> Vec<Option<Vec<u8>>> {
    (first..first + n)
        .map(|i| match i % 17 {
            3 => None,
            5 => Some(wkb::encode(&Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![] }), ByteOrder::LittleEndian)),
            _ => Some(poly((i % 40) as f64, (i / 40) as f64, 0.3)),
        })
        .collect()
}

fn batch(rows: Vec<Option<Vec<u8>>>, first: u64) -> GeoBatch {
    let ids: Vec<u64> = (first..first + rows.len() as u64).collect();
    GeoBatch::new().with_array("id", Array::from_u64(&ids)).with_geometry("geometry", GeometryValues::Wkb(rows))
}

#[test]
fn reader_follows_writes_of_this_process_and_nulls_never_match() {
    for form in [StorageForm::VarWkb, StorageForm::FixedWkb { size: 93 }] {
        let p = tmp(&format!("writes-{}.h5", matches!(form, StorageForm::VarWkb)));
        let f = File::create(&p).unwrap();
        let mut t = MarquetTable::create(&f, "/bench").unwrap();
        t.add_column("id", &marquet::h5col::ColumnSpec::new(marquet::h5col::Dtype::U64).with_chunk_rows(64)).unwrap();
        let spec = GeometryColumnSpec::default().with_chunk_rows(64).with_form(form).with_covering("bbox");
        t.add_geometry_column("geometry", &spec).unwrap();
        let keep = |rows: Vec<Option<Vec<u8>>>| -> Vec<Option<Vec<u8>>> {
            // Fixed-size WKB holds only the 93-byte squares (and nulls).
            rows.into_iter().filter(|r| matches!(form, StorageForm::VarWkb) || r.as_ref().is_none_or(|w| w.len() == 93)).collect()
        };
        let first = keep(grid_rows(0, 700));
        let n0 = first.len() as u64;
        t.append(&batch(first, 0)).unwrap();
        t.build_block_bbox("geometry", Some(32)).unwrap();
        let mut reader = SpatialReader::open(&f, "/bench", Some("geometry")).unwrap();
        let w = BBox::xy(4.5, 4.5, 30.2, 30.2);
        let a = reader.query(&Query::bbox(w)).unwrap();
        assert!(a.stats.used_block_index && a.stats.used_covering, "{:?}", a.stats);
        assert_eq!(a.rows, full_scan(&p, &w));
        // Null and empty rows never match (the writer may reorder rows, so by content).
        let got = t.take_wkb("geometry", &a.rows).unwrap();
        assert!((0..got.len()).all(|i| got.get(i).is_some_and(|w| !wkb::scan(w).unwrap().is_empty)));
        // An append through another handle of this process: the reader sees the new rows.
        let more = keep(grid_rows(700, 900));
        t.append(&batch(more, n0)).unwrap();
        let b = reader.query(&Query::bbox(w)).unwrap();
        assert!(b.rows.len() > a.rows.len());
        assert_eq!(b.rows, full_scan(&p, &w));
        assert_eq!(reader.nrows(), t.nrows().unwrap());
        // An R-tree built later is used.
        t.build_rtree("geometry", None).unwrap();
        let c = reader.query(&Query::bbox(w)).unwrap();
        assert!(c.stats.used_rtree, "{:?}", c.stats);
        assert_eq!(c.rows, b.rows);
        assert_eq!(c, t.query("geometry", &Query::bbox(w)).unwrap());
        // Explicit refresh changes nothing on an unchanged file.
        reader.refresh().unwrap();
        assert_eq!(reader.query(&Query::bbox(w)).unwrap(), c);
    }
}

#[test]
fn reader_of_a_point_column_with_nulls_and_errors() {
    let p = tmp("points-nulls.h5");
    let f = File::create(&p).unwrap();
    let mut t = MarquetTable::create(&f, "/bench").unwrap();
    t.add_geometry_column("geometry", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }))
        .unwrap();
    let rows: Vec<Option<Vec<u8>>> = (0..500)
        .map(|i| {
            (i % 7 != 0).then(|| wkb::encode(&Geometry::Point(Point::new(Dimensions::Xy, Coord::xy(i as f64 * 0.1, 1.0))), ByteOrder::LittleEndian))
        })
        .collect();
    t.append(&GeoBatch::new().with_geometry("geometry", GeometryValues::Wkb(rows))).unwrap();
    let mut reader = SpatialReader::new(MarquetTable::open(&f, "/bench").unwrap(), None).unwrap();
    let w = BBox::xy(0.0, 0.0, 20.0, 2.0);
    let r = reader.query(&Query::bbox(w).with_wkb(true)).unwrap();
    assert_eq!(r.rows, full_scan(&p, &w));
    // Points 0..=200 lie in the closed window (200 * 0.1 rounds to 20.0), the 29 multiples
    // of 7 among them are null.
    assert_eq!(r.rows.len(), 201 - 29);
    let got = r.wkb.unwrap();
    assert!((0..got.len()).all(|i| got.get(i).is_some()));
    // A window wrapping the antimeridian (the default CRS is geographic).
    let wrap = Query::bbox(BBox::xy(10.0, 0.0, -10.0, 1.0));
    assert_eq!(reader.query(&wrap).unwrap(), t.query("geometry", &wrap).unwrap());
    // A column that is not a geometry column.
    assert!(SpatialReader::new(MarquetTable::open(&f, "/bench").unwrap(), Some("nope")).is_err());
}

#[test]
fn a_reader_can_move_between_threads() {
    // The C ABI and Python keep a reader behind a mutex and may use it from any thread.
    fn send<T: Send>() {}
    send::<SpatialReader>();
}

/// `SpatialReader::take`: a query's rows of the attribute columns, read by the reader
/// itself — by byte range for fixed-size columns, through libhdf5 for a column of
/// variable-length strings (written here by hdf5-metno, as h5py and netCDF-C write them) —
/// equal to `Column::take` of the same rows, whichever reader; and its refusals.
#[test]
fn take_reads_the_answer_rows_of_attribute_columns() {
    let p = tmp("take.h5");
    let n = 300u64;
    {
        let f = File::create(&p).unwrap();
        let mut t = MarquetTable::create(&f, "/bench").unwrap();
        t.add_column("id", &marquet::h5col::ColumnSpec::new(marquet::h5col::Dtype::U64).with_chunk_rows(32)).unwrap();
        t.add_column("temp", &marquet::h5col::ColumnSpec::new(marquet::h5col::Dtype::F64).with_chunk_rows(50)).unwrap();
        t.add_geometry_column("geometry", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
        let pts: Vec<Option<Vec<u8>>> = (0..n).map(|i| Some(wkb::encode(&Geometry::Point(Point::new(Dimensions::Xy, Coord::xy(i as f64, 0.5))), ByteOrder::LittleEndian))).collect();
        let ids: Vec<u64> = (0..n).map(|i| 1000 + i).collect();
        let temps: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
        t.append(&GeoBatch::new().with_array("id", Array::from_u64(&ids)).with_array("temp", Array::from_f64(&temps)).with_geometry("geometry", GeometryValues::Wkb(pts)))
            .unwrap();
    }
    {
        // A column of variable-length strings by another producer.
        let h = hdf5::File::open_rw(&p).unwrap();
        let names: Vec<hdf5::types::VarLenUnicode> = (0..n).map(|i| format!("station {i}").parse().unwrap()).collect();
        h.group("/bench").unwrap().new_dataset_builder().with_data(&names).create("name").unwrap();
    }
    let f = File::open(&p).unwrap();
    let t = MarquetTable::open(&f, "/bench").unwrap();
    let w = BBox::xy(10.0, 0.0, 110.5, 1.0);
    for mut r in [SpatialReader::open_byte_range(&p, "/bench", None).unwrap(), SpatialReader::open(&f, "/bench", None).unwrap()] {
        let rows = r.query(&Query::bbox(w)).unwrap().rows;
        assert_eq!(rows, (10..=110).collect::<Vec<u64>>());
        let ids = r.take("id", &rows).unwrap();
        assert_eq!(ids.bytes, Array::from_u64(&(1010..=1110).collect::<Vec<u64>>()).bytes);
        for c in ["id", "temp", "name"] {
            let want = t.column(c).unwrap().take(&rows).unwrap();
            let got = r.take(c, &rows).unwrap();
            assert_eq!((&got.dtype, &got.bytes), (&want.dtype, &want.bytes), "{c} through {}", r.read_path());
            // Again, from the reader's cache.
            assert_eq!(r.take(c, &rows).unwrap().bytes, want.bytes);
        }
        assert_eq!(r.take("name", &[0, 299]).unwrap().get_str(1).unwrap(), "station 299");
        assert!(r.take("id", &[]).unwrap().bytes.is_empty());
        // Rows out of order, past NROWS, a column that is not there: typed refusals.
        assert!(matches!(r.take("id", &[5, 4]), Err(marquet::Error::InvalidArgument(_))));
        assert!(matches!(r.take("id", &[n]), Err(marquet::Error::InvalidArgument(m)) if m.contains("NROWS = 300")));
        assert!(matches!(r.take("nope", &[1]), Err(marquet::Error::InvalidArgument(_))));
        assert_eq!(r.read_path(), if r.table().is_some() { "libhdf5" } else { "byte-range" });
    }
}

#[test]
fn a_table_without_geometry_values_reads_by_byte_range() {
    // A geometry column holding only nulls has an empty one-dimensional GEOMETRY_TYPES; the byte-range parser gives it the shape of a null attribute (`[0]`), and
    // the reader refused the table ("GEOMETRY_TYPES must be one-dimensional"; found by the
    // crash test of tests/crash_marquet.rs). Through both paths it now reads as libhdf5 reads it.
    let p = tmp("emptied.h5");
    {
        let f = File::create(&p).unwrap();
        let mut t = MarquetTable::create(&f, "/bench").unwrap();
        t.add_column("id", &marquet::h5col::ColumnSpec::new(marquet::h5col::Dtype::U64)).unwrap();
        t.add_geometry_column("geometry", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_covering("bbox")).unwrap();
        t.append(&batch(vec![None, None], 0)).unwrap();
        assert_eq!(t.geometry_column("geometry").unwrap().types, None);
    }
    let w = BBox::xy(-180.0, -90.0, 180.0, 90.0);
    let mut br = SpatialReader::open_byte_range(&p, "/bench", None).unwrap();
    let f = File::open(&p).unwrap();
    let lib = SpatialReader::open(&f, "/bench", None).unwrap().query(&Query::bbox(w)).unwrap();
    assert_eq!(lib.rows, Vec::<u64>::new());
    assert_eq!(br.query(&Query::bbox(w)).unwrap(), lib);
    assert_eq!(br.nrows(), 2);
}

//! What a user's first command writes (issue #16): every writer lays a new table out with
//! the one policy `WriteLayout::default()` — rows in Hilbert order (HEP002 §10.6), a
//! BLOCK_BBOX index (§10.3), a PACKED_RTREE and a covering column for non-point columns
//! (§10.4, §10.5) — and `marquet bench` measures exactly that file. These tests fail when a
//! default writer stops ordering or indexing.

use marquet_dev::bench;
use marquet_dev::info;

mod common;

use common::synth;

use std::path::{Path, PathBuf};

use crate::bench::write_marquet;
use marquet::convert::{convert, export_geoparquet, import_geoparquet, ConvertOptions, ExportOptions, ImportOptions};
use marquet::h5col::File;
use marquet::spatial::hilbert_order;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, SpatialIndexKind, StorageForm, WriteLayout, WriteOptions};
use marquet::query::{Query, TableQuery};
use marquet::validate::{validate_file, Options, Status};
use marquet::{BBox, Dimensions};

const CITIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet";
const COUNTRIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet";

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// The boxes of every row of `col`, as the writer's sort saw them.
fn boxes(t: &MarquetTable, col: &str) -> Vec<BBox> {
    let n = t.nrows().unwrap();
    t.row_infos(col, 0, n)
        .unwrap()
        .into_iter()
        .map(|r| match r {
            marquet::marquet::RowInfo::Geometry(g) if !g.is_empty => g.bbox,
            _ => BBox::EMPTY,
        })
        .collect()
}

fn kinds(t: &MarquetTable, col: &str) -> Vec<(SpatialIndexKind, bool)> {
    let mut k: Vec<(SpatialIndexKind, bool)> = t.spatial_indexes(col).unwrap().iter().map(|i| (i.kind, i.valid)).collect();
    k.sort_by_key(|(k, _)| *k as u8);
    k
}

/// The checks every default-layout table passes.
fn check_default_layout(h5: &Path, table: &str, points: bool) {
    let f = File::open(h5).unwrap();
    let t = MarquetTable::open(&f, table).unwrap();
    let g = t.primary_geometry_column().unwrap();
    let info = t.geometry_column(&g).unwrap();
    assert_eq!(matches!(info.form, StorageForm::Point { .. }), points, "{table}: form {:?}", info.form);
    // Indexes: a block index always, an R-tree for non-points; all valid.
    let want = if points {
        vec![(SpatialIndexKind::BlockBBox, true)]
    } else {
        vec![(SpatialIndexKind::BlockBBox, true), (SpatialIndexKind::PackedRTree, true)]
    };
    assert_eq!(kinds(&t, &g), want, "{table}");
    // Covering column: never for points, always otherwise.
    assert_eq!(info.covering.is_some(), !points, "{table}: covering {:?}", info.covering);
    // Rows in Hilbert order: sorting the stored boxes again changes nothing.
    let b = boxes(&t, &g);
    let order = hilbert_order(&b);
    assert_eq!(order, (0..b.len()).collect::<Vec<_>>(), "{table}: rows are not in Hilbert order");
    // Indexed answers equal full scans.
    for w in [BBox::xy(-10.0, 35.0, 20.0, 60.0), BBox::xy(129.0, 30.0, 146.0, 46.0), BBox::xy(-180.0, -90.0, 180.0, 90.0), BBox::xy(-100.0, 10.0, -60.0, 30.0)]
    {
        let full = t.query(&g, &Query::bbox(w).with_indexes(false)).unwrap();
        let fast = t.query(&g, &Query::bbox(w)).unwrap();
        assert_eq!(fast.rows, full.rows, "{table} {w:?}");
    }
    drop(t);
    drop(f);
    let r = validate_file(h5, &Options::default()).unwrap();
    assert_eq!(r.status, Status::Conformant, "{}", r.to_json());
}

#[test]
fn convert_orders_indexes_and_validates_by_default() {
    let _s = common::serial();
    let dir = common::TempDir::new("default-layout-convert");
    for (src, points) in [(CITIES, true), (COUNTRIES, false)] {
        let h5 = dir.join(&format!("{points}.h5"));
        let r = convert(&data(src), &h5, &ConvertOptions::default()).unwrap();
        check_default_layout(&h5, &r.table, points);
        // Opting out: --keep-order --no-index --no-covering keep the source as it was.
        let plain = dir.join(&format!("{points}-plain.h5"));
        let r = convert(&data(src), &plain, &ConvertOptions { layout: WriteLayout::plain(), ..Default::default() }).unwrap();
        let f = File::open(&plain).unwrap();
        let t = MarquetTable::open(&f, &r.table).unwrap();
        assert!(t.spatial_indexes("geometry").unwrap().is_empty());
        assert!(t.geometry_column("geometry").unwrap().covering.is_none());
    }
}

#[test]
fn geojson_import_orders_and_indexes_by_default() {
    let _s = common::serial();
    let dir = common::TempDir::new("default-layout-geojson");
    let h5 = dir.join("countries.h5");
    convert(&data(COUNTRIES), &h5, &ConvertOptions { layout: WriteLayout::plain(), ..Default::default() }).unwrap();
    let gj = dir.join("countries.geojson");
    convert(&h5, &gj, &ConvertOptions::default()).unwrap();
    let back = dir.join("back.h5");
    let r = convert(&gj, &back, &ConvertOptions::default()).unwrap();
    check_default_layout(&back, &r.table, false);
}

#[test]
fn write_table_declares_the_default_indexes() {
    let _s = common::serial();
    let dir = common::TempDir::new("default-layout-write");
    let p = dir.join("w.h5");
    let f = File::create(&p).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
    let polys = crate::synth::polygons(3000, 5);
    t.write(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(polys.into_iter().map(Some).collect())), WriteOptions::default())
        .unwrap();
    assert_eq!(kinds(&t, "g"), vec![(SpatialIndexKind::BlockBBox, true), (SpatialIndexKind::PackedRTree, true)]);
    let b = boxes(&t, "g");
    assert_eq!(hilbert_order(&b), (0..b.len()).collect::<Vec<_>>());
    // Without indexes when asked, and never added to a table that already has rows.
    let mut t2 = MarquetTable::create(&f, "/u").unwrap();
    t2.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
    let one = crate::synth::polygons(10, 6);
    t2.write(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(one.iter().cloned().map(Some).collect())), WriteOptions::default().with_layout(None))
        .unwrap();
    t2.write(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(one.into_iter().map(Some).collect())), WriteOptions::default()).unwrap();
    assert!(t2.spatial_indexes("g").unwrap().is_empty());
}

/// Every geometry of `col` as WKB, in row order.
fn wkb_rows(h5: &Path, table: &str, col: &str) -> Vec<Option<Vec<u8>>> {
    let f = File::open(h5).unwrap();
    let t = MarquetTable::open(&f, table).unwrap();
    let n = t.nrows().unwrap();
    let w = t.read_wkb(col, 0, n).unwrap();
    (0..w.len()).map(|i| w.get(i).map(|b| b.to_vec())).collect()
}

/// `describe_table` without what legitimately differs between two files.
fn layout_of(h5: &Path, table: &str) -> serde_json::Value {
    let f = File::open(h5).unwrap();
    crate::info::describe_table(&f, table).unwrap()
}

#[test]
fn bench_measures_what_convert_writes() {
    let _s = common::serial();
    let dir = common::TempDir::new("default-layout-bench");
    let (x, y) = crate::synth::clustered_points(20_000, 9);
    let points = GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None };
    let polys = GeometryValues::Wkb(crate::synth::polygons(3_000, 9).into_iter().map(Some).collect());
    for (name, values) in [("points", points), ("polygons", polys)] {
        // The rows in input order, exported as GeoParquet: what a user would convert.
        let plain = dir.join(&format!("{name}-plain.h5"));
        write_marquet(&plain, &values, &WriteLayout::plain()).unwrap();
        let pq = dir.join(&format!("{name}.parquet"));
        let fp = File::open(&plain).unwrap();
        export_geoparquet(&fp, bench::TABLE, &pq, &ExportOptions::default()).unwrap();
        drop(fp);
        let converted = dir.join(&format!("{name}-convert.h5"));
        let fc = File::create(&converted).unwrap();
        import_geoparquet(&pq, &fc, &ImportOptions::new(bench::TABLE)).unwrap();
        drop(fc);
        let benched = dir.join(&format!("{name}-bench.h5"));
        write_marquet(&benched, &values, &WriteLayout::default()).unwrap();
        assert_eq!(wkb_rows(&benched, bench::TABLE, bench::GEOMETRY), wkb_rows(&converted, bench::TABLE, bench::GEOMETRY), "{name}: row order");
        let (a, b) = (layout_of(&benched, bench::TABLE), layout_of(&converted, bench::TABLE));
        assert_eq!(a["geometry_columns"], b["geometry_columns"], "{name}");
        assert_eq!(a["indexes"], b["indexes"], "{name}");
        check_default_layout(&benched, bench::TABLE, name == "points");
    }
}

#[test]
fn external_sort_matches_the_in_memory_sort() {
    let _s = common::serial();
    let dir = common::TempDir::new("default-layout-spill");
    let (x, y) = crate::synth::clustered_points(60_000, 11);
    let values = GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None };
    let plain = dir.join("plain.h5");
    write_marquet(&plain, &values, &WriteLayout::plain()).unwrap();
    let pq = dir.join("p.parquet");
    let fp = File::open(&plain).unwrap();
    export_geoparquet(&fp, bench::TABLE, &pq, &ExportOptions::default()).unwrap();
    drop(fp);
    let mut outs = Vec::new();
    for (tag, budget) in [("memory", 1usize << 30), ("spill", 64 << 10)] {
        let out = dir.join(&format!("{tag}.h5"));
        let f = File::create(&out).unwrap();
        let mut layout = WriteLayout::default();
        layout.sort_memory = budget;
        // Small record batches: the spilling run routes many batches into many buckets.
        import_geoparquet(&pq, &f, &ImportOptions { layout, batch_rows: 4096, ..ImportOptions::new(bench::TABLE) }).unwrap();
        drop(f);
        outs.push(out);
    }
    assert_eq!(wkb_rows(&outs[0], bench::TABLE, bench::GEOMETRY), wkb_rows(&outs[1], bench::TABLE, bench::GEOMETRY));
    let ids = |p: &Path| {
        let f = File::open(p).unwrap();
        let t = f.table(bench::TABLE).unwrap();
        t.read(bench::ID, 0, t.nrows().unwrap()).unwrap().bytes
    };
    assert_eq!(ids(&outs[0]), ids(&outs[1]));
    check_default_layout(&outs[1], bench::TABLE, true);
    // The spill directory is gone.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().starts_with("marquet-sort-")).collect();
    assert!(left.is_empty(), "spill files left behind: {left:?}");
}

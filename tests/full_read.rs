//! Full reads (issue #33 item 6): `ArrowPlan::read_all` reads a whole table as record batches
//! in parallel (batches on rayon's threads, chunks decoded in parallel within each). Tables
//! of many small chunks, with nulls in every column, in row order (no Hilbert sort), are
//! read back in batches that cut chunks anywhere; every value is compared with the rows the
//! table was written from (the oracle: the source batches, not another read path), and the
//! batches with what the sequential `read_range` returns.
#![cfg(feature = "geoparquet")]

use std::sync::Arc;

mod common;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrayRef, BinaryArray, Float64Array, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use marquet::convert::{import_record_batches, ArrowPlan, Coords, ImportOptions, PointForm};
use marquet::h5col::File;
use marquet::marquet::{MarquetTable, StorageForm, WriteLayout};

/// Little-endian ISO WKB of a polygon with one ring of `k` vertices around (`cx`, `cy`),
/// counter-clockwise and closed.
fn polygon(cx: f64, cy: f64, r: f64, k: usize) -> Vec<u8> {
    let mut w = vec![1u8];
    w.extend(3u32.to_le_bytes());
    w.extend(1u32.to_le_bytes());
    w.extend((k as u32 + 1).to_le_bytes());
    for j in 0..=k {
        let a = std::f64::consts::TAU * (j % k) as f64 / k as f64;
        w.extend((cx + r * a.cos()).to_le_bytes());
        w.extend((cy + r * a.sin()).to_le_bytes());
    }
    w
}

fn point(x: f64, y: f64) -> Vec<u8> {
    let mut w = vec![1u8, 1, 0, 0, 0];
    w.extend(x.to_le_bytes());
    w.extend(y.to_le_bytes());
    w
}

/// A layout of many small chunks (64 rows, 1 KiB of WKB), compressed (the parallel direct
/// path), rows kept in input order.
fn small_chunks() -> WriteLayout {
    let mut l = WriteLayout::default().with_spatial_order(false);
    l.chunk_rows = 64;
    l.values_chunk_bytes = 1024;
    l
}

/// `n` rows: id, a float with nulls, a name with nulls, geometry (WKB) with nulls.
fn source(n: usize, points: bool) -> RecordBatch {
    let mut rng = common::Rng::new(if points { 61 } else { 62 });
    let id = Int64Array::from_iter_values(0..n as i64);
    let val = Float64Array::from_iter((0..n).map(|i| (i % 7 != 3).then_some(i as f64 * 0.5 - 100.0)));
    let name = StringArray::from_iter((0..n).map(|i| (i % 5 != 0).then(|| format!("row {i}"))));
    let geoms: Vec<Option<Vec<u8>>> = (0..n)
        .map(|i| {
            let (x, y) = (rng.f64() * 300.0 - 150.0, rng.f64() * 160.0 - 80.0);
            if i % 11 == 4 {
                None
            } else if points {
                Some(point(x, y))
            } else {
                Some(polygon(x, y, 0.01 + rng.f64(), 3 + rng.below(30) as usize))
            }
        })
        .collect();
    let geometry = BinaryArray::from_iter(geoms.iter().map(|g| g.as_deref()));
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("val", DataType::Float64, true),
        Field::new("name", DataType::Utf8, true),
        Field::new("geometry", DataType::Binary, true),
    ]);
    let cols: Vec<ArrayRef> = vec![Arc::new(id), Arc::new(val), Arc::new(name), Arc::new(geometry)];
    RecordBatch::try_new(Arc::new(schema), cols).unwrap()
}

fn write(dir: &common::TempDir, name: &str, b: &RecordBatch) -> std::path::PathBuf {
    let h5 = dir.join(name);
    let f = File::create(&h5).unwrap();
    let opts = ImportOptions { layout: small_chunks(), point_form: PointForm::Native, batch_rows: 500, ..ImportOptions::new("/t") };
    import_record_batches(&f, b.schema(), [Ok(b.clone())], &["geometry".to_string()], &opts).unwrap();
    h5
}

/// The batches of `read_all` concatenated, after checking each against `read_range`.
fn read_all(t: &MarquetTable, plan: &ArrowPlan, batch_rows: usize) -> RecordBatch {
    let batches = plan.read_all(t, batch_rows).unwrap();
    let n = t.nrows().unwrap() as usize;
    assert_eq!(batches.len(), n.div_ceil(batch_rows));
    let mut s = 0u64;
    for b in &batches {
        assert!(b.num_rows() <= batch_rows);
        let e = s + b.num_rows() as u64;
        assert_eq!(b, &plan.read_range(t, s, e).unwrap(), "rows {s}..{e}");
        s = e;
    }
    assert_eq!(s as usize, n);
    arrow_select::concat::concat_batches(&plan.schema(), &batches).unwrap()
}

fn check_attributes(got: &RecordBatch, src: &RecordBatch) {
    let ids = got.column_by_name("id").unwrap().as_primitive::<Int64Type>();
    assert_eq!(ids, src.column(0).as_primitive::<Int64Type>(), "id");
    let val = got.column_by_name("val").unwrap().as_primitive::<Float64Type>();
    assert_eq!(val, src.column(1).as_primitive::<Float64Type>(), "val, nulls included");
    assert_eq!(val.null_count(), (0..src.num_rows()).filter(|i| i % 7 == 3).count());
    let name = got.column_by_name("name").unwrap();
    assert_eq!(name.as_string::<i32>(), src.column(2).as_string::<i32>(), "name");
}

#[test]
fn polygons_of_many_chunks_read_whole_in_parallel_equal_their_source() {
    let dir = common::TempDir::new("full-read-polygons");
    let src = source(3001, false);
    let h5 = write(&dir, "g.h5", &src);
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    assert_eq!(t.geometry_column("geometry").unwrap().form, StorageForm::VarWkb);
    let values = f.table("/t").unwrap().list_column("geometry").unwrap().values_info().unwrap().clone();
    assert!(values.dims[0] / values.chunk.as_ref().unwrap()[0] > 100, "many VALUES chunks: {values:?}");
    let cols: Vec<String> = ["geometry", "id", "val", "name"].map(String::from).to_vec();
    let plan = ArrowPlan::new(&t, Some(&cols), true).unwrap();
    for batch_rows in [257, 1000, 5000] {
        let got = read_all(&t, &plan, batch_rows);
        assert_eq!(got.num_rows(), src.num_rows());
        check_attributes(&got, &src);
        let g = got.column_by_name("geometry").unwrap().as_binary::<i32>();
        assert_eq!(g, src.column(3).as_binary::<i32>(), "WKB bytes and nulls, batches of {batch_rows}");
        assert_eq!(g.null_count(), (0..src.num_rows()).filter(|i| i % 11 == 4).count());
    }
    // GeoArrow native: geoarrow.polygon, lists of rings whose vertices are x/y structs
    // (separated) or fixed-size lists `xy` (interleaved); either way the vertices' bytes
    // are the WKB's coordinate bytes as they are.
    let src_g = src.column(3).as_binary::<i32>();
    let separated = ArrowPlan::with_native_points(&t, Some(&cols), true, true).unwrap();
    let interleaved = ArrowPlan::with_native(&t, Some(&cols), true, Some(Coords::Interleaved)).unwrap();
    for (plan, inter) in [(separated, false), (interleaved, true)] {
        assert_eq!(plan.schema().field(0).metadata()["ARROW:extension:name"], "geoarrow.polygon");
        for batch_rows in [257, 5000] {
            let got = read_all(&t, &plan, batch_rows);
            check_attributes(&got, &src);
            let polys = got.column(0).as_list::<i32>();
            assert_eq!(polys.null_count(), src_g.null_count());
            for i in 0..src.num_rows() {
                assert_eq!(polys.is_null(i), src_g.is_null(i), "row {i}");
                if src_g.is_null(i) {
                    continue;
                }
                // The source's one ring: its point count at byte 9, then x, y pairs.
                let w = src_g.value(i);
                let n = u32::from_le_bytes(w[9..13].try_into().unwrap()) as usize;
                let rings = polys.value(i);
                let rings = rings.as_list::<i32>();
                assert_eq!(rings.len(), 1, "row {i}");
                let ring = rings.value(0);
                assert_eq!(ring.len(), n, "row {i}");
                let bytes: Vec<u8> = if inter {
                    let xy = ring.as_fixed_size_list();
                    assert_eq!(xy.value_length(), 2);
                    let v = xy.values().as_primitive::<Float64Type>();
                    v.values()[xy.value_offset_at(0)..][..2 * n].iter().flat_map(|c| c.to_le_bytes()).collect()
                } else {
                    let xy = ring.as_struct();
                    let (x, y) = (xy.column(0).as_primitive::<Float64Type>(), xy.column(1).as_primitive::<Float64Type>());
                    (0..n).flat_map(|j| [x.value(j).to_le_bytes(), y.value(j).to_le_bytes()].concat()).collect()
                };
                assert_eq!(bytes, w[13..13 + 16 * n], "row {i} (interleaved: {inter})");
            }
        }
    }
}

#[test]
fn points_read_whole_in_parallel_as_wkb_and_native_equal_their_source() {
    let dir = common::TempDir::new("full-read-points");
    let src = source(5003, true);
    let h5 = write(&dir, "p.h5", &src);
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    assert!(matches!(t.geometry_column("geometry").unwrap().form, StorageForm::Point { .. }));
    let cols: Vec<String> = ["geometry", "id", "val", "name"].map(String::from).to_vec();
    let wkb = ArrowPlan::new(&t, Some(&cols), true).unwrap();
    let native = ArrowPlan::with_native_points(&t, Some(&cols), true, true).unwrap();
    let src_g = src.column(3).as_binary::<i32>();
    for batch_rows in [300, 4096] {
        let got = read_all(&t, &wkb, batch_rows);
        check_attributes(&got, &src);
        assert_eq!(got.column_by_name("geometry").unwrap().as_binary::<i32>(), src_g, "point WKB, batches of {batch_rows}");
        let got = read_all(&t, &native, batch_rows);
        check_attributes(&got, &src);
        let p = got.column_by_name("geometry").unwrap().as_struct();
        let (x, y) = (p.column(0).as_primitive::<Float64Type>(), p.column(1).as_primitive::<Float64Type>());
        for i in 0..src.num_rows() {
            assert_eq!(p.is_null(i), src_g.is_null(i), "row {i}");
            if !src_g.is_null(i) {
                let w = src_g.value(i);
                assert_eq!(x.value(i).to_le_bytes(), w[5..13], "x of row {i}");
                assert_eq!(y.value(i).to_le_bytes(), w[13..21], "y of row {i}");
            }
        }
        // Interleaved: a fixed-size list `xy` a row, its values the WKB's 16 bytes.
        let inter = ArrowPlan::with_native(&t, Some(&cols), true, Some(Coords::Interleaved)).unwrap();
        let got = read_all(&t, &inter, batch_rows);
        check_attributes(&got, &src);
        let p = got.column_by_name("geometry").unwrap().as_fixed_size_list();
        assert_eq!(p.value_length(), 2);
        let v = p.values().as_primitive::<Float64Type>();
        for i in 0..src.num_rows() {
            assert_eq!(p.is_null(i), src_g.is_null(i), "row {i}");
            if !src_g.is_null(i) {
                let w = src_g.value(i);
                let xy: Vec<u8> = v.values()[2 * i..2 * i + 2].iter().flat_map(|c| c.to_le_bytes()).collect();
                assert_eq!(xy, w[5..21], "row {i}");
            }
        }
    }
}

/// `PlanCache` (the plans a C table handle's streams and a Python `Table`'s reads reuse):
/// for a file opened read-only the same selection gets the same plan, whose reads (by its
/// columns opened once) equal a fresh plan's and the source; another selection or
/// encoding gets its own; a file open for writing gets a new plan every time (its columns
/// may change under a plan), which sees rows appended since the last one.
#[test]
fn cached_plans_read_what_fresh_plans_read_and_only_for_read_only_files() {
    use marquet::convert::PlanCache;
    let dir = common::TempDir::new("plan-cache");
    let src = source(700, true);
    let h5 = write(&dir, "p.h5", &src);
    let cols: Vec<String> = ["geometry", "id", "val", "name"].map(String::from).to_vec();
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    let cache = PlanCache::new();
    let a = cache.plan(&f, &t, Some(&cols), true, None).unwrap();
    let b = cache.plan(&f, &t, Some(&cols), true, None).unwrap();
    assert!(Arc::ptr_eq(&a, &b), "the same selection, the same plan");
    assert!(!Arc::ptr_eq(&a, &cache.plan(&f, &t, Some(&cols[1..]), true, None).unwrap()));
    let native = cache.plan(&f, &t, Some(&cols), true, Some(Coords::Separated)).unwrap();
    assert!(!Arc::ptr_eq(&a, &native));
    assert_eq!(native.schema().field(0).data_type(), &DataType::Struct(vec![Field::new("x", DataType::Float64, false), Field::new("y", DataType::Float64, false)].into()));
    assert!(Arc::ptr_eq(&a, &cache.plan(&f, &t, Some(&cols), true, None).unwrap()), "still held after other selections");
    let fresh = ArrowPlan::new(&t, Some(&cols), true).unwrap();
    for _ in 0..2 {
        let got = read_all(&t, &b, 128);
        assert_eq!(got, read_all(&t, &fresh, 128));
        check_attributes(&got, &src);
        assert_eq!(got.column_by_name("geometry").unwrap().as_binary::<i32>(), src.column(3).as_binary::<i32>());
    }
    // Rows picked by number through the cached plan equal the same rows of a full read.
    let rows: Vec<u64> = (0..700).step_by(7).collect();
    let picked = arrow_select::concat::concat_batches(&b.schema(), &b.take(&t, &rows, 50).unwrap()).unwrap();
    let idx = arrow_array::UInt64Array::from(rows.clone());
    assert_eq!(picked, arrow_select::take::take_record_batch(&read_all(&t, &fresh, 700), &idx).unwrap());
    let want = read_all(&t, &fresh, 700);
    // Plans hold their columns open, so the file stays open (read-only) while one lives.
    drop((a, b, native, fresh, cache, t, f));

    let f = File::open_rw(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    let cache = PlanCache::new();
    let c = cache.plan(&f, &t, Some(&cols), true, None).unwrap();
    let d = cache.plan(&f, &t, Some(&cols), true, None).unwrap();
    assert!(!Arc::ptr_eq(&c, &d), "no plan is kept for a file open for writing");
    assert_eq!(read_all(&t, &c, 700), want);
}

/// `take_given` in the GeoArrow native encodings (what Python's `read_geodataframe(bbox=...)`
/// asks for): given the WKB of *other* rows, the geometry column is those rows'
/// geometries, built from the WKB as a read of them would be, while every other column is
/// the requested rows' own — so the stored geometry was not read. Polygons
/// (`geoarrow.polygon`) and points (`geoarrow.point`), nulls included.
#[test]
fn native_encodings_are_built_from_the_geometries_given() {
    let dir = common::TempDir::new("native-given");
    for (name, points) in [("g.h5", false), ("p.h5", true)] {
        let src = source(900, points);
        let h5 = write(&dir, name, &src);
        let f = File::open(&h5).unwrap();
        let t = MarquetTable::open(&f, "/t").unwrap();
        let cols: Vec<String> = ["geometry", "id", "name"].map(String::from).to_vec();
        let plan = ArrowPlan::with_native_points(&t, Some(&cols), true, true).unwrap();
        let ext = plan.schema().field(0).metadata().get("ARROW:extension:name").cloned();
        assert_eq!(ext.as_deref(), Some(if points { "geoarrow.point" } else { "geoarrow.polygon" }));
        // Rows with nulls among both sets (every 11th geometry is null).
        let rows: Vec<u64> = (0..880).step_by(13).collect();
        let other: Vec<u64> = rows.iter().map(|r| r + 4).collect();
        let given = t.take_wkb("geometry", &other).unwrap();
        assert!(given.valid.iter().any(|v| !v) && given.valid.iter().any(|v| *v));
        let concat = |b: Vec<RecordBatch>| arrow_select::concat::concat_batches(&plan.schema(), &b).unwrap();
        let got = concat(plan.take_given(&t, &rows, 16, Some(("geometry", &given, 0))).unwrap());
        let own = concat(plan.take(&t, &rows, 16).unwrap());
        let theirs = concat(plan.take(&t, &other, 16).unwrap());
        assert_eq!(got.num_rows(), rows.len());
        assert_eq!(got.column(0), theirs.column(0), "{name}: the geometries given");
        assert_ne!(got.column(0), own.column(0));
        assert_eq!(got.column(1), own.column(1), "{name}: the rows' own ids");
        assert_eq!(got.column(2), own.column(2));
    }
}

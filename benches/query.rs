//! Spatial indexes and queries (HEP002 §10), on the shared synthetic data of
//! `crate::synth` (seeded, clustered):
//!
//! * index build on 1,000,000 boxes: the packed Hilbert R-tree alone (in memory) and both
//!   indexes built from a 1,000,000-point table on disk;
//! * 200 small windows (0.5° × 0.5°) on 1,000,000 points and on 200,000 polygons of 16–32
//!   vertices, each query opening the file afresh as a separate caller would.
//!
//! Before the criterion groups it prints, per dataset, the median and 90th-percentile
//! latency of one query and the median rows read (geometry rows decoded and tested, after
//! the block index, the R-tree and the covering column) and bytes read, with indexes and
//! without (a full scan, on the first 20 windows).
//!
//! ```text
//! cargo bench --bench query               # full criterion run
//! cargo bench --bench query -- --quick    # shorter
//! ```

use marquet_dev::synth;

use criterion::{criterion_group, criterion_main, Criterion};
use marquet::h5col::File;
use marquet::spatial::packed_rtree;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteOptions};
use marquet::query::{Query, QueryStats, TableQuery};
use marquet::{BBox, Dimensions};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const N_POINTS: usize = 1_000_000;
const N_POLYGONS: usize = 200_000;
const WINDOWS: usize = 200;
const SEED: u64 = 42;

fn write_points(path: &Path) {
    let f = File::create(path.to_str().unwrap()).unwrap();
    let mut t = MarquetTable::create(&f, "/points").unwrap();
    t.add_geometry_column("geom", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }))
        .unwrap();
    let (x, y) = synth::clustered_points(N_POINTS, SEED);
    let pts = GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None };
    t.write(&GeoBatch::new().with_geometry("geom", pts), WriteOptions::default()).unwrap();
    t.build_block_bbox("geom", None).unwrap();
    t.build_rtree("geom", None).unwrap();
}

fn write_polygons(path: &Path) {
    let f = File::create(path.to_str().unwrap()).unwrap();
    let mut t = MarquetTable::create(&f, "/polygons").unwrap();
    t.add_geometry_column("geom", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_covering("geom_bbox")).unwrap();
    let polys = synth::polygons(N_POLYGONS, SEED).into_iter().map(Some).collect();
    t.write(&GeoBatch::new().with_geometry("geom", GeometryValues::Wkb(polys)), WriteOptions::default()).unwrap();
    t.build_block_bbox("geom", None).unwrap();
    t.build_rtree("geom", None).unwrap();
}

/// One query as a separate caller makes it: open the file, open the table, query.
fn query_once(path: &Path, table: &str, w: &BBox, indexes: bool) -> QueryStats {
    let f = File::open(path.to_str().unwrap()).unwrap();
    let t = MarquetTable::open(&f, table).unwrap();
    let r = t.query("geom", &Query::bbox(*w).with_indexes(indexes)).unwrap();
    assert_eq!(r.rows.len() as u64, r.stats.rows_matched);
    r.stats
}

fn median<T: Copy + PartialOrd>(v: &mut [T]) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn report(name: &str, path: &Path, table: &str, windows: &[BBox]) {
    let run = |ws: &[BBox], indexes: bool| {
        let (mut lat, mut read, mut bytes, mut matched) = (vec![], vec![], vec![], vec![]);
        for w in ws {
            let t0 = Instant::now();
            let s = query_once(path, table, w, indexes);
            lat.push(t0.elapsed());
            read.push(s.exact_tested);
            bytes.push(s.bytes_read);
            matched.push(s.rows_matched);
        }
        let p90 = {
            let mut l = lat.clone();
            l.sort();
            l[(l.len() * 9 / 10).min(l.len() - 1)]
        };
        (median(&mut lat), p90, median(&mut read), median(&mut bytes), median(&mut matched.clone()), matched)
    };
    let (lat, p90, read, bytes, hits, with_idx) = run(windows, true);
    let (slat, _, sread, sbytes, _, scan) = run(&windows[..20], false);
    assert_eq!(with_idx[..20], scan[..], "{name}: indexed and full-scan answers differ");
    println!(
        "{name}: {} windows, median {:.3} ms (p90 {:.3} ms), median rows matched {hits}, \
         median rows read {read}, median bytes read {bytes}; full scan (20 windows): median {:.1} ms, \
         rows read {sread}, bytes read {sbytes}",
        windows.len(),
        ms(lat),
        ms(p90),
        ms(slat),
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("marquet-bench-query-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn bench(c: &mut Criterion) {
    let dir = scratch();
    let (pts, polys) = (dir.join("points.h5"), dir.join("polygons.h5"));
    let t0 = Instant::now();
    write_points(&pts);
    println!("wrote {N_POINTS} points with both indexes in {:.2} s", t0.elapsed().as_secs_f64());
    let t0 = Instant::now();
    write_polygons(&polys);
    println!("wrote {N_POLYGONS} polygons with both indexes in {:.2} s", t0.elapsed().as_secs_f64());
    let windows = synth::windows(WINDOWS, SEED, 0.5);
    report("points 1M", &pts, "/points", &windows);
    report("polygons 200k", &polys, "/polygons", &windows);

    // Index build on 1,000,000 boxes.
    let (x, y) = synth::clustered_points(N_POINTS, SEED);
    let items: Vec<(BBox, u64)> =
        x.iter().zip(&y).enumerate().map(|(i, (&a, &b))| (BBox::xy(a - 0.01, b - 0.01, a + 0.01, b + 0.01), i as u64)).collect();
    let mut g = c.benchmark_group("index_build");
    g.sample_size(10);
    g.bench_function("packed_rtree_1m_boxes_in_memory", |b| b.iter(|| packed_rtree::build(&items, 16).unwrap().len()));
    let f = File::open_rw(pts.to_str().unwrap()).unwrap();
    let t = MarquetTable::open(&f, "/points").unwrap();
    g.bench_function("both_indexes_1m_point_table", |b| {
        b.iter(|| {
            t.build_block_bbox("geom", None).unwrap();
            t.build_rtree("geom", None).unwrap()
        })
    });
    g.finish();
    drop(t);
    drop(f);

    let mut g = c.benchmark_group("query_200_windows");
    g.sample_size(10);
    g.bench_function("points_1m", |b| b.iter(|| windows.iter().map(|w| query_once(&pts, "/points", w, true).rows_matched).sum::<u64>()));
    g.bench_function("polygons_200k", |b| {
        b.iter(|| windows.iter().map(|w| query_once(&polys, "/polygons", w, true).rows_matched).sum::<u64>())
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The benchmark group of this file, in a module of its own so that the `pub fn` that
/// `criterion_group!` generates is not part of the bench target's public items.
mod group {
    use super::*;
    criterion_group!(benches, bench);
}
criterion_main!(group::benches);

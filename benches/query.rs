//! Spatial query with indexes vs without (HEP002 §10): 200,000 random points (seeded),
//! written in Hilbert order, with a block bounding-box index and a packed R-tree; 200 small
//! windows per iteration.
//!
//! ```text
//! cargo bench --bench query -- --quick
//! ```

use criterion::{criterion_group, criterion_main, Criterion};
use marquet::h5col::File;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteOptions};
use marquet::query::Query;
use marquet::{BBox, Dimensions};

const N: usize = 200_000;
const WINDOWS: usize = 200;

struct SplitMix(u64);
impl SplitMix {
    fn f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn setup(path: &str) -> (File, MarquetTable) {
    let f = File::create(path).unwrap();
    let mut t = MarquetTable::create(&f, "/pts").unwrap();
    t.add_geometry_column(
        "g",
        &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }).with_chunk_rows(4096),
    )
    .unwrap();
    let mut r = SplitMix(42);
    let x: Vec<f64> = (0..N).map(|_| r.f64() * 360.0 - 180.0).collect();
    let y: Vec<f64> = (0..N).map(|_| r.f64() * 180.0 - 90.0).collect();
    let pts = GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None };
    t.write_table(&GeoBatch::new().with_geometry("g", pts), &WriteOptions::default()).unwrap();
    t.build_block_bbox("g", Some(1024)).unwrap();
    t.build_rtree("g", None).unwrap();
    (f, t)
}

fn windows() -> Vec<BBox> {
    let mut r = SplitMix(7);
    (0..WINDOWS)
        .map(|_| {
            let (cx, cy) = (r.f64() * 350.0 - 175.0, r.f64() * 170.0 - 85.0);
            BBox::xy(cx - 1.0, cy - 1.0, cx + 1.0, cy + 1.0)
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("marquet-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (_f, t) = setup(&dir.join("points.h5").display().to_string());
    let ws = windows();
    // One pass for the record: rows matched and bytes read with and without indexes.
    let (mut m1, mut b1, mut b2) = (0, 0, 0);
    for w in &ws {
        let a = t.query("g", &Query::bbox(*w)).unwrap();
        let s = t.query("g", &Query::bbox(*w).with_indexes(false)).unwrap();
        assert_eq!(a.rows, s.rows);
        m1 += a.stats.rows_matched;
        b1 += a.stats.bytes_read;
        b2 += s.stats.bytes_read;
    }
    eprintln!("{N} points, {WINDOWS} windows: {m1} rows matched; bytes read with indexes {b1}, without {b2}");
    let mut g = c.benchmark_group("query_200k_points_200_windows");
    g.sample_size(10);
    g.bench_function("with_indexes", |b| {
        b.iter(|| ws.iter().map(|w| t.query("g", &Query::bbox(*w)).unwrap().rows.len()).sum::<usize>())
    });
    g.bench_function("block_index_only", |b| {
        b.iter(|| ws.iter().map(|w| t.query("g", &Query::bbox(*w).with_rtree(false)).unwrap().rows.len()).sum::<usize>())
    });
    g.bench_function("rtree_only", |b| {
        b.iter(|| ws.iter().map(|w| t.query("g", &Query::bbox(*w).with_block_index(false)).unwrap().rows.len()).sum::<usize>())
    });
    g.bench_function("without_indexes", |b| {
        b.iter(|| ws.iter().map(|w| t.query("g", &Query::bbox(*w).with_indexes(false)).unwrap().rows.len()).sum::<usize>())
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);

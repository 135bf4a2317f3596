//! Write 1,000,000 2-D points into a point column and read them back (issue: Marquet
//! geometry columns). Run: `cargo bench --bench points -- --quick`.

use criterion::{criterion_group, criterion_main, Criterion};
use marquet::h5col::File;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::Dimensions;

const N: usize = 1_000_000;

fn coords() -> (Vec<f64>, Vec<f64>) {
    // Seeded clustered points (SplitMix64), no external RNG crate.
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) as f64 / u64::MAX as f64
    };
    let mut x = Vec::with_capacity(N);
    let mut y = Vec::with_capacity(N);
    for _ in 0..N {
        x.push(-180.0 + 360.0 * next());
        y.push(-90.0 + 180.0 * next());
    }
    (x, y)
}

fn write(path: &str, x: &[f64], y: &[f64]) {
    let f = File::create(path).unwrap();
    let mut t = MarquetTable::create(&f, "/points").unwrap();
    t.add_geometry_column("geom", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }))
        .unwrap();
    t.append(&GeoBatch::new().with_geometry(
        "geom",
        GeometryValues::Points { dims: Dimensions::Xy, x: x.to_vec(), y: y.to_vec(), z: None, m: None, valid: None },
    ))
    .unwrap();
}

fn bench(c: &mut Criterion) {
    let (x, y) = coords();
    let dir = std::env::temp_dir().join(format!("marquet-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("points.h5").display().to_string();
    let mut g = c.benchmark_group("points_1m");
    g.sample_size(10);
    g.bench_function("write", |b| b.iter(|| write(&path, &x, &y)));
    write(&path, &x, &y);
    g.bench_function("read", |b| {
        b.iter(|| {
            let f = File::open(&path).unwrap();
            let t = MarquetTable::open(&f, "/points").unwrap();
            let p = t.read_points("geom", 0, N as u64).unwrap();
            assert_eq!(p.x.len(), N);
            p
        })
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, bench);
criterion_main!(benches);

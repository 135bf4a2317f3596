//! Write 1,000,000 2-D points into a point column and read them back, with each file's
//! size printed once. Data: `crate::synth::clustered_points(1_000_000, 42)`, the same
//! seeded points as every other figure. Run: `cargo bench --bench points -- --quick`.

use marquet_dev::synth;

use criterion::{criterion_group, criterion_main, Criterion};
use marquet::h5col::File;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::Dimensions;

const N: usize = 1_000_000;
const SEED: u64 = 42;

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
    let (x, y) = crate::synth::clustered_points(N, SEED);
    let dir = std::env::temp_dir().join(format!("marquet-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("points.h5").display().to_string();
    let mut g = c.benchmark_group("points_1m");
    g.sample_size(10);
    g.bench_function("write", |b| b.iter(|| write(&path, &x, &y)));
    write(&path, &x, &y);
    eprintln!("points_1m file size: {} bytes", std::fs::metadata(&path).unwrap().len());
    g.bench_function("read", |b| {
        b.iter(|| {
            let f = File::open(&path).unwrap();
            let t = MarquetTable::open(&f, "/points").unwrap();
            let p = t.read_points("geom", 0, N as u64).unwrap();
            assert_eq!(p.x.len(), N);
            p
        })
    });
    g.bench_function("read_wkb", |b| {
        b.iter(|| {
            let f = File::open(&path).unwrap();
            let t = MarquetTable::open(&f, "/points").unwrap();
            let w = t.read_wkb("geom", 0, N as u64).unwrap();
            assert_eq!(w.len(), N);
            w
        })
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

//! Write 200,000 polygons (16–32 vertices, `crate::synth::polygons(200_000, 42)`) into a
//! variable-length WKB column and read them all back as WKB, with the file size printed
//! once. Run: `cargo bench --bench polygons -- --quick`.

use marquet_dev::synth;

use criterion::{criterion_group, criterion_main, Criterion};
use marquet::h5col::File;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};

const N: usize = 200_000;
const SEED: u64 = 42;

fn write(path: &str, wkb: &[Vec<u8>]) {
    let f = File::create(path).unwrap();
    let mut t = MarquetTable::create(&f, "/polygons").unwrap();
    t.add_geometry_column("geom", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb)).unwrap();
    let vals: Vec<Option<Vec<u8>>> = wkb.iter().map(|w| Some(w.clone())).collect();
    t.append(&GeoBatch::new().with_geometry("geom", GeometryValues::Wkb(vals))).unwrap();
}

fn bench(c: &mut Criterion) {
    let wkb = crate::synth::polygons(N, SEED);
    let dir = std::env::temp_dir().join(format!("marquet-bench-poly-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("polygons.h5").display().to_string();
    let mut g = c.benchmark_group("polygons_200k");
    g.sample_size(10);
    g.bench_function("write", |b| b.iter(|| write(&path, &wkb)));
    write(&path, &wkb);
    eprintln!("polygons_200k file size: {} bytes", std::fs::metadata(&path).unwrap().len());
    g.bench_function("read_wkb", |b| {
        b.iter(|| {
            let f = File::open(&path).unwrap();
            let t = MarquetTable::open(&f, "/polygons").unwrap();
            let w = t.read_wkb("geom", 0, N as u64).unwrap();
            assert_eq!(w.len(), N);
            assert_eq!(w.get(N - 1).unwrap(), &wkb[N - 1][..]);
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

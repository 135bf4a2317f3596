//! Appending 1,000 rows to a 1,000,000-row indexed table (HEP002 §11, issue "Changing a
//! Marquet table safely"): the cost must follow the 1,000 new rows plus, when asked, the
//! R-tree rebuild — not a rewrite of the table. Measured against the same append to a
//! 10,000-row table (same work but for the R-tree) and against writing the whole
//! 1,000,000-row table afresh.
//!
//! Points from `crate::synth` (seeded, clustered), a point column with a BLOCK_BBOX and a
//! PACKED_RTREE, default chunking and filters.
//!
//! ```text
//! cargo bench --bench append -- --quick
//! ```

use marquet_dev::synth;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use marquet::h5col::{Array, ColumnSpec, File};
use marquet::marquet::spatial_index::RTreeOnAppend;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteOptions};
use marquet::{h5col::Dtype, Dimensions};
use std::path::{Path, PathBuf};

const BIG: usize = 1_000_000;
const SMALL: usize = 10_000;
const K: usize = 1_000;

fn batch(x: &[f64], y: &[f64], first_id: u64) -> GeoBatch {
    let ids: Vec<u64> = (first_id..first_id + x.len() as u64).collect();
    GeoBatch::new().with_array("id", Array::from_u64(&ids)).with_geometry(
        "geom",
        GeometryValues::Points { dims: Dimensions::Xy, x: x.to_vec(), y: y.to_vec(), z: None, m: None, valid: None },
    )
}

fn write_table(path: &Path, n: usize) {
    let f = File::create(path.to_str().unwrap()).unwrap();
    let mut t = MarquetTable::create(&f, "/points").unwrap();
    t.add_column("id", &ColumnSpec::new(Dtype::U64)).unwrap();
    t.add_geometry_column("geom", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }))
        .unwrap();
    let (x, y) = synth::clustered_points(n, 42);
    t.write(&batch(&x, &y, 0), WriteOptions::default()).unwrap();
    t.build_block_bbox("geom", None).unwrap();
    t.build_rtree("geom", None).unwrap();
}

fn scratch() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("marquet-bench-append-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn bench(c: &mut Criterion) {
    let dir = scratch();
    let (big, small) = (dir.join("big.h5"), dir.join("small.h5"));
    write_table(&big, BIG);
    write_table(&small, SMALL);
    let (x, y) = synth::clustered_points(K, 7);
    let mut g = c.benchmark_group("append_1000_rows");
    g.sample_size(10);
    for (name, path, rtree) in [
        ("to_1m_rtree_left_stale", &big, RTreeOnAppend::LeaveStale),
        ("to_1m_rtree_rebuilt", &big, RTreeOnAppend::Rebuild),
        ("to_10k_rtree_left_stale", &small, RTreeOnAppend::LeaveStale),
        ("to_10k_rtree_rebuilt", &small, RTreeOnAppend::Rebuild),
    ] {
        // Each sample appends to a fresh copy, so every append sees valid indexes.
        let copy = dir.join(format!("{name}.h5"));
        g.bench_function(name, |b| {
            b.iter_batched(
                || std::fs::copy(path, &copy).unwrap(),
                |_| {
                    let f = File::open_rw(copy.to_str().unwrap()).unwrap();
                    let t = MarquetTable::open(&f, "/points").unwrap();
                    let n = t.nrows().unwrap();
                    t.write(&batch(&x, &y, n), WriteOptions::in_order().with_rtree(rtree)).unwrap()
                },
                BatchSize::PerIteration,
            )
        });
    }
    g.bench_function("rewrite_whole_1m_table_for_comparison", |b| b.iter(|| write_table(&dir.join("rewrite.h5"), BIG)));
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

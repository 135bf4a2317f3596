//! HEP001 search indexes vs a full scan on 1,000,000 rows (issue #11): one query per
//! index kind, answered with the index and by scanning the column.
//!
//! Data (seeded, `crate::synth`): the 1,000,000 `clustered_points`, stored sorted by x
//! (as a spatially ordered table would be), with three columns:
//! `x` (float64; ranges from the x extents of `synth::windows`), `cell` (int64, the
//! 30°×30° grid cell: 72 distinct values; equality) and `id` (int64, unique, random order;
//! equality on an existing id). Each measured iteration runs 20 queries.
//!
//! | kind | query | column |
//! |---|---|---|
//! | CHUNK_MINMAX | x in [xmin, xmax] | x |
//! | SORTED_ROWS | x in [xmin, xmax] | x |
//! | BITMAP | cell == c | cell |
//! | CHUNK_BLOOM | id == v | id |
//!
//! Two layouts: `raw` (chunks of 65,536 rows, no filters) and `deflate` (the library
//! default: 65,536 rows, deflate level 4).
//!
//! ```text
//! cargo bench --bench h5col_filters -- --quick
//! ```

use marquet_dev::synth;

use std::ops::Bound;

use criterion::{criterion_group, criterion_main, Criterion};
use marquet::h5col::{Dtype, Filter};
use marquet::h5col::predicate::{filter_rows_with, ColumnFilter, IndexChoice, Scalar};
use marquet::h5col::search_index::{build_bitmap, build_chunk_bloom, build_sorted_rows};
use marquet::h5col::{search_index as index, Array, Batch, ColumnSpec, File, Table};
use marquet::spec::names;

const N: usize = 1_000_000;
const QUERIES: usize = 20;

struct Data {
    x: Vec<f64>,
    cell: Vec<i64>,
    id: Vec<i64>,
}

fn data() -> Data {
    let (xs, ys) = synth::clustered_points(N, 1);
    let mut order: Vec<usize> = (0..N).collect();
    order.sort_by(|&a, &b| xs[a].total_cmp(&xs[b]));
    let x: Vec<f64> = order.iter().map(|&i| xs[i]).collect();
    let cell = order.iter().map(|&i| (((xs[i] + 180.0) / 30.0).floor() as i64) * 10 + ((ys[i] + 90.0) / 30.0).floor() as i64).collect();
    // Unique ids in random order: a seeded permutation of 0..N, spread out.
    let mut r = synth::SplitMix64::new(99);
    let mut id: Vec<i64> = (0..N as i64).map(|i| i * 7919 + 13).collect();
    for i in (1..N).rev() {
        let j = r.int(0, i as u64) as usize;
        id.swap(i, j);
    }
    Data { x, cell, id }
}

fn setup(path: &str, filters: Vec<Filter>, d: &Data) -> (File, Table) {
    let f = File::create(path).unwrap();
    let t = f.create_table("/t").unwrap();
    for (name, dt) in [("x", Dtype::F64), ("cell", Dtype::I64), ("id", Dtype::I64)] {
        t.add_column(name, &ColumnSpec::new(dt).with_filters(filters.clone())).unwrap();
    }
    t.append(
        &Batch::new()
            .with_array("x", Array::from_f64(&d.x))
            .with_array("cell", Array::from_i64(&d.cell))
            .with_array("id", Array::from_i64(&d.id)),
    )
    .unwrap();
    index::build_chunk_minmax(&t, "x").unwrap();
    build_sorted_rows(&t, "x").unwrap();
    build_bitmap(&t, "cell", 1024).unwrap();
    build_chunk_bloom(&t, "id", None).unwrap();
    (f, t)
}

fn bench(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("marquet-h5col-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = data();
    let wins = synth::windows(QUERIES, 2, 2.0);
    let ranges: Vec<ColumnFilter> = wins
        .iter()
        .map(|w| ColumnFilter::Range { lo: Bound::Included(Scalar::Float(w.xmin)), hi: Bound::Included(Scalar::Float(w.xmax)) })
        .collect();
    let cells: Vec<ColumnFilter> = (0..QUERIES).map(|q| ColumnFilter::Eq(Scalar::Int(d.cell[q * (N / QUERIES)] as i128))).collect();
    let ids: Vec<ColumnFilter> = (0..QUERIES).map(|q| ColumnFilter::Eq(Scalar::Int(d.id[q * 49_999] as i128))).collect();
    let cases: [(&str, &str, &Vec<ColumnFilter>); 4] = [
        (names::KIND_CHUNK_MINMAX, "x", &ranges),
        (names::KIND_SORTED_ROWS, "x", &ranges),
        (names::KIND_BITMAP, "cell", &cells),
        (names::KIND_CHUNK_BLOOM, "id", &ids),
    ];
    for (layout, filters) in [("raw", vec![]), ("deflate", vec![Filter::Deflate(4)])] {
        let (_f, t) = setup(&dir.join(format!("{layout}.h5")).display().to_string(), filters, &d);
        let mut g = c.benchmark_group(format!("h5col_filters/{layout}"));
        for (kind, col, qs) in cases {
            // Same answers both ways, and the index really answers.
            let mut matched = 0;
            for q in qs.iter() {
                let a = filter_rows_with(&t, col, q, IndexChoice::Kind(kind)).unwrap();
                let b = filter_rows_with(&t, col, q, IndexChoice::Scan).unwrap();
                assert_eq!(a.rows, b.rows);
                assert_eq!(a.stats.index_used.as_deref(), Some(kind));
                matched += a.rows.len();
            }
            eprintln!("{layout} {kind}: {QUERIES} queries on '{col}' match {matched} rows in total");
            g.bench_function(format!("{kind}/index"), |b| {
                b.iter(|| qs.iter().map(|q| filter_rows_with(&t, col, q, IndexChoice::Kind(kind)).unwrap().rows.len()).sum::<usize>())
            });
            g.bench_function(format!("{kind}/scan"), |b| {
                b.iter(|| qs.iter().map(|q| filter_rows_with(&t, col, q, IndexChoice::Scan).unwrap().rows.len()).sum::<usize>())
            });
        }
        g.finish();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The benchmark group of this file, in a module of its own so that the `pub fn` that
/// `criterion_group!` generates is not part of the bench target's public items.
mod group {
    use super::*;
    criterion_group! {
        name = benches;
        config = Criterion::default().sample_size(10);
        targets = bench
    }
}
criterion_main!(group::benches);

//! How an append's cost grows with the table (issue #16, item 2): append a 10,000-row table
//! (and a 300,000-row one, 5 batches) to tables of 1,000,000 and 4,000,000 clustered points
//! written with the default layout, through `Table::append_from` (the path of
//! `marquet append`), with the R-tree policies the spec allows.
//!
//!   cargo run --release --example append_scaling [-- DIR] [--quick]
//!
//! Prints one line per case: table rows, layout, rows appended, policy, median seconds of 3
//! runs (each on a fresh copy of the table, so every run appends to the same state).

use marquet_dev::synth;
use marquet_dev::bench;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::bench::{median, write_marquet, GEOMETRY, TABLE};
use marquet::h5col::File;
use marquet::{GeometryValues, Table, RTreeChoice, RTreeOnAppend, WriteLayout};
use marquet::{Dimensions, Progress};

fn points(n: usize, seed: u64) -> GeometryValues {
    let (x, y) = crate::synth::clustered_points(n, seed);
    GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None }
}

fn append_once(base: &Path, work: &Path, src: &Path, policy: RTreeOnAppend) -> f64 {
    std::fs::copy(base, work).unwrap();
    let t0 = Instant::now();
    let f = File::open_rw(work).unwrap();
    let t = Table::open(&f, TABLE).unwrap();
    let sf = File::open(src).unwrap();
    let s = Table::open(&sf, TABLE).unwrap();
    t.append_from(&s, marquet::DEFAULT_APPEND_BATCH_ROWS, policy, &Progress::default()).unwrap();
    drop(t);
    drop(f);
    let dt = t0.elapsed().as_secs_f64();
    let f = File::open(work).unwrap();
    let t = Table::open(&f, TABLE).unwrap();
    for i in t.spatial_indexes(GEOMETRY).unwrap() {
        assert_eq!(i.valid, policy == RTreeOnAppend::Rebuild || i.kind != marquet::SpatialIndexKind::PackedRTree);
    }
    dt
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let quick = args.iter().any(|a| a == "--quick");
    let dir = args.iter().find(|a| !a.starts_with("--")).map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target/append-scaling"));
    std::fs::create_dir_all(&dir).unwrap();
    let sizes: &[usize] = if quick { &[100_000, 400_000] } else { &[1_000_000, 4_000_000] };
    let adds: &[usize] = if quick { &[10_000, 150_000] } else { &[10_000, 300_000] };
    let mut srcs = Vec::new();
    for &a in adds {
        let p = dir.join(format!("add-{a}.h5"));
        write_marquet(&p, &points(a, 99), &WriteLayout::default()).unwrap();
        srcs.push((a, p));
    }
    println!("table_rows\tlayout\tappended\tpolicy\tmedian_s");
    for &n in sizes {
        for (tag, layout) in [
            ("default (block index)", WriteLayout::default()),
            ("block index + R-tree", WriteLayout::default().with_rtree(RTreeChoice::Always)),
        ] {
            let base = dir.join(format!("base-{n}-{}.h5", tag.len()));
            write_marquet(&base, &points(n, 7), &layout).unwrap();
            let policies: &[RTreeOnAppend] =
                if layout.rtree == RTreeChoice::Always { &[RTreeOnAppend::Rebuild, RTreeOnAppend::LeaveStale] } else { &[RTreeOnAppend::Rebuild] };
            for (a, src) in &srcs {
                for &p in policies {
                    let work = dir.join("work.h5");
                    let runs: Vec<f64> = (0..3).map(|_| append_once(&base, &work, src, p)).collect();
                    println!("{n}\t{tag}\t{a}\t{p:?}\t{:.4}", median(&runs));
                }
            }
            let _ = std::fs::remove_file(&base);
        }
    }
}

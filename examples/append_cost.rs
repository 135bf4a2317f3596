//! What one small append costs as the table grows (issue #31): append 10,000 rows to
//! tables of 1,000,000 and 10,000,000 rows written with the default layout (what
//! `marquet convert` writes: polygons with a BLOCK_BBOX, a PACKED_RTREE and a covering
//! column; points with a BLOCK_BBOX), and count the bytes the append read.
//!
//! ```text
//! cargo run --release --example append_cost -- gen DIR polygons 1000000 10000000
//! cargo run --release --example append_cost -- run DIR/base-polygons-1000000.h5 DIR/add-polygons-10000.h5 [REPS]
//! ```
//!
//! `gen` writes `base-KIND-N.h5` for each N (in batches of 1,000,000 rows, each in Hilbert
//! order, the R-tree built once at the end) and `add-KIND-10000.h5`. `run` copies the base
//! once, appends the add table to the copy REPS times (default 5) through
//! [`Table::append_from`] with the R-tree rebuilt, and prints per run the seconds and
//! the bytes read by the process during the append (`rchar` of `/proc/self/io`: every
//! `read`/`pread` HDF5 makes, page cache or not), then the median seconds.

use marquet_dev::synth;
use marquet_dev::bench;

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::bench::{median, write_marquet, GEOMETRY, ID, TABLE};
use marquet::h5col::{Array, File};
use marquet::{GeoBatch, GeometryValues, Table, RTreeOnAppend, WriteLayout, WriteOptions};
use marquet::{Dimensions, Progress};

const BATCH: usize = 1_000_000;
const ADD: usize = 10_000;

fn values(kind: &str, n: usize, seed: u64) -> GeometryValues {
    match kind {
        "points" => {
            let (x, y) = crate::synth::clustered_points(n, seed);
            GeometryValues::Points { dims: Dimensions::Xy, x, y, z: None, m: None, valid: None }
        }
        _ => GeometryValues::Wkb(crate::synth::polygons(n, seed).into_iter().map(Some).collect()),
    }
}

fn rchar() -> u64 {
    let s = std::fs::read_to_string("/proc/self/io").unwrap_or_default();
    s.lines().find_map(|l| l.strip_prefix("rchar: ")).and_then(|v| v.trim().parse().ok()).unwrap_or(0)
}

/// CPU seconds (user + system) of the process so far, from `/proc/self/stat` (clock ticks).
fn cpu() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let t = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (t(11) + t(12)) / 100.0
}

fn gen(dir: &Path, kind: &str, n: usize) {
    let p = dir.join(format!("base-{kind}-{n}.h5"));
    let layout = WriteLayout::default();
    write_marquet(&p, &values(kind, n.min(BATCH), 7), &layout).unwrap();
    let f = File::open_rw(&p).unwrap();
    let t = Table::open(&f, TABLE).unwrap();
    let mut done = n.min(BATCH);
    let mut b = 1u64;
    while done < n {
        let k = (n - done).min(BATCH);
        let ids: Vec<u64> = (done as u64..(done + k) as u64).collect();
        let batch = GeoBatch::new().with_array(ID, Array::from_u64(&ids)).with_geometry(GEOMETRY, values(kind, k, 7 + b));
        let opts = WriteOptions::default().with_rtree(RTreeOnAppend::LeaveStale).with_layout(None);
        t.write(&batch, opts).unwrap();
        done += k;
        b += 1;
        eprintln!("{}: {done} rows", p.display());
    }
    layout.finish(&t, GEOMETRY).unwrap();
    println!("{}", p.display());
}

fn run(base: &Path, add: &Path, reps: usize) {
    let work = base.with_extension("work.h5");
    std::fs::copy(base, &work).unwrap();
    let sf = File::open(add).unwrap();
    let src = Table::open(&sf, TABLE).unwrap();
    let mut secs = Vec::new();
    let mut cpus = Vec::new();
    println!("run\tseconds\tcpu_seconds\tbytes_read");
    for r in 0..reps {
        let io0 = rchar();
        let c0 = cpu();
        let t0 = Instant::now();
        let f = File::open_rw(&work).unwrap();
        let t = Table::open(&f, TABLE).unwrap();
        t.append_from(&src, marquet::DEFAULT_APPEND_BATCH_ROWS, RTreeOnAppend::Rebuild, &Progress::default())
            .unwrap();
        drop(t);
        drop(f);
        let dt = t0.elapsed().as_secs_f64();
        let io = rchar() - io0;
        let c = cpu() - c0;
        println!("{r}\t{dt:.4}\t{c:.2}\t{io}");
        secs.push(dt);
        cpus.push(c);
    }
    let f = File::open(&work).unwrap();
    let t = Table::open(&f, TABLE).unwrap();
    for i in t.spatial_indexes(GEOMETRY).unwrap() {
        assert!(i.valid, "{} is not valid after the appends", i.info.path);
    }
    println!("median\t{:.4}\t{:.2}\t{} rows", median(&secs), median(&cpus), t.nrows().unwrap());
    drop(t);
    drop(f);
    let _ = std::fs::remove_file(&work);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("gen") => {
            let dir = PathBuf::from(&args[1]);
            std::fs::create_dir_all(&dir).unwrap();
            let kind = args[2].as_str();
            write_marquet(&dir.join(format!("add-{kind}-{ADD}.h5")), &values(kind, ADD, 99), &WriteLayout::default().without_indexes())
                .unwrap();
            for n in &args[3..] {
                gen(&dir, kind, n.parse().unwrap());
            }
        }
        Some("run") => {
            let reps = args.get(3).and_then(|r| r.parse().ok()).unwrap_or(5);
            run(Path::new(&args[1]), Path::new(&args[2]), reps);
        }
        _ => eprintln!("usage: append_cost gen DIR points|polygons N...  |  append_cost run BASE ADD [REPS]"),
    }
}

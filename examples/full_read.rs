//! A whole Marquet table to Arrow record batches, as Python's `marquet.read_arrow` reads it
//! (every column but the covering columns, geometry as WKB), for profilers and timing:
//!
//!     cargo build --release --example full_read
//!     target/release/examples/full_read FILE.h5 [ROUNDS] [--native-points]
//!     valgrind --tool=callgrind target/release/examples/full_read FILE.h5
//!
//! Prints the rows, the WKB bytes read and the median time of `ROUNDS` reads (file opened
//! once per read).

use std::time::Instant;

use marquet::convert::ArrowPlan;
use marquet::h5col::File;
use marquet::marquet::MarquetTable;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: full_read FILE.h5 [ROUNDS] [--native-points]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(2).filter(|a| !a.starts_with("--")).map(|r| r.parse()).transpose()?.unwrap_or(1);
    let native = args.iter().any(|a| a == "--native-points");
    let mut times = Vec::new();
    for _ in 0..rounds {
        let t0 = Instant::now();
        let file = File::open(path)?;
        let name = file.tables()?.into_iter().next().ok_or("no table")?;
        let t = MarquetTable::open(&file, &name)?;
        let mut cols = t.table().column_names()?;
        let mut cov = Vec::new();
        for g in t.geometry_column_names()? {
            if let Some(c) = t.geometry_column(&g)?.covering {
                cov.push(c);
            }
        }
        cols.retain(|c| !cov.contains(c));
        let plan = ArrowPlan::with_native_points(&t, Some(&cols), true, native)?;
        let batches = plan.read_all(&t, marquet::convert::DEFAULT_BATCH_ROWS)?;
        let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
        let bytes: usize = batches.iter().map(|b| b.get_array_memory_size()).sum();
        times.push(t0.elapsed().as_secs_f64());
        if times.len() == 1 {
            println!("{rows} rows, {bytes} bytes of Arrow memory, {} batches", batches.len());
        }
    }
    times.sort_by(f64::total_cmp);
    println!("median {:.1} ms over {} rounds", times[times.len() / 2] * 1e3, times.len());
    Ok(())
}

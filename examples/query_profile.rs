//! Run the benchmark's query loop alone, for profilers:
//!
//!     cargo build --release --example query_profile
//!     perf record -g target/release/examples/query_profile target/bench-compare/points.h5 target/bench-compare/windows.txt
//!
//! `query_profile FILE.h5 read [ROUNDS]` times the full read instead;
//! `query_profile FILE.h5 WINDOWS.txt ROUNDS count` the cold count alone.
//!
//! Each window opens the file afresh, queries it and takes the ids and WKB of the answer
//! (`crate::bench::query_marquet`, what `marquet bench` times). Prints the median.

use marquet_dev::bench;

use std::time::Instant;

use marquet::query::TableQuery;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(file), Some(windows)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: query_profile FILE.h5 WINDOWS.txt [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.get(3).map(|r| r.parse()).transpose()?.unwrap_or(1);
    if windows == "read" {
        // The full read instead: ids and every geometry as WKB, `rounds` times.
        let mut times = Vec::new();
        for _ in 0..rounds {
            let t0 = Instant::now();
            let (ids, wkb) = crate::bench::read_marquet(std::path::Path::new(file))?;
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            assert_eq!(ids.len(), wkb.len());
        }
        times.sort_by(|a, b| a.total_cmp(b));
        println!("{rounds} full reads, median {:.1} ms", times[times.len() / 2]);
        return Ok(());
    }
    let windows: Vec<marquet::BBox> = std::fs::read_to_string(windows)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|x| x.trim().parse().unwrap_or(f64::NAN)).collect();
            marquet::BBox::xy(v[0], v[1], v[2], v[3])
        })
        .collect();
    if args.get(4).map(String::as_str) == Some("count") {
        // The anchor's cold count alone (`marquet query FILE --bbox … --count`): a byte-range
        // reader opened per window.
        let mut times = Vec::new();
        let mut rows = 0;
        for _ in 0..rounds {
            for w in &windows {
                let t0 = Instant::now();
                let mut r = marquet::query::reader::SpatialReader::open_path(std::path::Path::new(file), crate::bench::TABLE, Some(crate::bench::GEOMETRY))?;
                rows += r.query(&marquet::query::Query::bbox(*w))?.rows.len();
                times.push(t0.elapsed().as_secs_f64() * 1e3);
            }
        }
        println!("{} cold counts, {rows} rows, median {:.4} ms", times.len(), crate::bench::median(&times));
        return Ok(());
    }
    let mut times = Vec::new();
    let mut rows = 0;
    for _ in 0..rounds {
        for w in &windows {
            let t0 = Instant::now();
            let (ids, _) = crate::bench::query_marquet(std::path::Path::new(file), w)?;
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            rows += ids.len();
        }
    }
    times.sort_by(|a, b| a.total_cmp(b));
    println!("{} queries, {rows} rows, median {:.3} ms", times.len(), times[times.len() / 2]);
    // The same steps timed one by one (medians, ms).
    let mut steps: Vec<Vec<f64>> = vec![Vec::new(); 5];
    for w in &windows {
        let mut t = Instant::now();
        let mut lap = |k: usize, t: &mut Instant| {
            steps[k].push(t.elapsed().as_secs_f64() * 1e3);
            *t = Instant::now();
        };
        let f = marquet::h5col::File::open(file)?;
        lap(0, &mut t);
        let tab = marquet::Table::open(&f, crate::bench::TABLE)?;
        lap(1, &mut t);
        let r = tab.query(crate::bench::GEOMETRY, &marquet::query::Query::bbox(*w))?;
        lap(2, &mut t);
        let _ids = tab.column("id")?.take(&r.rows)?;
        lap(3, &mut t);
        let _wkb = tab.take_wkb(crate::bench::GEOMETRY, &r.rows)?;
        lap(4, &mut t);
    }
    // Inside the query: the metadata steps alone.
    let f = marquet::h5col::File::open(file)?;
    let tab = marquet::Table::open(&f, crate::bench::TABLE)?;
    let g = crate::bench::GEOMETRY;
    let mut inner: Vec<Vec<f64>> = vec![Vec::new(); 6];
    for _ in 0..200 {
        let mut t = Instant::now();
        let mut lap = |k: usize, t: &mut Instant| {
            inner[k].push(t.elapsed().as_secs_f64() * 1e3);
            *t = Instant::now();
        };
        let _ = tab.geometry_column(g)?;
        lap(0, &mut t);
        let _ = tab.nrows()?;
        lap(1, &mut t);
        let _ = tab.spatial_indexes(g)?;
        lap(2, &mut t);
        let _ = tab.open_block_index(g)?;
        lap(3, &mut t);
        let _ = tab.open_rtree(g)?;
        lap(4, &mut t);
        let _ = tab.geometry_column_names()?;
        lap(5, &mut t);
    }
    for (name, mut v) in ["geometry_column", "nrows", "spatial_indexes", "open_block_index", "open_rtree", "GEOMETRY_COLUMNS"].into_iter().zip(inner) {
        v.sort_by(|a, b| a.total_cmp(b));
        println!("    {name:<16} median {:.3} ms", v[v.len() / 2]);
    }
    for (name, mut v) in ["file open", "table open", "query", "take ids", "take wkb"].into_iter().zip(steps) {
        v.sort_by(|a, b| a.total_cmp(b));
        println!("  {name:<10} median {:.3} ms", v[v.len() / 2]);
    }
    Ok(())
}

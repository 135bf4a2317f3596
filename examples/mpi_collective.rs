//! Collective writes, reads and queries of one Marquet table by every rank of an MPI job
//! (feature `mpio`, docs/PARALLEL.md). Run by `scripts/test-mpi.sh`:
//!
//! ```sh
//! mpirun -np 4 target/release/examples/mpi_collective write /tmp/p.h5 250000 2
//! target/release/examples/mpi_collective serial /tmp/s.h5 1000000 2   # the same rows, one process
//! mpirun -np 4 target/release/examples/mpi_collective query /tmp/p.h5 -20,-10,20,10
//! mpirun -np 4 target/release/examples/mpi_collective crash /tmp/c.h5 100000 50 [kill]
//! mpirun -np 4 target/release/examples/mpi_collective retry /tmp/c.h5 100000
//! mpirun -np 4 target/release/examples/mpi_collective stale /tmp/s.h5 2000
//! mpirun -np 4 target/release/examples/mpi_collective refuse /tmp/r.h5
//! ```
//!
//! Feature `i` (a global id) is a 0.05° square polygon whose centre depends only on `i`, with
//! columns `id` (int64), `value` (float64) and `label` (a string list column); every 1,009th
//! geometry is null. `write PATH K A`: rank `r` owns ids `r*K .. (r+1)*K` and appends them in
//! `A` collective appends; rank 0 prints one JSON line with the timing of the appends.
//! `serial PATH N A`: ids `0..N` in `A` ordinary appends, no MPI. `query PATH BOX`: every rank
//! answers the window over its share of the rows and reads its share of `id` and of the
//! geometries; every rank checks the gathered parts against the serial query and reads.
//! `crash PATH K PCT [kill]`: one committed append of `K/2` rows a rank, then a second one
//! (the other `K/2`) during which rank 1 aborts (`kill`: gets SIGKILL) after `PCT` % of the
//! first append's duration. `retry PATH K`: after a crash, every rank opens the file
//! read-write and, when NROWS is still that of the first append, appends its second half
//! again; rank 0 prints NROWS before and after. `stale PATH K`: the state such a kill leaves
//! deterministically — after the first append, every spatial index stamped with the
//! GENERATION and NROWS the second append's commit will write, its content left as it was —
//! then the second append; every indexed query must equal the full scan. `refuse PATH`: rank 1 passes an
//! invalid WKB value; every rank must get an error, NROWS must stay, and the next append must
//! work.

use std::time::Instant;

use marquet::h5col::list::{ListArray, ListSpec};
use marquet::h5col::{Array, ColumnSpec, ColumnValues, File};
use marquet::marquet::parallel;
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteLayout};
use marquet::query::{Predicate, Query, TableQuery};
use marquet::{h5::Dtype, BBox, Result};

const TABLE: &str = "/features";

fn square(i: u64) -> Option<Vec<u8>> {
    if i.is_multiple_of(1009) {
        return None;
    }
    let x = ((i.wrapping_mul(7919)) % 3600) as f64 / 10.0 - 180.0 + 0.01;
    let y = ((i.wrapping_mul(104_729)) % 1700) as f64 / 10.0 - 85.0 + 0.01;
    let d = 0.05;
    let ring = [(x, y), (x + d, y), (x + d, y + d), (x, y + d), (x, y)];
    let mut w = vec![1u8];
    w.extend_from_slice(&3u32.to_le_bytes());
    w.extend_from_slice(&1u32.to_le_bytes());
    w.extend_from_slice(&(ring.len() as u32).to_le_bytes());
    for (px, py) in ring {
        w.extend_from_slice(&px.to_le_bytes());
        w.extend_from_slice(&py.to_le_bytes());
    }
    Some(w)
}

/// FNV-1a over the rows of a WKB buffer (validity, length, bytes).
fn wkb_hash(w: &marquet::marquet::WkbBuffer) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: u8| {
        h ^= b as u64;
        h = h.wrapping_mul(0x100_0000_01b3);
    };
    for i in 0..w.len() {
        match w.get(i) {
            None => eat(0xff),
            Some(v) => {
                (v.len() as u64).to_le_bytes().into_iter().for_each(&mut eat);
                v.iter().copied().for_each(&mut eat);
            }
        }
    }
    h
}

fn batch(ids: std::ops::Range<u64>) -> GeoBatch {
    let geoms: Vec<Option<Vec<u8>>> = ids.clone().map(square).collect();
    let id: Vec<i64> = ids.clone().map(|i| i as i64).collect();
    let value: Vec<f64> = ids.clone().map(|i| i as f64 * 0.5).collect();
    let labels: Vec<String> = ids.clone().map(|i| format!("f{i}")).collect();
    let label_rows: Vec<Option<Vec<&str>>> = labels.iter().map(|s| Some(vec![s.as_str()])).collect();
    GeoBatch::new()
        .with_geometry("geom", GeometryValues::Wkb(geoms))
        .with_array("id", Array::from_i64(&id))
        .with_array("value", Array::from_f64(&value))
        .with_column("label", ColumnValues::List(ListArray::from_string_rows(&label_rows)))
}

/// The table of the default layout (block index, R-tree, covering column), made by every
/// rank alike on a parallel file or by one process on a serial one.
fn create_table(file: &File, rows: u64) -> Result<MarquetTable> {
    let mut t = MarquetTable::create(file, TABLE)?;
    let layout = WriteLayout::default();
    let spec = layout.geometry_spec(GeometryColumnSpec::default().with_form(StorageForm::VarWkb), "bbox");
    t.add_geometry_column("geom", &spec)?;
    t.add_column("id", &ColumnSpec::new(Dtype::I64))?;
    t.add_column("value", &ColumnSpec::new(Dtype::F64))?;
    t.table().add_list_column("label", &ListSpec::strings())?;
    layout.declare_all(&t, true, Some(rows))?;
    Ok(t)
}

fn arg<T: std::str::FromStr>(a: &[String], i: usize, what: &str) -> T {
    a.get(i).and_then(|s| s.parse().ok()).unwrap_or_else(|| {
        eprintln!("mpi_collective: argument {i} ({what}) missing or invalid; see the source's header");
        std::process::exit(2)
    })
}

fn run(a: &[String]) -> Result<()> {
    let mode = a.get(1).map(String::as_str).unwrap_or("");
    let path: String = arg(a, 2, "PATH");
    if mode == "serial" {
        let n: u64 = arg(a, 3, "N");
        let appends: u64 = arg(a, 4, "A");
        let file = File::create(&path)?;
        let t = create_table(&file, n)?;
        let t0 = Instant::now();
        for k in 0..appends {
            t.append(&batch(n * k / appends..n * (k + 1) / appends))?;
        }
        println!("{{\"mode\":\"serial\",\"ranks\":1,\"rows\":{n},\"seconds\":{:.3}}}", t0.elapsed().as_secs_f64());
        return Ok(());
    }
    parallel::init()?;
    let comm = parallel::comm_world();
    let (rank, size) = (parallel::rank(comm)? as u64, parallel::size(comm)? as u64);
    match mode {
        "write" | "crash" => {
            let k: u64 = arg(a, 3, "K");
            let (appends, crash_ms) = if mode == "write" { (arg::<u64>(a, 4, "A").max(1), None) } else { (2, Some(arg::<u64>(a, 4, "PCT"))) };
            let sigkill = mode == "crash" && a.get(5).map(String::as_str) == Some("kill");
            let file = parallel::create(&path, comm)?;
            let t = create_table(&file, k * size)?;
            parallel::barrier(comm)?;
            let t0 = Instant::now();
            let c0 = parallel::call_counts();
            let mine = rank * k..(rank + 1) * k;
            let mut phases = [0.0f64; 4];
            let mut first_append = 0.0;
            for j in 0..appends {
                if j == 1 {
                    // MS is a percentage of the first append's duration.
                    if let (Some(pct), 1) = (crash_ms, rank) {
                        let ms = (first_append * 1000.0 * pct as f64 / 100.0) as u64;
                        std::thread::spawn(move || {
                            std::thread::sleep(std::time::Duration::from_millis(ms));
                            if sigkill {
                                // From outside, as the OOM killer or a batch system would.
                                eprintln!("mpi_collective: rank 1 gets SIGKILL after {ms} ms of the second append");
                                let _ = std::process::Command::new("kill").args(["-KILL", &std::process::id().to_string()]).status();
                                std::thread::sleep(std::time::Duration::from_secs(60));
                            }
                            eprintln!("mpi_collective: rank 1 aborts after {ms} ms of the second append");
                            std::process::abort();
                        });
                    }
                }
                let ids = mine.start + k * j / appends..mine.start + k * (j + 1) / appends;
                let ta = Instant::now();
                parallel::append_collective(&t, &batch(ids), comm)?;
                if j == 0 {
                    first_append = ta.elapsed().as_secs_f64();
                }
                let p = parallel::last_phases();
                for (acc, v) in phases.iter_mut().zip([p.prepare, p.write, p.summaries_and_indexes, p.commit]) {
                    *acc += v;
                }
            }
            let c1 = parallel::call_counts();
            parallel::barrier(comm)?;
            let secs = t0.elapsed().as_secs_f64();
            let n = t.nrows()?;
            // Per collective append, on this rank: MPI collectives of Marquet's own and
            // collective H5Dwrite calls (HDF5's own collectives, e.g. in H5Fflush, come on top).
            let (mpi_calls, coll_writes) = ((c1.0 - c0.0) / appends, (c1.1 - c0.1) / appends);
            if rank == 0 {
                let mib = std::fs::metadata(&path).map(|m| m.len() as f64 / 1048576.0).unwrap_or(0.0);
                println!(
                    "{{\"mode\":\"{mode}\",\"ranks\":{size},\"rows\":{n},\"appends\":{appends},\"seconds\":{secs:.3},\"rows_per_s\":{:.0},\"file_mib\":{mib:.1},\"mpi_collectives_per_append\":{mpi_calls},\"collective_writes_per_append\":{coll_writes},\"first_append_seconds\":{first_append:.3},\"rank0_phases\":{{\"prepare\":{:.3},\"write\":{:.3},\"summaries_and_indexes\":{:.3},\"commit\":{:.3}}}}}",
                    n as f64 / secs,
                    phases[0],
                    phases[1],
                    phases[2],
                    phases[3]
                );
            }
        }
        "retry" => {
            // After a crash in the second append of `crash`: the same second append again,
            // unless it was committed.
            let k: u64 = arg(a, 3, "K");
            let file = parallel::open(&path, comm, true)?;
            let t = MarquetTable::open(&file, TABLE)?;
            let before = t.nrows()?;
            let (old, new) = (size * (k / 2), size * k);
            if before == old {
                let mine = rank * k + k / 2..(rank + 1) * k;
                parallel::append_collective(&t, &batch(mine), comm)?;
            } else if before != new {
                eprintln!("mpi_collective: retry: NROWS {before} is neither {old} nor {new}");
                std::process::exit(1);
            }
            let after = t.nrows()?;
            if rank == 0 {
                println!("{{\"mode\":\"retry\",\"ranks\":{size},\"nrows_before\":{before},\"nrows_after\":{after}}}");
            }
        }
        "stale" => {
            let k: u64 = arg(a, 3, "K");
            let file = parallel::create(&path, comm)?;
            let t = create_table(&file, k * size)?;
            parallel::append_collective(&t, &batch(rank * k..rank * k + k / 2), comm)?;
            // What a collective append killed after maintaining its indexes (tokens first,
            // HEP001 §12.3 step 4) and before its commit leaves behind.
            let g = t.table().generation()?.unwrap_or(0);
            let n_next = t.nrows()? + size * (k - k / 2);
            for idx in t.spatial_indexes("geom")? {
                let o = marquet::h5::object_open(t.table().id(), &idx.info.path)?;
                marquet::h5::attr_write_u64(o.id(), "SOURCE_GENERATION", g + 1)?;
                marquet::h5::attr_write_u64(o.id(), "SOURCE_NROWS", n_next)?;
            }
            marquet::h5::flush(t.table().id())?;
            parallel::append_collective(&t, &batch(rank * k + k / 2..(rank + 1) * k), comm)?;
            let mut equal = true;
            for w in [BBox::xy(-180.0, -90.0, 180.0, 90.0), BBox::xy(-20.0, -10.0, 20.0, 10.0), BBox::xy(100.0, 40.0, 140.0, 80.0)] {
                let scan = t.query("geom", &Query::bbox(w).with_indexes(false))?.rows;
                let with = t.query("geom", &Query::bbox(w))?.rows;
                equal &= scan == with;
            }
            let valid: Vec<String> = t.spatial_indexes("geom")?.iter().map(|i| format!("\"{}\":{}", i.info.path, i.valid)).collect();
            if rank == 0 {
                println!("{{\"mode\":\"stale\",\"ranks\":{size},\"rows\":{},\"indexed_queries_equal_scan\":{equal},\"valid\":{{{}}}}}", t.nrows()?, valid.join(","));
            }
            if !equal {
                std::process::exit(1);
            }
        }
        "refuse" => {
            // A batch refused on one rank fails the append on every rank and leaves the file
            // as it was; the next append works.
            let k = 1000u64;
            let file = parallel::create(&path, comm)?;
            let t = create_table(&file, 3 * k * size)?;
            parallel::append_collective(&t, &batch(rank * k..(rank + 1) * k), comm)?;
            let mut bad = batch(size * k + rank * k..size * k + (rank + 1) * k);
            if rank == 1 {
                bad.geometries.insert("geom".into(), GeometryValues::Wkb(vec![Some(vec![1, 99, 0, 0, 0]); k as usize]));
            }
            let refused = parallel::append_collective(&t, &bad, comm);
            let n1 = t.nrows()?;
            parallel::append_collective(&t, &batch(size * k + rank * k..size * k + (rank + 1) * k), comm)?;
            let n2 = t.nrows()?;
            let ok = refused.is_err() && n1 == size * k && n2 == 2 * size * k;
            if rank <= 1 {
                println!(
                    "{{\"mode\":\"refuse\",\"rank\":{rank},\"error\":{:?},\"nrows_after_refusal\":{n1},\"nrows_after_next\":{n2},\"ok\":{ok}}}",
                    refused.err().map(|e| e.to_string()).unwrap_or_default()
                );
            }
            if !ok {
                std::process::exit(1);
            }
        }
        "query" => {
            let b: Vec<f64> = a.get(3).map(|s| s.split(',').filter_map(|v| v.parse().ok()).collect()).unwrap_or_default();
            if b.len() != 4 {
                eprintln!("mpi_collective: query needs X0,Y0,X1,Y1");
                std::process::exit(2);
            }
            let window = BBox::xy(b[0], b[1], b[2], b[3]);
            let file = parallel::open(&path, comm, false)?;
            let t = MarquetTable::open(&file, TABLE)?;
            let t0 = Instant::now();
            let mine = parallel::query_share(&t, "geom", &window, comm)?;
            let all = parallel::gather_rows(comm, &mine)?;
            let secs = t0.elapsed().as_secs_f64();
            // The serial answer (every rank alike: reads need no coordination).
            let serial = t.query("geom", &Query::bbox(window).with_predicate(Predicate::BBoxOnly))?.rows;
            // Parallel reads: each rank reads its share of the row blocks (ids and WKB); the
            // gathered parts must equal one serial read of everything.
            let n = t.nrows()?;
            let (r, sz) = (rank as i32, size as i32);
            let share = parallel::row_share(n, marquet::h5col::DEFAULT_CHUNK_ROWS, r, sz);
            let ids = t.table().read("id", share.start, share.end)?;
            let ids: Vec<u64> = ids.bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
            let all_ids = parallel::gather_rows(comm, &ids)?;
            let hashes = parallel::gather_rows(comm, &[wkb_hash(&t.read_wkb("geom", share.start, share.end)?)])?;
            let full_ids = t.table().read("id", 0, n)?;
            let reads_ok = all_ids.len() as u64 == n
                && all_ids.iter().zip(full_ids.bytes.chunks_exact(8)).all(|(a, c)| *a == u64::from_le_bytes(c.try_into().unwrap()))
                && (0..sz).all(|q| {
                    let s = parallel::row_share(n, marquet::h5col::DEFAULT_CHUNK_ROWS, q, sz);
                    t.read_wkb("geom", s.start, s.end).map(|w| wkb_hash(&w)).ok() == Some(hashes[q as usize])
                });
            let ok = all == serial && reads_ok;
            if rank == 0 {
                println!(
                    "{{\"mode\":\"query\",\"ranks\":{size},\"rows\":{},\"rank0_rows\":{},\"serial_rows\":{},\"equal\":{ok},\"parallel_reads_equal\":{reads_ok},\"seconds\":{secs:.3}}}",
                    all.len(),
                    mine.len(),
                    serial.len()
                );
            }
            if !ok {
                eprintln!("mpi_collective: rank {rank}: the collective query or the parallel reads differ from the serial ones");
                std::process::exit(1);
            }
        }
        _ => {
            eprintln!("mpi_collective: MODE is write, serial, query, crash, retry, stale or refuse");
            std::process::exit(2);
        }
    }
    parallel::finalize()?;
    Ok(())
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    if let Err(e) = run(&a) {
        eprintln!("mpi_collective: {e}");
        std::process::exit(1);
    }
}

//! A longer run of `tests/read_paths.rs`'s hostile-bytes test, for campaigns outside CI:
//! damage a good file at many places, one at a time, and read each damaged copy through the
//! byte-range path (no libhdf5): every copy must answer or fail with a typed error, never
//! panic, hang or allocate far beyond its size.
//!
//!     cargo build --release --example damage
//!     target/release/examples/damage GOOD.h5 ROUNDS [SEED]
//!
//! Each round overwrites 1–8 bytes at a random place (half of the rounds within the first
//! 64 KiB, where the metadata of a default file lies), or cuts the file short (one round in
//! ten), writes the copy to a temporary file and runs, on every table of the good file,
//! the queries of the test: a window with WKB, the same without indexes, and a count. A
//! panic or a round slower than 5 s is printed with its seed and damage, and the exit
//! status is 1; the damaged copy is kept for the report. Peak memory (`ru_maxrss`) is
//! printed at the end.

use std::path::Path;
use std::time::{Duration, Instant};

use marquet::query::reader::SpatialReader;
use marquet::query::Query;
use marquet::BBox;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (Some(good), Some(rounds)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: damage GOOD.h5 ROUNDS [SEED]");
        std::process::exit(2);
    };
    let rounds: u64 = rounds.parse()?;
    let mut x: u64 = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(0x2545_F491_4F6C_DD1D);
    let bytes = std::fs::read(good)?;
    let f = marquet::h5col::File::open(Path::new(good))?;
    let tables = f.tables()?;
    drop(f);
    // The column's extent is unknown to a damaged file: a window over most of the world,
    // and a small one.
    let windows = [BBox::xy(-170.0, -80.0, 170.0, 80.0), BBox::xy(-30.0, -30.0, 60.0, 60.0), BBox::xy(1.0, 1.0, 1.5, 1.5)];
    let dir = std::env::temp_dir().join(format!("marquet-damage-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    std::panic::set_hook(Box::new(|_| {}));
    let (mut answered, mut failed, mut bad) = (0u64, 0u64, 0u64);
    let mut slowest = Duration::ZERO;
    for i in 0..rounds {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let seed = x;
        let mut b = bytes.clone();
        let what = if i % 10 == 9 {
            let n = (x % bytes.len() as u64) as usize;
            b.truncate(n);
            format!("cut at {n}")
        } else {
            let span = if i % 2 == 0 { bytes.len().min(65_536) } else { bytes.len() } as u64;
            let at = (x % span) as usize;
            let n = 1 + ((x >> 40) % 8) as usize;
            for (k, v) in b.iter_mut().skip(at).take(n).enumerate() {
                *v ^= (x >> (8 * (k % 5))) as u8 | 1;
            }
            format!("{n} bytes at {at}")
        };
        let p = dir.join(format!("round-{i}.h5"));
        std::fs::write(&p, &b)?;
        let t0 = Instant::now();
        let mut outcome = Ok(());
        for table in &tables {
            let r = std::panic::catch_unwind(|| -> marquet::Result<()> {
                let mut r = SpatialReader::open_byte_range(&p, table, None)?;
                for w in windows {
                    r.query(&Query::bbox(w).with_wkb(true))?;
                    r.query(&Query::bbox(w).with_indexes(false))?;
                }
                Ok(())
            });
            match r {
                Err(e) => {
                    let m = e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default();
                    outcome = Err(format!("PANIC in {table}: {m}"));
                    break;
                }
                Ok(Err(e)) if e.to_string().is_empty() => {
                    outcome = Err(format!("an error without a message in {table}"));
                    break;
                }
                Ok(Err(_)) => failed += 1,
                Ok(Ok(())) => answered += 1,
            }
        }
        let took = t0.elapsed();
        slowest = slowest.max(took);
        if took > Duration::from_secs(5) && outcome.is_ok() {
            outcome = Err(format!("took {took:?}"));
        }
        match outcome {
            Ok(()) => {
                let _ = std::fs::remove_file(&p);
            }
            Err(m) => {
                bad += 1;
                println!("round {i} (seed {seed}, {what}): {m}; kept {}", p.display());
            }
        }
    }
    let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a `rusage` into the pointer it is given.
    #[allow(unsafe_code)]
    let maxrss = unsafe { (libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) == 0).then(|| ru.assume_init().ru_maxrss) };
    println!(
        "{rounds} rounds of {} bytes: {answered} tables answered, {failed} typed errors, {bad} bad rounds; slowest {slowest:?}; peak {} MiB",
        bytes.len(),
        maxrss.unwrap_or(0) / 1024
    );
    if bad == 0 {
        let _ = std::fs::remove_dir_all(&dir);
    }
    std::process::exit(if bad > 0 { 1 } else { 0 });
}

//! A Marquet table of `N` seeded clustered points ([`crate::synth::clustered_points`])
//! with three attribute columns, for the conversion benchmark (`scripts/bench-convert.sh`):
//! `id` (int64), `category` (uint8, 0–15), `value` (float64) and the point column
//! `geometry` (native XY float64 points, OGC:CRS84 by default).
//!
//! ```text
//! cargo run --release --example synth_points -- /tmp/points.h5 1000000
//! marquet convert /tmp/points.h5 /tmp/points.parquet
//! ```

use marquet_dev::synth;

use marquet::h5col::Dtype;
use marquet::h5col::{Array, ColumnSpec, File};
use marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, Table, StorageForm};
use crate::synth::{clustered_points, SplitMix64};
use marquet::Dimensions;

/// Seed of the points (the same as the query benchmarks use).
const SEED: u64 = 42;
/// Rows per append: one row block.
const BATCH: usize = 65_536;

fn main() -> marquet::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let path = args.get(1).map(String::as_str).unwrap_or("points.h5");
    let n: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let (x, y) = clustered_points(n, SEED);
    let mut r = SplitMix64::new(SEED ^ 0xA77);
    let f = File::create(path)?;
    let mut t = Table::create(&f, "/points")?;
    t.add_geometry_column("geometry", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }))?;
    t.add_column("id", &ColumnSpec::new(Dtype::I64))?;
    t.add_column("category", &ColumnSpec::new(Dtype::U8))?;
    t.add_column("value", &ColumnSpec::new(Dtype::F64))?;
    let mut s = 0;
    while s < n {
        let e = (s + BATCH).min(n);
        let ids: Vec<u8> = (s as i64..e as i64).flat_map(|i| i.to_le_bytes()).collect();
        let cats: Vec<u8> = (s..e).map(|_| r.int(0, 15) as u8).collect();
        let vals: Vec<u8> = (s..e).flat_map(|_| r.range(0.0, 1000.0).to_le_bytes()).collect();
        let b = GeoBatch::new()
            .with_geometry(
                "geometry",
                GeometryValues::Points { dims: Dimensions::Xy, x: x[s..e].to_vec(), y: y[s..e].to_vec(), z: None, m: None, valid: None },
            )
            .with_array("id", Array { dtype: Dtype::I64, bytes: ids })
            .with_array("category", Array { dtype: Dtype::U8, bytes: cats })
            .with_array("value", Array { dtype: Dtype::F64, bytes: vals });
        t.append(&b)?;
        s = e;
    }
    println!("wrote {n} rows to {path}:/points");
    Ok(())
}

//! Validator throughput: write a table of polygons (~16 vertices each, variable-length WKB
//! with a covering column), then validate it and report rows per second.
//!
//! ```text
//! cargo build --release --example validate_bench
//! target/release/examples/validate_bench write /tmp/bench.h5 1000000
//! /usr/bin/time -v target/release/examples/validate_bench validate /tmp/bench.h5
//! ```

use std::time::Instant;

use marquet::h5col::File;
use marquet::{Crs, GeoBatch, GeometryColumnSpec, GeometryValues, Table, StorageForm};
use marquet::validate::{validate_file, Options};

const BATCH: usize = 65_536;
const VERTICES: usize = 16;
const UTM: &str = r#"{"type":"ProjectedCRS","name":"NAD83(CSRS) / UTM zone 20N","base_crs":{"name":"NAD83(CSRS)","datum":{"type":"GeodeticReferenceFrame","name":"NAD83 Canadian Spatial Reference System","ellipsoid":{"name":"GRS 1980","semi_major_axis":6378137,"inverse_flattening":298.257222101}}},"conversion":{"name":"UTM zone 20N","method":{"name":"Transverse Mercator","id":{"authority":"EPSG","code":9807}}},"coordinate_system":{"subtype":"Cartesian","axis":[{"name":"Easting","abbreviation":"E","direction":"east","unit":"metre"},{"name":"Northing","abbreviation":"N","direction":"north","unit":"metre"}]},"id":{"authority":"EPSG","code":2961}}"#;

/// A closed counterclockwise ring of `VERTICES` points around (cx, cy).
fn polygon(cx: f64, cy: f64, r: f64) -> Vec<u8> {
    let mut v = Vec::with_capacity(13 + 16 * VERTICES);
    v.push(1);
    v.extend_from_slice(&3u32.to_le_bytes());
    v.extend_from_slice(&1u32.to_le_bytes());
    v.extend_from_slice(&(VERTICES as u32).to_le_bytes());
    for k in 0..VERTICES {
        let a = 2.0 * std::f64::consts::PI * (k % (VERTICES - 1)) as f64 / (VERTICES - 1) as f64;
        v.extend_from_slice(&(cx + r * a.cos()).to_le_bytes());
        v.extend_from_slice(&(cy + r * a.sin()).to_le_bytes());
    }
    v
}

fn write(path: &str, rows: usize) -> marquet::Result<()> {
    let f = File::create(path)?;
    let mut t = Table::create(&f, "/parcels")?;
    t.add_geometry_column(
        "shape",
        &GeometryColumnSpec::default()
            .with_form(StorageForm::VarWkb)
            .with_crs(Crs::ProjJson(UTM.into()))
            .with_orientation_ccw()
            .with_covering("shape_bbox"),
    )?;
    let mut done = 0;
    while done < rows {
        let n = BATCH.min(rows - done);
        let v = (done..done + n)
            .map(|i| {
                let (x, y) = ((i % 1000) as f64 * 100.0, (i / 1000) as f64 * 100.0);
                Some(polygon(400_000.0 + x, 4_900_000.0 + y, 30.0 + (i % 7) as f64))
            })
            .collect();
        t.append(&GeoBatch::new().with_geometry("shape", GeometryValues::Wkb(v)))?;
        done += n;
    }
    f.flush()
}

fn main() -> marquet::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).map(String::as_str).unwrap_or("both");
    let path = args.get(2).cloned().unwrap_or_else(|| "validate_bench.h5".into());
    let rows: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    if mode == "write" || mode == "both" {
        let t0 = Instant::now();
        write(&path, rows)?;
        println!("wrote {rows} rows to {path} in {:.2} s", t0.elapsed().as_secs_f64());
    }
    if mode == "validate" || mode == "both" {
        let t0 = Instant::now();
        let r = validate_file(&path, &Options::default())?;
        let s = t0.elapsed().as_secs_f64();
        let n: u64 = marquet::h5col::File::open(&path)?.table("/parcels")?.nrows()?;
        println!(
            "validated {n} rows in {s:.2} s: {:.0} rows/s, {} errors, {} findings, status {:?}",
            n as f64 / s,
            r.errors().count(),
            r.findings().count(),
            r.status
        );
    }
    Ok(())
}

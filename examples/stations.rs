//! HEP002 §15.1: the same three rows (a point, a null, an empty point) in all three
//! storage forms. Writes `stations.h5` (or the path given) and prints it back.
//!
//! ```text
//! cargo run --example stations -- /tmp/stations.h5
//! ```

use marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, Table, StorageForm};
use marquet::{h5col::File, Dimensions, Result};

/// POINT (-88.2434 40.1164), little-endian ISO WKB (HEP002 §15.1).
pub const STATION_WKB: [u8; 21] = [
    0x01, 0x01, 0x00, 0x00, 0x00, 0x2b, 0xf6, 0x97, 0xdd, 0x93, 0x0f, 0x56, 0xc0, 0x90, 0xa0, 0xf8, 0x31, 0xe6,
    0x0e, 0x44, 0x40,
];

fn main() -> Result<()> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "stations.h5".into());
    write_stations(&path)?;
    let f = File::open(&path)?;
    let t = Table::open(&f, "/stations")?;
    for name in t.geometry_column_names()? {
        let info = t.geometry_column(&name)?;
        let rows = t.read_wkb(&name, 0, t.nrows()?)?;
        print!("{name} ({}):", info.form.describe());
        for i in 0..rows.len() {
            match rows.get(i) {
                None => print!(" NULL;"),
                Some(w) => print!(" {};", marquet::wkb::to_wkt(w).unwrap_or_else(|e| e.to_string())),
            }
        }
        println!();
    }
    Ok(())
}

/// Write the §15.1 table to `path`.
pub fn write_stations(path: &str) -> Result<()> {
    let f = File::create(path)?;
    let mut t = Table::create(&f, "/stations")?;
    t.add_geometry_column("location", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }).with_filters(vec![]))?;
    t.add_geometry_column("location_wkb", &GeometryColumnSpec::default().with_form(StorageForm::FixedWkb { size: 21 }).with_filters(vec![]))?;
    t.add_geometry_column("location_wkb_list", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_filters(vec![]))?;
    let empty = {
        let mut w = vec![0x01, 0x01, 0, 0, 0];
        w.extend_from_slice(&f64::NAN.to_le_bytes());
        w.extend_from_slice(&f64::NAN.to_le_bytes());
        w
    };
    let rows = vec![Some(STATION_WKB.to_vec()), None, Some(empty)];
    t.append(
        &GeoBatch::new()
            .with_geometry("location", GeometryValues::Wkb(rows.clone()))
            .with_geometry("location_wkb", GeometryValues::Wkb(rows.clone()))
            .with_geometry("location_wkb_list", GeometryValues::Wkb(rows)),
    )?;
    Ok(())
}

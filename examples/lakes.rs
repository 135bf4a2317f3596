//! HEP002 §15.2: a table of lakes with spatial search indexes. Shorelines are polygons and
//! multipolygons with Z, stored as variable-length WKB with a guaranteed winding order, a
//! covering column and both kinds of spatial index; a second geometry column holds each
//! lake's centroid as a native point; `lake_id` is the feature identifier. Writes `lakes.h5`
//! (or the path given), then runs a spatial query and prints what each layer did.
//!
//! ```text
//! cargo run --example lakes -- /tmp/lakes.h5
//! ```

use marquet::h5col::Dtype;
use marquet::h5col::{Array, ColumnSpec, File};
use marquet::{Crs, GeoBatch, GeometryColumnSpec, GeometryValues, Table, StorageForm, WriteOptions};
use marquet::query::{Predicate, Query, TableQuery, Window};
use marquet::wkb::{self, ByteOrder, Coord, Geometry, MultiPolygon, Polygon};
use marquet::{BBox, Dimensions, Result};

/// The number of lakes the example writes.
pub const N_LAKES: usize = 40;
/// Rows per chunk of every column, and so the block length B (HEP002 §10.2).
pub const CHUNK_ROWS: u64 = 4096;
/// Bytes of the fixed-length UTF-8 `name` column.
pub const NAME_BYTES: usize = 32;

/// NAD83(CSRS) / UTM zone 20N as PROJJSON (EPSG:2961).
pub const EPSG_2961_PROJJSON: &str = r#"{"$schema":"https://proj.org/schemas/v0.7/projjson.schema.json","type":"ProjectedCRS","name":"NAD83(CSRS) / UTM zone 20N","base_crs":{"name":"NAD83(CSRS)","datum":{"type":"GeodeticReferenceFrame","name":"NAD83 Canadian Spatial Reference System","ellipsoid":{"name":"GRS 1980","semi_major_axis":6378137,"inverse_flattening":298.257222101}},"coordinate_system":{"subtype":"ellipsoidal","axis":[{"name":"Geodetic latitude","abbreviation":"Lat","direction":"north","unit":"degree"},{"name":"Geodetic longitude","abbreviation":"Lon","direction":"east","unit":"degree"}]},"id":{"authority":"EPSG","code":4617}},"conversion":{"name":"UTM zone 20N","method":{"name":"Transverse Mercator","id":{"authority":"EPSG","code":9807}},"parameters":[{"name":"Latitude of natural origin","value":0,"unit":"degree","id":{"authority":"EPSG","code":8801}},{"name":"Longitude of natural origin","value":-63,"unit":"degree","id":{"authority":"EPSG","code":8802}},{"name":"Scale factor at natural origin","value":0.9996,"unit":"unity","id":{"authority":"EPSG","code":8805}},{"name":"False easting","value":500000,"unit":"metre","id":{"authority":"EPSG","code":8806}},{"name":"False northing","value":0,"unit":"metre","id":{"authority":"EPSG","code":8807}}]},"coordinate_system":{"subtype":"Cartesian","axis":[{"name":"Easting","abbreviation":"E","direction":"east","unit":"metre"},{"name":"Northing","abbreviation":"N","direction":"north","unit":"metre"}]},"id":{"authority":"EPSG","code":2961}}"#;

fn main() -> Result<()> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "lakes.h5".into());
    write_lakes(&path, N_LAKES)?;
    let f = File::open(&path)?;
    let t = Table::open(&f, "/lakes")?;
    let info = t.geometry_column("shoreline")?;
    println!("{} lakes, shoreline BBOX {:?}", t.nrows()?, info.bbox.map(|b| b.0));
    for idx in t.spatial_indexes("shoreline")? {
        println!("index {} ({}), valid: {}", idx.info.path, idx.kind.kind(), idx.valid);
    }
    let window = BBox::xy(400_000.0, 4_900_000.0, 520_000.0, 5_050_000.0);
    let res = t.query("shoreline", &Query::new(Window::BBox(window), Predicate::Intersects))?;
    println!("lakes meeting {window:?}: rows {:?}", res.rows);
    println!("{:#?}", res.stats);
    Ok(())
}

/// Pseudo-random but reproducible numbers in [0, 1).
fn unit(i: u64, k: u64) -> f64 {
    let mut z = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ k.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// A lake outline around (cx, cy) at elevation z: counterclockwise exterior (ORIENTATION).
fn outline(i: u64, k: u64, cx: f64, cy: f64, z: f64, r: f64) -> Polygon {
    let n = 12;
    let mut ring: Vec<Coord> = (0..n)
        .map(|j| {
            let a = std::f64::consts::TAU * j as f64 / n as f64;
            let rr = r * (0.6 + 0.4 * unit(i, k * 100 + j));
            Coord::xyz(cx + rr * a.cos(), cy + rr * a.sin(), z)
        })
        .collect();
    ring.push(ring[0]);
    Polygon { dims: Dimensions::Xyz, rings: vec![ring] }
}

/// Write the §15.2 table of `n` lakes to `path`.
pub fn write_lakes(path: &str, n: usize) -> Result<()> {
    let f = File::create(path)?;
    let mut t = Table::create(&f, "/lakes")?;
    t.add_column("lake_id", &ColumnSpec::new(Dtype::U64).with_chunk_rows(CHUNK_ROWS))?;
    let name_dt = Dtype::FixedString { size: NAME_BYTES, utf8: true, nullterm: true, spacepad: false };
    t.add_column("name", &ColumnSpec::new(name_dt).with_chunk_rows(CHUNK_ROWS))?;
    t.add_column(
        "area",
        &ColumnSpec::new(Dtype::F64).with_chunk_rows(CHUNK_ROWS).with_units("m2").with_units_vocabulary("UDUNITS-2"),
    )?;
    let crs = Crs::ProjJson(EPSG_2961_PROJJSON.into());
    t.add_geometry_column(
        "shoreline",
        &GeometryColumnSpec::default()
            .with_form(StorageForm::VarWkb)
            .with_crs(crs.clone())
            .with_orientation_ccw()
            .with_covering_z("shoreline_bbox")
            .with_chunk_rows(CHUNK_ROWS),
    )?;
    t.add_geometry_column(
        "centroid",
        &GeometryColumnSpec::default()
            .with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })
            .with_crs(crs)
            .with_chunk_rows(CHUNK_ROWS),
    )?;
    t.set_index_columns(&["lake_id"])?;

    let mut ids = Vec::with_capacity(n);
    let mut lake_names = Vec::with_capacity(n);
    let mut areas = Vec::with_capacity(n);
    let mut shorelines = Vec::with_capacity(n);
    let (mut cx, mut cy) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for i in 0..n as u64 {
        // Inside the §15.2 BBOX: x 237100–776800, y 4810400–5235700, z 0–520.
        let x = 240_000.0 + unit(i, 1) * 530_000.0;
        let y = 4_815_000.0 + unit(i, 2) * 415_000.0;
        let z = (unit(i, 3) * 520.0).round();
        let r = 500.0 + unit(i, 4) * 3_000.0;
        let g = if i % 5 == 4 {
            // A lake in two parts.
            Geometry::MultiPolygon(MultiPolygon {
                dims: Dimensions::Xyz,
                polygons: vec![outline(i, 5, x, y, z, r), outline(i, 6, x + 2.5 * r, y, z, r * 0.5)],
            })
        } else {
            Geometry::Polygon(outline(i, 5, x, y, z, r))
        };
        let gc: geo_types::Geometry<f64> = (&g).into();
        use geo::{Area, Centroid};
        let c = gc.centroid().map(|p| (p.x(), p.y())).unwrap_or((x, y));
        areas.push(gc.unsigned_area().round());
        cx.push(c.0);
        cy.push(c.1);
        shorelines.push(Some(wkb::encode(&g, ByteOrder::LittleEndian)));
        ids.push(1000 + i);
        lake_names.push(format!("Lake {}", 1000 + i));
    }
    let name_refs: Vec<&str> = lake_names.iter().map(|s| s.as_str()).collect();
    let batch = GeoBatch::new()
        .with_array("lake_id", Array::from_u64(&ids))
        .with_array("name", Array::from_strings_sized(&name_refs, true, NAME_BYTES)?)
        .with_array("area", Array::from_f64(&areas))
        .with_geometry("shoreline", GeometryValues::Wkb(shorelines))
        .with_geometry("centroid", GeometryValues::Points { dims: Dimensions::Xy, x: cx, y: cy, z: None, m: None, valid: None });
    // Bulk write: rows ordered along a Hilbert curve by shoreline (HEP002 §10.6).
    // The §15.2 layout: the indexes are built explicitly below, as the spec shows them.
    t.write(&batch, WriteOptions::default().with_layout(None))?;
    // Both indexes on the shoreline; B follows the chunks (4096), node size 16.
    t.build_block_bbox("shoreline", None)?;
    t.build_rtree("shoreline", Some(16))?;
    Ok(())
}

//! OGC GeoPackage (vector features) in and out (issue #22), over SQLite with `rusqlite`.
//!
//! A GeoPackage is an SQLite database whose feature tables hold geometries as
//! "GeoPackageBinary": a small header (magic `GP`, version, flags, SRS id, optional
//! envelope) followed by standard WKB (OGC 12-128r18 §2.1.3). Nothing more is needed to read
//! and write it, so no GDAL: rows are streamed with a prepared statement, and written in
//! one transaction per batch of rows.
//!
//! Read: the first feature table of `gpkg_contents` (by name order; `--table` of the
//! HDF5 side does not pick layers), its geometry column from `gpkg_geometry_columns`, the
//! CRS from `gpkg_spatial_ref_sys` (organization and code, else its WKT) resolved to
//! PROJJSON; srs_id 0 / -1 (undefined) are unknown. Written: the required metadata tables
//! (`gpkg_spatial_ref_sys` with the three mandatory rows, `gpkg_contents`,
//! `gpkg_geometry_columns`), the CRS row (code and WKT 1), a feature table with an integer
//! primary key `fid`, geometries with an XY envelope. No R-tree extension is written
//! (optional in the standard; GDAL reads the file without it).

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{params_from_iter, Connection, OpenFlags};

use super::hub::features::{Feature, FeatureSink, FeatureSource, Kind, SinkInfo, SourceInfo, V};
use crate::error::{MarquetError, Result};
use crate::marquet::Crs;
use crate::spec::{BBox, GeometryKind};

fn err(path: &str, e: impl std::fmt::Display) -> MarquetError {
    MarquetError::Io { path: path.to_string(), source: std::io::Error::other(format!("GeoPackage: {e}")) }
}

/// Quote an SQL identifier.
fn ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// The WKB inside a GeoPackageBinary blob, or `None` for an empty geometry flagged as such
/// with no WKB. Checks the magic, version and envelope size against the blob's length.
pub fn gpb_to_wkb(b: &[u8]) -> std::result::Result<&[u8], String> {
    if b.len() < 8 || &b[..2] != b"GP" {
        return Err("not a GeoPackageBinary geometry (no GP magic)".into());
    }
    if b[2] != 0 {
        return Err(format!("GeoPackageBinary version {} is not 0", b[2]));
    }
    let flags = b[3];
    if flags & 0x20 != 0 {
        return Err("extended GeoPackageBinary geometry (not standard WKB)".into());
    }
    let env = match (flags >> 1) & 0x07 {
        0 => 0,
        1 => 32,
        2 | 3 => 48,
        4 => 64,
        e => return Err(format!("GeoPackageBinary envelope code {e} is invalid")),
    };
    let start = 8 + env;
    if b.len() < start {
        return Err("GeoPackageBinary header longer than the blob".into());
    }
    Ok(&b[start..])
}

/// A GeoPackageBinary blob (little-endian header, XY envelope unless empty) around `wkb`.
pub fn wkb_to_gpb(wkb: &[u8], srs_id: i32, bbox: &BBox) -> Vec<u8> {
    let empty = bbox.is_empty();
    let mut out = Vec::with_capacity(wkb.len() + 40);
    out.extend_from_slice(b"GP");
    out.push(0);
    // Little-endian header (bit 0); envelope [minx, maxx, miny, maxy] (code 1); empty flag (bit 4).
    out.push(if empty { 0x01 | 0x10 } else { 0x01 | 0x02 });
    out.extend_from_slice(&srs_id.to_le_bytes());
    if !empty {
        for v in [bbox.xmin, bbox.xmax, bbox.ymin, bbox.ymax] {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out.extend_from_slice(wkb);
    out
}

/// A GeoPackage feature table as a [`FeatureSource`]: rows are fetched in pages by `fid`
/// (keyset pagination: the statement borrows the connection, so each page is its own
/// query and nothing but one page is held).
pub struct GpkgSource {
    conn: Connection,
    path: String,
    select: String,
    page: std::collections::VecDeque<Feature>,
    last_key: Option<i64>,
    done: bool,
    kinds: Vec<Kind>,
}

const PAGE_ROWS: i64 = 10_000;

/// Open the first feature table of a GeoPackage.
pub fn open(input: &Path) -> Result<(SourceInfo, GpkgSource)> {
    let path = input.display().to_string();
    let conn = Connection::open_with_flags(input, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX).map_err(|e| err(&path, e))?;
    let (table, gcol, srs_id): (String, String, i64) = conn
        .query_row(
            "SELECT c.table_name, g.column_name, g.srs_id FROM gpkg_contents c JOIN gpkg_geometry_columns g ON g.table_name = c.table_name \
             WHERE c.data_type = 'features' ORDER BY c.table_name LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .map_err(|e| err(&path, format!("no feature table ({e})")))?;
    // The CRS.
    let (crs, crs_note) = if srs_id == 0 || srs_id == -1 {
        (Crs::Unknown, None)
    } else {
        let row: Option<(String, i64, String)> = conn
            .query_row("SELECT organization, organization_coordsys_id, definition FROM gpkg_spatial_ref_sys WHERE srs_id = ?1", [srs_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .ok();
        match row {
            None => (Crs::Unknown, Some(format!("GeoPackage srs_id {srs_id} is not in gpkg_spatial_ref_sys: stored as unknown"))),
            Some((org, code, def)) => match crate::crs::resolve(&format!("{org}:{code}")) {
                Ok(c) => (c, None),
                Err(_) => match crate::crs::resolve(&def) {
                    Ok(c) => (c, None),
                    Err(why) => (Crs::Unknown, Some(format!("GeoPackage CRS {org}:{code} could not be resolved ({why}): stored as unknown; definition: {def}"))),
                },
            },
        }
    };
    // Attribute columns (everything but the geometry and the integer primary key).
    let mut stmt = conn.prepare(&format!("PRAGMA table_info({})", ident(&table))).map_err(|e| err(&path, e))?;
    let cols: Vec<(String, String, bool)> = stmt
        .query_map([], |r| Ok((r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get::<_, i64>(5)? > 0)))
        .map_err(|e| err(&path, e))?
        .collect::<std::result::Result<_, _>>()
        .map_err(|e| err(&path, e))?;
    drop(stmt);
    let key = cols.iter().find(|c| c.2).map(|c| c.0.clone()).unwrap_or_else(|| "rowid".into());
    let mut fields = Vec::new();
    for (name, ty, pk) in &cols {
        if *name == gcol || *pk {
            continue;
        }
        let t = ty.to_ascii_uppercase();
        let k = if t.starts_with("BOOL") {
            Kind::Bool
        } else if t.contains("INT") {
            Kind::Int
        } else if t.starts_with("REAL") || t.starts_with("FLOAT") || t.starts_with("DOUBLE") {
            Kind::Float
        } else if t.starts_with("BLOB") {
            Kind::Bytes
        } else {
            Kind::Str
        };
        fields.push((name.clone(), k));
    }
    let list: Vec<String> = std::iter::once(ident(&key)).chain(std::iter::once(ident(&gcol))).chain(fields.iter().map(|(n, _)| ident(n))).collect();
    let select = format!(
        "SELECT {} FROM {} WHERE ?1 IS NULL OR {} > ?1 ORDER BY {} LIMIT {PAGE_ROWS}",
        list.join(", "),
        ident(&table),
        ident(&key),
        ident(&key)
    );
    let kinds = fields.iter().map(|(_, k)| *k).collect();
    Ok((SourceInfo { fields, crs, crs_note }, GpkgSource { conn, path, select, page: Default::default(), last_key: None, done: false, kinds }))
}

fn sql_value(v: ValueRef<'_>, k: Kind) -> V {
    match v {
        ValueRef::Null => V::Null,
        ValueRef::Integer(i) if k == Kind::Bool => V::B(i != 0),
        ValueRef::Integer(i) => V::I(i),
        ValueRef::Real(x) => V::F(x),
        ValueRef::Text(t) => V::S(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => V::Bytes(b.to_vec()),
    }
}

impl GpkgSource {
    fn fill(&mut self) -> Result<()> {
        let mut stmt = self.conn.prepare_cached(&self.select).map_err(|e| err(&self.path, e))?;
        let mut rows = stmt.query([self.last_key]).map_err(|e| err(&self.path, e))?;
        let mut n = 0;
        while let Some(r) = rows.next().map_err(|e| err(&self.path, e))? {
            n += 1;
            let key: i64 = r.get(0).map_err(|e| err(&self.path, e))?;
            self.last_key = Some(key);
            let g = match r.get_ref(1).map_err(|e| err(&self.path, e))? {
                ValueRef::Null => None,
                ValueRef::Blob(b) => Some(gpb_to_wkb(b).map_err(|m| err(&self.path, format!("fid {key}: {m}")))?.to_vec()),
                _ => return Err(err(&self.path, format!("fid {key}: the geometry is not a blob"))),
            };
            let mut vals = Vec::with_capacity(self.kinds.len());
            for (i, k) in self.kinds.iter().enumerate() {
                vals.push(sql_value(r.get_ref(i + 2).map_err(|e| err(&self.path, e))?, *k));
            }
            self.page.push_back((g, vals));
        }
        if n < PAGE_ROWS {
            self.done = true;
        }
        Ok(())
    }
}

impl FeatureSource for GpkgSource {
    fn next_feature(&mut self) -> Result<Option<Feature>> {
        if self.page.is_empty() && !self.done {
            self.fill()?;
        }
        Ok(self.page.pop_front())
    }
}

/// A GeoPackage being written.
pub struct GpkgSink {
    conn: Connection,
    path: String,
    table: String,
    insert: String,
    srs_id: i32,
    batch: usize,
    extent: BBox,
}

const BATCH_ROWS: usize = 10_000;

/// The GeoPackage geometry type name of a column.
fn gpkg_type(types: &[crate::spec::GeometryType]) -> &'static str {
    let kinds: std::collections::BTreeSet<GeometryKind> = types.iter().map(|t| t.kind).collect();
    if kinds.len() != 1 {
        return "GEOMETRY";
    }
    match kinds.iter().next() {
        Some(GeometryKind::Point) => "POINT",
        Some(GeometryKind::LineString) => "LINESTRING",
        Some(GeometryKind::Polygon) => "POLYGON",
        Some(GeometryKind::MultiPoint) => "MULTIPOINT",
        Some(GeometryKind::MultiLineString) => "MULTILINESTRING",
        Some(GeometryKind::MultiPolygon) => "MULTIPOLYGON",
        _ => "GEOMETRYCOLLECTION",
    }
}

/// Create a GeoPackage with one feature table named after the Marquet table.
pub fn create(output: &Path, table: &str, info: &SinkInfo) -> Result<GpkgSink> {
    let path = output.display().to_string();
    if output.exists() {
        std::fs::remove_file(output).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    }
    let conn = Connection::open(output).map_err(|e| err(&path, e))?;
    let name = table.trim_start_matches('/').replace('/', "_");
    let name = if name.is_empty() { "features".to_string() } else { name };
    let e = |x: rusqlite::Error| err(&path, x);
    conn.execute_batch(
        "PRAGMA application_id = 1196444487; PRAGMA user_version = 10400;
         CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER PRIMARY KEY, organization TEXT NOT NULL,
           organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL, description TEXT);
         CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL, identifier TEXT UNIQUE,
           description TEXT DEFAULT '', last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
           min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER,
           CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id));
         CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL, geometry_type_name TEXT NOT NULL,
           srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL,
           CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name),
           CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
           CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));
         INSERT INTO gpkg_spatial_ref_sys VALUES ('Undefined cartesian SRS', -1, 'NONE', -1, 'undefined', 'undefined cartesian coordinate reference system');
         INSERT INTO gpkg_spatial_ref_sys VALUES ('Undefined geographic SRS', 0, 'NONE', 0, 'undefined', 'undefined geographic coordinate reference system');",
    )
    .map_err(e)?;
    // WGS 84 (mandatory row), then the column's CRS.
    let wgs84 = crate::crs::to_wkt(&Crs::Default, crate::crs::WktDialect::Wkt1Gdal).ok().flatten().unwrap_or_else(|| crate::crs::CRS84_WKT1_ESRI.to_string());
    conn.execute("INSERT INTO gpkg_spatial_ref_sys VALUES ('WGS 84 geodetic', 4326, 'EPSG', 4326, ?1, 'longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid')", [&wgs84])
        .map_err(e)?;
    let srs_id = match &info.crs {
        Crs::Unknown => -1,
        Crs::Default => 4326,
        c => {
            let wkt = crate::crs::to_wkt(c, crate::crs::WktDialect::Wkt1Gdal).map_err(|m| err(&path, m))?.unwrap_or_else(|| "undefined".into());
            let (org, code) = crate::crs::epsg_like_code(c).unwrap_or_else(|| ("NONE".into(), 100_000));
            let id = if org.eq_ignore_ascii_case("EPSG") && code != 4326 && code > 0 { code } else { 100_000 };
            conn.execute(
                "INSERT INTO gpkg_spatial_ref_sys VALUES (?1, ?2, ?3, ?4, ?5, NULL)",
                rusqlite::params![c.display_name(), id, org, code, wkt],
            )
            .map_err(e)?;
            id
        }
    };
    let mut gname = "geom".to_string();
    while info.fields.iter().any(|(n, _)| n.eq_ignore_ascii_case(&gname)) || gname == "fid" {
        gname.push('_');
    }
    let mut cols = vec![format!("fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL"), format!("{} {}", ident(&gname), gpkg_type(&info.types))];
    for (n, k) in &info.fields {
        let t = match k {
            Kind::Int => "INTEGER",
            Kind::Float => "REAL",
            Kind::Bool => "BOOLEAN",
            Kind::Str => "TEXT",
            Kind::Bytes => "BLOB",
        };
        let n = if n.eq_ignore_ascii_case("fid") { format!("{n}_") } else { n.clone() };
        cols.push(format!("{} {t}", ident(&n)));
    }
    conn.execute_batch(&format!("CREATE TABLE {} ({})", ident(&name), cols.join(", "))).map_err(e)?;
    let z = info.types.iter().any(|t| t.dims.has_z()) as i32;
    let m = info.types.iter().any(|t| t.dims.has_m()) as i32;
    conn.execute("INSERT INTO gpkg_contents (table_name, data_type, identifier, srs_id) VALUES (?1, 'features', ?1, ?2)", rusqlite::params![name, srs_id])
        .map_err(e)?;
    conn.execute(
        "INSERT INTO gpkg_geometry_columns VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        rusqlite::params![name, gname, gpkg_type(&info.types), srs_id, z, m],
    )
    .map_err(e)?;
    let placeholders: Vec<String> = (1..=info.fields.len() + 1).map(|i| format!("?{i}")).collect();
    let names: Vec<String> = std::iter::once(ident(&gname))
        .chain(info.fields.iter().map(|(n, _)| ident(&if n.eq_ignore_ascii_case("fid") { format!("{n}_") } else { n.clone() })))
        .collect();
    let insert = format!("INSERT INTO {} ({}) VALUES ({})", ident(&name), names.join(", "), placeholders.join(", "));
    conn.execute_batch("BEGIN").map_err(e)?;
    Ok(GpkgSink { conn, path, table: name, insert, srs_id, batch: 0, extent: BBox::EMPTY })
}

impl FeatureSink for GpkgSink {
    fn write(&mut self, geometry: Option<&[u8]>, values: &[V]) -> Result<()> {
        let g = match geometry {
            None => rusqlite::types::Value::Null,
            Some(w) => {
                let b = crate::marquet::bounds::geometry_box(w, crate::spatial::geodesic::EdgeModel::Planar, false)
                    .map_err(|e| MarquetError::InvalidArgument(e.to_string()))?;
                self.extent = self.extent.union(&b);
                rusqlite::types::Value::Blob(wkb_to_gpb(w, self.srs_id, &b))
            }
        };
        let params = std::iter::once(g).chain(values.iter().map(|v| match v {
            V::Null => rusqlite::types::Value::Null,
            V::I(x) => rusqlite::types::Value::Integer(*x),
            V::F(x) => rusqlite::types::Value::Real(*x),
            V::B(x) => rusqlite::types::Value::Integer(*x as i64),
            V::S(s) => rusqlite::types::Value::Text(s.clone()),
            V::Bytes(b) => rusqlite::types::Value::Blob(b.clone()),
        }));
        let mut stmt = self.conn.prepare_cached(&self.insert).map_err(|e| err(&self.path, e))?;
        stmt.execute(params_from_iter(params)).map_err(|e| err(&self.path, e))?;
        drop(stmt);
        self.batch += 1;
        if self.batch >= BATCH_ROWS {
            self.conn.execute_batch("COMMIT; BEGIN").map_err(|e| err(&self.path, e))?;
            self.batch = 0;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let s = *self;
        if !s.extent.is_empty() {
            s.conn
                .execute(
                    "UPDATE gpkg_contents SET min_x = ?1, min_y = ?2, max_x = ?3, max_y = ?4 WHERE table_name = ?5",
                    rusqlite::params![s.extent.xmin, s.extent.ymin, s.extent.xmax, s.extent.ymax, s.table],
                )
                .map_err(|e| err(&s.path, e))?;
        }
        s.conn.execute_batch("COMMIT").map_err(|e| err(&s.path, e))?;
        s.conn.close().map_err(|(_, e)| err(&s.path, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn geopackage_binary_round_trip_and_bounds() {
        let w = crate::wkb::encode(
            &crate::wkb::Geometry::Point(crate::wkb::Point::new(crate::Dimensions::Xy, crate::wkb::Coord::xy(1.0, 2.0))),
            crate::wkb::ByteOrder::LittleEndian,
        );
        let b = BBox { xmin: 1.0, ymin: 2.0, xmax: 1.0, ymax: 2.0, ..BBox::EMPTY };
        let g = wkb_to_gpb(&w, 4326, &b);
        assert_eq!(&g[..4], &[b'G', b'P', 0, 0x03]);
        assert_eq!(gpb_to_wkb(&g).unwrap(), &w[..]);
        assert!(gpb_to_wkb(&g[..20]).is_err() || gpb_to_wkb(&g[..20]).unwrap().len() < w.len());
        assert!(gpb_to_wkb(b"XX\0\0\0\0\0\0").unwrap_err().contains("magic"));
        assert!(gpb_to_wkb(&[b'G', b'P', 0, 0x0E, 0, 0, 0, 0]).unwrap_err().contains("envelope code 7"));
        assert!(gpb_to_wkb(&[b'G', b'P', 0, 0x08, 0, 0, 0, 0]).unwrap_err().contains("longer than the blob"));
    }
}

//! HEP002 "Marquet" on H5Col: geometry columns, their storage forms and attributes,
//! covering columns, and summary maintenance on append (§11.1).

pub mod bounds;
pub mod checks;
pub mod compression;
pub mod projjson;
pub mod layout;
pub mod snapshot;
pub mod spatial_index;
pub mod order;
pub mod types;

use std::collections::{BTreeMap, BTreeSet};

pub use checks::OrientationOnWrite;
pub use compression::{Compression, Elements};
pub use layout::{RTreeChoice, WriteLayout};
pub use order::WriteOptions;
pub use spatial_index::{RTreeOnAppend, SpatialIndexKind};
pub use types::{Crs, Edges, StorageForm};

use crate::error::{MarquetError, Result};
use crate::h5::{self, Dtype, Filter, Space};
use crate::h5col::list::ListSpec;
use crate::h5col::{self, Array, Batch, ColumnKind, ColumnSpec, ColumnValues, File, ListArray, Table};
use crate::spec::{names, BBox, Dimensions, GeometryKind, GeometryType};
use crate::wkb::{self, ByteOrder, WkbInfo};
use rayon::prelude::*;

/// The zstd level of geometry data compressed with [`Compression::zstd`]. Level 1 against
/// level 3 on the issue #10 data (`marquet bench`, 2 cores): 200,000 polygons written in
/// 0.53 s instead of 0.68 s for 0.3 % more bytes (78.45 vs 78.22 MB); WKB of random doubles
/// barely compresses further at any level (docs/PERFORMANCE.md).
pub const GEOMETRY_ZSTD_LEVEL: u32 = compression::DEFAULT_ZSTD_LEVEL;

/// Default chunk length in rows of geometry columns (point and fixed-WKB datasets, WKB
/// `OFFSETS`). A window query reads a few rows and HDF5 decompresses whole chunks: with
/// 65,536-row chunks a query over 1,000,000 points took 21 ms, with 8,192-row chunks 1.1 ms
/// (docs/PERFORMANCE.md, "Query layout round"); with deflate (the default since issue #16)
/// 2,048-row chunks cost 21 % fewer instructions per query than 8,192 for 0.9 % more bytes
/// (docs/PERFORMANCE.md, "Default layout").
pub const GEOMETRY_CHUNK_ROWS: u64 = 2_048;

/// Default chunk length in bytes of variable-length WKB `VALUES` (see
/// [`GEOMETRY_CHUNK_ROWS`]): 32 KiB chunks cost 25 % fewer instructions per polygon query
/// than 256 KiB with deflate, at the same file size (docs/PERFORMANCE.md, "Default layout").
pub const GEOMETRY_VALUES_CHUNK_BYTES: u64 = 32 * 1024;

/// Default filters of WKB bytes (variable-length VALUES): [`Compression::default`] for
/// bytes, deflate without shuffle, which every HDF5 reads without plugins.
pub fn default_wkb_filters() -> Vec<Filter> {
    Compression::default().filters(Elements::Bytes)
}

/// Default filters of point columns, fixed-length WKB, WKB `OFFSETS` and covering columns:
/// [`Compression::default`] for numbers, shuffle (which groups the bytes of doubles by
/// significance) then deflate.
pub fn default_point_filters() -> Vec<Filter> {
    Compression::default().filters(Elements::Numbers)
}

/// Rows per block of the parallel per-row work in [`MarquetTable::prepare`].
const PAR_BLOCK_ROWS: usize = 16_384;

/// `f(i)` for every row `i` in `0..n`, on all cores in blocks. Deterministic: the error of
/// the lowest failing row is returned, as a sequential loop would.
fn par_rows<T: Send>(n: usize, f: impl Fn(usize) -> Result<T> + Sync) -> Result<Vec<T>> {
    let blocks: Vec<Result<Vec<T>>> = (0..n.div_ceil(PAR_BLOCK_ROWS))
        .into_par_iter()
        .map(|b| (b * PAR_BLOCK_ROWS..((b + 1) * PAR_BLOCK_ROWS).min(n)).map(&f).collect())
        .collect();
    let mut out = Vec::with_capacity(n);
    for b in blocks {
        out.extend(b?);
    }
    Ok(out)
}

/// How a new geometry column is to be created.
#[derive(Debug, Clone)]
pub struct GeometryColumnSpec {
    /// Storage form; `None` lets the first append choose (points of one dimension → point
    /// column; anything else → variable-length WKB).
    pub form: Option<StorageForm>,
    pub crs: Crs,
    pub epoch: Option<f64>,
    /// `None` writes no EDGES attribute (planar).
    pub edges: Option<Edges>,
    pub orientation_ccw: bool,
    /// Create a covering column of this name (f64, or f32 when `covering_f32`).
    pub covering: Option<String>,
    pub covering_f32: bool,
    /// Give the covering column Z fields (`zmin`, `zmax`, HEP002 §10.5): for columns whose
    /// geometries all have Z.
    pub covering_z: bool,
    pub description: Option<String>,
    /// Chunk length in rows for rank-1 forms and OFFSETS.
    pub chunk_rows: u64,
    /// Chunk length in bytes of a variable-length WKB column's VALUES (default 1 MiB).
    /// Smaller chunks make reads of a few rows cheaper (each read decompresses whole
    /// chunks); larger ones compress a little better.
    pub values_chunk_bytes: u64,
    /// How the column's data, WKB `OFFSETS`, covering column and PACKED_RTREE are
    /// compressed (default: shuffle + deflate, readable by every HDF5).
    pub compression: Compression,
    /// Filters for WKB bytes / point data, overriding `compression` for them (WKB
    /// `OFFSETS` then keep H5Col's deflate 4).
    pub filters: Option<Vec<Filter>>,
}

impl Default for GeometryColumnSpec {
    fn default() -> Self {
        GeometryColumnSpec {
            form: None,
            crs: Crs::Default,
            epoch: None,
            edges: None,
            orientation_ccw: false,
            covering: None,
            covering_f32: false,
            covering_z: false,
            description: None,
            chunk_rows: GEOMETRY_CHUNK_ROWS,
            values_chunk_bytes: GEOMETRY_VALUES_CHUNK_BYTES,
            compression: Compression::default(),
            filters: None,
        }
    }
}

impl GeometryColumnSpec {
    pub fn with_form(mut self, f: StorageForm) -> Self {
        self.form = Some(f);
        self
    }
    pub fn with_crs(mut self, c: Crs) -> Self {
        self.crs = c;
        self
    }
    pub fn with_edges(mut self, e: Edges) -> Self {
        self.edges = Some(e);
        self
    }
    pub fn with_orientation_ccw(mut self) -> Self {
        self.orientation_ccw = true;
        self
    }
    pub fn with_covering(mut self, name: &str) -> Self {
        self.covering = Some(name.to_string());
        self
    }
    /// A covering column with Z fields (see [`GeometryColumnSpec::covering_z`]).
    pub fn with_covering_z(mut self, name: &str) -> Self {
        self.covering = Some(name.to_string());
        self.covering_z = true;
        self
    }
    pub fn with_epoch(mut self, e: f64) -> Self {
        self.epoch = Some(e);
        self
    }
    pub fn with_values_chunk_bytes(mut self, n: u64) -> Self {
        self.values_chunk_bytes = n.max(1);
        self
    }
    pub fn with_chunk_rows(mut self, n: u64) -> Self {
        self.chunk_rows = n.max(1);
        self
    }
    pub fn with_filters(mut self, f: Vec<Filter>) -> Self {
        self.filters = Some(f);
        self
    }
    /// Compress the column's data, OFFSETS, covering column and R-tree this way.
    pub fn with_compression(mut self, c: Compression) -> Self {
        self.compression = c;
        self
    }
}

/// What a geometry column is, as read from the file.
#[derive(Debug, Clone)]
pub struct GeometryColumnInfo {
    pub name: String,
    pub path: String,
    pub form: StorageForm,
    /// `None` when GEOMETRY_TYPES is empty (types unknown).
    pub types: Option<Vec<GeometryType>>,
    /// The BBOX attribute and whether it carried Z / M fields.
    pub bbox: Option<(BBox, bool, bool)>,
    pub crs: Crs,
    pub epoch: Option<f64>,
    pub edges: Edges,
    /// True when ORIENTATION = COUNTERCLOCKWISE.
    pub orientation_ccw: bool,
    /// Name of the covering column.
    pub covering: Option<String>,
}

/// Geometry values for one column in an append.
#[derive(Debug, Clone)]
pub enum GeometryValues {
    /// One WKB value per row (`None` = null).
    Wkb(Vec<Option<Vec<u8>>>),
    /// Point coordinates as separate arrays; `valid[i] == false` = null; NaN x and y = empty.
    Points { dims: Dimensions, x: Vec<f64>, y: Vec<f64>, z: Option<Vec<f64>>, m: Option<Vec<f64>>, valid: Option<Vec<bool>> },
}

impl GeometryValues {
    /// From geo-types geometries (XY).
    pub fn from_geo(v: &[Option<geo_types::Geometry<f64>>]) -> GeometryValues {
        GeometryValues::Wkb(
            v.iter()
                .map(|g| g.as_ref().map(|g| wkb::encode(&wkb::Geometry::from(g), ByteOrder::LittleEndian)))
                .collect(),
        )
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            GeometryValues::Wkb(v) => v.len(),
            GeometryValues::Points { x, .. } => x.len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A batch of rows for a Marquet table: geometry columns plus ordinary H5Col columns.
#[derive(Debug, Clone, Default)]
pub struct GeoBatch {
    pub geometries: BTreeMap<String, GeometryValues>,
    pub columns: Batch,
}

impl GeoBatch {
    pub fn new() -> GeoBatch {
        GeoBatch::default()
    }
    pub fn with_geometry(mut self, name: &str, v: GeometryValues) -> Self {
        self.geometries.insert(name.to_string(), v);
        self
    }
    pub fn with_column(mut self, name: &str, v: ColumnValues) -> Self {
        self.columns.columns.insert(name.to_string(), v);
        self
    }
    pub fn with_array(self, name: &str, a: Array) -> Self {
        self.with_column(name, ColumnValues::array(a))
    }
}

/// What one row of a geometry column summarizes to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RowInfo {
    Null,
    Geometry(WkbInfo),
}

/// Read the WKB values of rows in a compact buffer: `bytes[offsets[i]..offsets[i+1]]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WkbBuffer {
    pub bytes: Vec<u8>,
    pub offsets: Vec<u64>,
    pub valid: Vec<bool>,
}

impl WkbBuffer {
    /// An empty buffer (no rows; `offsets` holds the leading 0).
    pub fn new() -> WkbBuffer {
        WkbBuffer { bytes: Vec::new(), offsets: vec![0], valid: Vec::new() }
    }
    pub fn len(&self) -> usize {
        self.valid.len()
    }
    pub fn is_empty(&self) -> bool {
        self.valid.is_empty()
    }
    /// The WKB value of row `i` (relative to the buffer), `None` when null. Zero-copy.
    pub fn get(&self, i: usize) -> Option<&[u8]> {
        if !self.valid[i] {
            return None;
        }
        Some(&self.bytes[self.offsets[i] as usize..self.offsets[i + 1] as usize])
    }
    pub(crate) fn push(&mut self, v: Option<&[u8]>) {
        if self.offsets.is_empty() {
            self.offsets.push(0);
        }
        if let Some(b) = v {
            self.bytes.extend_from_slice(b);
        }
        self.valid.push(v.is_some());
        self.offsets.push(self.bytes.len() as u64);
    }
}

/// Coordinates of a point column's rows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PointArrays {
    pub x: Vec<f64>,
    pub y: Vec<f64>,
    pub z: Option<Vec<f64>>,
    pub m: Option<Vec<f64>>,
    /// `false` = null row.
    pub valid: Vec<bool>,
}

/// An open Marquet table.
pub struct MarquetTable {
    table: Table,
    /// False when MARQUET_VERSION's MAJOR is higher than we implement (R16).
    interpretable: bool,
    /// What [`MarquetTable::append`] does to valid packed R-trees (HEP002 §10.4).
    rtree_on_append: spatial_index::RTreeOnAppend,
    /// What appends and updates do with rings that break ORIENTATION (HEP002 §9.2).
    orientation_on_write: OrientationOnWrite,
}

/// Parse the Marquet version leniently; `None` if it is not MAJOR.MINOR[.PATCH].
pub fn marquet_major(table: &Table) -> Result<Option<u64>> {
    Ok(h5col::read_token(table.id(), names::MARQUET_VERSION)?.and_then(|v| h5col::parse_version(&v)).map(|v| v.0))
}

/// Is the group a Marquet table (CLASS=COLUMN_TABLE and MARQUET_VERSION present, §5.1)?
pub fn is_marquet_table(table: &Table) -> Result<bool> {
    h5::attr_exists(table.id(), names::MARQUET_VERSION)
}

impl MarquetTable {
    /// Create an empty Marquet table at `path`. MARQUET_VERSION and GEOMETRY_COLUMNS are
    /// written with the first geometry column (a table without one is not conformant).
    pub fn create(file: &File, path: &str) -> Result<MarquetTable> {
        let table = file.create_table(path)?;
        Ok(MarquetTable { table, interpretable: true, rtree_on_append: Default::default(), orientation_on_write: Default::default() })
    }

    /// Open a Marquet table (R16: a higher MAJOR opens, but geometry is not interpreted).
    pub fn open(file: &File, path: &str) -> Result<MarquetTable> {
        let table = file.table(path)?;
        MarquetTable::from_table(table)
    }

    /// Wrap an H5Col table that carries MARQUET_VERSION.
    pub fn from_table(table: Table) -> Result<MarquetTable> {
        if !is_marquet_table(&table)? {
            return Err(MarquetError::NotATable {
                path: table.path().to_string(),
                reason: "no MARQUET_VERSION attribute: an H5Col table but not a Marquet table".into(),
            });
        }
        let interpretable = match marquet_major(&table)? {
            Some(m) => m <= 1,
            None => {
                return Err(MarquetError::spec(table.path(), "HEP002 §5.1", "MARQUET_VERSION is not MAJOR.MINOR"))
            }
        };
        Ok(MarquetTable { table, interpretable, rtree_on_append: Default::default(), orientation_on_write: Default::default() })
    }

    /// The underlying H5Col table.
    pub fn table(&self) -> &Table {
        &self.table
    }
    /// Can this library interpret the geometry columns (R16)?
    pub fn is_interpretable(&self) -> bool {
        self.interpretable
    }
    pub fn path(&self) -> &str {
        self.table.path()
    }

    /// Why geometry column `name` cannot be read as geometries, or `None` when it can: a
    /// MARQUET_VERSION whose MAJOR this library does not implement (ruling R16, HEP002
    /// §5.1), or a GEOMETRY_ENCODING it does not implement (§6.2). Such a column stays
    /// readable as ordinary H5Col data, and `info`, `dump` and export present it so instead
    /// of failing on the file.
    pub fn not_interpretable(&self, name: &str) -> Result<Option<String>> {
        if !self.interpretable {
            let v = h5col::read_token(self.table.id(), names::MARQUET_VERSION)?.unwrap_or_default();
            return Ok(Some(format!("marquet_version {v:?} is newer than this library implements (1.x, ruling r16)")));
        }
        let o = h5::object_open(self.table.id(), name)?;
        match h5col::read_token(o.id(), names::GEOMETRY_ENCODING)? {
            Some(e) if e != names::ENCODING_WKB && e != names::ENCODING_POINT => {
                Ok(Some(format!("geometry_encoding {e:?} is not implemented by this library (hep002 §6.2)")))
            }
            _ => Ok(None),
        }
    }
    pub fn nrows(&self) -> Result<u64> {
        self.table.nrows()
    }

    fn require_interpretable(&self) -> Result<()> {
        if self.interpretable {
            Ok(())
        } else {
            Err(MarquetError::UnsupportedVersion {
                path: self.path().to_string(),
                what: "MARQUET_VERSION",
                found: h5col::read_token(self.table.id(), names::MARQUET_VERSION)?.unwrap_or_default(),
                supported: "1.x",
            })
        }
    }

    /// Names of the geometry columns, primary first (GEOMETRY_COLUMNS).
    pub fn geometry_column_names(&self) -> Result<Vec<String>> {
        let Some((refs, _, _)) = h5::attr_read_refs(self.table.id(), names::GEOMETRY_COLUMNS)? else {
            return Ok(Vec::new());
        };
        refs.into_iter()
            .map(|r| {
                r.map(|p| p.rsplit('/').next().unwrap_or_default().to_string()).ok_or_else(|| {
                    MarquetError::spec(self.path(), "HEP002 §5.2", "GEOMETRY_COLUMNS holds a null or dangling reference")
                })
            })
            .collect()
    }

    /// The primary geometry column's name.
    pub fn primary_geometry_column(&self) -> Result<String> {
        self.geometry_column_names()?
            .into_iter()
            .next()
            .ok_or_else(|| MarquetError::spec(self.path(), "HEP002 §5.2", "table has no geometry columns"))
    }

    /// Add a geometry column. With `spec.form == None` the form is chosen at the first
    /// append from the data; until then the column does not exist in the file.
    pub fn add_geometry_column(&mut self, name: &str, spec: &GeometryColumnSpec) -> Result<()> {
        self.create_geometry_column(name, spec, true)
    }

    /// Create the column and all its attributes; with `register` also GEOMETRY_ENCODING and
    /// the GEOMETRY_COLUMNS entry (without, it stays an ordinary H5Col column: §11.2 step 1).
    pub(crate) fn create_geometry_column(&mut self, name: &str, spec: &GeometryColumnSpec, register: bool) -> Result<()> {
        self.require_interpretable()?;
        let form = spec.form.ok_or_else(|| {
            MarquetError::InvalidArgument(
                "add_geometry_column needs a storage form; use create_with_data to choose it from data".into(),
            )
        })?;
        if let Some(Edges::Unknown(e)) = &spec.edges {
            return Err(MarquetError::InvalidArgument(format!("unknown EDGES {e:?}")));
        }
        if let Crs::ProjJson(doc) = &spec.crs {
            // Only a PROJJSON coordinate reference system is ever written (HEP002 §8.1).
            projjson::check_projjson(doc).map_err(|e| MarquetError::Refused {
                path: self.table.member_path(name),
                row: None,
                rule: "HEP002 §8.1, §12 req 11",
                message: format!("crs is not a projjson coordinate reference system: {e}"),
            })?;
        }
        if spec.edges.as_ref().is_some_and(|e| !e.is_planar()) && !spec.crs.is_geographic() {
            return Err(MarquetError::InvalidArgument(
                "non-planar EDGES need a geographic CRS (HEP002 §9.1)".into(),
            ));
        }
        let t = &self.table;
        let filters = spec.filters.clone();
        let gid = match form {
            StorageForm::VarWkb => {
                let explicit = filters.is_some();
                let mut lspec = ListSpec::bytes(filters.unwrap_or_else(|| spec.compression.filters(Elements::Bytes)));
                lspec.offsets_chunk = spec.chunk_rows;
                if !explicit {
                    // Offsets are monotonic u64: shuffle first halves them (docs/PERFORMANCE.md).
                    lspec.offsets_filters = spec.compression.filters(Elements::Numbers);
                }
                if let h5col::list::LeafSpec::Dataset { chunk, .. } = &mut lspec.leaf {
                    *chunk = spec.values_chunk_bytes.max(1);
                }
                let lc = t.add_list_column(name, &lspec)?;
                h5::object_open(lc.id(), ".")?
            }
            StorageForm::FixedWkb { size } => {
                if size < 5 {
                    return Err(MarquetError::InvalidArgument(format!("fixed WKB size {size} is too small")));
                }
                let c = t.add_column(
                    name,
                    &ColumnSpec::new(Dtype::Opaque { size, tag: names::OPAQUE_TAG_WKB.into() })
                        .with_chunk_rows(spec.chunk_rows)
                        .with_filters(filters.unwrap_or_else(|| spec.compression.filters(Elements::Numbers))),
                )?;
                h5::object_open(c.id(), ".")?
            }
            StorageForm::Point { dims, f32 } => {
                let c = t.add_column(
                    name,
                    &ColumnSpec::new(types::point_dtype(dims, f32))
                        .with_chunk_rows(spec.chunk_rows)
                        .with_filters(filters.unwrap_or_else(|| spec.compression.filters(Elements::Numbers))),
                )?;
                h5::object_open(c.id(), ".")?
            }
        };
        let id = gid.id();
        // Geometry-column attributes: all but GEOMETRY_ENCODING first, so a crash leaves
        // an ordinary H5Col column rather than a half-described geometry column (cf. §11.2).
        let gt = types::geometry_types_dtype();
        let initial: Vec<u8> = match form {
            StorageForm::Point { dims, .. } => (GeometryType::new(GeometryKind::Point, dims).iso_code() as u16).to_le_bytes().to_vec(),
            _ => Vec::new(),
        };
        let n = initial.len() as u64 / 2;
        h5::attr_write(id, names::GEOMETRY_TYPES, &gt, &Space::Simple(vec![n]), &initial)?;
        match &spec.crs {
            Crs::Default => {}
            Crs::ProjJson(doc) => h5::attr_write_utf8(id, names::CRS, doc)?,
            Crs::Unknown => h5::attr_write(id, names::CRS, &Dtype::ascii_for(""), &Space::Null, &[])?,
        }
        if let Some(e) = spec.epoch {
            h5::attr_write(id, names::EPOCH, &Dtype::F64, &Space::Scalar, &e.to_le_bytes())?;
        }
        if let Some(e) = &spec.edges {
            let code = e.code().unwrap_or(0);
            h5::attr_write(id, names::EDGES, &types::edges_dtype(), &Space::Scalar, &[code])?;
        }
        if spec.orientation_ccw {
            h5::attr_write(id, names::ORIENTATION, &types::orientation_dtype(), &Space::Scalar, &[1])?;
        }
        if let Some(d) = &spec.description {
            h5::attr_write_utf8(id, names::DESCRIPTION, d)?;
        }
        if let Some(cov) = &spec.covering {
            let z = spec.covering_z;
            let dt = types::covering_dtype(z, spec.covering_f32);
            let fill = h5col::recommended_fill(&dt)?;
            let c = t.add_column(
                cov,
                &ColumnSpec { fill, ..ColumnSpec::new(dt).with_chunk_rows(spec.chunk_rows).with_filters(spec.compression.filters(Elements::Numbers)) },
            )?;
            drop(c);
            h5::attr_write_refs(id, names::COVERING, &[t.member_path(cov)], true)?;
        }
        if !register {
            return Ok(());
        }
        h5::attr_write_ascii(id, names::GEOMETRY_ENCODING, form.encoding())?;
        // Table-level: GEOMETRY_COLUMNS (primary first), then the marker.
        let mut cols = self.geometry_column_names()?;
        cols.push(name.to_string());
        h5::attr_write_refs(t.id(), names::GEOMETRY_COLUMNS, &cols, false)?;
        if !h5::attr_exists(t.id(), names::MARQUET_VERSION)? {
            h5::attr_write_ascii(t.id(), names::MARQUET_VERSION, names::MARQUET_VERSION_VALUE)?;
        }
        Ok(())
    }

    /// Add an ordinary H5Col column.
    pub fn add_column(&self, name: &str, spec: &ColumnSpec) -> Result<h5col::Column> {
        self.table.add_column(name, spec)
    }

    /// How geometry column `col`'s data is compressed, read from its stored filters (the
    /// point or fixed-WKB dataset, or the WKB `VALUES`); `None` when it uses filters that
    /// [`Compression`] does not describe. The column's PACKED_RTREE is compressed the same
    /// way when built.
    pub fn geometry_compression(&self, col: &str) -> Result<Option<Compression>> {
        let info = self.geometry_column(col)?;
        let (rel, path) = match info.form {
            StorageForm::VarWkb => (format!("{col}/{}", names::VALUES), format!("{}/{}", info.path, names::VALUES)),
            _ => (col.to_string(), info.path.clone()),
        };
        let ds = h5::dataset_open(self.table.id(), &rel)?;
        Ok(Compression::from_filters(&h5::dataset_info(ds.id(), &path)?.filters))
    }

    /// Describe a geometry column.
    pub fn geometry_column(&self, name: &str) -> Result<GeometryColumnInfo> {
        self.require_interpretable()?;
        let t = &self.table;
        let path = t.member_path(name);
        let kind = t.kind_of(name)?;
        let o = h5::object_open(t.id(), name)?;
        let id = o.id();
        let enc = h5col::read_token(id, names::GEOMETRY_ENCODING)?
            .ok_or_else(|| MarquetError::spec(&path, "HEP002 §6.2", "GEOMETRY_ENCODING missing"))?;
        let form = match (enc.as_str(), kind) {
            (names::ENCODING_WKB, Some(ColumnKind::List)) => StorageForm::VarWkb,
            (names::ENCODING_WKB, Some(ColumnKind::Dataset)) => {
                let c = t.column(name)?;
                match c.dtype() {
                    Dtype::Opaque { size, tag } if tag == names::OPAQUE_TAG_WKB => StorageForm::FixedWkb { size: *size },
                    other => {
                        return Err(MarquetError::spec(
                            &path,
                            "HEP002 §12 req 5",
                            format!("WKB column dataset must be opaque tagged \"WKB\", found {other:?}"),
                        ))
                    }
                }
            }
            (names::ENCODING_POINT, Some(ColumnKind::Dataset)) => {
                let c = t.column(name)?;
                let (dims, f32) = types::point_layout(c.dtype()).ok_or_else(|| {
                    MarquetError::spec(&path, "HEP002 §12 req 10", format!("not a point compound: {:?}", c.dtype()))
                })?;
                StorageForm::Point { dims, f32 }
            }
            (e, k) => {
                if e != names::ENCODING_WKB && e != names::ENCODING_POINT {
                    return Err(MarquetError::Unsupported(format!("{path}: GEOMETRY_ENCODING {e:?} is not implemented")));
                }
                return Err(MarquetError::spec(&path, "HEP002 §12 req 5", format!("encoding {e} on a {k:?} object")));
            }
        };
        let types = match h5::attr_read(id, names::GEOMETRY_TYPES)? {
            Some(a) => {
                let v = types::read_geometry_types(&a).map_err(|m| MarquetError::spec(&path, "HEP002 §6.3", m))?;
                if v.is_empty() {
                    None
                } else {
                    Some(v)
                }
            }
            None => return Err(MarquetError::spec(&path, "HEP002 §6.1", "GEOMETRY_TYPES missing")),
        };
        let bbox = match h5::attr_read(id, names::BBOX)? {
            Some(a) => types::decode_box(&a.dtype, &a.data),
            None => None,
        };
        let crs = match h5::attr_read(id, names::CRS)? {
            None => Crs::Default,
            Some(a) if a.space == Space::Null => Crs::Unknown,
            Some(a) => match a.as_str() {
                Some(s) => Crs::ProjJson(s.to_string()),
                None => return Err(MarquetError::spec(&path, "HEP002 §8.1", "CRS is not a scalar string")),
            },
        };
        let epoch = h5::attr_read(id, names::EPOCH)?.and_then(|a| a.as_f64());
        let edges = match h5::attr_read(id, names::EDGES)? {
            None => Edges::Planar,
            Some(a) => match a.enum_names().and_then(|v| v.into_iter().next()).flatten() {
                Some(n) => Edges::from_name(&n),
                None => Edges::Unknown("?".into()),
            },
        };
        let orientation_ccw = match h5::attr_read(id, names::ORIENTATION)? {
            Some(a) => a.enum_names().and_then(|v| v.into_iter().next()).flatten().as_deref() == Some("COUNTERCLOCKWISE"),
            None => false,
        };
        let covering = match h5::attr_read_refs(id, names::COVERING)? {
            Some((r, _, _)) => r.into_iter().next().flatten().map(|p| p.rsplit('/').next().unwrap_or_default().to_string()),
            None => None,
        };
        Ok(GeometryColumnInfo { name: name.to_string(), path, form, types, bbox, crs, epoch, edges, orientation_ccw, covering })
    }

    /// Encode and summarize geometry values for column `info`; returns the H5Col values
    /// and per-row summaries. Nothing is written; a value that does not fit the form is
    /// refused here, before the file changes (HEP002 §11.2).
    pub fn prepare(&self, info: &GeometryColumnInfo, v: &GeometryValues) -> Result<(ColumnValues, Vec<RowInfo>)> {
        let path = &info.path;
        match (info.form, v) {
            (StorageForm::Point { dims, f32 }, GeometryValues::Points { dims: d2, x, y, z, m, valid }) => {
                if *d2 != dims {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{path}: {d2:?} points cannot be stored in a {dims:?} point column; replace the column first (HEP002 §11.2)"
                    )));
                }
                let n = x.len();
                let lens_ok = y.len() == n
                    && z.as_ref().map(|v| v.len() == n).unwrap_or(!dims.has_z())
                    && m.as_ref().map(|v| v.len() == n).unwrap_or(!dims.has_m())
                    && valid.as_ref().map(|v| v.len() == n).unwrap_or(true);
                if !lens_ok {
                    return Err(MarquetError::InvalidArgument(format!("{path}: coordinate arrays differ in length or miss Z/M")));
                }
                let dt = types::point_dtype(dims, f32);
                let gt = GeometryType::new(GeometryKind::Point, dims);
                let nd = dims.size();
                let es = dt.size();
                // Per row, on all cores in blocks, straight into the output buffers (no
                // allocation per point, no intermediate vectors): the summary, the bytes.
                let mut bytes = vec![0u8; n * es];
                let mut rows = vec![RowInfo::Null; n];
                let mut missing = vec![false; n];
                let row = |i: usize, out: &mut [u8], r: &mut RowInfo, miss: &mut bool| -> Result<()> {
                    if !valid.as_ref().map(|v| v[i]).unwrap_or(true) {
                        *miss = true;
                        return Ok(());
                    }
                    let c = [x[i], y[i], z.as_ref().map(|v| v[i]).unwrap_or(f64::NAN), m.as_ref().map(|v| v[i]).unwrap_or(f64::NAN)];
                    // Summaries of an f32 column from the values as stored (HEP002 §7.4).
                    let c = if f32 { checks::stored_f32(c) } else { c };
                    let empty = c[0].is_nan() && c[1].is_nan();
                    if !empty && (c[0].is_nan() || c[1].is_nan()) {
                        return Err(MarquetError::InvalidArgument(format!(
                            "{path} row {i}: a point needs both x and y, or neither (empty) (HEP002 §7.4)"
                        )));
                    }
                    let mut bbox = BBox::EMPTY;
                    let mut o = [f64::NAN; 4];
                    if !empty {
                        bbox.add_xy(c[0], c[1]);
                        o[0] = c[0];
                        o[1] = c[1];
                        let mut k = 2;
                        if dims.has_z() {
                            o[k] = c[2];
                            bbox.add_z(c[2]);
                            k += 1;
                        }
                        if dims.has_m() {
                            o[k] = c[3];
                            bbox.add_m(c[3]);
                        }
                    }
                    // The fill value must not be a stored point (it would read as null).
                    let fillv = names::FILL_F64;
                    if !empty && c[0] == fillv && c[1] == fillv {
                        return Err(MarquetError::InvalidArgument(format!("{path} row {i}: coordinates equal the fill value")));
                    }
                    for (k, v) in o[..nd].iter().enumerate() {
                        if f32 {
                            out[4 * k..4 * k + 4].copy_from_slice(&(*v as f32).to_le_bytes());
                        } else {
                            out[8 * k..8 * k + 8].copy_from_slice(&v.to_le_bytes());
                        }
                    }
                    *r = RowInfo::Geometry(WkbInfo { geometry_type: gt, bbox, is_empty: empty, num_coords: 1 });
                    Ok(())
                };
                if es > 0 {
                    // Blocks in row order; the first error of the lowest block is the
                    // lowest failing row, as a sequential loop would report.
                    let results: Vec<Result<()>> = bytes
                        .par_chunks_mut(PAR_BLOCK_ROWS * es)
                        .zip(rows.par_chunks_mut(PAR_BLOCK_ROWS))
                        .zip(missing.par_chunks_mut(PAR_BLOCK_ROWS))
                        .enumerate()
                        .map(|(blk, ((bb, rr), mm))| {
                            for j in 0..rr.len() {
                                row(blk * PAR_BLOCK_ROWS + j, &mut bb[j * es..(j + 1) * es], &mut rr[j], &mut mm[j])?;
                            }
                            Ok(())
                        })
                        .collect();
                    results.into_iter().collect::<Result<()>>()?;
                }
                Ok((ColumnValues::Array { values: Array { dtype: dt, bytes }, missing: Some(missing) }, rows))
            }
            (StorageForm::Point { dims, f32 }, GeometryValues::Wkb(vals)) => {
                // Decode point WKB into coordinates.
                let n = vals.len();
                let (mut x, mut y) = (Vec::with_capacity(n), Vec::with_capacity(n));
                let mut z = dims.has_z().then(|| Vec::with_capacity(n));
                let mut m = dims.has_m().then(|| Vec::with_capacity(n));
                let mut valid = Vec::with_capacity(n);
                for (i, v) in vals.iter().enumerate() {
                    match v {
                        None => {
                            x.push(f64::NAN);
                            y.push(f64::NAN);
                            z.as_mut().map(|v| v.push(f64::NAN));
                            m.as_mut().map(|v| v.push(f64::NAN));
                            valid.push(false);
                        }
                        Some(b) => {
                            let g = wkb::decode(b).map_err(|e| e.into_marquet(path.clone(), Some(i as u64)))?;
                            let gt = g.geometry_type();
                            let wkb::Geometry::Point(p) = g else {
                                return Err(MarquetError::InvalidArgument(format!(
                                    "{path} row {i}: a {} cannot be stored in a point column; replace the column first (HEP002 §11.2)",
                                    gt
                                )));
                            };
                            if p.dims != dims {
                                return Err(MarquetError::InvalidArgument(format!(
                                    "{path} row {i}: {} cannot be stored in a {dims:?} point column; replace the column first (HEP002 §11.2)",
                                    gt
                                )));
                            }
                            x.push(p.coord.x);
                            y.push(p.coord.y);
                            z.as_mut().map(|v| v.push(p.coord.z));
                            m.as_mut().map(|v| v.push(p.coord.m));
                            valid.push(true);
                        }
                    }
                }
                let _ = f32;
                self.prepare(info, &GeometryValues::Points { dims, x, y, z, m, valid: Some(valid) })
            }
            (StorageForm::FixedWkb { size }, GeometryValues::Wkb(vals)) => {
                let mut bytes = Vec::with_capacity(vals.len() * size);
                let mut rows = Vec::with_capacity(vals.len());
                let mut missing = vec![false; vals.len()];
                for (i, v) in vals.iter().enumerate() {
                    match v {
                        None => {
                            missing[i] = true;
                            bytes.extend(std::iter::repeat_n(0u8, size));
                            rows.push(RowInfo::Null);
                        }
                        Some(b) => {
                            if b.len() != size {
                                return Err(MarquetError::InvalidArgument(format!(
                                    "{path} row {i}: a {}-byte WKB value does not fit this {size}-byte fixed-length column; replace the column first (HEP002 §11.2)",
                                    b.len()
                                )));
                            }
                            let inf = wkb::scan(b).map_err(|e| e.into_marquet(path.clone(), Some(i as u64)))?;
                            bytes.extend_from_slice(b);
                            rows.push(RowInfo::Geometry(inf));
                        }
                    }
                }
                bounds::grow_rows(info, &mut rows, |i| vals[i].as_deref())?;
                let dt = Dtype::Opaque { size, tag: names::OPAQUE_TAG_WKB.into() };
                Ok((ColumnValues::Array { values: Array { dtype: dt, bytes }, missing: Some(missing) }, rows))
            }
            (StorageForm::FixedWkb { .. } | StorageForm::VarWkb, GeometryValues::Points { dims, x, y, z, m, valid }) => {
                let vals: Vec<Option<Vec<u8>>> = (0..x.len())
                    .map(|i| {
                        if !valid.as_ref().map(|v| v[i]).unwrap_or(true) {
                            return None;
                        }
                        let c = wkb::Coord {
                            x: x[i],
                            y: y[i],
                            z: z.as_ref().map(|v| v[i]).unwrap_or(f64::NAN),
                            m: m.as_ref().map(|v| v[i]).unwrap_or(f64::NAN),
                        };
                        Some(wkb::encode(&wkb::Geometry::Point(wkb::Point { dims: *dims, coord: c }), ByteOrder::LittleEndian))
                    })
                    .collect();
                self.prepare(info, &GeometryValues::Wkb(vals))
            }
            (StorageForm::VarWkb, GeometryValues::Wkb(vals)) => {
                let mut rows = par_rows(vals.len(), |i| {
                    Ok(match &vals[i] {
                        None => RowInfo::Null,
                        Some(b) => RowInfo::Geometry(wkb::scan(b).map_err(|e| e.into_marquet(path.clone(), Some(i as u64)))?),
                    })
                })?;
                bounds::grow_rows(info, &mut rows, |i| vals[i].as_deref())?;
                let list = ListArray::from_bytes_rows(vals.iter().map(|v| v.as_deref()));
                Ok((ColumnValues::List(list), rows))
            }
        }
    }

    /// Append rows (HEP002 §11.1 over HEP001 §12.3): geometry values are encoded and
    /// checked first; covering rows are written with the geometries; BBOX and
    /// GEOMETRY_TYPES are widened before NROWS is committed.
    pub fn append(&self, batch: &GeoBatch) -> Result<u64> {
        self.append_with_options(batch, self.rtree_on_append)
    }

    /// What [`MarquetTable::append`] and [`MarquetTable::append_sorted`] do to valid packed
    /// R-trees: rebuild them in place (the default) or leave them stale.
    pub fn set_rtree_on_append(&mut self, v: spatial_index::RTreeOnAppend) {
        self.rtree_on_append = v;
    }

    /// The table-level R-tree policy on append.
    pub fn rtree_on_append(&self) -> spatial_index::RTreeOnAppend {
        self.rtree_on_append
    }

    /// What appends and updates do with polygon rings that break a column's
    /// `ORIENTATION = COUNTERCLOCKWISE` (HEP002 §9.2): refuse them (the default) or re-wind
    /// them.
    pub fn set_orientation_on_write(&mut self, v: OrientationOnWrite) {
        self.orientation_on_write = v;
    }

    /// The table's [`OrientationOnWrite`] policy.
    pub fn orientation_on_write(&self) -> OrientationOnWrite {
        self.orientation_on_write
    }

    /// [`MarquetTable::append`] with a per-call R-tree policy. Block indexes valid before
    /// the append are always extended (HEP002 §10.3).
    pub fn append_with_options(&self, batch: &GeoBatch, rtree: spatial_index::RTreeOnAppend) -> Result<u64> {
        self.require_interpretable()?;
        let mut cols = batch.columns.clone();
        let mut summaries: Vec<(GeometryColumnInfo, Vec<RowInfo>)> = Vec::new();
        let geo_names = self.geometry_column_names()?;
        for name in batch.geometries.keys() {
            if !geo_names.contains(name) {
                return Err(MarquetError::InvalidArgument(format!("{} is not a geometry column", self.table.member_path(name))));
            }
        }
        let n_old = self.nrows()?;
        for name in &geo_names {
            let info = self.geometry_column(name)?;
            let Some(v) = batch.geometries.get(name) else {
                if !cols.missing_rest {
                    return Err(MarquetError::InvalidArgument(format!("batch has no values for geometry column '{name}'")));
                }
                continue;
            };
            let v = checks::check_values(&info, v, n_old, self.orientation_on_write)?;
            let (cv, rows) = self.prepare(&info, &v)?;
            cols.columns.insert(name.clone(), cv);
            if let Some(cov) = &info.covering {
                cols.columns.insert(cov.clone(), self.covering_values(cov, &rows)?);
            }
            summaries.push((info, rows));
        }
        let me = self;
        self.table.append_unguarded(&cols, &mut |_, n_old, _k| {
            for (info, rows) in &summaries {
                me.widen_summaries(info, rows)?;
                crate::marquet::maintain::after_append(me, info, n_old, rows, rtree)?;
            }
            Ok(())
        })
    }

    /// Covering rows for summaries (fill for null, empty box for empty).
    pub fn covering_values(&self, cov: &str, rows: &[RowInfo]) -> Result<ColumnValues> {
        let c = self.table.column(cov)?;
        let dt = c.dtype().to_le();
        let Dtype::Compound { fields, .. } = &dt else {
            return Err(MarquetError::spec(&c.path, "HEP002 §10.5", "covering column is not a compound"));
        };
        let z = fields.iter().any(|f| f.name == "zmin");
        let f32 = matches!(fields[0].dtype, Dtype::Float { size: 4, .. });
        let mut bytes = Vec::with_capacity(rows.len() * dt.size());
        let mut missing = vec![false; rows.len()];
        for (i, r) in rows.iter().enumerate() {
            match r {
                RowInfo::Null => {
                    missing[i] = true;
                    bytes.extend(std::iter::repeat_n(0u8, dt.size()));
                }
                RowInfo::Geometry(g) => {
                    let b = if g.is_empty { BBox::EMPTY } else { g.bbox };
                    types::covering_bytes(&b, z, f32, &mut bytes);
                }
            }
        }
        Ok(ColumnValues::Array { values: Array { dtype: dt, bytes }, missing: Some(missing) })
    }

    /// Widen BBOX and GEOMETRY_TYPES to cover `rows` (HEP002 §11.1). Only ever grows.
    ///
    /// When the column already holds rows but its attributes do not describe them (an empty
    /// GEOMETRY_TYPES, no BBOX: e.g. every row written so far was null or empty, or another
    /// producer omitted them), the existing rows are scanned once, so the attributes written
    /// now describe the whole column. A BBOX that wraps the antimeridian stays a box that
    /// contains the old and the new geometries ([`BBox::union_wrapping`]).
    pub fn widen_summaries(&self, info: &GeometryColumnInfo, rows: &[RowInfo]) -> Result<()> {
        let o = h5::object_open(self.table.id(), &info.name)?;
        let id = o.id();
        let n = self.table.nrows()?;
        let mut old_types: Option<BTreeSet<GeometryType>> =
            if n == 0 { Some(BTreeSet::new()) } else { info.types.as_ref().map(|v| v.iter().copied().collect()) };
        let mut old_box = info.bbox;
        if n > 0 && (old_types.is_none() || old_box.is_none()) {
            let mut ex = SummaryAcc::default();
            let mut s = 0;
            while s < n {
                let e = (s + 65_536).min(n);
                ex.add(&self.row_infos(&info.name, s, e)?);
                s = e;
            }
            old_types.get_or_insert_with(BTreeSet::new).extend(ex.types.iter().copied());
            if old_box.is_none() && ex.any {
                old_box = Some((ex.bbox, ex.all_z, ex.all_m));
            }
        }
        let mut new = SummaryAcc::default();
        new.add(rows);
        // Types: written when they grew, or when the attribute said "unknown" and the column's
        // types are now known.
        if let Some(old) = &old_types {
            let mut set = old.clone();
            set.extend(new.types.iter().copied());
            let attr_len = info.types.as_ref().map_or(0, |v| v.len());
            if set.len() != old.len() || attr_len != set.len() {
                let mut v: Vec<GeometryType> = set.into_iter().collect();
                v.sort_by_key(|t| t.iso_code());
                let bytes: Vec<u8> = v.iter().flat_map(|t| (t.iso_code() as u16).to_le_bytes()).collect();
                h5::attr_write(id, names::GEOMETRY_TYPES, &types::geometry_types_dtype(), &Space::Simple(vec![v.len() as u64]), &bytes)?;
            }
        }
        let (b, z, m) = match (old_box, new.any) {
            (None, false) => return Ok(()),
            (Some(old), false) => old,
            (None, true) => (new.bbox, new.all_z, new.all_m),
            // Z/M only when every non-empty geometry has them (R11).
            (Some((old, oz, om)), true) => (old.union_wrapping(&new.bbox), oz && new.all_z, om && new.all_m),
        };
        if info.bbox.map(|(o, oz, om)| o == b && oz == z && om == m).unwrap_or(false) {
            return Ok(());
        }
        h5::attr_write(id, names::BBOX, &types::bbox_dtype(z, m), &Space::Scalar, &types::bbox_bytes(&b, z, m))
    }

    /// Read rows `[start, end)` of a geometry column as WKB (points are encoded as
    /// little-endian point WKB; empty points as NaN coordinates).
    pub fn read_wkb(&self, name: &str, start: u64, end: u64) -> Result<WkbBuffer> {
        self.require_interpretable()?;
        let n = self.nrows()?;
        if end > n || start > end {
            return Err(MarquetError::InvalidArgument(format!("rows {start}..{end} out of range for {n} rows")));
        }
        let info = self.geometry_column(name)?;
        let mut out = WkbBuffer::default();
        out.offsets.push(0);
        match info.form {
            StorageForm::VarWkb => {
                let l = self.table.list_column(name)?.read(start, end)?;
                out.valid = (0..l.len()).map(|i| !l.is_null(i)).collect();
                let h5col::ListValues::Leaf(a) = l.values else {
                    return Err(MarquetError::spec(&info.path, "HEP002 §7.2", "VALUES must be a uint8 dataset"));
                };
                out.offsets = l.offsets;
                out.bytes = a.bytes;
                for i in 0..out.len() {
                    if out.valid[i] && out.offsets[i] == out.offsets[i + 1] {
                        return Err(empty_wkb(&info.path, start + i as u64));
                    }
                }
            }
            StorageForm::FixedWkb { .. } | StorageForm::Point { .. } => {
                WkbSource::open(&self.table, &info)?.push_span(&info.path, start, end, 0..(end - start) as usize, &mut out)?;
            }
        }
        Ok(out)
    }

    /// Read rows of a point column as coordinate arrays.
    pub fn read_points(&self, name: &str, start: u64, end: u64) -> Result<PointArrays> {
        let info = self.geometry_column(name)?;
        let StorageForm::Point { dims, .. } = info.form else {
            return Err(MarquetError::InvalidArgument(format!("{} is not a point column", info.path)));
        };
        let n = self.nrows()?;
        if end > n || start > end {
            return Err(MarquetError::InvalidArgument(format!("rows {start}..{end} out of range for {n} rows")));
        }
        let c = self.table.column(name)?;
        let a = c.read(start, end - start)?;
        Ok(points_from(&a, &a.missing(c.fill()), dims))
    }

    /// The WKB values of `rows` (strictly ascending, each below NROWS), in that order, for
    /// any storage form (points as little-endian ISO WKB). One read per span of nearby rows
    /// ([`h5col::take_spans`]) and the column opened once: what a query's caller needs to
    /// fetch its answer.
    pub fn take_wkb(&self, name: &str, rows: &[u64]) -> Result<WkbBuffer> {
        self.require_interpretable()?;
        let n = self.nrows()?;
        if let Some(&last) = rows.last() {
            if last >= n {
                return Err(MarquetError::InvalidArgument(format!(
                    "row {last} out of range for {n} rows"
                )));
            }
        }
        let info = self.geometry_column(name)?;
        let spans = h5col::take_spans(rows, &info.path)?;
        let src = WkbSource::open(&self.table, &info)?;
        let mut out = WkbBuffer::new();
        for sp in spans {
            let picks = rows[sp.first..sp.last].iter().map(|&r| (r - sp.start) as usize);
            src.push_span(&info.path, sp.start, sp.end, picks, &mut out)?;
        }
        Ok(out)
    }

    /// Read rows as decoded geometries (`None` = null).
    pub fn read_geometries(&self, name: &str, start: u64, end: u64) -> Result<Vec<Option<wkb::Geometry>>> {
        let b = self.read_wkb(name, start, end)?;
        let path = self.table.member_path(name);
        (0..b.len())
            .map(|i| {
                b.get(i)
                    .map(|w| wkb::decode(w).map_err(|e| e.into_marquet(path.clone(), Some(start + i as u64))))
                    .transpose()
            })
            .collect()
    }

    /// Read rows as geo-types geometries (XY only; Z/M dropped).
    pub fn read_geo(&self, name: &str, start: u64, end: u64) -> Result<Vec<Option<geo_types::Geometry<f64>>>> {
        Ok(self.read_geometries(name, start, end)?.into_iter().map(|g| g.map(geo_types::Geometry::from)).collect())
    }

    /// Summaries of rows `[start, end)` of a geometry column (type, box, emptiness).
    pub fn row_infos(&self, name: &str, start: u64, end: u64) -> Result<Vec<RowInfo>> {
        let info = self.geometry_column(name)?;
        if let StorageForm::Point { dims, .. } = info.form {
            let p = self.read_points(name, start, end)?;
            let gt = GeometryType::new(GeometryKind::Point, dims);
            return Ok((0..p.valid.len())
                .map(|i| {
                    if !p.valid[i] {
                        return RowInfo::Null;
                    }
                    let mut b = BBox::EMPTY;
                    let empty = p.x[i].is_nan() && p.y[i].is_nan();
                    if !empty {
                        b.add_xy(p.x[i], p.y[i]);
                        if let Some(z) = &p.z {
                            b.add_z(z[i]);
                        }
                        if let Some(m) = &p.m {
                            b.add_m(m[i]);
                        }
                    }
                    RowInfo::Geometry(WkbInfo { geometry_type: gt, bbox: b, is_empty: empty, num_coords: 1 })
                })
                .collect());
        }
        let b = self.read_wkb(name, start, end)?;
        let mut rows = (0..b.len())
            .map(|i| match b.get(i) {
                None => Ok(RowInfo::Null),
                Some(w) => wkb::scan(w)
                    .map(RowInfo::Geometry)
                    .map_err(|e| e.into_marquet(info.path.clone(), Some(start + i as u64))),
            })
            .collect::<Result<Vec<_>>>()?;
        bounds::grow_rows(&info, &mut rows, |i| b.get(i))?;
        Ok(rows)
    }

    /// Rescan a geometry column and make BBOX and GEOMETRY_TYPES exact (HEP002 §11.1
    /// allows tightening after a full scan).
    pub fn tighten(&self, name: &str) -> Result<()> {
        let info = self.geometry_column(name)?;
        let n = self.nrows()?;
        let mut acc = SummaryAcc::default();
        let step = 65_536;
        let mut s = 0;
        while s < n {
            let e = (s + step).min(n);
            acc.add(&self.row_infos(name, s, e)?);
            s = e;
        }
        self.write_exact_summaries(name, info.form, &acc)
    }

    /// Overwrite BBOX and GEOMETRY_TYPES of `name` with exact values from `acc`.
    pub(crate) fn write_exact_summaries(&self, name: &str, form: StorageForm, acc: &SummaryAcc) -> Result<()> {
        let o = h5::object_open(self.table.id(), name)?;
        let mut v: Vec<GeometryType> = acc.types.iter().copied().collect();
        if let StorageForm::Point { dims, .. } = form {
            v = vec![GeometryType::new(GeometryKind::Point, dims)];
        }
        v.sort_by_key(|t| t.iso_code());
        let bytes: Vec<u8> = v.iter().flat_map(|t| (t.iso_code() as u16).to_le_bytes()).collect();
        h5::attr_write(o.id(), names::GEOMETRY_TYPES, &types::geometry_types_dtype(), &Space::Simple(vec![v.len() as u64]), &bytes)?;
        if acc.any {
            let (z, m) = (acc.all_z, acc.all_m);
            h5::attr_write(o.id(), names::BBOX, &types::bbox_dtype(z, m), &Space::Scalar, &types::bbox_bytes(&acc.bbox, z, m))?;
        } else {
            h5::attr_delete(o.id(), names::BBOX)?;
        }
        Ok(())
    }
}

/// Exact column summaries accumulated over rows.
#[derive(Debug, Clone)]
pub(crate) struct SummaryAcc {
    pub types: BTreeSet<GeometryType>,
    pub bbox: BBox,
    pub all_z: bool,
    pub all_m: bool,
    pub any: bool,
}

impl Default for SummaryAcc {
    fn default() -> Self {
        SummaryAcc { types: BTreeSet::new(), bbox: BBox::EMPTY, all_z: true, all_m: true, any: false }
    }
}

impl SummaryAcc {
    pub fn add(&mut self, rows: &[RowInfo]) {
        for r in rows {
            if let RowInfo::Geometry(g) = r {
                self.types.insert(g.geometry_type);
                if !g.is_empty {
                    self.any = true;
                    self.all_z &= g.geometry_type.dims.has_z();
                    self.all_m &= g.geometry_type.dims.has_m();
                    self.bbox = self.bbox.union(&g.bbox);
                }
            }
        }
    }
}

/// Choose a storage form from data (issue: points of one dimension → point column;
/// otherwise variable-length WKB).
pub fn choose_form(v: &GeometryValues) -> Result<StorageForm> {
    match v {
        GeometryValues::Points { dims, .. } => Ok(StorageForm::Point { dims: *dims, f32: false }),
        GeometryValues::Wkb(vals) => {
            let mut dims: Option<Dimensions> = None;
            let mut all_points = true;
            for (i, w) in vals.iter().enumerate() {
                let Some(w) = w else { continue };
                let info = wkb::scan(w).map_err(|e| e.into_marquet("<input>", Some(i as u64)))?;
                if info.geometry_type.kind != GeometryKind::Point {
                    all_points = false;
                    break;
                }
                match dims {
                    None => dims = Some(info.geometry_type.dims),
                    Some(d) if d != info.geometry_type.dims => {
                        all_points = false;
                        break;
                    }
                    _ => {}
                }
            }
            Ok(match (all_points, dims) {
                (true, Some(d)) => StorageForm::Point { dims: d, f32: false },
                _ => StorageForm::VarWkb,
            })
        }
    }
}

pub mod maintain;
pub mod modify;
pub mod append_from;

/// A geometry column opened once for WKB reads ([`MarquetTable::read_wkb`],
/// [`MarquetTable::take_wkb`]).
enum WkbSource {
    Var(h5col::list::ListColumn),
    Fixed(h5col::Column, usize),
    /// Points, encoded as little-endian ISO WKB with this type code.
    Point(h5col::Column, Dimensions, [u8; 4]),
}

impl WkbSource {
    fn open(t: &Table, info: &GeometryColumnInfo) -> Result<WkbSource> {
        Ok(match info.form {
            StorageForm::VarWkb => WkbSource::Var(t.list_column(&info.name)?),
            StorageForm::FixedWkb { size } => WkbSource::Fixed(t.column(&info.name)?, size),
            StorageForm::Point { dims, .. } => {
                let code = GeometryType::new(GeometryKind::Point, dims).iso_code().to_le_bytes();
                WkbSource::Point(t.column(&info.name)?, dims, code)
            }
        })
    }

    /// Read rows `[start, end)` and append the WKB of rows `start + i` for each `i` of
    /// `picks` (ascending) to `out`. `path` names the column in errors.
    fn push_span(&self, path: &str, start: u64, end: u64, picks: impl Iterator<Item = usize>, out: &mut WkbBuffer) -> Result<()> {
        match self {
            WkbSource::Var(lc) => {
                let l = lc.read(start, end)?;
                if !matches!(l.values, h5col::ListValues::Leaf(_)) {
                    return Err(MarquetError::spec(path, "HEP002 §7.2", "VALUES must be a uint8 dataset"));
                }
                for i in picks {
                    if l.is_null(i) {
                        out.push(None);
                        continue;
                    }
                    match l.bytes_of(i) {
                        Some(b) if !b.is_empty() => out.push(Some(b)),
                        _ => return Err(empty_wkb(path, start + i as u64)),
                    }
                }
            }
            WkbSource::Fixed(c, size) => {
                let a = c.read(start, end - start)?;
                let miss = a.missing(c.fill());
                for i in picks {
                    out.push(if miss[i] { None } else { Some(&a.bytes[i * size..(i + 1) * size]) });
                }
            }
            WkbSource::Point(c, dims, code) => {
                let a = c.read(start, end - start)?;
                let p = points_from(&a, &a.missing(c.fill()), *dims);
                for i in picks {
                    push_point_wkb(out, &p, i, code);
                }
            }
        }
        Ok(())
    }
}

/// The error for a non-null row of a WKB list column whose slice is empty (HEP002 §7.2).
fn empty_wkb(path: &str, row: u64) -> MarquetError {
    MarquetError::InvalidWkb { path: path.to_string(), row: Some(row), message: "empty slice for a non-null row (HEP002 §7.2)".into() }
}

/// Coordinate arrays of the point-column elements in `a` (`miss`: missing rows).
pub(crate) fn points_from(a: &Array, miss: &[bool], dims: Dimensions) -> PointArrays {
    let k = a.len();
    let mut p = PointArrays {
        x: Vec::with_capacity(k),
        y: Vec::with_capacity(k),
        z: dims.has_z().then(|| Vec::with_capacity(k)),
        m: dims.has_m().then(|| Vec::with_capacity(k)),
        valid: Vec::with_capacity(k),
    };
    let Dtype::Compound { fields, .. } = &a.dtype else { unreachable!("checked by point_layout") };
    for i in 0..k {
        let e = a.element(i);
        let get = |fi: usize| -> f64 {
            let f = &fields[fi];
            let raw = &e[f.offset..f.offset + f.dtype.size()];
            if f.dtype.size() == 4 {
                f32::from_le_bytes(raw.try_into().unwrap_or([0; 4])) as f64
            } else {
                f64::from_le_bytes(raw.try_into().unwrap_or([0; 8]))
            }
        };
        p.valid.push(!miss[i]);
        p.x.push(get(0));
        p.y.push(get(1));
        let mut fi = 2;
        if let Some(z) = p.z.as_mut() {
            z.push(get(fi));
            fi += 1;
        }
        if let Some(m) = p.m.as_mut() {
            m.push(get(fi));
        }
    }
    p
}

/// Append row `i` of `p` as little-endian ISO point WKB (`code`: its type code), or a null.
pub(crate) fn push_point_wkb(out: &mut WkbBuffer, p: &PointArrays, i: usize, code: &[u8; 4]) {
    if p.valid[i] {
        out.bytes.push(1);
        out.bytes.extend_from_slice(code);
        out.bytes.extend_from_slice(&p.x[i].to_le_bytes());
        out.bytes.extend_from_slice(&p.y[i].to_le_bytes());
        if let Some(z) = &p.z {
            out.bytes.extend_from_slice(&z[i].to_le_bytes());
        }
        if let Some(m) = &p.m {
            out.bytes.extend_from_slice(&m[i].to_le_bytes());
        }
    }
    out.valid.push(p.valid[i]);
    out.offsets.push(out.bytes.len() as u64);
}

//! Geometry columns (HEP002 §6–§8): the spec of a new column, creating it in one of the
//! three storage forms, and reading its attributes back as [`GeometryColumnInfo`].

use crate::error::{MarquetError, Result};
use crate::h5::{self, Dtype, Filter, Space};
use crate::h5col::list::ListSpec;
use crate::h5col::{self, ColumnSpec};
use crate::spec::{names, BBox, GeometryKind, GeometryType};

use super::*;

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

/// How a new geometry column is to be created.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct GeometryColumnSpec {
    /// Storage form; `None` lets the first append choose (points of one dimension → point
    /// column; anything else → variable-length WKB).
    pub form: Option<StorageForm>,
    /// The coordinate reference system (HEP002 §8.1); default OGC:CRS84, no `CRS` attribute.
    pub crs: Crs,
    /// The coordinate epoch in decimal years, written as `EPOCH` (HEP002 §8.3).
    pub epoch: Option<f64>,
    /// `None` writes no EDGES attribute (planar).
    pub edges: Option<Edges>,
    /// Write `ORIENTATION = COUNTERCLOCKWISE` (HEP002 §9.2); appends then enforce it.
    pub orientation_ccw: bool,
    /// Create a covering column of this name (f64, or f32 when `covering_f32`).
    pub covering: Option<String>,
    /// 32-bit covering fields, minima rounded down and maxima up (HEP002 §10.5).
    pub covering_f32: bool,
    /// Give the covering column Z fields (`zmin`, `zmax`, HEP002 §10.5): for columns whose
    /// geometries all have Z.
    pub covering_z: bool,
    /// The `description` attribute of the column.
    pub description: Option<String>,
    /// Chunk length in rows for rank-1 forms and OFFSETS.
    pub chunk_rows: u64,
    /// Chunk length in bytes of a variable-length WKB column's VALUES (default
    /// [`GEOMETRY_VALUES_CHUNK_BYTES`](super::GEOMETRY_VALUES_CHUNK_BYTES)).
    /// Smaller chunks make reads of a few rows cheaper (each read decompresses whole
    /// chunks); larger ones compress a little better.
    pub values_chunk_bytes: u64,
    /// How the column's data, WKB `OFFSETS`, covering column and PACKED_RTREE are
    /// compressed (default: shuffle + deflate, readable by every HDF5).
    pub compression: Compression,
    /// Filters for WKB bytes / point data, overriding `compression` for them (WKB
    /// `OFFSETS` then keep H5Col's deflate 4).
    pub filters: Option<Vec<Filter>>,
    /// Add HDF5's Fletcher-32 checksum filter to every dataset of the column (data,
    /// `OFFSETS`, `MASK`, covering column) and to its spatial indexes, so that a damaged
    /// chunk is an error rather than other values (docs/FAULTS.md F8). Default off.
    pub checksum: bool,
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
            checksum: false,
        }
    }
}

impl GeometryColumnSpec {
    /// Choose the storage form (HEP002 §7) instead of letting the first append choose.
    pub fn with_form(mut self, f: StorageForm) -> Self {
        self.form = Some(f);
        self
    }
    /// Set the CRS written as the `CRS` attribute (HEP002 §8.1).
    pub fn with_crs(mut self, c: Crs) -> Self {
        self.crs = c;
        self
    }
    /// Write `EDGES` (HEP002 §9.1); non-planar edges need a geographic CRS.
    pub fn with_edges(mut self, e: Edges) -> Self {
        self.edges = Some(e);
        self
    }
    /// Write `ORIENTATION = COUNTERCLOCKWISE` (HEP002 §9.2): appends then refuse (or fix,
    /// per the table's setting) rings wound the other way.
    pub fn with_orientation_ccw(mut self) -> Self {
        self.orientation_ccw = true;
        self
    }
    /// Create a bounding-box covering column named `name` (HEP002 §10.5), XY fields.
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
    /// Write `EPOCH` in decimal years (HEP002 §8.3), for a dynamic CRS.
    pub fn with_epoch(mut self, e: f64) -> Self {
        self.epoch = Some(e);
        self
    }
    /// Chunk length in bytes of a variable-length WKB column's `VALUES` (at least 1).
    pub fn with_values_chunk_bytes(mut self, n: u64) -> Self {
        self.values_chunk_bytes = n.max(1);
        self
    }
    /// Chunk length in rows of rank-1 forms and WKB `OFFSETS` (at least 1).
    pub fn with_chunk_rows(mut self, n: u64) -> Self {
        self.chunk_rows = n.max(1);
        self
    }
    /// Use this filter pipeline for the WKB bytes or point data (see
    /// [`GeometryColumnSpec::filters`]).
    pub fn with_filters(mut self, f: Vec<Filter>) -> Self {
        self.filters = Some(f);
        self
    }
    /// Checksum every dataset of the column and its indexes ([`GeometryColumnSpec::checksum`]).
    pub fn with_checksum(mut self, on: bool) -> Self {
        self.checksum = on;
        self
    }
    /// The filter pipeline of the column's datasets of `elements`: its compression, then
    /// its checksum.
    fn pipeline(&self, elements: Elements) -> Vec<Filter> {
        super::checksummed(self.compression.filters(elements), self.checksum)
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
    /// The column name.
    pub name: String,
    /// HDF5 path of the column (dataset or list-column group).
    pub path: String,
    /// The storage form, from `GEOMETRY_ENCODING` and the object type (HEP002 §6.2, §7).
    pub form: StorageForm,
    /// `None` when GEOMETRY_TYPES is empty (types unknown).
    pub types: Option<Vec<GeometryType>>,
    /// The BBOX attribute and whether it carried Z / M fields.
    pub bbox: Option<(BBox, bool, bool)>,
    /// The `CRS` attribute: absent, PROJJSON or unknown (HEP002 §8.1).
    pub crs: Crs,
    /// The `EPOCH` attribute (HEP002 §8.3).
    pub epoch: Option<f64>,
    /// The `EDGES` attribute; [`Edges::Planar`] when absent (HEP002 §9.1).
    pub edges: Edges,
    /// True when ORIENTATION = COUNTERCLOCKWISE.
    pub orientation_ccw: bool,
    /// Name of the covering column.
    pub covering: Option<String>,
}

/// The body of [`MarquetTable::add_geometry_column`].
pub(crate) fn add_geometry_column(this: &mut MarquetTable, name: &str, spec: &GeometryColumnSpec) -> Result<()> {
    this.create_geometry_column(name, spec, true)
}
/// The body of [`MarquetTable::create_geometry_column`].
pub(crate) fn create_geometry_column(this: &mut MarquetTable, name: &str, spec: &GeometryColumnSpec, register: bool) -> Result<()> {
    this.require_interpretable()?;
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
            path: this.table.member_path(name),
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
    let t = &this.table;
    let filters = spec.filters.clone().map(|f| super::checksummed(f, spec.checksum));
    let gid = match form {
        StorageForm::VarWkb => {
            let explicit = filters.is_some();
            let mut lspec = ListSpec::bytes(filters.unwrap_or_else(|| spec.pipeline(Elements::Bytes)));
            lspec.offsets_chunk = spec.chunk_rows;
            if !explicit {
                // Offsets are monotonic u64: shuffle first halves them (docs/PERFORMANCE.md).
                lspec.offsets_filters = spec.pipeline(Elements::Numbers);
            } else {
                lspec.offsets_filters = super::checksummed(lspec.offsets_filters, spec.checksum);
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
                    .with_filters(filters.unwrap_or_else(|| spec.pipeline(Elements::Numbers))),
            )?;
            h5::object_open(c.id(), ".")?
        }
        StorageForm::Point { dims, f32 } => {
            let c = t.add_column(
                name,
                &ColumnSpec::new(types::point_dtype(dims, f32))
                    .with_chunk_rows(spec.chunk_rows)
                    .with_filters(filters.unwrap_or_else(|| spec.pipeline(Elements::Numbers))),
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
            &ColumnSpec { fill, ..ColumnSpec::new(dt).with_chunk_rows(spec.chunk_rows).with_filters(spec.pipeline(Elements::Numbers)) },
        )?;
        drop(c);
        h5::attr_write_refs(id, names::COVERING, &[t.member_path(cov)], true)?;
    }
    if !register {
        return Ok(());
    }
    h5::attr_write_ascii(id, names::GEOMETRY_ENCODING, form.encoding())?;
    // Table-level: GEOMETRY_COLUMNS (primary first), then the marker.
    let mut cols = this.geometry_column_names()?;
    cols.push(name.to_string());
    h5::attr_write_refs(t.id(), names::GEOMETRY_COLUMNS, &cols, false)?;
    if !h5::attr_exists(t.id(), names::MARQUET_VERSION)? {
        h5::attr_write_ascii(t.id(), names::MARQUET_VERSION, names::MARQUET_VERSION_VALUE)?;
    }
    Ok(())
}
/// The body of [`MarquetTable::geometry_compression`].
pub(crate) fn geometry_compression(this: &MarquetTable, col: &str) -> Result<Option<Compression>> {
    Ok(Compression::from_filters(&geometry_filters(this, col)?))
}
/// The stored filter pipeline of geometry column `col`'s data (the point or fixed-WKB
/// dataset, or the WKB `VALUES`).
pub(crate) fn geometry_filters(this: &MarquetTable, col: &str) -> Result<Vec<Filter>> {
    let info = this.geometry_column(col)?;
    let (rel, path) = match info.form {
        StorageForm::VarWkb => (format!("{col}/{}", names::VALUES), format!("{}/{}", info.path, names::VALUES)),
        _ => (col.to_string(), info.path.clone()),
    };
    let ds = h5::dataset_open(this.table.id(), &rel)?;
    Ok(h5::dataset_info(ds.id(), &path)?.filters)
}
/// The body of [`MarquetTable::geometry_column`].
pub(crate) fn geometry_column(this: &MarquetTable, name: &str) -> Result<GeometryColumnInfo> {
    // One reading of a column's attributes for both read paths (issue #33): `super::facts`.
    let o = crate::h5::objects::LibObjects(this.table.id());
    super::facts::TableView::of(&o, this.path(), this.is_interpretable()).geometry_column(name)
}

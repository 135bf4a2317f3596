//! What a format reader hands the hub (issue #32): an Arrow schema whose geometry fields are
//! described once ([`GeoColumnMeta`]), and record batches of any projection of it, as often
//! as the import needs them.
//!
//! The import reads its source up to twice — a survey pass (string widths, categories,
//! point forms, Hilbert keys) and the write pass — so a source is an [`ArrowSource`] that
//! can be read again: a Parquet file re-reads its row groups with the metadata it loaded
//! once (`geoparquet::reader`), a GIS file or a lakehouse table is opened again. Sources
//! that are expensive to decode or can be read once only (features, WKT text, a Python
//! stream) are [`Cached`]: the first read keeps the batches while they fit
//! [`crate::marquet::WriteLayout::sort_memory`] and later reads come from memory; past
//! that budget a re-readable source is read again, and a one-shot stream is kept whole in
//! memory (it was handed over in memory). Nothing is written to a temporary file.


use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;

use crate::convert::Finding;
use crate::error::{MarquetError, Result};
use crate::marquet::{Crs, Edges};
use crate::spec::{GeometryKind, GeometryType};

/// How a geometry field's values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// ISO WKB in a binary field (HEP002 §14.1 maps it to a WKB column).
    Wkb,
    /// A GeoArrow "separated" native encoding (GeoParquet 1.1).
    Native(GeometryKind),
}

impl Encoding {
    /// From the GeoParquet spelling (`"WKB"`, `"point"`, …), case-insensitive.
    pub fn parse(s: &str) -> Option<Encoding> {
        Some(match s.to_ascii_lowercase().as_str() {
            "wkb" => Encoding::Wkb,
            "point" => Encoding::Native(GeometryKind::Point),
            "linestring" => Encoding::Native(GeometryKind::LineString),
            "polygon" => Encoding::Native(GeometryKind::Polygon),
            "multipoint" => Encoding::Native(GeometryKind::MultiPoint),
            "multilinestring" => Encoding::Native(GeometryKind::MultiLineString),
            "multipolygon" => Encoding::Native(GeometryKind::MultiPolygon),
            _ => return None,
        })
    }
    /// The GeoParquet spelling.
    pub fn name(&self) -> &'static str {
        match self {
            Encoding::Wkb => "WKB",
            Encoding::Native(k) => match k {
                GeometryKind::Point => "point",
                GeometryKind::LineString => "linestring",
                GeometryKind::Polygon => "polygon",
                GeometryKind::MultiPoint => "multipoint",
                GeometryKind::MultiLineString => "multilinestring",
                GeometryKind::MultiPolygon => "multipolygon",
                GeometryKind::GeometryCollection => "geometrycollection",
            },
        }
    }
}

/// One geometry field of a source, as its format describes it (GeoParquet `geo` metadata
/// and/or a native logical type, a GeoArrow extension type, a GIS file's header, a
/// lakehouse column's SRIDs).
#[derive(Debug, Clone)]
pub struct GeoColumnMeta {
    /// The field name (a top-level field of the schema).
    pub name: String,
    /// The declared `encoding`.
    pub encoding: Encoding,
    /// `None` = the list is empty (unknown types).
    pub geometry_types: Option<Vec<GeometryType>>,
    /// The `crs` member, or the logical type's CRS: absent → [`Crs::Default`] (OGC:CRS84),
    /// JSON `null` → [`Crs::Unknown`], a PROJJSON object → [`Crs::ProjJson`] (HEP002 §8.1).
    pub crs: Crs,
    /// The CRS is stated (a `crs` member, JSON `null` included, or a logical type `crs`),
    /// not the implied default of an absent one: an explicit statement wins over an implied
    /// default ([`meta::reconcile_crs`](super::meta::reconcile_crs), issue #32).
    pub crs_explicit: bool,
    /// The `geo` key and the logical type state two different CRSs: why, for the refusal
    /// that [`meta::check_crs_conflicts`](super::meta::check_crs_conflicts) makes unless the
    /// user states the CRS (issue #32).
    pub crs_conflict: Option<String>,
    /// A CRS that could not be stored as PROJJSON (WKT string, `srid:N`, authority code):
    /// kept in the column's description and reported.
    pub crs_note: Option<String>,
    /// `edges` (`"planar"`/`"spherical"`) or the GEOGRAPHY algorithm; maps to `EDGES` (§9.1).
    pub edges: Edges,
    /// `orientation` is `"counterclockwise"`; maps to `ORIENTATION` (HEP002 §9.2).
    pub orientation_ccw: bool,
    /// The `epoch` member in decimal years; maps to `EPOCH` (HEP002 §8.3).
    pub epoch: Option<f64>,
    /// 4, 6 or 8 numbers as written.
    pub bbox: Option<Vec<f64>>,
    /// Covering bbox field name (a struct with xmin, ymin, xmax, ymax).
    pub covering: Option<String>,
    /// The column carries a Parquet GEOMETRY / GEOGRAPHY logical type.
    pub native_type: bool,
}

impl GeoColumnMeta {
    /// A WKB field `name` in `crs`, planar, nothing else declared.
    pub fn wkb(name: &str, crs: Crs) -> GeoColumnMeta {
        GeoColumnMeta {
            name: name.to_string(),
            encoding: Encoding::Wkb,
            geometry_types: None,
            crs,
            crs_explicit: false,
            crs_conflict: None,
            crs_note: None,
            edges: Edges::Planar,
            orientation_ccw: false,
            epoch: None,
            bbox: None,
            covering: None,
            native_type: false,
        }
    }
}

/// A geometry field and how the report names its origin.
#[derive(Debug, Clone)]
pub struct GeoField {
    /// What the format says of the field.
    pub meta: GeoColumnMeta,
    /// For the report, e.g. "WKB, Parquet GEOMETRY", "FlatGeobuf geometry".
    pub source: String,
    /// The CRS text as the source wrote it when it is not PROJJSON ([`GeoColumnMeta::crs_note`]),
    /// kept in the column's description.
    pub crs_text: Option<String>,
}

/// A source's schema, described once by its reader.
#[derive(Debug, Clone)]
pub struct SourceSchema {
    /// The name of the source for messages (a path).
    pub path: String,
    /// The Arrow schema of the batches (every field, geometry fields included).
    pub schema: SchemaRef,
    /// The geometry fields, primary first.
    pub geometry: Vec<GeoField>,
    /// Rows, when the source knows before it is read.
    pub rows: Option<u64>,
    /// Deviations found while describing the source.
    pub findings: Vec<Finding>,
    /// The GeoParquet `geo` metadata version, for GeoParquet sources.
    pub geoparquet_version: Option<String>,
    /// Some field carried a Parquet GEOMETRY / GEOGRAPHY logical type.
    pub native_types: bool,
}

/// Record batches of a projection, in source order.
pub type Batches<'a> = Box<dyn Iterator<Item = Result<RecordBatch>> + 'a>;

/// A source the import can read (again): see the module documentation.
pub trait ArrowSource {
    /// The schema and its geometry fields.
    fn describe(&self) -> &SourceSchema;
    /// Can root field `root` hold nulls? (Parquet statistics say when it cannot; the
    /// default: it can.)
    fn may_have_nulls(&self, _root: usize) -> bool {
        true
    }
    /// The batches of the root fields `roots` (ascending), each batch holding those fields
    /// in that order, of about `batch_rows` rows.
    fn batches(&mut self, roots: &[usize], batch_rows: usize) -> Result<Batches<'_>>;
    /// Keep the batches of the next read in memory, all fields, when they fit in `budget`
    /// bytes, and hand them to the read after it (the import's survey pass is then the
    /// only read of the file, issue #31). Sources that are held in memory already, or
    /// cannot estimate their size, ignore it.
    fn keep_next_read(&mut self, _budget: usize) {}
}

/// Project `b` on `roots` (ascending), naming `path` in errors.
pub fn project(b: &RecordBatch, roots: &[usize], path: &str) -> Result<RecordBatch> {
    b.project(roots).map_err(|e| MarquetError::Arrow { path: path.to_string(), source: e })
}

/// Opens a source's batches again (a re-readable format).
pub type Reopen<'a> = Box<dyn FnMut() -> Result<Batches<'a>> + 'a>;

/// A source read through a function that yields all its batches (every field), kept in
/// memory after the first read while they fit a budget (see the module documentation).
pub struct Cached<'a> {
    schema: SourceSchema,
    first: Option<Batches<'a>>,
    reopen: Option<Reopen<'a>>,
    kept: Vec<RecordBatch>,
    /// The first read finished with every batch kept.
    complete: bool,
    budget: usize,
}

impl<'a> Cached<'a> {
    /// A source whose batches are `batches`; `reopen` reads them again from the start
    /// (`None`: a one-shot stream, kept whole in memory); `budget` bytes of batches are kept.
    pub fn new(schema: SourceSchema, batches: Batches<'a>, reopen: Option<Reopen<'a>>, budget: usize) -> Cached<'a> {
        Cached { schema, first: Some(batches), reopen, kept: Vec::new(), complete: false, budget }
    }

    /// A source read once already (its description needed a full read, such as a
    /// lakehouse table whose CRS is learnt from its values): `kept` its batches when they
    /// fit the budget, `None` when they did not and `reopen` reads them again.
    pub fn from_read(schema: SourceSchema, kept: Option<Vec<RecordBatch>>, reopen: Option<Reopen<'a>>) -> Cached<'a> {
        let complete = kept.is_some();
        Cached { schema, first: None, reopen, kept: kept.unwrap_or_default(), complete, budget: usize::MAX }
    }
}

impl ArrowSource for Cached<'_> {
    fn describe(&self) -> &SourceSchema {
        &self.schema
    }

    fn batches(&mut self, roots: &[usize], _batch_rows: usize) -> Result<Batches<'_>> {
        let path = self.schema.path.clone();
        let roots = roots.to_vec();
        if let Some(first) = self.first.take() {
            // The first read: keep what fits; a one-shot stream is kept whole.
            let budget = if self.reopen.is_some() { self.budget } else { usize::MAX };
            self.kept.clear();
            let read = FirstRead { it: first, kept: &mut self.kept, complete: &mut self.complete, size: 0, over: false, budget };
            return Ok(Box::new(read.map(move |b| project(&b?, &roots, &path))));
        }
        if self.complete {
            let it = self.kept.iter().map(move |b| project(b, &roots, &path));
            return Ok(Box::new(it));
        }
        match self.reopen.as_mut() {
            Some(r) => {
                let it = r()?;
                Ok(Box::new(it.map(move |b| project(&b?, &roots, &path))))
            }
            None => Err(MarquetError::InvalidArgument(format!("{path}: a one-shot stream cannot be read twice"))),
        }
    }
}

/// The first read of a [`Cached`] source, keeping its batches while they fit.
pub(crate) struct FirstRead<'s, 'a> {
    it: Batches<'a>,
    kept: &'s mut Vec<RecordBatch>,
    complete: &'s mut bool,
    size: usize,
    over: bool,
    budget: usize,
}

impl<'s, 'a> FirstRead<'s, 'a> {
    /// Read `it`, keeping its batches in `kept` while their memory stays within `budget`;
    /// `complete` is set when the read ended with all of them kept.
    pub(crate) fn new(it: Batches<'a>, kept: &'s mut Vec<RecordBatch>, complete: &'s mut bool, budget: usize) -> Self {
        kept.clear();
        *complete = false;
        FirstRead { it, kept, complete, size: 0, over: false, budget }
    }
}

impl Iterator for FirstRead<'_, '_> {
    type Item = Result<RecordBatch>;

    fn next(&mut self) -> Option<Result<RecordBatch>> {
        match self.it.next() {
            Some(Ok(b)) => {
                if !self.over {
                    self.size = self.size.saturating_add(b.get_array_memory_size());
                    if self.size <= self.budget {
                        self.kept.push(b.clone());
                    } else {
                        self.over = true;
                        self.kept.clear();
                    }
                }
                Some(Ok(b))
            }
            Some(Err(e)) => {
                self.over = true;
                self.kept.clear();
                Some(Err(e))
            }
            None => {
                *self.complete = !self.over;
                None
            }
        }
    }
}

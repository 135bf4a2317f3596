//! FlatGeobuf in and out (issue #22): read with the format's reference Rust implementation,
//! the `flatgeobuf` crate (geometry to WKB through `geozero`); written by Marquet (issue
//! #32) with that crate's generated FlatBuffers types and packed R-tree helpers.
//!
//! Read: features one at a time from the file (sequential, no index needed), the CRS
//! from the header (`org:code`, else its WKT) resolved to PROJJSON.
//!
//! Written without a temporary file (the crate's `FgbWriter` always buffers its features in
//! one): magic, header (feature count, envelope, columns all nullable, the CRS as EPSG-style
//! `org:code` plus WKT 2), the packed Hilbert R-tree (node size 16), then the features in
//! the order of its leaves. Each feature is encoded from WKB by hand (`GeomEncoder`) once
//! as it arrives; its box and size are kept (40 + 4 bytes per feature, 60 at the sort) and, while the
//! encoded features fit the budget (the default sort memory), its bytes too — then
//! [`FeatureSink::finish`] writes the file in one go. Past the budget the bytes are dropped
//! and [`FeatureSink::second_pass`] asks for every feature again: the header and index are
//! written first (the Hilbert order gives each feature its offset), and each feature,
//! encoded again, is written at its offset in the output (positioned writes, gathered by
//! offset in batches of 8 MiB). Both ways give the same bytes, and for a column of one
//! geometry type the same bytes as the crate's writer (tests/fgb_writer.rs).
//!
//! Refused with an error naming the row (export adds the column): a null geometry (GDAL
//! refuses to write one into a file with a spatial index, and its Arrow reader fails on
//! one), a value that is not ISO WKB, and a geometry of a kind the column's
//! GEOMETRY_TYPES do not list (the header would declare the wrong type). An empty table is
//! written without an index (GDAL cannot open an index of no items).

use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use flatbuffers::WIPOffset;
use flatgeobuf::geozero::{ColumnValue, CoordDimensions, PropertyProcessor, ToWkb};
use flatgeobuf::packed_r_tree::{calc_extent, NodeItem};
use flatgeobuf::{
    Column, ColumnArgs, ColumnType, Crs as FbCrs, CrsArgs, FallibleStreamingIterator, Feature as FbFeature, FeatureArgs, FeatureProperties, FgbReader, Geometry, GeometryArgs,
    GeometryType, Header, HeaderArgs,
};

use super::hub::features::{Feature, FeatureSink, FeatureSource, Kind, SinkInfo, SourceInfo, V};
use crate::error::{MarquetError, Result};
use crate::marquet::Crs;
use crate::spec::{Dimensions, GeometryKind};
use crate::wkb;

fn err(path: &str, e: impl std::fmt::Display) -> MarquetError {
    MarquetError::Io { path: path.to_string(), source: std::io::Error::other(format!("FlatGeobuf: {e}")) }
}

type Iter = flatgeobuf::FeatureIter<BufReader<std::fs::File>, flatgeobuf::NotSeekable>;

/// A FlatGeobuf file as a [`FeatureSource`].
pub struct FgbSource {
    iter: Iter,
    path: String,
    kinds: Vec<Kind>,
    dims: CoordDimensions,
    row: u64,
}

fn column_kind(t: ColumnType) -> Kind {
    match t {
        ColumnType::Byte | ColumnType::UByte | ColumnType::Short | ColumnType::UShort | ColumnType::Int | ColumnType::UInt | ColumnType::Long => Kind::Int,
        ColumnType::ULong | ColumnType::Float | ColumnType::Double => Kind::Float,
        ColumnType::Bool => Kind::Bool,
        ColumnType::Binary => Kind::Bytes,
        _ => Kind::Str,
    }
}

/// Open a FlatGeobuf file: its schema and CRS, and a source of its features.
pub fn open(input: &Path) -> Result<(SourceInfo, FgbSource)> {
    let path = input.display().to_string();
    let f = std::fs::File::open(input).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    let reader = FgbReader::open(BufReader::with_capacity(1 << 16, f)).map_err(|e| err(&path, e))?;
    let h = reader.header();
    let mut fields = Vec::new();
    if let Some(cols) = h.columns() {
        for c in cols.iter() {
            fields.push((c.name().to_string(), column_kind(c.type_())));
        }
    }
    let (crs, crs_note) = match h.crs() {
        None => (Crs::Unknown, None),
        Some(c) => {
            let org = c.org().unwrap_or("EPSG");
            let code = c.code_string().map(str::to_string).or_else(|| (c.code() != 0).then(|| c.code().to_string()));
            let by_code = code.as_ref().map(|k| crate::crs::resolve(&format!("{org}:{k}")));
            match (by_code, c.wkt()) {
                (Some(Ok(crs)), _) => (crs, None),
                (_, Some(w)) if crate::crs::resolve(w).is_ok() => (crate::crs::resolve(w).unwrap_or(Crs::Unknown), None),
                (Some(Err(why)), _) => (Crs::Unknown, Some(format!("FlatGeobuf crs {org}:{} could not be resolved ({why}): stored as unknown", code.unwrap_or_default()))),
                (None, Some(w)) => (Crs::Unknown, Some(format!("FlatGeobuf crs WKT could not be resolved: stored as unknown; WKT: {w}"))),
                (None, None) => (Crs::Unknown, None),
            }
        }
    };
    let dims = match (h.has_z(), h.has_m()) {
        (true, true) => CoordDimensions::xyzm(),
        (true, false) => CoordDimensions::xyz(),
        (false, true) => CoordDimensions { z: false, m: true, t: false, tm: false },
        (false, false) => CoordDimensions::xy(),
    };
    let kinds = fields.iter().map(|(_, k)| *k).collect();
    let iter = reader.select_all_seq().map_err(|e| err(&path, e))?;
    Ok((SourceInfo { fields, crs, crs_note }, FgbSource { iter, path, kinds, dims, row: 0 }))
}

/// Collects one feature's properties by column index.
struct Props<'a> {
    out: &'a mut Vec<V>,
}

impl PropertyProcessor for Props<'_> {
    fn property(&mut self, i: usize, _name: &str, v: &ColumnValue) -> flatgeobuf::geozero::error::Result<bool> {
        let val = match v {
            ColumnValue::Byte(x) => V::I(*x as i64),
            ColumnValue::UByte(x) => V::I(*x as i64),
            ColumnValue::Bool(x) => V::B(*x),
            ColumnValue::Short(x) => V::I(*x as i64),
            ColumnValue::UShort(x) => V::I(*x as i64),
            ColumnValue::Int(x) => V::I(*x as i64),
            ColumnValue::UInt(x) => V::I(*x as i64),
            ColumnValue::Long(x) => V::I(*x),
            ColumnValue::ULong(x) => V::F(*x as f64),
            ColumnValue::Float(x) => V::F(*x as f64),
            ColumnValue::Double(x) => V::F(*x),
            ColumnValue::String(s) | ColumnValue::Json(s) | ColumnValue::DateTime(s) => V::S(s.to_string()),
            ColumnValue::Binary(b) => V::Bytes(b.to_vec()),
        };
        if let Some(slot) = self.out.get_mut(i) {
            *slot = val;
        }
        Ok(false)
    }
}

impl FeatureSource for FgbSource {
    fn next_feature(&mut self) -> Result<Option<Feature>> {
        let Some(f) = self.iter.next().map_err(|e| err(&self.path, e))? else { return Ok(None) };
        let row = self.row;
        self.row += 1;
        let g = match f.geometry() {
            None => None,
            Some(_) => Some(f.to_wkb(self.dims).map_err(|e| err(&self.path, format!("feature {row}: {e}")))?),
        };
        let mut vals = vec![V::Null; self.kinds.len()];
        f.process_properties(&mut Props { out: &mut vals }).map_err(|e| err(&self.path, format!("feature {row}: {e}")))?;
        Ok(Some((g, vals)))
    }
}

/// The branching factor of the packed R-tree written (the format's and GDAL's default).
const NODE_SIZE: u16 = 16;

/// The FlatGeobuf magic bytes, major version 3, patch 0 (`fgb\x03fgb\x00`).
const MAGIC: [u8; 8] = [b'f', b'g', b'b', 3, b'f', b'g', b'b', 0];

/// Pass 2 gathers this many bytes of features before writing them at their offsets.
const PASS2_BATCH: usize = 8 << 20;

/// A FlatGeobuf file being written: features are encoded one at a time (by hand, see
/// `GeomEncoder`) and either kept in memory until [`FeatureSink::finish`] (while they
/// fit the budget), or encoded twice — pass 1 keeps each feature's box and size, pass 2
/// writes each at its place in the output ([`FeatureSink::second_pass`]).
pub struct FgbSink {
    out: std::fs::File,
    path: String,
    fields: Vec<(String, Kind)>,
    name: String,
    crs: Crs,
    gt: GeometryType,
    has_z: bool,
    has_m: bool,
    budget: usize,
    fbb: flatbuffers::FlatBufferBuilder<'static>,
    props: Vec<u8>,
    /// Pass 1: one leaf per feature, `offset` = its row until the Hilbert sort.
    nodes: Vec<NodeItem>,
    /// Pass 1: each feature's encoded size.
    sizes: Vec<u32>,
    /// Pass 1: the encoded features in row order, while they fit `budget`.
    mem: Option<Vec<u8>>,
    /// Pass 2: where each row's feature goes, from the start of the file.
    dest: Vec<u64>,
    /// Pass 2: the next row.
    row: usize,
    /// Pass 2: features waiting to be written: (file offset, start in `pending_buf`, length).
    pending: Vec<(u64, usize, usize)>,
    pending_buf: Vec<u8>,
    second: bool,
}

/// The header's geometry type and dimensions for a column's GEOMETRY_TYPES: one kind is
/// declared, several (or none known) is `Unknown` with each geometry typed; Z and M only
/// when every type has them.
fn fgb_type(types: &[crate::spec::GeometryType]) -> (GeometryType, bool, bool) {
    let kinds: std::collections::BTreeSet<GeometryKind> = types.iter().map(|t| t.kind).collect();
    let z = !types.is_empty() && types.iter().all(|t| t.dims.has_z());
    let m = !types.is_empty() && types.iter().all(|t| matches!(t.dims, Dimensions::Xym | Dimensions::Xyzm));
    let gt = match kinds.len() {
        1 => kinds.iter().next().map(|k| fgb_kind(*k)).unwrap_or(GeometryType::Unknown),
        _ => GeometryType::Unknown,
    };
    (gt, z, m)
}

/// Create a FlatGeobuf file for `info`'s features; the encoded features are kept in memory
/// up to the default sort budget ([`crate::marquet::WriteLayout::sort_memory`]).
pub fn create(output: &Path, info: &SinkInfo) -> Result<FgbSink> {
    create_with_budget(output, info, crate::marquet::WriteLayout::default().sort_memory)
}

/// [`create`] with `budget` bytes for the encoded features: when they need more, they are
/// encoded a second time and written at their offsets (the result is the same file).
pub fn create_with_budget(output: &Path, info: &SinkInfo, budget: usize) -> Result<FgbSink> {
    let path = output.display().to_string();
    if info.fields.len() > u16::MAX as usize + 1 {
        return Err(MarquetError::InvalidArgument(format!("{path}: FlatGeobuf numbers columns with 16 bits: {} columns", info.fields.len())));
    }
    let (gt, has_z, has_m) = fgb_type(&info.types);
    let name = output.file_stem().and_then(|s| s.to_str()).unwrap_or("layer").to_string();
    let out = std::fs::File::create(output).map_err(|e| MarquetError::Io { path: path.clone(), source: e })?;
    let cap = usize::try_from(info.rows).unwrap_or(0).min(1 << 20);
    Ok(FgbSink {
        out,
        path,
        fields: info.fields.clone(),
        name,
        crs: info.crs.clone(),
        gt,
        has_z,
        has_m,
        budget,
        fbb: flatbuffers::FlatBufferBuilder::new(),
        props: Vec::new(),
        nodes: Vec::with_capacity(cap),
        sizes: Vec::with_capacity(cap),
        mem: Some(Vec::new()),
        dest: Vec::new(),
        row: 0,
        pending: Vec::new(),
        pending_buf: Vec::new(),
        second: false,
    })
}

/// The header: name, geometry type and dimensions, the extent, the attribute columns (all
/// nullable), the feature count, the index node size and the CRS (authority and integer
/// code, which GDAL reads, plus WKT 2). Built in the order the `flatgeobuf` crate's writer
/// builds it, so both write the same bytes.
fn header_bytes(s: &FgbSink, extent: &NodeItem, count: u64) -> Vec<u8> {
    let mut fbb = flatbuffers::FlatBufferBuilder::new();
    let (org, code) = crate::crs::epsg_like_code(&s.crs).unwrap_or_default();
    let wkt = crate::crs::to_wkt(&s.crs, crate::crs::WktDialect::Wkt2).ok().flatten();
    let crs_args = match s.crs {
        Crs::Unknown => CrsArgs::default(),
        _ => CrsArgs {
            org: (!org.is_empty()).then(|| fbb.create_string(&org)),
            code,
            wkt: wkt.as_deref().map(|w| fbb.create_string(w)),
            ..Default::default()
        },
    };
    let name = fbb.create_string(&s.name);
    let crs = FbCrs::create(&mut fbb, &crs_args);
    let mut cols = Vec::with_capacity(s.fields.len());
    for (n, k) in &s.fields {
        let type_ = match k {
            Kind::Int => ColumnType::Long,
            Kind::Float => ColumnType::Double,
            Kind::Bool => ColumnType::Bool,
            Kind::Str => ColumnType::String,
            Kind::Bytes => ColumnType::Binary,
        };
        let name = fbb.create_string(n);
        cols.push(Column::create(&mut fbb, &ColumnArgs { name: Some(name), type_, nullable: true, ..Default::default() }));
    }
    let columns = fbb.create_vector(&cols);
    // No features: no envelope and no index (node size 0), which GDAL needs: it fails on
    // an index of no items (the `flatgeobuf` crate's writer writes one).
    let envelope = (count > 0).then(|| fbb.create_vector(&[extent.min_x, extent.min_y, extent.max_x, extent.max_y]));
    let h = Header::create(
        &mut fbb,
        &HeaderArgs {
            name: Some(name),
            envelope,
            geometry_type: s.gt,
            has_z: s.has_z,
            has_m: s.has_m,
            columns: Some(columns),
            features_count: count,
            index_node_size: if count > 0 { NODE_SIZE } else { 0 },
            crs: Some(crs),
            ..Default::default()
        },
    );
    fbb.finish_size_prefixed(h, None);
    fbb.finished_data().to_vec()
}

/// The packed Hilbert R-tree's nodes above the leaves, in file order (root first), for
/// `leaves` in file order: the layout of the format (levels top-down, leaves last, a
/// parent's `offset` the index of its first child; a single leaf still gets a root).
fn upper_levels(leaves: &[NodeItem]) -> Vec<NodeItem> {
    let n = leaves.len();
    let b = NODE_SIZE as usize;
    let mut sizes = vec![n];
    let mut m = n;
    loop {
        m = m.div_ceil(b);
        sizes.push(m);
        if m == 1 {
            break;
        }
    }
    let total: usize = sizes.iter().sum();
    let leaf_start = total - n;
    let mut upper = vec![NodeItem::create(0); leaf_start];
    // Level k (bottom-up) starts at `start[k]` in file order.
    let mut start = Vec::with_capacity(sizes.len());
    let mut end = total;
    for sz in &sizes {
        start.push(end - sz);
        end -= sz;
    }
    for k in 0..sizes.len() - 1 {
        let mut child = start[k];
        let mut parent = start[k + 1];
        while child < start[k] + sizes[k] {
            let mut node = NodeItem::create(child as u64);
            for _ in 0..b {
                if child >= start[k] + sizes[k] {
                    break;
                }
                let c = if child >= leaf_start { &leaves[child - leaf_start] } else { &upper[child] };
                let c = c.clone();
                node.expand(&c);
                child += 1;
            }
            upper[parent] = node;
            parent += 1;
        }
    }
    upper
}

/// Write the header and the index for the features of pass 1 to `w`; return, in file
/// order, the rows, and each row's offset from the start of the file.
fn write_head(s: &mut FgbSink, w: &mut impl std::io::Write) -> std::io::Result<(Vec<usize>, Vec<u64>)> {
    let count = s.nodes.len();
    let extent = calc_extent(&s.nodes);
    let head = header_bytes(s, &extent, count as u64);
    w.write_all(&MAGIC)?;
    w.write_all(&head)?;
    let mut order = Vec::new();
    let mut dest = Vec::new();
    if count == 0 {
        return Ok((order, dest));
    }
    // Descending Hilbert value of the box centres, ties in row order: the order of the
    // crate's `hilbert_sort` (a stable sort on the same value), with each value computed
    // once instead of in every comparison.
    let (span_x, span_y) = (extent.width(), extent.height());
    let cell = |v: f64, min: f64, span: f64| (crate::spatial::hilbert::HILBERT_MAX as f64 * (v - min) / span).floor() as u32;
    s.nodes.sort_by_cached_key(|n| {
        let (x, y) = (cell((n.min_x + n.max_x) / 2.0, extent.min_x, span_x), cell((n.min_y + n.max_y) / 2.0, extent.min_y, span_y));
        std::cmp::Reverse(crate::spatial::hilbert::hilbert(x, y))
    });
    let index_len = 40 * (upper_levels_len(count) + count) as u64;
    let data_start = MAGIC.len() as u64 + head.len() as u64 + index_len;
    dest = vec![0u64; count];
    order.reserve(count);
    let mut at = 0u64;
    for node in s.nodes.iter_mut() {
        let row = node.offset as usize;
        order.push(row);
        dest[row] = data_start + at;
        node.offset = at;
        at += s.sizes[row] as u64;
    }
    let upper = upper_levels(&s.nodes);
    let mut buf = Vec::with_capacity(40 * 4096);
    for node in upper.iter().chain(s.nodes.iter()) {
        node.write(&mut buf)?;
        if buf.len() >= 40 * 4096 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    Ok((order, dest))
}

/// How many nodes sit above `n` leaves.
fn upper_levels_len(n: usize) -> usize {
    let mut m = n;
    let mut total = 0;
    loop {
        m = m.div_ceil(NODE_SIZE as usize);
        total += m;
        if m == 1 {
            return total;
        }
    }
}

/// Append one property (column `i`) to `out` in FlatGeobuf's encoding: the column index
/// (u16) then the value, little-endian; text and bytes with a u32 length.
fn put_property(out: &mut Vec<u8>, i: usize, v: &V) -> std::result::Result<(), String> {
    let var = |out: &mut Vec<u8>, b: &[u8]| -> std::result::Result<(), String> {
        let n = u32::try_from(b.len()).map_err(|_| format!("a value of {} bytes (FlatGeobuf's limit is 4 GiB)", b.len()))?;
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(b);
        Ok(())
    };
    if matches!(v, V::Null) {
        return Ok(());
    }
    out.extend_from_slice(&(i as u16).to_le_bytes());
    match v {
        V::Null => {}
        V::I(x) => out.extend_from_slice(&x.to_le_bytes()),
        V::F(x) => out.extend_from_slice(&x.to_le_bytes()),
        V::B(x) => out.push(*x as u8),
        V::S(t) => var(out, t.as_bytes())?,
        V::Bytes(b) => var(out, b)?,
    }
    Ok(())
}

/// The flat arrays of one FlatGeobuf `Geometry` table being filled.
#[derive(Default)]
struct Flat {
    xy: Vec<f64>,
    z: Vec<f64>,
    m: Vec<f64>,
    ends: Vec<u32>,
}

/// Encodes WKB as FlatGeobuf geometries.
///
/// Why by hand: the `flatgeobuf` crate's only writer (`FgbWriter`, whose feature encoder is
/// private) buffers every feature in a temporary file (issue #32: no import or export writes
/// one). The encoding follows the format's schema (`feature.fbs`: flat `xy`, optional `z`
/// and `m`, `ends` of the rings or lines, `parts` for multipolygons and collections) and,
/// for files of one declared type, builds the tables in the order that writer does, so both
/// give the same bytes (tests/fgb_writer.rs compares them). Two deliberate differences, in
/// files of mixed types (`Unknown`) and collections only: a multipolygon's parts are typed
/// `Polygon` (as GDAL writes them; the crate writes `MultiPolygon`), and a collection is
/// typed `GeometryCollection` with each member its own part, nested (the crate types a
/// collection after its last member and flattens multi-geometry members into it).
struct GeomEncoder<'f> {
    has_z: bool,
    has_m: bool,
    bbox: &'f mut NodeItem,
}

impl GeomEncoder<'_> {
    fn coord(&mut self, f: &mut Flat, c: &wkb::Coord) {
        f.xy.push(c.x);
        f.xy.push(c.y);
        self.bbox.expand_xy(c.x, c.y);
        if self.has_z {
            f.z.push(c.z);
        }
        if self.has_m {
            f.m.push(c.m);
        }
    }

    /// A Geometry table from `f`: `xy` always, `ends` only when more than one, `z`/`m` when
    /// the file has them.
    fn table<'a>(fbb: &mut flatbuffers::FlatBufferBuilder<'a>, f: &Flat, type_: GeometryType) -> WIPOffset<Geometry<'a>> {
        let xy = Some(fbb.create_vector(&f.xy));
        let ends = (f.ends.len() > 1).then(|| fbb.create_vector(&f.ends));
        let z = (!f.z.is_empty()).then(|| fbb.create_vector(&f.z));
        let m = (!f.m.is_empty()).then(|| fbb.create_vector(&f.m));
        Geometry::create(fbb, &GeometryArgs { xy, ends, z, m, type_, ..Default::default() })
    }

    /// The rings of a polygon into `f`, one end per ring.
    fn rings(&mut self, f: &mut Flat, rings: &[Vec<wkb::Coord>]) {
        for r in rings {
            for c in r {
                self.coord(f, c);
            }
            f.ends.push((f.xy.len() / 2) as u32);
        }
    }

    /// `g` as a Geometry table; `type_` is written on it (Unknown = left out, as for the
    /// top level of a file of one declared type).
    fn encode<'a>(&mut self, fbb: &mut flatbuffers::FlatBufferBuilder<'a>, g: &wkb::Geometry, type_: GeometryType, depth: usize) -> WIPOffset<Geometry<'a>> {
        let mut f = Flat::default();
        match g {
            wkb::Geometry::Point(p) => self.coord(&mut f, &p.coord),
            wkb::Geometry::LineString(l) => l.coords.iter().for_each(|c| self.coord(&mut f, c)),
            wkb::Geometry::Polygon(p) => self.rings(&mut f, &p.rings),
            wkb::Geometry::MultiPoint(mp) => mp.points.iter().for_each(|p| self.coord(&mut f, &p.coord)),
            wkb::Geometry::MultiLineString(ml) => {
                for l in &ml.lines {
                    l.coords.iter().for_each(|c| self.coord(&mut f, c));
                    f.ends.push((f.xy.len() / 2) as u32);
                }
            }
            wkb::Geometry::MultiPolygon(mp) => {
                // Parts typed only where types are written (mixed files, collections). An
                // empty one has an empty `parts` (GDAL reads no `parts` as an error).
                let part_type = if type_ == GeometryType::Unknown && depth == 0 { GeometryType::Unknown } else { GeometryType::Polygon };
                let mut parts = Vec::with_capacity(mp.polygons.len());
                for p in &mp.polygons {
                    let mut pf = Flat::default();
                    self.rings(&mut pf, &p.rings);
                    parts.push(Self::table(fbb, &pf, part_type));
                }
                let parts = fbb.create_vector(&parts);
                return Geometry::create(fbb, &GeometryArgs { type_, parts: Some(parts), ..Default::default() });
            }
            wkb::Geometry::GeometryCollection(gc) => {
                let mut parts = Vec::with_capacity(gc.geometries.len());
                for m in &gc.geometries {
                    parts.push(self.encode(fbb, m, fgb_kind(m.kind()), depth + 1));
                }
                let parts = fbb.create_vector(&parts);
                return Geometry::create(fbb, &GeometryArgs { type_, parts: Some(parts), ..Default::default() });
            }
        }
        Self::table(fbb, &f, type_)
    }
}

/// The FlatGeobuf type of a Simple Features kind.
fn fgb_kind(k: GeometryKind) -> GeometryType {
    match k {
        GeometryKind::Point => GeometryType::Point,
        GeometryKind::LineString => GeometryType::LineString,
        GeometryKind::Polygon => GeometryType::Polygon,
        GeometryKind::MultiPoint => GeometryType::MultiPoint,
        GeometryKind::MultiLineString => GeometryType::MultiLineString,
        GeometryKind::MultiPolygon => GeometryType::MultiPolygon,
        _ => GeometryType::GeometryCollection,
    }
}

impl FgbSink {
    /// Encode one feature into `self.fbb` (finished, size-prefixed); its box.
    fn encode(&mut self, geometry: Option<&[u8]>, values: &[V]) -> Result<NodeItem> {
        let mut bbox = NodeItem::create(0);
        self.fbb.reset();
        let g = match geometry {
            // The format would allow a feature without geometry, but not in a file with a
            // spatial index as GDAL reads and writes it: its writer refuses one (GDAL
            // 3.6.4+, OSGeo/gdal#7401), its Arrow reader (pyogrio, DuckDB) fails on one.
            None => {
                return Err(MarquetError::InvalidArgument(
                    "a null geometry: a FlatGeobuf file with a spatial index has none (GDAL refuses to write one and its Arrow reader fails on it); write GeoPackage, or leave the nulls out"
                        .into(),
                ))
            }
            Some(w) => {
                let g = wkb::decode(w).map_err(|e| MarquetError::InvalidArgument(format!("FlatGeobuf cannot encode this geometry: {e}")))?;
                let kind = fgb_kind(g.kind());
                if self.gt != GeometryType::Unknown && kind != self.gt {
                    return Err(MarquetError::InvalidArgument(format!(
                        "a {:?} in a FlatGeobuf file declared {:?} (the column's GEOMETRY_TYPES do not list it)",
                        kind, self.gt
                    )));
                }
                let type_ = if self.gt == GeometryType::Unknown { kind } else { GeometryType::Unknown };
                let mut enc = GeomEncoder { has_z: self.has_z, has_m: self.has_m, bbox: &mut bbox };
                enc.encode(&mut self.fbb, &g, type_, 0)
            }
        };
        self.props.clear();
        for (i, v) in values.iter().enumerate().take(self.fields.len()) {
            put_property(&mut self.props, i, v).map_err(|e| MarquetError::InvalidArgument(format!("column {}: {e}", self.fields[i].0)))?;
        }
        let properties = Some(self.fbb.create_vector(&self.props));
        let f = FbFeature::create(&mut self.fbb, &FeatureArgs { geometry: Some(g), properties, ..Default::default() });
        self.fbb.finish_size_prefixed(f, None);
        Ok(bbox)
    }

    fn io(&self, e: std::io::Error) -> MarquetError {
        MarquetError::Io { path: self.path.clone(), source: e }
    }

    /// Write the pending features of pass 2 at their offsets, neighbours in one write.
    fn flush_pending(&mut self) -> Result<()> {
        use std::os::unix::fs::FileExt;
        self.pending.sort_unstable_by_key(|p| p.0);
        let mut run: Vec<u8> = Vec::new();
        let mut run_at = 0u64;
        for &(at, start, len) in &self.pending {
            if !run.is_empty() && run_at + run.len() as u64 != at {
                self.out.write_all_at(&run, run_at).map_err(|e| MarquetError::Io { path: self.path.clone(), source: e })?;
                run.clear();
            }
            if run.is_empty() {
                run_at = at;
            }
            run.extend_from_slice(&self.pending_buf[start..start + len]);
        }
        if !run.is_empty() {
            self.out.write_all_at(&run, run_at).map_err(|e| MarquetError::Io { path: self.path.clone(), source: e })?;
        }
        self.pending.clear();
        self.pending_buf.clear();
        Ok(())
    }
}

impl FeatureSink for FgbSink {
    fn write(&mut self, geometry: Option<&[u8]>, values: &[V]) -> Result<()> {
        let bbox = self.encode(geometry, values)?;
        let size = self.fbb.finished_data().len();
        if self.second {
            let row = self.row;
            self.row += 1;
            let (Some(&at), Some(&want)) = (self.dest.get(row), self.sizes.get(row)) else {
                return Err(MarquetError::InvalidArgument(format!("{}: the second pass over the table met more than {} rows", self.path, self.dest.len())));
            };
            if size != want as usize {
                return Err(MarquetError::InvalidArgument(format!("{}: feature {row} encoded to {size} bytes, {want} in the first pass", self.path)));
            }
            let start = self.pending_buf.len();
            self.pending_buf.extend_from_slice(self.fbb.finished_data());
            self.pending.push((at, start, size));
            if self.pending_buf.len() >= PASS2_BATCH.min(self.budget.max(1 << 16)) {
                self.flush_pending()?;
            }
            return Ok(());
        }
        let size32 = u32::try_from(size).map_err(|_| MarquetError::InvalidArgument(format!("a feature of {size} bytes: FlatGeobuf's index cannot place it")))?;
        let mut node = bbox;
        node.offset = self.nodes.len() as u64;
        self.nodes.push(node);
        self.sizes.push(size32);
        if let Some(m) = &mut self.mem {
            if m.len() + size > self.budget {
                // Over budget: keep boxes and sizes only; the features are encoded again.
                self.mem = None;
            } else {
                // Grow by doubling, but never past the budget.
                if m.capacity() < m.len() + size {
                    let want = (m.capacity() * 2).max(m.len() + size).min(self.budget);
                    m.reserve_exact(want - m.len());
                }
                m.extend_from_slice(self.fbb.finished_data());
            }
        }
        Ok(())
    }

    fn second_pass(&mut self) -> Result<bool> {
        if self.mem.is_some() || self.second {
            return Ok(false);
        }
        // Header and index now, the features at their offsets as pass 2 encodes them again.
        let out = self.out.try_clone().map_err(|e| self.io(e))?;
        let mut w = BufWriter::with_capacity(1 << 20, out);
        let (_, dest) = write_head(self, &mut w).map_err(|e| self.io(e))?;
        w.flush().map_err(|e| self.io(e))?;
        self.dest = dest;
        self.nodes = Vec::new();
        self.second = true;
        Ok(true)
    }

    fn finish(self: Box<Self>) -> Result<()> {
        let mut s = *self;
        if s.second {
            s.flush_pending()?;
            if s.row != s.dest.len() {
                return Err(MarquetError::InvalidArgument(format!("{}: the second pass over the table met {} rows, not {}", s.path, s.row, s.dest.len())));
            }
            return Ok(());
        }
        if s.mem.is_none() {
            return Err(MarquetError::InvalidArgument(format!("{}: the features did not fit in memory and no second pass was made", s.path)));
        }
        let out = s.out.try_clone().map_err(|e| s.io(e))?;
        let mut w = BufWriter::with_capacity(1 << 20, out);
        let (order, _) = write_head(&mut s, &mut w).map_err(|e| s.io(e))?;
        // Where each row's feature starts in the memory buffer.
        let mut start = Vec::with_capacity(s.sizes.len());
        let mut at = 0usize;
        for &z in &s.sizes {
            start.push(at);
            at += z as usize;
        }
        let mem = s.mem.take().unwrap_or_default();
        for row in order {
            w.write_all(&mem[start[row]..start[row] + s.sizes[row] as usize]).map_err(|e| s.io(e))?;
        }
        w.flush().map_err(|e| s.io(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::GeometryType as GT;

    fn sink(dir: &Path, types: Vec<GT>) -> FgbSink {
        let info = SinkInfo { fields: vec![("id".into(), Kind::Int)], crs: Crs::Unknown, types, rows: 1 };
        create(&dir.join("t.fgb"), &info).unwrap()
    }

    fn point() -> Vec<u8> {
        wkb::encode(&wkb::Geometry::Point(wkb::Point::new(Dimensions::Xy, wkb::Coord::xy(1.0, 2.0))), wkb::ByteOrder::LittleEndian)
    }

    #[test]
    fn what_cannot_be_encoded_is_refused() {
        let dir = std::env::temp_dir().join(format!("marquet-fgb-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let line = wkb::encode(
            &wkb::Geometry::LineString(wkb::LineString { dims: Dimensions::Xy, coords: vec![wkb::Coord::xy(0.0, 0.0), wkb::Coord::xy(1.0, 1.0)] }),
            wkb::ByteOrder::LittleEndian,
        );
        let point_type = GT { kind: GeometryKind::Point, dims: Dimensions::Xy };
        // A LineString in a file the column's GEOMETRY_TYPES declare Point.
        let mut s = sink(&dir, vec![point_type]);
        s.write(Some(&point()), &[V::I(1)]).unwrap();
        let e = s.write(Some(&line), &[V::I(2)]).unwrap_err();
        assert!(matches!(&e, MarquetError::InvalidArgument(m) if m.contains("LineString") && m.contains("declared Point")), "{e}");
        // Not WKB; a null geometry.
        let e = s.write(Some(&[1, 1, 0, 0]), &[V::I(3)]).unwrap_err();
        assert!(matches!(&e, MarquetError::InvalidArgument(m) if m.contains("cannot encode")), "{e}");
        let e = s.write(None, &[V::I(4)]).unwrap_err();
        assert!(matches!(&e, MarquetError::InvalidArgument(m) if m.contains("null geometry")), "{e}");
        // In a file of mixed types both are fine.
        let mut s = sink(&dir, vec![]);
        s.write(Some(&point()), &[V::I(1)]).unwrap();
        s.write(Some(&line), &[V::Null]).unwrap();
        assert!(!s.second_pass().unwrap());
        Box::new(s).finish().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_tree_above_the_leaves_is_the_crates() {
        // Our upper levels against flatgeobuf's PackedRTree::build, for counts around the
        // level boundaries (1, 16, 17, 256, 257, ...).
        for n in [1usize, 2, 15, 16, 17, 255, 256, 257, 4097] {
            let leaves: Vec<NodeItem> = (0..n)
                .map(|i| {
                    let (x, y) = ((i * 7919 % 1000) as f64, (i * 104_729 % 1000) as f64);
                    let mut l = NodeItem::bounds(x, y, x + 1.0, y + 2.0);
                    l.offset = i as u64 * 10;
                    l
                })
                .collect();
            let extent = calc_extent(&leaves);
            let tree = flatgeobuf::packed_r_tree::PackedRTree::build(&leaves, &extent, NODE_SIZE).unwrap();
            let mut theirs = Vec::new();
            tree.stream_write(&mut theirs).unwrap();
            let mut ours = Vec::new();
            for node in upper_levels(&leaves).iter().chain(leaves.iter()) {
                node.write(&mut ours).unwrap();
            }
            assert_eq!(ours, theirs, "{n} leaves");
            assert_eq!(ours.len(), 40 * (upper_levels_len(n) + n));
        }
    }
}

//! HEP002 checks: §12 requirements 1–17, the marker-attribute rule of §5.1 and ruling R16.

use std::collections::{BTreeSet, HashMap};

use super::read::{attr, describe, is_strict_ascii, read_refs, read_u64_token};
use super::checks as c;
use super::geodesic_check::{EdgeBoxes, EdgeNeeds};
use super::rows::{Batch, CoverReader, Form, Item, Reader};
use super::{n, read_err, ColumnObj, Ctx};
use crate::h5::{self, Dtype, Space};
use crate::spatial::geom_box::is_wrapping;
use crate::spatial::packed_rtree::{self, Entry};
use crate::marquet::types::{self, Crs};
use crate::spec::{BBox, Dimensions, GeometryKind, GeometryType};
use crate::wkb::{self, CoordSeq, Header, WkbErrorKind, WkbVisitor};

pub(crate) const R1: &str = "HEP002 §12 req 1";
pub(crate) const R2: &str = "HEP002 §12 req 2";
pub(crate) const R3: &str = "HEP002 §12 req 3";
pub(crate) const R4: &str = "HEP002 §12 req 4";
pub(crate) const R5: &str = "HEP002 §12 req 5";
pub(crate) const R6: &str = "HEP002 §12 req 6";
pub(crate) const R7: &str = "HEP002 §12 req 7";
pub(crate) const R8: &str = "HEP002 §12 req 8";
pub(crate) const R9: &str = "HEP002 §12 req 9";
pub(crate) const R10: &str = "HEP002 §12 req 10";
pub(crate) const R11: &str = "HEP002 §12 req 11";
pub(crate) const R12: &str = "HEP002 §12 req 12";
pub(crate) const R13: &str = "HEP002 §12 req 13";
pub(crate) const R14: &str = "HEP002 §12 req 14";
pub(crate) const R15: &str = "HEP002 §12 req 15";
pub(crate) const R16: &str = "HEP002 §12 req 16";
pub(crate) const R17: &str = "HEP002 §12 req 17";
/// Identification, the marker-attribute rule and unsupported versions (R16).
pub(crate) const MARKER: &str = "HEP002 §5.1";

/// A geometry column as the data checks need it.
struct GeomCol {
    name: String,
    path: String,
    form: Form,
    /// Point columns: their fixed type.
    point_type: Option<GeometryType>,
    /// `None` = GEOMETRY_TYPES empty (unknown) or unusable: coverage not checked.
    types: Option<BTreeSet<GeometryType>>,
    geographic: bool,
    planar: bool,
    ccw: bool,
    /// The edge model (ruling R8): boxes must hold geodesic edges under non-planar edges.
    edges: EdgeBoxes,
    bbox: Option<(BBox, bool, bool)>,
    covering: Option<Covering>,
    blocks: Vec<BlockIndex>,
    rtrees: Vec<RTree>,
}

struct Covering {
    name: String,
    path: String,
    dtype: Dtype,
    fill: Option<Vec<u8>>,
    z: bool,
}

struct BlockIndex {
    path: String,
    b: u64,
    dtype: Dtype,
    z: bool,
    m: bool,
}

struct RTree {
    path: String,
    node_size: u16,
    num_items: u64,
}

pub(crate) fn run(ctx: &mut Ctx) {
    if !ctx.is_marquet {
        marker_rule(ctx);
        return;
    }
    if !req1_marquet_version(ctx) {
        return;
    }
    let geoms = req2_geometry_columns(ctx);
    req3_encoding_and_types(ctx, &geoms);
    req4_not_row_labels(ctx, &geoms);
    let mut cols = Vec::new();
    for name in &geoms {
        if let Some(gc) = describe_column(ctx, name) {
            cols.push(gc);
        }
    }
    req15_covering_columns(ctx, &geoms, &mut cols);
    req16_index_attributes(ctx, &geoms, &mut cols);
    for gc in &cols {
        let skipped = data_pass(ctx, gc);
        if skipped > 0 {
            for t in &gc.rtrees {
                ctx.sink.warn(R16, &t.path, format!("{skipped} rows of '{}' are unreadable or invalid (reported above): r-tree content not verified", gc.name));
            }
        } else {
            rtree_pass(ctx, gc);
        }
    }
    req17_named_datatypes(ctx);
}

/// HEP002 §5.1: attributes such as GEOMETRY_COLUMNS without MARQUET_VERSION are not
/// Marquet metadata; the table is validated as plain H5Col (a warning says so).
fn marker_rule(ctx: &mut Ctx) {
    let p = ctx.path.clone();
    let mut names = Vec::new();
    if h5::attr_exists(ctx.id(), n::GEOMETRY_COLUMNS).unwrap_or(false) {
        names.push(n::GEOMETRY_COLUMNS.to_lowercase());
    }
    for c in ctx.columns.clone() {
        if let Ok(o) = h5::object_open(ctx.id(), &c.name) {
            if h5::attr_exists(o.id(), n::GEOMETRY_ENCODING).unwrap_or(false) {
                names.push(format!("geometry_encoding on '{}'", c.name));
            }
        }
    }
    if !names.is_empty() {
        ctx.sink.warn(
            MARKER,
            &p,
            format!("{} present without marquet_version: not a marquet table, these attributes are not interpreted", names.join(", ")),
        );
    }
}

/// HEP002 §12 req 1: MARQUET_VERSION present (the table is H5Col-conformant: HEP001
/// checks). Returns false when the geometry columns must not be interpreted (R16).
fn req1_marquet_version(ctx: &mut Ctx) -> bool {
    let p = ctx.path.clone();
    let Some(a) = attr(ctx, ctx.id(), &p, n::MARQUET_VERSION, R1) else { return false };
    let Some(v) = a.as_str().map(|s| s.trim_end().to_string()) else {
        ctx.sink.error(c::M1_VERSION, &p, format!("marquet_version is {}, expected a scalar string \"1.0\"", describe(&a.dtype)));
        return false;
    };
    if !is_strict_ascii(&a.dtype, &v) {
        ctx.sink.warn(MARKER, &p, format!("marquet_version is a {}, expected null-terminated fixed-length ascii sized to the value (accepted leniently, ruling r3)", describe(&a.dtype)));
    }
    match crate::h5col::parse_version(&v) {
        None => {
            ctx.sink.error(c::M1_VERSION, &p, format!("marquet_version {v:?} is not major.minor"));
            false
        }
        Some((major, _, _)) if major > 1 => {
            ctx.sink.error(c::M_VERSION_SUPPORTED, &p, format!("unsupported marquet_version {v:?}: this validator implements 1.x; geometry columns are not interpreted (ruling r16)"));
            false
        }
        _ => true,
    }
}

/// HEP002 §12 req 2: GEOMETRY_COLUMNS, at least one element, non-null `H5T_STD_REF`
/// references to distinct columns of the table. Returns the resolved column names.
fn req2_geometry_columns(ctx: &mut Ctx) -> Vec<String> {
    let p = ctx.path.clone();
    let Some((refs, space)) = read_refs(ctx, ctx.id(), &p, n::GEOMETRY_COLUMNS, c::M2_REF_TYPE, R2) else {
        if !h5::attr_exists(ctx.id(), n::GEOMETRY_COLUMNS).unwrap_or(false) {
            ctx.sink.error(c::M2_PRESENT, &p, "geometry_columns attribute is missing; expected references to the geometry columns");
        }
        return Vec::new();
    };
    if !matches!(space, Space::Simple(ref d) if d.len() == 1) {
        ctx.sink.error(c::M2_PRESENT, &p, "geometry_columns is not one-dimensional");
    }
    if refs.is_empty() {
        ctx.sink.error(c::M2_PRESENT, &p, "geometry_columns has no elements; expected at least one");
    }
    let mut out: Vec<String> = Vec::new();
    for (i, r) in refs.iter().enumerate() {
        match r {
            None => ctx.sink.error(c::M2_RESOLVE, &p, format!("geometry_columns element {i} is a null or dangling reference")),
            Some(t) => match ctx.column_by_path(t).map(|c| c.name.clone()) {
                None => ctx.sink.error(c::M2_RESOLVE, &p, format!("geometry_columns element {i} references {t}, which is not a column of the table")),
                Some(name) if out.contains(&name) => {
                    ctx.sink.error(c::M2_DISTINCT, &p, format!("geometry_columns references column '{name}' more than once"))
                }
                Some(name) => out.push(name),
            },
        }
    }
    out
}

/// HEP002 §12 req 3: referenced columns carry GEOMETRY_ENCODING and GEOMETRY_TYPES; every
/// column carrying GEOMETRY_ENCODING is referenced.
fn req3_encoding_and_types(ctx: &mut Ctx, geoms: &[String]) {
    for c in ctx.columns.clone() {
        let Ok(o) = h5::object_open(ctx.id(), &c.name) else { continue };
        let enc = h5::attr_exists(o.id(), n::GEOMETRY_ENCODING).unwrap_or(false);
        let gt = h5::attr_exists(o.id(), n::GEOMETRY_TYPES).unwrap_or(false);
        if geoms.contains(&c.name) {
            if !enc {
                ctx.sink.error(c::M3_ATTRS, &c.path, "geometry column has no geometry_encoding attribute");
            }
            if !gt {
                ctx.sink.error(c::M3_ATTRS, &c.path, "geometry column has no geometry_types attribute");
            }
        } else if enc {
            ctx.sink.error(c::M3_REFERENCED, &c.path, "column carries geometry_encoding but is not referenced by geometry_columns");
        }
    }
}

/// HEP002 §12 req 4: no geometry column is a row label, and none carries CATEGORIES,
/// valid_min or valid_max (units: a warning, §6.1 SHOULD NOT).
fn req4_not_row_labels(ctx: &mut Ctx, geoms: &[String]) {
    let p = ctx.path.clone();
    if let Ok(Some((refs, _, _))) = h5::attr_read_refs(ctx.id(), n::INDEX_COLUMNS) {
        for t in refs.into_iter().flatten() {
            if let Some(c) = ctx.column_by_path(&t).filter(|c| geoms.contains(&c.name)).map(|c| c.name.clone()) {
                ctx.sink.error(c::M4_ROW_LABEL, &p, format!("index_columns references geometry column '{c}'"));
            }
        }
    }
    for g in geoms {
        let path = ctx.member_path(g);
        let Ok(o) = h5::object_open(ctx.id(), g) else { continue };
        for a in [n::CATEGORIES, n::VALID_MIN, n::VALID_MAX] {
            if h5::attr_exists(o.id(), a).unwrap_or(false) {
                ctx.sink.error(c::M4_H5COL_ATTRS, &path, format!("geometry column carries {}, which has no meaning for geometries", a.to_lowercase()));
            }
        }
        for a in [n::UNITS, n::UNITS_VOCABULARY] {
            if h5::attr_exists(o.id(), a).unwrap_or(false) {
                ctx.sink.warn("HEP002 §6.1", &path, format!("geometry column carries {a}; coordinate units come from the crs"));
            }
        }
    }
}

/// The attributes of one geometry column: req 5 (storage form), 6 (GEOMETRY_TYPES
/// datatype), 8–10 (structure of each form), 11 (CRS), 12 (EDGES, ORIENTATION), 14 (BBOX).
fn describe_column(ctx: &mut Ctx, name: &str) -> Option<GeomCol> {
    let col = ctx.column(name)?.clone();
    let path = col.path.clone();
    let o = h5::object_open(ctx.id(), name).ok()?;
    let id = o.id();
    let form = req5_storage_form(ctx, &col)?;
    let point_type = match &form {
        Form::Point { dtype, .. } => types::point_layout(dtype).map(|(d, _)| GeometryType::new(GeometryKind::Point, d)),
        _ => None,
    };
    let types = req6_geometry_types_attr(ctx, id, &path, point_type, matches!(form, Form::Point { .. }));
    match &form {
        Form::Var => req8_values_member(ctx, name, &path),
        Form::Fixed { fill, .. } => req9_fixed_fill(ctx, &path, fill.as_deref()),
        Form::Point { dtype, fill } => req10_point_type(ctx, &path, dtype, fill.as_deref()),
    }
    let crs = req11_crs(ctx, id, &path);
    let (edges_name, ccw) = req12_edges_orientation(ctx, id, &path, &crs);
    let geographic = crs.as_ref().map(|c| c.is_geographic()).unwrap_or(false);
    // Non-planar edges without a geographic CRS are reported once (req 12); the data is then
    // checked as planar, so that one defect gives one finding.
    let planar = edges_name == "PLANAR" || !geographic;
    let model = if planar { crate::spatial::geodesic::EdgeModel::Planar } else { crate::marquet::bounds::edge_model(&crate::marquet::Edges::from_name(&edges_name)) };
    let edges = EdgeBoxes { model, ccw };
    let bbox = req14_bbox_attr(ctx, id, &path, geographic);
    Some(GeomCol {
        name: name.to_string(),
        path,
        form,
        point_type,
        types,
        geographic,
        planar,
        ccw,
        edges,
        bbox,
        covering: None,
        blocks: Vec::new(),
        rtrees: Vec::new(),
    })
}

/// HEP002 §12 req 5: GEOMETRY_ENCODING and the HDF5 object form one of the three forms.
fn req5_storage_form(ctx: &mut Ctx, col: &super::Col) -> Option<Form> {
    let o = h5::object_open(ctx.id(), &col.name).ok()?;
    let a = attr(ctx, o.id(), &col.path, n::GEOMETRY_ENCODING, R5)?;
    let Some(v) = a.as_str().map(|s| s.trim_end().to_string()) else {
        ctx.sink.error(c::M5_ENCODING_STRING, &col.path, format!("geometry_encoding is {}, expected a scalar string", describe(&a.dtype)));
        return None;
    };
    if !is_strict_ascii(&a.dtype, &v) {
        ctx.sink.warn(R5, &col.path, format!("geometry_encoding is a {}, expected null-terminated fixed-length ascii (accepted leniently, ruling r3)", describe(&a.dtype)));
    }
    match (v.as_str(), &col.obj) {
        (e, ColumnObj::List) if e == n::ENCODING_WKB => Some(Form::Var),
        (e, ColumnObj::Dataset(info)) if e == n::ENCODING_WKB => match &info.dtype {
            Dtype::Opaque { size, tag } if tag == n::OPAQUE_TAG_WKB => Some(Form::Fixed { size: *size, fill: info.fill.clone() }),
            d => {
                ctx.sink.error(c::M5_FORM, &col.path, format!("geometry_encoding \"WKB\" on a column dataset of {}; expected an opaque datatype tagged \"WKB\"", describe(d)));
                None
            }
        },
        (e, ColumnObj::Dataset(info)) if e == n::ENCODING_POINT => match &info.dtype {
            Dtype::Compound { .. } => Some(Form::Point { dtype: info.dtype.clone(), fill: info.fill.clone() }),
            d => {
                ctx.sink.error(c::M5_FORM, &col.path, format!("geometry_encoding \"POINT\" on a column dataset of {}; expected a compound datatype", describe(d)));
                None
            }
        },
        (e, ColumnObj::List) if e == n::ENCODING_POINT => {
            ctx.sink.error(c::M5_FORM, &col.path, "geometry_encoding \"POINT\" on a list column; expected a compound column dataset");
            None
        }
        (e, _) => {
            let reserved = if n::RESERVED_ENCODINGS.contains(&e) { " (reserved for a future revision)" } else { "" };
            ctx.sink.error(c::M5_ENCODING_KNOWN, &col.path, format!("geometry_encoding {e:?}{reserved} is not one of \"WKB\", \"POINT\""));
            None
        }
    }
}

/// A closed vocabulary (HEP002 §6.3, §9.1, §9.2; rulings R1, R2): `d` must be an
/// enumeration over an integer base (any width and byte order) whose member names are
/// exactly `want`, each once. `Ok(true)` when the member values are also the specified
/// ones (`value(name)`), `Ok(false)` when only the names match (read by name: a warning);
/// `Err` says what is wrong.
fn vocabulary(d: &Dtype, want: &[String], value: impl Fn(&str) -> Option<i64>) -> Result<bool, String> {
    let Dtype::Enum { base, members } = d else { return Err("not an enumeration".into()) };
    if !matches!(**base, Dtype::Int { .. }) {
        return Err(format!("an enumeration over {}, not over an integer type", describe(base)));
    }
    let have: BTreeSet<&str> = members.iter().map(|(m, _)| m.as_str()).collect();
    let wanted: BTreeSet<&str> = want.iter().map(|s| s.as_str()).collect();
    let extra: Vec<&str> = have.difference(&wanted).copied().collect();
    let missing: Vec<&str> = wanted.difference(&have).copied().collect();
    if !extra.is_empty() || !missing.is_empty() || have.len() != members.len() {
        let mut why = Vec::new();
        if !missing.is_empty() {
            why.push(format!("lacks the member(s) {}", missing.join(", ")));
        }
        if !extra.is_empty() {
            why.push(format!("has the unknown member(s) {}", extra.join(", ")));
        }
        if have.len() != members.len() {
            why.push("names a member twice".into());
        }
        return Err(format!("{} members: {}", members.len(), why.join("; ")));
    }
    Ok(members.iter().all(|(m, v)| value(m) == Some(*v)))
}

fn geometry_type_names() -> Vec<String> {
    crate::spec::all_geometry_types().into_iter().map(|t| t.name()).collect()
}

/// HEP002 §12 req 6 (datatype part): the geometry-type enumeration (strict: base
/// `H5T_STD_U16LE`, all 28 members, R1; other bases or member subsets: a warning),
/// one-dimensional, distinct elements; a point column lists nothing or its one type.
fn req6_geometry_types_attr(
    ctx: &mut Ctx,
    id: hdf5_sys::h5i::hid_t,
    path: &str,
    point_type: Option<GeometryType>,
    is_point: bool,
) -> Option<BTreeSet<GeometryType>> {
    let a = attr(ctx, id, path, n::GEOMETRY_TYPES, R6)?;
    if !matches!(a.space, Space::Simple(ref d) if d.len() == 1) {
        ctx.sink.error(c::M6_TYPES_SHAPE, path, "geometry_types is not one-dimensional");
        return None;
    }
    let strict = types::geometry_types_dtype();
    let code = |m: &str| GeometryType::from_name(m).map(|t| t.iso_code() as i64);
    match vocabulary(&a.dtype, &geometry_type_names(), code) {
        Err(why) => {
            ctx.sink.error(c::M6_TYPES_ENUM, path, format!("geometry_types is {}: {why}; expected the marquet geometry-type enumeration with exactly its 28 members (ruling r1)", describe(&a.dtype)));
            return None;
        }
        Ok(values_ok) if a.dtype != strict => {
            let values = if values_ok { "" } else { " and member values other than the iso codes" };
            ctx.sink.warn(R6, path, format!("geometry_types is an {}{values}, expected the 28-member enumeration over uint16 little-endian (accepted by member name, ruling r1)", describe(&a.dtype)));
        }
        Ok(_) => {}
    }
    let list = match types::read_geometry_types(&a) {
        Ok(l) => l,
        Err(e) => {
            ctx.sink.error(c::M6_TYPES_ENUM, path, e.to_lowercase());
            return None;
        }
    };
    let set: BTreeSet<GeometryType> = list.iter().copied().collect();
    if set.len() != list.len() {
        ctx.sink.error(c::M6_TYPES_DISTINCT, path, "geometry_types lists a type more than once; expected distinct elements");
    }
    if is_point && !set.is_empty() {
        let ok = point_type.is_some_and(|t| set.len() == 1 && set.contains(&t));
        if !ok {
            ctx.sink.error(
                c::M6_POINT_TYPES,
                path,
                format!(
                    "point column lists {:?}, expected nothing or exactly [{}]",
                    list.iter().map(|t| t.name()).collect::<Vec<_>>(),
                    point_type.map(|t| t.name()).unwrap_or_else(|| "?".into())
                ),
            );
        }
    }
    if set.is_empty() {
        None
    } else {
        Some(set)
    }
}

/// HEP002 §12 req 8 (structure): VALUES is a rank-1 uint8 dataset without a user-defined fill.
fn req8_values_member(ctx: &mut Ctx, name: &str, path: &str) {
    let vp = format!("{path}/{}", n::VALUES);
    let Ok(g) = ctx.grp.group(name) else { return };
    match g.loc_type_by_name(n::VALUES) {
        Ok(hdf5::LocationType::Dataset) => {}
        Ok(_) => return ctx.sink.error(c::M8_VALUES_TYPE, &vp, "values is not a dataset; a wkb list column must not be nested or use string_values"),
        Err(_) => return, // HEP001 req 10
    }
    match h5::dataset_open(g.id(), n::VALUES).and_then(|d| h5::dataset_info(d.id(), &vp)) {
        Ok(info) => {
            if info.dtype.to_le() != Dtype::U8 || info.dims.len() != 1 {
                ctx.sink.error(c::M8_VALUES_TYPE, &vp, format!("values is {} of rank {}, expected a rank-1 uint8 dataset", describe(&info.dtype), info.dims.len()));
            }
            if info.fill.is_some() {
                ctx.sink.error(c::M8_VALUES_NO_FILL, &vp, "values declares a user-defined fill value; a wkb values dataset must not");
            }
        }
        Err(e) => ctx.sink.unreadable(R8, &vp, read_err(&e)),
    }
}

/// HEP002 §12 req 9 (fill): the fill value of a fixed-length WKB column is not valid WKB.
fn req9_fixed_fill(ctx: &mut Ctx, path: &str, fill: Option<&[u8]>) {
    if let Some(f) = fill {
        if wkb::scan(f).is_ok() {
            ctx.sink.error(c::M9_FILL_NOT_WKB, path, "the fill value is a valid wkb value; expected bytes that are not (e.g. \"FILL\" and a byte ramp)");
        }
    }
}

/// HEP002 §12 req 10 (datatype, fill): fields x, y[, z][, m] of one float type; the fill
/// value has no NaN field.
fn req10_point_type(ctx: &mut Ctx, path: &str, dtype: &Dtype, fill: Option<&[u8]>) {
    if types::point_layout(dtype).is_none() {
        return ctx.sink.error(c::M10_POINT_TYPE, path, format!("point column is {}, expected fields x, y[, z][, m] of one float type", describe(dtype)));
    }
    if let (Some(f), Dtype::Compound { fields, .. }) = (fill, &dtype.to_le()) {
        for fl in fields {
            let raw = f.get(fl.offset..fl.offset + fl.dtype.size());
            let nan = match (raw, &fl.dtype) {
                (Some(r), Dtype::Float { size: 8, .. }) => f64::from_le_bytes(r.try_into().unwrap_or([0; 8])).is_nan(),
                (Some(r), Dtype::Float { size: 4, .. }) => f32::from_le_bytes(r.try_into().unwrap_or([0; 4])).is_nan(),
                _ => false,
            };
            if nan {
                ctx.sink.error(c::M10_FILL_NO_NAN, path, format!("fill value has nan in field {}; an all-nan point is an empty point", fl.name));
            }
        }
    }
}

/// HEP002 §12 req 11: CRS is a PROJJSON document or has a null dataspace. Returns the CRS
/// (`None` when unusable).
fn req11_crs(ctx: &mut Ctx, id: hdf5_sys::h5i::hid_t, path: &str) -> Option<Crs> {
    let Some(a) = attr(ctx, id, path, n::CRS, R11) else {
        return if h5::attr_exists(id, n::CRS).unwrap_or(false) { None } else { Some(Crs::Default) };
    };
    if a.space == Space::Null {
        return Some(Crs::Unknown);
    }
    let Some(doc) = a.as_str().map(|s| s.to_string()) else {
        ctx.sink.error(c::M11_CRS_TYPE, path, format!("crs is {}, expected a scalar utf-8 string holding a projjson document", describe(&a.dtype)));
        return None;
    };
    if !matches!(a.dtype, Dtype::FixedString { utf8: true, .. }) {
        ctx.sink.warn(R11, path, format!("crs is a {}, expected fixed-length utf-8 (accepted leniently, ruling r3)", describe(&a.dtype)));
    }
    // A PROJJSON coordinate reference system: a CRS `type` and the members it requires.
    match crate::marquet::projjson::check_projjson(&doc) {
        Ok(_) => Some(Crs::ProjJson(doc)),
        Err(e) => {
            let shown: String = doc.chars().take(40).collect();
            ctx.sink.error(c::M11_CRS_PROJJSON, path, format!("crs {shown:?} is not a projjson coordinate reference system: {e}"));
            None
        }
    }
}

/// HEP002 §12 req 12: EDGES and ORIENTATION have the Marquet enumerations, checked by
/// their member sets (exactly the six EDGES members, exactly COUNTERCLOCKWISE; rulings R1,
/// R2: any integer base and byte order, values only warned); non-planar EDGES need a
/// geographic CRS (R10). Returns (edges member name when usable, ccw).
fn req12_edges_orientation(ctx: &mut Ctx, id: hdf5_sys::h5i::hid_t, path: &str, crs: &Option<Crs>) -> (String, bool) {
    let mut edges = "PLANAR".to_string();
    if let Some(a) = attr(ctx, id, path, n::EDGES, R12) {
        let want: Vec<String> = n::EDGES_MEMBERS.iter().map(|(e, _)| e.to_string()).collect();
        let value = |m: &str| n::EDGES_MEMBERS.iter().find(|(e, _)| *e == m).map(|(_, v)| *v as i64);
        match vocabulary(&a.dtype, &want, value) {
            Err(why) => ctx.sink.error(c::M12_EDGES_ENUM, path, format!("edges is {}: {why}; expected the marquet edges enumeration with exactly its six members (ruling r2)", describe(&a.dtype))),
            Ok(values_ok) => {
                if a.dtype != types::edges_dtype() {
                    let values = if values_ok { "" } else { " and other member values" };
                    ctx.sink.warn(R12, path, format!("edges is an {}{values}, expected the six-member enumeration over uint8 (accepted by member name, ruling r2)", describe(&a.dtype)));
                }
                let name = a.enum_names().and_then(|v| v.into_iter().next()).flatten();
                match (a.space == Space::Scalar, name) {
                    (true, Some(nm)) => {
                        if nm != "PLANAR" && !crs.as_ref().is_some_and(|c| c.is_geographic()) {
                            ctx.sink.error(c::M12_EDGES_GEOGRAPHIC, path, format!("edges is {nm} but the crs is not geographic; non-planar edges need a geographic crs"));
                        }
                        edges = nm;
                    }
                    _ => ctx.sink.error(c::M12_EDGES_VALUE, path, "edges is not a scalar holding one of the enumeration's members"),
                }
            }
        }
    }
    let mut ccw = false;
    if let Some(a) = attr(ctx, id, path, n::ORIENTATION, R12) {
        let (m, v) = n::ORIENTATION_COUNTERCLOCKWISE;
        match vocabulary(&a.dtype, &[m.to_string()], |x| (x == m).then_some(v as i64)) {
            Err(why) => ctx.sink.error(c::M12_ORIENTATION_ENUM, path, format!("orientation is {}: {why}; expected the marquet orientation enumeration with exactly its one member (ruling r2)", describe(&a.dtype))),
            Ok(values_ok) => {
                if a.dtype != types::orientation_dtype() {
                    let values = if values_ok { "" } else { " and another member value" };
                    ctx.sink.warn(R12, path, format!("orientation is an {}{values}, expected the one-member enumeration over uint8 (accepted by member name)", describe(&a.dtype)));
                }
                let name = a.enum_names().and_then(|v| v.into_iter().next()).flatten();
                ccw = a.space == Space::Scalar && name.as_deref() == Some(m);
                if !ccw {
                    ctx.sink.error(c::M12_ORIENTATION_VALUE, path, "orientation is not a scalar holding counterclockwise");
                }
            }
        }
    }
    (edges, ccw)
}

/// HEP002 §12 req 14 (attribute part): BBOX fields and order, scalar, xmin ≤ xmax unless
/// the CRS is geographic.
fn req14_bbox_attr(ctx: &mut Ctx, id: hdf5_sys::h5i::hid_t, path: &str, geographic: bool) -> Option<(BBox, bool, bool)> {
    let a = attr(ctx, id, path, n::BBOX, R14)?;
    let Some((z, m)) = types::is_strict_bbox_dtype(&a.dtype.to_le()) else {
        ctx.sink.error(c::M14_TYPE, path, format!("bbox is {}, expected compound {{xmin, ymin, [zmin,] [mmin,] xmax, ymax, [zmax,] [mmax]}} of float64", describe(&a.dtype)));
        return None;
    };
    if a.space != Space::Scalar {
        ctx.sink.error(c::M14_TYPE, path, "bbox is not scalar");
        return None;
    }
    let (b, _, _) = types::decode_box(&a.dtype.to_le(), &a.data)?;
    if [b.xmin, b.ymin, b.xmax, b.ymax].iter().any(|v| v.is_nan()) {
        ctx.sink.error(c::M14_NAN, path, "bbox has a nan bound");
    }
    if b.xmin > b.xmax && !geographic {
        ctx.sink.error(c::M14_WRAP, path, format!("bbox xmin {} exceeds xmax {}; a wrapping box is allowed only for a geographic crs", b.xmin, b.xmax));
    }
    // Issue #22: longitudes/latitudes out of range mean mislabelled (e.g. projected)
    // coordinates. A warning: HEP002 does not forbid them.
    if geographic {
        if let Some(why) = crate::crs::outside_geographic_range(&b) {
            ctx.sink.warn(R14, path, format!("the crs is geographic but {why}: are these projected coordinates with a wrong crs?"));
        }
    }
    Some((b, z, m))
}

/// HEP002 §12 req 15 (structure): COVERING references a rank-1 column dataset of the table
/// that is not a geometry column, with the covering compound and a fill value, and no
/// covering column is shared.
fn req15_covering_columns(ctx: &mut Ctx, geoms: &[String], cols: &mut [GeomCol]) {
    let mut users: Vec<(String, String)> = Vec::new();
    for gc in cols.iter_mut() {
        let Ok(o) = h5::object_open(ctx.id(), &gc.name) else { continue };
        let Some((refs, space)) = read_refs(ctx, o.id(), &gc.path, n::COVERING, c::M15_REFERENCE, R15) else { continue };
        if space != Space::Scalar || refs.len() != 1 {
            ctx.sink.error(c::M15_REFERENCE, &gc.path, "covering is not a scalar reference");
            continue;
        }
        let Some(Some(t)) = refs.first() else {
            ctx.sink.error(c::M15_REFERENCE, &gc.path, "covering is a null or dangling reference");
            continue;
        };
        let Some(c) = ctx.column_by_path(t).cloned() else {
            ctx.sink.error(c::M15_REFERENCE, &gc.path, format!("covering references {t}, which is not a column of the table"));
            continue;
        };
        let ColumnObj::Dataset(info) = &c.obj else {
            ctx.sink.error(c::M15_REFERENCE, &gc.path, format!("covering references list column '{}'; expected a column dataset", c.name));
            continue;
        };
        if geoms.contains(&c.name) {
            ctx.sink.error(c::M15_REFERENCE, &c.path, "covering column is itself a geometry column");
            continue;
        }
        users.push((c.name.clone(), gc.name.clone()));
        let le = info.dtype.to_le();
        let ok = match &le {
            Dtype::Compound { fields, .. } => {
                let names: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                let z = names == types::box_field_names(true, false);
                let shape_ok = z || names == types::box_field_names(false, false);
                let one_float = matches!(fields.first().map(|f| &f.dtype), Some(Dtype::Float { size: 4 | 8, .. }))
                    && fields.iter().all(|f| Some(&f.dtype) == fields.first().map(|f| &f.dtype));
                (shape_ok && one_float).then_some(z)
            }
            _ => None,
        };
        match ok {
            None => ctx.sink.error(c::M15_TYPE, &c.path, format!("covering column is {}, expected compound {{xmin, ymin, [zmin,] xmax, ymax[, zmax]}} of one float type", describe(&info.dtype))),
            Some(z) => {
                gc.covering = Some(Covering { name: c.name.clone(), path: c.path.clone(), dtype: le, fill: info.fill.clone(), z });
            }
        }
    }
    users.sort();
    for w in users.windows(2) {
        if w[0].0 == w[1].0 {
            let p = ctx.member_path(&w[0].0);
            ctx.sink.error(c::M15_UNSHARED, &p, format!("covering column is referenced by geometry columns '{}' and '{}'; expected exactly one", w[0].1, w[1].1));
        }
    }
}

/// HEP002 §12 req 16 (attributes, linkage): every BLOCK_BBOX / PACKED_RTREE dataset carries
/// its kind's attributes and compound, is referenced only from one geometry column's
/// SEARCH_INDEX_LIST; the ones whose validity check passes are attached for the content
/// checks (ruling R12).
fn req16_index_attributes(ctx: &mut Ctx, geoms: &[String], cols: &mut [GeomCol]) {
    let Ok(si) = ctx.grp.group(n::SEARCH_INDEXES) else { return };
    let Ok(members) = super::read::links(&si) else { return };
    let sp = ctx.member_path(n::SEARCH_INDEXES);
    let gen = ctx.generation_value();
    for (name, k) in members {
        if k != super::read::Link::Dataset {
            continue;
        }
        let ip = format!("{sp}/{name}");
        let Ok(ds) = h5::dataset_open(si.id(), &name) else { continue };
        let kind = crate::h5col::read_token(ds.id(), n::KIND).ok().flatten().unwrap_or_default();
        if kind != n::KIND_BLOCK_BBOX && kind != n::KIND_PACKED_RTREE {
            continue;
        }
        let linked: Vec<String> = ctx.index_links.iter().filter(|(p, _)| *p == ip).map(|(_, c)| c.clone()).collect();
        let mut ok = true;
        if linked.is_empty() {
            ctx.sink.warn(R16, &ip, format!("{} index is not referenced by any geometry column", kind.to_lowercase()));
            ok = false;
        }
        for c in &linked {
            if !geoms.contains(c) {
                ctx.sink.error(c::M16_LINKAGE, &ip, format!("{} index is referenced by '{c}', which is not a geometry column", kind.to_lowercase()));
                ok = false;
            }
        }
        if linked.len() > 1 {
            ctx.sink.error(c::M16_LINKAGE, &ip, format!("index is referenced by {} columns; expected exactly one geometry column", linked.len()));
            ok = false;
        }
        let info = match h5::dataset_info(ds.id(), &ip) {
            Ok(i) => i,
            Err(e) => {
                ctx.sink.unreadable(R16, &ip, read_err(&e));
                continue;
            }
        };
        if info.dims.len() != 1 {
            let layout = if kind == n::KIND_BLOCK_BBOX { c::M16_BLOCK_LAYOUT } else { c::M16_RTREE_LAYOUT };
            ctx.sink.error(layout, &ip, format!("index has rank {}, expected 1", info.dims.len()));
            continue;
        }
        let le = info.dtype.to_le();
        let names = le.field_names();
        let float_fields = |k: usize| matches!(&le, Dtype::Compound { fields, .. } if fields.iter().take(k).all(|f| f.dtype == Dtype::F64));
        let uint_tail = |k: usize| matches!(&le, Dtype::Compound { fields, .. } if fields.iter().skip(k).all(|f| f.dtype == Dtype::U64));
        let sn = ctx.nrows;
        let valid = {
            let sg = h5::attr_read(ds.id(), n::SOURCE_GENERATION).ok().flatten().and_then(|a| a.as_u64());
            let snr = h5::attr_read(ds.id(), n::SOURCE_NROWS).ok().flatten().and_then(|a| a.as_u64());
            gen.is_some() && sg == gen && sn.is_some() && snr == sn
        };
        let col = linked.first().cloned();
        if kind == n::KIND_BLOCK_BBOX {
            let b = read_u64_token(ctx, ds.id(), &ip, n::BLOCK_LENGTH, c::M16_BLOCK_LAYOUT, true);
            if b == Some(0) {
                ctx.sink.error(c::M16_BLOCK_LAYOUT, &ip, "block_length is 0, expected at least 1");
            }
            let mut shape = None;
            for (z, m) in [(false, false), (true, false), (false, true), (true, true)] {
                let mut want = types::box_field_names(z, m);
                want.extend(["n", "null_count", "empty_count"]);
                if names == want && float_fields(want.len() - 3) && uint_tail(want.len() - 3) {
                    shape = Some((z, m));
                }
            }
            let Some((z, m)) = shape else {
                ctx.sink.error(c::M16_BLOCK_LAYOUT, &ip, format!("block_bbox datatype is {}, expected {{xmin, ymin, [zmin,] [mmin,] xmax, ymax, [zmax,] [mmax,] n, null_count, empty_count}}", describe(&info.dtype)));
                continue;
            };
            if let (true, true, Some(b), Some(c)) = (ok, valid, b.filter(|b| *b > 0), col) {
                if let Some(gc) = cols.iter_mut().find(|g| g.name == c) {
                    gc.blocks.push(BlockIndex { path: ip.clone(), b, dtype: le.clone(), z, m });
                }
            }
        } else {
            let ns = read_u64_token_any(ctx, ds.id(), &ip, n::NODE_SIZE, 2);
            let ni = read_u64_token(ctx, ds.id(), &ip, n::NUM_ITEMS, c::M16_RTREE_LAYOUT, true);
            if names != ["xmin", "ymin", "xmax", "ymax", "index"] || !float_fields(4) || !uint_tail(4) {
                ctx.sink.error(c::M16_RTREE_LAYOUT, &ip, format!("packed_rtree datatype is {}, expected {{xmin, ymin, xmax, ymax: float64, index: uint64}}", describe(&info.dtype)));
                continue;
            }
            let ns = match ns {
                Some(v) if v >= 2 && v <= u16::MAX as u64 => Some(v as u16),
                Some(v) => {
                    ctx.sink.error(c::M16_RTREE_LAYOUT, &ip, format!("node_size {v} is outside 2..=65535"));
                    None
                }
                None => None,
            };
            if let (true, true, Some(ns), Some(ni), Some(c)) = (ok, valid, ns, ni, col) {
                if let Some(gc) = cols.iter_mut().find(|g| g.name == c) {
                    gc.rtrees.push(RTree { path: ip.clone(), node_size: ns, num_items: ni });
                }
            }
        }
    }
}

/// A scalar unsigned attribute whose strict width is `width` bytes (R3: others warned).
fn read_u64_token_any(ctx: &mut Ctx, id: hdf5_sys::h5i::hid_t, path: &str, name: &str, width: usize) -> Option<u64> {
    let a = attr(ctx, id, path, name, R16);
    let Some(a) = a else {
        ctx.sink.error(c::M16_RTREE_LAYOUT, path, format!("{name} attribute is missing"));
        return None;
    };
    match (&a.dtype, &a.space) {
        (Dtype::Int { size, .. }, Space::Scalar) if a.as_u64().is_some() => {
            if *size != width || matches!(a.dtype, Dtype::Int { signed: true, .. }) {
                ctx.sink.warn(R16, path, format!("{name} is {}, expected uint{} (accepted leniently, ruling r3)", describe(&a.dtype), width * 8));
            }
            a.as_u64()
        }
        _ => {
            ctx.sink.error(c::M16_RTREE_LAYOUT, path, format!("{name} is {}, expected a scalar uint{}", describe(&a.dtype), width * 8));
            None
        }
    }
}

/// HEP002 §12 req 17: no Marquet datatype stored as a named datatype below the table group.
fn req17_named_datatypes(ctx: &mut Ctx) {
    for p in std::mem::take(&mut ctx.named_marquet_types) {
        ctx.sink.error(c::M17_NAMED_TYPES, &p, "a marquet datatype is stored as a named (committed) datatype below the table group; expected it stored with its attribute or dataset");
    }
}

// ------------------------------------------------------------------ data checks

/// What one row amounts to, once decoded.
enum Row<'a> {
    Null,
    Skip,
    Geometry { gtype: GeometryType, bbox: BBox, empty: bool, wkb: Option<&'a [u8]>, point: Option<[f64; 4]> },
}

/// Visit every XY vertex of a row (NaN pairs skipped).
fn for_vertices(wkb_bytes: Option<&[u8]>, point: Option<[f64; 4]>, mut f: impl FnMut(f64, f64)) {
    if let Some(p) = point {
        if !(p[0].is_nan() && p[1].is_nan()) {
            f(p[0], p[1]);
        }
        return;
    }
    struct V<F>(F);
    impl<F: FnMut(f64, f64)> WkbVisitor for V<F> {
        fn coords(&mut self, _ring: Option<usize>, seq: CoordSeq<'_>) {
            for (x, y) in seq.xy() {
                if !(x.is_nan() && y.is_nan()) {
                    (self.0)(x, y);
                }
            }
        }
        fn begin_geometry(&mut self, _h: &Header) {}
    }
    if let Some(b) = wkb_bytes {
        let _ = wkb::visit(b, &mut V(&mut f));
    }
}

/// Does box `b` contain the row? `None` if so, else what is outside ("xmax 10 does not
/// contain geometry xmax 12.5"). A wrapping `b` is tested vertex by vertex.
fn containment(b: &BBox, bz: bool, bm: bool, g: &BBox, row: &Row<'_>, tol: f64) -> Option<String> {
    let fmt = |name: &str, have: f64, want: f64| format!("{name} {have:?} does not contain geometry {name} {want:?}");
    if b.ymin > g.ymin + tol || b.ymin.is_nan() {
        return Some(fmt("ymin", b.ymin, g.ymin));
    }
    if b.ymax < g.ymax - tol || b.ymax.is_nan() {
        return Some(fmt("ymax", b.ymax, g.ymax));
    }
    if is_wrapping(b) {
        let Row::Geometry { wkb, point, .. } = row else { return None };
        let mut out = None;
        for_vertices(*wkb, *point, |x, _| {
            if out.is_none() && !(x >= b.xmin - tol || x <= b.xmax + tol) {
                out = Some(format!("wrapping box [xmin {:?}, xmax {:?}] does not contain geometry longitude {x:?}", b.xmin, b.xmax));
            }
        });
        if out.is_some() {
            return out;
        }
    } else {
        if b.xmin > g.xmin + tol || b.xmin.is_nan() {
            return Some(fmt("xmin", b.xmin, g.xmin));
        }
        if b.xmax < g.xmax - tol || b.xmax.is_nan() {
            return Some(fmt("xmax", b.xmax, g.xmax));
        }
    }
    if bz && g.zmin <= g.zmax {
        if b.zmin > g.zmin + tol {
            return Some(fmt("zmin", b.zmin, g.zmin));
        }
        if b.zmax < g.zmax - tol {
            return Some(fmt("zmax", b.zmax, g.zmax));
        }
    }
    if bm && g.mmin <= g.mmax {
        if b.mmin > g.mmin + tol {
            return Some(fmt("mmin", b.mmin, g.mmin));
        }
        if b.mmax < g.mmax - tol {
            return Some(fmt("mmax", b.mmax, g.mmax));
        }
    }
    None
}

fn is_placeholder(b: &BBox, z: bool, m: bool) -> bool {
    let xy = b.xmin == f64::INFINITY && b.ymin == f64::INFINITY && b.xmax == f64::NEG_INFINITY && b.ymax == f64::NEG_INFINITY;
    xy && (!z || (b.zmin == f64::INFINITY && b.zmax == f64::NEG_INFINITY)) && (!m || (b.mmin == f64::INFINITY && b.mmax == f64::NEG_INFINITY))
}

/// Decode row `i` of a batch into a [`Row`], reporting req 7/8/9/10 problems.
fn decode_row<'a>(ctx: &mut Ctx, gc: &GeomCol, batch: &'a Batch, i: usize) -> Row<'a> {
    let row = batch.start + i as u64;
    match batch.items[i] {
        Item::Null => Row::Null,
        Item::Skip => Row::Skip,
        Item::EmptySlice => {
            ctx.sink.row_error(c::M8_NONNULL_SLICES, &gc.path, row, "non-null row has an empty slice; a null row must be marked false in mask, an empty geometry is a wkb value");
            Row::Skip
        }
        Item::Wkb(..) => {
            let bytes = batch.wkb(i).unwrap_or(&[]);
            match wkb::scan(bytes) {
                Ok(info) => Row::Geometry { gtype: info.geometry_type, bbox: info.bbox, empty: info.is_empty, wkb: Some(bytes), point: None },
                Err(e) => {
                    let fixed = matches!(gc.form, Form::Fixed { .. });
                    let rule = match e.kind {
                        WkbErrorKind::TrailingBytes(_) if fixed => c::M9_ONE_VALUE,
                        _ => c::M7_WKB,
                    };
                    let what = if fixed { "element" } else { "value" };
                    ctx.sink.row_error(rule, &gc.path, row, format!("{what} is not one iso wkb geometry: {}", super::lower(&e.to_string())));
                    Row::Skip
                }
            }
        }
        Item::Point(c) => {
            let dims = gc.point_type.map(|t| t.dims).unwrap_or(Dimensions::Xy);
            let present = [true, true, dims.has_z(), dims.has_m()];
            let all_nan = c.iter().zip(present).filter(|(_, p)| *p).all(|(v, _)| v.is_nan());
            if all_nan {
                return Row::Geometry { gtype: GeometryType::new(GeometryKind::Point, dims), bbox: BBox::EMPTY, empty: true, wkb: None, point: Some(c) };
            }
            if c[0].is_nan() || c[1].is_nan() {
                ctx.sink.row_error(c::M10_POINT_VALUES, &gc.path, row, format!("point ({:?}, {:?}) has a nan x or y but is not an empty point (nan in every field)", c[0], c[1]));
                return Row::Skip;
            }
            let mut b = BBox::EMPTY;
            b.add_xy(c[0], c[1]);
            if dims.has_z() {
                b.add_z(c[2]);
            }
            if dims.has_m() {
                b.add_m(c[3]);
            }
            Row::Geometry { gtype: GeometryType::new(GeometryKind::Point, dims), bbox: b, empty: false, wkb: None, point: Some(c) }
        }
    }
}

/// Ring orientation of one polygon ring (R9), judged as the producer judges it
/// ([`crate::marquet::checks::ring_check`]): `Ok(true)` when wrong, `Err(())` when it
/// cannot be checked (non-planar ring crossing ±180 or around a pole).
fn ring_wrong(seq: &CoordSeq<'_>, ring: usize, planar: bool) -> Result<bool, ()> {
    use crate::marquet::checks::{ring_check, RingCheck};
    let pts: Vec<(f64, f64)> = seq.xy().collect();
    match ring_check(&pts, ring, planar) {
        RingCheck::Ok => Ok(false),
        RingCheck::Wrong => Ok(true),
        RingCheck::Unchecked => Err(()),
    }
}

/// Block bookkeeping while streaming (req 16).
struct BlockState {
    cache_start: u64,
    cache: Vec<(BBox, u64, u64, u64)>,
    extent: u64,
    block: u64,
    n: u64,
    nulls: u64,
    empties: u64,
    skipped: u64,
    reported_box: bool,
    /// Some non-empty geometry of the block has a non-NaN Z (M) value.
    zseen: bool,
    mseen: bool,
}

fn read_block_entries(ds: hdf5_sys::h5i::hid_t, bi: &BlockIndex, start: u64, count: u64) -> crate::Result<Vec<(BBox, u64, u64, u64)>> {
    let bytes = h5::dataset_read(ds, start, count, &bi.dtype, &bi.path)?;
    let Dtype::Compound { fields, size } = &bi.dtype else { return Ok(Vec::new()) };
    let boxes = Dtype::Compound { size: *size, fields: fields.iter().filter(|f| matches!(f.dtype, Dtype::Float { .. })).cloned().collect() };
    let u = |el: &[u8], name: &str| {
        fields
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| el.get(f.offset..f.offset + 8))
            .map(|r| u64::from_le_bytes(r.try_into().unwrap_or([0; 8])))
            .unwrap_or(0)
    };
    Ok(bytes
        .chunks_exact((*size).max(1))
        .map(|el| {
            let b = types::decode_box(&boxes, el).map(|x| x.0).unwrap_or(BBox::EMPTY);
            (b, u(el, "n"), u(el, "null_count"), u(el, "empty_count"))
        })
        .collect())
}

/// Does box `b` contain the row: its vertices (`Err((false, msg))` when not) and, under
/// non-planar edges (`needs`), its geodesic edges and enclosed pole (`Err((true, msg))`)?
fn check_box(b: &BBox, bz: bool, bm: bool, g: &BBox, row: &Row<'_>, needs: Option<&EdgeNeeds>, tol: f64) -> Result<(), (bool, String)> {
    if let Some(msg) = containment(b, bz, bm, g, row, tol) {
        return Err((false, msg));
    }
    if let Some(msg) = needs.and_then(|n| n.outside(b, tol)) {
        return Err((true, msg));
    }
    Ok(())
}

/// Stream the column once: req 6 (types listed), 7–10 (values), 12 (ranges for non-planar
/// edges), 13 (orientation), 14 (BBOX), 15 (covering rows), 16 (block entries). Under
/// non-planar edges every box must also hold the geodesic edges (ruling R8).
fn data_pass(ctx: &mut Ctx, gc: &GeomCol) -> u64 {
    let Some(nrows) = ctx.nrows else { return 0 };
    let tol = if gc.geographic { ctx.tolerance_geographic } else { 0.0 };
    let mut reader = match Reader::open(ctx.id(), &gc.name, &gc.path, gc.form.clone(), nrows, ctx.opts.batch_rows) {
        Ok(r) => r,
        Err(e) => {
            ctx.sink.unreadable(R7, &gc.path, read_err(&e));
            return 0;
        }
    };
    let cover = gc.covering.as_ref().and_then(|c| CoverReader::open(ctx.id(), &c.name, &c.path, &c.dtype, c.fill.clone()).ok());
    let mut blocks: Vec<(BlockState, Option<h5::Hid>)> = gc
        .blocks
        .iter()
        .map(|bi| {
            let ds = h5::dataset_open(ctx.id(), &bi.path).ok();
            let extent = ds.as_ref().and_then(|d| h5::dataset_info(d.id(), &bi.path).ok()).map(|i| i.dims[0]).unwrap_or(0);
            let st = BlockState { cache_start: 0, cache: Vec::new(), extent, block: 0, n: 0, nulls: 0, empties: 0, skipped: 0, reported_box: false, zseen: false, mseen: false };
            (st, ds)
        })
        .collect();
    for (k, bi) in gc.blocks.iter().enumerate() {
        let need = nrows.div_ceil(bi.b);
        if blocks[k].0.extent < need {
            ctx.sink.error(c::M16_BLOCK_LAYOUT, &bi.path, format!("block_bbox has {} entries, expected at least {need} (ceil(nrows {nrows} / block_length {}))", blocks[k].0.extent, bi.b));
            blocks[k].1 = None;
        }
    }
    let mut unchecked_rings = 0u64;
    let mut skipped_here = 0u64;
    let mut rows_read = 0u64;
    loop {
        let batch = match reader.next_batch() {
            Ok(Some(b)) => b,
            Ok(None) => break,
            Err(e) => {
                ctx.sink.unreadable(R7, &gc.path, read_err(&e));
                // The rows not read count as skipped: an R-tree over them is not verified.
                skipped_here += nrows.saturating_sub(rows_read).max(1);
                break;
            }
        };
        rows_read = batch.end();
        let covers = match &cover {
            Some(cr) => match cr.read(batch.start, batch.end()) {
                Ok(v) => Some(v),
                Err(e) => {
                    if let Some(cc) = &gc.covering {
                        ctx.sink.unreadable(R15, &cc.path, read_err(&e));
                    }
                    None
                }
            },
            None => None,
        };
        for i in 0..batch.items.len() {
            let row_no = batch.start + i as u64;
            let row = decode_row(ctx, gc, &batch, i);
            if matches!(row, Row::Skip) {
                skipped_here += 1;
            }
            // req 6: type listed
            if let (Row::Geometry { gtype, .. }, Some(types)) = (&row, &gc.types) {
                if !types.contains(gtype) {
                    ctx.sink.row_error(c::M6_TYPES_COMPLETE, &gc.path, row_no, format!("geometry type {} is not listed in geometry_types {:?}", gtype.name(), types.iter().map(|t| t.name()).collect::<Vec<_>>()));
                }
            }
            // What the geodesic edges need of a box (ruling R8), once per row.
            let needs = match &row {
                Row::Geometry { empty: false, wkb: Some(bytes), .. } if !gc.planar => gc.edges.needs(bytes),
                _ => None,
            };
            if let Row::Geometry { bbox, empty: false, .. } = &row {
                // req 12: lon/lat ranges under non-planar edges
                if !gc.planar && (bbox.xmin < -180.0 - tol || bbox.xmax > 180.0 + tol || bbox.ymin < -90.0 - tol || bbox.ymax > 90.0 + tol) {
                    ctx.sink.row_error(c::M12_LONLAT, &gc.path, row_no, format!("coordinates [{:?}, {:?}] x [{:?}, {:?}] leave longitude [-180, 180] / latitude [-90, 90] under non-planar edges", bbox.xmin, bbox.xmax, bbox.ymin, bbox.ymax));
                }
                // req 14: BBOX
                if let Some((b, z, m)) = &gc.bbox {
                    if let Err((edges, msg)) = check_box(b, *z, *m, bbox, &row, needs.as_ref(), tol) {
                        ctx.sink.row_error(if edges { c::M14_CONTAINS_EDGES } else { c::M14_CONTAINS }, &gc.path, row_no, format!("bbox {msg}"));
                    }
                }
            }
            // req 13: orientation
            if gc.ccw {
                if let Row::Geometry { wkb: Some(bytes), .. } = &row {
                    let mut wrong: Option<(usize, usize)> = None;
                    let _ = wkb::for_each_polygon_ring(bytes, |p, r, seq| match ring_wrong(&seq, r, gc.planar) {
                        Ok(true) if wrong.is_none() => wrong = Some((p, r)),
                        Err(()) => unchecked_rings += 1,
                        _ => {}
                    });
                    if let Some((p, r)) = wrong {
                        let want = if r == 0 { "counterclockwise (exterior)" } else { "clockwise (interior)" };
                        ctx.sink.row_error(c::M13_RINGS, &gc.path, row_no, format!("polygon {p} ring {r} is not {want} as orientation counterclockwise requires"));
                    }
                }
            }
            // req 15: covering row
            if let (Some(cv), Some(cc)) = (&covers, &gc.covering) {
                if let Some(cb) = cv.get(i) {
                    check_cover_row(ctx, gc, cc, row_no, cb, &row, needs.as_ref(), tol);
                }
            }
            // req 16: block entries
            for (k, bi) in gc.blocks.iter().enumerate() {
                let (st, ds) = &mut blocks[k];
                let Some(ds) = ds else { continue };
                block_row(ctx, bi, st, ds.id(), row_no, nrows, &row, needs.as_ref(), tol, gc.geographic);
            }
        }
    }
    if unchecked_rings > 0 {
        ctx.sink.warn(R13, &gc.path, format!("{unchecked_rings} rings crossing the antimeridian or enclosing a pole under non-planar edges: orientation not checked (ruling r9)"));
    }
    skipped_here
}

#[allow(clippy::too_many_arguments)]
fn check_cover_row(ctx: &mut Ctx, gc: &GeomCol, cc: &Covering, row_no: u64, cb: &Option<BBox>, row: &Row<'_>, needs: Option<&EdgeNeeds>, tol: f64) {
    match (row, cb) {
        (Row::Skip, _) => {}
        (Row::Null, None) => {}
        (Row::Null, Some(_)) => ctx.sink.row_error(c::M15_NULL_ROWS, &cc.path, row_no, format!("covering row is not the fill value but the geometry of '{}' is null", gc.name)),
        (Row::Geometry { .. }, None) => ctx.sink.row_error(c::M15_NULL_ROWS, &cc.path, row_no, format!("covering row holds the fill value but the geometry of '{}' is not null", gc.name)),
        (Row::Geometry { empty: true, .. }, Some(b)) => {
            if !is_placeholder(b, cc.z, false) {
                ctx.sink.row_error(c::M15_EMPTY_ROWS, &cc.path, row_no, "geometry is empty but the covering row is not the empty box (+inf minima, -inf maxima)");
            }
        }
        (Row::Geometry { bbox, .. }, Some(b)) => {
            if b.xmin > b.xmax && !gc.geographic {
                ctx.sink.row_error(c::M15_WRAP, &cc.path, row_no, format!("covering box xmin {:?} exceeds xmax {:?}; wrapping boxes need a geographic crs", b.xmin, b.xmax));
            } else if let Err((edges, msg)) = check_box(b, cc.z, false, bbox, row, needs, tol) {
                ctx.sink.row_error(if edges { c::M15_CONTAINS_EDGES } else { c::M15_CONTAINS }, &cc.path, row_no, format!("covering box {msg}"));
            }
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn block_row(ctx: &mut Ctx, bi: &BlockIndex, st: &mut BlockState, ds: hdf5_sys::h5i::hid_t, row_no: u64, nrows: u64, row: &Row<'_>, needs: Option<&EdgeNeeds>, tol: f64, geographic: bool) {
    let j = row_no / bi.b;
    if st.cache.is_empty() || j < st.cache_start || j >= st.cache_start + st.cache.len() as u64 {
        let cnt = (st.extent.saturating_sub(j)).min(4096);
        match read_block_entries(ds, bi, j, cnt) {
            Ok(v) => {
                st.cache = v;
                st.cache_start = j;
            }
            Err(e) => {
                ctx.sink.unreadable(R16, &bi.path, read_err(&e));
                st.cache.clear();
                return;
            }
        }
    }
    let Some(&(eb, en, enull, eempty)) = st.cache.get((j - st.cache_start) as usize) else { return };
    if j != st.block || st.n == 0 {
        st.block = j;
        st.n = 0;
        st.nulls = 0;
        st.empties = 0;
        st.skipped = 0;
        st.reported_box = false;
        st.zseen = false;
        st.mseen = false;
    }
    st.n += 1;
    match row {
        Row::Null => st.nulls += 1,
        Row::Geometry { empty: true, .. } => st.empties += 1,
        Row::Geometry { bbox, .. } => {
            st.zseen |= bbox.zmin <= bbox.zmax;
            st.mseen |= bbox.mmin <= bbox.mmax;
            if !st.reported_box {
                if let Err((edges, msg)) = check_box(&eb, bi.z, bi.m, bbox, row, needs, tol) {
                    st.reported_box = true;
                    ctx.sink.row_error(if edges { c::M16_BLOCK_CONTAINS_EDGES } else { c::M16_BLOCK_CONTAINS }, &bi.path, row_no, format!("entry {j} box {msg}"));
                }
            }
        }
        Row::Skip => st.skipped += 1,
    }
    let block_end = j.saturating_add(1).saturating_mul(bi.b).min(nrows);
    if row_no + 1 == block_end && st.skipped > 0 {
        st.n = 0; // counts cannot be checked with unreadable rows (reported elsewhere)
    } else if row_no + 1 == block_end {
        let mut bad = Vec::new();
        if en != st.n {
            bad.push((c::M16_BLOCK_COUNTS, format!("n {en} but the block has {} rows", st.n)));
        }
        if enull != st.nulls {
            bad.push((c::M16_BLOCK_COUNTS, format!("null_count {enull} but the block has {} null rows", st.nulls)));
        }
        if eempty != st.empties {
            bad.push((c::M16_BLOCK_COUNTS, format!("empty_count {eempty} but the block has {} empty rows", st.empties)));
        }
        if !geographic && eb.xmin > eb.xmax && !is_placeholder(&eb, bi.z, bi.m) {
            bad.push((c::M16_BLOCK_WRAP, format!("box xmin {:?} exceeds xmax {:?}; wrapping boxes need a geographic crs", eb.xmin, eb.xmax)));
        }
        let no_geometry = st.nulls + st.empties == st.n;
        if no_geometry && !is_placeholder(&eb, bi.z, bi.m) {
            bad.push((c::M16_BLOCK_EMPTY, "the block has no geometry but its box is not the empty placeholder (+inf minima, -inf maxima)".into()));
        }
        // HEP002 §10.3: all Z (M) values NaN or absent: the empty range (+inf, -inf).
        if !no_geometry {
            for (has, seen, lo, hi, name) in [(bi.z, st.zseen, eb.zmin, eb.zmax, "z"), (bi.m, st.mseen, eb.mmin, eb.mmax, "m")] {
                if has && !seen && !(lo == f64::INFINITY && hi == f64::NEG_INFINITY) {
                    bad.push((c::M16_BLOCK_ZM_EMPTY, format!("no geometry of the block has a {name} value but {name}min {lo:?}, {name}max {hi:?} is not the empty range (+inf, -inf)")));
                }
            }
        }
        for (k, b) in bad {
            ctx.sink.error(k, &bi.path, format!("entry {j} (rows {}..{block_end}): {b}", j.saturating_mul(bi.b)));
        }
        st.n = 0;
    }
}

/// The sub-check a packed R-tree finding belongs to.
fn tree_check(f: &packed_rtree::TreeFinding) -> super::Check {
    use packed_rtree::TreeFinding as F;
    match f {
        F::InternalIndex { .. } | F::InternalBox { .. } => c::M16_RTREE_INTERNAL,
        F::LeafBoxMissesGeometry { .. } => c::M16_RTREE_LEAF_BOXES,
        F::LeafRowOutOfRange { .. } | F::LeafForNullOrEmptyRow { .. } | F::DuplicateRow { .. } | F::MissingRow { .. } | F::ItemCount { .. } | F::Truncated => c::M16_RTREE_LEAVES,
    }
}

/// HEP002 §12 req 16 for packed R-trees whose validity check passes: §17 header checks and
/// [`packed_rtree::verify`] against a second streamed pass over the column; under
/// non-planar edges every leaf box must also hold its row's geodesic edges (ruling R8).
fn rtree_pass(ctx: &mut Ctx, gc: &GeomCol) {
    let Some(nrows) = ctx.nrows else { return };
    let tol = if gc.geographic { ctx.tolerance_geographic } else { 0.0 };
    for t in &gc.rtrees {
        if t.num_items > nrows {
            ctx.sink.error(c::M16_RTREE_HEADER, &t.path, format!("fails the hep002 §17 checks: num_items {} exceeds nrows {nrows}", t.num_items));
            continue;
        }
        let entries = match read_rtree(ctx, t) {
            Ok(e) => e,
            Err(e) => {
                ctx.sink.unreadable(R16, &t.path, read_err(&e));
                continue;
            }
        };
        let mut reader = match Reader::open(ctx.id(), &gc.name, &gc.path, gc.form.clone(), nrows, ctx.opts.batch_rows) {
            Ok(r) => r,
            Err(_) => continue,
        };
        // Leaf box of each row (first leaf), for the geodesic check.
        let mut leaf_of: HashMap<u64, BBox> = HashMap::new();
        if !gc.planar {
            let total = entries.len() as u64;
            let first_leaf = total.saturating_sub(t.num_items) as usize;
            for e in entries.iter().skip(first_leaf) {
                leaf_of.entry(e.index).or_insert(BBox::xy(e.xmin, e.ymin, e.xmax, e.ymax));
            }
        }
        let mut edge_findings: Vec<(u64, String)> = Vec::new();
        let rows = reader.rows();
        let mut cur: Option<Batch> = None;
        let res = packed_rtree::verify(&entries, t.num_items, t.node_size, nrows, tol, |r| {
            if r >= rows {
                return Ok(None);
            }
            while cur.as_ref().is_none_or(|b| r >= b.end()) {
                match reader.next_batch()? {
                    Some(b) => cur = Some(b),
                    None => return Ok(None),
                }
            }
            let b = cur.as_ref().expect("set above");
            let i = (r - b.start) as usize;
            Ok(match b.items[i] {
                Item::Wkb(..) => {
                    let bytes = b.wkb(i).unwrap_or(&[]);
                    let vertex = wkb::scan(bytes).ok().filter(|w| !w.is_empty).map(|w| w.bbox);
                    if let (Some(v), Some(leaf)) = (vertex, leaf_of.get(&r)) {
                        let inside = |l: &BBox| l.xmin <= v.xmin + tol && l.xmax >= v.xmax - tol && l.ymin <= v.ymin + tol && l.ymax >= v.ymax - tol;
                        if inside(leaf) {
                            if let Some(msg) = gc.edges.needs(bytes).and_then(|n| n.outside(leaf, tol)) {
                                if edge_findings.len() < ctx.opts.max_row_findings {
                                    edge_findings.push((r, msg));
                                }
                            }
                        }
                    }
                    vertex
                }
                Item::Point(p) if !p[0].is_nan() && !p[1].is_nan() => Some(BBox::xy(p[0], p[1], p[0], p[1])),
                _ => None,
            })
        });
        match res {
            Ok(findings) => {
                for f in findings {
                    ctx.sink.error(tree_check(&f), &t.path, super::lower(&f.to_string()));
                }
            }
            Err(e @ crate::error::MarquetError::SpecViolation { .. }) => {
                ctx.sink.error(c::M16_RTREE_HEADER, &t.path, format!("fails the hep002 §17 checks: {}", super::lower(&e.to_string())))
            }
            Err(e) => ctx.sink.unreadable(R16, &t.path, read_err(&e)),
        }
        for (r, msg) in edge_findings {
            ctx.sink.row_error(c::M16_RTREE_LEAF_EDGES, &t.path, r, format!("leaf box of row {r} {msg}"));
        }
    }
}

fn read_rtree(ctx: &Ctx, t: &RTree) -> crate::Result<Vec<Entry>> {
    let ds = h5::dataset_open(ctx.id(), &t.path)?;
    let info = h5::dataset_info(ds.id(), &t.path)?;
    let total = packed_rtree::total_entries(t.num_items, t.node_size)?.min(info.dims[0]);
    let mem = Dtype::Compound {
        size: 40,
        fields: ["xmin", "ymin", "xmax", "ymax"]
            .iter()
            .enumerate()
            .map(|(i, n)| h5::Field { name: n.to_string(), offset: 8 * i, dtype: Dtype::F64 })
            .chain(std::iter::once(h5::Field { name: "index".into(), offset: 32, dtype: Dtype::U64 }))
            .collect(),
    };
    let mut out = Vec::with_capacity(total.min(1 << 24) as usize);
    let mut s = 0;
    while s < total {
        let cnt = (total - s).min(1 << 16);
        let bytes = h5::dataset_read(ds.id(), s, cnt, &mem, &t.path)?;
        for el in bytes.chunks_exact(40) {
            let f = |k: usize| f64::from_le_bytes(el[8 * k..8 * k + 8].try_into().unwrap_or([0; 8]));
            out.push(Entry { xmin: f(0), ymin: f(1), xmax: f(2), ymax: f(3), index: u64::from_le_bytes(el[32..40].try_into().unwrap_or([0; 8])) });
        }
        s += cnt;
    }
    Ok(out)
}

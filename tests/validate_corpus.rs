//! The malformed-file registry (`testdata/bad/`): a conformant Marquet table built with the
//! library, then corrupted with raw `marquet::h5` calls so that each file breaks one
//! sub-check of one requirement. The validator must report exactly that sub-check (plus only
//! the documented consequences), and every sub-check the validator registers
//! (`marquet::validate::checks::ALL`) has at least one bad file here. Run with
//! `MARQUET_BLESS=1` to rewrite the committed copies in `testdata/bad/` and its README.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use marquet::h5::{self, DatasetSpec, Dtype, Field, Space};
use marquet::h5col::list::ListSpec;
use marquet::h5col::{search_index as h5index, search_index as search, Array, ColumnSpec, File};
use marquet::spatial::geodesic::EdgeModel;
use marquet::spatial::{block_bbox, packed_rtree};
use marquet::marquet::{spatial_index, types};
use marquet::marquet::{Crs, Edges, GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::spec::names;
use marquet::validate::checks::{self as k, Check};
use marquet::validate::{validate_file, Options, Severity, Status};
use marquet::{BBox, Dimensions};

#[path = "../examples/stations.rs"]
#[allow(dead_code)]
mod stations;

#[path = "../examples/lakes.rs"]
#[allow(dead_code)]
mod lakes;

const N: usize = 12;
const T: &str = "/lakes";
/// NAD83(CSRS) / UTM zone 20N as a complete PROJJSON document (HEP002 §8.1, §12 req 11).
const UTM: &str = lakes::EPSG_2961_PROJJSON;
/// The geometry columns, in GEOMETRY_COLUMNS order.
const GEOMS: [&str; 4] = ["shoreline", "centroid", "loc_wkb", "route"];
/// Rows of `route` from this one on are null, so its last row block has no geometry.
const ROUTE_ROWS: usize = 8;
/// Row of `shoreline` that is null, that is empty, that is a multipolygon, that has a hole.
const NULL_ROW: usize = 4;
const EMPTY_ROW: usize = 7;
const MULTI_ROW: usize = 9;
const HOLE_ROW: usize = 2;
const BLOCK: u64 = 4;

fn tmpdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("marquet-validate-corpus-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn square(x0: f64, y0: f64, s: f64, ccw: bool) -> Vec<(f64, f64)> {
    let mut r = vec![(x0, y0), (x0 + s, y0), (x0 + s, y0 + s), (x0, y0 + s), (x0, y0)];
    if !ccw {
        r.reverse();
    }
    r
}

fn polygon_body(rings: &[Vec<(f64, f64)>], out: &mut Vec<u8>) {
    out.push(1);
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&(rings.len() as u32).to_le_bytes());
    for r in rings {
        out.extend_from_slice(&(r.len() as u32).to_le_bytes());
        for (x, y) in r {
            out.extend_from_slice(&x.to_le_bytes());
            out.extend_from_slice(&y.to_le_bytes());
        }
    }
}

fn polygon(rings: &[Vec<(f64, f64)>]) -> Vec<u8> {
    let mut v = Vec::new();
    polygon_body(rings, &mut v);
    v
}

fn multipolygon(polys: &[Vec<Vec<(f64, f64)>>]) -> Vec<u8> {
    let mut v = vec![1];
    v.extend_from_slice(&6u32.to_le_bytes());
    v.extend_from_slice(&(polys.len() as u32).to_le_bytes());
    for p in polys {
        polygon_body(p, &mut v);
    }
    v
}

fn point(x: f64, y: f64) -> Vec<u8> {
    let mut v = vec![1, 1, 0, 0, 0];
    v.extend_from_slice(&x.to_le_bytes());
    v.extend_from_slice(&y.to_le_bytes());
    v
}

/// The shoreline of row `i` (counterclockwise exteriors, clockwise holes).
fn shoreline(i: usize) -> Option<Vec<u8>> {
    let (x, y) = (500_000.0 + 100.0 * i as f64, 4_900_000.0 + 50.0 * i as f64);
    match i {
        NULL_ROW => None,
        EMPTY_ROW => Some(polygon(&[])),
        MULTI_ROW => Some(multipolygon(&[vec![square(x, y, 10.0, true)], vec![square(x + 20.0, y, 5.0, true)]])),
        HOLE_ROW => Some(polygon(&[square(x, y, 30.0, true), square(x + 10.0, y + 10.0, 5.0, false)])),
        _ => Some(polygon(&[square(x, y, 10.0 + i as f64, true)])),
    }
}

fn lonlat(i: usize) -> (f64, f64) {
    (-88.0 + i as f64 * 0.5, 40.0 + i as f64 * 0.25)
}

/// A LineString Z.
fn line_z(pts: &[(f64, f64, f64)]) -> Vec<u8> {
    let mut v = vec![1];
    v.extend_from_slice(&1002u32.to_le_bytes());
    v.extend_from_slice(&(pts.len() as u32).to_le_bytes());
    for (x, y, z) in pts {
        for c in [x, y, z] {
            v.extend_from_slice(&c.to_le_bytes());
        }
    }
    v
}

/// The vertices of `route` row `i`: one 60°-long edge along latitude 60°, whose great
/// circle bulges north to about 63.4° (ruling R8).
fn route_pts(i: usize) -> Vec<(f64, f64, f64)> {
    let x0 = -120.0 + 5.0 * i as f64;
    vec![(x0, 60.0, i as f64), (x0 + 60.0, 60.0, i as f64)]
}

/// `route` row `i`: spherical-edge lines with Z; null from [`ROUTE_ROWS`] on.
fn route(i: usize) -> Option<Vec<u8>> {
    match i {
        NULL_ROW => None,
        EMPTY_ROW => Some(line_z(&[])),
        i if i >= ROUTE_ROWS => None,
        i => Some(line_z(&route_pts(i))),
    }
}

/// The vertex box of `route` row `i` (what a producer ignoring the edges would write).
fn route_vertex_box(i: usize) -> BBox {
    marquet::wkb::scan(&route(i).unwrap()).unwrap().bbox
}

fn block_dtype() -> Dtype {
    let mut fields: Vec<Field> = types::box_field_names(false, false)
        .iter()
        .enumerate()
        .map(|(k, n)| Field { name: n.to_string(), offset: 8 * k, dtype: Dtype::F64 })
        .collect();
    for (k, n) in ["n", "null_count", "empty_count"].iter().enumerate() {
        fields.push(Field { name: n.to_string(), offset: 32 + 8 * k, dtype: Dtype::U64 });
    }
    Dtype::Compound { size: 56, fields }
}

fn rtree_dtype() -> Dtype {
    let mut fields: Vec<Field> =
        ["xmin", "ymin", "xmax", "ymax"].iter().enumerate().map(|(k, n)| Field { name: n.to_string(), offset: 8 * k, dtype: Dtype::F64 }).collect();
    fields.push(Field { name: "index".into(), offset: 32, dtype: Dtype::U64 });
    Dtype::Compound { size: 40, fields }
}

fn block_bytes(e: &block_bbox::BlockEntry) -> Vec<u8> {
    let mut v = Vec::new();
    for x in [e.bbox.xmin, e.bbox.ymin, e.bbox.xmax, e.bbox.ymax] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    for x in [e.n, e.null_count, e.empty_count] {
        v.extend_from_slice(&x.to_le_bytes());
    }
    v
}

/// Build the conformant table: a polygon list column with covering, block and R-tree
/// indexes, a point column, a fixed-length WKB column, a row-label column with a
/// CHUNK_MINMAX index, a boolean column and a categorical column.
fn build_base(path: &Path) {
    let f = File::create(path).unwrap();
    let mut t = MarquetTable::create(&f, T).unwrap();
    t.add_column("lake_id", &ColumnSpec::new(Dtype::U64).with_chunk_rows(8)).unwrap();
    t.add_geometry_column(
        "shoreline",
        &GeometryColumnSpec::default()
            .with_form(StorageForm::VarWkb)
            .with_crs(Crs::ProjJson(UTM.into()))
            .with_orientation_ccw()
            .with_covering("shoreline_bbox")
            .with_chunk_rows(8),
    )
    .unwrap();
    t.add_geometry_column("centroid", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }).with_chunk_rows(8)).unwrap();
    t.add_geometry_column("loc_wkb", &GeometryColumnSpec::default().with_form(StorageForm::FixedWkb { size: 21 }).with_chunk_rows(8)).unwrap();
    t.add_geometry_column(
        "route",
        &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_edges(Edges::Spherical).with_covering("route_bbox").with_chunk_rows(8),
    )
    .unwrap();
    t.add_column("flag", &ColumnSpec::new(Dtype::hep001_bool()).with_chunk_rows(8)).unwrap();
    t.add_column("label", &ColumnSpec::new(Dtype::I8).with_chunk_rows(8)).unwrap();
    t.table().set_index_columns(&["lake_id"]).unwrap();
    let empty_point = point(f64::NAN, f64::NAN);
    let pts: Vec<Option<Vec<u8>>> = (0..N)
        .map(|i| match i {
            NULL_ROW => None,
            EMPTY_ROW => Some(empty_point.clone()),
            _ => {
                let (x, y) = lonlat(i);
                Some(point(x, y))
            }
        })
        .collect();
    t.append(
        &GeoBatch::new()
            .with_array("lake_id", Array::from_u64(&(0..N as u64).collect::<Vec<_>>()))
            .with_array("flag", Array::from_bools(&(0..N).map(|i| i % 3 == 0).collect::<Vec<_>>()))
            .with_array("label", Array::from_i8(&(0..N).map(|i| (i % 3) as i8).collect::<Vec<_>>()))
            .with_geometry("shoreline", GeometryValues::Wkb((0..N).map(shoreline).collect()))
            .with_geometry("centroid", GeometryValues::Wkb(pts.clone()))
            .with_geometry("loc_wkb", GeometryValues::Wkb(pts))
            .with_geometry("route", GeometryValues::Wkb((0..N).map(route).collect())),
    )
    .unwrap();
    let tb = t.table();
    // Categories.
    let g = h5::object_open(tb.id(), ".").unwrap();
    drop(h5::group_create(g.id(), names::CATEGORIES).unwrap());
    let labels = Array::from_strings(&["pond", "lake", "reservoir"], true);
    let ds = h5::dataset_create(
        g.id(),
        "CATEGORIES/label__CATEGORIES",
        &DatasetSpec { dtype: labels.dtype.clone(), len: 3, chunk: None, filters: vec![], fill: None },
    )
    .unwrap();
    h5::dataset_write(ds.id(), 0, &labels.dtype, &labels.bytes, "labels").unwrap();
    let label = h5::object_open(g.id(), "label").unwrap();
    h5::attr_write_refs(label.id(), names::CATEGORIES, &[format!("{T}/CATEGORIES/label__CATEGORIES")], true).unwrap();
    // CHUNK_MINMAX on lake_id.
    h5index::build_chunk_minmax(tb, "lake_id").unwrap();
    // BLOCK_BBOX and PACKED_RTREE on shoreline.
    let gen = h5index::ensure_generation(tb).unwrap();
    let summaries: Vec<block_bbox::RowSummary> = (0..N)
        .map(|i| match shoreline(i) {
            None => block_bbox::RowSummary::Null,
            Some(w) => {
                let info = marquet::wkb::scan(&w).unwrap();
                if info.is_empty {
                    block_bbox::RowSummary::Empty
                } else {
                    block_bbox::RowSummary::Geometry(info.bbox)
                }
            }
        })
        .collect();
    let blocks = block_bbox::build_blocks(summaries.iter().copied(), BLOCK).unwrap();
    let bytes: Vec<u8> = blocks.iter().flat_map(block_bytes).collect();
    let spec = DatasetSpec { dtype: block_dtype(), len: blocks.len() as u64, chunk: Some(64), filters: vec![], fill: None };
    let ds = h5index::create_index_dataset(tb, "shoreline", "shoreline__block_bbox", &spec, names::KIND_BLOCK_BBOX).unwrap();
    h5::dataset_write(ds.id(), 0, &block_dtype(), &bytes, "block").unwrap();
    h5::attr_write_u64(ds.id(), names::BLOCK_LENGTH, BLOCK).unwrap();
    h5index::write_tokens(tb, &format!("{T}/SEARCH_INDEXES/shoreline__block_bbox"), gen, N as u64).unwrap();
    let items: Vec<(BBox, u64)> = summaries
        .iter()
        .enumerate()
        .filter_map(|(i, s)| match s {
            block_bbox::RowSummary::Geometry(b) => Some((*b, i as u64)),
            _ => None,
        })
        .collect();
    let entries = packed_rtree::build(&items, 4).unwrap();
    let mut bytes = Vec::new();
    for e in &entries {
        for x in [e.xmin, e.ymin, e.xmax, e.ymax] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        bytes.extend_from_slice(&e.index.to_le_bytes());
    }
    let spec = DatasetSpec { dtype: rtree_dtype(), len: entries.len() as u64, chunk: Some(64), filters: vec![], fill: None };
    let ds = h5index::create_index_dataset(tb, "shoreline", "shoreline__rtree", &spec, names::KIND_PACKED_RTREE).unwrap();
    h5::dataset_write(ds.id(), 0, &rtree_dtype(), &bytes, "rtree").unwrap();
    h5::attr_write(ds.id(), names::NODE_SIZE, &Dtype::U16, &Space::Scalar, &4u16.to_le_bytes()).unwrap();
    h5::attr_write_u64(ds.id(), names::NUM_ITEMS, items.len() as u64).unwrap();
    h5index::write_tokens(tb, &format!("{T}/SEARCH_INDEXES/shoreline__rtree"), gen, N as u64).unwrap();
    // The spherical column: a block index written here in 64-entry chunks (boxes that hold
    // the geodesic edges, as the producer computes them), the library's R-tree.
    let summaries: Vec<block_bbox::RowSummary> = (0..N)
        .map(|i| match route(i) {
            None => block_bbox::RowSummary::Null,
            Some(w) => {
                let b = marquet::marquet::bounds::geometry_box(&w, EdgeModel::Spherical, false).unwrap();
                if b.is_empty() {
                    block_bbox::RowSummary::Empty
                } else {
                    block_bbox::RowSummary::Geometry(b)
                }
            }
        })
        .collect();
    let blocks = block_bbox::build_blocks(summaries.iter().copied(), BLOCK).unwrap();
    let dt = spatial_index::block_bbox_dtype(true, false);
    let mut bytes = Vec::new();
    for e in &blocks {
        let b = e.bbox;
        for x in [b.xmin, b.ymin, b.zmin, b.xmax, b.ymax, b.zmax] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        for x in [e.n, e.null_count, e.empty_count] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    let spec = DatasetSpec { dtype: dt.clone(), len: blocks.len() as u64, chunk: Some(64), filters: vec![], fill: None };
    let ds = h5index::create_index_dataset(tb, "route", "route__block_bbox", &spec, names::KIND_BLOCK_BBOX).unwrap();
    h5::dataset_write(ds.id(), 0, &dt, &bytes, "block").unwrap();
    h5::attr_write_u64(ds.id(), names::BLOCK_LENGTH, BLOCK).unwrap();
    h5index::write_tokens(tb, &format!("{T}/SEARCH_INDEXES/route__block_bbox"), gen, N as u64).unwrap();
    t.build_rtree("route", Some(4)).unwrap();
    f.flush().unwrap();
}

// ------------------------------------------------------------------ corruption helpers

fn open(f: &File, p: &str) -> h5::Hid {
    h5::object_open(f.id(), p).unwrap()
}

fn ascii(f: &File, obj: &str, name: &str, v: &str) {
    let o = open(f, obj);
    h5::attr_write_ascii(o.id(), name, v).unwrap();
}

fn delete_attr(f: &File, obj: &str, name: &str) {
    h5::attr_delete(open(f, obj).id(), name).unwrap();
}

fn write_at(f: &File, ds: &str, row: u64, dtype: &Dtype, bytes: &[u8]) {
    h5::dataset_write(open(f, ds).id(), row, dtype, bytes, ds).unwrap();
}

fn read_u64(f: &File, ds: &str, row: u64) -> u64 {
    let b = h5::dataset_read(open(f, ds).id(), row, 1, &Dtype::U64, ds).unwrap();
    u64::from_le_bytes(b[..8].try_into().unwrap())
}

fn column_order(f: &File, extra: &[&str], drop: &[&str]) {
    let g = open(f, T);
    let a = h5::attr_read(g.id(), names::COLUMN_ORDER).unwrap().unwrap();
    let mut v: Vec<String> = a.strings.into_iter().filter(|s| !drop.contains(&s.as_str())).collect();
    v.extend(extra.iter().map(|s| s.to_string()));
    h5::attr_write_utf8_array(g.id(), names::COLUMN_ORDER, &v).unwrap();
}

/// Offset of row `i` in `shoreline/VALUES`.
fn shore_off(f: &File, i: u64) -> u64 {
    read_u64(f, &format!("{T}/shoreline/OFFSETS"), i)
}

/// Overwrite the WKB value of row `row` of list column `col` in place (same length).
fn write_values(f: &File, col: &str, row: u64, bytes: &[u8]) {
    let off = read_u64(f, &format!("{T}/{col}/OFFSETS"), row);
    write_at(f, &format!("{T}/{col}/VALUES"), off, &Dtype::U8, bytes);
}

/// Set fields (by name) of element `row` of the compound dataset `ds`.
fn set_fields(f: &File, ds: &str, row: u64, vals: &[(&str, f64)]) {
    let o = open(f, ds);
    let dt = h5::dataset_info(o.id(), ds).unwrap().dtype.to_le();
    let mut e = h5::dataset_read(o.id(), row, 1, &dt, ds).unwrap();
    set_in(&dt, &mut e, vals);
    h5::dataset_write(o.id(), row, &dt, &e, ds).unwrap();
}

/// Field `name` of element `row` of the compound dataset `ds`, as f64.
fn get_field(f: &File, ds: &str, row: u64, name: &str) -> f64 {
    let o = open(f, ds);
    let dt = h5::dataset_info(o.id(), ds).unwrap().dtype.to_le();
    let e = h5::dataset_read(o.id(), row, 1, &dt, ds).unwrap();
    let Dtype::Compound { fields, .. } = &dt else { panic!("{ds} is not a compound") };
    let fl = fields.iter().find(|x| x.name == name).unwrap();
    f64::from_le_bytes(e[fl.offset..fl.offset + 8].try_into().unwrap())
}

fn set_in(dt: &Dtype, e: &mut [u8], vals: &[(&str, f64)]) {
    let Dtype::Compound { fields, .. } = dt else { panic!("not a compound: {dt:?}") };
    for (n, v) in vals {
        let Some(fl) = fields.iter().find(|x| x.name == *n) else { continue };
        let r = fl.offset..fl.offset + fl.dtype.size();
        match fl.dtype {
            Dtype::Float { size: 8, .. } => e[r].copy_from_slice(&v.to_le_bytes()),
            Dtype::Float { size: 4, .. } => e[r].copy_from_slice(&(*v as f32).to_le_bytes()),
            Dtype::Int { size: 8, .. } => e[r].copy_from_slice(&(*v as u64).to_le_bytes()),
            _ => panic!("field {n}"),
        }
    }
}

/// Set fields of the BBOX attribute of column `col`.
fn set_bbox(f: &File, col: &str, vals: &[(&str, f64)]) {
    let c = open(f, &format!("{T}/{col}"));
    let a = h5::attr_read(c.id(), names::BBOX).unwrap().unwrap();
    let dt = a.dtype.to_le();
    let mut e = a.data.clone();
    set_in(&dt, &mut e, vals);
    h5::attr_write(c.id(), names::BBOX, &dt, &Space::Scalar, &e).unwrap();
}

/// The box fields of `b` (with Z).
fn box_fields(b: &BBox) -> [(&'static str, f64); 6] {
    [("xmin", b.xmin), ("ymin", b.ymin), ("zmin", b.zmin), ("xmax", b.xmax), ("ymax", b.ymax), ("zmax", b.zmax)]
}

/// Rewrite GEOMETRY_COLUMNS (after a column was recreated, so its references resolve).
fn geometry_columns(f: &File, cols: &[&str]) {
    let v: Vec<String> = cols.iter().map(|c| format!("{T}/{c}")).collect();
    h5::attr_write_refs(open(f, T).id(), names::GEOMETRY_COLUMNS, &v, false).unwrap();
}

/// Replace column dataset `name` by one of `dtype` with fill `fill` holding `data`, keeping
/// its attributes (references are not copied; GEOMETRY_COLUMNS is rewritten).
fn recreate(f: &File, name: &str, dtype: &Dtype, fill: Option<Vec<u8>>, data: &[u8]) {
    let g = open(f, T);
    let old = h5::object_open(g.id(), name).unwrap();
    let mut attrs = Vec::new();
    for a in h5::attr_names(old.id()).unwrap() {
        let raw = h5::attr_read(old.id(), &a).unwrap().unwrap();
        if raw.dtype != Dtype::StdRef {
            attrs.push((a, raw));
        }
    }
    drop(old);
    h5::link_delete(g.id(), name).unwrap();
    let ds = h5::dataset_create(g.id(), name, &DatasetSpec { dtype: dtype.clone(), len: N as u64, chunk: Some(8), filters: vec![], fill }).unwrap();
    h5::dataset_write(ds.id(), 0, dtype, data, name).unwrap();
    for (n, a) in attrs {
        match a.as_str() {
            Some(s) if a.dtype.is_string() => h5::attr_write_ascii(ds.id(), &n, s).unwrap(),
            _ => h5::attr_write(ds.id(), &n, &a.dtype.to_le(), &a.space, &a.data).unwrap(),
        }
    }
    geometry_columns(f, &GEOMS);
}

/// Read every element of column dataset `name` in its little-endian layout.
fn read_all(f: &File, name: &str) -> (Dtype, Vec<u8>) {
    let p = format!("{T}/{name}");
    let o = open(f, &p);
    let dt = h5::dataset_info(o.id(), &p).unwrap().dtype.to_le();
    let b = h5::dataset_read(o.id(), 0, N as u64, &dt, &p).unwrap();
    (dt, b)
}

/// A new column dataset `name` of `dtype` (N rows of `data`), listed in column-order.
fn new_column(f: &File, name: &str, dtype: Dtype, fill: Option<Vec<u8>>, data: &[u8]) -> h5::Hid {
    let ds = h5::dataset_create(open(f, T).id(), name, &DatasetSpec { dtype: dtype.clone(), len: N as u64, chunk: Some(8), filters: vec![], fill }).unwrap();
    h5::dataset_write(ds.id(), 0, &dtype, data, name).unwrap();
    column_order(f, &[name], &[]);
    ds
}

/// A list column `blob` of bytes (all rows null) added through the library.
fn blob(f: &File) {
    f.table(T).unwrap().add_list_column("blob", &ListSpec::bytes(vec![])).unwrap();
}

/// Write OFFSETS (N + 1 values) and resize VALUES of `blob`.
fn blob_layout(f: &File, offsets: &[u64], values_len: u64) {
    let o: Vec<u8> = offsets.iter().flat_map(|v| v.to_le_bytes()).collect();
    write_at(f, &format!("{T}/blob/OFFSETS"), 0, &Dtype::U64, &o);
    let vp = format!("{T}/blob/VALUES");
    h5::dataset_set_len(open(f, &vp).id(), values_len, &vp).unwrap();
}

/// lake_id's SEARCH_INDEX_LIST, optionally with `extra` targets.
fn lake_id_indexes(f: &File, extra: &[&str]) {
    let mut v: Vec<String> = vec![format!("{T}/SEARCH_INDEXES/lake_id__chunk_minmax")];
    v.extend(extra.iter().map(|e| e.to_string()));
    h5::attr_write_refs(open(f, &format!("{T}/lake_id")).id(), names::SEARCH_INDEX_LIST, &v, false).unwrap();
}

/// The packed R-tree entries of `items` as the §10.4 compound's bytes.
fn rtree_bytes(items: &[(BBox, u64)]) -> Vec<u8> {
    let mut bytes = Vec::new();
    for e in packed_rtree::build(items, 4).unwrap() {
        for x in [e.xmin, e.ymin, e.xmax, e.ymax] {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
        bytes.extend_from_slice(&e.index.to_le_bytes());
    }
    bytes
}

/// Nested list levels `deep/VALUES/VALUES/…` (`levels` list levels over a uint8 leaf).
fn nested_list(f: &File, levels: usize) {
    let mut cur = h5::group_create(open(f, T).id(), "deep").unwrap();
    let mut len = N as u64;
    for level in 0..levels {
        h5::attr_write_ascii(cur.id(), names::CLASS, names::LIST_COLUMN).unwrap();
        h5::attr_write_ascii(cur.id(), names::KIND, names::KIND_OFFSETS).unwrap();
        let spec = DatasetSpec { dtype: Dtype::U64, len: len + 1, chunk: Some(16), filters: vec![], fill: None };
        let o = h5::dataset_create(cur.id(), names::OFFSETS, &spec).unwrap();
        h5::dataset_write(o.id(), 0, &Dtype::U64, &vec![0u8; 8 * (len as usize + 1)], "offsets").unwrap();
        len = 0;
        if level + 1 == levels {
            drop(h5::dataset_create(cur.id(), names::VALUES, &DatasetSpec { dtype: Dtype::U8, len: 0, chunk: Some(16), filters: vec![], fill: None }).unwrap());
        } else {
            cur = h5::group_create(cur.id(), names::VALUES).unwrap();
        }
    }
    column_order(f, &["deep"], &[]);
}

// ------------------------------------------------------------------ the registry

struct Case {
    file: &'static str,
    /// The sub-checks whose errors the file must produce.
    checks: &'static [Check],
    /// Other sub-checks whose errors are allowed, as documented consequences.
    also: &'static [Check],
    what: &'static str,
    corrupt: fn(&File),
}

const SI: &str = "/lakes/SEARCH_INDEXES";

const CASES: &[Case] = &[
    // ---- an object that cannot be read
    Case { file: "u001_corrupt_chunk.h5", checks: &[k::UNREADABLE], also: &[], what: "chunk 0 of centroid (shuffle + zstd) overwritten with bytes zstd cannot decode", corrupt: |f| {
        let p = format!("{T}/centroid");
        h5::chunk_write_raw(open(f, &p).id(), 0, &[0xde; 64], &p).unwrap();
    } },
    // ---- HEP001 outside §13
    Case { file: "h104_no_class.h5", checks: &[k::H_TABLE_GROUP], also: &[], what: "CLASS deleted from /lakes: the file holds no table group", corrupt: |f| delete_attr(f, T, names::CLASS) },
    Case { file: "h105_no_version.h5", checks: &[k::H_VERSION_PRESENT], also: &[], what: "VERSION deleted", corrupt: |f| delete_attr(f, T, names::VERSION) },
    Case { file: "h100_version_2.h5", checks: &[k::H_VERSION_VALUE], also: &[], what: "VERSION \"2.0\" (MAJOR above what is implemented)", corrupt: |f| ascii(f, T, names::VERSION, "2.0") },
    Case { file: "h106_soft_link.h5", checks: &[k::H_HARD_LINKS], also: &[], what: "a soft link /lakes/alias to /lakes/lake_id", corrupt: |f| {
        h5::link_create_soft(open(f, T).id(), "/lakes/lake_id", "alias").unwrap();
    } },
    Case { file: "h101_stray_group.h5", checks: &[k::H_NO_STRAY_OBJECTS], also: &[], what: "a user group provenance below the table group", corrupt: |f| drop(h5::group_create(open(f, T).id(), "provenance").unwrap()) },
    Case { file: "h107_named_datatype.h5", checks: &[k::H_NO_NAMED_TYPES], also: &[], what: "a float64 datatype committed as /lakes/my_float", corrupt: |f| {
        h5::commit_datatype(open(f, T).id(), "my_float", &Dtype::F64).unwrap();
    } },
    Case { file: "h102_no_fill_value.h5", checks: &[k::H_FILL_DECLARED], also: &[], what: "column depth (float64) without a user-defined fill value", corrupt: |f| {
        drop(new_column(f, "depth", Dtype::F64, None, &[0u8; 8 * N]));
    } },
    Case { file: "h108_fill_inside_valid_range.h5", checks: &[k::H_FILL_OUTSIDE_VALID], also: &[], what: "column depth whose fill 9.97e36 lies inside [valid_min 0, valid_max 1e38]", corrupt: |f| {
        let ds = new_column(f, "depth", Dtype::F64, Some(names::FILL_F64.to_le_bytes().to_vec()), &[0u8; 8 * N]);
        h5::attr_write(ds.id(), names::VALID_MIN, &Dtype::F64, &Space::Scalar, &0.0f64.to_le_bytes()).unwrap();
        h5::attr_write(ds.id(), names::VALID_MAX, &Dtype::F64, &Space::Scalar, &1e38f64.to_le_bytes()).unwrap();
    } },
    Case { file: "h109_mask_attribute.h5", checks: &[k::H_NO_MASK_ATTR], also: &[], what: "lake_id carries an attribute MASK", corrupt: |f| ascii(f, &format!("{T}/lake_id"), names::MASK, "x") },
    Case { file: "h103_obj_ref_type.h5", checks: &[k::H_REF_TYPE], also: &[], what: "INDEX_COLUMNS written with the deprecated H5T_STD_REF_OBJ (empty array)", corrupt: |f| {
        let g = open(f, T);
        h5::attr_write(g.id(), names::INDEX_COLUMNS, &Dtype::ObjRef, &Space::Simple(vec![0]), &[]).unwrap();
    } },
    Case { file: "h110_minmax_on_list.h5", checks: &[k::H_LIST_INDEX_KINDS, k::H9_ON_LIST], also: &[], what: "shoreline's SEARCH_INDEX_LIST also references lake_id's CHUNK_MINMAX (a kind not declared for list columns)", corrupt: |f| {
        let v: Vec<String> = ["shoreline__block_bbox", "shoreline__rtree", "lake_id__chunk_minmax"].iter().map(|n| format!("{SI}/{n}")).collect();
        h5::attr_write_refs(open(f, &format!("{T}/shoreline")).id(), names::SEARCH_INDEX_LIST, &v, false).unwrap();
    } },
    // ---- HEP001 §13
    Case { file: "h001_nrows_float.h5", checks: &[k::H1_NROWS], also: &[], what: "NROWS written as float64 instead of uint64", corrupt: |f| {
        h5::attr_write(open(f, T).id(), names::NROWS, &Dtype::F64, &Space::Scalar, &12.0f64.to_le_bytes()).unwrap();
    } },
    Case { file: "h002_unequal_extents.h5", checks: &[k::H2_EXTENTS_EQUAL], also: &[], what: "column lake_id extended by 5 rows; the other columns keep their extent", corrupt: |f| {
        let p = format!("{T}/lake_id");
        h5::dataset_set_len(open(f, &p).id(), N as u64 + 5, &p).unwrap();
    } },
    Case { file: "h014_nrows_past_extents.h5", checks: &[k::H2_EXTENT_NROWS], also: &[k::H10_OFFSETS_TYPE, k::H10_MASK_TYPE], what: "NROWS 13 with every extent 12 (list OFFSETS and MASK too short as a consequence)", corrupt: |f| {
        h5::attr_write_u64(open(f, T).id(), names::NROWS, N as u64 + 1).unwrap();
    } },
    Case { file: "h003_group_in_search_indexes.h5", checks: &[k::H3_DATASETS_ONLY], also: &[], what: "a group SEARCH_INDEXES/extra (only datasets are allowed)", corrupt: |f| {
        drop(h5::group_create(open(f, T).id(), "SEARCH_INDEXES/extra").unwrap());
    } },
    Case { file: "h015_kind_not_string.h5", checks: &[k::H3_KIND_STRING], also: &[k::H4_LIST_TARGETS], what: "KIND of lake_id__chunk_minmax written as uint64", corrupt: |f| {
        let o = open(f, &format!("{SI}/lake_id__chunk_minmax"));
        h5::attr_write_u64(o.id(), names::KIND, 1).unwrap();
    } },
    Case { file: "h016_index_list_scalar.h5", checks: &[k::H4_LIST_SHAPE], also: &[], what: "SEARCH_INDEX_LIST of lake_id is a scalar reference", corrupt: |f| {
        h5::attr_write_refs(open(f, &format!("{T}/lake_id")).id(), names::SEARCH_INDEX_LIST, &[format!("{SI}/lake_id__chunk_minmax")], true).unwrap();
    } },
    Case { file: "h004_index_list_outside.h5", checks: &[k::H4_LIST_RESOLVES], also: &[], what: "SEARCH_INDEX_LIST of lake_id also references the column flag (not a search index)", corrupt: |f| lake_id_indexes(f, &["/lakes/flag"]) },
    Case { file: "h017_index_list_to_plain_dataset.h5", checks: &[k::H4_LIST_TARGETS], also: &[], what: "SEARCH_INDEX_LIST of lake_id also references SEARCH_INDEXES/notes, a dataset without KIND", corrupt: |f| {
        drop(h5::dataset_create(open(f, T).id(), "SEARCH_INDEXES/notes", &DatasetSpec { dtype: Dtype::U8, len: 1, chunk: None, filters: vec![], fill: None }).unwrap());
        lake_id_indexes(f, &["/lakes/SEARCH_INDEXES/notes"]);
    } },
    Case { file: "h018_categories_outside.h5", checks: &[k::H5_CATEGORIES_REF], also: &[k::H5_CATEGORIES_USED], what: "CATEGORIES of label references /lakes/lake_id (outside the CATEGORIES group)", corrupt: |f| {
        h5::attr_write_refs(open(f, &format!("{T}/label")).id(), names::CATEGORIES, &[format!("{T}/lake_id")], true).unwrap();
    } },
    Case { file: "h019_categorical_float.h5", checks: &[k::H5_CATEGORICAL_INT], also: &[], what: "a float64 column score with CATEGORIES", corrupt: |f| {
        let ds = new_column(f, "score", Dtype::F64, Some(names::FILL_F64.to_le_bytes().to_vec()), &[0u8; 8 * N]);
        h5::attr_write_refs(ds.id(), names::CATEGORIES, &[format!("{T}/CATEGORIES/label__CATEGORIES")], true).unwrap();
    } },
    Case { file: "h020_group_in_categories.h5", checks: &[k::H5_CATEGORIES_DATASETS], also: &[], what: "a group CATEGORIES/sub", corrupt: |f| drop(h5::group_create(open(f, T).id(), "CATEGORIES/sub").unwrap()) },
    Case { file: "h021_categories_rank2.h5", checks: &[k::H5_CATEGORIES_RANK], also: &[], what: "column label3 whose CATEGORIES is a 3x2 dataset", corrupt: |f| {
        drop(h5::dataset_create_2d(open(f, T).id(), "CATEGORIES/grid", &Dtype::U8, [3, 2], [3, 2], &[]).unwrap());
        let ds = new_column(f, "label3", Dtype::I8, Some(vec![0xff]), &[0u8; N]);
        h5::attr_write_refs(ds.id(), names::CATEGORIES, &[format!("{T}/CATEGORIES/grid")], true).unwrap();
    } },
    Case { file: "h005_unreferenced_categories.h5", checks: &[k::H5_CATEGORIES_USED], also: &[], what: "a categories dataset CATEGORIES/unused that no column references", corrupt: |f| {
        let a = Array::from_strings(&["x"], true);
        drop(h5::dataset_create(open(f, T).id(), "CATEGORIES/unused", &DatasetSpec { dtype: a.dtype.clone(), len: 1, chunk: None, filters: vec![], fill: None }).unwrap());
    } },
    Case { file: "h022_column_order_int.h5", checks: &[k::H6_ORDER_TYPE], also: &[], what: "column-order written as a uint64 array", corrupt: |f| {
        h5::attr_write(open(f, T).id(), names::COLUMN_ORDER, &Dtype::U64, &Space::Simple(vec![1]), &[0u8; 8]).unwrap();
    } },
    Case { file: "h023_column_order_twice.h5", checks: &[k::H6_ORDER_UNIQUE], also: &[], what: "column-order lists flag twice", corrupt: |f| column_order(f, &["flag"], &[]) },
    Case { file: "h024_column_order_ghost.h5", checks: &[k::H6_ORDER_COLUMNS], also: &[], what: "column-order lists ghost, which is not a column", corrupt: |f| column_order(f, &["ghost"], &[]) },
    Case { file: "h006_column_order_incomplete.h5", checks: &[k::H6_ORDER_COMPLETE], also: &[], what: "column-order omits the column flag", corrupt: |f| column_order(f, &[], &["flag"]) },
    Case { file: "h025_index_columns_not_column.h5", checks: &[k::H7_INDEX_RESOLVE], also: &[], what: "INDEX_COLUMNS references the categories dataset", corrupt: |f| {
        h5::attr_write_refs(open(f, T).id(), names::INDEX_COLUMNS, &[format!("{T}/CATEGORIES/label__CATEGORIES")], false).unwrap();
    } },
    Case { file: "h026_index_columns_list.h5", checks: &[k::H7_INDEX_NOT_LIST], also: &[], what: "INDEX_COLUMNS references the list column blob", corrupt: |f| {
        blob(f);
        h5::attr_write_refs(open(f, T).id(), names::INDEX_COLUMNS, &[format!("{T}/blob")], false).unwrap();
        h5::attr_write_utf8(open(f, T).id(), names::INDEX_NAME, "blob").unwrap();
    } },
    Case { file: "h007_index_name_mismatch.h5", checks: &[k::H7_INDEX_NAME], also: &[], what: "_index is \"flag\" but INDEX_COLUMNS[0] is lake_id", corrupt: |f| {
        h5::attr_write_utf8(open(f, T).id(), names::INDEX_NAME, "flag").unwrap();
    } },
    Case { file: "h008_categorical_fill_is_code.h5", checks: &[k::H8_CATEGORICAL_FILL], also: &[], what: "categorical column label2 whose fill value 0 is a valid category code", corrupt: |f| {
        let ds = new_column(f, "label2", Dtype::I8, Some(vec![0]), &[1u8; N]);
        h5::attr_write_refs(ds.id(), names::CATEGORIES, &[format!("{T}/CATEGORIES/label__CATEGORIES")], true).unwrap();
    } },
    Case { file: "h027_chunk_minmax_short.h5", checks: &[k::H9_MINMAX_LAYOUT], also: &[], what: "valid-token CHUNK_MINMAX on lake_id cut to 1 entry (2 chunks)", corrupt: |f| {
        let p = format!("{SI}/lake_id__chunk_minmax");
        h5::dataset_set_len(open(f, &p).id(), 1, &p).unwrap();
    } },
    Case { file: "h009_chunk_minmax_wrong.h5", checks: &[k::H9_MINMAX_CONTENT], also: &[], what: "valid-token CHUNK_MINMAX on lake_id whose entry 0 says max 3 (rows 0..8 reach 7)", corrupt: |f| {
        let p = format!("{SI}/lake_id__chunk_minmax");
        let ds = open(f, &p);
        let info = h5::dataset_info(ds.id(), &p).unwrap();
        let mut e = h5::dataset_read(ds.id(), 0, 1, &info.dtype.to_le(), &p).unwrap();
        e[8..16].copy_from_slice(&3u64.to_le_bytes());
        h5::dataset_write(ds.id(), 0, &info.dtype.to_le(), &e, &p).unwrap();
    } },
    Case { file: "h028_sorted_rows_wrong.h5", checks: &[k::H9_SORTED_CONTENT], also: &[], what: "valid-token SORTED_ROWS on lake_id with its first two positions swapped", corrupt: |f| {
        search::build_sorted_rows(&f.table(T).unwrap(), "lake_id").unwrap();
        let mut v = 1u64.to_le_bytes().to_vec();
        v.extend_from_slice(&0u64.to_le_bytes());
        write_at(f, &format!("{SI}/lake_id__sorted_rows"), 0, &Dtype::U64, &v);
    } },
    Case { file: "h029_bitmap_wrong.h5", checks: &[k::H9_BITMAP_CONTENT], also: &[], what: "valid-token BITMAP on label with the first byte of its first bitmap inverted", corrupt: |f| {
        search::build_bitmap(&f.table(T).unwrap(), "label", 16).unwrap();
        let p = format!("{SI}/label__bitmap");
        let ds = open(f, &p);
        let info = h5::dataset_info(ds.id(), &p).unwrap();
        let mut row = h5::dataset_read_rows_2d(ds.id(), 0, 1, info.dims[1], &Dtype::U8, &p).unwrap();
        row[0] = !row[0];
        h5::dataset_write_rows_2d(ds.id(), 0, info.dims[1], &Dtype::U8, &row, &p).unwrap();
    } },
    Case { file: "h030_bloom_false_negative.h5", checks: &[k::H9_BLOOM_CONTENT], also: &[], what: "valid-token CHUNK_BLOOM on lake_id whose first filter is all zero bits", corrupt: |f| {
        search::build_chunk_bloom(&f.table(T).unwrap(), "lake_id", None).unwrap();
        let p = format!("{SI}/lake_id__chunk_bloom");
        let ds = open(f, &p);
        let info = h5::dataset_info(ds.id(), &p).unwrap();
        h5::dataset_write_rows_2d(ds.id(), 0, info.dims[1], &Dtype::U8, &vec![0u8; info.dims[1] as usize], &p).unwrap();
    } },
    Case { file: "h031_list_no_kind.h5", checks: &[k::H10_KIND], also: &[], what: "KIND deleted from the list column shoreline", corrupt: |f| delete_attr(f, &format!("{T}/shoreline"), names::KIND) },
    Case { file: "h032_list_extra_member.h5", checks: &[k::H10_MEMBERS], also: &[], what: "a dataset shoreline/EXTRA beside OFFSETS, MASK and VALUES", corrupt: |f| {
        drop(h5::dataset_create(open(f, &format!("{T}/shoreline")).id(), "EXTRA", &DatasetSpec { dtype: Dtype::U8, len: 1, chunk: None, filters: vec![], fill: None }).unwrap());
    } },
    Case { file: "h033_offsets_short.h5", checks: &[k::H10_OFFSETS_TYPE], also: &[], what: "list column blob whose OFFSETS holds N instead of N + 1 values", corrupt: |f| {
        blob(f);
        let p = format!("{T}/blob/OFFSETS");
        h5::dataset_set_len(open(f, &p).id(), N as u64, &p).unwrap();
    } },
    Case { file: "h034_offsets_start.h5", checks: &[k::H10_OFFSETS_ZERO], also: &[], what: "list column blob whose OFFSETS are all 1", corrupt: |f| {
        blob(f);
        blob_layout(f, &[1; N + 1], 1);
    } },
    Case { file: "h010_offsets_decrease.h5", checks: &[k::H10_OFFSETS_ORDER], also: &[], what: "shoreline OFFSETS[6] set below OFFSETS[5]", corrupt: |f| {
        let v = shore_off(f, 5) - 1;
        write_at(f, &format!("{T}/shoreline/OFFSETS"), 6, &Dtype::U64, &v.to_le_bytes());
    } },
    Case { file: "h035_mask_short.h5", checks: &[k::H10_MASK_TYPE], also: &[], what: "list column blob whose MASK holds N - 1 values", corrupt: |f| {
        blob(f);
        let p = format!("{T}/blob/MASK");
        h5::dataset_set_len(open(f, &p).id(), N as u64 - 1, &p).unwrap();
    } },
    Case { file: "h010_mask_value_7.h5", checks: &[k::H10_MASK_VALUES], also: &[], what: "shoreline MASK[1] holds 7 (neither FALSE nor TRUE)", corrupt: |f| {
        write_at(f, &format!("{T}/shoreline/MASK"), 1, &Dtype::hep001_bool(), &[7]);
    } },
    Case { file: "h036_null_slice.h5", checks: &[k::H10_NULL_SLICES], also: &[], what: "list column blob whose null row 0 has a slice of one byte", corrupt: |f| {
        blob(f);
        let mut o = vec![1u64; N + 1];
        o[0] = 0;
        blob_layout(f, &o, 1);
    } },
    Case { file: "h037_values_short.h5", checks: &[k::H10_VALUES_TYPE], also: &[], what: "list column blob whose row 0 (non-null) ends at 1 but VALUES is empty", corrupt: |f| {
        blob(f);
        let mut o = vec![1u64; N + 1];
        o[0] = 0;
        blob_layout(f, &o, 0);
        write_at(f, &format!("{T}/blob/MASK"), 0, &Dtype::hep001_bool(), &[1]);
    } },
    Case { file: "h038_list_nesting_34.h5", checks: &[k::H10_NESTING], also: &[], what: "a list column deep nested 34 levels", corrupt: |f| nested_list(f, 34) },
    Case { file: "h011_vlen_in_list.h5", checks: &[k::H11_NO_VLEN], also: &[], what: "list column notes whose VALUES is a variable-length string dataset", corrupt: |f| {
        let g = open(f, T);
        let lg = h5::group_create(g.id(), "notes").unwrap();
        h5::attr_write_ascii(lg.id(), names::CLASS, names::LIST_COLUMN).unwrap();
        h5::attr_write_ascii(lg.id(), names::KIND, names::KIND_OFFSETS).unwrap();
        let o = h5::dataset_create(lg.id(), "OFFSETS", &DatasetSpec { dtype: Dtype::U64, len: N as u64 + 1, chunk: None, filters: vec![], fill: None }).unwrap();
        h5::dataset_write(o.id(), 0, &Dtype::U64, &[0u8; 8 * (N + 1)], "offsets").unwrap();
        drop(h5::dataset_create(lg.id(), "VALUES", &DatasetSpec { dtype: Dtype::VarString { utf8: true }, len: 0, chunk: Some(16), filters: vec![], fill: None }).unwrap());
        column_order(f, &["notes"], &[]);
    } },
    Case { file: "h012_no_generation.h5", checks: &[k::H12_GENERATION], also: &[], what: "GENERATION deleted while search indexes exist", corrupt: |f| delete_attr(f, T, names::GENERATION) },
    Case { file: "h039_no_source_nrows.h5", checks: &[k::H12_SOURCE_TOKENS], also: &[], what: "SOURCE_NROWS deleted from lake_id__chunk_minmax", corrupt: |f| delete_attr(f, &format!("{SI}/lake_id__chunk_minmax"), names::SOURCE_NROWS) },
    Case { file: "h040_boolean_fill.h5", checks: &[k::H13_BOOL_FILL], also: &[], what: "boolean column flag2 declaring a fill value", corrupt: |f| drop(new_column(f, "flag2", Dtype::hep001_bool(), Some(vec![0]), &[0u8; N])) },
    Case { file: "h013_boolean_value_2.h5", checks: &[k::H13_BOOL_VALUES], also: &[], what: "boolean column flag holds 2 at row 3", corrupt: |f| write_at(f, &format!("{T}/flag"), 3, &Dtype::hep001_bool(), &[2]) },
    // ---- HEP002 §5.1 and §12
    Case { file: "m100_marquet_version_2.h5", checks: &[k::M_VERSION_SUPPORTED], also: &[], what: "MARQUET_VERSION \"2.0\": unsupported MAJOR (ruling R16)", corrupt: |f| ascii(f, T, names::MARQUET_VERSION, "2.0") },
    Case { file: "m001_bad_marquet_version.h5", checks: &[k::M1_VERSION], also: &[], what: "MARQUET_VERSION \"one\" (not MAJOR.MINOR)", corrupt: |f| ascii(f, T, names::MARQUET_VERSION, "one") },
    Case { file: "m018_geometry_columns_empty.h5", checks: &[k::M2_PRESENT], also: &[k::M3_REFERENCED, k::M16_LINKAGE], what: "GEOMETRY_COLUMNS with no element (the geometry columns and their indexes become unreferenced)", corrupt: |f| geometry_columns(f, &[]) },
    Case { file: "m019_geometry_columns_obj_ref.h5", checks: &[k::M2_REF_TYPE], also: &[k::M2_PRESENT, k::M3_REFERENCED, k::M16_LINKAGE], what: "GEOMETRY_COLUMNS written with the deprecated H5T_STD_REF_OBJ (empty array; the geometry columns and their indexes become unreferenced)", corrupt: |f| {
        h5::attr_write(open(f, T).id(), names::GEOMETRY_COLUMNS, &Dtype::ObjRef, &Space::Simple(vec![0]), &[]).unwrap();
    } },
    Case { file: "m020_geometry_columns_not_column.h5", checks: &[k::M2_RESOLVE], also: &[], what: "GEOMETRY_COLUMNS also references the R-tree dataset", corrupt: |f| {
        let mut v: Vec<String> = GEOMS.iter().map(|c| format!("{T}/{c}")).collect();
        v.push(format!("{SI}/shoreline__rtree"));
        h5::attr_write_refs(open(f, T).id(), names::GEOMETRY_COLUMNS, &v, false).unwrap();
    } },
    Case { file: "m002_duplicate_geometry_column.h5", checks: &[k::M2_DISTINCT], also: &[], what: "GEOMETRY_COLUMNS references shoreline twice", corrupt: |f| geometry_columns(f, &["shoreline", "centroid", "loc_wkb", "route", "shoreline"]) },
    Case { file: "m003_no_geometry_types.h5", checks: &[k::M3_ATTRS], also: &[], what: "GEOMETRY_TYPES deleted from centroid", corrupt: |f| delete_attr(f, &format!("{T}/centroid"), names::GEOMETRY_TYPES) },
    Case { file: "m021_unreferenced_encoding.h5", checks: &[k::M3_REFERENCED], also: &[], what: "lake_id carries GEOMETRY_ENCODING but is not in GEOMETRY_COLUMNS", corrupt: |f| ascii(f, &format!("{T}/lake_id"), names::GEOMETRY_ENCODING, "WKB") },
    Case { file: "m022_geometry_row_label.h5", checks: &[k::M4_ROW_LABEL], also: &[], what: "INDEX_COLUMNS references the point column centroid", corrupt: |f| {
        h5::attr_write_refs(open(f, T).id(), names::INDEX_COLUMNS, &[format!("{T}/centroid")], false).unwrap();
        h5::attr_write_utf8(open(f, T).id(), names::INDEX_NAME, "centroid").unwrap();
    } },
    Case { file: "m004_valid_min_on_geometry.h5", checks: &[k::M4_H5COL_ATTRS], also: &[], what: "centroid carries valid_min", corrupt: |f| {
        let c = open(f, &format!("{T}/centroid"));
        let dt = types::point_dtype(Dimensions::Xy, false);
        h5::attr_write(c.id(), names::VALID_MIN, &dt, &Space::Scalar, &[0u8; 16]).unwrap();
    } },
    Case { file: "m023_encoding_int.h5", checks: &[k::M5_ENCODING_STRING], also: &[], what: "GEOMETRY_ENCODING of centroid written as uint64", corrupt: |f| {
        h5::attr_write_u64(open(f, &format!("{T}/centroid")).id(), names::GEOMETRY_ENCODING, 1).unwrap();
    } },
    Case { file: "m024_encoding_linestring.h5", checks: &[k::M5_ENCODING_KNOWN], also: &[], what: "GEOMETRY_ENCODING of centroid \"LINESTRING\" (reserved, not defined)", corrupt: |f| ascii(f, &format!("{T}/centroid"), names::GEOMETRY_ENCODING, "LINESTRING") },
    Case { file: "m005_point_encoding_wkb.h5", checks: &[k::M5_FORM], also: &[], what: "centroid (a compound point column) says GEOMETRY_ENCODING \"WKB\"", corrupt: |f| ascii(f, &format!("{T}/centroid"), names::GEOMETRY_ENCODING, "WKB") },
    Case { file: "m025_geometry_types_subset.h5", checks: &[k::M6_TYPES_ENUM], also: &[], what: "GEOMETRY_TYPES of shoreline over an enumeration of only Polygon and MultiPolygon (not the 28 members, ruling R1)", corrupt: |f| {
        let dt = Dtype::Enum { base: Box::new(Dtype::U16), members: vec![("Polygon".into(), 3), ("MultiPolygon".into(), 6)] };
        let mut v = 3u16.to_le_bytes().to_vec();
        v.extend_from_slice(&6u16.to_le_bytes());
        h5::attr_write(open(f, &format!("{T}/shoreline")).id(), names::GEOMETRY_TYPES, &dt, &Space::Simple(vec![2]), &v).unwrap();
    } },
    Case { file: "m026_geometry_types_scalar.h5", checks: &[k::M6_TYPES_SHAPE], also: &[], what: "GEOMETRY_TYPES of centroid is a scalar", corrupt: |f| {
        h5::attr_write(open(f, &format!("{T}/centroid")).id(), names::GEOMETRY_TYPES, &types::geometry_types_dtype(), &Space::Scalar, &1u16.to_le_bytes()).unwrap();
    } },
    Case { file: "m027_geometry_types_twice.h5", checks: &[k::M6_TYPES_DISTINCT], also: &[], what: "GEOMETRY_TYPES of shoreline lists Polygon twice", corrupt: |f| {
        let v: Vec<u8> = [3u16, 3, 6].iter().flat_map(|c| c.to_le_bytes()).collect();
        h5::attr_write(open(f, &format!("{T}/shoreline")).id(), names::GEOMETRY_TYPES, &types::geometry_types_dtype(), &Space::Simple(vec![3]), &v).unwrap();
    } },
    Case { file: "m028_point_types_wrong.h5", checks: &[k::M6_POINT_TYPES], also: &[k::M6_TYPES_COMPLETE], what: "the XY point column centroid lists Point Z (so its points are unlisted)", corrupt: |f| {
        h5::attr_write(open(f, &format!("{T}/centroid")).id(), names::GEOMETRY_TYPES, &types::geometry_types_dtype(), &Space::Simple(vec![1]), &1001u16.to_le_bytes()).unwrap();
    } },
    Case { file: "m006_types_miss_multipolygon.h5", checks: &[k::M6_TYPES_COMPLETE], also: &[], what: "shoreline GEOMETRY_TYPES rewritten as [Polygon] though row 9 is a MultiPolygon", corrupt: |f| {
        let c = open(f, &format!("{T}/shoreline"));
        h5::attr_write(c.id(), names::GEOMETRY_TYPES, &types::geometry_types_dtype(), &Space::Simple(vec![1]), &3u16.to_le_bytes()).unwrap();
    } },
    Case { file: "m007_ewkb_value.h5", checks: &[k::M7_WKB], also: &[], what: "shoreline row 0 rewritten in place with the EWKB SRID flag in its type code", corrupt: |f| {
        let o = shore_off(f, 0);
        write_at(f, &format!("{T}/shoreline/VALUES"), o + 1, &Dtype::U8, &(3u32 | 0x2000_0000).to_le_bytes());
    } },
    Case { file: "m029_values_uint16.h5", checks: &[k::M8_VALUES_TYPE], also: &[], what: "shoreline VALUES replaced by a uint16 dataset holding the same byte values", corrupt: |f| {
        let g = open(f, &format!("{T}/shoreline"));
        let vp = format!("{T}/shoreline/VALUES");
        let len = h5::dataset_info(open(f, &vp).id(), &vp).unwrap().dims[0];
        let bytes = h5::dataset_read(open(f, &vp).id(), 0, len, &Dtype::U8, &vp).unwrap();
        h5::link_delete(g.id(), names::VALUES).unwrap();
        let u16s: Vec<u8> = bytes.iter().flat_map(|b| (*b as u16).to_le_bytes()).collect();
        let ds = h5::dataset_create(g.id(), names::VALUES, &DatasetSpec { dtype: Dtype::U16, len, chunk: Some(1024), filters: vec![], fill: None }).unwrap();
        h5::dataset_write(ds.id(), 0, &Dtype::U16, &u16s, &vp).unwrap();
    } },
    Case { file: "m030_values_fill.h5", checks: &[k::M8_VALUES_NO_FILL], also: &[], what: "shoreline VALUES recreated with a user-defined fill value 0", corrupt: |f| {
        let g = open(f, &format!("{T}/shoreline"));
        let vp = format!("{T}/shoreline/VALUES");
        let len = h5::dataset_info(open(f, &vp).id(), &vp).unwrap().dims[0];
        let bytes = h5::dataset_read(open(f, &vp).id(), 0, len, &Dtype::U8, &vp).unwrap();
        h5::link_delete(g.id(), names::VALUES).unwrap();
        let ds = h5::dataset_create(g.id(), names::VALUES, &DatasetSpec { dtype: Dtype::U8, len, chunk: Some(1024), filters: vec![], fill: Some(vec![0]) }).unwrap();
        h5::dataset_write(ds.id(), 0, &Dtype::U8, &bytes, &vp).unwrap();
    } },
    Case { file: "m008_null_row_unmasked.h5", checks: &[k::M8_NONNULL_SLICES], also: &[], what: "shoreline MASK[4] set TRUE for the null row, leaving a non-null row with an empty slice", corrupt: |f| {
        write_at(f, &format!("{T}/shoreline/MASK"), NULL_ROW as u64, &Dtype::hep001_bool(), &[1]);
    } },
    Case { file: "m031_fixed_fill_is_wkb.h5", checks: &[k::M9_FILL_NOT_WKB], also: &[], what: "loc_wkb recreated with the fill value POINT (0 0), a valid WKB value", corrupt: |f| {
        let (dt, mut data) = read_all(f, "loc_wkb");
        let fill = point(0.0, 0.0);
        data[NULL_ROW * 21..(NULL_ROW + 1) * 21].copy_from_slice(&fill);
        recreate(f, "loc_wkb", &dt, Some(fill), &data);
    } },
    Case { file: "m009_fixed_trailing_bytes.h5", checks: &[k::M9_ONE_VALUE], also: &[], what: "loc_wkb row 1 holds MULTIPOINT EMPTY (9 bytes) followed by 12 padding bytes", corrupt: |f| {
        let mut e = vec![1u8, 4, 0, 0, 0, 0, 0, 0, 0];
        e.extend_from_slice(&[0u8; 12]);
        write_at(f, &format!("{T}/loc_wkb"), 1, &Dtype::Opaque { size: 21, tag: "WKB".into() }, &e);
    } },
    Case { file: "m032_point_fields_xyw.h5", checks: &[k::M10_POINT_TYPE], also: &[k::M6_POINT_TYPES], what: "centroid recreated as compound {x, y, w}", corrupt: |f| {
        let (_, data) = read_all(f, "centroid");
        let dt = Dtype::Compound { size: 24, fields: ["x", "y", "w"].iter().enumerate().map(|(i, n)| Field { name: n.to_string(), offset: 8 * i, dtype: Dtype::F64 }).collect() };
        let mut out = Vec::new();
        for e in data.chunks_exact(16) {
            out.extend_from_slice(e);
            out.extend_from_slice(&0f64.to_le_bytes());
        }
        let fill: Vec<u8> = [names::FILL_F64; 3].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut out2 = out.clone();
        out2[NULL_ROW * 24..(NULL_ROW + 1) * 24].copy_from_slice(&fill);
        recreate(f, "centroid", &dt, Some(fill), &out2);
    } },
    Case { file: "m033_point_fill_nan.h5", checks: &[k::M10_FILL_NO_NAN], also: &[], what: "centroid recreated with the fill value (NaN, NaN); the null row holds it, the empty row a copy of row 0", corrupt: |f| {
        let (dt, mut data) = read_all(f, "centroid");
        let fill: Vec<u8> = [f64::NAN, f64::NAN].iter().flat_map(|v| v.to_le_bytes()).collect();
        let row0 = data[0..16].to_vec();
        data[NULL_ROW * 16..(NULL_ROW + 1) * 16].copy_from_slice(&fill);
        data[EMPTY_ROW * 16..(EMPTY_ROW + 1) * 16].copy_from_slice(&row0);
        recreate(f, "centroid", &dt, Some(fill), &data);
    } },
    Case { file: "m010_point_nan_x.h5", checks: &[k::M10_POINT_VALUES], also: &[], what: "centroid row 2 is (NaN, 40.5): x NaN but not an empty point", corrupt: |f| {
        let mut e = f64::NAN.to_le_bytes().to_vec();
        e.extend_from_slice(&40.5f64.to_le_bytes());
        write_at(f, &format!("{T}/centroid"), 2, &types::point_dtype(Dimensions::Xy, false), &e);
    } },
    Case { file: "m034_crs_int.h5", checks: &[k::M11_CRS_TYPE], also: &[], what: "CRS of centroid written as uint64", corrupt: |f| {
        h5::attr_write_u64(open(f, &format!("{T}/centroid")).id(), names::CRS, 4326).unwrap();
    } },
    Case { file: "m011_crs_authority_code.h5", checks: &[k::M11_CRS_PROJJSON], also: &[], what: "centroid CRS is the string \"EPSG:4326\" instead of PROJJSON", corrupt: |f| {
        h5::attr_write_utf8(open(f, &format!("{T}/centroid")).id(), names::CRS, "EPSG:4326").unwrap();
    } },
    Case { file: "m035_crs_json_not_projjson.h5", checks: &[k::M11_CRS_PROJJSON], also: &[], what: "centroid CRS is the JSON object {\"a\":1}, not a PROJJSON coordinate reference system", corrupt: |f| {
        h5::attr_write_utf8(open(f, &format!("{T}/centroid")).id(), names::CRS, r#"{"a":1}"#).unwrap();
    } },
    Case { file: "m036_edges_five_members.h5", checks: &[k::M12_EDGES_ENUM], also: &[], what: "EDGES of route over an enumeration without KARNEY (5 of the 6 members, ruling R2)", corrupt: |f| {
        let dt = Dtype::Enum { base: Box::new(Dtype::U8), members: names::EDGES_MEMBERS[..5].iter().map(|(n, v)| (n.to_string(), *v as i64)).collect() };
        h5::attr_write(open(f, &format!("{T}/route")).id(), names::EDGES, &dt, &Space::Scalar, &[1]).unwrap();
    } },
    Case { file: "m037_edges_array.h5", checks: &[k::M12_EDGES_VALUE], also: &[], what: "EDGES of route is a one-dimensional array [SPHERICAL, SPHERICAL]", corrupt: |f| {
        h5::attr_write(open(f, &format!("{T}/route")).id(), names::EDGES, &types::edges_dtype(), &Space::Simple(vec![2]), &[1, 1]).unwrap();
    } },
    Case { file: "m012_spherical_edges_projected.h5", checks: &[k::M12_EDGES_GEOGRAPHIC], also: &[], what: "shoreline (projected CRS) declares EDGES SPHERICAL", corrupt: |f| {
        h5::attr_write(open(f, &format!("{T}/shoreline")).id(), names::EDGES, &types::edges_dtype(), &Space::Scalar, &[1]).unwrap();
    } },
    Case { file: "m038_orientation_two_members.h5", checks: &[k::M12_ORIENTATION_ENUM], also: &[], what: "ORIENTATION of shoreline over an enumeration {COUNTERCLOCKWISE, CLOCKWISE}", corrupt: |f| {
        let dt = Dtype::Enum { base: Box::new(Dtype::U8), members: vec![("COUNTERCLOCKWISE".into(), 1), ("CLOCKWISE".into(), 2)] };
        h5::attr_write(open(f, &format!("{T}/shoreline")).id(), names::ORIENTATION, &dt, &Space::Scalar, &[1]).unwrap();
    } },
    Case { file: "m039_orientation_array.h5", checks: &[k::M12_ORIENTATION_VALUE], also: &[], what: "ORIENTATION of shoreline is a one-dimensional array", corrupt: |f| {
        h5::attr_write(open(f, &format!("{T}/shoreline")).id(), names::ORIENTATION, &types::orientation_dtype(), &Space::Simple(vec![2]), &[1, 1]).unwrap();
    } },
    Case { file: "m040_route_latitude_95.h5", checks: &[k::M12_LONLAT], also: &[k::M14_CONTAINS, k::M15_CONTAINS, k::M16_BLOCK_CONTAINS, k::M16_RTREE_LEAF_BOXES], what: "route row 1 (spherical edges) rewritten with a vertex at latitude 95 (so no box contains it either)", corrupt: |f| {
        let mut p = route_pts(1);
        p[1].1 = 95.0;
        write_values(f, "route", 1, &line_z(&p));
    } },
    Case { file: "m013_clockwise_exterior.h5", checks: &[k::M13_RINGS], also: &[], what: "shoreline row 1 rewritten with a clockwise exterior ring under ORIENTATION COUNTERCLOCKWISE", corrupt: |f| {
        let o = shore_off(f, 1);
        let (x, y) = (500_100.0, 4_900_050.0);
        write_at(f, &format!("{T}/shoreline/VALUES"), o, &Dtype::U8, &polygon(&[square(x, y, 11.0, false)]));
    } },
    Case { file: "m041_bbox_float32.h5", checks: &[k::M14_TYPE], also: &[], what: "BBOX of shoreline with float32 fields", corrupt: |f| {
        let c = open(f, &format!("{T}/shoreline"));
        let a = h5::attr_read(c.id(), names::BBOX).unwrap().unwrap();
        let (b, _, _) = types::decode_box(&a.dtype, &a.data).unwrap();
        let mut v = Vec::new();
        types::covering_bytes(&b, false, true, &mut v);
        h5::attr_write(c.id(), names::BBOX, &types::covering_dtype(false, true), &Space::Scalar, &v).unwrap();
    } },
    Case { file: "m042_bbox_nan.h5", checks: &[k::M14_NAN], also: &[k::M14_CONTAINS], what: "BBOX of shoreline with ymin NaN", corrupt: |f| set_bbox(f, "shoreline", &[("ymin", f64::NAN)]) },
    Case { file: "m043_bbox_wrapping_projected.h5", checks: &[k::M14_WRAP], also: &[], what: "BBOX of shoreline (projected CRS) with xmax = xmin - 1, a wrapping box that still holds every x", corrupt: |f| {
        let c = open(f, &format!("{T}/shoreline"));
        let a = h5::attr_read(c.id(), names::BBOX).unwrap().unwrap();
        let (b, _, _) = types::decode_box(&a.dtype, &a.data).unwrap();
        drop(c);
        set_bbox(f, "shoreline", &[("xmax", b.xmin - 1.0)]);
    } },
    Case { file: "m014_bbox_too_small.h5", checks: &[k::M14_CONTAINS], also: &[], what: "shoreline BBOX xmax lowered below the last geometries", corrupt: |f| {
        let c = open(f, &format!("{T}/shoreline"));
        let a = h5::attr_read(c.id(), names::BBOX).unwrap().unwrap();
        let (mut b, _, _) = types::decode_box(&a.dtype, &a.data).unwrap();
        b.xmax -= 200.0;
        h5::attr_write(c.id(), names::BBOX, &types::bbox_dtype(false, false), &Space::Scalar, &types::bbox_bytes(&b, false, false)).unwrap();
    } },
    Case { file: "m044_route_bbox_vertices_only.h5", checks: &[k::M14_CONTAINS_EDGES], also: &[], what: "BBOX of route (spherical edges) is the box of its vertices: the 60°-latitude edges bulge to 63.4°", corrupt: |f| {
        let b = (0..ROUTE_ROWS).filter(|&i| route(i).is_some() && i != EMPTY_ROW).fold(BBox::EMPTY, |a, i| a.union(&route_vertex_box(i)));
        set_bbox(f, "route", &box_fields(&b));
    } },
    Case { file: "m045_covering_not_column.h5", checks: &[k::M15_REFERENCE], also: &[], what: "COVERING of shoreline references the R-tree dataset", corrupt: |f| {
        h5::attr_write_refs(open(f, &format!("{T}/shoreline")).id(), names::COVERING, &[format!("{SI}/shoreline__rtree")], true).unwrap();
    } },
    Case { file: "m046_covering_uint64.h5", checks: &[k::M15_TYPE], also: &[], what: "COVERING of shoreline references lake_id (uint64)", corrupt: |f| {
        h5::attr_write_refs(open(f, &format!("{T}/shoreline")).id(), names::COVERING, &[format!("{T}/lake_id")], true).unwrap();
    } },
    Case { file: "m047_covering_shared.h5", checks: &[k::M15_UNSHARED], also: &[k::M15_CONTAINS, k::M15_NULL_ROWS, k::M15_EMPTY_ROWS, k::M15_CONTAINS_EDGES], what: "COVERING of route references shoreline_bbox, the covering column of shoreline", corrupt: |f| {
        h5::attr_write_refs(open(f, &format!("{T}/route")).id(), names::COVERING, &[format!("{T}/shoreline_bbox")], true).unwrap();
    } },
    Case { file: "m048_covering_fill_for_geometry.h5", checks: &[k::M15_NULL_ROWS], also: &[], what: "shoreline_bbox row 0 holds the fill value though the geometry is not null", corrupt: |f| {
        let v: Vec<u8> = [names::FILL_F64; 4].iter().flat_map(|x| x.to_le_bytes()).collect();
        write_at(f, &format!("{T}/shoreline_bbox"), 0, &types::covering_dtype(false, false), &v);
    } },
    Case { file: "m049_covering_empty_row_box.h5", checks: &[k::M15_EMPTY_ROWS], also: &[], what: "shoreline_bbox of the empty row 7 holds a box instead of the empty box", corrupt: |f| {
        let mut v = Vec::new();
        types::covering_bytes(&BBox::xy(0.0, 0.0, 1.0, 1.0), false, false, &mut v);
        write_at(f, &format!("{T}/shoreline_bbox"), EMPTY_ROW as u64, &types::covering_dtype(false, false), &v);
    } },
    Case { file: "m050_covering_wrapping_projected.h5", checks: &[k::M15_WRAP], also: &[], what: "shoreline_bbox row 0 (projected CRS) with xmin > xmax", corrupt: |f| {
        let p = format!("{T}/shoreline_bbox");
        let x = get_field(f, &p, 0, "xmin");
        set_fields(f, &p, 0, &[("xmax", x - 1.0)]);
    } },
    Case { file: "m015_covering_box_wrong.h5", checks: &[k::M15_CONTAINS], also: &[], what: "shoreline_bbox row 3 shifted away from its geometry", corrupt: |f| {
        let dt = types::covering_dtype(false, false);
        let mut v = Vec::new();
        types::covering_bytes(&BBox::xy(0.0, 0.0, 1.0, 1.0), false, false, &mut v);
        write_at(f, &format!("{T}/shoreline_bbox"), 3, &dt, &v);
    } },
    Case { file: "m051_route_covering_vertices.h5", checks: &[k::M15_CONTAINS_EDGES], also: &[], what: "route_bbox row 0 is the vertex box of its spherical-edge line", corrupt: |f| {
        set_fields(f, &format!("{T}/route_bbox"), 0, &box_fields(&route_vertex_box(0)));
    } },
    Case { file: "m052_index_two_columns.h5", checks: &[k::M16_LINKAGE], also: &[], what: "the shoreline BLOCK_BBOX is also referenced by lake_id", corrupt: |f| lake_id_indexes(f, &["/lakes/SEARCH_INDEXES/shoreline__block_bbox"]) },
    Case { file: "m053_block_length_zero.h5", checks: &[k::M16_BLOCK_LAYOUT], also: &[], what: "block_length 0 on the shoreline BLOCK_BBOX", corrupt: |f| {
        h5::attr_write_u64(open(f, &format!("{SI}/shoreline__block_bbox")).id(), names::BLOCK_LENGTH, 0).unwrap();
    } },
    Case { file: "m016_block_bbox_wrong.h5", checks: &[k::M16_BLOCK_CONTAINS], also: &[k::M16_BLOCK_COUNTS], what: "valid-token BLOCK_BBOX whose entry 1 box misses rows 4..8 and whose null_count is 0", corrupt: |f| {
        let e = block_bbox::BlockEntry { bbox: BBox::xy(0.0, 0.0, 1.0, 1.0), n: 4, null_count: 0, empty_count: 1 };
        write_at(f, &format!("{SI}/shoreline__block_bbox"), 1, &block_dtype(), &block_bytes(&e));
    } },
    Case { file: "m054_block_counts.h5", checks: &[k::M16_BLOCK_COUNTS], also: &[], what: "valid-token BLOCK_BBOX whose entry 0 says n = 3", corrupt: |f| set_fields(f, &format!("{SI}/shoreline__block_bbox"), 0, &[("n", 3.0)]) },
    Case { file: "m055_block_wrapping_projected.h5", checks: &[k::M16_BLOCK_WRAP], also: &[], what: "shoreline block entry 0 (projected CRS) with xmax = xmin - 1", corrupt: |f| {
        let p = format!("{SI}/shoreline__block_bbox");
        let x = get_field(f, &p, 0, "xmin");
        set_fields(f, &p, 0, &[("xmax", x - 1.0)]);
    } },
    Case { file: "m056_block_placeholder.h5", checks: &[k::M16_BLOCK_EMPTY], also: &[], what: "route block entry 2 (rows 8..12, all null) holds a box instead of the empty placeholder", corrupt: |f| {
        set_fields(f, &format!("{SI}/route__block_bbox"), 2, &box_fields(&BBox { zmin: 0.0, zmax: 1.0, ..BBox::xy(0.0, 0.0, 1.0, 1.0) }));
    } },
    Case { file: "m057_block_z_not_empty.h5", checks: &[k::M16_BLOCK_ZM_EMPTY], also: &[], what: "route rows 0..4 rewritten with NaN Z: their block's zmin/zmax are not (+inf, -inf)", corrupt: |f| {
        for i in 0..BLOCK as usize {
            let p: Vec<(f64, f64, f64)> = route_pts(i).into_iter().map(|(x, y, _)| (x, y, f64::NAN)).collect();
            write_values(f, "route", i as u64, &line_z(&p));
        }
    } },
    Case { file: "m058_route_block_vertices.h5", checks: &[k::M16_BLOCK_CONTAINS_EDGES], also: &[], what: "route block entry 0 is the union of its rows' vertex boxes (spherical edges bulge past it)", corrupt: |f| {
        let b = (0..BLOCK as usize).fold(BBox::EMPTY, |a, i| a.union(&route_vertex_box(i)));
        set_fields(f, &format!("{SI}/route__block_bbox"), 0, &box_fields(&b));
    } },
    Case { file: "m059_rtree_no_num_items.h5", checks: &[k::M16_RTREE_LAYOUT], also: &[], what: "num_items deleted from the shoreline PACKED_RTREE", corrupt: |f| delete_attr(f, &format!("{SI}/shoreline__rtree"), names::NUM_ITEMS) },
    Case { file: "m060_rtree_short.h5", checks: &[k::M16_RTREE_HEADER], also: &[], what: "valid-token shoreline PACKED_RTREE cut by one entry (T exceeds the extent, §17)", corrupt: |f| {
        let p = format!("{SI}/shoreline__rtree");
        let len = h5::dataset_info(open(f, &p).id(), &p).unwrap().dims[0];
        h5::dataset_set_len(open(f, &p).id(), len - 1, &p).unwrap();
    } },
    Case { file: "m061_rtree_internal_index.h5", checks: &[k::M16_RTREE_INTERNAL], also: &[], what: "valid-token shoreline PACKED_RTREE whose root index is 5", corrupt: |f| set_fields(f, &format!("{SI}/shoreline__rtree"), 0, &[("index", 5.0)]) },
    Case { file: "m016_rtree_leaf_wrong.h5", checks: &[k::M16_RTREE_LEAVES], also: &[], what: "valid-token PACKED_RTREE whose last leaf points at row 4 (a null geometry)", corrupt: |f| {
        let p = format!("{SI}/shoreline__rtree");
        let len = h5::dataset_info(open(f, &p).id(), &p).unwrap().dims[0];
        set_fields(f, &p, len - 1, &[("index", NULL_ROW as f64)]);
    } },
    Case { file: "m062_rtree_leaf_box.h5", checks: &[k::M16_RTREE_LEAF_BOXES], also: &[k::M16_RTREE_INTERNAL], what: "valid-token shoreline PACKED_RTREE whose last leaf box is (0, 0, 0, 0) (its parent is then no longer the union)", corrupt: |f| {
        let p = format!("{SI}/shoreline__rtree");
        let len = h5::dataset_info(open(f, &p).id(), &p).unwrap().dims[0];
        set_fields(f, &p, len - 1, &[("xmin", 0.0), ("ymin", 0.0), ("xmax", 0.0), ("ymax", 0.0)]);
    } },
    Case { file: "m063_route_rtree_vertex_leaves.h5", checks: &[k::M16_RTREE_LEAF_EDGES], also: &[], what: "route PACKED_RTREE rebuilt from vertex boxes (spherical edges bulge past its leaves)", corrupt: |f| {
        let items: Vec<(BBox, u64)> = (0..N).filter(|&i| route(i).is_some() && i != EMPTY_ROW).map(|i| (route_vertex_box(i), i as u64)).collect();
        write_at(f, &format!("{SI}/route__rtree"), 0, &rtree_dtype(), &rtree_bytes(&items));
    } },
    Case { file: "m017_named_geometry_types.h5", checks: &[k::M17_NAMED_TYPES], also: &[], what: "the geometry-type enumeration committed as a named datatype /lakes/geometry_types", corrupt: |f| {
        h5::commit_datatype(open(f, T).id(), "geometry_types", &types::geometry_types_dtype()).unwrap();
    } },
];

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/bad")
}

fn make(dir: &Path, c: &Case) -> PathBuf {
    let p = dir.join(c.file);
    build_base(&p);
    {
        let f = File::open_rw(&p).unwrap();
        (c.corrupt)(&f);
        f.flush().unwrap();
    }
    p
}

/// What a case's report must hold: every sub-check of `checks`, no error outside `checks` and
/// `also` (by sub-check and by rule). `None` when it does.
fn case_failure(c: &Case, r: &marquet::validate::Report) -> Option<String> {
    let got = r.error_checks();
    let allowed: BTreeSet<&str> = c.checks.iter().chain(c.also).map(|k| k.id).collect();
    let allowed_rules: BTreeSet<&str> = c.checks.iter().chain(c.also).map(|k| k.rule).collect();
    let missing: Vec<&str> = c.checks.iter().map(|k| k.id).filter(|id| !got.contains(id)).collect();
    let unchecked = r.errors().any(|f| f.check.is_none());
    // An unreadable object is reported under the rule whose check needed it.
    let rules: BTreeSet<&str> = r.errors().filter(|f| f.check != Some(k::UNREADABLE.id)).map(|f| f.rule).collect();
    if missing.is_empty() && got.is_subset(&allowed) && rules.is_subset(&allowed_rules) && !unchecked && r.status == Status::NonConformant {
        return None;
    }
    let errs: Vec<String> = r.errors().map(|f| format!("[{}] {f}", f.check.unwrap_or("?"))).collect();
    Some(format!("{}: expected {:?} (allowed also {:?}), got {got:?}\n  {}", c.file, c.checks.iter().map(|k| k.id).collect::<Vec<_>>(), c.also.iter().map(|k| k.id).collect::<Vec<_>>(), errs.join("\n  ")))
}

#[test]
fn base_table_is_conformant_without_warnings() {
    let p = tmpdir().join("base.h5");
    build_base(&p);
    let r = validate_file(&p, &Options::default()).unwrap();
    let all: Vec<String> = r.findings().map(|f| f.to_string()).collect();
    assert!(all.is_empty(), "{all:#?}");
    assert_eq!(r.status, Status::Conformant);
    assert!(r.tables[0].is_marquet);
}

#[test]
fn every_bad_file_breaks_exactly_its_rule() {
    let dir = tmpdir();
    let bless = std::env::var("MARQUET_BLESS").is_ok_and(|v| v == "1");
    let mut failures = Vec::new();
    for c in CASES {
        let p = make(&dir, c);
        let r = validate_file(&p, &Options::default()).unwrap();
        failures.extend(case_failure(c, &r));
        if bless {
            std::fs::create_dir_all(testdata()).unwrap();
            std::fs::copy(&p, testdata().join(c.file)).unwrap();
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if bless {
        // Committed copies that no case makes any more are stale.
        for e in std::fs::read_dir(testdata()).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            if name.ends_with(".h5") && !CASES.iter().any(|c| c.file == name) {
                std::fs::remove_file(testdata().join(&name)).unwrap();
            }
        }
        let mut readme = String::from(
            "# testdata/bad: the malformed-file registry\n\n\
             Each file is the conformant table built by `tests/validate_corpus.rs` (`build_base`), \
             corrupted with raw `marquet::h5` calls so that it breaks one sub-check of one requirement. \
             `cargo test --test validate_corpus` checks that `marquet validate` reports exactly that sub-check \
             (the `check` of each error finding, plus only the listed consequences), and that every sub-check \
             the validator registers (`marquet::validate::checks::ALL`) has a file here; \
             regenerate with `MARQUET_BLESS=1 cargo test --test validate_corpus`.\n\n\
             | file | rule | sub-check(s) | also allowed | how |\n|---|---|---|---|---|\n",
        );
        for c in CASES {
            let ids = |v: &[Check]| v.iter().map(|k| format!("`{}`", k.id)).collect::<Vec<_>>().join(", ");
            let rules: BTreeSet<&str> = c.checks.iter().map(|k| k.rule).collect();
            readme.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                c.file,
                rules.into_iter().collect::<Vec<_>>().join(", "),
                ids(c.checks),
                ids(c.also),
                c.what
            ));
        }
        std::fs::write(testdata().join("README.md"), readme).unwrap();
    }
}

/// The committed copies still fail with their pinned sub-checks (they are what other
/// implementations and the CLI tests use).
#[test]
#[cfg_attr(not(marquet_fixtures), ignore = "testdata/bad is not in the crates.io package (build.rs)")]
fn committed_corpus_matches_the_registry() {
    for c in CASES {
        let p = testdata().join(c.file);
        if !p.exists() {
            panic!("{} missing: run MARQUET_BLESS=1 cargo test --test validate_corpus", p.display());
        }
        let r = validate_file(&p, &Options::default()).unwrap();
        if let Some(f) = case_failure(c, &r) {
            panic!("{f}");
        }
    }
}

#[test]
fn every_numbered_requirement_has_a_bad_file() {
    let covered: BTreeSet<&str> = CASES.iter().flat_map(|c| c.checks.iter().map(|k| k.rule)).collect();
    for k in 1..=13 {
        let r = format!("HEP001 §13 req {k}");
        assert!(covered.contains(r.as_str()), "{r} has no bad file");
    }
    for k in 1..=17 {
        let r = format!("HEP002 §12 req {k}");
        assert!(covered.contains(r.as_str()), "{r} has no bad file");
    }
}

/// Every sub-check the validator registers has a bad file (issue 18): a new check without
/// one fails here.
#[test]
fn every_registered_check_has_a_bad_file() {
    let covered: BTreeSet<&str> = CASES.iter().flat_map(|c| c.checks.iter().map(|k| k.id)).collect();
    let missing: Vec<&str> = k::ALL.iter().map(|c| c.id).filter(|id| !covered.contains(id)).collect();
    assert!(missing.is_empty(), "registered sub-checks without a bad file in CASES: {missing:?}");
    // And the cases name only registered checks.
    for c in CASES {
        for ch in c.checks.iter().chain(c.also) {
            assert_eq!(k::by_id(ch.id), Some(ch), "{}", c.file);
        }
    }
}

#[test]
fn lenient_forms_are_warnings_and_strict_makes_them_fail() {
    let dir = tmpdir();
    let p = dir.join("lenient_class_vlen.h5");
    build_base(&p);
    {
        let f = File::open_rw(&p).unwrap();
        let g = open(&f, T);
        let s = "COLUMN_TABLE";
        let c = std::ffi::CString::new(s).unwrap();
        let ptr = c.as_ptr() as usize;
        // A variable-length string CLASS (R3: accepted, but not what a producer writes).
        h5::attr_write(g.id(), names::CLASS, &Dtype::VarString { utf8: false }, &Space::Scalar, &ptr.to_ne_bytes()).unwrap();
        f.flush().unwrap();
    }
    let r = validate_file(&p, &Options::default()).unwrap();
    assert_eq!(r.status, Status::Conformant, "{:#?}", r.findings().collect::<Vec<_>>());
    assert!(r.findings().any(|f| f.severity == Severity::Warning && f.rule == "HEP001 §7.1"));
    let r = validate_file(&p, &Options { strict: true, ..Options::default() }).unwrap();
    assert_eq!(r.status, Status::NonConformant);
}

/// Ruling R1, R2: the closed vocabularies may use any integer base and byte order (a
/// warning), but not another member set (an error, see the m025/m036/m038 bad files).
#[test]
fn vocabularies_with_another_base_are_warnings() {
    let p = tmpdir().join("lenient_vocabularies.h5");
    build_base(&p);
    {
        let f = File::open_rw(&p).unwrap();
        let be32 = Dtype::Int { size: 4, signed: true, big_endian: true };
        let Dtype::Enum { members, .. } = types::geometry_types_dtype() else { unreachable!() };
        let gt = Dtype::Enum { base: Box::new(be32.clone()), members };
        let v: Vec<u8> = [3i32, 6].iter().flat_map(|c| c.to_le_bytes()).collect();
        h5::attr_write(open(&f, &format!("{T}/shoreline")).id(), names::GEOMETRY_TYPES, &gt, &Space::Simple(vec![2]), &v).unwrap();
        let Dtype::Enum { members, .. } = types::edges_dtype() else { unreachable!() };
        let ed = Dtype::Enum { base: Box::new(Dtype::U16), members };
        h5::attr_write(open(&f, &format!("{T}/route")).id(), names::EDGES, &ed, &Space::Scalar, &1u16.to_le_bytes()).unwrap();
        f.flush().unwrap();
    }
    let r = validate_file(&p, &Options::default()).unwrap();
    assert_eq!(r.status, Status::Conformant, "{:#?}", r.errors().collect::<Vec<_>>());
    let warned: BTreeSet<&str> = r.findings().filter(|f| f.severity == Severity::Warning).map(|f| f.rule).collect();
    assert!(warned.contains("HEP002 §12 req 6") && warned.contains("HEP002 §12 req 12"), "{warned:?}");
}

#[test]
fn marker_attributes_without_marquet_version_are_not_interpreted() {
    let p = tmpdir().join("no_marker.h5");
    build_base(&p);
    {
        let f = File::open_rw(&p).unwrap();
        delete_attr(&f, T, names::MARQUET_VERSION);
        // Would break HEP002 req 14 if it were interpreted.
        let c = open(&f, &format!("{T}/shoreline"));
        h5::attr_write(c.id(), names::BBOX, &types::bbox_dtype(false, false), &Space::Scalar, &types::bbox_bytes(&BBox::xy(0.0, 0.0, 1.0, 1.0), false, false)).unwrap();
        f.flush().unwrap();
    }
    let r = validate_file(&p, &Options::default()).unwrap();
    assert!(!r.tables[0].is_marquet);
    let errs: Vec<String> = r.errors().map(|f| f.to_string()).collect();
    assert!(errs.iter().all(|e| !e.contains("HEP002")), "{errs:#?}");
    assert!(r.findings().any(|f| f.rule == "HEP002 §5.1" && f.severity == Severity::Warning));
}

#[test]
fn stations_example_and_library_tables_are_conformant() {
    let p = tmpdir().join("stations.h5");
    stations::write_stations(p.to_str().unwrap()).unwrap();
    let r = validate_file(&p, &Options::default()).unwrap();
    let all: Vec<String> = r.findings().map(|f| f.to_string()).collect();
    assert!(all.is_empty(), "{all:#?}");
}

#[test]
fn table_option_selects_one_table_and_reports_missing_ones() {
    let p = tmpdir().join("select.h5");
    build_base(&p);
    let r = validate_file(&p, &Options { table: Some("/lakes".into()), ..Options::default() }).unwrap();
    assert_eq!(r.tables.len(), 1);
    assert_eq!(r.status, Status::Conformant);
    let r = validate_file(&p, &Options { table: Some("/nope".into()), ..Options::default() }).unwrap();
    assert_eq!(r.status, Status::NonConformant);
    assert_eq!(r.error_checks(), BTreeSet::from([k::H_TABLE_GROUP.id]));
}

#[test]
fn small_batches_give_the_same_findings() {
    // Its own directory: every_bad_file_breaks_exactly_its_rule writes the same file names
    // at the same time (HDF5 then refuses to truncate an open file).
    let dir = tmpdir().join("small-batches");
    std::fs::create_dir_all(&dir).unwrap();
    for c in CASES.iter().filter(|c| c.file.starts_with("m0") || c.file.starts_with("h010")) {
        let p = make(&dir, c);
        let a = validate_file(&p, &Options::default()).unwrap();
        let b = validate_file(&p, &Options { batch_rows: 3, ..Options::default() }).unwrap();
        assert_eq!(a.error_checks(), b.error_checks(), "{}", c.file);
    }
}

/// A table grown by two appends (summary widening, Z bounds dropped by R11, a null row with
/// a covering fill) stays conformant.
#[test]
fn appended_z_polygons_and_nulls_are_conformant() {
    fn poly_z(x0: f64, y0: f64, z: f64) -> Vec<u8> {
        let mut v = vec![1];
        v.extend_from_slice(&1003u32.to_le_bytes());
        v.extend_from_slice(&1u32.to_le_bytes());
        v.extend_from_slice(&4u32.to_le_bytes());
        for (x, y) in [(x0, y0), (x0 + 1.0, y0), (x0 + 1.0, y0 + 1.0), (x0, y0)] {
            for c in [x, y, z] {
                v.extend_from_slice(&c.to_le_bytes());
            }
        }
        v
    }
    let p = tmpdir().join("appended.h5");
    let f = File::create(&p).unwrap();
    let mut t = MarquetTable::create(&f, "/lakes").unwrap();
    t.add_geometry_column(
        "shoreline",
        &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(Crs::ProjJson(UTM.into())).with_orientation_ccw().with_covering("shoreline_bbox"),
    )
    .unwrap();
    t.append(&GeoBatch::new().with_geometry("shoreline", GeometryValues::Wkb(vec![Some(poly_z(0.0, 0.0, 5.0)), Some(poly_z(10.0, 3.0, 7.0))]))).unwrap();
    t.append(&GeoBatch::new().with_geometry("shoreline", GeometryValues::Wkb(vec![Some(point(-5.0, 2.0)), None]))).unwrap();
    drop(t);
    drop(f);
    let r = validate_file(&p, &Options::default()).unwrap();
    let all: Vec<String> = r.findings().map(|f| f.to_string()).collect();
    assert!(all.is_empty(), "{all:#?}");
}

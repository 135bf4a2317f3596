//! The malformed-file registry (`testdata/bad/`): a conformant Marquet table built with the
//! library, then corrupted with raw `marquet::h5` calls so that each file breaks exactly one
//! requirement. The validator must report exactly that rule (plus only the documented
//! consequences). Run with `MARQUET_BLESS=1` to rewrite the committed copies in
//! `testdata/bad/` and its README.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use marquet::h5::{self, DatasetSpec, Dtype, Field, Space};
use marquet::h5col::{index as h5index, Array, ColumnSpec, File};
use marquet::index::{block_bbox, packed_rtree};
use marquet::marquet::types;
use marquet::marquet::{Crs, GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::spec::names;
use marquet::validate::{validate_file, Options, Severity, Status};
use marquet::{BBox, Dimensions};

#[path = "../examples/stations.rs"]
#[allow(dead_code)]
mod stations;

const N: usize = 12;
const T: &str = "/lakes";
const UTM: &str = r#"{"type":"ProjectedCRS","name":"NAD83(CSRS) / UTM zone 20N","id":{"authority":"EPSG","code":2961}}"#;
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
            .with_geometry("loc_wkb", GeometryValues::Wkb(pts)),
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

// ------------------------------------------------------------------ the registry

struct Case {
    file: &'static str,
    /// The rule whose error the file must produce.
    rule: &'static str,
    /// Other error rules allowed as documented consequences.
    also: &'static [&'static str],
    what: &'static str,
    corrupt: fn(&File),
}

const CASES: &[Case] = &[
    // ---- HEP001 §13
    Case { file: "h001_nrows_float.h5", rule: "HEP001 §13 req 1", also: &[], what: "NROWS written as float64 instead of uint64", corrupt: |f| {
        h5::attr_write(open(f, T).id(), names::NROWS, &Dtype::F64, &Space::Scalar, &12.0f64.to_le_bytes()).unwrap();
    } },
    Case { file: "h002_unequal_extents.h5", rule: "HEP001 §13 req 2", also: &[], what: "column lake_id extended by 5 rows; the other columns keep their extent", corrupt: |f| {
        let p = format!("{T}/lake_id");
        h5::dataset_set_len(open(f, &p).id(), N as u64 + 5, &p).unwrap();
    } },
    Case { file: "h003_group_in_search_indexes.h5", rule: "HEP001 §13 req 3", also: &[], what: "a group SEARCH_INDEXES/extra (only datasets are allowed)", corrupt: |f| {
        drop(h5::group_create(open(f, T).id(), "SEARCH_INDEXES/extra").unwrap());
    } },
    Case { file: "h004_index_list_outside.h5", rule: "HEP001 §13 req 4", also: &[], what: "SEARCH_INDEX_LIST of lake_id also references the column flag (not a search index)", corrupt: |f| {
        let c = open(f, &format!("{T}/lake_id"));
        h5::attr_write_refs(c.id(), names::SEARCH_INDEX_LIST, &[format!("{T}/SEARCH_INDEXES/lake_id__chunk_minmax"), format!("{T}/flag")], false).unwrap();
    } },
    Case { file: "h005_unreferenced_categories.h5", rule: "HEP001 §13 req 5", also: &[], what: "a categories dataset CATEGORIES/unused that no column references", corrupt: |f| {
        let a = Array::from_strings(&["x"], true);
        drop(h5::dataset_create(open(f, T).id(), "CATEGORIES/unused", &DatasetSpec { dtype: a.dtype.clone(), len: 1, chunk: None, filters: vec![], fill: None }).unwrap());
    } },
    Case { file: "h006_column_order_incomplete.h5", rule: "HEP001 §13 req 6", also: &[], what: "column-order omits the column flag", corrupt: |f| column_order(f, &[], &["flag"]) },
    Case { file: "h007_index_name_mismatch.h5", rule: "HEP001 §13 req 7", also: &[], what: "_index is \"flag\" but INDEX_COLUMNS[0] is lake_id", corrupt: |f| {
        h5::attr_write_utf8(open(f, T).id(), names::INDEX_NAME, "flag").unwrap();
    } },
    Case { file: "h008_categorical_fill_is_code.h5", rule: "HEP001 §13 req 8", also: &[], what: "categorical column label2 whose fill value 0 is a valid category code", corrupt: |f| {
        let g = open(f, T);
        let ds = h5::dataset_create(g.id(), "label2", &DatasetSpec { dtype: Dtype::I8, len: N as u64, chunk: Some(8), filters: vec![], fill: Some(vec![0]) }).unwrap();
        h5::dataset_write(ds.id(), 0, &Dtype::I8, &[1u8; N], "label2").unwrap();
        h5::attr_write_refs(ds.id(), names::CATEGORIES, &[format!("{T}/CATEGORIES/label__CATEGORIES")], true).unwrap();
        column_order(f, &["label2"], &[]);
    } },
    Case { file: "h009_chunk_minmax_wrong.h5", rule: "HEP001 §13 req 9", also: &[], what: "valid-token CHUNK_MINMAX on lake_id whose entry 0 says max 3 (rows 0..8 reach 7)", corrupt: |f| {
        let p = format!("{T}/SEARCH_INDEXES/lake_id__chunk_minmax");
        let ds = open(f, &p);
        let info = h5::dataset_info(ds.id(), &p).unwrap();
        let mut e = h5::dataset_read(ds.id(), 0, 1, &info.dtype.to_le(), &p).unwrap();
        e[8..16].copy_from_slice(&3u64.to_le_bytes());
        h5::dataset_write(ds.id(), 0, &info.dtype.to_le(), &e, &p).unwrap();
    } },
    Case { file: "h010_offsets_decrease.h5", rule: "HEP001 §13 req 10", also: &[], what: "shoreline OFFSETS[6] set below OFFSETS[5]", corrupt: |f| {
        let v = shore_off(f, 5) - 1;
        write_at(f, &format!("{T}/shoreline/OFFSETS"), 6, &Dtype::U64, &v.to_le_bytes());
    } },
    Case { file: "h010_mask_value_7.h5", rule: "HEP001 §13 req 10", also: &[], what: "shoreline MASK[1] holds 7 (neither FALSE nor TRUE)", corrupt: |f| {
        write_at(f, &format!("{T}/shoreline/MASK"), 1, &Dtype::hep001_bool(), &[7]);
    } },
    Case { file: "h011_vlen_in_list.h5", rule: "HEP001 §13 req 11", also: &[], what: "list column notes whose VALUES is a variable-length string dataset", corrupt: |f| {
        let g = open(f, T);
        let lg = h5::group_create(g.id(), "notes").unwrap();
        h5::attr_write_ascii(lg.id(), names::CLASS, names::LIST_COLUMN).unwrap();
        h5::attr_write_ascii(lg.id(), names::KIND, names::KIND_OFFSETS).unwrap();
        let o = h5::dataset_create(lg.id(), "OFFSETS", &DatasetSpec { dtype: Dtype::U64, len: N as u64 + 1, chunk: None, filters: vec![], fill: None }).unwrap();
        h5::dataset_write(o.id(), 0, &Dtype::U64, &[0u8; 8 * (N + 1)], "offsets").unwrap();
        drop(h5::dataset_create(lg.id(), "VALUES", &DatasetSpec { dtype: Dtype::VarString { utf8: true }, len: 0, chunk: Some(16), filters: vec![], fill: None }).unwrap());
        column_order(f, &["notes"], &[]);
    } },
    Case { file: "h012_no_generation.h5", rule: "HEP001 §13 req 12", also: &[], what: "GENERATION deleted while search indexes exist", corrupt: |f| delete_attr(f, T, names::GENERATION) },
    Case { file: "h013_boolean_value_2.h5", rule: "HEP001 §13 req 13", also: &[], what: "boolean column flag holds 2 at row 3", corrupt: |f| write_at(f, &format!("{T}/flag"), 3, &Dtype::hep001_bool(), &[2]) },
    // ---- HEP001 MUSTs outside §13
    Case { file: "h100_version_2.h5", rule: "HEP001 §7.2", also: &[], what: "VERSION \"2.0\" (MAJOR above what is implemented)", corrupt: |f| ascii(f, T, names::VERSION, "2.0") },
    Case { file: "h101_stray_group.h5", rule: "HEP001 §7.6", also: &[], what: "a user group provenance below the table group", corrupt: |f| drop(h5::group_create(open(f, T).id(), "provenance").unwrap()) },
    Case { file: "h102_no_fill_value.h5", rule: "HEP001 §8.5", also: &[], what: "column depth (float64) without a user-defined fill value", corrupt: |f| {
        drop(h5::dataset_create(open(f, T).id(), "depth", &DatasetSpec { dtype: Dtype::F64, len: N as u64, chunk: Some(8), filters: vec![], fill: None }).unwrap());
        column_order(f, &["depth"], &[]);
    } },
    Case { file: "h103_obj_ref_type.h5", rule: "HEP001 §5", also: &[], what: "INDEX_COLUMNS written with the deprecated H5T_STD_REF_OBJ (empty array)", corrupt: |f| {
        let g = open(f, T);
        h5::attr_write(g.id(), names::INDEX_COLUMNS, &Dtype::ObjRef, &Space::Simple(vec![0]), &[]).unwrap();
    } },
    // ---- HEP002 §12
    Case { file: "m001_bad_marquet_version.h5", rule: "HEP002 §12 req 1", also: &[], what: "MARQUET_VERSION \"one\" (not MAJOR.MINOR)", corrupt: |f| ascii(f, T, names::MARQUET_VERSION, "one") },
    Case { file: "m002_duplicate_geometry_column.h5", rule: "HEP002 §12 req 2", also: &[], what: "GEOMETRY_COLUMNS references shoreline twice", corrupt: |f| {
        let v: Vec<String> = ["shoreline", "centroid", "loc_wkb", "shoreline"].iter().map(|c| format!("{T}/{c}")).collect();
        h5::attr_write_refs(open(f, T).id(), names::GEOMETRY_COLUMNS, &v, false).unwrap();
    } },
    Case { file: "m003_no_geometry_types.h5", rule: "HEP002 §12 req 3", also: &[], what: "GEOMETRY_TYPES deleted from centroid", corrupt: |f| delete_attr(f, &format!("{T}/centroid"), names::GEOMETRY_TYPES) },
    Case { file: "m004_valid_min_on_geometry.h5", rule: "HEP002 §12 req 4", also: &[], what: "centroid carries valid_min", corrupt: |f| {
        let c = open(f, &format!("{T}/centroid"));
        let dt = types::point_dtype(Dimensions::Xy, false);
        h5::attr_write(c.id(), names::VALID_MIN, &dt, &Space::Scalar, &[0u8; 16]).unwrap();
    } },
    Case { file: "m005_point_encoding_wkb.h5", rule: "HEP002 §12 req 5", also: &[], what: "centroid (a compound point column) says GEOMETRY_ENCODING \"WKB\"", corrupt: |f| ascii(f, &format!("{T}/centroid"), names::GEOMETRY_ENCODING, "WKB") },
    Case { file: "m006_types_miss_multipolygon.h5", rule: "HEP002 §12 req 6", also: &[], what: "shoreline GEOMETRY_TYPES rewritten as [Polygon] though row 9 is a MultiPolygon", corrupt: |f| {
        let c = open(f, &format!("{T}/shoreline"));
        h5::attr_write(c.id(), names::GEOMETRY_TYPES, &types::geometry_types_dtype(), &Space::Simple(vec![1]), &3u16.to_le_bytes()).unwrap();
    } },
    Case { file: "m007_ewkb_value.h5", rule: "HEP002 §12 req 7", also: &[], what: "shoreline row 0 rewritten in place with the EWKB SRID flag in its type code", corrupt: |f| {
        let o = shore_off(f, 0);
        write_at(f, &format!("{T}/shoreline/VALUES"), o + 1, &Dtype::U8, &(3u32 | 0x2000_0000).to_le_bytes());
    } },
    Case { file: "m008_null_row_unmasked.h5", rule: "HEP002 §12 req 8", also: &[], what: "shoreline MASK[4] set TRUE for the null row, leaving a non-null row with an empty slice", corrupt: |f| {
        write_at(f, &format!("{T}/shoreline/MASK"), NULL_ROW as u64, &Dtype::hep001_bool(), &[1]);
    } },
    Case { file: "m009_fixed_trailing_bytes.h5", rule: "HEP002 §12 req 9", also: &[], what: "loc_wkb row 1 holds MULTIPOINT EMPTY (9 bytes) followed by 12 padding bytes", corrupt: |f| {
        let mut e = vec![1u8, 4, 0, 0, 0, 0, 0, 0, 0];
        e.extend_from_slice(&[0u8; 12]);
        write_at(f, &format!("{T}/loc_wkb"), 1, &Dtype::Opaque { size: 21, tag: "WKB".into() }, &e);
    } },
    Case { file: "m010_point_nan_x.h5", rule: "HEP002 §12 req 10", also: &[], what: "centroid row 2 is (NaN, 40.5): x NaN but not an empty point", corrupt: |f| {
        let mut e = f64::NAN.to_le_bytes().to_vec();
        e.extend_from_slice(&40.5f64.to_le_bytes());
        write_at(f, &format!("{T}/centroid"), 2, &types::point_dtype(Dimensions::Xy, false), &e);
    } },
    Case { file: "m011_crs_authority_code.h5", rule: "HEP002 §12 req 11", also: &[], what: "centroid CRS is the string \"EPSG:4326\" instead of PROJJSON", corrupt: |f| {
        h5::attr_write_utf8(open(f, &format!("{T}/centroid")).id(), names::CRS, "EPSG:4326").unwrap();
    } },
    Case { file: "m012_spherical_edges_projected.h5", rule: "HEP002 §12 req 12", also: &[], what: "shoreline (projected CRS) declares EDGES SPHERICAL", corrupt: |f| {
        h5::attr_write(open(f, &format!("{T}/shoreline")).id(), names::EDGES, &types::edges_dtype(), &Space::Scalar, &[1]).unwrap();
    } },
    Case { file: "m013_clockwise_exterior.h5", rule: "HEP002 §12 req 13", also: &[], what: "shoreline row 1 rewritten with a clockwise exterior ring under ORIENTATION COUNTERCLOCKWISE", corrupt: |f| {
        let o = shore_off(f, 1);
        let (x, y) = (500_100.0, 4_900_050.0);
        write_at(f, &format!("{T}/shoreline/VALUES"), o, &Dtype::U8, &polygon(&[square(x, y, 11.0, false)]));
    } },
    Case { file: "m014_bbox_too_small.h5", rule: "HEP002 §12 req 14", also: &[], what: "shoreline BBOX xmax lowered below the last geometries", corrupt: |f| {
        let c = open(f, &format!("{T}/shoreline"));
        let a = h5::attr_read(c.id(), names::BBOX).unwrap().unwrap();
        let (mut b, _, _) = types::decode_box(&a.dtype, &a.data).unwrap();
        b.xmax -= 200.0;
        h5::attr_write(c.id(), names::BBOX, &types::bbox_dtype(false, false), &Space::Scalar, &types::bbox_bytes(&b, false, false)).unwrap();
    } },
    Case { file: "m015_covering_box_wrong.h5", rule: "HEP002 §12 req 15", also: &[], what: "shoreline_bbox row 3 shifted away from its geometry", corrupt: |f| {
        let dt = types::covering_dtype(false, false);
        let mut v = Vec::new();
        types::covering_bytes(&BBox::xy(0.0, 0.0, 1.0, 1.0), false, false, &mut v);
        write_at(f, &format!("{T}/shoreline_bbox"), 3, &dt, &v);
    } },
    Case { file: "m016_block_bbox_wrong.h5", rule: "HEP002 §12 req 16", also: &[], what: "valid-token BLOCK_BBOX whose entry 1 box misses rows 4..8 and whose null_count is 0", corrupt: |f| {
        let e = block_bbox::BlockEntry { bbox: BBox::xy(0.0, 0.0, 1.0, 1.0), n: 4, null_count: 0, empty_count: 1 };
        write_at(f, &format!("{T}/SEARCH_INDEXES/shoreline__block_bbox"), 1, &block_dtype(), &block_bytes(&e));
    } },
    Case { file: "m016_rtree_leaf_wrong.h5", rule: "HEP002 §12 req 16", also: &[], what: "valid-token PACKED_RTREE whose last leaf points at row 4 (a null geometry)", corrupt: |f| {
        let p = format!("{T}/SEARCH_INDEXES/shoreline__rtree");
        let len = h5::dataset_info(open(f, &p).id(), &p).unwrap().dims[0];
        let ds = open(f, &p);
        let mut e = h5::dataset_read(ds.id(), len - 1, 1, &rtree_dtype(), &p).unwrap();
        e[32..40].copy_from_slice(&(NULL_ROW as u64).to_le_bytes());
        h5::dataset_write(ds.id(), len - 1, &rtree_dtype(), &e, &p).unwrap();
    } },
    Case { file: "m017_named_geometry_types.h5", rule: "HEP002 §12 req 17", also: &[], what: "the geometry-type enumeration committed as a named datatype /lakes/geometry_types", corrupt: |f| {
        h5::commit_datatype(open(f, T).id(), "geometry_types", &types::geometry_types_dtype()).unwrap();
    } },
    Case { file: "m100_marquet_version_2.h5", rule: "HEP002 §5.1", also: &[], what: "MARQUET_VERSION \"2.0\": unsupported MAJOR (ruling R16)", corrupt: |f| ascii(f, T, names::MARQUET_VERSION, "2.0") },
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
        let rules = r.error_rules();
        let allowed: BTreeSet<&str> = std::iter::once(c.rule).chain(c.also.iter().copied()).collect();
        if !rules.contains(c.rule) || !rules.is_subset(&allowed) {
            let errs: Vec<String> = r.errors().map(|f| f.to_string()).collect();
            failures.push(format!("{}: expected {{{}}}, got {rules:?}\n  {}", c.file, c.rule, errs.join("\n  ")));
        }
        assert_eq!(r.status, Status::NonConformant, "{}", c.file);
        if bless {
            std::fs::create_dir_all(testdata()).unwrap();
            std::fs::copy(&p, testdata().join(c.file)).unwrap();
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    if bless {
        let mut readme = String::from(
            "# testdata/bad: the malformed-file registry\n\n\
             Each file is the conformant table built by `tests/validate_corpus.rs` (`build_base`), \
             corrupted with raw `marquet::h5` calls so that it breaks exactly one requirement. \
             `cargo test --test validate_corpus` checks that `marquet validate` reports exactly that rule \
             (the set of error rules equals it); regenerate with `MARQUET_BLESS=1 cargo test --test validate_corpus`.\n\n\
             | file | rule broken | how |\n|---|---|---|\n",
        );
        for c in CASES {
            readme.push_str(&format!("| `{}` | {} | {} |\n", c.file, c.rule, c.what));
        }
        std::fs::write(testdata().join("README.md"), readme).unwrap();
    }
}

/// The committed copies still fail with their pinned rule (they are what other
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
        assert!(r.error_rules().contains(c.rule), "{}: {:?}", c.file, r.error_rules());
    }
}

#[test]
fn every_numbered_requirement_has_a_bad_file() {
    let covered: BTreeSet<&str> = CASES.iter().map(|c| c.rule).collect();
    for k in 1..=13 {
        let r = format!("HEP001 §13 req {k}");
        assert!(covered.contains(r.as_str()), "{r} has no bad file");
    }
    for k in 1..=17 {
        let r = format!("HEP002 §12 req {k}");
        assert!(covered.contains(r.as_str()), "{r} has no bad file");
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
}

#[test]
fn small_batches_give_the_same_findings() {
    // Its own directory: every_bad_file_breaks_exactly_its_rule writes the same file names
    // at the same time (HDF5 then refuses to truncate an open file).
    let dir = tmpdir().join("small-batches");
    std::fs::create_dir_all(&dir).unwrap();
    for c in CASES.iter().filter(|c| c.file.starts_with("m01") || c.file.starts_with("h010")) {
        let p = make(&dir, c);
        let a = validate_file(&p, &Options::default()).unwrap();
        let b = validate_file(&p, &Options { batch_rows: 3, ..Options::default() }).unwrap();
        assert_eq!(a.error_rules(), b.error_rules(), "{}", c.file);
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

//! Reserved names (HEP001 §14, HEP002 §13).

// ---- HEP001 table group ----
/// Identification attribute (HEP001 §7.1, §9.1, §9.4): scalar fixed-length ASCII whose value is
/// [`COLUMN_TABLE`] on a table group, [`LIST_COLUMN`] on a list column, [`STRING_VALUES`] on a
/// string-element group. Tables are identified by, and only by, this attribute.
pub const CLASS: &str = "CLASS";
/// The H5Col revision of a table group (HEP001 §7.2): scalar ASCII `MAJOR.MINOR`, compared
/// numerically; we write [`H5COL_VERSION`].
pub const VERSION: &str = "VERSION";
/// The authoritative logical row count of a table group (HEP001 §7.3): scalar `uint64`. Rows
/// `[0, NROWS)` are the table, rows beyond are reserved storage; appends commit by writing it last.
pub const NROWS: &str = "NROWS";
/// Table-group state counter for index validity (HEP001 §7.4, §12.2): scalar `uint64`, required
/// whenever the table has a search index, incremented by every change that is not a pure append.
pub const GENERATION: &str = "GENERATION";
/// Optional human-readable table title (HEP001 §7.4): scalar fixed-length UTF-8.
pub const TITLE: &str = "TITLE";
/// Row-label columns of a table, outermost first (HEP001 §7.4, §10): 1-D array of `H5T_STD_REF`
/// object references to column datasets; never a list column nor (HEP002 §5.3) a geometry column.
pub const INDEX_COLUMNS: &str = "INDEX_COLUMNS";
/// Logical column order (HEP001 §7.4): 1-D fixed-length UTF-8 string array naming every column;
/// Anndata spelling with a hyphen.
pub const COLUMN_ORDER: &str = "column-order";
/// Anndata name of the primary row-label dataset (HEP001 §7.4); must agree with
/// `INDEX_COLUMNS[0]`, which is authoritative.
pub const INDEX_NAME: &str = "_index";
/// Free-text description of a table, column or index (HEP001 §7.4, §8.6, §11.3): scalar
/// fixed-length UTF-8, lowercase by naming rule 4.
pub const DESCRIPTION: &str = "description";
/// The `description` of a list-of-bytes column that holds UTF-8 text, one string per row
/// (Marquet's string storage for netCDF-4 targets and values holding NUL, local ruling L17).
pub const TEXT_BYTES_DESCRIPTION: &str = "UTF-8 text stored as a list of bytes (converted from a Parquet string column)";
/// Physical units of a column (HEP001 §8.6): scalar fixed-length UTF-8; absent means
/// dimensionless. Geometry columns should not carry it (HEP002 §6.1).
pub const UNITS: &str = "units";
/// Authority for [`UNITS`] strings, e.g. `"UDUNITS-2"` (HEP001 §7.4, §8.6): table-wide default
/// or per-column override.
pub const UNITS_VOCABULARY: &str = "units_vocabulary";
/// Inclusive lower bound of a column's logical range (HEP001 §8.5, §8.6), of the column's element
/// type; the fill value must lie strictly outside `[valid_min, valid_max]`.
pub const VALID_MIN: &str = "valid_min";
/// Inclusive upper bound of a column's logical range (HEP001 §8.5, §8.6); see [`VALID_MIN`].
pub const VALID_MAX: &str = "valid_max";
/// Anndata pass-through attribute (HEP001 §7.4), e.g. `"dataframe"`; not interpreted.
pub const ENCODING_TYPE: &str = "encoding-type";
/// Anndata pass-through attribute (HEP001 §7.4), e.g. `"0.2.0"`; not interpreted.
pub const ENCODING_VERSION: &str = "encoding-version";

// ---- tokens ----
/// [`CLASS`] value of an H5Col table group (HEP001 §7.1).
pub const COLUMN_TABLE: &str = "COLUMN_TABLE";
/// [`CLASS`] value of a list-column group (HEP001 §9.1).
pub const LIST_COLUMN: &str = "LIST_COLUMN";
/// [`CLASS`] value of a string-element group holding `OFFSETS` and `CHARS` (HEP001 §9.4).
pub const STRING_VALUES: &str = "STRING_VALUES";
/// [`KIND`] value of a list column stored with the Arrow offsets layout, the only list kind
/// HEP001 defines (§9.1).
pub const KIND_OFFSETS: &str = "OFFSETS";
/// The H5Col revision we implement and write.
pub const H5COL_VERSION: &str = "1.0";

// ---- list columns ----
/// Storage or index kind (HEP001 §9.1, §11.3): scalar fixed-length ASCII on a list-column group
/// ([`KIND_OFFSETS`]) or a search-index dataset ([`KIND_CHUNK_MINMAX`], [`KIND_BLOCK_BBOX`], …).
pub const KIND: &str = "KIND";
/// List-column member (HEP001 §9.2): rank-1 `uint64`, starts at 0, non-decreasing; entry `i`
/// is `VALUES[OFFSETS[i]..OFFSETS[i+1])`; extent at least entries + 1.
pub const OFFSETS: &str = "OFFSETS";
/// List-column member holding the flattened elements (HEP001 §9.2); also the scalar reference
/// attribute of a `BITMAP` index naming its values dataset (§11.6).
pub const VALUES: &str = "VALUES";
/// Optional list-column member (HEP001 §9.2): rank-1 HEP001 boolean, `FALSE` marks a null entry.
/// Reserved, and never written, as an attribute of a column dataset (§8.5).
pub const MASK: &str = "MASK";
/// Member of a [`STRING_VALUES`] group (HEP001 §9.4): rank-1 `uint8` with the UTF-8 bytes of all
/// entries back to back.
pub const CHARS: &str = "CHARS";

// ---- categoricals ----
/// Categorical columns (HEP001 §8.7): the scalar object-reference attribute of a column and the
/// name of the group holding the categories datasets. Forbidden on geometry columns (HEP002 §6.1).
pub const CATEGORIES: &str = "CATEGORIES";
/// HEP001 boolean attribute (Anndata name): categories or `BITMAP` values are listed in a
/// meaningful order; must be true on a `SORTED_ROWS` index (HEP001 §8.7, §11.5, §11.6).
pub const ORDERED: &str = "ordered";

// ---- Arrow sources (issue #22) ----
/// Column attribute (UTF-8 JSON) recording the Arrow field an imported column came from,
/// where its name and type do not say it: `"path"`, the field names from the root for a
/// child of a struct flattened into `parent.child` columns (re-nested on GeoParquet
/// export), and `"json"`, the Arrow type of a nested value (a list of structs, a map, a
/// nested list) that HEP001 cannot hold and that is stored as JSON text instead. An extra
/// attribute, as HEP001 §4 allows (no reserved name).
pub const ARROW_FIELD: &str = "arrow_field";

// ---- search indexes ----
/// Group under a table group holding every search-index dataset and its accompanying datasets
/// (HEP001 §11.1).
pub const SEARCH_INDEXES: &str = "SEARCH_INDEXES";
/// Column attribute listing the column's search indexes (HEP001 §11.2): 1-D array of
/// `H5T_STD_REF` references into [`SEARCH_INDEXES`]; the only link between a column and its indexes.
pub const SEARCH_INDEX_LIST: &str = "SEARCH_INDEX_LIST";
/// Validity token of a search index (HEP001 §11.3, §12.2): scalar `uint64`, the table's
/// [`GENERATION`] when the index was built; an index whose tokens do not match is stale (ruling R12).
pub const SOURCE_GENERATION: &str = "SOURCE_GENERATION";
/// Validity token of a search index (HEP001 §11.3, §12.2): scalar `uint64`, the [`NROWS`] the
/// index describes.
pub const SOURCE_NROWS: &str = "SOURCE_NROWS";
/// Index kind: per-chunk `min`/`max`/`nan_count`/`fill_count`/`n` of one orderable column
/// (HEP001 §11.4).
pub const KIND_CHUNK_MINMAX: &str = "CHUNK_MINMAX";
/// Index kind: the row positions in value order, ties by row, NaN and fill rows at the tail
/// (HEP001 §11.5).
pub const KIND_SORTED_ROWS: &str = "SORTED_ROWS";
/// Index kind: one bit row per distinct value for equality on low-cardinality columns
/// (HEP001 §11.6).
pub const KIND_BITMAP: &str = "BITMAP";
/// Index kind: one Bloom filter per source chunk over the values' canonical bytes
/// (HEP001 §11.7).
pub const KIND_CHUNK_BLOOM: &str = "CHUNK_BLOOM";
/// `SORTED_ROWS` attribute (HEP001 §11.5): scalar `uint64`, number of NaN rows at the very end.
pub const NAN_TAIL_LENGTH: &str = "nan_tail_length";
/// `SORTED_ROWS` attribute (HEP001 §11.5): scalar `uint64`, number of non-NaN fill rows just
/// before the NaN tail.
pub const FILL_TAIL_LENGTH: &str = "fill_tail_length";
/// `BITMAP` attribute (HEP001 §11.6): HEP001 boolean; true when the values dataset lists every
/// distinct non-missing value, so an absent query value provably matches nothing.
pub const EXHAUSTIVE: &str = "exhaustive";
/// `CHUNK_BLOOM` attribute (HEP001 §11.7): scalar `uint16`, the number of hash functions.
pub const BLOOM_K: &str = "k";
/// `CHUNK_BLOOM` attribute (HEP001 §11.7): scalar `uint64`, filter size in bits, a multiple of 8.
pub const BLOOM_M_BITS: &str = "m_bits";
/// `CHUNK_BLOOM` attribute (HEP001 §11.7): scalar ASCII naming the hash family; must be
/// [`BLOOM_HASH_FAMILY_VALUE`].
pub const BLOOM_HASH_FAMILY: &str = "hash_family";
/// `CHUNK_BLOOM` attribute (HEP001 §11.7): scalar `uint32` MurmurHash3 seed (default 0; readers
/// must read it).
pub const BLOOM_SEED: &str = "seed";
/// The only hash family HEP001 §11.7 defines: Kirsch–Mitzenmacher double hashing of
/// one `MurmurHash3_x64_128` call (low 64 bits `h_a`, high 64 bits `h_b`).
pub const BLOOM_HASH_FAMILY_VALUE: &str = "murmur3_x64_128_double";

// ---- HEP001 boolean enum (§6) ----
/// Member name for 0 in the HEP001 boolean enumeration (base `H5T_STD_I8LE`, HEP001 §6).
pub const FALSE: &str = "FALSE";
/// Member name for 1 in the HEP001 boolean enumeration (HEP001 §6).
pub const TRUE: &str = "TRUE";
/// The enumeration member whose code is the fill value of an enum column with missing values
/// (HEP001 §8.5).
pub const MISSING: &str = "MISSING";

// ---- HEP002 table group ----
/// Marquet's marker attribute on a table group (HEP002 §5.1): scalar null-terminated ASCII
/// `MAJOR.MINOR`; with `CLASS = COLUMN_TABLE` it identifies a Marquet table.
pub const MARQUET_VERSION: &str = "MARQUET_VERSION";
/// Table-group attribute listing the geometry columns (HEP002 §5.2): 1-D `H5T_STD_REF` array,
/// at least one distinct non-null reference; the first element is the primary geometry column.
pub const GEOMETRY_COLUMNS: &str = "GEOMETRY_COLUMNS";
/// The Marquet revision we implement and write.
pub const MARQUET_VERSION_VALUE: &str = "1.0";
/// Marquet's own table-group attribute (not HEP002's; local ruling L19): the row order the
/// table was written in, scalar ASCII [`ROW_ORDER_INPUT`] when its producer chose to keep the
/// input order (`convert --keep-order`); absent: rows in Hilbert order (HEP002 §10.6's
/// SHOULD). Lowercase, like HEP001's producer-private attributes (naming rules 4–5), so that
/// it can never collide with a reserved name. Appends follow it.
pub const ROW_ORDER: &str = "marquet_row_order";
/// [`ROW_ORDER`]'s value for a table whose rows stay in the order they were given.
pub const ROW_ORDER_INPUT: &str = "input";

// ---- HEP002 geometry column ----
/// Geometry-column attribute (HEP002 §6.2): scalar ASCII, [`ENCODING_WKB`] or
/// [`ENCODING_POINT`]; with the HDF5 object type it selects one of the three storage forms (§7).
pub const GEOMETRY_ENCODING: &str = "GEOMETRY_ENCODING";
/// Geometry-column attribute (HEP002 §6.3): 1-D array of the 28-member geometry-type
/// enumeration ([`crate::spec::GeometryType`]); empty means unknown, otherwise lists every type present.
pub const GEOMETRY_TYPES: &str = "GEOMETRY_TYPES";
/// Geometry-column attribute (HEP002 §8.1): a PROJJSON document, or a null dataspace for an
/// unknown CRS (ruling R10); absent means `OGC:CRS84` (§8.4).
pub const CRS: &str = "CRS";
/// Geometry-column attribute (HEP002 §8.3): scalar `float64` coordinate epoch in decimal years,
/// for a dynamic CRS.
pub const EPOCH: &str = "EPOCH";
/// Geometry-column attribute (HEP002 §9.1): the edges enumeration ([`EDGES_MEMBERS`]); absent
/// means `PLANAR`.
pub const EDGES: &str = "EDGES";
/// Geometry-column attribute (HEP002 §9.2): the orientation enumeration; `COUNTERCLOCKWISE`
/// guarantees exterior rings counterclockwise and interior rings clockwise.
pub const ORIENTATION: &str = "ORIENTATION";
/// Geometry-column attribute (HEP002 §6.4): scalar compound of `float64` fields `xmin, ymin,
/// [zmin,] [mmin,] xmax, ymax, [zmax,] [mmax]` containing every non-null, non-empty geometry.
pub const BBOX: &str = "BBOX";
/// Geometry-column attribute (HEP002 §10.5): scalar `H5T_STD_REF` to the column's bounding-box
/// covering column.
pub const COVERING: &str = "COVERING";

/// [`GEOMETRY_ENCODING`] value for ISO WKB values (HEP002 §6.2, §7.1): a list column
/// (variable-length form, §7.2) or an opaque dataset tagged [`OPAQUE_TAG_WKB`] (fixed-length form, §7.3).
pub const ENCODING_WKB: &str = "WKB";
/// [`GEOMETRY_ENCODING`] value for points stored as a compound of native floats `x, y[, z][, m]`
/// (HEP002 §6.2, §7.4).
pub const ENCODING_POINT: &str = "POINT";
/// Tokens reserved for future native encodings (HEP002 §6.2).
pub const RESERVED_ENCODINGS: [&str; 5] = ["LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON"];
/// The opaque tag of a fixed-length WKB column (HEP002 §7.3).
pub const OPAQUE_TAG_WKB: &str = "WKB";

// ---- HEP002 index kinds ----
/// Index kind registered by HEP002 §10.3: one box plus `n`, `null_count`, `empty_count` per
/// row block of [`BLOCK_LENGTH`] rows.
pub const KIND_BLOCK_BBOX: &str = "BLOCK_BBOX";
/// Index kind registered by HEP002 §10.4: a static packed Hilbert R-tree stored level by level,
/// root first.
pub const KIND_PACKED_RTREE: &str = "PACKED_RTREE";
/// `BLOCK_BBOX` attribute (HEP002 §10.3): scalar `uint64` ≥ 1, the row-block length B of §10.2.
pub const BLOCK_LENGTH: &str = "block_length";
/// `PACKED_RTREE` attribute (HEP002 §10.4): scalar `uint16` ≥ 2, the node size M (16 by default).
pub const NODE_SIZE: &str = "node_size";
/// `PACKED_RTREE` attribute (HEP002 §10.4): scalar `uint64`, the number of leaf items n₀ (rows
/// with a non-null, non-empty geometry).
pub const NUM_ITEMS: &str = "num_items";

// ---- enumerations (ruling R2) ----
/// Members of the Marquet edges enumeration, base `H5T_STD_U8LE` (HEP002 §9.1, ruling R2): name and
/// value. Readers compare member names, never values.
pub const EDGES_MEMBERS: [(&str, u8); 6] =
    [("PLANAR", 0), ("SPHERICAL", 1), ("VINCENTY", 2), ("THOMAS", 3), ("ANDOYER", 4), ("KARNEY", 5)];
/// The single member of the Marquet orientation enumeration, base `H5T_STD_U8LE`
/// (HEP002 §9.2, ruling R2).
pub const ORIENTATION_COUNTERCLOCKWISE: (&str, u8) = ("COUNTERCLOCKWISE", 1);

// ---- recommended fill values (HEP001 §8.5) ----
/// 9.9692099683868690e+36, exact in f32 and f64.
pub const FILL_F64: f64 = 9.969_209_968_386_869e36;
/// HEP001's recommended `float32` fill value (§8.5), bits `0x7CF00000`; equal to [`FILL_F64`].
// The same decimal spelling as FILL_F64 (netCDF's default fill), rounded to f32.
#[allow(clippy::excessive_precision)]
pub const FILL_F32: f32 = 9.969_209_968_386_869e36;
/// The opaque fill of Marquet's HEP001 amendment (ruling R14): "FILL" then 0x01, 0x02, …
pub fn opaque_fill(size: usize) -> Vec<u8> {
    let head = b"FILL";
    (0..size)
        .map(|i| if i < 4 { head[i] } else { (i - 3) as u8 })
        .collect()
}

// ---- Raster arrays beside a table (issue #37, docs/lakehouse.md) ----
/// Suffix of the group beside a raster footprint table that holds its arrays:
/// `<table>.rasters/<column>/<source row>`.
pub const RASTER_ARRAYS_SUFFIX: &str = ".rasters";
/// The CRS of a raster array as WKT (the name GDAL's netCDF driver reads on a grid mapping).
pub const RASTER_SPATIAL_REF: &str = "spatial_ref";
/// GDAL's geotransform of a raster array as text, six numbers `x0 sx rx y0 ry sy`
/// (corner-anchored; the name and form GDAL's netCDF driver reads and writes).
pub const RASTER_GEOTRANSFORM: &str = "GeoTransform";
/// Havasu's six geo-reference numbers (scale_x, scale_y, skew_x, skew_y, upperleft_x,
/// upperleft_y; centre-anchored), six float64.
pub const RASTER_GEO_REFERENCE: &str = "havasu_geo_reference";
/// The Havasu pixel type name of a raster array's bands (`PT_8BUI`, ...).
pub const RASTER_PIXEL_TYPE: &str = "pixel_type";
/// 0-based positions, in the raster, of the bands a raster array holds (out-db bands are
/// not in the array), int64 per plane.
pub const RASTER_BAND_INDEX: &str = "band_index";
/// Per band of a raster array: its no-data value as text (empty: none).
pub const RASTER_NO_DATA: &str = "no_data";
/// The netCDF / CF fill value of a raster array whose bands share one no-data value.
pub const RASTER_FILL_VALUE: &str = "_FillValue";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_values_are_exact() {
        assert_eq!(FILL_F64.to_bits(), 0x479E_0000_0000_0000);
        assert_eq!(FILL_F32.to_bits(), 0x7CF0_0000);
        assert_eq!(FILL_F32 as f64, FILL_F64);
    }

    #[test]
    fn opaque_fill_matches_hep002_15_1() {
        let f = opaque_fill(21);
        assert_eq!(
            f,
            vec![0x46, 0x49, 0x4c, 0x4c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]
        );
    }
}

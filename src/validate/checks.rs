//! The registry of the validator's sub-checks: every distinct test the validator makes,
//! with the requirement it belongs to. Every error finding names one of these
//! ([`super::Finding::check`]); `tests/validate_corpus.rs` holds at least one malformed
//! file per registered sub-check, and fails when one has none.
//!
//! The checks are defined only through the `checks!` macro below, which also builds
//! [`ALL`]: a sub-check used by the validator cannot be missing from the registry.

/// One sub-check of a requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Check {
    /// Stable identifier, e.g. `"m14-bbox-contains"`.
    pub id: &'static str,
    /// The requirement whose error it reports, e.g. `"HEP002 §12 req 14"`.
    pub rule: &'static str,
    /// What is checked.
    pub what: &'static str,
}

macro_rules! checks {
    ($( $name:ident = ($id:literal, $rule:expr, $what:literal); )*) => {
        $(
            #[doc = $what]
            #[allow(rustdoc::broken_intra_doc_links)] // `what` is prose: "INDEX_COLUMNS[0]" is no link
            pub const $name: Check = Check { id: $id, rule: $rule, what: $what };
        )*
        /// Every registered sub-check.
        pub const ALL: &[Check] = &[ $( $name ),* ];
    };
}

use super::h5col_checks as h;
use super::marquet_checks as m;

checks! {
    // ---- not a requirement: the object could not be read at all
    UNREADABLE = ("unreadable", "HDF5 read", "an object the checks need cannot be read (corrupt data, unavailable filter)");

    // ---- HEP001 outside §13
    H_TABLE_GROUP = ("h-7.1-table-group", h::CLASS_RULE, "the file holds a table group (class \"COLUMN_TABLE\") at the path validated");
    H_VERSION_PRESENT = ("h-7.2-version-present", h::VERSION_RULE, "VERSION is present and a scalar string");
    H_VERSION_VALUE = ("h-7.2-version-value", h::VERSION_RULE, "VERSION is MAJOR.MINOR with MAJOR 1");
    H_HARD_LINKS = ("h-7.6-hard-links", h::SELF_CONTAINED, "only hard links below the table group");
    H_NO_STRAY_OBJECTS = ("h-7.6-no-stray-objects", h::SELF_CONTAINED, "only columns, CATEGORIES and SEARCH_INDEXES below the table group");
    H_NO_NAMED_TYPES = ("h-7.6-no-named-datatypes", h::SELF_CONTAINED, "no named datatype below the table group");
    H_FILL_DECLARED = ("h-8.5-fill-declared", h::FILL_RULE, "every non-boolean column dataset declares a user-defined fill value");
    H_FILL_OUTSIDE_VALID = ("h-8.5-fill-outside-valid-range", h::FILL_RULE, "the fill value lies outside [valid_min, valid_max]");
    H_NO_MASK_ATTR = ("h-8.5-no-mask-attribute", h::FILL_RULE, "no column dataset carries the reserved MASK attribute");
    H_REF_TYPE = ("h-5-std-ref", h::REF_RULE, "reference attributes use H5T_STD_REF");
    H_LIST_INDEX_KINDS = ("h-9.6-list-index-kinds", h::LIST_INDEX_RULE, "list columns reference only index kinds declared for list columns");

    // ---- HEP001 §13
    H1_NROWS = ("h1-nrows", h::R1, "NROWS is a scalar unsigned integer");
    H2_EXTENTS_EQUAL = ("h2-extents-equal", h::R2, "every column dataset has the same extent");
    H2_EXTENT_NROWS = ("h2-extent-covers-nrows", h::R2, "column extents are at least NROWS");
    H3_DATASETS_ONLY = ("h3-datasets-only", h::R3, "SEARCH_INDEXES holds only datasets");
    H3_KIND_STRING = ("h3-kind-string", h::R3, "KIND of a search-index dataset is a scalar string");
    H4_LIST_SHAPE = ("h4-index-list-shape", h::R4, "SEARCH_INDEX_LIST is one-dimensional");
    H4_LIST_RESOLVES = ("h4-index-list-resolves", h::R4, "SEARCH_INDEX_LIST elements resolve to datasets in this table's SEARCH_INDEXES");
    H4_LIST_TARGETS = ("h4-index-list-targets-indexes", h::R4, "SEARCH_INDEX_LIST elements are search indexes (carry KIND)");
    H5_CATEGORIES_REF = ("h5-categories-reference", h::R5, "CATEGORIES is a scalar reference into this table's CATEGORIES group");
    H5_CATEGORICAL_INT = ("h5-categorical-integer", h::R5, "a categorical column has an integer datatype");
    H5_CATEGORIES_RANK = ("h5-categories-rank", h::R5, "a categories dataset has rank 1");
    H5_CATEGORIES_DATASETS = ("h5-categories-datasets-only", h::R5, "the CATEGORIES group holds only datasets");
    H5_CATEGORIES_USED = ("h5-categories-referenced", h::R5, "every categories dataset is referenced by a column");
    H6_ORDER_TYPE = ("h6-column-order-type", h::R6, "column-order is a one-dimensional string array");
    H6_ORDER_UNIQUE = ("h6-column-order-unique", h::R6, "column-order lists no name twice");
    H6_ORDER_COLUMNS = ("h6-column-order-columns", h::R6, "column-order lists only columns");
    H6_ORDER_COMPLETE = ("h6-column-order-complete", h::R6, "column-order lists every column");
    H7_INDEX_RESOLVE = ("h7-index-columns-resolve", h::R7, "INDEX_COLUMNS is one-dimensional and references columns of the table");
    H7_INDEX_NOT_LIST = ("h7-index-columns-not-lists", h::R7, "INDEX_COLUMNS references column datasets, not list columns");
    H7_INDEX_NAME = ("h7-index-name", h::R7, "_index names INDEX_COLUMNS[0]");
    H8_CATEGORICAL_FILL = ("h8-categorical-fill", h::R8, "a categorical column's fill value is not a category code");
    H9_MINMAX_LAYOUT = ("h9-chunk-minmax-layout", h::R9, "a valid CHUNK_MINMAX has the compound fields and one entry per chunk");
    H9_MINMAX_CONTENT = ("h9-chunk-minmax-content", h::R9, "a valid CHUNK_MINMAX describes its chunks");
    H9_SORTED_CONTENT = ("h9-sorted-rows-content", h::R9, "a valid SORTED_ROWS is the §11.5 permutation");
    H9_BITMAP_CONTENT = ("h9-bitmap-content", h::R9, "a valid BITMAP matches the column bit by bit");
    H9_BLOOM_CONTENT = ("h9-chunk-bloom-content", h::R9, "a valid CHUNK_BLOOM has no false negative");
    H9_ON_LIST = ("h9-index-on-list-column", h::R9, "a HEP001 index kind is not attached to a list column");
    H10_KIND = ("h10-list-kind", h::R10, "a list column carries KIND \"OFFSETS\"");
    H10_MEMBERS = ("h10-list-members", h::R10, "a list level has OFFSETS and VALUES (or CHARS), optional MASK, nothing else");
    H10_OFFSETS_TYPE = ("h10-offsets-type", h::R10, "OFFSETS is a rank-1 unsigned dataset of at least entries + 1 elements");
    H10_OFFSETS_ZERO = ("h10-offsets-start-zero", h::R10, "OFFSETS[0] is 0");
    H10_OFFSETS_ORDER = ("h10-offsets-non-decreasing", h::R10, "OFFSETS never decrease");
    H10_MASK_TYPE = ("h10-mask-type", h::R10, "MASK is a boolean dataset covering every entry");
    H10_MASK_VALUES = ("h10-mask-values", h::R10, "MASK holds only FALSE and TRUE");
    H10_NULL_SLICES = ("h10-null-slices-empty", h::R10, "a null entry has an empty slice");
    H10_VALUES_TYPE = ("h10-values-type", h::R10, "VALUES / CHARS are rank 1 and reach the last offset (CHARS uint8)");
    H10_NESTING = ("h10-nesting-depth", h::R10, "list columns nest at most 32 levels");
    H11_NO_VLEN = ("h11-no-vlen", h::R11, "no variable-length datatype below a list column");
    H12_GENERATION = ("h12-generation", h::R12, "with search indexes, GENERATION is a scalar unsigned integer");
    H12_SOURCE_TOKENS = ("h12-source-tokens", h::R12, "every search index carries SOURCE_GENERATION and SOURCE_NROWS");
    H13_BOOL_FILL = ("h13-boolean-no-fill", h::R13, "a boolean column declares no fill value");
    H13_BOOL_VALUES = ("h13-boolean-values", h::R13, "a boolean column holds only 0 and 1");

    // ---- HEP002 §5.1 and §12
    M_VERSION_SUPPORTED = ("m-5.1-version-supported", m::MARKER, "MARQUET_VERSION has MAJOR 1 (ruling R16)");
    M1_VERSION = ("m1-marquet-version", m::R1, "MARQUET_VERSION is a scalar string MAJOR.MINOR");
    M2_PRESENT = ("m2-geometry-columns-present", m::R2, "GEOMETRY_COLUMNS is a one-dimensional attribute with at least one element");
    M2_REF_TYPE = ("m2-std-ref", m::R2, "GEOMETRY_COLUMNS has the datatype H5T_STD_REF");
    M2_RESOLVE = ("m2-geometry-columns-resolve", m::R2, "GEOMETRY_COLUMNS elements are non-null references to columns of the table");
    M2_DISTINCT = ("m2-geometry-columns-distinct", m::R2, "GEOMETRY_COLUMNS references each column once");
    M3_ATTRS = ("m3-geometry-attributes", m::R3, "a geometry column carries GEOMETRY_ENCODING and GEOMETRY_TYPES");
    M3_REFERENCED = ("m3-encoding-referenced", m::R3, "a column carrying GEOMETRY_ENCODING is referenced by GEOMETRY_COLUMNS");
    M4_ROW_LABEL = ("m4-not-row-label", m::R4, "no geometry column is referenced by INDEX_COLUMNS");
    M4_H5COL_ATTRS = ("m4-no-h5col-attributes", m::R4, "no geometry column carries CATEGORIES, valid_min or valid_max");
    M5_ENCODING_STRING = ("m5-encoding-string", m::R5, "GEOMETRY_ENCODING is a scalar string");
    M5_ENCODING_KNOWN = ("m5-encoding-known", m::R5, "GEOMETRY_ENCODING is \"WKB\" or \"POINT\"");
    M5_FORM = ("m5-storage-form", m::R5, "GEOMETRY_ENCODING and the HDF5 object form one of the three storage forms");
    M6_TYPES_ENUM = ("m6-geometry-types-enum", m::R6, "GEOMETRY_TYPES has the geometry-type enumeration: exactly the 28 members (ruling R1)");
    M6_TYPES_SHAPE = ("m6-geometry-types-shape", m::R6, "GEOMETRY_TYPES is one-dimensional");
    M6_TYPES_DISTINCT = ("m6-geometry-types-distinct", m::R6, "GEOMETRY_TYPES elements are distinct");
    M6_POINT_TYPES = ("m6-point-types", m::R6, "a point column lists nothing or exactly its one type");
    M6_TYPES_COMPLETE = ("m6-geometry-types-complete", m::R6, "GEOMETRY_TYPES lists the type of every non-null geometry");
    M7_WKB = ("m7-wkb-valid", m::R7, "every WKB value is one ISO WKB geometry");
    M8_VALUES_TYPE = ("m8-values-type", m::R8, "VALUES of a WKB list column is a rank-1 uint8 dataset");
    M8_VALUES_NO_FILL = ("m8-values-no-fill", m::R8, "VALUES of a WKB list column declares no fill value");
    M8_NONNULL_SLICES = ("m8-nonnull-slices", m::R8, "a non-null row of a WKB list column has a non-empty slice");
    M9_FILL_NOT_WKB = ("m9-fill-not-wkb", m::R9, "the fill value of a fixed-length WKB column is not valid WKB");
    M9_ONE_VALUE = ("m9-element-one-value", m::R9, "a fixed-length WKB element is exactly one WKB value");
    M10_POINT_TYPE = ("m10-point-type", m::R10, "a point column has fields x, y[, z][, m] of one float type");
    M10_FILL_NO_NAN = ("m10-fill-no-nan", m::R10, "a point column's fill value has no NaN field");
    M10_POINT_VALUES = ("m10-point-values", m::R10, "a non-null point is empty (all NaN) or has x and y");
    M11_CRS_TYPE = ("m11-crs-type", m::R11, "CRS is a scalar string or has a null dataspace");
    M11_CRS_PROJJSON = ("m11-crs-projjson", m::R11, "CRS is a PROJJSON coordinate reference system (a type and the members it requires)");
    M12_EDGES_ENUM = ("m12-edges-enum", m::R12, "EDGES has the edges enumeration: exactly the 6 members (ruling R2)");
    M12_EDGES_VALUE = ("m12-edges-value", m::R12, "EDGES is a scalar holding one member");
    M12_EDGES_GEOGRAPHIC = ("m12-edges-geographic", m::R12, "non-planar EDGES need a geographic CRS");
    M12_ORIENTATION_ENUM = ("m12-orientation-enum", m::R12, "ORIENTATION has the orientation enumeration: exactly its one member (ruling R2)");
    M12_ORIENTATION_VALUE = ("m12-orientation-value", m::R12, "ORIENTATION is a scalar holding COUNTERCLOCKWISE");
    M12_LONLAT = ("m12-lonlat-range", m::R12, "under non-planar EDGES every coordinate is in longitude [-180, 180], latitude [-90, 90]");
    M13_RINGS = ("m13-ring-orientation", m::R13, "under ORIENTATION every exterior ring is counterclockwise, every interior ring clockwise");
    M14_TYPE = ("m14-bbox-type", m::R14, "BBOX is a scalar compound of the §6.4 fields in order, all float64");
    M14_NAN = ("m14-bbox-nan", m::R14, "BBOX has no NaN x/y bound");
    M14_WRAP = ("m14-bbox-wrap-geographic", m::R14, "a BBOX with xmin > xmax needs a geographic CRS");
    M14_CONTAINS = ("m14-bbox-contains", m::R14, "BBOX contains every vertex");
    M14_CONTAINS_EDGES = ("m14-bbox-contains-edges", m::R14, "under non-planar EDGES, BBOX contains every geodesic edge and enclosed pole (ruling R8)");
    M15_REFERENCE = ("m15-covering-reference", m::R15, "COVERING is a scalar reference to a column dataset that is not a geometry column");
    M15_TYPE = ("m15-covering-type", m::R15, "a covering column is a compound {xmin, ymin, [zmin,] xmax, ymax[, zmax]} of one float type");
    M15_UNSHARED = ("m15-covering-unshared", m::R15, "a covering column is referenced by one geometry column");
    M15_NULL_ROWS = ("m15-covering-null-rows", m::R15, "a covering row holds the fill value exactly when the geometry is null");
    M15_EMPTY_ROWS = ("m15-covering-empty-rows", m::R15, "an empty geometry's covering row is the empty box");
    M15_WRAP = ("m15-covering-wrap-geographic", m::R15, "a wrapping covering box needs a geographic CRS");
    M15_CONTAINS = ("m15-covering-contains", m::R15, "a covering box contains its geometry's vertices");
    M15_CONTAINS_EDGES = ("m15-covering-contains-edges", m::R15, "under non-planar EDGES, a covering box contains its geometry's geodesic edges (ruling R8)");
    M16_LINKAGE = ("m16-index-linkage", m::R16, "a BLOCK_BBOX / PACKED_RTREE index is referenced only from one geometry column");
    M16_BLOCK_LAYOUT = ("m16-block-layout", m::R16, "a BLOCK_BBOX has rank 1, the §10.3 compound, block_length ≥ 1 and enough entries");
    M16_BLOCK_CONTAINS = ("m16-block-contains", m::R16, "a valid block box contains its rows' vertices");
    M16_BLOCK_CONTAINS_EDGES = ("m16-block-contains-edges", m::R16, "under non-planar EDGES, a valid block box contains its rows' geodesic edges (ruling R8)");
    M16_BLOCK_COUNTS = ("m16-block-counts", m::R16, "a valid block entry's n, null_count and empty_count are exact");
    M16_BLOCK_WRAP = ("m16-block-wrap-geographic", m::R16, "a wrapping block box needs a geographic CRS");
    M16_BLOCK_EMPTY = ("m16-block-empty-placeholder", m::R16, "a block without geometries holds the empty box");
    M16_BLOCK_ZM_EMPTY = ("m16-block-zm-empty-range", m::R16, "a block whose Z (M) values are all NaN or absent holds zmin +inf, zmax -inf (mmin, mmax)");
    M16_RTREE_LAYOUT = ("m16-rtree-layout", m::R16, "a PACKED_RTREE has the §10.4 compound, node_size and num_items");
    M16_RTREE_HEADER = ("m16-rtree-header", m::R16, "a valid PACKED_RTREE passes the §17 checks (node_size ≥ 2, num_items ≤ NROWS, T ≤ extent)");
    M16_RTREE_INTERNAL = ("m16-rtree-internal", m::R16, "every internal entry holds its first child's position and the union of its children");
    M16_RTREE_LEAVES = ("m16-rtree-leaves", m::R16, "the leaves are exactly the non-null, non-empty rows");
    M16_RTREE_LEAF_BOXES = ("m16-rtree-leaf-boxes", m::R16, "a leaf box contains its row's vertices");
    M16_RTREE_LEAF_EDGES = ("m16-rtree-leaf-boxes-edges", m::R16, "under non-planar EDGES, a leaf box contains its row's geodesic edges (ruling R8)");
    M17_NAMED_TYPES = ("m17-named-datatypes", m::R17, "no Marquet datatype is committed below the table group");
}

/// The registered sub-check with identifier `id`.
pub fn by_id(id: &str) -> Option<&'static Check> {
    ALL.iter().find(|c| c.id == id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique() {
        let mut ids: Vec<&str> = ALL.iter().map(|c| c.id).collect();
        ids.sort();
        let n = ids.len();
        ids.dedup();
        assert_eq!(ids.len(), n);
    }
}

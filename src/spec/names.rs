//! Reserved names (HEP001 §14, HEP002 §13).

// ---- HEP001 table group ----
pub const CLASS: &str = "CLASS";
pub const VERSION: &str = "VERSION";
pub const NROWS: &str = "NROWS";
pub const GENERATION: &str = "GENERATION";
pub const TITLE: &str = "TITLE";
pub const INDEX_COLUMNS: &str = "INDEX_COLUMNS";
pub const COLUMN_ORDER: &str = "column-order";
pub const INDEX_NAME: &str = "_index";
pub const DESCRIPTION: &str = "description";
pub const UNITS: &str = "units";
pub const UNITS_VOCABULARY: &str = "units_vocabulary";
pub const VALID_MIN: &str = "valid_min";
pub const VALID_MAX: &str = "valid_max";
pub const ENCODING_TYPE: &str = "encoding-type";
pub const ENCODING_VERSION: &str = "encoding-version";

// ---- tokens ----
pub const COLUMN_TABLE: &str = "COLUMN_TABLE";
pub const LIST_COLUMN: &str = "LIST_COLUMN";
pub const STRING_VALUES: &str = "STRING_VALUES";
pub const KIND_OFFSETS: &str = "OFFSETS";
/// The H5Col revision we implement and write.
pub const H5COL_VERSION: &str = "1.0";

// ---- list columns ----
pub const KIND: &str = "KIND";
pub const OFFSETS: &str = "OFFSETS";
pub const VALUES: &str = "VALUES";
pub const MASK: &str = "MASK";
pub const CHARS: &str = "CHARS";

// ---- categoricals ----
pub const CATEGORIES: &str = "CATEGORIES";
pub const ORDERED: &str = "ordered";

// ---- search indexes ----
pub const SEARCH_INDEXES: &str = "SEARCH_INDEXES";
pub const SEARCH_INDEX_LIST: &str = "SEARCH_INDEX_LIST";
pub const SOURCE_GENERATION: &str = "SOURCE_GENERATION";
pub const SOURCE_NROWS: &str = "SOURCE_NROWS";
pub const KIND_CHUNK_MINMAX: &str = "CHUNK_MINMAX";
pub const KIND_SORTED_ROWS: &str = "SORTED_ROWS";
pub const KIND_BITMAP: &str = "BITMAP";
pub const KIND_CHUNK_BLOOM: &str = "CHUNK_BLOOM";
pub const NAN_TAIL_LENGTH: &str = "nan_tail_length";
pub const FILL_TAIL_LENGTH: &str = "fill_tail_length";
pub const EXHAUSTIVE: &str = "exhaustive";
pub const BLOOM_K: &str = "k";
pub const BLOOM_M_BITS: &str = "m_bits";
pub const BLOOM_HASH_FAMILY: &str = "hash_family";
pub const BLOOM_SEED: &str = "seed";
pub const BLOOM_HASH_FAMILY_VALUE: &str = "murmur3_x64_128_double";

// ---- HEP001 boolean enum (§6) ----
pub const FALSE: &str = "FALSE";
pub const TRUE: &str = "TRUE";
pub const MISSING: &str = "MISSING";

// ---- HEP002 table group ----
pub const MARQUET_VERSION: &str = "MARQUET_VERSION";
pub const GEOMETRY_COLUMNS: &str = "GEOMETRY_COLUMNS";
/// The Marquet revision we implement and write.
pub const MARQUET_VERSION_VALUE: &str = "1.0";

// ---- HEP002 geometry column ----
pub const GEOMETRY_ENCODING: &str = "GEOMETRY_ENCODING";
pub const GEOMETRY_TYPES: &str = "GEOMETRY_TYPES";
pub const CRS: &str = "CRS";
pub const EPOCH: &str = "EPOCH";
pub const EDGES: &str = "EDGES";
pub const ORIENTATION: &str = "ORIENTATION";
pub const BBOX: &str = "BBOX";
pub const COVERING: &str = "COVERING";

pub const ENCODING_WKB: &str = "WKB";
pub const ENCODING_POINT: &str = "POINT";
/// Tokens reserved for future native encodings (HEP002 §6.2).
pub const RESERVED_ENCODINGS: [&str; 5] = ["LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON"];
/// The opaque tag of a fixed-length WKB column (HEP002 §7.3).
pub const OPAQUE_TAG_WKB: &str = "WKB";

// ---- HEP002 index kinds ----
pub const KIND_BLOCK_BBOX: &str = "BLOCK_BBOX";
pub const KIND_PACKED_RTREE: &str = "PACKED_RTREE";
pub const BLOCK_LENGTH: &str = "block_length";
pub const NODE_SIZE: &str = "node_size";
pub const NUM_ITEMS: &str = "num_items";

// ---- enumerations (ruling R2) ----
pub const EDGES_MEMBERS: [(&str, u8); 6] =
    [("PLANAR", 0), ("SPHERICAL", 1), ("VINCENTY", 2), ("THOMAS", 3), ("ANDOYER", 4), ("KARNEY", 5)];
pub const ORIENTATION_COUNTERCLOCKWISE: (&str, u8) = ("COUNTERCLOCKWISE", 1);

// ---- recommended fill values (HEP001 §8.5) ----
/// 9.9692099683868690e+36, exact in f32 and f64.
pub const FILL_F64: f64 = 9.969_209_968_386_869e36;
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

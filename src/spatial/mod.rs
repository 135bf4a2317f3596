//! Spatial index algorithms (HEP002 §10): pure, no HDF5, no I/O.
//!
//! * [`hilbert`](mod@hilbert) — the FlatGeobuf Hilbert curve on a 2¹⁶ × 2¹⁶ grid and the Hilbert order of
//!   boxes (HEP002 §10.4, §10.6; ruling R13).
//! * [`packed_rtree`] — the packed Hilbert R-tree of HEP002 §10.4 in Marquet's layout (root
//!   level first, internal `index` = position of the first child, leaf `index` = row), with a
//!   lazy, bounds-checked search (§17) and a verifier for validators (§12 requirement 16).
//! * [`block_bbox`] — row blocks and the block bounding-box index of HEP002 §10.2–10.3.
//! * [`geom_box`] — antimeridian-aware box intersection shared by both indexes.
//! * [`geodesic`] — boxes that contain great-circle and geodesic edges (ruling R8).
//!
//! Errors about a stored index are [`MarquetError::SpecViolation`]s with an empty `path`;
//! the HDF5 layer fills in the dataset path with [`with_path`].

pub mod block_bbox;
pub mod geodesic;
pub mod geom_box;
pub mod hilbert;
pub mod packed_rtree;

pub use block_bbox::{
    blocks_to_read, build_blocks, choose_block_length, extend_blocks, partial_block_start,
    BlockEntry, RowSummary, DEFAULT_BLOCK_LENGTH,
};
pub use geom_box::intersects;
pub use hilbert::{hilbert, hilbert_of_box, hilbert_order, HILBERT_MAX};
pub use packed_rtree::{
    level_sizes, level_starts, search, total_entries, verify, Entry, EntrySource, Layout,
    TreeFinding, DEFAULT_NODE_SIZE,
};

use crate::error::MarquetError;

/// Fill in the object path of an index error produced by this module (which knows no paths).
/// Errors that already carry a path, and other variants, are returned unchanged.
pub fn with_path(err: MarquetError, path: &str) -> MarquetError {
    match err {
        MarquetError::SpecViolation {
            path: p,
            rule,
            message,
        } if p.is_empty() => MarquetError::SpecViolation {
            path: path.to_string(),
            rule,
            message,
        },
        other => other,
    }
}

#[cfg(test)]
mod proptests;

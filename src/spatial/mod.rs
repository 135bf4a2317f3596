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
//!
//! # Example
//!
//! Build a packed R-tree and a block bounding-box index over 100 boxes and search both;
//! the answers agree with a scan of every box.
//!
//! ```
//! use marquet::spatial::{blocks_to_read, build_blocks, packed_rtree, Layout, RowSummary};
//! use marquet::BBox;
//!
//! // Row r holds a 0.5 × 0.5 box at (r % 10, r / 10).
//! let items: Vec<(BBox, u64)> = (0..100u64)
//!     .map(|r| {
//!         let (x, y) = ((r % 10) as f64, (r / 10) as f64);
//!         (BBox::xy(x, y, x + 0.5, y + 0.5), r)
//!     })
//!     .collect();
//! let query = BBox::xy(2.2, 3.2, 3.1, 4.1);
//!
//! // HEP002 §10.4: 100 leaves, 7 internal nodes, 1 root, stored root first.
//! let tree = packed_rtree::build(&items, 16)?;
//! let layout = Layout::try_new(100, 16)?;
//! assert_eq!(layout.sizes, vec![100, 7, 1]);
//! assert_eq!(tree.len() as u64, layout.total);
//! let rows = packed_rtree::search(&tree[..], 100, 16, 100, &query)?;
//! let scan: Vec<u64> = items.iter().filter(|(b, _)| b.intersects_xy(&query)).map(|(_, r)| *r).collect();
//! assert_eq!(rows, scan);
//! assert_eq!(rows, vec![32, 33, 42, 43]);
//!
//! // HEP002 §10.2–10.3: row blocks of 25 rows; only block 1 (rows 25..50) can match.
//! let blocks = build_blocks(items.iter().map(|(b, _)| RowSummary::Geometry(*b)), 25)?;
//! assert_eq!(blocks.len(), 4);
//! assert_eq!(blocks_to_read(&blocks, 25, 100, &query), vec![25..50]);
//! # Ok::<(), marquet::Error>(())
//! ```

pub mod block_bbox;
pub mod geodesic;
pub mod geom_box;
pub mod hilbert;
pub mod packed_rtree;

pub(crate) use block_bbox::blocks_classified;
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

//! The cloud layout (issue #34): a file whose tables a reader over HTTP or object storage
//! queries with as few round trips as FlatGeobuf's.
//!
//! A window query over a network pays one round trip for every read that needs the answer
//! of the one before it. In the default layout those chains are long: the object headers,
//! chunk B-tree nodes and R-tree levels are scattered through the file in the order they
//! were written (the R-tree, built at the commit, lies at its end), and every compressed
//! chunk is read whole. [`write_cloud_copy`] writes a copy of tables laid out for reading by
//! range (`marquet convert --cloud`, [`crate::h5::copy_contiguous`]):
//!
//! * all metadata (groups, object headers, attributes) together at the front of the file,
//!   right after the superblock, where the first request of an open reads it;
//! * every dataset stored contiguous and uncompressed: no chunk index to look up, and one
//!   R-tree node, one row's offsets or one geometry is read as exactly its bytes;
//! * but each block bounding-box index, which a window reads whole, stored as one chunk with
//!   shuffle + deflate (HDF5's built-in filters), and, for a column without a packed
//!   R-tree (where windows use it), rebuilt with the shortest block length whose index
//!   still lies within the bytes the open reads ([`FIRST_READ`]): shorter blocks, fewer
//!   unwanted rows read. For the benchmark's million points that is 512 rows instead of
//!   1,024, and a cold window reads 20 % fewer bytes;
//! * the data in the order a window reads it: each geometry column's packed R-trees first
//!   (their upper levels then follow the metadata), its block indexes, its geometry data
//!   (`OFFSETS` before `VALUES`), then the other columns.
//!
//! A window on such a file costs the open, one request per R-tree level below those the
//! open's bytes hold, and one for the geometries (the offsets are fetched speculatively with
//! the R-tree's leaves, [`crate::query`]); docs/PERFORMANCE.md "Over HTTP" has the counts.
//!
//! The price: nothing is compressed (a polygon file is about 20 % larger), and contiguous
//! datasets cannot grow, so such a table takes no appends — append to its source and write
//! the copy again, as one does with a cloud-optimised GeoTIFF. The copy is a conformant
//! Marquet (or H5Col) file that every HDF5 reader opens without plugins.

use crate::error::{MarquetError, Result};
use crate::h5::{self, OneChunk, Placement, RelayoutReport, Replacement};
use crate::h5col::File;
use crate::spec::names;

use super::{is_marquet_table, MarquetTable, SpatialIndexKind};

/// The bytes a reader over HTTP or object storage reads from the start of a file when it
/// opens it (the default of `remote::RemoteOptions::first_read`): the cloud layout keeps
/// the metadata and each block index within them.
pub(crate) const FIRST_READ: u64 = 64 << 10;

/// Room kept in [`FIRST_READ`] for the metadata (2.7 KiB for the benchmark's points table,
/// 4.2 KiB for its polygons) and a block index's one-node chunk B-tree (2 KiB).
const METADATA_ROOM: u64 = 8 << 10;

/// Copy the tables at `tables` (absolute paths) of `src` into the new, empty file `dst`
/// in the cloud layout (see the module documentation). `dst` must have been created by
/// [`File::create`] (a file that allocates only at its end, local ruling L7) and hold
/// nothing yet, so that the metadata written first lies at its front.
pub fn write_cloud_copy(src: &File, dst: &File, tables: &[String]) -> Result<RelayoutReport> {
    let (mut first, mut one_chunk) = (Vec::new(), Vec::new());
    for t in tables {
        let table = src.table(t)?;
        if !is_marquet_table(&table)? {
            continue;
        }
        drop(table);
        let t = MarquetTable::open(src, t)?;
        first.extend(read_order(&t)?);
        one_chunk.extend(block_indexes(&t)?);
    }
    let r = h5::copy_contiguous(src.id(), dst.id(), tables, &first, &one_chunk)?;
    h5::flush(dst.id())?;
    Ok(r)
}

/// The datasets a window query reads, in the order it reads them: for each geometry column
/// (the primary first) its valid packed R-trees, its block indexes and its geometry data.
fn read_order(t: &MarquetTable) -> Result<Vec<String>> {
    let mut cols = t.geometry_column_names()?;
    if let Ok(p) = t.primary_geometry_column() {
        if let Some(i) = cols.iter().position(|c| *c == p) {
            let p = cols.remove(i);
            cols.insert(0, p);
        }
    }
    let mut out = Vec::new();
    for col in &cols {
        let indexes = t.spatial_indexes(col)?;
        for kind in [SpatialIndexKind::PackedRTree, SpatialIndexKind::BlockBBox] {
            out.extend(indexes.iter().filter(|i| i.kind == kind).map(|i| i.info.path.clone()));
        }
        let path = t.geometry_column(col)?.path;
        out.push(path.clone());
        out.extend(["OFFSETS", "MASK", "VALUES"].iter().map(|m| format!("{path}/{m}")));
    }
    Ok(out)
}

/// The block indexes of a table's geometry columns, each stored as one compressed chunk;
/// those of a column without a valid packed R-tree rebuilt with the shortest block length
/// that keeps them within [`FIRST_READ`] (see the module documentation), never longer than
/// their own.
fn block_indexes(t: &MarquetTable) -> Result<Vec<OneChunk>> {
    let mut out = Vec::new();
    for col in t.geometry_column_names()? {
        let indexes = t.spatial_indexes(&col)?;
        let rtree = indexes.iter().any(|i| i.kind == SpatialIndexKind::PackedRTree && i.valid);
        for i in indexes.iter().filter(|i| i.kind == SpatialIndexKind::BlockBBox) {
            let own = if i.valid && !rtree { block_length(t, &i.info.path)? } else { None };
            let replace = match own {
                Some(own) => {
                    let budget = (FIRST_READ - METADATA_ROOM) as usize;
                    let path = i.info.path.clone();
                    super::spatial_index::blocks_within(t, &col, own, budget, |raw, elem| Ok(h5::one_chunk_bytes(raw, elem, &path)?.len()))?.map(|r| Replacement {
                        dtype: r.dtype,
                        len: r.len,
                        bytes: r.bytes,
                        attrs: vec![(names::BLOCK_LENGTH.to_string(), r.block_length)],
                    })
                }
                None => None,
            };
            out.push(OneChunk { path: i.info.path.clone(), replace });
        }
    }
    Ok(out)
}

/// The `block_length` of the block index at `path` (absolute).
fn block_length(t: &MarquetTable, path: &str) -> Result<Option<u64>> {
    let ds = h5::dataset_open(t.table.id(), path)?;
    Ok(h5::attr_read(ds.id(), names::BLOCK_LENGTH)?.and_then(|a| a.as_u64()).filter(|&b| b > 0))
}

/// Whether a table is laid out for reading by range ([`cloud_layout`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloudLayout {
    /// Every dataset of the table is stored contiguous without filters (a block index may
    /// be one compressed chunk), and every object header lies before the first byte of
    /// data: what [`write_cloud_copy`] writes.
    pub friendly: bool,
    /// Why not, one line a reason (empty when `friendly`).
    pub reasons: Vec<String>,
    /// The end of the table's last object header (an upper bound of the metadata a reader
    /// fetches before any data), or 0 when unknown.
    pub metadata_end: u64,
}

impl std::fmt::Display for CloudLayout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.friendly {
            write!(f, "yes (metadata in the first {} KiB, data contiguous and uncompressed but for block indexes)", self.metadata_end.div_ceil(1024))
        } else {
            write!(f, "no ({}; `marquet convert --cloud` writes a copy that is)", self.reasons.join("; "))
        }
    }
}

/// Tell whether the table at `path` of `file` is laid out for reading by range (see
/// [`CloudLayout`]): what `marquet info` prints.
pub fn cloud_layout(file: &File, path: &str) -> Result<CloudLayout> {
    let mut datasets = Vec::new();
    collect_datasets(file, path, &mut datasets)?;
    let mut reasons = Vec::new();
    let (mut last_header, mut first_data) = (0u64, u64::MAX);
    let mut chunked = 0usize;
    for p in &datasets {
        let ds = h5::dataset_open(file.id(), p)?;
        let Placement { header, data, plain, one_chunk } = match h5::placement(ds.id(), p) {
            Ok(pl) => pl,
            Err(e) => {
                reasons.push(format!("{p} cannot be placed: {e}"));
                continue;
            }
        };
        last_header = last_header.max(header);
        if let Some(d) = data {
            first_data = first_data.min(d);
        }
        // A block index is read whole: one compressed chunk is one range.
        let block_index = || -> Result<bool> { Ok(h5::attr_read(ds.id(), names::KIND)?.is_some_and(|a| a.as_str() == Some(names::KIND_BLOCK_BBOX))) };
        let whole = one_chunk && block_index()?;
        if !plain && !whole {
            chunked += 1;
        }
    }
    if chunked > 0 {
        reasons.push(format!("{chunked} of {} datasets chunked or compressed (other than block indexes in one chunk)", datasets.len()));
    }
    if first_data != u64::MAX && last_header > first_data {
        reasons.push("object headers lie among the data".to_string());
    }
    Ok(CloudLayout { friendly: reasons.is_empty(), reasons, metadata_end: if first_data == u64::MAX { last_header } else { first_data } })
}

/// Every dataset below the group at `path`, depth first.
fn collect_datasets(file: &File, path: &str, out: &mut Vec<String>) -> Result<()> {
    let o = h5::object_open(file.id(), path)?;
    if !h5::is_group(o.id()) {
        out.push(path.to_string());
        return Ok(());
    }
    for m in h5::member_names(o.id(), path)? {
        collect_datasets(file, &format!("{}/{m}", path.trim_end_matches('/')), out)?;
    }
    Ok(())
}

/// The refusal of a write into a table whose geometry data cannot grow (contiguous storage,
/// as in a table of the cloud layout), before anything is written: HDF5 would refuse the
/// first extension with a message about dataspaces. `info` is the column's, as the writer
/// read it.
pub(crate) fn refuse_fixed_storage(t: &MarquetTable, info: &super::GeometryColumnInfo) -> Result<()> {
    let path = &info.path;
    let datasets = match info.form {
        super::StorageForm::VarWkb => vec![format!("{path}/OFFSETS"), format!("{path}/VALUES")],
        _ => vec![path.clone()],
    };
    for p in datasets {
        let ds = h5::dataset_open(t.table.id(), &p)?;
        if h5::dataset_info(ds.id(), &p)?.chunk.is_none() {
            return Err(MarquetError::Unsupported(format!(
                "{p} is stored contiguous and cannot grow (a table of the cloud layout, `marquet convert --cloud`): write to its source and make the copy again"
            )));
        }
    }
    Ok(())
}

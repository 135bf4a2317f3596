//! MPI-parallel Marquet tables on a parallel HDF5 (feature `mpio`; docs/PARALLEL.md,
//! issue #23).
//!
//! * [`create`] / [`open`] open one file on every rank of a communicator with HDF5's
//!   MPI-IO driver ([`File::create_parallel`]).
//! * Every serial call — creating tables and columns, building indexes, reading — works on
//!   such a file when **every rank makes it with the same arguments** (HDF5 requires that
//!   of every metadata change; the data of such a call is written once, by rank 0).
//! * [`append_collective`] is the collective append: every rank passes its own batch. Row
//!   offsets come from `MPI_Exscan`; each rank checks and encodes its own rows (summaries
//!   on its own cores), then writes its slab of every column in one collective write per
//!   member; BBOX, GEOMETRY_TYPES and the covering column follow from `MPI_Allreduce`d
//!   summaries; the spatial indexes are maintained from an `MPI_Allgatherv` of the new
//!   rows' boxes; NROWS is committed once, after every rank's data (HEP001 §12.3 holds
//!   for the collective operation as a whole).
//! * [`row_share`] / [`query_share`] divide the row blocks among the ranks for parallel
//!   reads and window queries; [`gather_rows`] collects the parts.
//!
//! Rows land in rank order (rank 0's batch first); there is no Hilbert sort across ranks
//! (each rank may sort its own batch first, see docs/PARALLEL.md).

use std::ops::Range;
use std::time::Instant;

use super::{checks, GeoBatch, MarquetTable, RowInfo};
use crate::error::{MarquetError, Result};
use crate::h5::mpio;
use crate::h5col::mpio::{agree, Slab};
use crate::h5col::File;
use crate::spec::{BBox, GeometryType};
use crate::wkb::WkbInfo;

pub use crate::h5::mpio::{barrier, call_counts, comm_from_fortran, comm_is_usable, comm_world, finalize, init, rank, size, MPI_Comm};
pub use crate::h5col::mpio::Slab as AppendSlab;

/// Create (truncate) `path` on every rank of `comm` (collective; same path everywhere).
pub fn create(path: impl AsRef<std::path::Path>, comm: MPI_Comm) -> Result<File> {
    File::create_parallel(path, comm)
}

/// Open `path` on every rank of `comm` (collective), read-only or read-write.
pub fn open(path: impl AsRef<std::path::Path>, comm: MPI_Comm, rw: bool) -> Result<File> {
    File::open_parallel(path, comm, rw)
}

/// Collective append of this rank's `batch` to `table` (every rank of `comm` calls it, in
/// the same order as every other collective call on the file). Returns this rank's
/// [`Slab`]: its first row is `n_old + offset`. When any rank's batch is refused (a value
/// that does not fit its column, HEP002 §11.2), every rank gets an error and the file is
/// unchanged. The table's R-tree policy ([`MarquetTable::rtree_on_append`]) and
/// orientation policy apply as in [`MarquetTable::append`].
pub fn append_collective(table: &MarquetTable, batch: &GeoBatch, comm: MPI_Comm) -> Result<Slab> {
    let k_local = batch
        .geometries
        .values()
        .map(|v| v.len() as u64)
        .chain(batch.columns.nrows().ok())
        .max()
        .unwrap_or(0);
    let t0 = Instant::now();
    let offset = mpio::exscan_sum_u64(comm, k_local)?;
    let prepared = agree(comm, prepare(table, batch, offset));
    let (cols, summaries) = prepared?;
    let t1 = Instant::now();
    let rtree = table.rtree_on_append();
    let indexed = table.table().generation()?.is_some();
    let (mut t2, mut t3) = (t1, t1);
    let r = table.table().append_collective(&cols, comm, &mut |_, slab| {
        t2 = Instant::now();
        for (info, rows) in &summaries {
            // BBOX and GEOMETRY_TYPES from the reduced summaries of all ranks.
            let reduced = reduce_summaries(comm, rows)?;
            table.widen_summaries(info, &reduced)?;
            // Spatial indexes (only tables with search indexes carry GENERATION): from
            // every rank's row boxes, the same on every rank, written once.
            if indexed {
                let all = gather_row_infos(comm, rows)?;
                super::maintain::after_append(table, info, slab.n_old, &all, rtree)?;
            }
        }
        t3 = Instant::now();
        Ok(())
    });
    let t4 = Instant::now();
    *LAST_PHASES.lock().unwrap_or_else(|e| e.into_inner()) = Phases {
        prepare: (t1 - t0).as_secs_f64(),
        write: (t2.max(t1) - t1).as_secs_f64(),
        summaries_and_indexes: (t3.max(t2) - t2).as_secs_f64(),
        commit: (t4 - t3.max(t1)).as_secs_f64(),
    };
    r
}

/// Where this rank's last [`append_collective`] spent its time (seconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Phases {
    /// Checking and encoding this rank's batch, and agreeing that every rank's is valid.
    pub prepare: f64,
    /// Extending the columns, writing the slabs (collective), H5Col index upkeep.
    pub write: f64,
    /// Reducing BBOX / GEOMETRY_TYPES, gathering row boxes, block index and R-tree upkeep.
    pub summaries_and_indexes: f64,
    /// GENERATION and NROWS with their flushes.
    pub commit: f64,
}

static LAST_PHASES: std::sync::Mutex<Phases> =
    std::sync::Mutex::new(Phases { prepare: 0.0, write: 0.0, summaries_and_indexes: 0.0, commit: 0.0 });

/// The [`Phases`] of this rank's last [`append_collective`] (for benchmarks).
pub fn last_phases() -> Phases {
    *LAST_PHASES.lock().unwrap_or_else(|e| e.into_inner())
}

type Summaries = Vec<(super::GeometryColumnInfo, Vec<RowInfo>)>;

/// This rank's part of [`TableWriter::write`](super::TableWriter::write)'s preparation: every geometry
/// value checked and encoded, covering values derived (nothing written).
fn prepare(t: &MarquetTable, batch: &GeoBatch, offset: u64) -> Result<(crate::h5col::Batch, Summaries)> {
    if !t.is_interpretable() {
        return Err(MarquetError::Unsupported(format!("{}: the table cannot be appended to (HEP002 §11.1)", t.path())));
    }
    let mut cols = batch.columns.clone();
    let mut summaries = Vec::new();
    let geo_names = t.geometry_column_names()?;
    for name in batch.geometries.keys() {
        if !geo_names.contains(name) {
            return Err(MarquetError::InvalidArgument(format!("{} is not a geometry column", t.table().member_path(name))));
        }
    }
    let n_old = t.nrows()?;
    for name in &geo_names {
        let info = t.geometry_column(name)?;
        let Some(v) = batch.geometries.get(name) else {
            if !cols.missing_rest {
                return Err(MarquetError::InvalidArgument(format!("batch has no values for geometry column '{name}'")));
            }
            continue;
        };
        let v = checks::check_values(&info, v, n_old + offset, t.orientation_on_write())?;
        let (cv, rows) = t.prepare(&info, &v)?;
        cols.columns.insert(name.clone(), cv);
        if let Some(cov) = &info.covering {
            cols.columns.insert(cov.clone(), t.covering_values(cov, &rows)?);
        }
        summaries.push((info, rows));
    }
    Ok((cols, summaries))
}

/// Bit of a geometry type in a `[u64; 4]` mask (one word per dimension code).
fn type_bit(t: GeometryType) -> (usize, u64) {
    let c = t.iso_code();
    (((c / 1000) as usize).min(3), 1u64 << (c % 1000).min(63))
}

/// All ranks' row summaries reduced (`MPI_Allreduce`: types as bit masks, box minima and
/// maxima, Z/M presence), returned as a few rows whose summary equals that of all ranks'
/// rows: one empty row per type, and one non-empty row (with the reduced box) per type of
/// a non-empty geometry. [`MarquetTable::widen_summaries`] derives exactly the same BBOX and
/// GEOMETRY_TYPES from them as from the full rows.
fn reduce_summaries(comm: MPI_Comm, rows: &[RowInfo]) -> Result<Vec<RowInfo>> {
    let mut masks = [0u64; 8]; // 0..4: every type, 4..8: types of non-empty geometries
    let mut b = BBox::EMPTY;
    for r in rows {
        if let RowInfo::Geometry(g) = r {
            let (w, bit) = type_bit(g.geometry_type);
            masks[w] |= bit;
            if !g.is_empty {
                masks[4 + w] |= bit;
                b = b.union(&g.bbox);
            }
        }
    }
    mpio::allreduce_u64(comm, &mut masks, mpio::Reduce::BitOr)?;
    let mut mins = [b.xmin, b.ymin, b.zmin, b.mmin];
    let mut maxs = [b.xmax, b.ymax, b.zmax, b.mmax];
    mpio::allreduce_f64(comm, &mut mins, false)?;
    mpio::allreduce_f64(comm, &mut maxs, true)?;
    let bbox = BBox { xmin: mins[0], ymin: mins[1], zmin: mins[2], mmin: mins[3], xmax: maxs[0], ymax: maxs[1], zmax: maxs[2], mmax: maxs[3] };
    let mut out = Vec::new();
    for (w, &mask) in masks.iter().enumerate() {
        for bit in 0..64u32 {
            if mask & (1u64 << bit) == 0 {
                continue;
            }
            let code = (w as u32 % 4) * 1000 + bit;
            let gt = GeometryType::from_iso_code(code)
                .ok_or_else(|| MarquetError::InvalidArgument(format!("geometry type code {code} in a reduced summary")))?;
            let empty = w < 4;
            out.push(RowInfo::Geometry(WkbInfo {
                geometry_type: gt,
                bbox: if empty { BBox::EMPTY } else { bbox },
                is_empty: empty,
                num_coords: 1,
            }));
        }
    }
    Ok(out)
}

const ROW_BYTES: usize = 80;

fn encode_row(r: &RowInfo, out: &mut Vec<u8>) {
    match r {
        RowInfo::Null => out.extend_from_slice(&[0u8; ROW_BYTES]),
        RowInfo::Geometry(g) => {
            out.push(1);
            out.push(g.is_empty as u8);
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(&g.geometry_type.iso_code().to_le_bytes());
            out.extend_from_slice(&g.num_coords.to_le_bytes());
            let b = &g.bbox;
            for v in [b.xmin, b.ymin, b.zmin, b.mmin, b.xmax, b.ymax, b.zmax, b.mmax] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
    }
}

fn decode_row(c: &[u8]) -> Result<RowInfo> {
    if c[0] == 0 {
        return Ok(RowInfo::Null);
    }
    let f = |i: usize| f64::from_le_bytes(c[16 + 8 * i..24 + 8 * i].try_into().expect("8 bytes"));
    let code = u32::from_le_bytes(c[4..8].try_into().expect("4 bytes"));
    let geometry_type = GeometryType::from_iso_code(code)
        .ok_or_else(|| MarquetError::InvalidArgument(format!("geometry type code {code} in gathered rows")))?;
    Ok(RowInfo::Geometry(WkbInfo {
        geometry_type,
        is_empty: c[1] != 0,
        num_coords: u64::from_le_bytes(c[8..16].try_into().expect("8 bytes")),
        bbox: BBox { xmin: f(0), ymin: f(1), zmin: f(2), mmin: f(3), xmax: f(4), ymax: f(5), zmax: f(6), mmax: f(7) },
    }))
}

/// Every rank's row summaries in rank order, on every rank (`MPI_Allgatherv`, 80 bytes a
/// row).
fn gather_row_infos(comm: MPI_Comm, rows: &[RowInfo]) -> Result<Vec<RowInfo>> {
    let mut mine = Vec::with_capacity(rows.len() * ROW_BYTES);
    for r in rows {
        encode_row(r, &mut mine);
    }
    let (all, _) = mpio::allgatherv(comm, &mine)?;
    all.chunks_exact(ROW_BYTES).map(decode_row).collect()
}

/// This rank's share of `n` rows for parallel reads: whole blocks of `block` rows (use the
/// column's chunk length so that no two ranks decompress the same chunk), divided as evenly
/// as blocks allow, in rank order.
pub fn row_share(n: u64, block: u64, rank: i32, size: i32) -> Range<u64> {
    let block = block.max(1);
    let nblocks = n.div_ceil(block);
    let (r, s) = (rank.max(0) as u64, size.max(1) as u64);
    let per = nblocks / s;
    let extra = nblocks % s;
    let b0 = r * per + r.min(extra);
    let b1 = b0 + per + u64::from(r < extra);
    (b0 * block).min(n)..(b1 * block).min(n)
}

/// Rows of this rank's [`row_share`] of geometry column `col` whose box intersects `window`
/// (the `bbox` predicate of `marquet query`, inclusive edges; null and empty geometries never
/// match). Collective only in the sense that every rank answers for its own share: the
/// union over the ranks is the whole answer, in row order by rank ([`gather_rows`]).
pub fn query_share(table: &MarquetTable, col: &str, window: &BBox, comm: MPI_Comm) -> Result<Vec<u64>> {
    let n = table.nrows()?;
    let block = table.table().column(col).ok().and_then(|c| c.chunk_rows()).unwrap_or(crate::h5col::DEFAULT_CHUNK_ROWS);
    let share = row_share(n, block, rank(comm)?, size(comm)?);
    let mut out = Vec::new();
    let mut s = share.start;
    while s < share.end {
        let e = (s + block.max(65_536)).min(share.end);
        for (i, r) in table.row_infos(col, s, e)?.iter().enumerate() {
            if let RowInfo::Geometry(g) = r {
                let b = &g.bbox;
                if !g.is_empty
                    && b.xmin <= window.xmax
                    && b.xmax >= window.xmin
                    && b.ymin <= window.ymax
                    && b.ymax >= window.ymin
                {
                    out.push(s + i as u64);
                }
            }
        }
        s = e;
    }
    Ok(out)
}

/// Every rank's row numbers, concatenated in rank order, on every rank.
pub fn gather_rows(comm: MPI_Comm, rows: &[u64]) -> Result<Vec<u64>> {
    let mine: Vec<u8> = rows.iter().flat_map(|r| r.to_le_bytes()).collect();
    let (all, _) = mpio::allgatherv(comm, &mine)?;
    Ok(all.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes"))).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_cover_every_row_once_in_whole_blocks() {
        for n in [0u64, 1, 99, 100, 101, 1000, 65_537] {
            for size in 1..6 {
                let mut next = 0;
                for r in 0..size {
                    let s = row_share(n, 10, r, size);
                    assert_eq!(s.start, next, "n={n} size={size} rank={r}");
                    assert!(s.start % 10 == 0 || s.start == n);
                    next = s.end;
                }
                assert_eq!(next, n);
            }
        }
    }

    #[test]
    fn row_infos_survive_the_wire() {
        let g = RowInfo::Geometry(WkbInfo {
            geometry_type: GeometryType::from_iso_code(3003).unwrap(),
            bbox: BBox { xmin: -1.5, ymin: 2.0, zmin: 3.0, mmin: 4.0, xmax: 5.0, ymax: 6.0, zmax: 7.0, mmax: 8.0 },
            is_empty: false,
            num_coords: 42,
        });
        let mut buf = Vec::new();
        for r in [RowInfo::Null, g] {
            encode_row(&r, &mut buf);
        }
        assert_eq!(buf.len(), 2 * ROW_BYTES);
        let back: Vec<RowInfo> = buf.chunks_exact(ROW_BYTES).map(|c| decode_row(c).unwrap()).collect();
        assert_eq!(back, vec![RowInfo::Null, g]);
    }
}

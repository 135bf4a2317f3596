//! H5Col on a parallel file (feature `mpio`, docs/PARALLEL.md): opening a file with the
//! MPI-IO driver, and the collective append where every rank passes its own batch.
//!
//! Everything else of [`super`] works on a parallel file when every rank makes the same
//! calls with the same arguments (HDF5 requires that of every metadata change; data
//! written that way is written once, by rank 0: see `crate::h5::mpio`).

use super::write::Prepared;
use super::{search_index, Batch, File, Table};
use crate::error::{MarquetError, Result};
use crate::h5::{self, mpio, mpio::MPI_Comm};
use crate::spec::names;

impl File {
    /// Create (truncate) `path` for parallel I/O on `comm`: collective, every rank passes
    /// the same path.
    pub fn create_parallel(path: impl AsRef<std::path::Path>, comm: MPI_Comm) -> Result<File> {
        let p = path.as_ref().display().to_string();
        let inner = mpio::create(&p, comm)?;
        Ok(File { inner, path: p, by_path_read_only: false })
    }

    /// Open `path` for parallel I/O on `comm` (collective), read-only or read-write.
    pub fn open_parallel(path: impl AsRef<std::path::Path>, comm: MPI_Comm, rw: bool) -> Result<File> {
        let p = path.as_ref().display().to_string();
        if !path.as_ref().exists() {
            return Err(MarquetError::Io {
                path: p,
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        let inner = mpio::open(&p, comm, rw)?;
        Ok(File { inner, path: p, by_path_read_only: false })
    }
}

/// Make every rank return an error when one rank's `r` is one (one `MPI_Allreduce`): a
/// rank that refused its batch must not leave the others waiting in a collective call.
pub fn agree<T>(comm: MPI_Comm, r: Result<T>) -> Result<T> {
    let mut bad = [r.is_err() as u64];
    mpio::allreduce_u64(comm, &mut bad, mpio::Reduce::BitOr)?;
    match r {
        Err(e) => Err(e),
        Ok(_) if bad[0] != 0 => Err(MarquetError::InvalidArgument(
            "another rank refused its part of the collective operation (its error names the row)".into(),
        )),
        Ok(v) => Ok(v),
    }
}

/// The rows of a collective append: this rank's first row, its row count, the total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slab {
    /// NROWS before the append.
    pub n_old: u64,
    /// Rows of the ranks before this one (`MPI_Exscan`).
    pub offset: u64,
    /// This rank's rows.
    pub k: u64,
    /// Rows of all ranks (`MPI_Allreduce`).
    pub k_all: u64,
}

impl Table {
    /// Collective append (HEP001 §12.3 for the whole operation): every rank of `comm` calls
    /// it with its own batch; the rows land in rank order after the current rows. Every
    /// rank's values are checked first and the file is left untouched when one rank's are
    /// refused. Columns are extended once (all ranks alike), each rank writes its slab of
    /// every column in one collective write per member, the H5Col search indexes are
    /// maintained (tokens first), `before_commit` runs on every rank with the [`Slab`],
    /// then GENERATION and, last, NROWS are written once for all ranks.
    pub fn append_collective(
        &self,
        batch: &Batch,
        comm: MPI_Comm,
        before_commit: &mut dyn FnMut(&Table, Slab) -> Result<()>,
    ) -> Result<Slab> {
        let prepared = agree(comm, self.prepare_rows(batch))?;
        // As every mutation (docs/FAULTS.md F1, F3): refuse a table whose NROWS its columns
        // do not hold, and retire the tokens of stale indexes. A collective append killed
        // after step 4 leaves its indexes stamped with the GENERATION and NROWS that its
        // commit would have written; without this, the retry commits exactly those and the
        // half-maintained indexes become valid again (issue #38: R-tree rows without a
        // leaf after a retry). Every rank sees the same file, so every rank makes the same
        // (collective) attribute writes.
        self.begin_mutation()?;
        let k = batch.nrows()?;
        let offset = mpio::exscan_sum_u64(comm, k)?;
        let mut tot = [k];
        mpio::allreduce_u64(comm, &mut tot, mpio::Reduce::Sum)?;
        let n_old = self.nrows()?;
        let slab = Slab { n_old, offset, k, k_all: tot[0] };
        let n_new = n_old
            .checked_add(slab.k_all)
            .ok_or_else(|| MarquetError::InvalidArgument("row count overflow".into()))?;
        if slab.k_all == 0 {
            return Ok(slab);
        }
        // Step 2, as in `append_unguarded`: all extents first, flushed before any data.
        for p in &prepared {
            if let Prepared::Dataset(col, _) = p {
                col.ensure_len(n_new)?;
            }
        }
        h5::flush(self.id())?;
        // Step 3: every rank its slab of every column.
        for p in &prepared {
            match p {
                Prepared::Dataset(col, bytes) => {
                    mpio::write_slab(col.ds.id(), n_old + offset, &col.info.dtype.to_le(), bytes, &col.path)?
                }
                Prepared::List(lc, v) => lc.append_rows_collective(n_old, v, comm)?,
            }
        }
        // Other ranks' data must be on disk before anyone reads it back (index upkeep).
        h5::flush(self.id())?;
        let g_old = self.generation()?;
        // Step 4: H5Col indexes (tokens before content), then the caller's (Marquet's).
        search_index::maintain_after_append(self, n_old, n_new, g_old.map(|g| g.wrapping_add(1)))?;
        before_commit(self, slab)?;
        h5::flush(self.id())?;
        // Steps 5 and 6, once for all ranks (each a collective attribute write).
        if let Some(g) = g_old {
            h5::attr_write_u64(self.id(), names::GENERATION, g.wrapping_add(1))?;
            h5::flush(self.id())?;
        }
        h5::attr_write_u64(self.id(), names::NROWS, n_new)?;
        h5::flush(self.id())?;
        Ok(slab)
    }
}

//! The mutation procedures of HEP001 §12: append (§12.3), truncate (§12.5) and in-place
//! update (§12.6), each committing `NROWS` last, and preallocation (§12.4).


use crate::error::{MarquetError, Result};
use crate::h5::{self};
use crate::spec::names;

use super::*;

impl Table {
    /// Append a batch following HEP001 §12.3: extend, write values (list columns
    /// leaf-first), update maintained indexes tokens-first, bump GENERATION, then commit
    /// NROWS last and flush.
    pub fn append(&self, batch: &Batch) -> Result<u64> {
        self.append_with(batch, &mut |_, _, _| Ok(()))
    }

    /// [`Table::append`] with a hook called after the rows are written and before the
    /// commit, with `(table, n_old, k)`. Refused on a Marquet table (HEP002 §11.1: only a
    /// Marquet producer may append to one; use `MarquetTable::append`).
    pub fn append_with(
        &self,
        batch: &Batch,
        before_commit: &mut dyn FnMut(&Table, u64, u64) -> Result<()>,
    ) -> Result<u64> {
        guard::refuse_append(self)?;
        self.append_unguarded(batch, before_commit)
    }

    /// [`Table::append_with`] without the Marquet guard: the Marquet layer's append, whose
    /// hook widens the summaries and maintains the indexes (HEP002 §11.1).
    pub(crate) fn append_unguarded(
        &self,
        batch: &Batch,
        before_commit: &mut dyn FnMut(&Table, u64, u64) -> Result<()>,
    ) -> Result<u64> {
        self.begin_mutation()?;
        let n_old = self.nrows()?;
        let k = self.stage_unguarded(batch, n_old)?;
        if k == 0 {
            return Ok(n_old);
        }
        let n_new = n_old.checked_add(k).ok_or_else(|| MarquetError::InvalidArgument("row count overflow".into()))?;
        self.commit_append(n_old, n_new, before_commit)
    }

    /// What every mutation does first (docs/FAULTS.md): refuse a table whose `NROWS` its
    /// columns do not hold (F3), and retire the tokens of stale indexes so that no later
    /// commit can make them match again (F1, HEP001 §12.2).
    pub(crate) fn begin_mutation(&self) -> Result<()> {
        guard::refuse_nonconformant(self)?;
        // No block a flushed header points at ends at the end of allocation, where HDF5
        // would reuse it once freed (issue #38, `h5::pad_end`).
        crate::h5::pad_end(self.id());
        search_index::retire_stale_tokens(self)?;
        Ok(())
    }

    /// HEP001 §12.3 steps 2–3 for one batch of a larger operation: check the batch, extend
    /// every column to `at + k` and write its rows at `[at, at + k)` — beyond `NROWS`, in
    /// the reserved tail that readers ignore (§12.1) — without touching `NROWS`,
    /// `GENERATION` or any index. `at` must be at least `NROWS`; batches are staged one
    /// after another and published together by [`Table::commit_append`], so an operation of
    /// many batches is all-or-nothing (docs/FAULTS.md F2). Returns the rows staged.
    pub(crate) fn stage_unguarded(&self, batch: &Batch, at: u64) -> Result<u64> {
        let k = batch.nrows()?;
        // Validate everything before touching the file.
        let prepared = self.prepare_rows(batch)?;
        let n = self.nrows()?;
        if at < n {
            return Err(MarquetError::InvalidArgument(format!("{}: cannot stage rows at {at}, below NROWS {n}", self.path())));
        }
        let end = at.checked_add(k).ok_or_else(|| MarquetError::InvalidArgument("row count overflow".into()))?;
        if k == 0 {
            return Ok(0);
        }
        // HDF5's end of allocation and the file's length brought together first, so that
        // the flush of the extents below writes their headers without a truncation in
        // between (`h5::flush_unpadded`; local rulings L8, L9).
        h5::flush_unpadded(self.id())?;
        // Step 2: extend every column dataset back to back (no data writes in between),
        // so that extents stay equal (HEP001 §13 req 2) in any state that reaches disk.
        for p in &prepared {
            if let Prepared::Dataset(col, _) = p {
                col.ensure_len(end)?;
            }
        }
        // Flush the new extents (all equal, beyond NROWS) before any data: HDF5 may write
        // any dirty object header at any time, so this is what keeps extents equal on disk.
        h5::flush(self.id())?;
        // Step 3: write.
        for p in &prepared {
            match p {
                Prepared::Dataset(col, bytes) => col.write_encoded(at, bytes)?,
                Prepared::List(lc, v) => lc.append_rows(at, v)?,
            }
        }
        Ok(k)
    }

    /// Check `batch` against the table's columns and encode it, column by column (nothing
    /// is written): the first step of every append, serial or collective.
    pub(crate) fn prepare_rows<'b>(&self, batch: &'b Batch) -> Result<Vec<Prepared<'b>>> {
        let k = batch.nrows()?;
        let cols = self.discover_columns()?;
        for name in batch.columns.keys() {
            if !cols.contains(name) {
                return Err(MarquetError::InvalidArgument(format!("{} is not a column", self.member_path(name))));
            }
        }
        if !batch.missing_rest {
            if let Some(c) = cols.iter().find(|c| !batch.columns.contains_key(*c)) {
                return Err(MarquetError::InvalidArgument(format!(
                    "batch has no values for column '{c}' (set missing_rest to write missing values)"
                )));
            }
        }
        let mut out = Vec::new();
        for name in &cols {
            match self.kind_of(name)? {
                Some(ColumnKind::Dataset) => {
                    let col = self.column(name)?;
                    let bytes = col.encode_values(batch.columns.get(name), k)?;
                    out.push(Prepared::Dataset(col, bytes));
                }
                Some(ColumnKind::List) => {
                    let lc = self.list_column(name)?;
                    let v = match batch.columns.get(name) {
                        Some(ColumnValues::List(l)) => std::borrow::Cow::Borrowed(l),
                        // Strings into text stored as a list of bytes (local ruling L17).
                        Some(ColumnValues::Array { values, missing }) if values.dtype.is_string() && lc.leaf_dtype()?.size() == 1 => {
                            std::borrow::Cow::Owned(ListArray::from_bytes_rows((0..values.len()).map(|i| {
                                if missing.as_ref().is_some_and(|m| m[i]) { None } else { values.get_str_bytes(i) }
                            })))
                        }
                        Some(_) => return Err(MarquetError::InvalidArgument(format!("column '{name}' is a list column"))),
                        None => std::borrow::Cow::Owned(ListArray::nulls(k as usize, lc.leaf_dtype()?)),
                    };
                    lc.check_values(&v)?;
                    out.push(Prepared::List(lc, v));
                }
                None => {}
            }
        }
        Ok(out)
    }

    /// HEP001 §12.3 steps 4–6 for rows `[n_old, n_new)` already staged by
    /// [`Table::stage_unguarded`]: maintain the indexes tokens-first, run the hook (the
    /// Marquet summaries and spatial indexes), bump `GENERATION`, commit `NROWS` last.
    pub(crate) fn commit_append(
        &self,
        n_old: u64,
        n_new: u64,
        before_commit: &mut dyn FnMut(&Table, u64, u64) -> Result<()>,
    ) -> Result<u64> {
        if self.nrows()? != n_old {
            return Err(MarquetError::InvalidArgument(format!(
                "{}: NROWS changed while rows were staged (another writer?)",
                self.path()
            )));
        }
        let g_old = self.generation()?;
        // Step 4: indexes (tokens before content).
        search_index::maintain_after_append(self, n_old, n_new, g_old.map(|g| g.wrapping_add(1)))?;
        before_commit(self, n_old, n_new - n_old)?;
        // Everything the commit publishes is on disk before the commit itself, so the final
        // flush writes little more than GENERATION and NROWS (local ruling L6).
        h5::flush(self.id())?;
        // Step 5. Flushed on its own: GENERATION and NROWS may sit in different metadata
        // cache entries, which one flush writes in no fixed order, so a kill inside a single
        // flush could publish the new NROWS under the old GENERATION (a state HEP001 §12.3's
        // order rules out; tests/crash_append.rs saw it).
        if let Some(g) = g_old {
            h5::attr_write_u64(self.id(), names::GENERATION, g.wrapping_add(1))?;
            h5::flush(self.id())?;
        }
        // Step 6: commit.
        h5::attr_write_u64(self.id(), names::NROWS, n_new)?;
        h5::flush(self.id())?;
        Ok(n_new)
    }

    /// Logical truncation (HEP001 §12.5): indexes are maintained tokens-first, then NROWS
    /// is written.
    pub fn truncate(&self, new_nrows: u64) -> Result<()> {
        self.begin_mutation()?;
        self.truncate_unchecked(new_nrows)
    }

    /// [`Table::truncate`] after [`Table::begin_mutation`] (the Marquet layer maintains its
    /// own indexes between the two).
    pub(crate) fn truncate_unchecked(&self, new_nrows: u64) -> Result<()> {
        let n_old = self.nrows()?;
        if new_nrows > n_old {
            return Err(MarquetError::InvalidArgument(format!(
                "cannot truncate {} rows to {new_nrows}",
                n_old
            )));
        }
        if new_nrows == n_old {
            return Ok(());
        }
        let g_old = self.generation()?;
        search_index::maintain_after_truncate(self, new_nrows, g_old.map(|g| g.wrapping_add(1)))?;
        h5::flush(self.id())?;
        if let Some(g) = g_old {
            // Flushed before NROWS, as in `append_with`.
            h5::attr_write_u64(self.id(), names::GENERATION, g.wrapping_add(1))?;
            h5::flush(self.id())?;
        }
        h5::attr_write_u64(self.id(), names::NROWS, new_nrows)?;
        h5::flush(self.id())
    }

    /// In-place update of rows `[start, start+len)` of a column dataset (HEP001 §12.6):
    /// GENERATION is bumped and flushed first, then values written, then indexes restored
    /// content-before-tokens.
    pub fn update(&self, name: &str, start: u64, values: &ColumnValues) -> Result<()> {
        self.update_with(name, start, values, &mut |_| Ok(()))
    }

    /// [`Table::update`] with a hook run after the GENERATION bump and before the write.
    /// Refused for a geometry or covering column of a Marquet table (HEP002 §11.1).
    pub fn update_with(
        &self,
        name: &str,
        start: u64,
        values: &ColumnValues,
        before_write: &mut dyn FnMut(&Table) -> Result<()>,
    ) -> Result<()> {
        guard::refuse_update(self, name)?;
        // All-or-nothing (docs/FAULTS.md F10).
        let end = start.saturating_add(values.len() as u64);
        super::undo::all_or_nothing(self, &[(name, start, end)], || self.update_unguarded(name, start, values, before_write))
    }

    /// [`Table::update_with`] without the Marquet guard (the Marquet layer's updates).
    pub(crate) fn update_unguarded(
        &self,
        name: &str,
        start: u64,
        values: &ColumnValues,
        before_write: &mut dyn FnMut(&Table) -> Result<()>,
    ) -> Result<()> {
        let k = values.len() as u64;
        self.check_update_rows(start, k)?;
        let col = self.column(name)?;
        let bytes = col.encode_values(Some(values), k)?;
        self.in_place(name, before_write, &mut || {
            col.write_encoded(start, &bytes)
        })
    }

    /// Rows `[start, start + k)` must lie below NROWS for an in-place update.
    fn check_update_rows(&self, start: u64, k: u64) -> Result<()> {
        let n = self.nrows()?;
        if start.checked_add(k).map(|e| e > n).unwrap_or(true) {
            return Err(MarquetError::InvalidArgument(format!("rows {start}..{} are past NROWS {n}", start.saturating_add(k))));
        }
        Ok(())
    }

    /// The HEP001 §12.6 frame around an in-place write to column `name`: bump GENERATION
    /// and flush (every index now fails its check), run the hook, write, restore the
    /// column's indexes content-before-tokens, flush.
    fn in_place(
        &self,
        name: &str,
        before_write: &mut dyn FnMut(&Table) -> Result<()>,
        write: &mut dyn FnMut() -> Result<()>,
    ) -> Result<()> {
        self.begin_mutation()?;
        let g_old = self.generation()?;
        if let Some(g) = g_old {
            h5::attr_write_u64(self.id(), names::GENERATION, g.wrapping_add(1))?;
            h5::flush(self.id())?;
        }
        before_write(self)?;
        write()?;
        if let Some(g) = g_old {
            search_index::restore_after_update(self, name, g.wrapping_add(1))?;
        }
        h5::flush(self.id())
    }

    /// In-place update of rows `[start, start+len)` of a list column whose VALUES is a leaf
    /// dataset (HEP001 §12.6). Entries may change length, so the entries after the updated
    /// ones are rewritten too (leaf first, then MASK, then OFFSETS). As for every in-place
    /// update, readers see the change at once and all indexes are disabled first by the
    /// GENERATION bump; a failure writes the old entries back at once, a kill leaves them
    /// to the next read-write open (docs/FAULTS.md F10).
    pub fn update_list_with(
        &self,
        name: &str,
        start: u64,
        values: &ListArray,
        before_write: &mut dyn FnMut(&Table) -> Result<()>,
    ) -> Result<()> {
        guard::refuse_update(self, name)?;
        // All-or-nothing (docs/FAULTS.md F10): the entries after the updated ones are
        // rewritten too, so the record keeps every entry from `start` on.
        let n = self.nrows()?;
        super::undo::all_or_nothing(self, &[(name, start, n)], || self.update_list_unguarded(name, start, values, before_write))
    }

    /// [`Table::update_list_with`] without the Marquet guard (the Marquet layer's updates).
    pub(crate) fn update_list_unguarded(
        &self,
        name: &str,
        start: u64,
        values: &ListArray,
        before_write: &mut dyn FnMut(&Table) -> Result<()>,
    ) -> Result<()> {
        let k = values.len() as u64;
        self.check_update_rows(start, k)?;
        let lc = self.list_column(name)?;
        lc.check_values(values)?;
        let rest = lc.read(start + k, self.nrows()?)?;
        let combined = values.concat(&rest)?;
        self.in_place(name, before_write, &mut || lc.append_rows(start, &combined))
    }

    /// Write rows of a column dataset from `start` without GENERATION or index handling:
    /// for filling a column that is not yet part of anything a reader trusts (a new column
    /// being built, HEP002 §11.2 step 1). Rows must lie within the extent.
    pub fn write_rows_unchecked(&self, name: &str, start: u64, values: &ColumnValues) -> Result<()> {
        guard::refuse_update(self, name)?;
        let col = self.column(name)?;
        let k = values.len() as u64;
        if start.checked_add(k).map(|e| e > col.len()).unwrap_or(true) {
            return Err(MarquetError::InvalidArgument(format!("{}: rows past the extent", col.path)));
        }
        let bytes = col.encode_values(Some(values), k)?;
        col.write_encoded(start, &bytes)
    }

    /// Preallocate every column to at least `rows` (HEP001 §12.4), keeping extents equal.
    pub fn preallocate(&self, rows: u64) -> Result<()> {
        for n in self.discover_columns()? {
            match self.kind_of(&n)? {
                Some(ColumnKind::Dataset) => self.column(&n)?.ensure_len(rows)?,
                Some(ColumnKind::List) => self.list_column(&n)?.ensure_rows(rows)?,
                None => {}
            }
        }
        Ok(())
    }
}

/// One column's share of a batch, checked and encoded by [`Table::prepare_rows`].
pub(crate) enum Prepared<'b> {
    /// A column dataset and its encoded rows.
    Dataset(super::Column, Vec<u8>),
    /// A list column and its entries: the batch's own (a WKB column's values are not
    /// copied again), or made here.
    List(super::list::ListColumn, std::borrow::Cow<'b, ListArray>),
}

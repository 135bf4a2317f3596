//! The undo record that makes an in-place update all-or-nothing (issue #19, local ruling
//! L16, docs/FAULTS.md F10).
//!
//! HEP001 §12.6 updates are visible as they are written and "a crash in step 2 ⇒ possibly
//! partial data; producers needing atomic in-place edits MUST arrange it externally". For
//! a variable-length column the partial data is worse than a mix of old and new rows: an
//! update rewrites the entries after the updated ones too (leaf, then `MASK`, then
//! `OFFSETS`), so a fault between those writes leaves a column whose `OFFSETS` and
//! `VALUES` come from different states — non-conformant, with rows after the updated
//! range lost.
//!
//! This module arranges it: before the first write, the columns to be written are copied
//! (`H5Ocopy`, stored chunks as they are) into a *record*, a small HDF5 file beside the
//! data file (`.<file name>.marquet-undo-<pid>.h5`), written under a temporary name,
//! synced and renamed, so a record that exists is complete. The update then runs; when it
//! succeeds the record is deleted. When it fails (a full disk, an I/O error) the saved
//! rows are written back at once. When the writer is killed, the next read-write open of
//! the file ([`super::File::open_rw`]) writes them back before anything else. The rows
//! written back are byte for byte the old ones; the table's indexes stay disabled by the
//! update's `GENERATION` bump (stale, never wrong).
//!
//! Readers that open the file between a kill and the next writer see the partial state
//! HEP001 describes; `marquet validate` names the waiting record.

use std::path::{Path, PathBuf};

use super::{ColumnKind, File, Table};
use crate::error::{MarquetError, Result};
use crate::h5;
use crate::spec::names;

/// The group of a record holding the saved columns.
const GROUP: &str = "/undo";
/// The record's description: `{"table": PATH, "columns": [{"name", "start", "end"}]}`.
const DESCRIPTION: &str = "marquet_undo";

/// A record saved for an operation in progress.
pub(crate) struct Undo {
    path: PathBuf,
}

/// The record name of `file` written by process `pid`.
fn record_path(file: &Path, pid: u32) -> PathBuf {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    dir.join(format!(".{name}.marquet-undo-{pid}.h5"))
}

/// Records of `file` left by any process, with their process ids and whether they are
/// complete (a record still being saved ends in `.partial`: its update had not begun).
pub(crate) fn records(file: &Path) -> Vec<(PathBuf, u32, bool)> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!(".{name}.marquet-undo-");
    let Ok(rd) = std::fs::read_dir(dir) else { return Vec::new() };
    rd.flatten()
        .filter_map(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            let rest = n.strip_prefix(&prefix)?;
            let (pid, complete) = match rest.strip_suffix(".h5.partial") {
                Some(p) => (p, false),
                None => (rest.strip_suffix(".h5")?, true),
            };
            Some((e.path(), pid.parse::<u32>().ok()?, complete))
        })
        .collect()
}

impl Undo {
    /// Save the columns `cols` (name, first row, end row) of `t` before an in-place write
    /// to rows `[start, end)` of each. Nothing is written to `t`.
    fn save(t: &Table, cols: &[(&str, u64, u64)]) -> Result<Undo> {
        let file = PathBuf::from(h5::file_name(t.id())?);
        let path = record_path(&file, std::process::id());
        let tmp = path.with_extension("h5.partial");
        let describe = serde_json::json!({
            "table": t.path(),
            "columns": cols.iter().map(|(n, s, e)| serde_json::json!({"name": n, "start": s, "end": e})).collect::<Vec<_>>(),
        });
        let r = (|| {
            let f = File::create(&tmp)?;
            let u = f.create_table(GROUP)?;
            for (name, _, _) in cols {
                h5::object_copy_with(t.id(), name, f.id(), &format!("{GROUP}/{name}"), false)?;
            }
            h5::attr_write_u64(u.id(), names::NROWS, t.nrows()?)?;
            h5::attr_write_utf8(u.id(), DESCRIPTION, &describe.to_string())?;
            f.flush()?;
            drop(u);
            drop(f);
            let io = |e: std::io::Error| MarquetError::Io { path: path.display().to_string(), source: e };
            std::fs::File::open(&tmp).and_then(|f| f.sync_all()).map_err(io)?;
            std::fs::rename(&tmp, &path).map_err(io)
        })();
        match r {
            Ok(()) => Ok(Undo { path }),
            Err(e) => {
                let _ = std::fs::remove_file(&tmp);
                Err(MarquetError::InvalidArgument(format!(
                    "{}: cannot save the undo record of an in-place update ({e}); no change was made",
                    t.path()
                )))
            }
        }
    }
}

/// Run `op`, an in-place write to rows of the columns `cols` (name, first row, end row)
/// of `t`, all-or-nothing: see the module documentation. On failure the error is `op`'s;
/// the old rows are back (or, when writing them back failed too, wait in the record for
/// the next writer).
pub(crate) fn all_or_nothing(t: &Table, cols: &[(&str, u64, u64)], op: impl FnOnce() -> Result<()>) -> Result<()> {
    let undo = Undo::save(t, cols)?;
    match op() {
        Ok(()) => {
            let _ = std::fs::remove_file(&undo.path);
            Ok(())
        }
        Err(e) => {
            if replay(t, &undo.path).is_ok() {
                let _ = std::fs::remove_file(&undo.path);
            }
            Err(e)
        }
    }
}

/// The table path a record names.
fn record_table(record: &Path) -> Result<(String, serde_json::Value)> {
    let f = File::open(record)?;
    let u = f.table(GROUP)?;
    let text = h5::attr_read(u.id(), DESCRIPTION)?.and_then(|a| a.as_str().map(str::to_string)).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| MarquetError::InvalidArgument(format!("{}: not an undo record: {e}", record.display())))?;
    let table = v["table"].as_str().unwrap_or("").to_string();
    Ok((table, v))
}

/// The complete records waiting beside `file` (an update that did not finish), with the
/// table each names.
pub(crate) fn pending(file: &Path) -> Vec<(String, PathBuf)> {
    records(file)
        .into_iter()
        .filter(|(_, _, complete)| *complete)
        .map(|(r, _, _)| (record_table(&r).map(|(t, _)| t).unwrap_or_default(), r))
        .collect()
}

/// Write the rows a record saved back into `t`, then flush.
fn replay(t: &Table, record: &Path) -> Result<()> {
    let (_, v) = record_table(record)?;
    let f = File::open(record)?;
    let u = f.table(GROUP)?;
    let bad = || MarquetError::InvalidArgument(format!("{}: not an undo record", record.display()));
    for c in v["columns"].as_array().ok_or_else(bad)? {
        let (Some(name), Some(start), Some(end)) = (c["name"].as_str(), c["start"].as_u64(), c["end"].as_u64()) else {
            return Err(bad());
        };
        match t.kind_of(name)? {
            Some(ColumnKind::List) => {
                let old = u.list_column(name)?.read(start, end)?;
                t.list_column(name)?.append_rows(start, &old)?;
            }
            Some(ColumnKind::Dataset) => {
                let old = u.column(name)?.read(start, end.saturating_sub(start))?;
                let col = t.column(name)?;
                col.write_encoded(start, &old.bytes)?;
            }
            None => return Err(MarquetError::InvalidArgument(format!("{}: the undo record names column {name}, which {} lacks", record.display(), t.path()))),
        }
    }
    h5::flush(t.id())
}

/// Write back what in-place updates that did not finish in `file` saved (records of
/// processes that are gone, or of this one), and delete those records. Run by every
/// read-write open, before anything else is written.
pub(crate) fn recover(file: &File) -> Result<()> {
    let me = std::process::id();
    for (record, pid, complete) in records(Path::new(file.filename())) {
        let alive = pid != me && Path::new("/proc").join(pid.to_string()).exists();
        if alive {
            continue;
        }
        if !complete {
            // Killed while saving: the update never began.
            let _ = std::fs::remove_file(&record);
            continue;
        }
        let (table, _) = record_table(&record)?;
        let t = file.table(&table)?;
        replay(&t, &record)?;
        std::fs::remove_file(&record).map_err(|e| MarquetError::Io { path: record.display().to_string(), source: e })?;
    }
    Ok(())
}

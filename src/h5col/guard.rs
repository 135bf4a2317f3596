//! What the plain H5Col layer must not do to a Marquet table (HEP002 §11.1, §5.3).
//!
//! "A producer that does not implement this specification MUST NOT append rows to a
//! Marquet table or update its geometry or covering columns in place": an H5Col append
//! would leave BBOX, GEOMETRY_TYPES, covering columns and block indexes behind the data.
//! The H5Col [`Table`](super::Table) behind a Marquet table is no longer handed out
//! (`MarquetTable::table()` is crate-private, issue #33), but the public H5Col layer still
//! reaches a Marquet table group: `h5col::File::table` opens any table group, and
//! `MarquetTable::column` / `add_column` return H5Col columns. So the public writers refuse
//! these operations on a table group that carries `MARQUET_VERSION` (the marker of HEP001
//! naming rule 7); the Marquet layer uses the crate-private unguarded paths, which keep the
//! summaries correct.
//! Truncation and updates of other columns stay allowed (§11.1 "MAY").

use super::Table;
use crate::error::{MarquetError, Result};
use crate::h5;
use crate::spec::names;

/// The rule an H5Col write to a Marquet table's geometry would break.
pub const RULE_H5COL_WRITE: &str = "HEP002 §11.1";
/// The rule a geometry column as row label would break.
pub const RULE_ROW_LABEL: &str = "HEP002 §5.3, §12 req 4";

/// Does the group carry `MARQUET_VERSION`?
pub(crate) fn is_marquet(id: hdf5_sys::h5i::hid_t) -> Result<bool> {
    h5::attr_exists(id, names::MARQUET_VERSION)
}

fn leaf(p: &str) -> String {
    p.rsplit('/').next().unwrap_or_default().to_string()
}

/// The geometry columns of a Marquet table by name: referenced by `GEOMETRY_COLUMNS` or
/// carrying `GEOMETRY_ENCODING` (a column being replaced, §11.2); empty for any other table.
pub(crate) fn geometry_columns(t: &Table) -> Result<Vec<String>> {
    if !is_marquet(t.id())? {
        return Ok(Vec::new());
    }
    let mut geo: Vec<String> = Vec::new();
    if let Some((refs, _, _)) = h5::attr_read_refs(t.id(), names::GEOMETRY_COLUMNS)? {
        geo.extend(refs.into_iter().flatten().map(|p| leaf(&p)));
    }
    for c in t.discover_columns()? {
        if !geo.contains(&c) {
            let o = h5::object_open(t.id(), &c)?;
            if h5::attr_exists(o.id(), names::GEOMETRY_ENCODING)? {
                geo.push(c);
            }
        }
    }
    Ok(geo)
}

/// The geometry columns and the covering columns (referenced by a geometry column's
/// `COVERING`) of a Marquet table; empty for any other table.
pub(crate) fn protected_columns(t: &Table) -> Result<Vec<String>> {
    let geo = geometry_columns(t)?;
    let mut out = geo.clone();
    for g in &geo {
        let Ok(o) = h5::object_open(t.id(), g) else { continue };
        if let Some((refs, _, _)) = h5::attr_read_refs(o.id(), names::COVERING)? {
            out.extend(refs.into_iter().flatten().map(|p| leaf(&p)));
        }
    }
    Ok(out)
}

/// Refuse an H5Col append to a Marquet table.
pub(crate) fn refuse_append(t: &Table) -> Result<()> {
    if is_marquet(t.id())? {
        return Err(MarquetError::Refused {
            path: t.path().to_string(),
            row: None,
            rule: RULE_H5COL_WRITE,
            message: "an h5col append to a marquet table would leave bbox, geometry_types, covering columns and spatial indexes behind the data; append through MarquetTable::append".into(),
        });
    }
    Ok(())
}

/// Refuse an H5Col in-place write to a geometry or covering column of a Marquet table.
pub(crate) fn refuse_update(t: &Table, column: &str) -> Result<()> {
    if protected_columns(t)?.iter().any(|c| c == column) {
        return Err(MarquetError::Refused {
            path: t.member_path(column),
            row: None,
            rule: RULE_H5COL_WRITE,
            message: "an h5col write to a geometry or covering column of a marquet table would leave its summaries behind the data; update through MarquetTable::update_geometries".into(),
        });
    }
    Ok(())
}

/// Refuse a geometry column as a row index column.
pub(crate) fn refuse_row_label(t: &Table, column: &str) -> Result<()> {
    if geometry_columns(t)?.iter().any(|c| c == column) {
        return Err(MarquetError::Refused {
            path: t.member_path(column),
            row: None,
            rule: RULE_ROW_LABEL,
            message: "a geometry column cannot be a row index column (index_columns): a geometry says where a feature is, not which".into(),
        });
    }
    Ok(())
}

/// Refuse a direct list write to a geometry list column (`path` is the column's absolute
/// path) of a Marquet table.
pub(crate) fn refuse_list_write(list_id: hdf5_sys::h5i::hid_t, path: &str) -> Result<()> {
    if !h5::attr_exists(list_id, names::GEOMETRY_ENCODING)? {
        return Ok(());
    }
    let parent = match path.rsplit_once('/') {
        Some(("", _)) | None => "/".to_string(),
        Some((p, _)) => p.to_string(),
    };
    let g = h5::object_open(list_id, &parent)?;
    if is_marquet(g.id())? {
        return Err(MarquetError::Refused {
            path: path.to_string(),
            row: None,
            rule: RULE_H5COL_WRITE,
            message: "a direct list write to a geometry column of a marquet table would leave its summaries behind the data".into(),
        });
    }
    Ok(())
}

/// The rule a write to a table whose `NROWS` exceeds its columns would break.
pub const RULE_EXTENTS: &str = "HEP001 §13 req 2";

/// Refuse reading `n` rows of a column at `path` that holds `held` (issue #19,
/// docs/FAULTS.md F4): both read paths' check (`crate::marquet::facts`).
pub(crate) fn refuse_unheld(path: String, held: u64, n: u64) -> Result<()> {
    if held < n {
        return Err(MarquetError::Refused {
            path,
            row: None,
            rule: RULE_EXTENTS,
            message: format!("NROWS {n} exceeds the {held} rows the column holds: the table is not conformant; nothing was read"),
        });
    }
    Ok(())
}

/// Refuse to write through a table that breaks the invariants every write relies on
/// (issue #19, docs/FAULTS.md F3): `NROWS` present and at most every column's extent, all
/// column datasets of one extent, list columns with `OFFSETS` extent at least `NROWS + 1`
/// and `MASK` at least `NROWS` (HEP001 §13 reqs 1, 2, 10). An append into a table whose
/// `NROWS` was edited past its data would otherwise "succeed" and publish garbage rows, and
/// every later reader would size its work by the edited value.
pub(crate) fn refuse_nonconformant(t: &Table) -> Result<()> {
    check_extents(t, "no write was made").map(|_| ())
}

/// `NROWS`, once checked against every column's extent (see [`refuse_nonconformant`]);
/// `consequence` ends the message ("no write was made", "nothing was read").
pub(crate) fn check_extents(t: &Table, consequence: &str) -> Result<u64> {
    let n = t.nrows()?;
    let refuse = |path: String, message: String| MarquetError::Refused {
        path,
        row: None,
        rule: RULE_EXTENTS,
        message: message.replace("no write was made", consequence),
    };
    let mut ext: Option<(u64, String)> = None;
    for c in t.discover_columns()? {
        match t.kind_of(&c)? {
            Some(super::ColumnKind::Dataset) => {
                let col = t.column(&c)?;
                let e = col.len();
                if e < n {
                    return Err(refuse(col.path.clone(), format!("NROWS {n} exceeds the column's extent {e}: the table is not conformant; no write was made (run marquet validate)")));
                }
                match &ext {
                    Some((x, other)) if *x != e => {
                        return Err(refuse(col.path.clone(), format!("extent {e} differs from the extent {x} of {other}: the table is not conformant; no write was made")));
                    }
                    None => ext = Some((e, col.path.clone())),
                    _ => {}
                }
            }
            Some(super::ColumnKind::List) => {
                let lc = t.list_column(&c)?;
                let (off, mask) = lc.member_extents()?;
                if off < n.saturating_add(1) {
                    return Err(refuse(lc.path.clone(), format!("OFFSETS extent {off} is below NROWS + 1 = {}: the table is not conformant; no write was made", n.saturating_add(1))));
                }
                if let Some(m) = mask.filter(|&m| m < n) {
                    return Err(refuse(lc.path.clone(), format!("MASK extent {m} is below NROWS {n}: the table is not conformant; no write was made")));
                }
            }
            None => {}
        }
    }
    Ok(n)
}

impl Table {
    /// Check that column `name` holds rows `[0, n)` (its extent, or its `OFFSETS` extent
    /// minus one): the one-column form of [`Table::verified_nrows`], for a reader that
    /// sizes its work by `NROWS` but reads one column (issue #19, docs/FAULTS.md F4).
    pub fn check_rows_held(&self, name: &str, n: u64) -> Result<()> {
        let (held, path) = match self.kind_of(name)? {
            Some(super::ColumnKind::Dataset) => {
                let c = self.column(name)?;
                (c.len(), c.path.clone())
            }
            Some(super::ColumnKind::List) => {
                let l = self.list_column(name)?;
                (l.member_extents()?.0.saturating_sub(1), l.path.clone())
            }
            None => return Ok(()),
        };
        refuse_unheld(path, held, n)
    }

    /// `NROWS` after checking it against every column's extent (HEP001 §13 reqs 2, 10):
    /// what a reader should size its work by when `NROWS` drives an allocation or a loop
    /// over all rows (issue #19, docs/FAULTS.md F4). A table whose `NROWS` its columns do
    /// not hold is refused with rule `HEP001 §13 req 2`.
    pub fn verified_nrows(&self) -> Result<u64> {
        check_extents(self, "nothing was read")
    }
}

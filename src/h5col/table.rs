//! The H5Col table group (HEP001 §3–§6): `NROWS`, `GENERATION`, column order and
//! discovery, adding columns, row index columns, and reads by row range or row list.


use crate::error::{MarquetError, Result};
use crate::h5::{self, DatasetSpec, Dtype, Hid, Space};
use crate::spec::names;

use super::*;

internal_pub! {
    /// May a new table be made at `path` under `loc`? Refused, naming the rule, when an object
    /// is already there (a table, or a group or dataset that is not one), or when a group on the
    /// way is a table group (see [`check_no_table_above`]).
    fn check_new_table_path(loc: hdf5_sys::h5i::hid_t, path: &str) -> Result<()> {
        check_no_table_above(loc, path)?;
        let cur = normalize_table_path(path);
        if cur != "/" && h5::path_exists(loc, &cur)? {
            return Err(MarquetError::InvalidArgument(path_taken(loc, &cur)));
        }
        Ok(())
    }
}

/// Why no new table can be made at `path`, where an object already is: a table there, or
/// something that is not one.
pub(super) fn path_taken(loc: hdf5_sys::h5i::hid_t, path: &str) -> String {
    let is_table = h5::object_open(loc, path).ok().is_some_and(|o| h5::is_group(o.id()) && is_table_group(o.id()).unwrap_or(false));
    if is_table {
        format!("table {path} already exists")
    } else {
        format!("{path} already exists and is not a table (a new table needs a path where nothing is)")
    }
}

internal_pub! {
    /// No group on the way to `path` (its parent, grandparent, …) is a table group: HEP001 §7.6
    /// allows no table group inside a table group (issue #38: `convert --table /p/sub` into a
    /// file whose `/p` is a table wrote a non-conformant file).
    fn check_no_table_above(loc: hdf5_sys::h5i::hid_t, path: &str) -> Result<()> {
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let mut cur = String::new();
        for p in parts.iter().take(parts.len().saturating_sub(1)) {
            cur.push('/');
            cur.push_str(p);
            if !h5::link_exists(loc, &cur)? {
                return Ok(());
            }
            if let Ok(o) = h5::object_open(loc, &cur) {
                if h5::is_group(o.id()) && is_table_group(o.id())? {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{cur} is a table: a table cannot be made inside a table group (HEP001 §7.6), so /{} is refused",
                        parts.join("/")
                    )));
                }
            }
        }
        Ok(())
    }
}

/// An open H5Col table group.
pub struct Table {
    grp: Hid,
    path: String,
}

impl Table {
    pub(super) fn create_at(loc: hdf5_sys::h5i::hid_t, path: &str) -> Result<Table> {
        // Create intermediate groups.
        let mut cur = String::new();
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        if parts.is_empty() {
            return Err(MarquetError::InvalidArgument("a table needs a group path such as /stations".into()));
        }
        check_new_table_path(loc, path)?;
        for p in parts.iter() {
            cur.push('/');
            cur.push_str(p);
            if !h5::link_exists(loc, &cur)? {
                h5::group_create(loc, &cur)?;
            }
        }
        let grp = h5::object_open(loc, &cur)?;
        h5::attr_write_ascii(grp.id(), names::CLASS, names::COLUMN_TABLE)?;
        h5::attr_write_ascii(grp.id(), names::VERSION, names::H5COL_VERSION)?;
        h5::attr_write_u64(grp.id(), names::NROWS, 0)?;
        Ok(Table { grp, path: cur })
    }

    pub(super) fn open_at(loc: hdf5_sys::h5i::hid_t, path: &str) -> Result<Table> {
        if !h5::link_exists(loc, path).unwrap_or(false) {
            return Err(MarquetError::NotATable { path: path.into(), reason: "no such group".into() });
        }
        let grp = h5::object_open(loc, path)?;
        let path = h5::object_path(grp.id())?;
        Table::from_hid(grp, path)
    }

    internal_pub! {
        /// Wrap an open group id (checks CLASS, VERSION, NROWS).
        fn from_hid(grp: Hid, path: String) -> Result<Table> {
            match read_token(grp.id(), names::CLASS)? {
                Some(c) if c == names::COLUMN_TABLE => {}
                Some(c) => {
                    return Err(MarquetError::NotATable { path, reason: format!("CLASS is {c:?}, not \"COLUMN_TABLE\"") })
                }
                None => return Err(MarquetError::NotATable { path, reason: "no CLASS attribute".into() }),
            }
            let v = read_token(grp.id(), names::VERSION)?
                .ok_or_else(|| MarquetError::spec(&path, "HEP001 §7.2", "VERSION attribute missing or not a string"))?;
            let (major, _, _) = parse_version(&v)
                .ok_or_else(|| MarquetError::spec(&path, "HEP001 §7.2", format!("VERSION {v:?} is not MAJOR.MINOR")))?;
            if major > 1 {
                return Err(MarquetError::UnsupportedVersion { path, what: "H5Col VERSION", found: v, supported: "1.x" });
            }
            let t = Table { grp, path };
            t.nrows()?;
            Ok(t)
        }
    }

    /// The table group's HDF5 path.
    pub fn path(&self) -> &str {
        &self.path
    }
    internal_pub! {
        /// The raw group id.
        fn id(&self) -> hdf5_sys::h5i::hid_t {
            self.grp.id()
        }
    }

    /// `NROWS` (HEP001 §7.3); any unsigned integer width is accepted on read (R3).
    pub fn nrows(&self) -> Result<u64> {
        let a = h5::attr_read(self.id(), names::NROWS)?
            .ok_or_else(|| MarquetError::spec(&self.path, "HEP001 §7.3", "NROWS attribute missing"))?;
        match (&a.dtype, &a.space) {
            // Any width and signedness, not negative (ruling R3, as the validator).
            (Dtype::Int { .. }, Space::Scalar) => a.as_u64().ok_or_else(|| {
                MarquetError::spec(&self.path, "HEP001 §7.3", "NROWS is negative")
            }),
            _ => Err(MarquetError::spec(
                &self.path,
                "HEP001 §7.3",
                format!("NROWS must be a scalar unsigned integer, found {:?} {:?}", a.dtype, a.space),
            )),
        }
    }

    /// `GENERATION`, if present.
    pub fn generation(&self) -> Result<Option<u64>> {
        Ok(h5::attr_read(self.id(), names::GENERATION)?.and_then(|a| a.as_u64()))
    }

    /// Set a string attribute on the table group (TITLE, description, units_vocabulary…).
    pub fn set_text_attr(&self, name: &str, value: &str) -> Result<()> {
        h5::attr_write_utf8(self.id(), name, value)
    }

    /// Read a string attribute of the table group.
    pub fn text_attr(&self, name: &str) -> Result<Option<String>> {
        read_token(self.id(), name)
    }

    /// Set a string attribute on column `column` (its dataset, or its list column group).
    pub fn set_column_text_attr(&self, column: &str, name: &str, value: &str) -> Result<()> {
        let o = h5::object_open(self.id(), column)?;
        h5::attr_write_utf8(o.id(), name, value)
    }

    /// Read a string attribute of column `column` (dataset or list column group).
    pub fn column_text_attr(&self, column: &str, name: &str) -> Result<Option<String>> {
        let o = h5::object_open(self.id(), column)?;
        read_token(o.id(), name)
    }

    /// Write `column-order` (HEP001 §6): the logical order of the columns, by name.
    pub fn set_column_order(&self, names_in_order: &[String]) -> Result<()> {
        h5::attr_write_utf8_array(self.id(), names::COLUMN_ORDER, names_in_order)
    }

    /// Bytes of file storage used by member `name` (a column dataset, or every dataset
    /// of a list column's group), 0 when it cannot be opened.
    pub fn storage_size(&self, name: &str) -> u64 {
        h5::storage_size_below(self.id(), name).unwrap_or(0)
    }

    /// The datasets stored below member `name` (the dataset itself, or every dataset of a
    /// list column's group), as paths relative to the table, with their filter pipelines.
    /// Objects that cannot be opened are left out (the validator reports them).
    pub fn filters_below(&self, name: &str) -> Vec<(String, Vec<Filter>)> {
        fn walk(loc: h5::Hid, rel: &str, out: &mut Vec<(String, Vec<Filter>)>) {
            if h5::is_group(loc.id()) {
                for m in h5::member_names(loc.id(), rel).unwrap_or_default() {
                    if let Ok(o) = h5::object_open(loc.id(), &m) {
                        walk(o, &format!("{rel}/{m}"), out);
                    }
                }
            } else if let Ok(i) = h5::dataset_info(loc.id(), rel) {
                out.push((rel.to_string(), i.filters));
            }
        }
        let mut out = Vec::new();
        if let Ok(o) = h5::object_open(self.id(), name) {
            walk(o, name, &mut out);
        }
        out
    }

    /// Rows `[start, end)` of the attribute column dataset `name` and their missing flags
    /// (the canonical test against the fill value, HEP001 §8.5).
    pub fn read_with_missing(&self, name: &str, start: u64, end: u64) -> Result<(Array, Vec<bool>)> {
        if self.kind_of(name)? != Some(ColumnKind::Dataset) {
            return Err(MarquetError::InvalidArgument(format!("{} is not an attribute column dataset", self.member_path(name))));
        }
        let c = self.column(name)?;
        let a = self.read(name, start, end)?;
        let miss = a.missing(c.fill());
        Ok((a, miss))
    }

    /// Column names in logical order: `column-order` when present, else discovery order
    /// (sorted by name).
    pub fn column_names(&self) -> Result<Vec<String>> {
        if let Some(a) = h5::attr_read(self.id(), names::COLUMN_ORDER)? {
            if a.dtype.is_string() {
                return Ok(a.strings);
            }
        }
        self.discover_columns()
    }

    /// The columns found by HEP001 §8.2 discovery, sorted by name.
    pub fn discover_columns(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        for n in self.member_names()? {
            if n == names::CATEGORIES || n == names::SEARCH_INDEXES {
                continue;
            }
            match self.kind_of(&n)? {
                Some(ColumnKind::Dataset) | Some(ColumnKind::List) => out.push(n),
                None => {}
            }
        }
        out.sort();
        Ok(out)
    }

    /// Names of the group's direct members.
    pub fn member_names(&self) -> Result<Vec<String>> {
        h5::member_names(self.id(), &self.path)
    }

    /// Is `name` a column dataset (rank 1), a list column, or neither?
    pub fn kind_of(&self, name: &str) -> Result<Option<ColumnKind>> {
        if !h5::link_exists(self.id(), name)? {
            return Ok(None);
        }
        let o = match h5::object_open(self.id(), name) {
            Ok(o) => o,
            Err(_) => return Ok(None),
        };
        if let Some(c) = read_token(o.id(), names::CLASS)? {
            if c == names::LIST_COLUMN && object_is_group(o.id()) {
                return Ok(Some(ColumnKind::List));
            }
        }
        if !object_is_group(o.id()) {
            if let Ok(info) = h5::dataset_info(o.id(), name) {
                if info.dims.len() == 1 {
                    return Ok(Some(ColumnKind::Dataset));
                }
            }
        }
        Ok(None)
    }

    /// Full path of a member.
    pub fn member_path(&self, name: &str) -> String {
        if self.path == "/" {
            format!("/{name}")
        } else {
            format!("{}/{name}", self.path)
        }
    }

    /// Open a column dataset.
    pub fn column(&self, name: &str) -> Result<Column> {
        match self.kind_of(name)? {
            Some(ColumnKind::Dataset) => {
                let ds = h5::dataset_open(self.id(), name)?;
                let path = self.member_path(name);
                let info = h5::dataset_info(ds.id(), &path)?;
                Ok(Column { ds, path, name: name.to_string(), info })
            }
            Some(ColumnKind::List) => Err(MarquetError::InvalidArgument(format!(
                "{} is a list column; use list_column()",
                self.member_path(name)
            ))),
            None => Err(MarquetError::InvalidArgument(format!("{} is not a column", self.member_path(name)))),
        }
    }

    /// Open a list column.
    pub fn list_column(&self, name: &str) -> Result<list::ListColumn> {
        list::ListColumn::open(self, name)
    }

    /// The common first-dimension extent of the column datasets (HEP001 §13 req 2), or
    /// `None` when the table has no column datasets.
    pub fn extent(&self) -> Result<Option<u64>> {
        let mut ext = None;
        for n in self.discover_columns()? {
            if self.kind_of(&n)? == Some(ColumnKind::Dataset) {
                let c = self.column(&n)?;
                let e = c.info.dims[0];
                match ext {
                    None => ext = Some(e),
                    Some(x) if x != e => {
                        return Err(MarquetError::spec(
                            &c.path,
                            "HEP001 §13 req 2",
                            format!("column extent {e} differs from {x} of other columns"),
                        ))
                    }
                    _ => {}
                }
            }
        }
        Ok(ext)
    }

    fn push_column_order(&self, name: &str) -> Result<()> {
        let mut order = self.column_names()?;
        if !order.iter().any(|n| n == name) {
            order.push(name.to_string());
        }
        h5::attr_write_utf8_array(self.id(), names::COLUMN_ORDER, &order)
    }

    fn check_new_name(&self, name: &str) -> Result<()> {
        if name.is_empty() || name.contains('/') || name == "." {
            return Err(MarquetError::InvalidArgument(format!("invalid column name {name:?}")));
        }
        if is_reserved_name(name) {
            return Err(MarquetError::InvalidArgument(format!(
                "{name:?} is a reserved name and cannot be a column name (HEP001 §14 rule 2)"
            )));
        }
        if h5::link_exists(self.id(), name)? {
            return Err(MarquetError::InvalidArgument(format!("{} already exists", self.member_path(name))));
        }
        Ok(())
    }

    /// Add a column dataset. Its extent matches the table's other columns; existing rows
    /// read as missing (the fill value).
    pub fn add_column(&self, name: &str, spec: &ColumnSpec) -> Result<Column> {
        self.check_new_name(name)?;
        let fill = match &spec.fill {
            Some(f) => Some(f.clone()),
            None => recommended_fill(&spec.dtype)?,
        };
        if spec.dtype.is_boolean() && fill.is_some() {
            return Err(MarquetError::InvalidArgument("boolean columns must not declare a fill value (HEP001 §8.8)".into()));
        }
        let len = self.extent()?.unwrap_or(self.nrows()?);
        let ds = h5::dataset_create(
            self.id(),
            name,
            &DatasetSpec {
                dtype: spec.dtype.clone(),
                len,
                chunk: Some(spec.chunk_rows),
                filters: spec.filters.clone(),
                fill,
            },
        )?;
        if let Some(u) = &spec.units {
            h5::attr_write_utf8(ds.id(), names::UNITS, u)?;
        }
        if let Some(u) = &spec.units_vocabulary {
            h5::attr_write_utf8(ds.id(), names::UNITS_VOCABULARY, u)?;
        }
        if let Some(d) = &spec.description {
            h5::attr_write_utf8(ds.id(), names::DESCRIPTION, d)?;
        }
        if let Some((lo, hi)) = &spec.valid_range {
            h5::attr_write(ds.id(), names::VALID_MIN, &spec.dtype, &Space::Scalar, lo)?;
            h5::attr_write(ds.id(), names::VALID_MAX, &spec.dtype, &Space::Scalar, hi)?;
        }
        self.push_column_order(name)?;
        self.column(name)
    }

    /// Add a list column (HEP001 §9) whose leaf is described by `leaf`.
    pub fn add_list_column(&self, name: &str, spec: &list::ListSpec) -> Result<list::ListColumn> {
        self.check_new_name(name)?;
        list::ListColumn::create(self, name, spec)?;
        self.push_column_order(name)?;
        self.list_column(name)
    }

    /// Declare the row index columns (HEP001 §10): writes `INDEX_COLUMNS` and `_index`.
    pub fn set_index_columns(&self, cols: &[&str]) -> Result<()> {
        for c in cols {
            // HEP002 §5.3: a geometry column is never a row label.
            guard::refuse_row_label(self, c)?;
            if self.kind_of(c)? != Some(ColumnKind::Dataset) {
                return Err(MarquetError::InvalidArgument(format!(
                    "{} is not a column dataset and cannot be a row index (HEP001 §7.4)",
                    self.member_path(c)
                )));
            }
        }
        let targets: Vec<String> = cols.iter().map(|c| c.to_string()).collect();
        h5::attr_write_refs(self.id(), names::INDEX_COLUMNS, &targets, false)?;
        if let Some(first) = cols.first() {
            h5::attr_write_utf8(self.id(), names::INDEX_NAME, first)?;
        }
        Ok(())
    }

    /// The row index columns (names), from `INDEX_COLUMNS`.
    pub fn index_columns(&self) -> Result<Vec<String>> {
        let Some((refs, _, _)) = h5::attr_read_refs(self.id(), names::INDEX_COLUMNS)? else { return Ok(Vec::new()) };
        Ok(refs.into_iter().flatten().map(|p| p.rsplit('/').next().unwrap_or("").to_string()).collect())
    }

}

impl Table {
    /// Read rows `[start, end)` of a column dataset, refusing rows at or past NROWS.
    pub fn read(&self, name: &str, start: u64, end: u64) -> Result<Array> {
        let n = self.nrows()?;
        if end > n || start > end {
            return Err(MarquetError::InvalidArgument(format!(
                "rows {start}..{end} out of range for {} rows",
                n
            )));
        }
        self.column(name)?.read(start, end - start)
    }

    /// Read rows `[start, end)` of a list column, refusing rows at or past NROWS.
    pub fn read_list(&self, name: &str, start: u64, end: u64) -> Result<ListArray> {
        let n = self.nrows()?;
        if end > n || start > end {
            return Err(MarquetError::InvalidArgument(format!("rows {start}..{end} out of range for {n} rows")));
        }
        self.list_column(name)?.read(start, end)
    }
}

/// Rows closer than this are read in one span by the `take` readers: reading a few
/// unwanted rows is cheaper than another HDF5 read call.
pub const TAKE_GAP: u64 = 64;

/// A span of a `take`: rows `[start, end)` are read, and `rows[first..last]` fall in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TakeSpan {
    /// First row read (inclusive).
    pub start: u64,
    /// End of the rows read (exclusive).
    pub end: u64,
    /// Index into the requested rows of the first row in this span.
    pub first: usize,
    /// Index into the requested rows one past the last row in this span.
    pub last: usize,
}

/// Group ascending `rows` into spans whose gaps are at most [`TAKE_GAP`]. Rows that are
/// not strictly ascending are an error naming `path`.
pub fn take_spans(rows: &[u64], path: &str) -> Result<Vec<TakeSpan>> {
    let mut out: Vec<TakeSpan> = Vec::new();
    for (i, &r) in rows.iter().enumerate() {
        if i > 0 && r <= rows[i - 1] {
            return Err(MarquetError::InvalidArgument(format!("{path}: rows to take must be strictly ascending ({} then {r})", rows[i - 1])));
        }
        let end = r.checked_add(1).ok_or_else(|| MarquetError::InvalidArgument(format!("{path}: row {r} out of range")))?;
        match out.last_mut() {
            Some(s) if r - (s.end - 1) <= TAKE_GAP => {
                s.end = end;
                s.last = i + 1;
            }
            _ => out.push(TakeSpan { start: r, end, first: i, last: i + 1 }),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod take_tests {
    use super::*;

    #[test]
    fn spans_merge_nearby_rows_and_refuse_disorder() {
        let rows = [3, 4, 10, 10 + TAKE_GAP, 20 + 2 * TAKE_GAP, 21 + 2 * TAKE_GAP];
        let s = take_spans(&rows, "/t/c").unwrap();
        assert_eq!(
            s,
            vec![
                TakeSpan { start: 3, end: 11 + TAKE_GAP, first: 0, last: 4 },
                TakeSpan { start: 20 + 2 * TAKE_GAP, end: 22 + 2 * TAKE_GAP, first: 4, last: 6 },
            ]
        );
        assert!(take_spans(&[], "/t/c").unwrap().is_empty());
        let e = take_spans(&[5, 5], "/t/c").unwrap_err().to_string();
        assert!(e.contains("/t/c: rows to take must be strictly ascending (5 then 5)"), "{e}");
        assert!(take_spans(&[u64::MAX], "/t/c").is_err());
    }
}

//! HEP001 "H5Col" on HDF5: table groups, column datasets, list columns, search indexes,
//! and the append / truncate / update procedures of HEP001 §12.

pub mod array;
pub mod bloom;
pub mod categorical;
pub mod filter;
pub(crate) mod guard;
pub mod index;
pub mod list;
#[cfg(feature = "mpio")]
pub mod mpio;
pub mod search;

use std::collections::BTreeMap;

pub use array::{is_missing, recommended_fill, Array};
pub use list::{ListArray, ListValues};

use crate::error::{MarquetError, Result};
use crate::h5::{self, DatasetSpec, Dtype, Filter, Hid, Space};
use crate::spec::names;

/// Default chunk length (rows) of new column datasets.
pub const DEFAULT_CHUNK_ROWS: u64 = 65_536;

/// An open file (read-only or read-write).
pub struct File {
    inner: hdf5::File,
    path: String,
}

impl File {
    /// Create (truncate) a file.
    pub fn create(path: impl AsRef<std::path::Path>) -> Result<File> {
        let p = path.as_ref().display().to_string();
        let inner = h5::file_create(&p)?;
        Ok(File { inner, path: p })
    }
    /// Open read-only.
    pub fn open(path: impl AsRef<std::path::Path>) -> Result<File> {
        let p = path.as_ref().display().to_string();
        if !path.as_ref().exists() {
            return Err(MarquetError::Io {
                path: p,
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        let inner = h5::file_open(path.as_ref(), false)?;
        Ok(File { inner, path: p })
    }
    /// Open read-write.
    pub fn open_rw(path: impl AsRef<std::path::Path>) -> Result<File> {
        let p = path.as_ref().display().to_string();
        let inner = h5::file_open(path.as_ref(), true)?;
        Ok(File { inner, path: p })
    }
    /// The file of a file or group identifier that the caller opened with the same HDF5
    /// library this crate links (only meaningful without the `static-hdf5` feature: a
    /// statically linked HDF5 has an id table of its own). Returns the file, which holds
    /// its own reference (the caller still closes `id`), and the group's path (`"/"` for a
    /// file identifier). See `h5::file_from_caller_id`.
    pub fn from_caller_id(id: hdf5_sys::h5i::hid_t) -> Result<(File, String)> {
        let (inner, group) = h5::file_from_caller_id(id)?;
        let path = inner.filename();
        Ok((File { inner, path }, group))
    }
    /// The file's name on disk.
    pub fn filename(&self) -> &str {
        &self.path
    }
    /// The raw HDF5 file id (for interop).
    pub fn id(&self) -> hdf5_sys::h5i::hid_t {
        self.inner.id()
    }
    /// Create a new table group at `path` (intermediate groups are created).
    pub fn create_table(&self, path: &str) -> Result<Table> {
        Table::create_at(self.inner.id(), path)
    }
    /// Open the table group at `path`.
    pub fn table(&self, path: &str) -> Result<Table> {
        Table::open_at(self.inner.id(), path)
    }
    /// Paths of every table group in the file (a full traversal; HEP001 §1.3).
    pub fn tables(&self) -> Result<Vec<String>> {
        let mut out = Vec::new();
        let root = self.inner.group("/").map_err(|e| MarquetError::hdf5("/", e))?;
        find_tables(&root, "/", &mut out, 0)?;
        Ok(out)
    }
    /// Flush to disk.
    pub fn flush(&self) -> Result<()> {
        h5::flush(self.inner.id())
    }
}

fn find_tables(g: &hdf5::Group, path: &str, out: &mut Vec<String>, depth: usize) -> Result<()> {
    if depth > 64 {
        return Ok(());
    }
    if is_table_group(g.id())? {
        out.push(path.to_string());
    }
    let names = g.member_names().map_err(|e| MarquetError::hdf5(path, e))?;
    for n in names {
        if let Ok(child) = g.group(&n) {
            let p = if path == "/" { format!("/{n}") } else { format!("{path}/{n}") };
            find_tables(&child, &p, out, depth + 1)?;
        }
    }
    Ok(())
}

/// Does the group carry `CLASS == "COLUMN_TABLE"` (leniently read, HEP001 §7.1)?
pub fn is_table_group(id: hdf5_sys::h5i::hid_t) -> Result<bool> {
    Ok(read_token(id, names::CLASS)?.as_deref() == Some(names::COLUMN_TABLE))
}

/// Read a string token attribute leniently (any string storage, R3). `Ok(None)` when absent
/// or not a string.
pub fn read_token(id: hdf5_sys::h5i::hid_t, name: &str) -> Result<Option<String>> {
    Ok(h5::attr_read(id, name)?.and_then(|a| a.as_str().map(|s| s.trim_end_matches(' ').to_string())))
}

/// Parse "MAJOR.MINOR[.PATCH]" numerically.
pub fn parse_version(v: &str) -> Option<(u64, u64, u64)> {
    let mut it = v.trim().split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next().map(|s| s.parse().ok()).unwrap_or(Some(0))?;
    let patch = it.next().map(|s| s.parse().ok()).unwrap_or(Some(0))?;
    if it.next().is_some() {
        return None;
    }
    Some((major, minor, patch))
}

/// How a column is stored.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnKind {
    /// A rank-1 column dataset.
    Dataset,
    /// A list column group (`CLASS="LIST_COLUMN"`).
    List,
}

/// Options for a new column dataset.
#[derive(Debug, Clone)]
pub struct ColumnSpec {
    pub dtype: Dtype,
    /// Fill value bytes; `None` = HEP001's recommended fill for the datatype.
    pub fill: Option<Vec<u8>>,
    /// Chunk length in rows (default [`DEFAULT_CHUNK_ROWS`]).
    pub chunk_rows: u64,
    pub filters: Vec<Filter>,
    pub units: Option<String>,
    pub units_vocabulary: Option<String>,
    pub description: Option<String>,
    /// `(valid_min, valid_max)` as element bytes.
    pub valid_range: Option<(Vec<u8>, Vec<u8>)>,
}

impl ColumnSpec {
    /// A column of `dtype` with the recommended fill, deflate level 4 and default chunking.
    pub fn new(dtype: Dtype) -> ColumnSpec {
        ColumnSpec {
            dtype,
            fill: None,
            chunk_rows: DEFAULT_CHUNK_ROWS,
            filters: vec![Filter::Deflate(4)],
            units: None,
            units_vocabulary: None,
            description: None,
            valid_range: None,
        }
    }
    pub fn with_fill(mut self, fill: Vec<u8>) -> Self {
        self.fill = Some(fill);
        self
    }
    pub fn with_chunk_rows(mut self, rows: u64) -> Self {
        self.chunk_rows = rows.max(1);
        self
    }
    pub fn with_filters(mut self, f: Vec<Filter>) -> Self {
        self.filters = f;
        self
    }
    pub fn with_units(mut self, u: &str) -> Self {
        self.units = Some(u.into());
        self
    }
    pub fn with_units_vocabulary(mut self, u: &str) -> Self {
        self.units_vocabulary = Some(u.into());
        self
    }
    pub fn with_description(mut self, d: &str) -> Self {
        self.description = Some(d.into());
        self
    }
}

/// Values for one column in an append or update batch.
#[derive(Debug, Clone)]
pub enum ColumnValues {
    /// Dataset values; rows flagged in `missing` are written as the column's fill value.
    Array { values: Array, missing: Option<Vec<bool>> },
    /// List column rows.
    List(ListArray),
}

impl ColumnValues {
    /// Plain values with no missing rows.
    pub fn array(values: Array) -> ColumnValues {
        ColumnValues::Array { values, missing: None }
    }
    fn len(&self) -> usize {
        match self {
            ColumnValues::Array { values, .. } => values.len(),
            ColumnValues::List(l) => l.len(),
        }
    }
}

/// A batch of rows to append: column name → values (every column of the table must be
/// present, or be given as missing with [`Batch::missing_rest`]).
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub columns: BTreeMap<String, ColumnValues>,
    /// Columns not listed are filled with missing values (fill / null lists).
    pub missing_rest: bool,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }
    pub fn with(mut self, name: &str, v: ColumnValues) -> Batch {
        self.columns.insert(name.to_string(), v);
        self
    }
    pub fn with_array(self, name: &str, a: Array) -> Batch {
        self.with(name, ColumnValues::array(a))
    }
    /// Number of rows (all columns must agree).
    pub fn nrows(&self) -> Result<u64> {
        let mut n: Option<usize> = None;
        for (name, c) in &self.columns {
            match n {
                None => n = Some(c.len()),
                Some(m) if m != c.len() => {
                    return Err(MarquetError::InvalidArgument(format!(
                        "column '{name}' has {} rows in the batch, others have {m}",
                        c.len()
                    )))
                }
                _ => {}
            }
        }
        Ok(n.unwrap_or(0) as u64)
    }
}

/// An open H5Col table group.
pub struct Table {
    grp: Hid,
    path: String,
}

impl Table {
    fn create_at(loc: hdf5_sys::h5i::hid_t, path: &str) -> Result<Table> {
        // Create intermediate groups.
        let mut cur = String::new();
        let parts: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        if parts.is_empty() {
            return Err(MarquetError::InvalidArgument("a table needs a group path such as /stations".into()));
        }
        for (i, p) in parts.iter().enumerate() {
            cur.push('/');
            cur.push_str(p);
            if !h5::link_exists(loc, &cur)? {
                h5::group_create(loc, &cur)?;
            } else if i == parts.len() - 1 {
                return Err(MarquetError::InvalidArgument(format!("{cur} already exists")));
            }
        }
        let grp = h5::object_open(loc, &cur)?;
        h5::attr_write_ascii(grp.id(), names::CLASS, names::COLUMN_TABLE)?;
        h5::attr_write_ascii(grp.id(), names::VERSION, names::H5COL_VERSION)?;
        h5::attr_write_u64(grp.id(), names::NROWS, 0)?;
        Ok(Table { grp, path: cur })
    }

    fn open_at(loc: hdf5_sys::h5i::hid_t, path: &str) -> Result<Table> {
        if !h5::link_exists(loc, path).unwrap_or(false) {
            return Err(MarquetError::NotATable { path: path.into(), reason: "no such group".into() });
        }
        let grp = h5::object_open(loc, path)?;
        let path = h5::object_path(grp.id())?;
        Table::from_hid(grp, path)
    }

    /// Wrap an open group id (checks CLASS, VERSION, NROWS).
    pub fn from_hid(grp: Hid, path: String) -> Result<Table> {
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

    /// The table group's HDF5 path.
    pub fn path(&self) -> &str {
        &self.path
    }
    /// The raw group id.
    pub fn id(&self) -> hdf5_sys::h5i::hid_t {
        self.grp.id()
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
        // Validate everything before touching the file.
        let mut prepared = Vec::new();
        for name in &cols {
            match self.kind_of(name)? {
                Some(ColumnKind::Dataset) => {
                    let col = self.column(name)?;
                    let bytes = col.encode_values(batch.columns.get(name), k)?;
                    prepared.push((name.clone(), Some(col), None, bytes));
                }
                Some(ColumnKind::List) => {
                    let lc = self.list_column(name)?;
                    let v = match batch.columns.get(name) {
                        Some(ColumnValues::List(l)) => l.clone(),
                        Some(_) => {
                            return Err(MarquetError::InvalidArgument(format!("column '{name}' is a list column")))
                        }
                        None => ListArray::nulls(k as usize, lc.leaf_dtype()?),
                    };
                    lc.check_values(&v)?;
                    prepared.push((name.clone(), None, Some((lc, v)), Vec::new()));
                }
                None => {}
            }
        }
        let n_old = self.nrows()?;
        let n_new = n_old.checked_add(k).ok_or_else(|| MarquetError::InvalidArgument("row count overflow".into()))?;
        if k == 0 {
            return Ok(n_old);
        }
        // Step 2: extend every column dataset back to back (no data writes in between),
        // so that extents stay equal (HEP001 §13 req 2) in any state that reaches disk.
        for (_, col, _, _) in &prepared {
            if let Some(col) = col {
                col.ensure_len(n_new)?;
            }
        }
        // Flush the new extents (all equal, beyond NROWS) before any data: HDF5 may write
        // any dirty object header at any time, so this is what keeps extents equal on disk.
        h5::flush(self.id())?;
        // Step 3: write.
        for (_, col, list, bytes) in &prepared {
            if let Some(col) = col {
                h5::dataset_write(col.ds.id(), n_old, &col.info.dtype.to_le(), bytes, &col.path)?;
            }
            if let Some((lc, v)) = list {
                lc.append_rows(n_old, v)?;
            }
        }
        let g_old = self.generation()?;
        // Step 4: indexes (tokens before content).
        index::maintain_after_append(self, n_old, n_new, g_old.map(|g| g.wrapping_add(1)))?;
        before_commit(self, n_old, k)?;
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
        index::maintain_after_truncate(self, new_nrows, g_old.map(|g| g.wrapping_add(1)))?;
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
        self.update_unguarded(name, start, values, before_write)
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
            h5::dataset_write(col.ds.id(), start, &col.info.dtype.to_le(), &bytes, &col.path)
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
        let g_old = self.generation()?;
        if let Some(g) = g_old {
            h5::attr_write_u64(self.id(), names::GENERATION, g.wrapping_add(1))?;
            h5::flush(self.id())?;
        }
        before_write(self)?;
        write()?;
        if let Some(g) = g_old {
            index::restore_after_update(self, name, g.wrapping_add(1))?;
        }
        h5::flush(self.id())
    }

    /// In-place update of rows `[start, start+len)` of a list column whose VALUES is a leaf
    /// dataset (HEP001 §12.6). Entries may change length, so the entries after the updated
    /// ones are rewritten too (leaf first, then MASK, then OFFSETS). As for every in-place
    /// update, readers see the change at once and a crash during the write can leave partial
    /// data; all indexes are disabled first by the GENERATION bump.
    pub fn update_list_with(
        &self,
        name: &str,
        start: u64,
        values: &ListArray,
        before_write: &mut dyn FnMut(&Table) -> Result<()>,
    ) -> Result<()> {
        guard::refuse_update(self, name)?;
        self.update_list_unguarded(name, start, values, before_write)
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
        h5::dataset_write(col.ds.id(), start, &col.info.dtype.to_le(), &bytes, &col.path)
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

pub(crate) fn object_is_group(id: hdf5_sys::h5i::hid_t) -> bool {
    h5::is_group(id)
}

/// Is `name` reserved by HEP001 or HEP002 as something a column must not be called?
pub fn is_reserved_name(name: &str) -> bool {
    const RESERVED: &[&str] = &[
        names::CATEGORIES,
        names::SEARCH_INDEXES,
        names::CLASS,
        names::VERSION,
        names::NROWS,
        names::TITLE,
        names::INDEX_COLUMNS,
        names::GENERATION,
        names::SEARCH_INDEX_LIST,
        names::VALID_MIN,
        names::VALID_MAX,
        names::MASK,
        names::KIND,
        names::VALUES,
        names::OFFSETS,
        names::CHARS,
        names::SOURCE_GENERATION,
        names::SOURCE_NROWS,
        names::COLUMN_ORDER,
        names::INDEX_NAME,
        names::MARQUET_VERSION,
        names::GEOMETRY_COLUMNS,
        names::GEOMETRY_ENCODING,
        names::GEOMETRY_TYPES,
        names::CRS,
        names::EPOCH,
        names::EDGES,
        names::ORIENTATION,
        names::BBOX,
        names::COVERING,
    ];
    RESERVED.contains(&name)
}

/// An open column dataset.
pub struct Column {
    pub(crate) ds: Hid,
    pub path: String,
    pub name: String,
    pub info: h5::DatasetInfo,
}

impl Column {
    /// The dataset id.
    pub fn id(&self) -> hdf5_sys::h5i::hid_t {
        self.ds.id()
    }
    /// The column's datatype as stored.
    pub fn dtype(&self) -> &Dtype {
        &self.info.dtype
    }
    /// The declared user-defined fill value, if any.
    pub fn fill(&self) -> Option<&[u8]> {
        self.info.fill.as_deref()
    }
    /// Chunk length in rows (None for contiguous).
    pub fn chunk_rows(&self) -> Option<u64> {
        self.info.chunk.as_ref().and_then(|c| c.first().copied())
    }
    /// Current extent.
    pub fn len(&self) -> u64 {
        self.info.dims[0]
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Read rows `[start, start+count)`; the caller keeps reads below NROWS
    /// ([`Table::read`] does).
    pub fn read(&self, start: u64, count: u64) -> Result<Array> {
        if start.checked_add(count).map(|e| e > self.len()).unwrap_or(true) {
            return Err(MarquetError::spec(
                &self.path,
                "HEP001 §13 req 2",
                format!("rows {start}..{} past the dataset extent {}", start.saturating_add(count), self.len()),
            ));
        }
        let mem = self.info.dtype.to_le();
        let bytes = h5::dataset_read(self.ds.id(), start, count, &mem, &self.path)?;
        Ok(Array { dtype: mem, bytes })
    }

    /// Read the rows `rows` (ascending, each below the extent), in that order: one read per
    /// span of nearby rows ([`take_spans`]), so rows in one chunk cost one decompression.
    pub fn take(&self, rows: &[u64]) -> Result<Array> {
        let mem = self.info.dtype.to_le();
        let es = mem.size();
        let mut bytes = Vec::with_capacity(rows.len() * es);
        for span in take_spans(rows, &self.path)? {
            let a = self.read(span.start, span.end - span.start)?;
            for &r in &rows[span.first..span.last] {
                let i = ((r - span.start) as usize) * es;
                bytes.extend_from_slice(&a.bytes[i..i + es]);
            }
        }
        Ok(Array { dtype: mem, bytes })
    }

    fn ensure_len(&self, n: u64) -> Result<()> {
        let cur = h5::dataset_info(self.ds.id(), &self.path)?.dims[0];
        if cur < n {
            if self.info.chunk.is_none() {
                return Err(MarquetError::Unsupported(format!("{}: contiguous dataset cannot grow", self.path)));
            }
            h5::dataset_set_len(self.ds.id(), n, &self.path)?;
        }
        Ok(())
    }

    /// Encode batch values to bytes in the column's layout, writing fill for missing rows.
    fn encode_values(&self, v: Option<&ColumnValues>, k: u64) -> Result<Vec<u8>> {
        let dt = self.info.dtype.to_le();
        let es = dt.size();
        let fill = self.info.fill.clone();
        match v {
            None => {
                let f = fill.ok_or_else(|| {
                    MarquetError::InvalidArgument(format!("{}: no fill value, values are required", self.path))
                })?;
                Ok(f.repeat(k as usize))
            }
            Some(ColumnValues::List(_)) => {
                Err(MarquetError::InvalidArgument(format!("{} is not a list column", self.path)))
            }
            Some(ColumnValues::Array { values, missing }) => {
                let values = convert_array(values, &dt, &self.path)?;
                let nvals = values.len();
                let mut bytes = values.bytes;
                if let Some(m) = missing {
                    if m.len() != nvals {
                        return Err(MarquetError::InvalidArgument("missing flags length mismatch".into()));
                    }
                    let f = fill.as_ref().ok_or_else(|| {
                        MarquetError::InvalidArgument(format!("{}: column has no fill value for missing rows", self.path))
                    })?;
                    for (i, &is_m) in m.iter().enumerate() {
                        if is_m {
                            bytes[i * es..(i + 1) * es].copy_from_slice(f);
                        }
                    }
                }
                if dt.is_boolean() {
                    if let Some(b) = bytes.iter().find(|&&b| b > 1) {
                        return Err(MarquetError::InvalidArgument(format!(
                            "{}: boolean value {b} is neither FALSE nor TRUE (HEP001 §8.8)",
                            self.path
                        )));
                    }
                }
                Ok(bytes)
            }
        }
    }
}

/// Convert `a` to the column layout `dt` where that is lossless and unambiguous
/// (same type; numeric widening; fixed strings re-padded). Otherwise an error.
fn convert_array(a: &Array, dt: &Dtype, path: &str) -> Result<Array> {
    if a.dtype.to_le() == *dt {
        return Ok(a.clone());
    }
    match (dt, &a.dtype) {
        (Dtype::FixedString { size, utf8, .. }, Dtype::FixedString { .. }) => {
            let s = a.to_string_vec().unwrap_or_default();
            let refs: Vec<&str> = s.iter().map(|x| x.as_str()).collect();
            Array::from_strings_sized(&refs, *utf8, *size).map_err(|e| MarquetError::InvalidArgument(format!("{path}: {e}")))
        }
        (Dtype::Float { size: 8, .. }, Dtype::Float { size: 4, .. }) => Ok(Array::from_f64(&a.to_f64_vec().unwrap_or_default())),
        (Dtype::Enum { base, .. }, Dtype::Int { .. }) => {
            let codes: Vec<i64> = (0..a.len()).map(|i| a.get_i128(i).unwrap_or(0) as i64).collect();
            let _ = base;
            Array::from_enum_codes(dt.clone(), &codes)
        }
        (Dtype::Int { size, signed, .. }, Dtype::Int { .. }) => {
            let mut bytes = Vec::with_capacity(a.len() * size);
            for i in 0..a.len() {
                let v = a.get_i128(i).unwrap_or(0);
                let ok = if *signed {
                    let bits = (*size * 8) as u32;
                    v >= -(1i128 << (bits - 1)) && v < (1i128 << (bits - 1))
                } else {
                    v >= 0 && (*size == 8 || v < (1i128 << (*size * 8)))
                };
                if !ok {
                    return Err(MarquetError::InvalidArgument(format!("{path}: value {v} does not fit the column type")));
                }
                bytes.extend_from_slice(&v.to_le_bytes()[..*size]);
            }
            Ok(Array { dtype: dt.clone(), bytes })
        }
        _ => Err(MarquetError::InvalidArgument(format!(
            "{path}: values of type {:?} cannot be written to a column of type {dt:?}",
            a.dtype
        ))),
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
    pub start: u64,
    pub end: u64,
    pub first: usize,
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

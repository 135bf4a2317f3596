//! Appending the rows of one Marquet table to another: the path behind `marquet append`.
//!
//! Rows go through one [`TableWriter`] (issue #19: all-or-nothing), so everything an append
//! owes is maintained once, at the commit: BBOX and GEOMETRY_TYPES widened, covering rows
//! computed, block indexes extended, packed R-trees rebuilt or left stale (HEP002 §10.3,
//! §10.4, §11.1).

use std::collections::BTreeSet;

use crate::error::{MarquetError, Result};
use crate::h5col::{categorical, Batch, ColumnKind, ColumnValues};
use crate::progress::Progress;

use super::spatial_index::RTreeOnAppend;
use super::{GeoBatch, GeometryValues, MarquetTable, TableWriter, WriteOptions};

/// Rows read from the source and appended at a time: one row block at the default chunk
/// length, so memory stays bounded whatever the source's size.
pub const DEFAULT_APPEND_BATCH_ROWS: u64 = 65_536;

/// The columns an append must supply: every column except covering columns, which the
/// append computes from the geometries (HEP002 §10.5).
fn appendable(t: &MarquetTable) -> Result<(BTreeSet<String>, BTreeSet<String>)> {
    let geoms: BTreeSet<String> = t.geometry_column_names()?.into_iter().collect();
    let mut covering = BTreeSet::new();
    for g in &geoms {
        if let Some(c) = t.geometry_column(g)?.covering {
            covering.insert(c);
        }
    }
    let cols = t.table().discover_columns()?.into_iter().filter(|c| !covering.contains(c)).collect();
    Ok((cols, geoms))
}

/// Is column `c` text: a string column dataset, or UTF-8 bytes in a list column (local
/// ruling L17)? Text moves between the two forms (`h5col::Table::prepare_rows`).
fn is_text(t: &MarquetTable, c: &str) -> Result<bool> {
    Ok(match t.table().kind_of(c)? {
        Some(crate::h5col::ColumnKind::Dataset) => t.table().column(c)?.dtype().is_string(),
        Some(crate::h5col::ColumnKind::List) => t.table().list_column(c)?.is_text()?,
        None => false,
    })
}

/// Refuse rows whose geometry column `c` has another CRS than the target's (issue #38: an
/// EPSG:3857 source appended to an OGC:CRS84 table kept its projected coordinates under
/// the CRS84 label). The same CRS: equal documents, the same `(authority, code)`, or both
/// OGC:CRS84 equivalents (HEP002 §8.3). An unknown CRS (HEP002 §8.1's null dataspace: a
/// GeoParquet `"crs": null`, a plain Parquet or CSV source without `--crs`, a Shapefile
/// without `.prj`) equals only an unknown CRS (local ruling L20): a source whose CRS is
/// unknown is never taken to be in the table's CRS, and rows that state a CRS never go
/// into a table that does not (the column would mix systems nobody can tell apart).
fn check_same_crs(this: &MarquetTable, src: &MarquetTable, c: &str) -> Result<()> {
    use super::Crs;
    let (d, s) = (this.geometry_column(c)?.crs, src.geometry_column(c)?.crs);
    if d == s || (crate::crs::is_crs84(&d) && crate::crs::is_crs84(&s)) {
        return Ok(());
    }
    if let (Some(a), Some(b)) = (d.id(), s.id()) {
        if a == b {
            return Ok(());
        }
    }
    let why = match (&d, &s) {
        (_, Crs::Unknown) => format!(
            "geometry column '{c}' has crs {} but the source {} declares no CRS (unknown), which is never taken for the table's (docs/RULINGS-LOCAL.md L20): state the source's CRS (`--crs` for CSV, plain Parquet and lakehouse sources; `marquet convert SRC FIXED --crs ...` otherwise)",
            d.display_name(),
            src.path()
        ),
        (Crs::Unknown, _) => format!(
            "geometry column '{c}' has an unknown CRS but the source {} has crs {}: rows that state a CRS are not stored under an unknown one (docs/RULINGS-LOCAL.md L20); convert the source with `--crs unknown` to append it as unknown",
            src.path(),
            s.display_name()
        ),
        _ => format!(
            "geometry column '{c}' has crs {} but the source {} has crs {}: reproject the source first (`marquet convert SRC OUT --to-crs ...`)",
            d.display_name(),
            src.path(),
            s.display_name()
        ),
    };
    Err(MarquetError::InvalidArgument(format!("{}: {why}", this.path())))
}

/// The body of [`MarquetTable::check_append_source`].
pub(crate) fn check_append_source(this: &MarquetTable, src: &MarquetTable) -> Result<()> {
    let (dcols, dgeo) = appendable(this)?;
    let (scols, sgeo) = appendable(src)?;
    let only_here: Vec<&String> = dcols.difference(&scols).collect();
    let only_there: Vec<&String> = scols.difference(&dcols).collect();
    if !only_here.is_empty() || !only_there.is_empty() {
        let list = |v: &[&String]| if v.is_empty() { "none".to_string() } else { v.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ") };
        return Err(MarquetError::InvalidArgument(format!(
            "{}: columns differ from the source {}: only in the target: {}; only in the source: {}",
            this.path(),
            src.path(),
            list(&only_here),
            list(&only_there)
        )));
    }
    for c in &dcols {
        if dgeo.contains(c) != sgeo.contains(c) {
            return Err(MarquetError::InvalidArgument(format!(
                "{}: column '{c}' is a geometry column in only one of the two tables",
                this.path()
            )));
        }
        if dgeo.contains(c) {
            check_same_crs(this, src, c)?;
        }
        if !dgeo.contains(c) && this.table().kind_of(c)? != src.table().kind_of(c)? && !(is_text(this, c)? && is_text(src, c)?) {
            return Err(MarquetError::InvalidArgument(format!(
                "{}: column '{c}' is a list column in only one of the two tables",
                this.path()
            )));
        }
        // Categorical codes are carried over by label (HEP001 §8.7): every label of the
        // source must be a category of the target.
        match (categorical::categories_of(this.table(), c)?, categorical::categories_of(src.table(), c)?) {
            (Some(d), Some(sc)) => {
                if let Some(l) = sc.labels.iter().find(|l| d.code_of(l).is_none()) {
                    return Err(MarquetError::InvalidArgument(format!(
                        "{}: column '{c}': the source's label {l:?} is not a category of the target ({} categories)",
                        this.path(),
                        d.labels.len()
                    )));
                }
            }
            (None, None) => {}
            (d, _) => {
                return Err(MarquetError::InvalidArgument(format!(
                    "{}: column '{c}' is categorical in the {} only",
                    this.path(),
                    if d.is_some() { "target" } else { "source" }
                )));
            }
        }
    }
    Ok(())
}
/// The body of [`MarquetTable::append_from`]: one staged append (issue #19).
pub(crate) fn append_from(this: &MarquetTable, src: &MarquetTable, batch_rows: u64, rtree: RTreeOnAppend, progress: &Progress) -> Result<u64> {
    this.check_append_source(src)?;
    let mut w = TableWriter::new(this, WriteOptions::in_order().with_rtree(rtree))?;
    let n = write_batches_from(&mut w, this, src, batch_rows, progress)?;
    w.finish()?;
    Ok(n)
}
fn write_batches_from(w: &mut TableWriter<'_>, this: &MarquetTable, src: &MarquetTable, batch_rows: u64, progress: &Progress) -> Result<u64> {
    let (cols, geoms) = appendable(src)?;
    let recode = CategoryRecode::new(this, src)?;
    let n = src.nrows()?;
    let step = batch_rows.max(1);
    let mut s = 0u64;
    while s < n {
        let e = s.saturating_add(step).min(n);
        let mut gb = GeoBatch { geometries: Default::default(), columns: Batch::new() };
        for c in &cols {
            if geoms.contains(c) {
                let b = src.read_wkb(c, s, e)?;
                let v = (0..b.len()).map(|i| b.get(i).map(|w| w.to_vec())).collect();
                gb.geometries.insert(c.clone(), GeometryValues::Wkb(v));
                continue;
            }
            let v = match src.table().kind_of(c)? {
                Some(ColumnKind::List) => ColumnValues::List(src.table().read_list(c, s, e)?),
                Some(ColumnKind::Dataset) => {
                    let col = src.table().column(c)?;
                    let a = col.read(s, e - s)?;
                    let missing = a.missing(col.fill());
                    recode.apply(c, ColumnValues::Array { values: a, missing: Some(missing) })?
                }
                None => continue,
            };
            gb.columns.columns.insert(c.clone(), v);
        }
        w.write(&gb)?;
        s = e;
        progress.report(s, Some(n));
    }
    Ok(n)
}

/// Categorical codes of a source table's columns mapped to the codes of a target's, by label
/// (HEP001 §8.7): for appending rows whose categories were numbered by another writer.
pub(crate) struct CategoryRecode {
    /// Per column that needs it: source code → target code, and the target's code type.
    map: std::collections::HashMap<String, (Vec<Option<i64>>, crate::h5col::Dtype, String)>,
}

impl CategoryRecode {
    /// The recoding from `src`'s categorical columns to `dst`'s (checked by
    /// [`check_append_source`]: every source label is a target category).
    pub(crate) fn new(dst: &MarquetTable, src: &MarquetTable) -> Result<CategoryRecode> {
        let mut map = std::collections::HashMap::new();
        for c in appendable(src)?.0 {
            if let (Some(d), Some(sc)) = (categorical::categories_of(dst.table(), &c)?, categorical::categories_of(src.table(), &c)?) {
                let m: Vec<Option<i64>> = sc.labels.iter().map(|l| d.code_of(l)).collect();
                let identity = m.iter().enumerate().all(|(i, x)| *x == Some(i as i64));
                let dcol = dst.table().column(&c)?;
                let dtype = dcol.dtype().to_le();
                if !identity || src.table().column(&c)?.dtype().to_le() != dtype {
                    map.insert(c.clone(), (m, dtype, dcol.path.clone()));
                }
            }
        }
        Ok(CategoryRecode { map })
    }

    /// The values of column `c` with the target's codes (unchanged when `c` needs none).
    pub(crate) fn apply(&self, c: &str, v: ColumnValues) -> Result<ColumnValues> {
        let (Some((map, dtype, path)), ColumnValues::Array { values: a, missing }) = (self.map.get(c), &v) else { return Ok(v) };
        let mut missing = missing.clone().unwrap_or_else(|| vec![false; a.len()]);
        let codes: Vec<i64> = (0..a.len())
            .map(|i| match a.get_i128(i).and_then(|k| usize::try_from(k).ok()).and_then(|k| map.get(k).copied().flatten()) {
                Some(k) if !missing[i] => k,
                _ => {
                    missing[i] = true;
                    0
                }
            })
            .collect();
        Ok(ColumnValues::Array { values: codes_array(dtype, &codes, path)?, missing: Some(missing) })
    }
}

/// Categorical codes as an array of the target column's integer type.
fn codes_array(dtype: &crate::h5col::Dtype, codes: &[i64], path: &str) -> Result<crate::h5col::Array> {
    use crate::h5col::{Array, Dtype};
    Ok(match dtype {
        Dtype::Int { size: 1, signed: true, .. } => Array::from_i8(&codes.iter().map(|&c| c as i8).collect::<Vec<_>>()),
        Dtype::Int { size: 2, signed: true, .. } => Array::from_i16(&codes.iter().map(|&c| c as i16).collect::<Vec<_>>()),
        Dtype::Int { size: 4, signed: true, .. } => Array::from_i32(&codes.iter().map(|&c| c as i32).collect::<Vec<_>>()),
        Dtype::Int { size: 8, signed: true, .. } => Array::from_i64(codes),
        Dtype::Int { size: 1, signed: false, .. } => Array::from_u8(&codes.iter().map(|&c| c as u8).collect::<Vec<_>>()),
        Dtype::Int { size: 2, signed: false, .. } => Array::from_u16(&codes.iter().map(|&c| c as u16).collect::<Vec<_>>()),
        Dtype::Int { size: 4, signed: false, .. } => Array::from_u32(&codes.iter().map(|&c| c as u32).collect::<Vec<_>>()),
        Dtype::Int { size: 8, signed: false, .. } => Array::from_u64(&codes.iter().map(|&c| c as u64).collect::<Vec<_>>()),
        other => return Err(MarquetError::Unsupported(format!("{path}: categorical codes of type {other}"))),
    })
}

//! Changing a Marquet table safely (HEP002 §11): in-place updates of geometries in the
//! order §11.1 prescribes, truncation, and replacing a geometry column (§11.2).

use super::{GeometryColumnSpec, GeometryValues, MarquetTable, RowInfo};
use crate::error::{MarquetError, Result};
use crate::h5;
use crate::h5col::{ColumnValues, ListArray};
use crate::spec::{names, BBox};
use crate::wkb::{self, ByteOrder};

/// The union of an old and a new row for the intermediate covering box (§11.1).
fn union_row(old: &RowInfo, new: &RowInfo) -> RowInfo {
    match (old, new) {
        (RowInfo::Null, RowInfo::Null) => RowInfo::Null,
        (RowInfo::Null, g) | (g, RowInfo::Null) => *g,
        (RowInfo::Geometry(a), RowInfo::Geometry(b)) => {
            let mut g = *b;
            let ba = if a.is_empty { BBox::EMPTY } else { a.bbox };
            let bb = if b.is_empty { BBox::EMPTY } else { b.bbox };
            g.bbox = ba.union(&bb);
            g.is_empty = a.is_empty && b.is_empty;
            RowInfo::Geometry(g)
        }
    }
}

/// The body of [`MarquetTable::update_geometries`].
pub(crate) fn update_geometries(this: &MarquetTable, name: &str, start: u64, values: &GeometryValues) -> Result<()> {
    this.require_interpretable()?;
    let info = this.geometry_column(name)?;
    let values = super::checks::check_values(&info, values, start, this.orientation_on_write())?;
    let (cv, rows) = this.prepare(&info, &values)?;
    let end = start
        .checked_add(rows.len() as u64)
        .filter(|&e| e <= this.nrows().unwrap_or(0))
        .ok_or_else(|| MarquetError::InvalidArgument(format!("rows {start}.. are past NROWS")))?;
    this.widen_summaries(&info, &rows)?;
    h5::flush(this.table.id())?;
    let t = &this.table;
    // All-or-nothing (docs/FAULTS.md F10): the covering rows and the geometry rows — for
    // WKB every entry from `start` on, as the entries after the updated ones move.
    let mut saved = vec![(name, start, if matches!(cv, ColumnValues::List(_)) { this.nrows()? } else { end })];
    if let Some(cov) = &info.covering {
        saved.push((cov.as_str(), start, end));
    }
    crate::h5col::undo::all_or_nothing(t, &saved, || {
        if let Some(cov) = &info.covering {
            let old = this.row_infos(name, start, end)?;
            let both: Vec<RowInfo> = old.iter().zip(&rows).map(|(o, n)| union_row(o, n)).collect();
            t.update_unguarded(cov, start, &this.covering_values(cov, &both)?, &mut |_| Ok(()))?;
        }
        match &cv {
            ColumnValues::List(l) => t.update_list_unguarded(name, start, l, &mut |_| Ok(()))?,
            a => t.update_unguarded(name, start, a, &mut |_| Ok(()))?,
        }
        if let Some(cov) = &info.covering {
            t.update_unguarded(cov, start, &this.covering_values(cov, &rows)?, &mut |_| Ok(()))?;
        }
        Ok(())
    })
}
/// The body of [`MarquetTable::truncate`].
pub(crate) fn truncate(this: &MarquetTable, nrows: u64) -> Result<()> {
    this.truncate_with_options(nrows, this.rtree_on_append())
}
/// The body of [`MarquetTable::replace_geometry_column`].
pub(crate) fn replace_geometry_column(this: &mut MarquetTable, name: &str, spec: &GeometryColumnSpec, transform: Option<&dyn Fn(wkb::Geometry) -> Result<wkb::Geometry>>) -> Result<()> {
    this.require_interpretable()?;
    let old = this.geometry_column(name)?;
    let form = spec.form.ok_or_else(|| MarquetError::InvalidArgument("replacement needs a storage form".into()))?;
    let n = this.nrows()?;
    // Read and convert everything first: nothing changes if a value does not fit.
    let mut vals: Vec<Option<Vec<u8>>> = Vec::with_capacity(n as usize);
    let buf = this.read_wkb(name, 0, n)?;
    for i in 0..buf.len() {
        vals.push(match buf.get(i) {
            None => None,
            Some(w) => Some(match transform {
                None => w.to_vec(),
                Some(f) => {
                    let g = wkb::decode(w).map_err(|e| e.into_marquet(old.path.clone(), Some(i as u64)))?;
                    wkb::encode(&f(g)?, ByteOrder::LittleEndian)
                }
            }),
        });
    }
    let tmp = format!("{name}__replacing");
    let mut tmp_spec = spec.clone();
    if let Some(c) = &spec.covering {
        if Some(c) == old.covering.as_ref() {
            tmp_spec.covering = Some(format!("{c}__replacing"));
        }
    }
    // A writer killed during an earlier replacement may have left its new column (an
    // ordinary H5Col column until step 2, §11.2): not referenced by GEOMETRY_COLUMNS,
    // it is ours to delete before starting again.
    let geo = this.geometry_column_names()?;
    let mut leftovers = vec![tmp.clone()];
    leftovers.extend(tmp_spec.covering.iter().filter(|c| c.ends_with("__replacing")).cloned());
    let mut order = this.table.column_names()?;
    let before = order.len();
    for l in &leftovers {
        if !geo.contains(l) && h5::link_exists(this.table.id(), l)? {
            for idx in crate::h5col::search_index::indexes_of(&this.table, l).unwrap_or_default() {
                crate::h5col::search_index::drop_index(&this.table, &idx)?;
            }
            h5::link_delete(this.table.id(), l)?;
            order.retain(|c| c != l);
        }
    }
    if order.len() != before {
        h5::attr_write_utf8_array(this.table.id(), names::COLUMN_ORDER, &order)?;
    }
    // Step 1.
    this.create_geometry_column(&tmp, &tmp_spec, false)?;
    let mut tmp_info = old.clone();
    tmp_info.name = tmp.clone();
    tmp_info.path = this.table.member_path(&tmp);
    tmp_info.form = form;
    tmp_info.types = None;
    tmp_info.bbox = None;
    tmp_info.covering = tmp_spec.covering.clone();
    // The new column's own CRS, edges and orientation decide its boxes and checks.
    tmp_info.crs = spec.crs.clone();
    tmp_info.epoch = spec.epoch;
    tmp_info.edges = spec.edges.clone().unwrap_or(super::Edges::Planar);
    tmp_info.orientation_ccw = spec.orientation_ccw;
    let vals = GeometryValues::Wkb(vals);
    let vals = super::checks::check_values(&tmp_info, &vals, 0, this.orientation_on_write())?;
    let (cv, rows) = this.prepare(&tmp_info, &vals)?;
    match &cv {
        ColumnValues::List(l) => this.table.list_column(&tmp)?.append_rows_public(0, l)?,
        ColumnValues::Array { .. } => this.table.write_rows_unchecked(&tmp, 0, &cv)?,
    }
    if let Some(cov) = &tmp_info.covering {
        let c = this.covering_values(cov, &rows)?;
        this.table.write_rows_unchecked(cov, 0, &c)?;
    }
    let mut acc = super::SummaryAcc::default();
    acc.add(&rows);
    this.write_exact_summaries(&tmp, form, &acc)?;
    h5::flush(this.table.id())?;
    // Step 2.
    let o = h5::object_open(this.table.id(), &tmp)?;
    h5::attr_write_ascii(o.id(), names::GEOMETRY_ENCODING, form.encoding())?;
    drop(o);
    // On disk before the reference to it: one flush writes the column's and the table's
    // object headers in no fixed order, so a kill inside it could publish a
    // GEOMETRY_COLUMNS entry for a column without GEOMETRY_ENCODING
    // (tests/crash_marquet.rs saw it).
    h5::flush(this.table.id())?;
    let cols: Vec<String> =
        this.geometry_column_names()?.into_iter().map(|c| if c == name { tmp.clone() } else { c }).collect();
    h5::attr_write_refs(this.table.id(), names::GEOMETRY_COLUMNS, &cols, false)?;
    h5::flush(this.table.id())?;
    // Step 4 (step 3, indexes, is left to the caller).
    for idx in crate::h5col::search_index::indexes_of(&this.table, name)? {
        crate::h5col::search_index::drop_index(&this.table, &idx)?;
    }
    let mut order = this.table.column_names()?;
    h5::link_delete(this.table.id(), name)?;
    order.retain(|c| c != name);
    if let Some(c) = &old.covering {
        h5::link_delete(this.table.id(), c)?;
        order.retain(|x| x != c);
    }
    h5::link_move(this.table.id(), &tmp, name)?;
    for c in order.iter_mut() {
        if *c == tmp {
            *c = name.to_string();
        }
    }
    if let (Some(newc), Some(oldc)) = (&tmp_info.covering, &old.covering) {
        if *newc == format!("{oldc}__replacing") {
            h5::link_move(this.table.id(), newc, oldc)?;
            for c in order.iter_mut() {
                if c == newc {
                    *c = oldc.clone();
                }
            }
        }
    }
    h5::attr_write_utf8_array(this.table.id(), names::COLUMN_ORDER, &order)?;
    h5::flush(this.table.id())
}

#[allow(dead_code)]
fn _unused(_: ListArray) {}

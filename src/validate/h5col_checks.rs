//! HEP001 checks: §13 requirements 1–13 and the MUSTs of §5, §7.1, §7.2, §7.6, §8.5.

use std::collections::{BTreeMap, BTreeSet};

use super::checks::{self as c, Check};
use super::{n, read_err, Col, ColumnObj, Ctx};
use super::read::{attr, describe, describe_space, is_strict_ascii, links, read_refs, read_u64_token, Link};
use crate::h5::{self, Dtype, Space};
use crate::h5col::{is_missing, read_token};

pub(crate) const R1: &str = "HEP001 §13 req 1";
pub(crate) const R2: &str = "HEP001 §13 req 2";
pub(crate) const R3: &str = "HEP001 §13 req 3";
pub(crate) const R4: &str = "HEP001 §13 req 4";
pub(crate) const R5: &str = "HEP001 §13 req 5";
pub(crate) const R6: &str = "HEP001 §13 req 6";
pub(crate) const R7: &str = "HEP001 §13 req 7";
pub(crate) const R8: &str = "HEP001 §13 req 8";
pub(crate) const R9: &str = "HEP001 §13 req 9";
pub(crate) const R10: &str = "HEP001 §13 req 10";
pub(crate) const R11: &str = "HEP001 §13 req 11";
pub(crate) const R12: &str = "HEP001 §13 req 12";
pub(crate) const R13: &str = "HEP001 §13 req 13";
pub(crate) const CLASS_RULE: &str = "HEP001 §7.1";
pub(crate) const VERSION_RULE: &str = "HEP001 §7.2";
pub(crate) const SELF_CONTAINED: &str = "HEP001 §7.6";
pub(crate) const FILL_RULE: &str = "HEP001 §8.5";
pub(crate) const REF_RULE: &str = "HEP001 §5";
pub(crate) const LIST_INDEX_RULE: &str = "HEP001 §9.6";

pub(crate) fn run(ctx: &mut Ctx) {
    ctx.is_marquet = h5::attr_exists(ctx.id(), n::MARQUET_VERSION).unwrap_or(false);
    check_class(ctx);
    check_version(ctx);
    req1_nrows(ctx);
    check_self_contained(ctx);
    req2_extents(ctx);
    check_fill_values(ctx);
    req4_search_index_lists(ctx);
    req3_search_indexes_group(ctx);
    req5_categories(ctx);
    req6_column_order(ctx);
    req7_index_columns(ctx);
    req8_categorical_fill(ctx);
    req9_index_content(ctx);
    req10_list_columns(ctx);
    req11_no_vlen_in_lists(ctx);
    req12_validity_tokens(ctx);
    req13_boolean_columns(ctx);
}

// ------------------------------------------------------------------ helpers

fn join(parent: &str, name: &str) -> String {
    if parent == "/" {
        format!("/{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// Stream a rank-1 dataset's elements in batches of `batch` as bytes of `mem`.
pub(crate) fn stream(
    ds: hdf5_sys::h5i::hid_t,
    path: &str,
    start: u64,
    end: u64,
    batch: u64,
    mem: &Dtype,
    mut f: impl FnMut(u64, &[u8]) -> bool,
) -> crate::Result<()> {
    let es = mem.size().max(1);
    let mut s = start;
    while s < end {
        let cnt = (end - s).min(batch.max(1));
        let buf = h5::dataset_read(ds, s, cnt, mem, path)?;
        for (i, e) in buf.chunks_exact(es).enumerate() {
            if !f(s + i as u64, e) {
                return Ok(());
            }
        }
        s += cnt;
    }
    Ok(())
}

/// Open a member object of the table (by name) or report it.
pub(crate) fn open(ctx: &mut Ctx, rel: &str, rule: &'static str) -> Option<h5::Hid> {
    match h5::object_open(ctx.id(), rel) {
        Ok(o) => Some(o),
        Err(e) => {
            let p = ctx.member_path(rel);
            ctx.sink.unreadable(rule, &p, read_err(&e));
            None
        }
    }
}

// ------------------------------------------------------------------ §7.1, §7.2, req 1

/// HEP001 §7.1: CLASS is a 13-byte null-terminated fixed-length ASCII string (R3: other
/// string storage is accepted with a warning).
fn check_class(ctx: &mut Ctx) {
    let p = ctx.path.clone();
    if let Some(a) = attr(ctx, ctx.id(), &p, n::CLASS, CLASS_RULE) {
        if !is_strict_ascii(&a.dtype, n::COLUMN_TABLE) || a.space != Space::Scalar {
            ctx.sink.warn(
                CLASS_RULE,
                &p,
                format!(
                    "class is a {} {}, expected a scalar null-terminated fixed-length ascii string of 13 bytes (accepted leniently, ruling r3)",
                    describe(&a.dtype),
                    describe_space(&a.space)
                ),
            );
        }
    }
}

/// HEP001 §7.2: VERSION present, fixed-length ASCII sized to the value, MAJOR ≤ 1.
fn check_version(ctx: &mut Ctx) {
    let p = ctx.path.clone();
    let Some(a) = attr(ctx, ctx.id(), &p, n::VERSION, VERSION_RULE) else {
        ctx.sink.error(c::H_VERSION_PRESENT, &p, "version attribute is missing; expected \"1.0\"");
        return;
    };
    let Some(v) = a.as_str().map(|s| s.trim_end().to_string()) else {
        ctx.sink.error(c::H_VERSION_PRESENT, &p, format!("version is {} {}, expected a scalar string", describe(&a.dtype), describe_space(&a.space)));
        return;
    };
    if !is_strict_ascii(&a.dtype, &v) {
        ctx.sink.warn(
            VERSION_RULE,
            &p,
            format!("version is a {}, expected null-terminated fixed-length ascii sized to the value (accepted leniently, ruling r3)", describe(&a.dtype)),
        );
    }
    match crate::h5col::parse_version(&v) {
        None => ctx.sink.error(c::H_VERSION_VALUE, &p, format!("version {v:?} is not major.minor")),
        Some((major, _, _)) if major > 1 => {
            ctx.sink.error(c::H_VERSION_VALUE, &p, format!("unsupported h5col version {v:?}: this validator implements 1.x"))
        }
        _ => {}
    }
}

/// HEP001 §13 req 1: a scalar uint64 NROWS.
fn req1_nrows(ctx: &mut Ctx) {
    let p = ctx.path.clone();
    ctx.nrows = read_u64_token(ctx, ctx.id(), &p, n::NROWS, c::H1_NROWS, true);
}

// ------------------------------------------------------------------ §7.6 and discovery

/// HEP001 §7.6: only column datasets, list columns, CATEGORIES and SEARCH_INDEXES below the
/// table group, all hard links; also discovers the columns (§8.2). Named datatypes whose
/// type HEP002 defines are left to HEP002 req 17 in a Marquet table.
fn check_self_contained(ctx: &mut Ctx) {
    let p = ctx.path.clone();
    let grp = ctx.grp.clone();
    let members = match links(&grp) {
        Ok(m) => m,
        Err(e) => {
            ctx.sink.unreadable(SELF_CONTAINED, &p, format!("cannot list the members: {e}"));
            return;
        }
    };
    for (name, kind) in members {
        let mp = join(&p, &name);
        match kind {
            Link::Soft | Link::External => ctx.sink.error(
                c::H_HARD_LINKS,
                &mp,
                format!("{} link below the table group; only hard links to columns, categories and search_indexes are allowed", if kind == Link::Soft { "soft" } else { "external" }),
            ),
            Link::Unknown(e) => ctx.sink.unreadable(SELF_CONTAINED, &mp, format!("cannot determine the object type: {e}")),
            Link::Datatype => named_datatype(ctx, ctx.id(), &name, &mp),
            Link::Dataset => {
                let info = h5::dataset_open(ctx.id(), &name).and_then(|d| h5::dataset_info(d.id(), &mp));
                match info {
                    Ok(info) if info.dims.len() == 1 => {
                        ctx.columns.push(Col { name: name.clone(), path: mp, obj: ColumnObj::Dataset(info) })
                    }
                    Ok(info) => ctx.sink.error(
                        c::H_NO_STRAY_OBJECTS,
                        &mp,
                        format!("dataset of rank {} below the table group is not a column (columns are rank 1)", info.dims.len()),
                    ),
                    Err(e) => ctx.sink.unreadable(SELF_CONTAINED, &mp, read_err(&e)),
                }
            }
            Link::Group => {
                let Ok(g) = grp.group(&name) else {
                    ctx.sink.unreadable(SELF_CONTAINED, &mp, "cannot open the group");
                    continue;
                };
                if name == n::SEARCH_INDEXES || name == n::CATEGORIES {
                    let check = if name == n::SEARCH_INDEXES { c::H3_DATASETS_ONLY } else { c::H5_CATEGORIES_DATASETS };
                    walk_subtree(ctx, &g, &mp, Some(check), 0);
                    continue;
                }
                match read_token(g.id(), n::CLASS) {
                    Ok(Some(c)) if c == n::LIST_COLUMN => {
                        ctx.columns.push(Col { name: name.clone(), path: mp.clone(), obj: ColumnObj::List });
                        walk_subtree(ctx, &g, &mp, None, 0);
                    }
                    Ok(Some(c)) if c == n::COLUMN_TABLE => ctx.sink.error(
                        c::H_NO_STRAY_OBJECTS,
                        &mp,
                        "a table group inside a table group; other tables must be siblings, not descendants",
                    ),
                    _ => ctx.sink.error(
                        c::H_NO_STRAY_OBJECTS,
                        &mp,
                        "stray group below the table group: not a list column (class \"LIST_COLUMN\"), categories or search_indexes",
                    ),
                }
            }
        }
    }
    ctx.columns.sort_by(|a, b| a.name.cmp(&b.name));
}

/// Walk a reserved subgroup or list column: links must be hard, named datatypes are
/// reported; in SEARCH_INDEXES / CATEGORIES (`datasets_only` = the sub-check) anything but
/// a dataset breaks that sub-check.
fn walk_subtree(ctx: &mut Ctx, g: &hdf5::Group, gp: &str, datasets_only: Option<Check>, depth: usize) {
    if depth > 64 {
        ctx.sink.error(c::H10_NESTING, gp, "groups nested more than 64 levels deep");
        return;
    }
    let members = match links(g) {
        Ok(m) => m,
        Err(e) => {
            ctx.sink.unreadable(SELF_CONTAINED, gp, format!("cannot list the members: {e}"));
            return;
        }
    };
    for (name, kind) in members {
        let mp = join(gp, &name);
        match kind {
            Link::Soft | Link::External => ctx.sink.error(c::H_HARD_LINKS, &mp, "symbolic link below the table group"),
            Link::Unknown(e) => ctx.sink.unreadable(SELF_CONTAINED, &mp, format!("cannot determine the object type: {e}")),
            Link::Datatype => named_datatype(ctx, g.id(), &name, &mp),
            Link::Dataset => {}
            Link::Group => {
                if let Some(check) = datasets_only {
                    ctx.sink.error(check, &mp, "a group here; only datasets are allowed");
                } else if let Ok(sub) = g.group(&name) {
                    walk_subtree(ctx, &sub, &mp, None, depth + 1);
                }
            }
        }
    }
}

fn named_datatype(ctx: &mut Ctx, loc: hdf5_sys::h5i::hid_t, name: &str, mp: &str) {
    let dt = h5::object_open(loc, name).ok().and_then(|t| Dtype::from_hid(t.id()).ok());
    if ctx.is_marquet && dt.as_ref().is_some_and(super::read::is_marquet_datatype) {
        ctx.named_marquet_types.push(mp.to_string());
    } else {
        ctx.sink.error(
            c::H_NO_NAMED_TYPES,
            mp,
            format!(
                "named datatype ({}) below the table group; only columns, categories and search_indexes are allowed",
                dt.map(|d| describe(&d)).unwrap_or_else(|| "unreadable".into())
            ),
        );
    }
}

// ------------------------------------------------------------------ req 2

/// HEP001 §13 req 2: every column dataset has the same first-dimension extent, ≥ NROWS.
fn req2_extents(ctx: &mut Ctx) {
    let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
    for c in &ctx.columns {
        if let ColumnObj::Dataset(i) = &c.obj {
            *counts.entry(i.dims[0]).or_insert(0) += 1;
        }
    }
    // The most common extent is the reference (ties: the larger).
    let Some((&common, _)) = counts.iter().max_by_key(|(e, c)| (**c, **e)) else { return };
    let reference = ctx
        .columns
        .iter()
        .find(|c| matches!(&c.obj, ColumnObj::Dataset(i) if i.dims[0] == common))
        .map(|c| c.name.clone())
        .unwrap_or_default();
    let nrows = ctx.nrows;
    let mut out = Vec::new();
    for c in &ctx.columns {
        if let ColumnObj::Dataset(i) = &c.obj {
            let e = i.dims[0];
            if e != common {
                out.push((c::H2_EXTENTS_EQUAL, c.path.clone(), format!("extent {e} differs from extent {common} of column '{reference}'")));
            } else if let Some(nr) = nrows.filter(|nr| e < *nr) {
                out.push((c::H2_EXTENT_NROWS, c.path.clone(), format!("extent {e} is less than nrows {nr}")));
            }
        }
    }
    for (k, p, m) in out {
        ctx.sink.error(k, &p, m);
    }
}

// ------------------------------------------------------------------ §8.5 fill values

/// HEP001 §8.5: every column dataset except boolean columns declares a user-defined fill
/// value, outside `[valid_min, valid_max]` when those are present; no `MASK` attribute.
fn check_fill_values(ctx: &mut Ctx) {
    let cols = ctx.columns.clone();
    for c in &cols {
        let ColumnObj::Dataset(info) = &c.obj else { continue };
        let Ok(ds) = h5::dataset_open(ctx.id(), &c.name) else { continue };
        if h5::attr_exists(ds.id(), n::MASK).unwrap_or(false) {
            ctx.sink.error(c::H_NO_MASK_ATTR, &c.path, "column dataset carries a mask attribute, which this revision reserves");
        }
        if info.dtype.is_boolean() {
            continue; // req 13
        }
        let Some(fill) = &info.fill else {
            ctx.sink.error(c::H_FILL_DECLARED, &c.path, "column dataset declares no user-defined fill value (h5pset_fill_value)");
            continue;
        };
        let lo = attr(ctx, ds.id(), &c.path, n::VALID_MIN, FILL_RULE);
        let hi = attr(ctx, ds.id(), &c.path, n::VALID_MAX, FILL_RULE);
        let f = scalar_num(&info.dtype, fill);
        let lo = lo.and_then(|a| scalar_num(&a.dtype, &a.data));
        let hi = hi.and_then(|a| scalar_num(&a.dtype, &a.data));
        if let (Some(f), Some(lo), Some(hi)) = (f, lo, hi) {
            if !f.is_nan() && f >= lo && f <= hi {
                ctx.sink.error(c::H_FILL_OUTSIDE_VALID, &c.path, format!("fill value {f} lies inside [valid_min {lo}, valid_max {hi}]; expected strictly outside"));
            }
        }
    }
}

/// A numeric element as f64 (ints may round; enough for range tests).
fn scalar_num(d: &Dtype, b: &[u8]) -> Option<f64> {
    match d {
        Dtype::Int { size, signed, .. } if b.len() >= *size => {
            let v = h5::int_from_bytes(&b[..*size], *signed, false);
            Some(if *signed || *size < 8 { v as f64 } else { v as u64 as f64 })
        }
        Dtype::Float { size: 8, .. } => Some(f64::from_le_bytes(b.get(..8)?.try_into().ok()?)),
        Dtype::Float { size: 4, .. } => Some(f32::from_le_bytes(b.get(..4)?.try_into().ok()?) as f64),
        Dtype::Enum { base, .. } => scalar_num(base, b),
        _ => None,
    }
}

// ------------------------------------------------------------------ req 3, 4

/// HEP001 §13 req 3: SEARCH_INDEXES holds only datasets (search indexes with KIND,
/// accompanying datasets without). Groups are reported during the walk; here, KIND must be
/// a string.
fn req3_search_indexes_group(ctx: &mut Ctx) {
    let Ok(si) = ctx.grp.group(n::SEARCH_INDEXES) else { return };
    let Ok(members) = links(&si) else { return };
    let sp = ctx.member_path(n::SEARCH_INDEXES);
    for (name, k) in members {
        if k != Link::Dataset {
            continue;
        }
        let mp = join(&sp, &name);
        if let Ok(ds) = h5::dataset_open(si.id(), &name) {
            if let Some(a) = attr(ctx, ds.id(), &mp, n::KIND, R3) {
                if a.as_str().is_none() {
                    ctx.sink.error(c::H3_KIND_STRING, &mp, format!("kind is {} {}, expected a scalar string token", describe(&a.dtype), describe_space(&a.space)));
                }
            }
        }
    }
}

/// HEP001 §13 req 4: every SEARCH_INDEX_LIST element resolves to a search-index dataset
/// (with KIND) in this table's SEARCH_INDEXES. List columns may reference only kinds that
/// apply to list columns (HEP002's two kinds, ruling R14).
fn req4_search_index_lists(ctx: &mut Ctx) {
    let prefix = format!("{}/", ctx.member_path(n::SEARCH_INDEXES));
    let cols = ctx.columns.clone();
    for c in &cols {
        let Some(o) = open(ctx, &c.name, R4) else { continue };
        let Some((refs, space)) = read_refs(ctx, o.id(), &c.path, n::SEARCH_INDEX_LIST, c::H_REF_TYPE, R4) else { continue };
        if !matches!(space, Space::Simple(ref d) if d.len() == 1) {
            ctx.sink.error(c::H4_LIST_SHAPE, &c.path, format!("search_index_list has {}, expected a one-dimensional array", describe_space(&space)));
        }
        for (i, r) in refs.iter().enumerate() {
            let Some(target) = r else {
                ctx.sink.error(c::H4_LIST_RESOLVES, &c.path, format!("search_index_list element {i} is a null or dangling reference"));
                continue;
            };
            if !target.starts_with(&prefix) || target[prefix.len()..].contains('/') {
                ctx.sink.error(c::H4_LIST_RESOLVES, &c.path, format!("search_index_list element {i} references {target}, expected a dataset in {}", prefix.trim_end_matches('/')));
                continue;
            }
            let kind = match h5::dataset_open(ctx.id(), target) {
                Ok(ds) => read_token(ds.id(), n::KIND).ok().flatten(),
                Err(_) => {
                    ctx.sink.error(c::H4_LIST_RESOLVES, &c.path, format!("search_index_list element {i} references {target}, which is not a dataset"));
                    continue;
                }
            };
            let Some(kind) = kind else {
                ctx.sink.error(c::H4_LIST_TARGETS, &c.path, format!("search_index_list element {i} references {target}, which has no kind (an accompanying dataset, not a search index)"));
                continue;
            };
            if matches!(c.obj, ColumnObj::List)
                && !(ctx.is_marquet && (kind == n::KIND_BLOCK_BBOX || kind == n::KIND_PACKED_RTREE))
            {
                ctx.sink.error(c::H_LIST_INDEX_KINDS, &c.path, format!("list column references a {kind} index; only kinds declared for list columns are allowed"));
            }
            ctx.index_links.push((target.clone(), c.name.clone()));
        }
    }
}

// ------------------------------------------------------------------ req 5, 8

/// HEP001 §13 req 5: CATEGORIES references resolve into this table's CATEGORIES group,
/// which holds only categories datasets, each referenced by at least one column.
fn req5_categories(ctx: &mut Ctx) {
    let cat_prefix = format!("{}/", ctx.member_path(n::CATEGORIES));
    let mut referenced = BTreeSet::new();
    let cols = ctx.columns.clone();
    for c in &cols {
        let ColumnObj::Dataset(info) = &c.obj else { continue };
        let Some(o) = open(ctx, &c.name, R5) else { continue };
        let Some((refs, space)) = read_refs(ctx, o.id(), &c.path, n::CATEGORIES, c::H_REF_TYPE, R5) else { continue };
        if space != Space::Scalar || refs.len() != 1 {
            ctx.sink.error(c::H5_CATEGORIES_REF, &c.path, format!("categories has {}, expected a scalar reference", describe_space(&space)));
        }
        if !matches!(info.dtype, Dtype::Int { .. }) {
            ctx.sink.error(c::H5_CATEGORICAL_INT, &c.path, format!("categorical column has datatype {}, expected an integer type", describe(&info.dtype)));
        }
        for r in refs {
            match r {
                Some(t) if t.starts_with(&cat_prefix) && !t[cat_prefix.len()..].contains('/') => {
                    referenced.insert(t);
                }
                Some(t) => ctx.sink.error(c::H5_CATEGORIES_REF, &c.path, format!("categories references {t}, expected a dataset in {}", cat_prefix.trim_end_matches('/'))),
                None => ctx.sink.error(c::H5_CATEGORIES_REF, &c.path, "categories is a null or dangling reference"),
            }
        }
    }
    let Ok(cg) = ctx.grp.group(n::CATEGORIES) else { return };
    let Ok(members) = links(&cg) else { return };
    for (name, k) in members {
        if k != Link::Dataset {
            continue;
        }
        let mp = format!("{cat_prefix}{name}");
        if let Ok(info) = h5::dataset_open(cg.id(), &name).and_then(|d| h5::dataset_info(d.id(), &mp)) {
            if info.dims.len() != 1 {
                ctx.sink.error(c::H5_CATEGORIES_RANK, &mp, format!("categories dataset has rank {}, expected 1", info.dims.len()));
            }
        }
        if !referenced.contains(&mp) {
            ctx.sink.error(c::H5_CATEGORIES_USED, &mp, "categories dataset is not referenced by any categorical column");
        }
    }
}

/// HEP001 §13 req 8: a categorical column's fill is not a valid code `[0, K)`.
fn req8_categorical_fill(ctx: &mut Ctx) {
    let cols = ctx.columns.clone();
    for c in &cols {
        let ColumnObj::Dataset(info) = &c.obj else { continue };
        let Ok(o) = h5::object_open(ctx.id(), &c.name) else { continue };
        let Ok(Some((refs, _, _))) = h5::attr_read_refs(o.id(), n::CATEGORIES) else { continue };
        let Some(Some(target)) = refs.first() else { continue };
        let Ok(k) = h5::dataset_open(ctx.id(), target).and_then(|d| h5::dataset_info(d.id(), target)) else { continue };
        let count = k.dims.first().copied().unwrap_or(0) as f64;
        if let Some(f) = info.fill.as_deref().and_then(|f| scalar_num(&info.dtype, f)) {
            if f >= 0.0 && f < count {
                ctx.sink.error(c::H8_CATEGORICAL_FILL, &c.path, format!("fill value {f} is a valid category code (0..{count}); expected a value outside it"));
            }
        }
    }
}

// ------------------------------------------------------------------ req 6, 7

/// HEP001 §13 req 6: column-order lists every column exactly once and nothing else.
fn req6_column_order(ctx: &mut Ctx) {
    let p = ctx.path.clone();
    let Some(a) = attr(ctx, ctx.id(), &p, n::COLUMN_ORDER, R6) else { return };
    if !a.dtype.is_string() || !matches!(a.space, Space::Simple(ref d) if d.len() == 1) {
        ctx.sink.error(c::H6_ORDER_TYPE, &p, format!("column-order is {} {}, expected a one-dimensional string array", describe(&a.dtype), describe_space(&a.space)));
        return;
    }
    let mut seen = BTreeSet::new();
    for name in &a.strings {
        if !seen.insert(name.clone()) {
            ctx.sink.error(c::H6_ORDER_UNIQUE, &p, format!("column-order lists '{name}' more than once"));
        } else if ctx.column(name).is_none() {
            ctx.sink.error(c::H6_ORDER_COLUMNS, &p, format!("column-order lists '{name}', which is not a column"));
        }
    }
    let missing: Vec<String> = ctx.columns.iter().filter(|c| !seen.contains(&c.name)).map(|c| c.name.clone()).collect();
    for m in missing {
        ctx.sink.error(c::H6_ORDER_COMPLETE, &p, format!("column-order does not list column '{m}'"));
    }
}

/// HEP001 §13 req 7: INDEX_COLUMNS references non-null direct-child column datasets (not
/// list columns); `_index` equals the name of `INDEX_COLUMNS[0]`.
fn req7_index_columns(ctx: &mut Ctx) {
    let p = ctx.path.clone();
    let Some((refs, space)) = read_refs(ctx, ctx.id(), &p, n::INDEX_COLUMNS, c::H_REF_TYPE, R7) else { return };
    if !matches!(space, Space::Simple(ref d) if d.len() == 1) {
        ctx.sink.error(c::H7_INDEX_RESOLVE, &p, format!("index_columns has {}, expected a one-dimensional array", describe_space(&space)));
    }
    let mut first = None;
    for (i, r) in refs.iter().enumerate() {
        match r.as_deref().map(|t| (t, ctx.column_by_path(t).map(|c| (c.name.clone(), matches!(c.obj, ColumnObj::List))))) {
            None => ctx.sink.error(c::H7_INDEX_RESOLVE, &p, format!("index_columns element {i} is a null or dangling reference")),
            Some((t, None)) => ctx.sink.error(c::H7_INDEX_RESOLVE, &p, format!("index_columns element {i} references {t}, which is not a column dataset of the table")),
            Some((t, Some((_, true)))) => ctx.sink.error(c::H7_INDEX_NOT_LIST, &p, format!("index_columns element {i} references list column {t}; expected a column dataset")),
            Some((_, Some((name, false)))) => {
                if i == 0 {
                    first = Some(name);
                }
            }
        }
    }
    if let (Some(first), Ok(Some(idx))) = (first, read_token(ctx.id(), n::INDEX_NAME)) {
        if idx != first {
            ctx.sink.error(c::H7_INDEX_NAME, &p, format!("_index is '{idx}' but index_columns[0] is '{first}'"));
        }
    }
}

// ------------------------------------------------------------------ req 9

/// HEP001 §13 req 9: an index of a HEP001 kind that passes its validity check describes its
/// column. Every HEP001 kind is verified against the data (SORTED_ROWS exactly, BITMAP bit
/// by bit, CHUNK_BLOOM for false negatives). HEP002's kinds are HEP002 req 16.
fn req9_index_content(ctx: &mut Ctx) {
    let links = ctx.index_links.clone();
    for (ip, col) in links {
        let Ok(ds) = h5::dataset_open(ctx.id(), &ip) else { continue };
        let kind = read_token(ds.id(), n::KIND).ok().flatten().unwrap_or_default();
        if kind == n::KIND_BLOCK_BBOX || kind == n::KIND_PACKED_RTREE {
            continue;
        }
        let sg = h5::attr_read(ds.id(), n::SOURCE_GENERATION).ok().flatten().and_then(|a| a.as_u64());
        let sn = h5::attr_read(ds.id(), n::SOURCE_NROWS).ok().flatten().and_then(|a| a.as_u64());
        let (Some(nrows), Some(g)) = (ctx.nrows, ctx.generation_value()) else { continue };
        if sg != Some(g) || sn != Some(nrows) {
            continue; // stale: exempt (R12)
        }
        match kind.as_str() {
            k if k == n::KIND_CHUNK_MINMAX => check_chunk_minmax(ctx, &ip, ds.id(), &col, nrows),
            k if k == n::KIND_SORTED_ROWS || k == n::KIND_BITMAP || k == n::KIND_CHUNK_BLOOM => check_other_index(ctx, &ip, k, &col, nrows),
            other => ctx.sink.warn(R9, &ip, format!("unknown search-index kind {other:?}; consumers ignore it")),
        }
    }
}

/// Largest column (bytes) read whole to verify a SORTED_ROWS, BITMAP or CHUNK_BLOOM index.
const MAX_VERIFY_BYTES: u64 = 1 << 31;

/// SORTED_ROWS, BITMAP and CHUNK_BLOOM content against the column (HEP001 §11.5–§11.7),
/// through `h5col::search_index::verify_index`. The column is read whole (one index at a time).
fn check_other_index(ctx: &mut Ctx, ip: &str, kind: &str, col: &str, nrows: u64) {
    let Some(ColumnObj::Dataset(info)) = ctx.column(col).map(|c| c.obj.clone()) else {
        ctx.sink.error(c::H9_ON_LIST, ip, format!("{kind} index on list column '{col}'"));
        return;
    };
    let cpath = ctx.member_path(col);
    let Ok(cds) = h5::dataset_open(ctx.id(), col) else { return };
    if info.dims.first().copied().unwrap_or(0) < nrows {
        return; // req 2 reports the short extent
    }
    let mem = info.dtype.to_le();
    // The column is read whole: refuse (as "not verified") what would not fit in memory.
    if nrows.saturating_mul(mem.size() as u64) > MAX_VERIFY_BYTES {
        return ctx.sink.warn(R9, ip, format!("{kind} over {nrows} rows is not verified (more than {MAX_VERIFY_BYTES} bytes of column)"));
    }
    let a = match h5::dataset_read(cds.id(), 0, nrows, &mem, &cpath) {
        Ok(b) => crate::h5col::Array { dtype: mem, bytes: b },
        Err(e) => return ctx.sink.unreadable(R9, &cpath, read_err(&e)),
    };
    let chunk = info.chunk.as_ref().and_then(|c| c.first().copied()).unwrap_or(nrows).max(1);
    let check = match kind {
        k if k == n::KIND_SORTED_ROWS => c::H9_SORTED_CONTENT,
        k if k == n::KIND_BITMAP => c::H9_BITMAP_CONTENT,
        _ => c::H9_BLOOM_CONTENT,
    };
    for problem in crate::h5col::search_index::verify_index(ctx.id(), kind, ip, &a, info.fill.as_deref(), chunk, nrows) {
        ctx.sink.error(check, ip, format!("column '{col}': {problem}"));
    }
}

impl Ctx<'_> {
    /// GENERATION as a scalar unsigned integer, if so.
    pub(crate) fn generation_value(&mut self) -> Option<u64> {
        if self.generation.is_none() {
            self.generation = h5::attr_read(self.id(), n::GENERATION).ok().flatten().and_then(|a| a.as_u64());
        }
        self.generation
    }
}

#[derive(Clone, Copy, PartialEq, PartialOrd, Debug)]
enum Num {
    I(i128),
    F(f64),
}

fn show(v: Num) -> String {
    match v {
        Num::I(i) => i.to_string(),
        Num::F(f) => format!("{f:?}"),
    }
}

fn num(d: &Dtype, b: &[u8]) -> Option<Num> {
    match d {
        Dtype::Int { size, signed, .. } if b.len() >= *size && *size <= 8 => {
            let v = h5::int_from_bytes(&b[..*size], *signed, false);
            Some(Num::I(if *signed || *size < 8 { v as i128 } else { v as u64 as i128 }))
        }
        Dtype::Float { size: 8, .. } => Some(Num::F(f64::from_le_bytes(b.get(..8)?.try_into().ok()?))),
        Dtype::Float { size: 4, .. } => Some(Num::F(f32::from_le_bytes(b.get(..4)?.try_into().ok()?) as f64)),
        Dtype::Enum { base, .. } => num(base, b),
        _ => None,
    }
}

fn check_chunk_minmax(ctx: &mut Ctx, ip: &str, ids: hdf5_sys::h5i::hid_t, col: &str, nrows: u64) {
    let Some(ColumnObj::Dataset(info)) = ctx.column(col).map(|c| c.obj.clone()) else {
        ctx.sink.error(c::H9_ON_LIST, ip, format!("chunk_minmax index on list column '{col}'"));
        return;
    };
    let elem = info.dtype.to_le();
    if num(&elem, &vec![0u8; elem.size()]).is_none() {
        ctx.sink.warn(R9, ip, format!("chunk_minmax over a column of {} is not verified", describe(&info.dtype)));
        return;
    }
    let iinfo = match h5::dataset_info(ids, ip) {
        Ok(i) => i,
        Err(e) => return ctx.sink.unreadable(R9, ip, read_err(&e)),
    };
    let Dtype::Compound { fields, .. } = iinfo.dtype.to_le() else {
        return ctx.sink.error(c::H9_MINMAX_LAYOUT, ip, format!("chunk_minmax datatype is {}, expected a compound", describe(&iinfo.dtype)));
    };
    let f = |name: &str| fields.iter().find(|f| f.name == name).cloned();
    let (Some(fmin), Some(fmax), Some(fnan), Some(ffill), Some(fn_)) = (f("min"), f("max"), f("nan_count"), f("fill_count"), f("n")) else {
        return ctx.sink.error(c::H9_MINMAX_LAYOUT, ip, "chunk_minmax datatype lacks one of the fields min, max, nan_count, fill_count, n");
    };
    let chunk = info.chunk.as_ref().and_then(|c| c.first().copied()).unwrap_or(nrows).max(1);
    let nchunks = nrows.div_ceil(chunk);
    if iinfo.dims.first().copied().unwrap_or(0) < nchunks {
        return ctx.sink.error(c::H9_MINMAX_LAYOUT, ip, format!("chunk_minmax has {} entries, expected at least {nchunks} for nrows {nrows}", iinfo.dims.first().copied().unwrap_or(0)));
    }
    let cpath = ctx.member_path(col);
    let Ok(cds) = h5::dataset_open(ctx.id(), col) else { return };
    let fill = info.fill.clone();
    let is_float = matches!(elem, Dtype::Float { .. });
    let batch = ctx.opts.batch_rows;
    let imem = iinfo.dtype.to_le();
    let es = imem.size();
    for j in 0..nchunks {
        let entry = match h5::dataset_read(ids, j, 1, &imem, ip) {
            Ok(e) => e,
            Err(e) => return ctx.sink.unreadable(R9, ip, read_err(&e)),
        };
        let field = |fl: &crate::h5::Field| entry.get(fl.offset..fl.offset + fl.dtype.size()).and_then(|b| num(&fl.dtype, b));
        let (s, e) = (j * chunk, ((j + 1) * chunk).min(nrows));
        let (mut nan, mut fc, mut lo, mut hi) = (0u64, 0u64, None::<Num>, None::<Num>);
        let r = stream(cds.id(), &cpath, s, e, batch, &elem, |_, v| {
            let x = num(&elem, v);
            let isnan = matches!(x, Some(Num::F(f)) if f.is_nan());
            let miss = is_missing(&elem, v, fill.as_deref());
            if isnan {
                nan += 1;
            }
            if miss {
                fc += 1;
            }
            if !isnan && !miss {
                if let Some(x) = x {
                    lo = Some(match lo { Some(l) if l <= x => l, _ => x });
                    hi = Some(match hi { Some(h) if h >= x => h, _ => x });
                }
            }
            true
        });
        if let Err(err) = r {
            return ctx.sink.unreadable(R9, &cpath, read_err(&err));
        }
        if !is_float {
            nan = 0;
        }
        let _ = es;
        let want_n = e - s;
        let got = |fl: &crate::h5::Field| match field(fl) {
            Some(Num::I(v)) => v,
            _ => -1,
        };
        let mut bad = Vec::new();
        if got(&fn_) != want_n as i128 {
            bad.push(format!("n {} but the chunk has {want_n} rows", got(&fn_)));
        }
        if got(&fnan) != nan as i128 {
            bad.push(format!("nan_count {} but the chunk has {nan}", got(&fnan)));
        }
        if got(&ffill) != fc as i128 {
            bad.push(format!("fill_count {} but the chunk has {fc}", got(&ffill)));
        }
        if let (Some(lo), Some(hi), Some(emin), Some(emax)) = (lo, hi, field(&fmin), field(&fmax)) {
            if emin > lo || emax < hi {
                bad.push(format!("[min {}, max {}] does not contain the chunk's values [{}, {}]", show(emin), show(emax), show(lo), show(hi)));
            }
        }
        for b in bad {
            ctx.sink.error(c::H9_MINMAX_CONTENT, ip, format!("entry {j} (rows {s}..{e}) of column '{col}': {b}"));
        }
    }
}

// ------------------------------------------------------------------ req 10, 11

/// HEP001 §13 req 10: every list column satisfies §9 at every level.
fn req10_list_columns(ctx: &mut Ctx) {
    let Some(nrows) = ctx.nrows else { return };
    let cols = ctx.columns.clone();
    for c in &cols {
        if !matches!(c.obj, ColumnObj::List) {
            continue;
        }
        let Ok(g) = ctx.grp.group(&c.name) else { continue };
        check_list_level(ctx, &g, &c.path, nrows, true, 0);
    }
}

fn check_list_level(ctx: &mut Ctx, g: &hdf5::Group, gp: &str, l: u64, top: bool, depth: usize) {
    if depth > 32 {
        return ctx.sink.error(c::H10_NESTING, gp, "list columns nested more than 32 levels deep");
    }
    let class = attr(ctx, g.id(), gp, n::CLASS, R10);
    let is_strings = class.as_ref().and_then(|a| a.as_str()) == Some(n::STRING_VALUES);
    if let Some(a) = &class {
        let v = a.as_str().unwrap_or("");
        if !is_strict_ascii(&a.dtype, v) {
            ctx.sink.warn(CLASS_RULE, gp, format!("class is a {}, expected null-terminated fixed-length ascii (accepted leniently, ruling r3)", describe(&a.dtype)));
        }
    }
    if !is_strings {
        match attr(ctx, g.id(), gp, n::KIND, R10) {
            None => return ctx.sink.error(c::H10_KIND, gp, "list column has no kind attribute; expected \"OFFSETS\""),
            Some(a) => match a.as_str() {
                Some(k) if k == n::KIND_OFFSETS => {
                    if !is_strict_ascii(&a.dtype, k) {
                        ctx.sink.warn(CLASS_RULE, gp, format!("kind is a {}, expected null-terminated fixed-length ascii (accepted leniently, ruling r3)", describe(&a.dtype)));
                    }
                }
                // HEP001 §9.1: only OFFSETS is defined; a later revision may register more
                // (then: present but unreadable, a warning). A table that declares a
                // revision this validator implements (1.0) cannot hold another kind: an
                // error, or a damaged KIND would pass as conformant (issue #19).
                Some(k) => {
                    let declared = read_token(ctx.id(), n::VERSION).ok().flatten().and_then(|v| crate::h5col::parse_version(&v));
                    let ours = crate::h5col::parse_version(n::H5COL_VERSION);
                    return match (declared, ours) {
                        (Some(d), Some(o)) if (d.0, d.1) > (o.0, o.1) => ctx.sink.warn(
                            R10,
                            gp,
                            format!("list kind {k:?} is not defined by HEP001 {}; the table declares a later revision, so the column is present but unreadable here", n::H5COL_VERSION),
                        ),
                        _ => ctx.sink.error(
                            c::H10_KIND,
                            gp,
                            format!("list kind {k:?} is not defined by HEP001 {} (only \"OFFSETS\"), which this table declares", n::H5COL_VERSION),
                        ),
                    };
                }
                None => return ctx.sink.error(c::H10_KIND, gp, "kind is not a string"),
            },
        }
    }
    let leaf_name = if is_strings { n::CHARS } else { n::VALUES };
    let members = match links(g) {
        Ok(m) => m,
        Err(e) => return ctx.sink.unreadable(R10, gp, format!("cannot list the members: {e}")),
    };
    for (name, _) in &members {
        if name != n::OFFSETS && name != n::MASK && name != leaf_name {
            ctx.sink.error(c::H10_MEMBERS, &join(gp, name), format!("unexpected member of a {}; only offsets, {} and mask are allowed", if is_strings { "string_values group" } else { "list column" }, leaf_name.to_lowercase()));
        }
    }
    let kind_of = |nm: &str| members.iter().find(|(m, _)| m == nm).map(|(_, k)| k.clone());
    // OFFSETS
    let op = join(gp, n::OFFSETS);
    if kind_of(n::OFFSETS) != Some(Link::Dataset) {
        return ctx.sink.error(c::H10_MEMBERS, gp, "offsets member is missing or not a dataset");
    }
    let Ok(ods) = h5::dataset_open(g.id(), n::OFFSETS) else { return };
    let oinfo = match h5::dataset_info(ods.id(), &op) {
        Ok(i) => i,
        Err(e) => return ctx.sink.unreadable(R10, &op, read_err(&e)),
    };
    match oinfo.dtype {
        Dtype::Int { signed: false, size: 8, .. } => {}
        Dtype::Int { signed: false, .. } => ctx.sink.warn(R10, &op, format!("offsets is {}, expected uint64 (accepted leniently, ruling r3)", describe(&oinfo.dtype))),
        _ => return ctx.sink.error(c::H10_OFFSETS_TYPE, &op, format!("offsets is {}, expected uint64", describe(&oinfo.dtype))),
    }
    if oinfo.dims.len() != 1 {
        return ctx.sink.error(c::H10_OFFSETS_TYPE, &op, format!("offsets has rank {}, expected 1", oinfo.dims.len()));
    }
    let Some(lp1) = l.checked_add(1) else { return };
    if oinfo.dims[0] < lp1 {
        return ctx.sink.error(c::H10_OFFSETS_TYPE, &op, format!("offsets extent {} is less than {lp1} (entries + 1)", oinfo.dims[0]));
    }
    // MASK
    let mp = join(gp, n::MASK);
    let mask = match kind_of(n::MASK) {
        None => None,
        Some(Link::Dataset) => {
            let ds = h5::dataset_open(g.id(), n::MASK).ok();
            let info = ds.as_ref().and_then(|d| h5::dataset_info(d.id(), &mp).ok());
            match (ds, info) {
                (Some(ds), Some(info)) => {
                    if !info.dtype.is_boolean() {
                        ctx.sink.error(c::H10_MASK_TYPE, &mp, format!("mask is {}, expected the hep001 boolean enumeration", describe(&info.dtype)));
                        None
                    } else if info.dims.len() != 1 || info.dims[0] < l {
                        ctx.sink.error(c::H10_MASK_TYPE, &mp, format!("mask extent {:?} is less than {l} entries", info.dims));
                        None
                    } else {
                        if info.dtype.to_le() != Dtype::hep001_bool() {
                            ctx.sink.warn(R10, &mp, format!("mask is {}, expected the exact hep001 boolean (int8 base) (accepted leniently)", describe(&info.dtype)));
                        }
                        Some(ds)
                    }
                }
                _ => {
                    ctx.sink.unreadable(R10, &mp, "cannot read the mask dataset");
                    None
                }
            }
        }
        Some(_) => {
            ctx.sink.error(c::H10_MASK_TYPE, &mp, "mask member is not a dataset");
            None
        }
    };
    // Stream OFFSETS in runs [s, e); entry i-1 (bounds offsets[i-1], offsets[i]) is checked
    // when offsets[i] is read, with MASK read for exactly those entries.
    let batch = ctx.opts.batch_rows.max(1);
    let mut prev: Option<u64> = None;
    let mut last = 0u64;
    let mut s = 0u64;
    while s < lp1 {
        let e = s.saturating_add(batch).min(lp1);
        let offs = match h5::dataset_read(ods.id(), s, e - s, &Dtype::U64, &op) {
            Ok(b) => b.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect::<Vec<_>>(),
            Err(err) => return ctx.sink.unreadable(R10, &op, read_err(&err)),
        };
        let ms = s.max(1) - 1;
        let me = e - 1;
        let mvals = match &mask {
            Some(m) if me > ms => match h5::dataset_read(m.id(), ms, me - ms, &Dtype::I8, &mp) {
                Ok(b) => Some(b),
                Err(err) => {
                    ctx.sink.unreadable(R10, &mp, read_err(&err));
                    None
                }
            },
            _ => None,
        };
        for (k, &o) in offs.iter().enumerate() {
            let i = s + k as u64;
            if i == 0 && o != 0 {
                ctx.sink.error(c::H10_OFFSETS_ZERO, &op, format!("offsets[0] is {o}, expected 0"));
            }
            if let Some(p) = prev {
                let row = i - 1;
                let what = if top { String::new() } else { format!("entry {row}: ") };
                if o < p {
                    ctx.sink.row_error(c::H10_OFFSETS_ORDER, &op, row, format!("{what}offsets decrease from {p} to {o}; expected non-decreasing"));
                }
                if let Some(&b) = mvals.as_ref().and_then(|mv| mv.get((row - ms) as usize)) {
                    let b = b as i8;
                    if b != 0 && b != 1 {
                        ctx.sink.row_error(c::H10_MASK_VALUES, &mp, row, format!("{what}mask value {b} is neither false (0) nor true (1)"));
                    } else if b == 0 && o != p {
                        ctx.sink.row_error(c::H10_NULL_SLICES, &op, row, format!("{what}null entry (mask false) has a slice of {} elements; expected an empty slice", o.wrapping_sub(p)));
                    }
                }
            }
            prev = Some(o);
            last = o;
        }
        s = e;
    }
    // VALUES / CHARS
    let vp = join(gp, leaf_name);
    match kind_of(leaf_name) {
        None => ctx.sink.error(c::H10_MEMBERS, gp, format!("{} member is missing", leaf_name.to_lowercase())),
        Some(Link::Dataset) => match h5::dataset_open(g.id(), leaf_name).and_then(|d| h5::dataset_info(d.id(), &vp)) {
            Ok(info) => {
                if info.dims.len() != 1 {
                    ctx.sink.error(c::H10_VALUES_TYPE, &vp, format!("{} has rank {}, expected 1", leaf_name.to_lowercase(), info.dims.len()));
                } else if info.dims[0] < last {
                    ctx.sink.error(c::H10_VALUES_TYPE, &vp, format!("extent {} is less than offsets[{l}] = {last}", info.dims[0]));
                }
                if is_strings && info.dtype.to_le() != Dtype::U8 {
                    ctx.sink.error(c::H10_VALUES_TYPE, &vp, format!("chars is {}, expected uint8", describe(&info.dtype)));
                }
            }
            Err(e) => ctx.sink.unreadable(R10, &vp, read_err(&e)),
        },
        Some(Link::Group) if !is_strings => match g.group(leaf_name) {
            Ok(sub) => {
                match read_token(sub.id(), n::CLASS).ok().flatten().as_deref() {
                    Some(c) if c == n::LIST_COLUMN || c == n::STRING_VALUES => check_list_level(ctx, &sub, &vp, last, false, depth + 1),
                    other => ctx.sink.error(c::H10_MEMBERS, &vp, format!("values group has class {other:?}; expected \"LIST_COLUMN\" or \"STRING_VALUES\"")),
                }
            }
            Err(_) => ctx.sink.unreadable(R10, &vp, "cannot open the values group"),
        },
        Some(_) => ctx.sink.error(c::H10_MEMBERS, &vp, format!("{} is not a dataset", leaf_name.to_lowercase())),
    }
}

fn has_vlen(d: &Dtype) -> bool {
    match d {
        Dtype::VarString { .. } => true,
        Dtype::Other { class, .. } => class.to_ascii_uppercase().contains("VLEN"),
        Dtype::Compound { fields, .. } => fields.iter().any(|f| has_vlen(&f.dtype)),
        Dtype::Enum { base, .. } => has_vlen(base),
        _ => false,
    }
}

/// HEP001 §13 req 11: no variable-length datatype anywhere under a list-column group.
fn req11_no_vlen_in_lists(ctx: &mut Ctx) {
    let cols = ctx.columns.clone();
    for c in &cols {
        if !matches!(c.obj, ColumnObj::List) {
            continue;
        }
        let Ok(g) = ctx.grp.group(&c.name) else { continue };
        vlen_walk(ctx, &g, &c.path, 0);
    }
}

fn vlen_walk(ctx: &mut Ctx, g: &hdf5::Group, gp: &str, depth: usize) {
    if depth > 32 {
        return;
    }
    let Ok(members) = links(g) else { return };
    for (name, k) in members {
        let mp = join(gp, &name);
        match k {
            Link::Dataset => {
                if let Ok(info) = h5::dataset_open(g.id(), &name).and_then(|d| h5::dataset_info(d.id(), &mp)) {
                    if has_vlen(&info.dtype) {
                        ctx.sink.error(c::H11_NO_VLEN, &mp, format!("variable-length datatype ({}) below a list column; expected fixed-size types", describe(&info.dtype)));
                    }
                }
            }
            Link::Group => {
                if let Ok(sub) = g.group(&name) {
                    vlen_walk(ctx, &sub, &mp, depth + 1);
                }
            }
            _ => {}
        }
    }
}

// ------------------------------------------------------------------ req 12, 13

/// HEP001 §13 req 12: with at least one search index, GENERATION is a scalar uint64 on the
/// table group and every index carries scalar uint64 SOURCE_GENERATION and SOURCE_NROWS.
fn req12_validity_tokens(ctx: &mut Ctx) {
    let Ok(si) = ctx.grp.group(n::SEARCH_INDEXES) else { return };
    let Ok(members) = links(&si) else { return };
    let sp = ctx.member_path(n::SEARCH_INDEXES);
    let mut any = false;
    for (name, k) in members {
        if k != Link::Dataset {
            continue;
        }
        let Ok(ds) = h5::dataset_open(si.id(), &name) else { continue };
        if !h5::attr_exists(ds.id(), n::KIND).unwrap_or(false) {
            continue;
        }
        any = true;
        let mp = join(&sp, &name);
        read_u64_token(ctx, ds.id(), &mp, n::SOURCE_GENERATION, c::H12_SOURCE_TOKENS, true);
        read_u64_token(ctx, ds.id(), &mp, n::SOURCE_NROWS, c::H12_SOURCE_TOKENS, true);
    }
    if any {
        let p = ctx.path.clone();
        ctx.generation = read_u64_token(ctx, ctx.id(), &p, n::GENERATION, c::H12_GENERATION, true);
    }
}

/// HEP001 §13 req 13: every boolean column has the HEP001 boolean type (tolerated 1-byte
/// variants warned), only 0/1 in rows `[0, NROWS)`, and no user-defined fill.
fn req13_boolean_columns(ctx: &mut Ctx) {
    let cols = ctx.columns.clone();
    for c in &cols {
        let ColumnObj::Dataset(info) = &c.obj else { continue };
        if !info.dtype.is_boolean() {
            continue;
        }
        if info.dtype.to_le() != Dtype::hep001_bool() || matches!(&info.dtype, Dtype::Enum { base, .. } if matches!(**base, Dtype::Int { big_endian: true, .. })) {
            ctx.sink.warn(R13, &c.path, format!("boolean column is {}, expected base int8 little-endian (accepted leniently)", describe(&info.dtype)));
        }
        if info.fill.is_some() {
            ctx.sink.error(c::H13_BOOL_FILL, &c.path, "boolean column declares a user-defined fill value; expected none");
        }
        let Some(nrows) = ctx.nrows else { continue };
        let Ok(ds) = h5::dataset_open(ctx.id(), &c.name) else { continue };
        let end = nrows.min(info.dims[0]);
        let mut bad = Vec::new();
        let r = stream(ds.id(), &c.path, 0, end, ctx.opts.batch_rows, &Dtype::I8, |row, v| {
            let b = v[0] as i8;
            if b != 0 && b != 1 {
                bad.push((row, b));
            }
            bad.len() < 1000
        });
        if let Err(e) = r {
            ctx.sink.unreadable(R13, &c.path, read_err(&e));
        }
        for (row, b) in bad {
            ctx.sink.row_error(c::H13_BOOL_VALUES, &c.path, row, format!("boolean value {b} is neither false (0) nor true (1)"));
        }
    }
}

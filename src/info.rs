//! What `marquet info` and `marquet dump` show: a description of every table in a file,
//! and rows rendered as text. Library code so that the CLI stays printing-only.

use serde_json::{json, Value};

use crate::error::{MarquetError, Result};
use crate::h5;
use crate::h5col::{self, ColumnKind, File};
use crate::marquet::{self as mq, MarquetTable, StorageForm};

/// Bytes stored for one dataset (`H5Dget_storage_size`) and below a group.
fn storage_size(t: &h5col::Table, name: &str) -> u64 {
    h5::storage_size_below(t.id(), name).unwrap_or(0)
}

/// The datasets stored below `name` (relative to the table: the dataset itself, or every
/// dataset of a list column's group) with their filter pipelines. Objects that cannot be
/// opened are left out (the validator reports them).
fn filters_below(loc: &h5col::Table, name: &str) -> Vec<(String, Vec<h5::Filter>)> {
    fn walk(loc: h5::Hid, rel: &str, out: &mut Vec<(String, Vec<h5::Filter>)>) {
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
    if let Ok(o) = h5::object_open(loc.id(), name) {
        walk(o, name, &mut out);
    }
    out
}

/// JSON for the filters of the datasets below `name`: `filters` (each dataset's pipeline,
/// as `shuffle`, `deflate(4)`, `zstd(1)`...), `plugins` (the filters it needs that are not
/// built into HDF5, by id and name) and `plain_hdf5` (readable by any HDF5 without plugins).
fn filters_json(t: &h5col::Table, name: &str) -> Value {
    let sets = filters_below(t, name);
    let mut plugins: Vec<i32> = sets.iter().flat_map(|(_, f)| f.iter()).filter(|f| !f.is_predefined()).map(|f| f.id()).collect();
    plugins.sort_unstable();
    plugins.dedup();
    json!({
        "filters": sets.iter().map(|(p, f)| json!({"dataset": p, "filters": f.iter().map(|x| x.to_string()).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "plugins": plugins.iter().map(|id| json!({"id": id, "name": h5::Filter::registered_name(*id)})).collect::<Vec<_>>(),
        "plain_hdf5": plugins.is_empty(),
    })
}

/// Text for [`filters_json`]: `shuffle, deflate(4)` for one dataset, `VALUES deflate(4);
/// OFFSETS shuffle, deflate(4)` for several, then what a plain HDF5 lacks.
fn filters_text(f: &Value, column: &str) -> String {
    let sets = f["filters"].as_array().cloned().unwrap_or_default();
    let one = |v: &Value| {
        let l: Vec<&str> = v["filters"].as_array().into_iter().flatten().filter_map(|x| x.as_str()).collect();
        if l.is_empty() {
            "none".to_string()
        } else {
            l.join(", ")
        }
    };
    let mut s = if sets.len() == 1 {
        one(&sets[0])
    } else {
        sets.iter()
            .map(|d| {
                let p = d["dataset"].as_str().unwrap_or("");
                format!("{} {}", p.strip_prefix(column).map(|r| r.trim_start_matches('/')).unwrap_or(p), one(d))
            })
            .collect::<Vec<_>>()
            .join("; ")
    };
    for p in f["plugins"].as_array().into_iter().flatten() {
        s += &format!("; needs HDF5 plugin {}", p["id"]);
        if let Some(n) = p["name"].as_str() {
            s += &format!(" ({n})");
        }
    }
    s
}

/// Describe every table of `path` (or only `table`).
pub fn describe_file(path: &std::path::Path, table: Option<&str>) -> Result<Value> {
    let f = File::open(path)?;
    let tables = match table {
        Some(t) => vec![t.to_string()],
        None => f.tables()?,
    };
    let mut out = Vec::new();
    for tp in tables {
        out.push(describe_table(&f, &tp)?);
    }
    // Readable by any HDF5 without plugins: every column and index of every table.
    let plain = out.iter().all(|t| {
        t["columns"].as_array().into_iter().flatten().all(|c| c["plain_hdf5"] != false)
            && t["geometry_columns"].as_array().into_iter().flatten().flat_map(|g| g["indexes"].as_array().into_iter().flatten()).all(|i| i["plain_hdf5"] != false)
            && t["indexes"].as_array().into_iter().flatten().all(|i| i["plain_hdf5"] != false)
    });
    Ok(json!({ "file": path.display().to_string(), "size_bytes": std::fs::metadata(path).map(|m| m.len()).unwrap_or(0), "plain_hdf5": plain, "tables": out }))
}

/// Describe one table.
pub fn describe_table(f: &File, path: &str) -> Result<Value> {
    let t = f.table(path)?;
    let nrows = t.nrows()?;
    let mut columns = Vec::new();
    for c in t.column_names()? {
        let kind = t.kind_of(&c)?;
        let (dtype, kind_s) = match kind {
            Some(ColumnKind::Dataset) => (t.column(&c)?.dtype().to_string(), "dataset"),
            Some(ColumnKind::List) => (format!("list<{}>", t.list_column(&c)?.leaf_dtype()?), "list"),
            None => ("?".into(), "missing"),
        };
        let mut col = json!({"name": c, "kind": kind_s, "dtype": dtype, "stored_bytes": storage_size(&t, &c)});
        merge(&mut col, filters_json(&t, &c));
        columns.push(col);
    }
    let mut geoms = Vec::new();
    let mut is_marquet = false;
    if mq::is_marquet_table(&t)? {
        is_marquet = true;
        let m = MarquetTable::from_table(f.table(path)?)?;
        {
            for g in m.geometry_column_names()? {
                // R16, HEP002 §6.2: a column this library cannot interpret is reported as
                // such (its data is listed with the plain columns above).
                if let Some(why) = m.not_interpretable(&g)? {
                    geoms.push(json!({"name": g, "interpretable": false, "reason": why}));
                    continue;
                }
                let i = m.geometry_column(&g)?;
                let bbox = i.bbox.map(|(b, z, mm)| {
                    let mut v = vec![b.xmin, b.ymin];
                    if z {
                        v.push(b.zmin);
                    }
                    if mm {
                        v.push(b.mmin);
                    }
                    v.extend([b.xmax, b.ymax]);
                    if z {
                        v.push(b.zmax);
                    }
                    if mm {
                        v.push(b.mmax);
                    }
                    v
                });
                let idx: Vec<Value> = h5col::index::indexes_of(&t, &g)?
                    .into_iter()
                    .map(|x| {
                        let mut v = json!({"path": x.path, "kind": x.kind, "valid": x.is_valid(t.generation().ok().flatten(), nrows)});
                        merge(&mut v, filters_json(&t, &x.path));
                        v
                    })
                    .collect();
                geoms.push(json!({
                    "name": g,
                    "interpretable": true,
                    "storage_form": i.form.describe(),
                    "encoding": i.form.encoding(),
                    "geometry_types": i.types.map(|v| v.iter().map(|t| t.name()).collect::<Vec<_>>()),
                    "crs": i.crs.display_name(),
                    "edges": i.edges.name(),
                    "orientation": if i.orientation_ccw { Some("COUNTERCLOCKWISE") } else { None },
                    "bbox": bbox,
                    "covering": i.covering,
                    "indexes": idx,
                }));
            }
        }
    }
    let mut attr_idx = Vec::new();
    for c in t.discover_columns()? {
        for x in h5col::index::indexes_of(&t, &c)? {
            if !geoms.iter().any(|g| g["name"] == c) {
                let mut v = json!({"column": c, "path": x.path, "kind": x.kind, "valid": x.is_valid(t.generation()?, nrows)});
                merge(&mut v, filters_json(&t, &x.path));
                attr_idx.push(v);
            }
        }
    }
    Ok(json!({
        "path": t.path(),
        "nrows": nrows,
        "marquet": is_marquet,
        "title": t.text_attr(crate::spec::names::TITLE)?,
        "columns": columns,
        "geometry_columns": geoms,
        "indexes": attr_idx,
    }))
}

/// Add the members of object `extra` to object `v`.
fn merge(v: &mut Value, extra: Value) {
    if let (Some(o), Value::Object(e)) = (v.as_object_mut(), extra) {
        o.extend(e);
    }
}

/// Render `describe_file` output as text.
pub fn render_text(v: &Value) -> String {
    let mut s = format!("{} ({} bytes)\n", v["file"].as_str().unwrap_or(""), v["size_bytes"]);
    s += if v["plain_hdf5"] == false {
        "readable without HDF5 plugins: no (see \"needs HDF5 plugin\" below)\n"
    } else {
        "readable without HDF5 plugins: yes\n"
    };
    for t in v["tables"].as_array().into_iter().flatten() {
        s += &format!(
            "table {}: {} rows{}\n",
            t["path"].as_str().unwrap_or(""),
            t["nrows"],
            if t["marquet"].as_bool() == Some(true) { ", Marquet 1.x" } else { ", H5Col" }
        );
        for c in t["columns"].as_array().into_iter().flatten() {
            let name = c["name"].as_str().unwrap_or("");
            s += &format!("  column {:<24} {:<8} {:>12} bytes  {}\n", name, c["kind"].as_str().unwrap_or(""), c["stored_bytes"], c["dtype"].as_str().unwrap_or(""));
            s += &format!("    filters: {}\n", filters_text(c, name));
        }
        for g in t["geometry_columns"].as_array().into_iter().flatten() {
            if g["interpretable"].as_bool() == Some(false) {
                s += &format!("  geometry {}: not interpretable ({}); read as plain h5col data\n", g["name"].as_str().unwrap_or(""), g["reason"].as_str().unwrap_or(""));
                continue;
            }
            s += &format!(
                "  geometry {}: {}; types {}; crs {}; edges {}{}\n",
                g["name"].as_str().unwrap_or(""),
                g["storage_form"].as_str().unwrap_or(""),
                g["geometry_types"].as_array().map(|a| a.iter().filter_map(|x| x.as_str()).collect::<Vec<_>>().join(", ")).unwrap_or_else(|| "unknown".into()),
                g["crs"].as_str().unwrap_or(""),
                g["edges"].as_str().unwrap_or(""),
                g["orientation"].as_str().map(|o| format!("; orientation {o}")).unwrap_or_default(),
            );
            if let Some(b) = g["bbox"].as_array() {
                s += &format!("    bbox {:?}\n", b.iter().filter_map(|x| x.as_f64()).collect::<Vec<_>>());
            }
            if let Some(c) = g["covering"].as_str() {
                s += &format!("    covering column {c}\n");
            }
            for i in g["indexes"].as_array().into_iter().flatten() {
                let p = i["path"].as_str().unwrap_or("");
                s += &format!("    index {} {} ({}); filters: {}\n", i["kind"].as_str().unwrap_or("?"), p, if i["valid"].as_bool() == Some(true) { "valid" } else { "stale" }, filters_text(i, p));
            }
        }
        for i in t["indexes"].as_array().into_iter().flatten() {
            let p = i["path"].as_str().unwrap_or("");
            s += &format!(
                "  index {} on {} {} ({}); filters: {}\n",
                i["kind"].as_str().unwrap_or("?"),
                i["column"].as_str().unwrap_or(""),
                p,
                if i["valid"].as_bool() == Some(true) { "valid" } else { "stale" },
                filters_text(i, p)
            );
        }
    }
    s
}

/// Output format of [`dump_rows`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpFormat {
    /// Tab-separated, geometries as WKT, missing values as `NULL`.
    Wkt,
    /// RFC 4180 CSV, geometries as WKT, missing values as empty fields.
    Csv,
    /// An RFC 7946 FeatureCollection: the primary geometry column as the feature geometry,
    /// other geometry columns as WKT properties, numbers as JSON numbers, missing as null.
    #[cfg(feature = "geoparquet")]
    GeoJson,
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Does `format` render the primary geometry as a GeoJSON geometry?
fn format_wants_geometry(format: DumpFormat) -> bool {
    #[cfg(feature = "geoparquet")]
    if format == DumpFormat::GeoJson {
        return true;
    }
    let _ = format;
    false
}

/// Column `c`'s cells for rows `[start, end)` (None when missing), its GeoJSON geometries
/// when `want_geometry` (a geometry column of `m`), and whether it is a number column.
fn span_cells(
    t: &h5col::Table,
    m: Option<&MarquetTable>,
    c: &str,
    start: u64,
    end: u64,
    want_geometry: bool,
) -> Result<(Vec<Option<String>>, Vec<Value>, bool)> {
    let mut v = Vec::with_capacity((end - start) as usize);
    #[allow(unused_mut)]
    let mut geometries = Vec::new();
    let mut num = false;
    if let Some(m) = m {
        let w = m.read_wkb(c, start, end)?;
        // GeoJSON holds OGC:CRS84 only (RFC 7946): reprojected, or refused (issue #22).
        #[cfg(feature = "geoparquet")]
        let to84 = if want_geometry { crate::geoparquet::geojson_crs::to_crs84(&m.geometry_column(c)?.crs, c)? } else { None };
        for i in 0..w.len() {
            #[cfg(feature = "geoparquet")]
            if want_geometry {
                geometries.push(match w.get(i).map(crate::wkb::decode) {
                    Some(Ok(mut g)) => {
                        if let Some(tr) = &to84 {
                            tr.transform_geometry(&mut g).map_err(|e| MarquetError::InvalidArgument(format!("{c}: row {}: {e}", start + i as u64)))?;
                        }
                        serde_json::to_value(geojson::Geometry::new(crate::geoparquet::geojson_io::to_geojson(&g))).unwrap_or(Value::Null)
                    }
                    _ => Value::Null,
                });
            }
            v.push(w.get(i).map(|b| crate::wkb::to_wkt(b).unwrap_or_else(|e| format!("<invalid wkb: {e}>"))));
        }
    } else {
        match t.kind_of(c)? {
            Some(ColumnKind::Dataset) => {
                let col = t.column(c)?;
                num = matches!(col.dtype(), h5::Dtype::Int { .. } | h5::Dtype::Float { .. });
                let a = col.read(start, end - start)?;
                let miss = a.missing(col.fill());
                for (i, &missing) in miss.iter().enumerate() {
                    v.push((!missing).then(|| a.display(i)));
                }
            }
            Some(ColumnKind::List) => {
                let l = t.list_column(c)?.read(start, end)?;
                for i in 0..l.len() {
                    v.push((!l.is_null(i)).then(|| {
                        let r = l.range(i);
                        match &l.values {
                            h5col::ListValues::Leaf(a) => format!("[{}]", r.map(|j| a.display(j)).collect::<Vec<_>>().join(" ")),
                            h5col::ListValues::Strings { offsets, chars, .. } => format!(
                                "[{}]",
                                r.map(|j| String::from_utf8_lossy(&chars[offsets[j] as usize..offsets[j + 1] as usize]).into_owned())
                                    .collect::<Vec<_>>()
                                    .join(" ")
                            ),
                            h5col::ListValues::List(_) => "[…]".into(),
                        }
                    }));
                }
            }
            None => v.resize((end - start) as usize, Some(String::new())),
        }
    }
    let _ = want_geometry;
    Ok((v, geometries, num))
}

/// Render rows `[start, end)` of a table: a header line, then one line per row; geometry
/// columns as WKT, missing values as empty fields (CSV) or `NULL` (WKT format); or a
/// GeoJSON FeatureCollection ([`DumpFormat::GeoJson`]).
pub fn dump_rows(f: &File, table: &str, start: u64, end: u64, format: DumpFormat) -> Result<String> {
    let n = f.table(table)?.nrows()?;
    let end = end.min(n);
    let start = start.min(end);
    let span = h5col::TakeSpan { start, end, first: 0, last: (end - start) as usize };
    let rows: Vec<u64> = (start..end).collect();
    dump_spans(f, table, &rows, &[span], format)
}

/// Render the rows `rows` (strictly ascending, each below NROWS; e.g. a query's answer) like
/// [`dump_rows`]: one read per span of nearby rows.
pub fn dump_row_list(f: &File, table: &str, rows: &[u64], format: DumpFormat) -> Result<String> {
    let n = f.table(table)?.nrows()?;
    if let Some(&last) = rows.last() {
        if last >= n {
            return Err(MarquetError::InvalidArgument(format!("row {last} out of range for {n} rows")));
        }
    }
    let spans = h5col::take_spans(rows, table)?;
    dump_spans(f, table, rows, &spans, format)
}

/// The rows `rows[span.first..span.last]` of each span, read as the span's row range.
fn dump_spans(f: &File, table: &str, wanted_rows: &[u64], spans: &[h5col::TakeSpan], format: DumpFormat) -> Result<String> {
    let t = f.table(table)?;
    // Geometry columns this library can interpret; the others are dumped as plain H5Col
    // data (ruling R16, HEP002 §6.2).
    let geo: Vec<String> = if mq::is_marquet_table(&t)? {
        let m = MarquetTable::from_table(f.table(table)?)?;
        let mut v = Vec::new();
        for g in m.geometry_column_names().unwrap_or_default() {
            if m.not_interpretable(&g)?.is_none() {
                v.push(g);
            }
        }
        v
    } else {
        Vec::new()
    };
    let m = if geo.is_empty() { None } else { Some(MarquetTable::from_table(f.table(table)?)?) };
    let primary = m.as_ref().and_then(|m| m.primary_geometry_column().ok()).filter(|p| geo.contains(p));
    let cols = t.column_names()?;
    // cells[c][r]: the rendering of a value, None when missing; numeric[c]: a number column.
    let mut cells: Vec<Vec<Option<String>>> = Vec::new();
    let mut numeric: Vec<bool> = Vec::new();
    #[allow(unused_mut)]
    let mut geometries: Vec<Value> = Vec::new();
    for c in &cols {
        let mut v = Vec::with_capacity(wanted_rows.len());
        let mut num = false;
        let want_geometry = format_wants_geometry(format) && primary.as_deref() == Some(c.as_str());
        for sp in spans {
            let (all, g_all, n) = span_cells(&t, m.as_ref().filter(|_| geo.contains(c)), c, sp.start, sp.end, want_geometry)?;
            num = n;
            if sp.last - sp.first == all.len() {
                // Every row of the span is wanted (a row range): keep the cells as they are.
                v.extend(all);
                geometries.extend(g_all);
            } else {
                for &r in &wanted_rows[sp.first..sp.last] {
                    let i = (r - sp.start) as usize;
                    v.push(all.get(i).cloned().flatten());
                    if want_geometry {
                        geometries.push(g_all.get(i).cloned().unwrap_or(Value::Null));
                    }
                }
            }
        }
        cells.push(v);
        numeric.push(num);
    }
    let rows = wanted_rows.len();
    #[cfg(feature = "geoparquet")]
    if format == DumpFormat::GeoJson {
        let mut feats = Vec::with_capacity(rows);
        #[allow(clippy::needless_range_loop)] // r indexes every column of `cells`
        for r in 0..rows {
            let mut props = serde_json::Map::new();
            for (k, c) in cols.iter().enumerate() {
                if primary.as_deref() == Some(c.as_str()) {
                    continue;
                }
                let val = match &cells[k][r] {
                    None => Value::Null,
                    Some(s) if numeric[k] => s.parse::<i64>().map(Value::from).or_else(|_| s.parse::<f64>().map(Value::from)).unwrap_or(Value::String(s.clone())),
                    Some(s) => Value::String(s.clone()),
                };
                props.insert(c.clone(), val);
            }
            let g = geometries.get(r).cloned().unwrap_or(Value::Null);
            feats.push(json!({"type": "Feature", "geometry": g, "properties": props}));
        }
        let mut out = serde_json::to_string(&json!({"type": "FeatureCollection", "features": feats})).unwrap_or_default();
        out.push('\n');
        return Ok(out);
    }
    let _ = (&primary, &numeric, &geometries);
    let csv = format == DumpFormat::Csv;
    let null = if csv { "" } else { "NULL" };
    let sep = if csv { "," } else { "\t" };
    let mut out = cols.iter().map(|c| if csv { csv_field(c) } else { c.clone() }).collect::<Vec<_>>().join(sep);
    out.push('\n');
    for r in 0..rows {
        let line: Vec<String> = cells
            .iter()
            .map(|col| {
                let s = col[r].as_deref().unwrap_or(null);
                if csv {
                    csv_field(s)
                } else {
                    s.to_string()
                }
            })
            .collect();
        out += &line.join(sep);
        out.push('\n');
    }
    let _ = StorageForm::VarWkb;
    Ok(out)
}

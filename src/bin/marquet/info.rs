//! What `marquet info` and `marquet dump` show: a description of every table in a file,
//! and rows rendered as text. Library code so that the CLI stays printing-only.

use serde_json::{json, Value};

use marquet::Result;
use marquet::h5col::{self, ColumnKind, File};
use marquet::{is_marquet_table, Table};

/// JSON for the filters of the datasets below `name`: `filters` (each dataset's pipeline,
/// as `shuffle`, `deflate(4)`, `zstd(1)`...), `plugins` (the filters it needs that are not
/// built into HDF5, by id and name) and `plain_hdf5` (readable by any HDF5 without plugins).
fn filters_json(t: &h5col::Table, name: &str) -> Value {
    let sets = t.filters_below(name);
    let mut plugins: Vec<i32> = sets.iter().flat_map(|(_, f)| f.iter()).filter(|f| !f.is_predefined()).map(|f| f.id()).collect();
    plugins.sort_unstable();
    plugins.dedup();
    json!({
        "filters": sets.iter().map(|(p, f)| json!({"dataset": p, "filters": f.iter().map(|x| x.to_string()).collect::<Vec<_>>()})).collect::<Vec<_>>(),
        "plugins": plugins.iter().map(|id| json!({"id": id, "name": h5col::Filter::registered_name(*id)})).collect::<Vec<_>>(),
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
    Ok(json!({ "file": path.display().to_string(), "size_bytes": std::fs::metadata(path).map(|m| m.len()).unwrap_or_else(|_| f.size()), "plain_hdf5": plain, "tables": out }))
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
        let mut col = json!({"name": c, "kind": kind_s, "dtype": dtype, "stored_bytes": t.storage_size(&c)});
        merge(&mut col, filters_json(&t, &c));
        columns.push(col);
    }
    let mut geoms = Vec::new();
    let mut is_marquet = false;
    if is_marquet_table(&t)? {
        is_marquet = true;
        let m = Table::from_table(f.table(path)?)?;
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
                let idx: Vec<Value> = h5col::indexes_of(&t, &g)?
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
        for x in h5col::indexes_of(&t, &c)? {
            if !geoms.iter().any(|g| g["name"] == c) {
                let mut v = json!({"column": c, "path": x.path, "kind": x.kind, "valid": x.is_valid(t.generation()?, nrows)});
                merge(&mut v, filters_json(&t, &x.path));
                attr_idx.push(v);
            }
        }
    }
    // Laid out for reading by range (issue #34): what a query over HTTP pays.
    let cloud = marquet::cloud_layout(f, path)?;
    Ok(json!({
        "path": t.path(),
        "nrows": nrows,
        "marquet": is_marquet,
        "cloud_friendly": {"friendly": cloud.friendly, "reasons": cloud.reasons, "metadata_bytes": cloud.metadata_end, "text": cloud.to_string()},
        "title": t.text_attr(marquet::spec::names::TITLE)?,
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
        if let Some(c) = t["cloud_friendly"]["text"].as_str() {
            s += &format!("  cloud-friendly: {c}\n");
        }
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

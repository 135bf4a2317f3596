//! `marquet dump` and `marquet query --format`: rows as CSV, WKT or GeoJSON text.

use serde_json::{json, Value};
use marquet::{Error as MarquetError, Result};
use marquet::h5col::{self, ColumnKind, File};
use marquet::{is_marquet_table, StorageForm, Table, WkbBuffer};

/// Output format of [`dump_rows`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpFormat {
    /// Tab-separated, geometries as WKT, missing values as `NULL`; a present value that
    /// reads `NULL`, starts with `"` or holds a tab or a line break is written in double
    /// quotes (inner quotes doubled), so that it never reads as a missing value or splits
    /// a row (issue #38).
    Wkt,
    /// RFC 4180 CSV, geometries as WKT, missing values as empty fields and an empty text as
    /// `""` (quoted), so that the two read apart (issue #38; as PostgreSQL's CSV COPY).
    Csv,
    /// An RFC 7946 FeatureCollection: the primary geometry column as the feature geometry,
    /// other geometry columns as WKT properties, numbers as JSON numbers, missing as null.
    #[cfg(feature = "geoparquet")]
    GeoJson,
}

fn quoted(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// A CSV field: quoted when it holds a separator, a quote or a line break, or is an empty
/// text (an empty unquoted field is a missing value).
fn csv_field(s: &str) -> String {
    if s.is_empty() || s.contains([',', '"', '\n', '\r']) {
        quoted(s)
    } else {
        s.to_string()
    }
}

/// A field of the tab-separated WKT format (see [`DumpFormat::Wkt`]).
fn wkt_field(s: &str) -> String {
    if s == "NULL" || s.starts_with('"') || s.contains(['\t', '\n', '\r']) {
        quoted(s)
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

/// The cells of WKB values `(row, value)` of geometry column `c` of `m` (as WKT) and,
/// when `want_geometry`, their GeoJSON geometries (in OGC:CRS84).
fn wkb_cells<'w>(
    m: &Table,
    c: &str,
    values: impl ExactSizeIterator<Item = (u64, Option<&'w [u8]>)>,
    want_geometry: bool,
) -> Result<(Vec<Option<String>>, Vec<Value>)> {
    let mut v = Vec::with_capacity(values.len());
    #[allow(unused_mut)]
    let mut geometries = Vec::new();
    // GeoJSON holds OGC:CRS84 only (RFC 7946): reprojected, or refused (issue #22).
    #[cfg(feature = "geoparquet")]
    let to84 = if want_geometry { marquet::convert::to_crs84(&m.geometry_column(c)?.crs, c)? } else { None };
    for (row, w) in values {
        #[cfg(feature = "geoparquet")]
        if want_geometry {
            geometries.push(match w.map(marquet::wkb::decode) {
                Some(Ok(mut g)) => {
                    if let Some(tr) = &to84 {
                        tr.transform_geometry(&mut g).map_err(|e| MarquetError::InvalidArgument(format!("{c}: row {row}: {e}")))?;
                    }
                    marquet::convert::to_geojson_json(&g)
                }
                _ => Value::Null,
            });
        }
        let _ = row;
        v.push(w.map(|b| marquet::wkb::to_wkt(b).unwrap_or_else(|e| format!("<invalid wkb: {e}>"))));
    }
    let _ = (m, want_geometry);
    Ok((v, geometries))
}

/// Column `c`'s cells for rows `[start, end)` (None when missing), its GeoJSON geometries
/// when `want_geometry` (a geometry column of `m`), and whether it is a number column.
fn span_cells(
    t: &h5col::Table,
    m: Option<&Table>,
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
        (v, geometries) = wkb_cells(m, c, (0..w.len()).map(|i| (start + i as u64, w.get(i))), want_geometry)?;
    } else {
        match t.kind_of(c)? {
            // A categorical column's labels, not its codes (HEP001 §8.7).
            Some(ColumnKind::Dataset) if h5col::categories_of(t, c)?.is_some() => {
                v = h5col::read_labels(t, c, start, end - start)?;
            }
            Some(ColumnKind::Dataset) => {
                let col = t.column(c)?;
                num = matches!(col.dtype(), h5col::Dtype::Int { .. } | h5col::Dtype::Float { .. });
                let a = col.read(start, end - start)?;
                let miss = a.missing(col.fill());
                for (i, &missing) in miss.iter().enumerate() {
                    v.push((!missing).then(|| a.display(i)));
                }
            }
            Some(ColumnKind::List) => {
                let lc = t.list_column(c)?;
                let l = lc.read(start, end)?;
                // Text stored as a list of UTF-8 bytes prints as text (issue #38).
                if lc.is_text()? {
                    for i in 0..l.len() {
                        v.push(l.bytes_of(i).map(|b| String::from_utf8_lossy(b).into_owned()));
                    }
                    return Ok((v, geometries, num));
                }
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
    dump_spans(f, table, &rows, &[span], format, None)
}

/// Render the rows `rows` (strictly ascending, each below NROWS; e.g. a query's answer) like
/// [`dump_rows`]: one read per span of nearby rows.
/// [`Given`]: one geometry column's values in hand, not read.
pub fn dump_row_list(f: &File, table: &str, rows: &[u64], format: DumpFormat, given: Option<Given>) -> Result<String> {
    let n = f.table(table)?.nrows()?;
    if let Some(&last) = rows.last() {
        if last >= n {
            return Err(MarquetError::InvalidArgument(format!("row {last} out of range for {n} rows")));
        }
    }
    let spans = h5col::take_spans(rows, table)?;
    dump_spans(f, table, rows, &spans, format, given)
}

/// The rows `rows[span.first..span.last]` of each span, read as the span's row range; the
/// geometry column `given.0`'s values taken from `given.1` instead (`given.1.get(given.2 +
/// i)` is `wanted_rows[i]`'s: what a query returned).
fn dump_spans(
    f: &File,
    table: &str,
    wanted_rows: &[u64],
    spans: &[h5col::TakeSpan],
    format: DumpFormat,
    given: Option<Given>,
) -> Result<String> {
    let t = f.table(table)?;
    // Geometry columns this library can interpret; the others are dumped as plain H5Col
    // data (ruling R16, HEP002 §6.2).
    let geo: Vec<String> = if is_marquet_table(&t)? {
        let m = Table::from_table(f.table(table)?)?;
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
    let m = if geo.is_empty() { None } else { Some(Table::from_table(f.table(table)?)?) };
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
        if let (Some((gc, w, first)), Some(m)) = (given, m.as_ref()) {
            if gc == c && geo.contains(c) {
                let values = wanted_rows.iter().enumerate().map(|(i, &r)| (r, w.get(first + i)));
                let (v, g) = wkb_cells(m, c, values, want_geometry)?;
                cells.push(v);
                numeric.push(false);
                geometries.extend(g);
                continue;
            }
        }
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
    let sep = if csv { "," } else { "\t" };
    let field = |s: &str| if csv { csv_field(s) } else { wkt_field(s) };
    let mut out = cols.iter().map(|c| field(c)).collect::<Vec<_>>().join(sep);
    out.push('\n');
    for r in 0..rows {
        let line: Vec<String> = cells
            .iter()
            .map(|col| match col[r].as_deref() {
                None if csv => String::new(),
                None => "NULL".to_string(),
                Some(s) => field(s),
            })
            .collect();
        out += &line.join(sep);
        out.push('\n');
    }
    let _ = StorageForm::VarWkb;
    Ok(out)
}

/// One geometry column's WKB values in hand: the column, the values, the index in them of
/// the first row printed.
pub type Given<'g> = (&'g str, &'g WkbBuffer, usize);

/// Rows to print: a range (`dump --rows`) or a list (a query's answer, ascending).
pub enum Rows<'r> {
    /// Rows `[start, end)`, clamped to NROWS.
    Range(u64, u64),
    /// These rows.
    List(&'r [u64]),
}

/// Rows rendered at a time, so memory stays bounded whatever the number of rows.
pub const CHUNK_ROWS: usize = 65_536;

/// Print `rows` of `table` in `format`, chunk by chunk, to `out`: CSV and WKT with one header
/// line, GeoJSON as one FeatureCollection written by the library's
/// [`marquet::convert::FeatureWriter`] (the rendering of `marquet convert`). Stops
/// quietly when the reader closes the pipe.
///
/// `given`: the WKB values of one geometry column for the rows of a [`Rows::List`], in its
/// order (a query's answer, [`marquet::CombinedResult::wkb`]), printed instead of read
/// again (issue #33 item 1).
pub fn print_rows(
    out: &mut super::out::Out,
    f: &File,
    table: &str,
    rows: Rows,
    format: DumpFormat,
    given: Option<(&str, &WkbBuffer)>,
) -> std::result::Result<(), String> {
    // NROWS sizes the row list below: checked against the columns first (issue #19).
    let n = f.table(table).and_then(|t| t.verified_nrows()).map_err(|e| e.to_string())?;
    let mut list: Vec<u64> = Vec::new();
    let (rows, given) = match rows {
        Rows::Range(s, e) => {
            let e = e.min(n);
            list = (s.min(e)..e).collect();
            (&list[..], None)
        }
        Rows::List(r) => (r, given),
    };
    if let Some((c, w)) = given {
        if w.len() != rows.len() {
            return Err(format!("{table}/{c}: {} WKB values given for {} rows", w.len(), rows.len()));
        }
    }
    #[cfg(feature = "geoparquet")]
    if format == DumpFormat::GeoJson {
        let t = f.table(table).map_err(|e| e.to_string())?;
        if is_marquet_table(&t).map_err(|e| e.to_string())? {
            let m = Table::from_table(t).map_err(|e| e.to_string())?;
            let mut fw = marquet::convert::FeatureWriter::new(&m).map_err(|e| e.to_string())?;
            let mut buf = Vec::new();
            fw.begin(&mut buf).map_err(|e| e.to_string())?;
            for (k, chunk) in rows.chunks(CHUNK_ROWS).enumerate() {
                let g = given.map(|(c, w)| (c, w, k * CHUNK_ROWS));
                fw.write_rows_given(&mut buf, chunk, g).map_err(|e| e.to_string())?;
                if !out.put(&String::from_utf8_lossy(&buf))? {
                    return Ok(());
                }
                buf.clear();
            }
            fw.end(&mut buf).map_err(|e| e.to_string())?;
            out.put(&String::from_utf8_lossy(&buf))?;
            return Ok(());
        }
    }
    if format == DumpFormat::GeoJson {
        // A plain H5Col table (no geometry): one document.
        out.put(&dump_row_list(f, table, rows, format, None).map_err(|e| e.to_string())?)?;
        return Ok(());
    }
    if rows.is_empty() {
        // The header line alone.
        out.put(&dump_row_list(f, table, rows, format, None).map_err(|e| e.to_string())?)?;
        return Ok(());
    }
    for (k, chunk) in rows.chunks(CHUNK_ROWS).enumerate() {
        // A range's chunk is read as one span; a list's as spans of nearby rows.
        let text = match (list.is_empty(), chunk) {
            (false, [first, .., last]) => dump_rows(f, table, *first, last + 1, format),
            _ => dump_row_list(f, table, chunk, format, given.map(|(c, w)| (c, w, k * CHUNK_ROWS))),
        }
        .map_err(|e| e.to_string())?;
        // Every chunk starts with the header line; print it once.
        let body = if k == 0 { text.as_str() } else { text.split_once('\n').map(|x| x.1).unwrap_or("") };
        if !out.put(body)? {
            return Ok(());
        }
    }
    Ok(())
}

//! The benchmark anchor of issue #20: native FlatGeobuf (the `flatgeobuf` crate, its packed
//! Hilbert R-tree) against Marquet, cold and warm, on the data `marquet bench` generated.
//!
//! For each data set the raw WKB that `marquet::bench::run` wrote (`NAME.wkb`,
//! `NAME.offsets`, row `i` has id `i`) is written as `NAME.fgb` with an `id` column and the
//! index (`FgbWriter`, node size 16; untimed beyond the reported write time). Then every
//! window is answered by both formats in four ways, interleaved window by window so that
//! drift of this shared machine hits all alike:
//!
//! * **cold**: the file opened for every window (FlatGeobuf: `File::open`, `FgbReader::open`
//!   and `select_bbox`; Marquet count: `SpatialReader::open_path` and `query` on the
//!   byte-range read path, as `marquet query --count` does; Marquet ids and WKB: the
//!   same, then the answer's rows of the id column through the same reader,
//!   `SpatialReader::take`);
//! * **warm**: opened once, then every window (FlatGeobuf keeps the `File` and re-reads its
//!   header and index per `select_bbox`, which consumes the reader; Marquet keeps one
//!   byte-range `SpatialReader` per answer form, so the count and the ids + WKB runs each
//!   start with an empty chunk cache, and reads the id column through its own cache);
//!
//! each answering as a **count** and as **ids + WKB**. FlatGeobuf's candidates are finished
//! with the predicate Marquet applies (`Intersects` of the closed window: for points the
//! closed box, for polygons `geo`'s `intersects` with the window's `Rect`), and every mode of
//! both formats must return exactly the ids of Marquet's cold answer for every window,
//! else the run fails. The medians go to stdout and to `anchor.json` in the output
//! directory, which `benches/compare/compare.py` merges with GeoParquet's cold and warm
//! figures.

use std::fs::File as StdFile;
use std::io::{BufReader, BufWriter, Seek, SeekFrom};
use std::path::Path;
use std::time::Instant;

use flatgeobuf::{ColumnType, FallibleStreamingIterator, FeatureProperties, FgbReader, FgbWriter, FgbWriterOptions, GeometryType};
use geo::Intersects;
use super::bench::{median, BenchReport, GEOMETRY, ID, TABLE};
use marquet::query::reader::SpatialReader;
use marquet::query::Query;
use marquet::BBox;

type Res<T> = std::result::Result<T, String>;

/// The four ways every window is answered.
pub const MODES: [&str; 4] = ["cold_count", "cold_ids_wkb", "warm_count", "warm_ids_wkb"];

/// Seconds per window of one format in one mode.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    pub s: [Vec<f64>; 4],
}

/// What one data set measured.
#[derive(Debug, Clone)]
pub struct AnchorReport {
    pub name: String,
    pub fgb_write_s: f64,
    pub fgb_size: u64,
    pub fgb: Timings,
    pub marquet: Timings,
    pub rows_matched: u64,
}

fn raw(dir: &Path, name: &str) -> Res<Vec<Vec<u8>>> {
    let bytes = std::fs::read(dir.join(format!("{name}.wkb"))).map_err(|e| format!("{name}.wkb: {e}"))?;
    let offs = std::fs::read(dir.join(format!("{name}.offsets"))).map_err(|e| format!("{name}.offsets: {e}"))?;
    let o: Vec<usize> = offs.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as usize).collect();
    o.windows(2)
        .map(|w| bytes.get(w[0]..w[1]).map(|b| b.to_vec()).ok_or_else(|| format!("{name}.offsets: bad offsets")))
        .collect()
}

/// Write `values` (WKB, row `i` has id `i`) as FlatGeobuf with its packed R-tree.
pub fn write_fgb(path: &Path, values: &[Vec<u8>], points: bool) -> Res<()> {
    let gt = if points { GeometryType::Point } else { GeometryType::Polygon };
    let opts = FgbWriterOptions { write_index: true, detect_type: false, promote_to_multi: false, ..Default::default() };
    let mut fgb = FgbWriter::create_with_options("bench", gt, opts).map_err(|e| e.to_string())?;
    fgb.add_column(ID, ColumnType::ULong, |_, col| col.nullable = false);
    for (i, w) in values.iter().enumerate() {
        let g: geo::Geometry<f64> = marquet::wkb::decode(w).map_err(|e| format!("row {i}: {e}"))?.into();
        fgb.add_feature_geom(g, |f| {
            use flatgeobuf::geozero::PropertyProcessor;
            let _ = f.property(0, ID, &flatgeobuf::geozero::ColumnValue::ULong(i as u64));
        })
        .map_err(|e| e.to_string())?;
    }
    let out = BufWriter::new(StdFile::create(path).map_err(|e| format!("{}: {e}", path.display()))?);
    fgb.write(out).map_err(|e| e.to_string())
}

/// Little-endian ISO WKB of a FlatGeobuf point or polygon (flat `xy`, ring `ends` in
/// coordinate pairs).
fn fgb_wkb(points: bool, xy: &[f64], ends: Option<Vec<u32>>, out: &mut Vec<u8>) {
    out.push(1);
    if points {
        out.extend_from_slice(&1u32.to_le_bytes());
        out.extend_from_slice(&xy[0].to_le_bytes());
        out.extend_from_slice(&xy[1].to_le_bytes());
        return;
    }
    out.extend_from_slice(&3u32.to_le_bytes());
    let n = (xy.len() / 2) as u32;
    let ends = ends.unwrap_or_else(|| vec![n]);
    out.extend_from_slice(&(ends.len() as u32).to_le_bytes());
    let mut s = 0usize;
    for &e in &ends {
        out.extend_from_slice(&(e - s as u32).to_le_bytes());
        for v in &xy[2 * s..2 * e as usize] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        s = e as usize;
    }
}

/// A FlatGeobuf polygon (flat `xy`, ring `ends` in coordinate pairs) as a `geo` polygon.
pub fn fgb_polygon(xy: &[f64], ends: Option<Vec<u32>>) -> geo::Polygon<f64> {
    let n = xy.len() / 2;
    let ends: Vec<usize> = ends.map(|e| e.iter().map(|&v| v as usize).collect()).unwrap_or_else(|| vec![n]);
    let mut rings = Vec::with_capacity(ends.len());
    let mut s = 0;
    for e in ends {
        rings.push(geo::LineString::from((s..e).map(|k| (xy[2 * k], xy[2 * k + 1])).collect::<Vec<_>>()));
        s = e;
    }
    let ext = rings.remove(0);
    geo::Polygon::new(ext, rings)
}

/// One FlatGeobuf query on an open reader: ids (ascending) and WKB bytes (`with_wkb`).
fn fgb_query<R: std::io::Read + Seek>(r: R, w: &BBox, points: bool, with_wkb: bool) -> Res<(Vec<u64>, u64)> {
    let reader = FgbReader::open(r).map_err(|e| e.to_string())?;
    let mut it = reader.select_bbox(w.xmin, w.ymin, w.xmax, w.ymax).map_err(|e| e.to_string())?;
    let rect = geo::Rect::new((w.xmin, w.ymin), (w.xmax, w.ymax));
    let mut ids = Vec::new();
    let mut wkb = Vec::new();
    while let Some(f) = it.next().map_err(|e| e.to_string())? {
        let Some(g) = f.geometry() else { continue };
        let Some(xy) = g.xy() else { continue };
        let xy = xy.iter().collect::<Vec<f64>>();
        let hit = if points {
            xy.len() >= 2 && xy[0] >= w.xmin && xy[0] <= w.xmax && xy[1] >= w.ymin && xy[1] <= w.ymax
        } else {
            fgb_polygon(&xy, g.ends().map(|e| e.iter().collect())).intersects(&rect)
        };
        if hit {
            ids.push(f.property::<u64>(ID).map_err(|e| e.to_string())?);
            if with_wkb {
                fgb_wkb(points, &xy, g.ends().map(|e| e.iter().collect()), &mut wkb);
            }
        }
    }
    ids.sort_unstable();
    Ok((ids, wkb.len() as u64))
}

fn ids_of(a: marquet::h5col::Array) -> Vec<u64> {
    let mut ids: Vec<u64> = a.bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
    ids.sort_unstable();
    ids
}

/// One cold Marquet query: what `marquet query FILE --bbox …` does, on the byte-range read
/// path; the ids are the answer's rows of the id column, read by the same reader.
fn marquet_cold(path: &Path, w: &BBox, with_wkb: bool) -> Res<Vec<u64>> {
    let mut r = SpatialReader::open_path(path, TABLE, Some(GEOMETRY)).map_err(|e| e.to_string())?;
    let q = r.query(&Query::bbox(*w).with_wkb(with_wkb)).map_err(|e| e.to_string())?;
    if !with_wkb {
        return Ok(q.rows);
    }
    Ok(ids_of(r.take(ID, &q.rows).map_err(|e| e.to_string())?))
}

/// Measure one data set (see the module documentation); `expect[i]` are Marquet's ids for
/// window `i` from `marquet bench`.
pub fn measure(dir: &Path, name: &str, windows: &[BBox], expect: &[Vec<u64>]) -> Res<AnchorReport> {
    let points = name == "points";
    let values = raw(dir, name)?;
    let fgb_path = dir.join(format!("{name}.fgb"));
    let t0 = Instant::now();
    write_fgb(&fgb_path, &values, points)?;
    let fgb_write_s = t0.elapsed().as_secs_f64();
    drop(values);
    let fgb_size = std::fs::metadata(&fgb_path).map_err(|e| e.to_string())?.len();
    let h5 = dir.join(format!("{name}.h5"));
    // One reader per warm mode, so that neither finds chunks the other decoded.
    // Both on the byte-range read path (`SpatialReader::open_path`, what the CLI uses),
    // which reads the id column too.
    let mut readers = [
        SpatialReader::open_path(&h5, TABLE, Some(GEOMETRY)).map_err(|e| e.to_string())?,
        SpatialReader::open_path(&h5, TABLE, Some(GEOMETRY)).map_err(|e| e.to_string())?,
    ];
    let mut fgb_warm = BufReader::new(StdFile::open(&fgb_path).map_err(|e| e.to_string())?);
    let (mut fgb, mut mq) = (Timings::default(), Timings::default());
    let mut matched = 0;
    for (i, w) in windows.iter().enumerate() {
        let want = &expect[i];
        matched += want.len() as u64;
        let check = |what: &str, got: &[u64]| -> Res<()> {
            if got != want.as_slice() {
                return Err(format!("{name} window {i} {w:?}: {what} returned {} rows, marquet bench {}", got.len(), want.len()));
            }
            Ok(())
        };
        for (m, with_wkb) in [(0usize, false), (1, true)] {
            // Cold FlatGeobuf.
            let t = Instant::now();
            let (ids, _) = fgb_query(BufReader::new(StdFile::open(&fgb_path).map_err(|e| e.to_string())?), w, points, with_wkb)?;
            fgb.s[m].push(t.elapsed().as_secs_f64());
            check(&format!("flatgeobuf {}", MODES[m]), &ids)?;
            // Cold Marquet.
            let t = Instant::now();
            let rows = marquet_cold(&h5, w, with_wkb)?;
            mq.s[m].push(t.elapsed().as_secs_f64());
            if with_wkb {
                check(&format!("marquet {}", MODES[m]), &rows)?;
            } else if rows.len() != want.len() {
                return Err(format!("{name} window {i}: marquet cold count {} != {}", rows.len(), want.len()));
            }
            // Warm FlatGeobuf: the file stays open; header and index are read again.
            let t = Instant::now();
            fgb_warm.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
            let (ids, _) = fgb_query(&mut fgb_warm, w, points, with_wkb)?;
            fgb.s[m + 2].push(t.elapsed().as_secs_f64());
            check(&format!("flatgeobuf {}", MODES[m + 2]), &ids)?;
            // Warm Marquet: one reader.
            let t = Instant::now();
            let r = readers[m].query(&Query::bbox(*w).with_wkb(with_wkb)).map_err(|e| e.to_string())?;
            let ids = if with_wkb { ids_of(readers[m].take(ID, &r.rows).map_err(|e| e.to_string())?) } else { r.rows };
            mq.s[m + 2].push(t.elapsed().as_secs_f64());
            if with_wkb {
                check(&format!("marquet {}", MODES[m + 2]), &ids)?;
            } else if ids.len() != want.len() {
                return Err(format!("{name} window {i}: marquet warm count {} != {}", ids.len(), want.len()));
            }
        }
    }
    Ok(AnchorReport { name: name.to_string(), fgb_write_s, fgb_size, fgb, marquet: mq, rows_matched: matched })
}

/// Run the anchor on every data set of `report` and write `anchor.json`; returns the table.
pub fn run(dir: &Path, report: &BenchReport) -> Res<String> {
    let mut out = String::new();
    let mut json = serde_json::Map::new();
    out += &format!("{:<9}{:<14}{:>14}{:>14}{:>10}\n", "data", "mode", "marquet ms", "fgb ms", "ratio");
    for d in &report.datasets {
        let a = measure(dir, &d.name, &report.windows, &d.query_ids)?;
        let mut modes = serde_json::Map::new();
        for (k, m) in MODES.iter().enumerate() {
            let (mq, fg) = (median(&a.marquet.s[k]), median(&a.fgb.s[k]));
            out += &format!("{:<9}{:<14}{:>14.4}{:>14.4}{:>10.3}\n", a.name, m, mq * 1e3, fg * 1e3, mq / fg);
            modes.insert(m.to_string(), serde_json::json!({ "marquet_s": a.marquet.s[k], "flatgeobuf_s": a.fgb.s[k],
                "median": { "marquet_s": mq, "flatgeobuf_s": fg } }));
        }
        let warm_vs_cold = median(&a.marquet.s[2]) / median(&a.fgb.s[0]);
        out += &format!("{:<9}{:<14}{:>14}{:>14}{:>10.3}   (marquet warm count / flatgeobuf cold count)\n", d.name, "warm/fgb-cold", "", "", warm_vs_cold);
        json.insert(
            d.name.clone(),
            serde_json::json!({ "flatgeobuf_write_s": a.fgb_write_s, "flatgeobuf_size_bytes": a.fgb_size,
                "rows_matched": a.rows_matched, "modes": modes }),
        );
    }
    let p = dir.join("anchor.json");
    std::fs::write(&p, serde_json::Value::Object(json).to_string()).map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(out)
}

//! `marquet bench --remote`: the benchmark of issue #34, Marquet read over HTTP against
//! FlatGeobuf's own HTTP reader, with h5coro as the HDF5 anchor (build with the `fgb-http`
//! feature: `bash scripts/bench-remote.sh`).
//!
//! On the files of an earlier `marquet bench --out DIR` (`points.h5`, `polygons.h5`, their
//! `.fgb` twins from the FlatGeobuf anchor, `windows.txt`, `marquet.json`), one in-process
//! [`RangeServer`] serves all four files from disk on 127.0.0.1. For each injected latency
//! (default 0 and 50 ms per request) and each window, interleaved window by window, every
//! reader starts cold (a new client, a new connection, the file opened afresh) while the
//! server's counters are reset before it and read after it (requests and body bytes: the same
//! counters for every reader):
//!
//! * **flatgeobuf**: `HttpFgbReader::open(url)`, `select_bbox`, every candidate's geometry
//!   read and finished with the exact test of the FlatGeobuf anchor (anchor.rs): the closed
//!   box for points, `geo`'s `intersects` with the window for polygons; ids from the `id`
//!   property;
//! * **marquet**: `SpatialReader::open_url(url, "/bench", Some("geometry"))` and
//!   `query(&Query::bbox(w))` in this process; rows mapped to ids through the `id` column
//!   read locally once;
//! * **marquet cloud**: the same on `points.cloud.h5` / `polygons.cloud.h5`, the files in the
//!   cloud layout (`marquet convert X.h5 X.cloud.h5 --cloud`, made in DIR on the first run:
//!   metadata first, every dataset contiguous and uncompressed but the block indexes,
//!   R-tree first);
//! * **marquet query**: the whole `marquet query URL --table /bench --bbox … --count --json`
//!   process (this executable), its count checked;
//! * **h5coro** (PyPI, the ICESat-2 project's cloud HDF5 reader; optional, needs the test
//!   venv): one Python process per data set and latency, driven window by window over a pipe.
//!   h5coro 1.0.7 reads neither compound datasets (datatype message version 3: the R-tree,
//!   the block index, the bbox column and the points' `{x, y}` geometry) nor anything but its
//!   own cold path, so for **polygons** it reads what a reader without the index must read
//!   for the window's rows: `OFFSETS[lo..=hi+1]` and then `VALUES[OFFSETS[lo]..OFFSETS[hi+1]]`,
//!   `lo`/`hi` the first and last row of Marquet's answer (taken from a local query), through
//!   its `HTTPDriver` on a fresh `H5Coro` per window, twice: with its default cache line of
//!   4 MiB (every request it makes reads one or more whole lines) and with 64 KiB lines; the
//!   bytes are checked by CRC-32 against a local read. For points it is not run.
//!
//! Every window's ids must equal between FlatGeobuf, Marquet and `marquet.json` (Marquet's
//! local answer), else the run fails. Medians per window go to stdout, and everything per
//! window to `DIR/remote.json`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use flatgeobuf::{FeatureProperties, HttpFgbReader};
use geo::Intersects;
use marquet::query::reader::SpatialReader;
use marquet::query::Query;
use marquet::BBox;

use super::bench::{median, GEOMETRY, ID, TABLE};
use super::range_server::RangeServer;

type Res<T> = std::result::Result<T, String>;

/// The h5coro runs: name and cache line size (bytes per request it makes; 4 MiB is its
/// default).
const H5CORO_LINES: [(&str, u64); 2] = [("h5coro", 0x40_0000), ("h5coro 64KiB", 0x1_0000)];

/// The h5coro side: reads commands from stdin, one per window, answers one line each.
const H5CORO_SCRIPT: &str = r#"
import sys, time, zlib, logging
logging.disable(logging.WARNING)
from h5coro import h5coro, webdriver
url, line_size = sys.argv[1], int(sys.argv[2])
print("ready", flush=True)
for line in sys.stdin:
    parts = line.split()
    if not parts or parts[0] == "quit":
        break
    lo, hi = int(parts[1]), int(parts[2])
    t = time.perf_counter()
    h = h5coro.H5Coro(url, webdriver.HTTPDriver, errorChecking=True, cacheLineSize=line_size)
    crc, n = 0, 0
    if hi >= lo:
        off = h.readDatasets([{"dataset": "/bench/geometry/OFFSETS", "hyperslice": [[lo, hi + 2]]}], block=True)["/bench/geometry/OFFSETS"]
        if off is None:
            raise SystemExit("h5coro could not read /bench/geometry/OFFSETS")
        a, b = int(off[0]), int(off[-1])
        vals = h.readDatasets([{"dataset": "/bench/geometry/VALUES", "hyperslice": [[a, b]]}], block=True)["/bench/geometry/VALUES"]
        if vals is None:
            raise SystemExit("h5coro could not read /bench/geometry/VALUES")
        data = vals.tobytes()
        crc, n = zlib.crc32(data), len(data)
    dt = time.perf_counter() - t
    h.close()
    print(f"done {dt} {n} {crc}", flush=True)
"#;

/// What to measure.
#[derive(Debug, Clone)]
pub struct RemoteConfig {
    /// The output directory of an earlier `marquet bench`.
    pub dir: PathBuf,
    /// Injected latency per request, milliseconds.
    pub latencies_ms: Vec<u64>,
    /// Only the first N windows.
    pub windows: Option<usize>,
    /// Python with h5coro (None: h5coro is not run).
    pub python: Option<PathBuf>,
    /// Run `marquet query URL` as a whole process per window.
    pub cli: bool,
}

/// Requests, bytes and seconds per window of one reader.
#[derive(Debug, Clone, Default)]
pub struct Side {
    pub requests: Vec<u64>,
    pub bytes: Vec<u64>,
    pub secs: Vec<f64>,
}

impl Side {
    fn push(&mut self, srv: &RangeServer, secs: f64) {
        let s = srv.stats();
        self.requests.push(s.requests);
        self.bytes.push(s.body_bytes);
        self.secs.push(secs);
    }
    fn med(&self) -> (f64, f64, f64) {
        let f = |v: &[u64]| median(&v.iter().map(|&x| x as f64).collect::<Vec<_>>());
        (f(&self.requests), f(&self.bytes), median(&self.secs))
    }
    fn to_json(&self) -> serde_json::Value {
        let (r, b, s) = self.med();
        serde_json::json!({ "requests": self.requests, "bytes": self.bytes, "secs": self.secs,
            "median": { "requests": r, "bytes": b, "secs": s },
            "total": { "requests": self.requests.iter().sum::<u64>(), "bytes": self.bytes.iter().sum::<u64>() } })
    }
}

/// One data set at one latency.
#[derive(Debug, Clone)]
pub struct Run {
    pub dataset: String,
    pub latency_ms: u64,
    /// Reader name and what it measured (None: not run, with the reason).
    pub sides: Vec<(String, std::result::Result<Side, String>)>,
    pub rows_matched: u64,
}

fn read_windows(dir: &Path) -> Res<Vec<BBox>> {
    let p = dir.join("windows.txt");
    let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e} (run `marquet bench --out {}` first)", p.display(), dir.display()))?;
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|s| s.trim().parse::<f64>()).collect::<std::result::Result<_, _>>().map_err(|e| format!("{}: {l:?}: {e}", p.display()))?;
            match v[..] {
                [a, b, c, d] => Ok(BBox::xy(a, b, c, d)),
                _ => Err(format!("{}: {l:?} is not XMIN,YMIN,XMAX,YMAX", p.display())),
            }
        })
        .collect()
}

/// `marquet.json`'s ids per window of one data set (Marquet's local answer).
fn expected_ids(dir: &Path, name: &str) -> Res<Vec<Vec<u64>>> {
    let p = dir.join("marquet.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).map_err(|e| format!("{}: {e}", p.display()))?).map_err(|e| format!("{}: {e}", p.display()))?;
    let ids = v["datasets"][name]["query_ids"].as_array().ok_or_else(|| format!("{}: no datasets.{name}.query_ids", p.display()))?;
    Ok(ids.iter().map(|w| w.as_array().map(|a| a.iter().filter_map(|x| x.as_u64()).collect()).unwrap_or_default()).collect())
}

/// The `id` of every row, read locally once (row → id for Marquet's answers).
fn row_ids(h5: &Path) -> Res<Vec<u64>> {
    let f = marquet::File::open(h5).map_err(|e| e.to_string())?;
    let t = marquet::Table::open(&f, TABLE).map_err(|e| e.to_string())?;
    let n = t.nrows().map_err(|e| e.to_string())?;
    let a = t.column(ID).map_err(|e| e.to_string())?.read(0, n).map_err(|e| e.to_string())?;
    Ok(a.bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect())
}

fn ids_of_rows(ids: &[u64], rows: &[u64]) -> Res<Vec<u64>> {
    let mut v = rows.iter().map(|&r| ids.get(r as usize).copied().ok_or_else(|| format!("row {r} past the id column"))).collect::<Res<Vec<u64>>>()?;
    v.sort_unstable();
    Ok(v)
}

/// FlatGeobuf's own HTTP reader, cold: open, select_bbox, every candidate finished with the
/// exact test. Ids ascending.
async fn fgb_http(url: &str, w: &BBox, points: bool) -> Res<Vec<u64>> {
    let r = HttpFgbReader::open(url).await.map_err(|e| format!("{url}: {e}"))?;
    let mut it = r.select_bbox(w.xmin, w.ymin, w.xmax, w.ymax).await.map_err(|e| format!("{url}: {e}"))?;
    let rect = geo::Rect::new((w.xmin, w.ymin), (w.xmax, w.ymax));
    let mut ids = Vec::new();
    while let Some(f) = it.next().await.map_err(|e| format!("{url}: {e}"))? {
        let Some(g) = f.geometry() else { continue };
        let Some(xy) = g.xy() else { continue };
        let xy = xy.iter().collect::<Vec<f64>>();
        let hit = if points {
            xy.len() >= 2 && xy[0] >= w.xmin && xy[0] <= w.xmax && xy[1] >= w.ymin && xy[1] <= w.ymax
        } else {
            super::anchor::fgb_polygon(&xy, g.ends().map(|e| e.iter().collect())).intersects(&rect)
        };
        if hit {
            ids.push(f.property::<u64>(ID).map_err(|e| e.to_string())?);
        }
    }
    ids.sort_unstable();
    Ok(ids)
}

/// Marquet over HTTP, cold (a new reader, its own client and connections): the rows of the
/// window's answer, and the read path it took.
fn marquet_url(url: &str, w: &BBox) -> Res<(Vec<u64>, &'static str)> {
    let mut r = SpatialReader::open_url(url, TABLE, Some(GEOMETRY)).map_err(|e| format!("{url}: {e}"))?;
    let rows = r.query(&Query::bbox(*w)).map_err(|e| format!("{url}: {e}"))?.rows;
    Ok((rows, r.read_path()))
}

/// `marquet query URL --count --json` as a whole process: the count it printed.
fn marquet_cli(url: &str, w: &BBox) -> Res<u64> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let out = Command::new(exe)
        .args(["query", url, "--table", TABLE, "--column", GEOMETRY, "--bbox", &format!("{},{},{},{}", w.xmin, w.ymin, w.xmax, w.ymax), "--count", "--json"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("marquet query {url}: {} {}", out.status, String::from_utf8_lossy(&out.stderr).trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap_or("")).map_err(|e| format!("marquet query {url} --json: {e}: {text}"))?;
    v["count"].as_u64().ok_or_else(|| format!("marquet query {url} --json: no count in {text}"))
}

/// The h5coro process of one data set and latency.
struct H5coro {
    child: std::process::Child,
    out: BufReader<std::process::ChildStdout>,
}

impl H5coro {
    fn start(python: &Path, url: &str, line_size: u64) -> Res<H5coro> {
        let mut child = Command::new(python)
            .args(["-c", H5CORO_SCRIPT, url, &line_size.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", python.display()))?;
        let mut out = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut l = String::new();
        out.read_line(&mut l).map_err(|e| e.to_string())?;
        if l.trim() != "ready" {
            let _ = child.kill();
            return Err(format!("h5coro did not start: {l:?}"));
        }
        Ok(H5coro { child, out })
    }
    /// Read rows lo..=hi (none when hi < lo): (seconds, bytes, crc32).
    fn window(&mut self, lo: i64, hi: i64) -> Res<(f64, u64, u32)> {
        let inp = self.child.stdin.as_mut().ok_or("no stdin")?;
        writeln!(inp, "rows {lo} {hi}").map_err(|e| e.to_string())?;
        inp.flush().map_err(|e| e.to_string())?;
        let mut l = String::new();
        self.out.read_line(&mut l).map_err(|e| e.to_string())?;
        let p: Vec<&str> = l.split_whitespace().collect();
        match p[..] {
            ["done", s, n, c] => Ok((s.parse().map_err(|_| l.clone())?, n.parse().map_err(|_| l.clone())?, c.parse().map_err(|_| l.clone())?)),
            _ => Err(format!("h5coro: {l:?}")),
        }
    }
}

impl Drop for H5coro {
    fn drop(&mut self) {
        if let Some(i) = self.child.stdin.as_mut() {
            let _ = writeln!(i, "quit");
        }
        drop(self.child.stdin.take());
        let _ = self.child.wait();
    }
}

/// CRC-32 of the WKB of rows lo..=hi read locally (the check of h5coro's bytes).
fn local_crc(t: &marquet::Table, lo: u64, hi: u64) -> Res<(u64, u32)> {
    let b = t.read_wkb(GEOMETRY, lo, hi + 1).map_err(|e| e.to_string())?;
    let mut c = libdeflater::Crc::new();
    c.update(&b.bytes);
    Ok((b.bytes.len() as u64, c.sum()))
}

fn measure(cfg: &RemoteConfig, srv: &RangeServer, rt: &tokio::runtime::Runtime, name: &str, windows: &[BBox], latency: u64) -> Res<Run> {
    let points = name == "points";
    let h5 = cfg.dir.join(format!("{name}.h5"));
    let expect = expected_ids(&cfg.dir, name)?;
    if expect.len() < windows.len() {
        return Err(format!("marquet.json has {} windows of {name}, windows.txt {}", expect.len(), windows.len()));
    }
    let ids = row_ids(&h5)?;
    let (fgb_url, h5_url) = (srv.url(&format!("{name}.fgb")), srv.url(&format!("{name}.h5")));
    let cloud_url = srv.url(&format!("{name}.cloud.h5"));
    srv.set_latency_ms(latency);
    let mut fgb = Side::default();
    let mut mq: std::result::Result<Side, String> = Ok(Side::default());
    let mut mqc: std::result::Result<Side, String> = Ok(Side::default());
    let mut cli: std::result::Result<Side, String> = if cfg.cli { Ok(Side::default()) } else { Err("not run (--no-cli)".into()) };
    // h5coro: polygons only, rows from a local Marquet query, bytes checked against a local read.
    // Twice: with h5coro's default cache line (4 MiB, what it reads per request) and with
    // 64 KiB lines.
    let mut coros: Vec<std::result::Result<(H5coro, Side), String>> = H5CORO_LINES
        .iter()
        .map(|&(_, line)| match (&cfg.python, points) {
            (_, true) => Err("h5coro cannot read the points' geometry (a compound {x, y} dataset: datatype message version 3)".into()),
            (None, _) => Err("not run (no Python with h5coro: scripts/pyvenv.sh)".into()),
            (Some(py), false) => H5coro::start(py, &h5_url, line).map(|h| (h, Side::default())),
        })
        .collect();
    let local = marquet::File::open(&h5).map_err(|e| e.to_string())?;
    let local_t = marquet::Table::open(&local, TABLE).map_err(|e| e.to_string())?;
    let mut local_r = SpatialReader::open_path(&h5, TABLE, Some(GEOMETRY)).map_err(|e| e.to_string())?;
    let mut matched = 0;
    for (i, w) in windows.iter().enumerate() {
        let want = &expect[i];
        matched += want.len() as u64;
        let check = |who: &str, got: &[u64]| -> Res<()> {
            if got != want.as_slice() {
                return Err(format!("{name} window {i} {w:?} at {latency} ms: {who} returned {} rows, marquet.json {}", got.len(), want.len()));
            }
            Ok(())
        };
        srv.reset_stats();
        let t = Instant::now();
        let got = rt.block_on(fgb_http(&fgb_url, w, points))?;
        fgb.push(srv, t.elapsed().as_secs_f64());
        check("flatgeobuf (HttpFgbReader)", &got)?;

        // The default layout, then the same table in the cloud layout (`convert --cloud`).
        for (res, url, who) in [(&mut mq, &h5_url, "marquet"), (&mut mqc, &cloud_url, "marquet cloud layout")] {
            let Ok(side) = res else { continue };
            srv.reset_stats();
            let t = Instant::now();
            match marquet_url(url, w) {
                Ok((rows, path)) => {
                    side.push(srv, t.elapsed().as_secs_f64());
                    if path != "byte-range" {
                        return Err(format!("{name} window {i}: {who} read {url} on the {path} path, not by byte range"));
                    }
                    check(who, &ids_of_rows(&ids, &rows)?)?;
                }
                Err(e) if i == 0 => *res = Err(e),
                Err(e) => return Err(format!("{name} window {i}: {who}: {e}")),
            }
        }
        if let Ok(side) = &mut cli {
            srv.reset_stats();
            let t = Instant::now();
            match marquet_cli(&h5_url, w) {
                Ok(n) => {
                    side.push(srv, t.elapsed().as_secs_f64());
                    if n != want.len() as u64 {
                        return Err(format!("{name} window {i} {w:?}: marquet query URL counted {n}, marquet.json {}", want.len()));
                    }
                }
                Err(e) if i == 0 => cli = Err(e),
                Err(e) => return Err(format!("{name} window {i}: {e}")),
            }
        }
        let rows = if coros.iter().any(|c| c.is_ok()) { local_r.query(&Query::bbox(*w)).map_err(|e| e.to_string())?.rows } else { Vec::new() };
        let (lo, hi) = (rows.iter().min().map_or(0, |&r| r as i64), rows.iter().max().map_or(-1, |&r| r as i64));
        let want_crc = if hi >= lo && !rows.is_empty() { Some(local_crc(&local_t, lo as u64, hi as u64)?) } else { None };
        for (h, side) in coros.iter_mut().flatten() {
            srv.reset_stats();
            let (secs, n, crc) = h.window(lo, hi)?;
            side.push(srv, secs);
            if let Some((ln, lcrc)) = want_crc {
                if (n, crc) != (ln, lcrc) {
                    return Err(format!("{name} window {i}: h5coro read {n} bytes (crc {crc:08x}) of rows {lo}..={hi}, the local file has {ln} (crc {lcrc:08x})"));
                }
            }
        }
    }
    let mut sides = vec![("flatgeobuf".to_string(), Ok(fgb)), ("marquet".into(), mq), ("marquet cloud".into(), mqc), ("marquet query".into(), cli)];
    for (c, (who, _)) in coros.into_iter().zip(H5CORO_LINES) {
        sides.push((who.to_string(), c.map(|(_, s)| s)));
    }
    Ok(Run { dataset: name.to_string(), latency_ms: latency, sides, rows_matched: matched })
}

/// Run the benchmark (see the module documentation); returns the table printed.
pub fn run(cfg: &RemoteConfig) -> Res<String> {
    let mut windows = read_windows(&cfg.dir)?;
    if let Some(n) = cfg.windows {
        windows.truncate(n);
    }
    let srv = RangeServer::start().map_err(|e| e.to_string())?;
    for n in ["points.h5", "polygons.h5", "points.fgb", "polygons.fgb"] {
        let p = cfg.dir.join(n);
        srv.add_file(n, &p).map_err(|e| format!("{}: {e} (run `marquet bench --out {}` with the FlatGeobuf anchor first)", p.display(), cfg.dir.display()))?;
    }
    // The cloud layout of both files (`marquet convert X.h5 X.cloud.h5 --cloud`), made once.
    for n in ["points", "polygons"] {
        let (src, out) = (cfg.dir.join(format!("{n}.h5")), cfg.dir.join(format!("{n}.cloud.h5")));
        if !out.exists() {
            let opts = marquet::convert::ConvertOptions { cloud: true, ..Default::default() };
            marquet::convert::convert(&src, &out, &opts).map_err(|e| format!("{}: {e}", out.display()))?;
        }
        srv.add_file(&format!("{n}.cloud.h5"), &out).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    let mut out = format!("{} windows, server {}; per window medians; cold: a new client and connection per window\n", windows.len(), srv.addr());
    out += &format!("{:<9}{:>6}  {:<14}{:>9}{:>12}{:>11}\n", "data", "lat", "reader", "requests", "bytes", "ms");
    let mut json = Vec::new();
    for name in ["points", "polygons"] {
        for &lat in &cfg.latencies_ms {
            let r = measure(cfg, &srv, &rt, name, &windows, lat)?;
            let mut sides = serde_json::Map::new();
            let fgb = r.sides[0].1.as_ref().map(Side::med).ok();
            for (who, s) in &r.sides {
                match s {
                    Ok(s) => {
                        let (rq, b, t) = s.med();
                        out += &format!("{:<9}{:>6}  {:<14}{:>9.1}{:>12.0}{:>11.2}\n", r.dataset, format!("{}ms", r.latency_ms), who, rq, b, t * 1e3);
                        sides.insert(who.clone(), s.to_json());
                    }
                    Err(e) => {
                        out += &format!("{:<9}{:>6}  {:<14}  {e}\n", name, format!("{lat}ms"), who);
                        sides.insert(who.clone(), serde_json::json!({ "not_measured": e }));
                    }
                }
            }
            for (who, m) in r.sides[1..3].iter() {
                let (Some((fr, fb, ft)), Ok(m)) = (fgb, m) else { continue };
                let (mr, mb, mt) = m.med();
                let ok = |x: f64, target: f64| if x <= target { "met" } else { "NOT met" };
                out += &format!(
                    "{:<9}{:>6}  {who}/flatgeobuf: requests {:.2}x (target <= 1.0: {}), bytes {:.2}x (<= 2: {}), time {:.2}x{}\n",
                    name,
                    format!("{lat}ms"),
                    mr / fr,
                    ok(mr / fr, 1.0),
                    mb / fb,
                    ok(mb / fb, 2.0),
                    mt / ft,
                    if lat >= 50 { format!(" (<= 1.0 at 50 ms: {})", ok(mt / ft, 1.0)) } else { String::new() }
                );
            }
            json.push(serde_json::json!({ "dataset": name, "latency_ms": lat, "windows": windows.len(), "rows_matched": r.rows_matched, "readers": sides }));
        }
    }
    let p = cfg.dir.join("remote.json");
    std::fs::write(&p, serde_json::Value::Array(json).to_string()).map_err(|e| format!("{}: {e}", p.display()))?;
    Ok(out)
}

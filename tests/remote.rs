//! Issue #34: Marquet files queried where they lie — on a web server (HTTP with `Range`) and
//! in object storage (S3) — without downloading them.
//!
//! The servers run on 127.0.0.1, started by the tests themselves: the workspace's own
//! HTTP server with fault injection (`marquet_dev::range_server`) and `moto` in server mode
//! as the S3 endpoint (`marquet_dev::moto`, from the test venv of scripts/pyvenv.sh). Both
//! hold the same files: tables converted from the peers' GeoParquet files (Overture,
//! DuckDB, GDAL, geopandas, …) with the default layout, and Marquet's own test files.
//!
//! Oracles: every window's answer through a URL equals the local byte-range read (rows,
//! WKB and every counter of the pruning layers) and a full scan (no indexes, through
//! libhdf5); the server's own request and byte counters equal what the reader reports; a
//! small window fetches a small part of a large file. Each error case of the issue has a
//! test: 404, 403, 416, a server without `Range`, a file changed while read, 5xx answers
//! retried, and a server that never answers (a timeout, not a hang).

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use marquet::convert::{convert, ConvertOptions};
use marquet::marquet::WriteLayout;
use marquet::query::reader::SpatialReader;
use marquet::query::{Predicate, Query, QueryResult};
use marquet::remote::RemoteOptions;
use marquet::{BBox, Error as MarquetError, RemoteErrorKind};
use marquet_dev::range_server::RangeServer;

/// Held by each test for its whole run: these tests write HDF5 files while others start
/// processes (`marquet`, the S3 server). HDF5 opens a file without close-on-exec and the
/// library marks its descriptor just after (`h5::file_open`); a process started from
/// another thread in between inherits the descriptor and, with it, the file's lock for its
/// lifetime — the next open of that file here then fails ("unable to lock file"). An open
/// failed so once under load, the likely cause; run one at a time.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static M: std::sync::Mutex<()> = std::sync::Mutex::new(());
    M.lock().unwrap_or_else(|p| p.into_inner())
}

fn tmpdir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("marquet-remote-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn walk(dir: &Path, ext: &str, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, ext, out);
        } else if p.extension().and_then(|e| e.to_str()) == Some(ext) {
            out.push(p);
        }
    }
}

/// The files both servers hold, in `dir`: every peer GeoParquet file converted with the
/// default layout, and a generated table of 40,000 polygons in small chunks (many chunks,
/// a deep chunk index: what makes reading by range differ from reading a whole file).
fn corpus(dir: &Path) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/peers");
    let mut inputs = Vec::new();
    walk(&root, "parquet", &mut inputs);
    assert!(inputs.len() >= 50, "only {} GeoParquet files under testdata/peers", inputs.len());
    let mut names = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let name = format!("peer{i}.h5");
        if convert(input, &dir.join(&name), &ConvertOptions::default()).is_ok() {
            names.push(name);
        }
    }
    assert!(names.len() >= 45, "only {} peers converted", names.len());
    let big = dir.join("big.h5");
    write_big(&big);
    names.push("big.h5".into());
    names
}

/// 40,000 squares of 0.4° on a 0.5° grid (table `/squares`, converted from GeoJSON with
/// the default layout but chunks of 64 rows and 4 KiB of WKB).
fn write_big(path: &Path) {
    let mut s = String::from("{\"type\":\"FeatureCollection\",\"features\":[");
    for i in 0..40_000u32 {
        let (x, y) = (f64::from(i % 200) * 0.5 - 50.0, f64::from(i / 200) * 0.5 - 50.0);
        if i > 0 {
            s.push(',');
        }
        s += &format!(
            "{{\"type\":\"Feature\",\"properties\":{{\"i\":{i}}},\"geometry\":{{\"type\":\"Polygon\",\"coordinates\":[[[{x},{y}],[{},{y}],[{},{}],[{x},{}],[{x},{y}]]]}}}}",
            x + 0.4,
            x + 0.4,
            y + 0.4,
            y + 0.4
        );
    }
    s += "]}";
    let src = path.with_extension("geojson");
    std::fs::write(&src, s).unwrap();
    let opts = ConvertOptions {
        table: Some("/squares".into()),
        layout: WriteLayout::default().with_chunk_rows(64).with_values_chunk_bytes(4096),
        ..Default::default()
    };
    convert(&src, path, &opts).unwrap();
    std::fs::remove_file(&src).unwrap();
}

fn fingerprint(r: &QueryResult) -> String {
    format!("{:?} {:?} {:?}", r.rows, r.stats.counters(), r.wkb.as_ref().map(|w| (&w.bytes, &w.offsets, &w.valid)))
}

/// Every table of `local` read through `url`: the same answers as the local byte-range
/// read and a full scan, for every window, with and without indexes. Returns the queries
/// compared.
fn compare(local: &Path, url: &str, opts: &RemoteOptions) -> usize {
    let tables = marquet::query::reader::table_paths(local).unwrap();
    let mut n = 0;
    for table in tables {
        let Ok(mut mine) = SpatialReader::open_byte_range(local, &table, None) else { continue };
        let mut there = SpatialReader::open_url_with(url, &table, None, opts).unwrap_or_else(|e| panic!("{url} {table}: {e}"));
        assert_eq!(there.read_path(), "byte-range", "{url} {table}");
        let f = marquet::File::open(local).unwrap();
        let t = marquet::Table::open(&f, &table).unwrap();
        let extent = t.geometry_column(mine.column()).ok().and_then(|c| c.bbox).map(|b| b.0);
        for w in common::windows(extent) {
            for (pred, idx) in [(Predicate::Intersects, true), (Predicate::Intersects, false), (Predicate::Within, true)] {
                let q = Query::bbox(w).with_predicate(pred).with_indexes(idx).with_wkb(true);
                let a = mine.query(&q).unwrap_or_else(|e| panic!("{} {table} {w:?}: {e}", local.display()));
                let b = there.query(&q).unwrap_or_else(|e| panic!("{url} {table} {w:?}: {e}"));
                assert_eq!(fingerprint(&a), fingerprint(&b), "{url} {table} {w:?} {pred:?} indexes {idx}");
                let scan = marquet::query::TableQuery::query(&t, mine.column(), &Query::bbox(w).with_predicate(pred).with_indexes(false)).unwrap();
                assert_eq!(scan.rows, b.rows, "{url} {table} {w:?} {pred:?}: not the full scan's rows");
                n += 1;
            }
        }
    }
    n
}

#[test]
fn http_answers_equal_local_reads_and_a_full_scan() {
    let _serial = one_at_a_time();
    let dir = tmpdir("http");
    let names = corpus(&dir);
    let server = RangeServer::serve_dir(&dir).unwrap();
    let opts = RemoteOptions::default();
    let mut queries = 0;
    for name in &names {
        queries += compare(&dir.join(name), &server.url(name), &opts);
    }
    assert!(queries >= 1000, "only {queries} queries compared");

    // What the reader counts is what the server served; a small window of the large file
    // fetches a small part of it, and a warm reader fetches nothing twice.
    let big = dir.join("big.h5");
    let size = std::fs::metadata(&big).unwrap().len();
    let h = server.handle();
    h.reset_stats();
    let mut r = SpatialReader::open_url(&server.url("big.h5"), "/squares", None).unwrap();
    let q = Query::bbox(BBox::xy(0.1, 0.1, 0.3, 0.3));
    let a = r.query(&q).unwrap();
    assert_eq!(a.rows.len(), 1);
    let st = r.remote_stats().unwrap();
    let served = h.stats();
    assert_eq!((st.requests, st.bytes_fetched), (served.requests, served.body_bytes), "reader vs server counters");
    assert!(st.bytes_fetched * 4 < size, "a one-row window fetched {} of {size} bytes", st.bytes_fetched);
    let again = r.query(&q).unwrap();
    assert_eq!(again.rows, a.rows);
    assert_eq!(r.remote_stats().unwrap(), st, "a repeated window fetched again");
    eprintln!("http: {} files, {queries} queries; one window of big.h5: {} requests, {} of {size} bytes", names.len(), st.requests, st.bytes_fetched);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same files in an S3 bucket (moto): the same answers.
#[test]
fn s3_answers_equal_local_reads() {
    let _serial = one_at_a_time();
    let Some(python) = common::venv_python_with("moto", "the S3 endpoint of issue #34") else { return };
    let dir = tmpdir("s3");
    let names = corpus(&dir);
    let moto = marquet_dev::moto::MotoServer::start(&python, "marquet-test").unwrap();
    for n in &names {
        moto.upload_file(n, &dir.join(n)).unwrap();
    }
    let opts = RemoteOptions { store_options: moto.env().into_iter().map(|(k, v)| (k.to_string(), v)).collect(), ..RemoteOptions::default() };
    let mut queries = 0;
    for n in &names {
        queries += compare(&dir.join(n), &moto.url(n), &opts);
    }
    assert!(queries >= 1000, "only {queries} queries compared");

    // Without credentials the bucket refuses: a typed error, not a hang.
    let none = RemoteOptions {
        store_options: vec![("aws_endpoint".into(), moto.endpoint()), ("aws_allow_http".into(), "true".into()), ("aws_skip_signature".into(), "true".into())],
        ..RemoteOptions::default()
    };
    let e = SpatialReader::open_url_with(&moto.url("big.h5"), "/squares", None, &none).unwrap_err();
    assert!(matches!(e, MarquetError::Remote { kind: RemoteErrorKind::Forbidden, .. }), "{e}");
    let e = SpatialReader::open_url_with(&moto.url("nothing.h5"), "/squares", None, &opts).unwrap_err();
    assert!(matches!(e, MarquetError::Remote { kind: RemoteErrorKind::NotFound, .. }), "{e}");
    eprintln!("s3: {} files, {queries} queries", names.len());
    let _ = std::fs::remove_dir_all(&dir);
}

fn kind_of(e: &MarquetError) -> Option<RemoteErrorKind> {
    match e {
        MarquetError::Remote { kind, .. } => Some(*kind),
        _ => None,
    }
}

#[test]
fn server_failures_are_typed_errors_never_hangs_or_wrong_answers() {
    let _serial = one_at_a_time();
    let dir = tmpdir("faults");
    write_big(&dir.join("big.h5"));
    let bytes = std::fs::read(dir.join("big.h5")).unwrap();
    let server = RangeServer::start().unwrap();
    let h = server.handle();
    h.add("big.h5", bytes.clone());
    let url = server.url("big.h5");
    let q = Query::bbox(BBox::xy(-10.0, -10.0, 10.0, 10.0));
    let truth = SpatialReader::open_byte_range(&dir.join("big.h5"), "/squares", None).unwrap().query(&q).unwrap().rows;
    let fast = RemoteOptions { timeout: Duration::from_secs(2), retries: 2, ..RemoteOptions::default() };

    // 404
    let e = SpatialReader::open_url_with(&server.url("missing.h5"), "/squares", None, &fast).unwrap_err();
    assert_eq!(kind_of(&e), Some(RemoteErrorKind::NotFound), "{e}");
    // 403
    h.set_status_for("big.h5", Some(403));
    let e = SpatialReader::open_url_with(&url, "/squares", None, &fast).unwrap_err();
    assert_eq!(kind_of(&e), Some(RemoteErrorKind::Forbidden), "{e}");
    h.set_status_for("big.h5", None);
    // A server that ignores Range (200 with the whole object).
    h.set_no_range(true);
    let e = SpatialReader::open_url_with(&url, "/squares", None, &fast).unwrap_err();
    assert_eq!(kind_of(&e), Some(RemoteErrorKind::NoRangeSupport), "{e}");
    h.set_no_range(false);
    // 5xx answers are retried: two 503s, then the right answer.
    h.fail_next(2);
    let mut r = SpatialReader::open_url_with(&url, "/squares", None, &fast).unwrap();
    assert_eq!(r.query(&q).unwrap().rows, truth);
    // 5xx past the retries: an error naming the status.
    let mut r = SpatialReader::open_url_with(&url, "/squares", None, &fast).unwrap();
    h.fail_next(1000);
    let e = r.query(&q).unwrap_err();
    assert_eq!(kind_of(&e), Some(RemoteErrorKind::Other), "{e}");
    assert!(e.to_string().contains("503"), "{e}");
    h.fail_next(0);
    // The file changed while read: a new ETag on the next request.
    let mut r = SpatialReader::open_url_with(&url, "/squares", None, &fast).unwrap();
    let mut changed = bytes.clone();
    let last = changed.len() - 1;
    changed[last] ^= 0xFF;
    h.replace_after("big.h5", 0, changed);
    let e = r.query(&q).unwrap_err();
    assert_eq!(kind_of(&e), Some(RemoteErrorKind::Changed), "{e}");
    // The file shrank while read: 416 for a range past its new end.
    h.add("big.h5", bytes.clone());
    let mut r = SpatialReader::open_url_with(&url, "/squares", None, &fast).unwrap();
    h.replace_after("big.h5", 0, bytes[..4096].to_vec());
    let e = r.query(&q).unwrap_err();
    assert!(matches!(kind_of(&e), Some(RemoteErrorKind::RangeNotSatisfiable | RemoteErrorKind::Changed)), "{e}");
    assert_eq!(kind_of(&e), Some(RemoteErrorKind::RangeNotSatisfiable), "{e}");
    // A server that never answers: a timeout after the retries, not a hang.
    h.add("big.h5", bytes.clone());
    h.set_hang(true);
    let t0 = Instant::now();
    let e = SpatialReader::open_url_with(&url, "/squares", None, &RemoteOptions { timeout: Duration::from_millis(300), retries: 1, ..RemoteOptions::default() }).unwrap_err();
    assert_eq!(kind_of(&e), Some(RemoteErrorKind::Timeout), "{e}");
    assert!(t0.elapsed() < Duration::from_secs(20), "took {:?}", t0.elapsed());
    h.set_hang(false);
    // Not a URL of a scheme read here.
    let e = SpatialReader::open_url("ftp://127.0.0.1/x.h5", "/squares", None).unwrap_err();
    assert_eq!(kind_of(&e), Some(RemoteErrorKind::InvalidUrl), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The command on URLs: `query` by range (the same rows as the local file), and `info`,
/// `dump`, `validate` and `convert` through libhdf5, by range too.
#[test]
fn every_read_command_takes_a_url() {
    let _serial = one_at_a_time();
    let dir = tmpdir("cli");
    write_big(&dir.join("big.h5"));
    let server = RangeServer::serve_dir(&dir).unwrap();
    let url = server.url("big.h5");
    let local = dir.join("big.h5");
    let bin = env!("CARGO_BIN_EXE_marquet");
    let run = |args: &[&str]| {
        let o = std::process::Command::new(bin).args(args).output().unwrap();
        assert!(o.status.success(), "marquet {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let l = local.to_str().unwrap();
    for w in ["-10,-10,10,10", "0.1,0.1,0.3,0.3", "100,100,101,101"] {
        assert_eq!(run(&["query", &url, "--bbox", w]), run(&["query", l, "--bbox", w]), "query {w}");
        assert_eq!(run(&["query", &url, "--bbox", w, "--format", "wkt"]), run(&["query", l, "--bbox", w, "--format", "wkt"]), "query --format {w}");
    }
    let j: serde_json::Value = serde_json::from_str(run(&["query", &url, "--bbox", "0.1,0.1,0.3,0.3", "--json", "--count"]).trim()).unwrap();
    assert_eq!(j["stats"]["read_path"], "byte-range");
    assert!(j["stats"]["requests"].as_u64().unwrap() >= 2, "{j}");
    assert_eq!(run(&["info", &url, "--json"]).replace(&url, "F"), run(&["info", l, "--json"]).replace(l, "F"));
    assert_eq!(run(&["dump", &url, "--rows", "0..50"]), run(&["dump", l, "--rows", "0..50"]));
    assert!(run(&["validate", &url, "--full"]).contains("conformant"));
    let (a, b) = (dir.join("from-url.geojson"), dir.join("from-file.geojson"));
    run(&["convert", &url, a.to_str().unwrap()]);
    run(&["convert", l, b.to_str().unwrap()]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap(), "convert from the URL and from the file");
    let _ = std::fs::remove_dir_all(&dir);
}

/// libhdf5 over a URL reads by range (`h5::range_driver`; here for any size,
/// `MARQUET_REMOTE_WHOLE_BELOW=0`): `info`, a dump of a few rows and a query with an
/// attribute filter each fetch a part of the object and answer as the local file does (the
/// file's 64-row chunks make its chunk indexes large: the default layout's are a fraction
/// of this); a whole read (a conversion) fetches it in requests that grow; an object changed
/// between two reads is a typed error, not a wrong answer.
#[test]
fn libhdf5_reads_a_url_by_range() {
    let _serial = one_at_a_time();
    let dir = tmpdir("ranged");
    let local = dir.join("big.h5");
    write_big(&local);
    let size = std::fs::metadata(&local).unwrap().len();
    let server = RangeServer::serve_dir(&dir).unwrap();
    let h = server.handle().clone();
    let url = server.url("big.h5");
    let bin = env!("CARGO_BIN_EXE_marquet");
    let run = |args: &[&str]| {
        let o = std::process::Command::new(bin).args(args).env("MARQUET_REMOTE_WHOLE_BELOW", "0").output().unwrap();
        assert!(o.status.success(), "marquet {args:?}: {}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout).unwrap()
    };
    let l = local.to_str().unwrap();
    let served = |args: &[&str], local_args: &[&str]| {
        h.reset_stats();
        let remote = run(args).replace(&url, "F");
        let s = h.stats().per_path.get("big.h5").copied().unwrap_or_default();
        assert_eq!(remote, run(local_args).replace(l, "F"), "marquet {args:?}");
        eprintln!("marquet {:?}: {} requests, {} of {size} bytes", &args[..1], s.requests, s.body_bytes);
        s
    };
    // Requests: `info` sums every chunk's size (HDF5 walks each chunk index, a request a
    // node); rows are read through HDF5's pipeline, which descends the index to each chunk
    // (`h5::is_ranged`: the direct path's chunk tables would walk it whole, 38 and 51
    // requests here).
    for (args, local_args, max) in [
        (vec!["info", &url, "--json"], vec!["info", l, "--json"], 64),
        (vec!["dump", &url, "--rows", "100..120"], vec!["dump", l, "--rows", "100..120"], 16),
        (vec!["query", &url, "--bbox", "0.1,0.1,3.3,3.3", "--format", "wkt"], vec!["query", l, "--bbox", "0.1,0.1,3.3,3.3", "--format", "wkt"], 32),
    ] {
        let s = served(&args, &local_args);
        assert!(s.body_bytes < size / 2 && s.requests <= max, "marquet {args:?} fetched {} of {size} bytes in {} requests", s.body_bytes, s.requests);
    }
    // An attribute filter scans its column: answered as locally.
    served(
        &["query", &url, "--bbox", "0.1,0.1,3.3,3.3", "--where", "i >= 20000", "--format", "wkt"],
        &["query", l, "--bbox", "0.1,0.1,3.3,3.3", "--where", "i >= 20000", "--format", "wkt"],
    );
    // A whole read: every byte that matters, in requests of a growing window.
    let (a, b) = (dir.join("u.geojson"), dir.join("l.geojson"));
    h.reset_stats();
    run(&["convert", &url, a.to_str().unwrap()]);
    let s = h.stats().per_path.get("big.h5").copied().unwrap_or_default();
    run(&["convert", l, b.to_str().unwrap()]);
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    eprintln!("marquet convert: {} requests, {} of {size} bytes", s.requests, s.body_bytes);
    assert!(s.requests < size / (64 << 10), "{} requests for {size} bytes", s.requests);

    // The cloud layout is read by range at any size (told from the open's first read):
    // `info` and a dump of a few rows in a few requests.
    let cloud = dir.join("big.cloud.h5");
    convert(&local, &cloud, &ConvertOptions { cloud: true, ..Default::default() }).unwrap();
    h.add_file("big.cloud.h5", &cloud).unwrap();
    let curl = server.url("big.cloud.h5");
    let c = cloud.to_str().unwrap();
    for (args, local_args, max) in [
        (vec!["info", &curl, "--json"], vec!["info", c, "--json"], 2),
        (vec!["dump", &curl, "--rows", "100..120"], vec!["dump", c, "--rows", "100..120"], 6),
    ] {
        h.reset_stats();
        let o = std::process::Command::new(bin).args(&args).output().unwrap();
        let s = h.stats().per_path.get("big.cloud.h5").copied().unwrap_or_default();
        assert_eq!(String::from_utf8(o.stdout).unwrap().replace(&curl, "F"), run(&local_args).replace(c, "F"), "{args:?}");
        eprintln!("marquet {:?} (cloud layout): {} requests, {} bytes", &args[..1], s.requests, s.body_bytes);
        assert!(s.requests <= max && s.body_bytes < size / 4, "marquet {args:?}: {s:?}");
    }

    // Changed between reads: the next request sees another ETag.
    let f = marquet::File::open_url_with(&url, &RemoteOptions { whole_below: 0, ..RemoteOptions::default() }).unwrap();
    let t = marquet::Table::open(&f, "/squares").unwrap();
    let mut changed = std::fs::read(&local).unwrap();
    let last = changed.len() - 1;
    changed[last] ^= 0xFF;
    h.replace_after("big.h5", 0, changed);
    let e = t.read_geometries("geometry", 0, 40_000).unwrap_err();
    assert_eq!(kind_of(&e), Some(RemoteErrorKind::Changed), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The median of `v` (the lower middle of an even count).
fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[(v.len() - 1) / 2]
}

/// Requests per window of a reader opened afresh for each window (cold, as a process
/// answering one window is): the median over `windows`, every answer checked against the
/// local file's.
fn cold_requests(local: &Path, url: &str, windows: &[BBox]) -> (u64, u64) {
    let mut mine = SpatialReader::open_byte_range(local, "/bench", None).unwrap();
    let (mut per, mut bytes) = (Vec::new(), Vec::new());
    for w in windows {
        let q = Query::bbox(*w);
        let mut r = SpatialReader::open_url(url, "/bench", None).unwrap();
        assert_eq!(r.query(&q).unwrap().rows, mine.query(&q).unwrap().rows, "{url} {w:?}");
        let s = r.remote_stats().unwrap();
        per.push(s.requests);
        bytes.push(s.bytes_fetched);
    }
    (median(per), median(bytes))
}

/// The cloud layout (`convert --cloud`, issue #34): metadata first, every dataset
/// contiguous and uncompressed but the block indexes (one compressed chunk each), R-trees
/// before the data. It answers every window as the
/// default layout does (the peers' files too), is conformant, says so in `cloud_layout`,
/// refuses appends without changing a byte, and a cold window costs at most FlatGeobuf's
/// five requests (the benchmark's anchor) — fewer than the default layout's.
#[test]
fn cloud_layout_answers_alike_in_few_round_trips() {
    let _serial = one_at_a_time();
    use marquet::{cloud_layout, GeoBatch, GeometryValues};
    use marquet_dev::{bench, synth};
    let dir = tmpdir("cloud");
    let cloud = ConvertOptions { cloud: true, ..Default::default() };

    // The benchmark's generators: polygons (R-tree, blocks, covering) and points (blocks).
    let polys = dir.join("polygons.h5");
    bench::write_marquet(&polys, &GeometryValues::Wkb(synth::polygons(30_000, 7).into_iter().map(Some).collect()), &WriteLayout::default()).unwrap();
    let points = dir.join("points.h5");
    let (x, y) = synth::clustered_points(200_000, 7);
    bench::write_marquet(&points, &GeometryValues::Points { dims: marquet::Dimensions::Xy, x, y, z: None, m: None, valid: None }, &WriteLayout::default()).unwrap();
    let mut names = vec![];
    for src in [&polys, &points] {
        let out = src.with_extension("cloud.h5");
        let r = convert(src, &out, &cloud).unwrap();
        assert!(r.cloud.as_ref().is_some_and(|c| c.datasets > 0), "{r}");
        let opts = marquet::validate::Options { full: true, ..Default::default() };
        let v = marquet::validate::validate_file(&out, &opts).unwrap();
        assert_eq!(v.errors().map(|e| e.to_string()).collect::<Vec<_>>(), Vec::<String>::new(), "{}", out.display());
        let (fs, fc) = (marquet::File::open(src).unwrap(), marquet::File::open(&out).unwrap());
        let (d, c) = (cloud_layout(&fs, "/bench").unwrap(), cloud_layout(&fc, "/bench").unwrap());
        assert!(!d.friendly && !d.reasons.is_empty(), "{d:?}");
        assert!(c.friendly, "{c:?}");
        assert!(c.metadata_end < 64 << 10, "metadata ends at {}", c.metadata_end);
        names.push(out.file_name().unwrap().to_str().unwrap().to_string());
        names.push(src.file_name().unwrap().to_str().unwrap().to_string());
    }
    // The peers' files in the cloud layout.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/peers");
    let mut inputs = Vec::new();
    walk(&root, "parquet", &mut inputs);
    for (i, input) in inputs.iter().enumerate() {
        let name = format!("peer{i}.cloud.h5");
        if convert(input, &dir.join(&name), &cloud).is_ok() {
            let f = marquet::File::open(dir.join(&name)).unwrap();
            for t in f.tables().unwrap() {
                assert!(cloud_layout(&f, &t).unwrap().friendly, "{name} {t}");
            }
            names.push(name);
        }
    }
    assert!(names.len() >= 45, "only {} files", names.len());
    let server = RangeServer::serve_dir(&dir).unwrap();
    let mut queries = 0;
    for name in &names {
        queries += compare(&dir.join(name), &server.url(name), &RemoteOptions::default());
    }
    assert!(queries >= 1000, "only {queries} queries compared");

    // Round trips of a cold window.
    let windows = synth::windows(40, 7, bench::DEFAULT_WINDOW_SIDE);
    // Points: the open's first read holds the metadata and the whole block index (one
    // compressed chunk, rebuilt with shorter blocks), so a window is the open plus one round.
    for (name, max) in [("polygons", 5), ("points", 2)] {
        let (d, c) = (dir.join(format!("{name}.h5")), dir.join(format!("{name}.cloud.h5")));
        let (default, default_bytes) = cold_requests(&d, &server.url(&format!("{name}.h5")), &windows);
        let (laid, laid_bytes) = cold_requests(&c, &server.url(&format!("{name}.cloud.h5")), &windows);
        eprintln!("{name}: median requests per cold window {default} (default layout), {laid} (cloud layout); bytes {default_bytes}, {laid_bytes}");
        assert!(laid <= max && laid <= default, "{name}: {laid} requests a window (default layout {default})");
        assert!(laid_bytes < default_bytes, "{name}: {laid_bytes} bytes a window (default layout {default_bytes})");
    }
    // The points' block index: shorter blocks than the source's, whole in the first read.
    let block_length = |p: &Path| {
        let f = marquet::File::open(p).unwrap();
        let ds = marquet::h5::dataset_open(f.id(), "/bench/SEARCH_INDEXES/geometry__block_bbox").unwrap();
        marquet::h5::attr_read(ds.id(), "block_length").unwrap().and_then(|a| a.as_u64())
    };
    let (own, laid) = (block_length(&points), block_length(&dir.join("points.cloud.h5")));
    eprintln!("points: block length {own:?} (default layout), {laid:?} (cloud layout)");
    assert!(laid.is_some() && laid < own, "block length {laid:?} in the cloud copy, {own:?} in its source");

    // No appends: refused before anything is written.
    let c = dir.join("polygons.cloud.h5");
    let before = std::fs::read(&c).unwrap();
    let e = {
        let f = marquet::File::open_rw(&c).unwrap();
        let t = marquet::Table::open(&f, "/bench").unwrap();
        let batch = GeoBatch::new().with_geometry("geometry", GeometryValues::Wkb(synth::polygons(10, 3).into_iter().map(Some).collect()));
        t.append(&batch).unwrap_err()
    };
    assert!(matches!(e, MarquetError::Unsupported(_)) && e.to_string().contains("contiguous"), "{e}");
    assert_eq!(std::fs::read(&c).unwrap(), before, "a refused append changed the file");
    // --cloud writes a new file only.
    let e = convert(&polys, &c, &cloud).unwrap_err();
    assert!(e.to_string().contains("--cloud"), "{e}");
    assert_eq!(std::fs::read(&c).unwrap(), before);
    eprintln!("cloud: {} files, {queries} queries", names.len());
    let _ = std::fs::remove_dir_all(&dir);
}

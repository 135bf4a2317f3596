//! Issue #33 item 2: the byte-range read path (`SpatialReader::open_byte_range`, no libhdf5)
//! answers every test file exactly as the libhdf5 path does.
//!
//! The files: every HDF5 and netCDF-4 file under `testdata/` — the malformed-file registry
//! `testdata/bad/` (one or more bad files per validator check), the fault fixtures, files
//! written by h5py and netCDF4 — and every GeoParquet file of the peers' corpus
//! (`testdata/peers/`: Overture, DuckDB, GDAL, geopandas, …) converted three ways: the
//! default layout (R-tree, block boxes, covering), fixed-WKB points with zstd and
//! checksums, and a plain layout without indexes. For each table and geometry column both
//! readers open (or both fail with the same kind of error), and each answers the same
//! windows — the column's extent, its quarters, a small window at its centre, a point, a
//! window off the data — with and without indexes, for two predicates, with WKB: rows,
//! WKB and every counter must be equal, or both must fail with the same kind of error.
//! The answers of the indexed byte-range queries must also equal a full scan
//! (`with_indexes(false)` through libhdf5). The byte-range path may refuse a dataset it
//! does not read (`Unsupported`, then `open_path` reads through libhdf5), but never one
//! that Marquet's own writer produced.

mod common;

use std::path::{Path, PathBuf};

use marquet::convert::{convert, ConvertOptions};
use marquet::marquet::{MarquetTable, WriteLayout};
use marquet::query::reader::SpatialReader;
use marquet::query::{Predicate, Query, QueryResult};
use marquet::{BBox, Error as MarquetError};

fn walk(dir: &Path, exts: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<_> = rd.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, exts, out);
        } else if p.extension().and_then(|e| e.to_str()).is_some_and(|e| exts.contains(&e)) {
            out.push(p);
        }
    }
}

fn kind(e: &MarquetError) -> String {
    format!("{:?}", std::mem::discriminant(e))
}

/// Everything of a result but the text of ignored-index reasons (each path words its
/// own read errors).
fn fingerprint(r: &QueryResult) -> String {
    let mut s = r.stats.clone();
    let ignored = s.ignored_indexes.len();
    s.ignored_indexes.clear();
    format!("{:?} {:?} ignored={ignored} {:?}", r.rows, s, r.wkb)
}

#[derive(Default, Debug)]
struct Tally {
    files: usize,
    columns: usize,
    queries: usize,
    takes: usize,
    both_failed: usize,
    refused: Vec<String>,
}

/// Compare the two readers on one file; `own` files must never be refused.
fn compare_file(path: &Path, own: bool, t: &mut Tally, bad: &mut Vec<String>) {
    t.files += 1;
    let f = match marquet::h5col::File::open(path) {
        Ok(f) => f,
        Err(_) => return,
    };
    let Ok(tables) = f.tables() else { return };
    for tp in tables {
        let lib_t = MarquetTable::open(&f, &tp);
        let br_probe = SpatialReader::open_byte_range(path, &tp, None);
        let cols = match &lib_t {
            Ok(mt) => match mt.geometry_column_names() {
                Ok(c) if !c.is_empty() => c,
                _ => continue,
            },
            Err(e) => {
                match br_probe {
                    Err(b) if kind(&b) == kind(e) => t.both_failed += 1,
                    Err(MarquetError::Unsupported(m)) if !own => t.refused.push(format!("{}:{tp}: {m}", path.display())),
                    other => bad.push(format!("{}:{tp}: libhdf5 open failed ({e}) but the byte-range path gave {:?}", path.display(), other.map(|_| "a reader"))),
                }
                continue;
            }
        };
        let mt = lib_t.unwrap();
        for col in cols {
            t.columns += 1;
            let extent = mt.geometry_column(&col).ok().and_then(|i| i.bbox).map(|b| b.0);
            let lib = SpatialReader::open(&f, &tp, Some(&col));
            let br = SpatialReader::open_byte_range(path, &tp, Some(&col));
            let (mut lib, mut br) = match (lib, br) {
                (Ok(l), Ok(b)) => (l, b),
                (Err(a), Err(b)) if kind(&a) == kind(&b) => {
                    t.both_failed += 1;
                    continue;
                }
                (_, Err(MarquetError::Unsupported(m))) if !own => {
                    t.refused.push(format!("{}:{tp}/{col}: {m}", path.display()));
                    continue;
                }
                (a, b) => {
                    bad.push(format!("{}:{tp}/{col}: open differs: libhdf5 {:?} / byte-range {:?}", path.display(), a.err(), b.err()));
                    continue;
                }
            };
            assert_eq!(br.read_path(), "byte-range");
            for w in common::windows(extent) {
                for (pred, idx) in [(Predicate::Intersects, true), (Predicate::Intersects, false), (Predicate::BBoxOnly, true)] {
                    t.queries += 1;
                    let q = Query::bbox(w).with_predicate(pred).with_indexes(idx).with_wkb(true);
                    let a = lib.query(&q);
                    let b = br.query(&q);
                    if br.read_path() != "byte-range" {
                        if own {
                            bad.push(format!("{}:{tp}/{col}: the byte-range reader fell back to libhdf5 on {w:?}", path.display()));
                        } else {
                            t.refused.push(format!("{}:{tp}/{col}: fell back at a query", path.display()));
                        }
                        break;
                    }
                    match (&a, &b) {
                        (Ok(x), Ok(y)) => {
                            if fingerprint(x) != fingerprint(y) {
                                bad.push(format!("{}:{tp}/{col} {w:?} {pred:?} indexes={idx}:\n  libhdf5    {}\n  byte-range {}", path.display(), fingerprint(x), fingerprint(y)));
                            }
                            // Conformant files only: a malformed R-tree misleads both paths alike.
                            if own && idx && pred == Predicate::Intersects {
                                // A malformed file's full scan may fail on rows the indexes skip.
                                let Ok(scan) = lib.query(&q.clone().with_indexes(false)) else { continue };
                                if scan.rows != y.rows {
                                    bad.push(format!("{}:{tp}/{col} {w:?}: byte-range rows {:?} differ from a full scan {:?}", path.display(), y.rows, scan.rows));
                                }
                            }
                        }
                        (Err(x), Err(y)) if kind(x) == kind(y) => t.both_failed += 1,
                        _ => bad.push(format!("{}:{tp}/{col} {w:?}: libhdf5 {:?} / byte-range {:?}", path.display(), a.as_ref().map(|r| r.rows.len()), b.as_ref().map(|r| r.rows.len()))),
                    }
                }
            }
            compare_takes(path, &tp, &mt, extent, &mut lib, &mut br, t, bad);
        }
    }
}

/// `SpatialReader::take` of every attribute column through both readers, against
/// `Column::take` (the h5col read of those rows): the rows of the extent's answer, every
/// seventh row, and none. Equal arrays everywhere, or errors everywhere (of the same kind
/// from the two readers, which decode chunks with the same codecs; `Column::take` may
/// decode through HDF5's pipeline, where a corrupt chunk is another kind of error).
#[allow(clippy::too_many_arguments)]
fn compare_takes(path: &Path, tp: &str, mt: &MarquetTable, extent: Option<BBox>, lib: &mut SpatialReader, br: &mut SpatialReader, t: &mut Tally, bad: &mut Vec<String>) {
    let (Ok(names), Ok(nrows)) = (mt.column_names(), mt.nrows()) else { return };
    let answer = match extent {
        Some(e) => lib.query(&Query::bbox(e)).map(|r| r.rows).unwrap_or_default(),
        None => Vec::new(),
    };
    let every7: Vec<u64> = (0..nrows.min(1 << 20)).step_by(7).collect();
    for name in names {
        if mt.kind_of(&name).ok().flatten() != Some(marquet::h5col::ColumnKind::Dataset) {
            continue;
        }
        for rows in [&answer, &every7, &Vec::new()] {
            t.takes += 1;
            let want = mt.column(&name).and_then(|c| c.take(rows));
            let got = [lib.take(&name, rows), br.take(&name, rows)];
            let same = match (&got[0], &got[1], &want) {
                (Ok(a), Ok(b), Ok(w)) => a.dtype == w.dtype && a.bytes == w.bytes && b.dtype == w.dtype && b.bytes == w.bytes,
                (Err(a), Err(b), Err(_)) => kind(a) == kind(b),
                _ => false,
            };
            if !same {
                let show = |r: &marquet::Result<marquet::h5col::Array>| r.as_ref().map(|a| (a.dtype.clone(), a.bytes.len())).map_err(|e| e.to_string());
                bad.push(format!(
                    "{}:{tp}/{name}: take of {} rows: libhdf5 reader {:?} / byte-range reader {:?} / Column::take {:?}",
                    path.display(),
                    rows.len(),
                    show(&got[0]),
                    show(&got[1]),
                    show(&want)
                ));
            }
        }
    }
}

fn tmpdir(test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("marquet-read-paths-{test}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn every_test_file_reads_the_same_through_both_paths() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata");
    let mut files = Vec::new();
    walk(&root, &["h5", "nc", "hdf5"], &mut files);
    assert!(files.len() >= 120, "only {} HDF5 files under testdata/", files.len());
    let mut t = Tally::default();
    let mut bad = Vec::new();
    for p in &files {
        compare_file(p, false, &mut t, &mut bad);
    }
    assert!(bad.is_empty(), "{} differences:\n{}", bad.len(), bad.join("\n"));
    eprintln!("testdata: {t:?}");
    assert!(t.columns >= 100, "only {} geometry columns compared", t.columns);
}

#[test]
fn peers_converted_three_ways_read_the_same_through_both_paths() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/peers");
    let mut inputs = Vec::new();
    walk(&root, &["parquet"], &mut inputs);
    assert!(inputs.len() >= 50, "only {} GeoParquet files under testdata/peers", inputs.len());
    let dir = tmpdir("peers");
    let variants: Vec<(&str, ConvertOptions)> = vec![
        ("default", ConvertOptions::default()),
        (
            "fixed-zstd-checksums",
            ConvertOptions {
                point_form: Some(marquet::convert::PointForm::FixedWkb),
                layout: WriteLayout::default().with_compression(marquet::marquet::Compression::Zstd { level: 3 }).with_checksums(true),
                ..Default::default()
            },
        ),
        ("plain", ConvertOptions { layout: WriteLayout::plain(), ..Default::default() }),
    ];
    let mut t = Tally::default();
    let mut bad = Vec::new();
    let mut converted = 0;
    for (i, input) in inputs.iter().enumerate() {
        for (name, opts) in &variants {
            let out = dir.join(format!("{i}-{name}.h5"));
            if convert(input, &out, opts).is_err() {
                continue;
            }
            converted += 1;
            compare_file(&out, true, &mut t, &mut bad);
            let _ = std::fs::remove_file(&out);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(bad.is_empty(), "{} differences:\n{}", bad.len(), bad.join("\n"));
    eprintln!("peers: {converted} files converted; {t:?}");
    assert!(converted >= 150, "only {converted} conversions succeeded");
    assert!(t.queries >= 3000, "only {} queries compared", t.queries);
}

/// Deep chunk indexes: 40,000 points and as many small polygons in chunks of 16 rows
/// (2,500 chunks per dataset: v1 B-trees of three levels), read through both paths.
#[test]
fn many_chunk_tables_read_the_same_through_both_paths() {
    let dir = tmpdir("chunks");
    let mut t = Tally::default();
    let mut bad = Vec::new();
    for (name, polygons) in [("pts", false), ("polys", true)] {
        let mut s = String::from("{\"type\":\"FeatureCollection\",\"features\":[");
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for i in 0..40_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (lon, lat) = ((x % 36_000) as f64 / 100.0 - 180.0, ((x >> 20) % 18_000) as f64 / 100.0 - 90.0);
            let g = if polygons {
                format!("{{\"type\":\"Polygon\",\"coordinates\":[[[{lon},{lat}],[{},{lat}],[{},{}],[{lon},{lat}]]]}}", lon + 0.1, lon + 0.1, lat + 0.1)
            } else {
                format!("{{\"type\":\"Point\",\"coordinates\":[{lon},{lat}]}}")
            };
            if i > 0 {
                s.push(',');
            }
            s += &format!("{{\"type\":\"Feature\",\"properties\":{{\"i\":{i}}},\"geometry\":{g}}}");
        }
        s += "]}";
        let src = dir.join(format!("{name}.geojson"));
        std::fs::write(&src, s).unwrap();
        let out = dir.join(format!("{name}.h5"));
        let opts = ConvertOptions { layout: WriteLayout::default().with_chunk_rows(16).with_values_chunk_bytes(1024), ..Default::default() };
        convert(&src, &out, &opts).unwrap();
        compare_file(&out, true, &mut t, &mut bad);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(bad.is_empty(), "{} differences:\n{}", bad.len(), bad.join("\n"));
    assert_eq!(t.columns, 2, "{t:?}");
}

/// Hostile bytes: a default file damaged at 300 places (one at a time: 8 bytes
/// overwritten, or the file cut short) never makes the byte-range path panic or hang: it
/// answers or fails with a typed error.
#[test]
fn damaged_files_fail_with_typed_errors_on_the_byte_range_path() {
    let dir = tmpdir("damaged");
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet");
    let good = dir.join("good.h5");
    convert(&src, &good, &ConvertOptions::default()).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let f = marquet::h5col::File::open(&good).unwrap();
    let table = f.tables().unwrap().remove(0);
    drop(f);
    let w = BBox::xy(-30.0, -30.0, 60.0, 60.0);
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let (mut answered, mut failed) = (0, 0);
    for i in 0..300 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut b = bytes.clone();
        if i % 10 == 9 {
            b.truncate((x % bytes.len() as u64) as usize);
        } else {
            // Metadata lies mostly in the first 64 KiB: aim half of the damage there.
            let span = if i % 2 == 0 { bytes.len().min(65_536) } else { bytes.len() } as u64;
            let at = (x % span) as usize;
            for (k, v) in b.iter_mut().skip(at).take(8).enumerate() {
                *v ^= (x >> (8 * k)) as u8 | 1;
            }
        }
        let p = dir.join(format!("bad-{i}.h5"));
        std::fs::write(&p, &b).unwrap();
        let t0 = std::time::Instant::now();
        let r = std::panic::catch_unwind(|| {
            let mut r = SpatialReader::open_byte_range(&p, &table, None)?;
            r.query(&Query::bbox(w).with_wkb(true))?;
            r.query(&Query::bbox(w).with_indexes(false))
        });
        assert!(t0.elapsed() < std::time::Duration::from_secs(20), "damage {i} took {:?}", t0.elapsed());
        match r {
            Err(_) => panic!("damage {i}: the byte-range path panicked"),
            Ok(Ok(_)) => answered += 1,
            Ok(Err(e)) => {
                assert!(!e.to_string().is_empty());
                failed += 1;
            }
        }
        let _ = std::fs::remove_file(&p);
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("damaged files: {answered} answered, {failed} typed errors");
    assert!(failed >= 10, "only {failed} of 300 damaged files failed: the damage missed the metadata");
}

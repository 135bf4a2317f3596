//! GeoParquet / GeoJSON conversion against the peer corpus (testdata/peers, see SOURCES.md):
//! every readable file imports; geometries match the files' own WKT truth; the
//! spec-violating files of geoparquet-testing/bad_data are rejected or reported with the
//! manifest's failure code; export → re-import is bit-identical.
#![cfg(feature = "geoparquet")]
#![cfg(marquet_fixtures)] // testdata/peers is not in the crates.io package (build.rs)

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use marquet::convert::{
    self, code, convert, export_geojson, export_geoparquet, failure_code, import_geojson, import_geoparquet,
    ConvertOptions, ExportOptions, GeoParquetVersion, ImportOptions, PointForm,
};
use marquet::h5col::File;
use marquet::marquet::{Crs, Edges, MarquetTable, StorageForm};
use marquet::validate::{validate_file, Options as ValidateOptions};
use marquet::wkb::{self, Coord, Geometry};
use marquet::{Dimensions, GeometryKind, GeometryType};

/// These tests run one at a time: with two test threads opening, closing and reopening HDF5
/// files concurrently, a file closed by one thread was occasionally still locked when the
/// same thread reopened it (errno 11), which points at handle bookkeeping shared between the
/// h5 shim and hdf5-metno; serializing keeps this suite deterministic.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn peers() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/peers")
}

fn tmpdir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("marquet-gp-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn tmp(name: &str) -> PathBuf {
    tmpdir().join(name)
}

fn all_parquet(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            all_parquet(&p, out);
        } else if p.extension().is_some_and(|e| e == "parquet") {
            out.push(p);
        }
    }
}

fn good_files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    all_parquet(&peers(), &mut v);
    v.retain(|p| !p.to_string_lossy().contains("bad_data"));
    v
}

fn rel(p: &Path) -> String {
    p.strip_prefix(peers()).unwrap().display().to_string()
}

fn parquet_rows(p: &Path) -> u64 {
    let f = std::fs::File::open(p).unwrap();
    let r = parquet::file::reader::SerializedFileReader::new(f).unwrap();
    use parquet::file::reader::FileReader;
    r.metadata().file_metadata().num_rows() as u64
}

/// Import options that keep the source's rows in order and add nothing (these tests check
/// the column mapping row by row; the default layout has its own tests).
fn in_order(table: &str) -> ImportOptions {
    ImportOptions { layout: marquet::marquet::WriteLayout::plain(), ..ImportOptions::new(table) }
}

/// Import `p` into a fresh HDF5 file; returns the file path. Every successful import is
/// validated: the producer never writes a file the validator rejects (issue 18).
fn import(p: &Path, tag: &str, opts: &ImportOptions) -> (PathBuf, marquet::Result<convert::ImportReport>) {
    let h5 = tmp(&format!("{tag}.h5"));
    let r = {
        let f = File::create(&h5).unwrap();
        import_geoparquet(p, &f, opts)
    };
    if r.is_ok() {
        assert_conformant(&h5, &p.display().to_string());
    }
    (h5, r)
}

/// `marquet validate` finds no error in the file (warnings are printed).
fn assert_conformant(h5: &Path, what: &str) {
    let report = validate_file(h5, &ValidateOptions::default()).unwrap();
    let errors: Vec<String> = report.errors().map(|f| f.to_string()).collect();
    assert!(errors.is_empty(), "{what}: the imported file is not conformant:\n{}", errors.join("\n"));
    for w in report.findings() {
        println!("{what}: {w}");
    }
}

fn tag_of(p: &Path) -> String {
    rel(p).replace(['/', '.', '='], "_")
}

// ---------------------------------------------------------------------------------------
// A small WKT reader for the truth files (test-only).

struct Wkt<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Wkt<'a> {
    fn ws(&mut self) {
        while self.i < self.s.len() && self.s[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn word(&mut self) -> String {
        self.ws();
        let st = self.i;
        while self.i < self.s.len() && self.s[self.i].is_ascii_alphabetic() {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[st..self.i]).to_ascii_uppercase()
    }
    fn peek(&mut self) -> u8 {
        self.ws();
        self.s.get(self.i).copied().unwrap_or(0)
    }
    fn eat(&mut self, c: u8) {
        assert_eq!(self.peek(), c, "wkt: expected {:?} at {}", c as char, self.i);
        self.i += 1;
    }
    fn num(&mut self) -> f64 {
        self.ws();
        let st = self.i;
        while self.i < self.s.len() && (self.s[self.i].is_ascii_alphanumeric() || b"+-.".contains(&self.s[self.i])) {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[st..self.i]).unwrap().parse().unwrap()
    }
    fn empty(&mut self) -> bool {
        let save = self.i;
        if self.word() == "EMPTY" {
            return true;
        }
        self.i = save;
        false
    }
    fn coord(&mut self, d: Dimensions) -> Coord {
        let x = self.num();
        let y = self.num();
        match d {
            Dimensions::Xy => Coord::xy(x, y),
            Dimensions::Xyz => Coord::xyz(x, y, self.num()),
            Dimensions::Xym => Coord::xym(x, y, self.num()),
            Dimensions::Xyzm => {
                let z = self.num();
                Coord::xyzm(x, y, z, self.num())
            }
        }
    }
    fn seq(&mut self, d: Dimensions) -> Vec<Coord> {
        if self.empty() {
            return vec![];
        }
        self.eat(b'(');
        let mut v = vec![self.coord(d)];
        while self.peek() == b',' {
            self.i += 1;
            v.push(self.coord(d));
        }
        self.eat(b')');
        v
    }
    fn list<T>(&mut self, mut f: impl FnMut(&mut Self) -> T) -> Vec<T> {
        if self.empty() {
            return vec![];
        }
        self.eat(b'(');
        let mut v = vec![f(self)];
        while self.peek() == b',' {
            self.i += 1;
            v.push(f(self));
        }
        self.eat(b')');
        v
    }
    fn geometry(&mut self) -> Geometry {
        let kind = self.word();
        let save = self.i;
        let dims = match self.word().as_str() {
            "Z" => Dimensions::Xyz,
            "M" => Dimensions::Xym,
            "ZM" => Dimensions::Xyzm,
            _ => {
                self.i = save;
                Dimensions::Xy
            }
        };
        match kind.as_str() {
            "POINT" => {
                if self.empty() {
                    return Geometry::Point(wkb::Point::empty(dims));
                }
                self.eat(b'(');
                let c = self.coord(dims);
                self.eat(b')');
                Geometry::Point(wkb::Point::new(dims, c))
            }
            "LINESTRING" => Geometry::LineString(wkb::LineString { dims, coords: self.seq(dims) }),
            "POLYGON" => Geometry::Polygon(wkb::Polygon { dims, rings: self.list(|s| s.seq(dims)) }),
            "MULTIPOINT" => Geometry::MultiPoint(wkb::MultiPoint {
                dims,
                points: self.list(|s| {
                    if s.peek() == b'(' {
                        s.eat(b'(');
                        let c = s.coord(dims);
                        s.eat(b')');
                        wkb::Point::new(dims, c)
                    } else if s.empty() {
                        wkb::Point::empty(dims)
                    } else {
                        wkb::Point::new(dims, s.coord(dims))
                    }
                }),
            }),
            "MULTILINESTRING" => Geometry::MultiLineString(wkb::MultiLineString {
                dims,
                lines: self.list(|s| wkb::LineString { dims, coords: s.seq(dims) }),
            }),
            "MULTIPOLYGON" => Geometry::MultiPolygon(wkb::MultiPolygon {
                dims,
                polygons: self.list(|s| wkb::Polygon { dims, rings: s.list(|s| s.seq(dims)) }),
            }),
            "GEOMETRYCOLLECTION" => {
                Geometry::GeometryCollection(wkb::GeometryCollection { dims, geometries: self.list(|s| s.geometry()) })
            }
            k => panic!("wkt: unknown type {k}"),
        }
    }
}

fn parse_wkt(s: &str) -> Geometry {
    Wkt { s: s.as_bytes(), i: 0 }.geometry()
}

/// Normalized text of a WKT truth value (through our model, so formatting differences vanish).
fn norm_wkt(s: &str) -> String {
    parse_wkt(s).to_wkt()
}

fn table_wkts(h5: &Path, table: &str, col: &str) -> Vec<Option<String>> {
    let f = File::open(h5).unwrap();
    let t = MarquetTable::open(&f, table).unwrap();
    let n = t.nrows().unwrap();
    let b = t.read_wkb(col, 0, n).unwrap();
    (0..b.len()).map(|i| b.get(i).map(|w| wkb::to_wkt(w).unwrap())).collect()
}

fn read_tsv(p: &Path) -> Vec<Option<String>> {
    let s = std::fs::read_to_string(p).unwrap();
    let mut lines: Vec<&str> = s.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    lines[1..].iter().map(|l| if l.trim().is_empty() { None } else { Some(norm_wkt(l)) }).collect()
}

fn read_csv(p: &Path) -> Vec<Option<String>> {
    let s = std::fs::read_to_string(p).unwrap();
    s.lines()
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (_, rest) = l.split_once(',').unwrap();
            let rest = rest.trim();
            if rest.is_empty() {
                None
            } else {
                Some(norm_wkt(rest.trim_matches('"')))
            }
        })
        .collect()
}

#[test]
fn wkt_reader_agrees_with_our_writer() {
    let _serial = serial();
    for w in [
        "POINT (30 10)",
        "POINT Z (1 2 3)",
        "POINT EMPTY",
        "MULTIPOINT ((1 2), (3 4))",
        "MULTIPOINT (1 2, 3 4)",
        "POLYGON ((0 0, 1 0, 1 1, 0 0), (0.1 0.1, 0.2 0.1, 0.1 0.2, 0.1 0.1))",
        "GEOMETRYCOLLECTION (POINT (1 2), GEOMETRYCOLLECTION EMPTY)",
        "MULTIPOLYGON ZM (((0 0 1 2, 1 0 1 2, 1 1 1 2, 0 0 1 2)))",
    ] {
        let g = parse_wkt(w);
        let back = wkb::decode(&wkb::encode(&g, wkb::ByteOrder::LittleEndian)).unwrap();
        assert_eq!(back.to_wkt(), g.to_wkt(), "{w}");
    }
    assert_eq!(norm_wkt("MULTIPOINT ((1 2), (3 4))"), norm_wkt("MULTIPOINT (1 2, 3 4)"));
}

// ---------------------------------------------------------------------------------------

/// Files that must import (every readable GeoParquet file of the corpus).
#[test]
fn every_readable_peer_file_imports_with_right_rows() {
    let _serial = serial();
    let mut ok = 0;
    let mut failures = Vec::new();
    for p in good_files() {
        let (h5, r) = import(&p, &tag_of(&p), &ImportOptions::new("/t"));
        match r {
            Ok(rep) => {
                assert_eq!(rep.rows, parquet_rows(&p), "{}", rel(&p));
                assert!(!rep.geometry_columns.is_empty(), "{}", rel(&p));
                // The table is a Marquet table and its primary column is the file's primary.
                let f = File::open(&h5).unwrap();
                let t = MarquetTable::open(&f, "/t").unwrap();
                assert_eq!(t.primary_geometry_column().unwrap(), rep.geometry_columns[0].name);
                println!("OK   {}\n{rep}", rel(&p));
                ok += 1;
            }
            Err(e) => failures.push(format!("{}: {e}", rel(&p))),
        }
    }
    println!("{ok} files imported");
    assert!(failures.is_empty(), "failed imports:\n{}", failures.join("\n"));
    assert!(ok >= 60, "only {ok} peer files found");
}

#[test]
fn geometries_match_the_wkt_truth() {
    let _serial = serial();
    let pe = peers();
    let mut cases: Vec<(PathBuf, PathBuf)> = Vec::new();
    let ex = pe.join("geoarrow-data/example");
    for (pq, tsv) in [
        ("example_geometry.parquet", "example_geometry.tsv"),
        ("example_geometry_geo.parquet", "example_geometry.tsv"),
        ("example_geometry-z.parquet", "example_geometry-z.tsv"),
        ("example_geometry-z_geo.parquet", "example_geometry-z.tsv"),
        ("example_geometrycollection-nested_geo.parquet", "example_geometrycollection-nested.tsv"),
        ("example_geometrycollection-nested-z_geo.parquet", "example_geometrycollection-nested-z.tsv"),
    ] {
        cases.push((ex.join(pq), ex.join(tsv)));
    }
    let t20 = pe.join("geoparquet-spec/test_data-2.0-dev");
    let t11 = pe.join("geoparquet-spec/test_data-v1.1.0");
    for ty in ["point", "linestring", "polygon", "multipoint"] {
        let csv = t20.join(format!("data-{ty}-wkt.csv"));
        let p = t20.join(format!("data-{ty}-encoding_wkb.parquet"));
        if p.exists() {
            cases.push((p, csv.clone()));
        }
        for enc in ["wkb", "native"] {
            let p = t11.join(format!("data-{ty}-encoding_{enc}.parquet"));
            if p.exists() {
                cases.push((p, csv.clone()));
            }
        }
    }
    let mut n = 0;
    for (pq, truth) in &cases {
        let want = if truth.extension().unwrap() == "tsv" { read_tsv(truth) } else { read_csv(truth) };
        for (form, pf) in [("native", PointForm::Native), ("fixed", PointForm::FixedWkb), ("var", PointForm::VarWkb)] {
            let opts = ImportOptions { point_form: pf, ..in_order("/t") };
            let (h5, r) = import(pq, &format!("truth_{}_{form}", tag_of(pq)), &opts);
            let rep = r.unwrap_or_else(|e| panic!("{}: {e}", rel(pq)));
            let got = table_wkts(&h5, "/t", &rep.geometry_columns[0].name);
            assert_eq!(got, want, "{} ({form})", rel(pq));
            n += 1;
        }
    }
    // parquet-testing's geospatial.parquet: the `wkt` column is each row's truth.
    let p = pe.join("parquet-testing-geospatial/geospatial.parquet");
    let (h5, r) = import(&p, "truth_geospatial", &ImportOptions::new("/t"));
    r.unwrap();
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    let nr = t.nrows().unwrap();
    let wkt = t.table().read("wkt", 0, nr).unwrap();
    let wcol = t.table().column("wkt").unwrap();
    let miss = wkt.missing(wcol.fill());
    let got = table_wkts(&h5, "/t", "geometry");
    let mut compared = 0;
    for i in 0..nr as usize {
        let truth = if miss[i] { None } else { Some(norm_wkt(&wkt.get_str(i).unwrap())) };
        assert_eq!(got[i], truth, "geospatial.parquet row {i}");
        compared += 1;
    }
    assert_eq!(compared, 196);
    println!("{n} file/form cases and 196 geospatial.parquet rows match their WKT truth");
}

#[test]
fn crs_edges_and_types_follow_the_mapping() {
    let _serial = serial();
    let pe = peers();
    let check = |rp: &str| {
        let p = pe.join(rp);
        let (_, r) = import(&p, &format!("map_{}", tag_of(&p)), &ImportOptions::new("/t"));
        r.unwrap_or_else(|e| panic!("{rp}: {e}"))
    };
    // Absent crs → default (no CRS attribute); null → unknown.
    let r = check("geoparquet-testing/data/crs/crs-default.parquet");
    assert_eq!(r.geometry_columns[0].crs, Crs::Default);
    let r = check("geoarrow-data/example/example_geometry_geo.parquet");
    assert_eq!(r.geometry_columns[0].crs, Crs::Unknown);
    let r = check("geoarrow-data/example-crs/example-crs_vermont-utm_geo.parquet");
    assert_eq!(r.geometry_columns[0].crs.id(), Some(("EPSG".into(), "32618".into())));
    // srid:N in the logical type → resolved with PROJ (issue #22); without PROJ unknown
    // plus a finding, text kept.
    let r = check("parquet-testing-geospatial/crs-srid.parquet");
    if marquet::crs::proj_available() {
        assert_eq!(r.geometry_columns[0].crs.id(), Some(("EPSG".into(), "5070".into())));
        assert!(!r.has_finding(code::CRS_NOT_PROJJSON));
    } else {
        assert_eq!(r.geometry_columns[0].crs, Crs::Unknown);
        assert!(r.has_finding(code::CRS_NOT_PROJJSON));
    }
    // Inline PROJJSON in the logical type (no geo key).
    let r = check("geoparquet-io/fields_pgo_5070_snappy.parquet");
    assert_eq!(r.geometry_columns[0].crs.id(), Some(("EPSG".into(), "5070".into())));
    assert!(r.geoparquet_version.is_none() && r.native_types && r.has_finding(code::METADATA_MISSING));
    // GEOGRAPHY → spherical edges.
    let r = check("parquet-testing-geospatial/crs-geography.parquet");
    assert_eq!(r.geometry_columns[0].edges, Edges::Spherical);
    let r = check("geoparquet-testing/data/encodings/linestring-native-geography.parquet");
    assert_eq!(r.geometry_columns[0].edges, Edges::Spherical);
    // Points → point column; dims from data.
    let r = check("geoparquet-testing/samples/airports-global.parquet");
    assert!(matches!(r.geometry_columns[0].form, StorageForm::Point { dims: Dimensions::Xy, .. }));
    // Epoch and orientation.
    let r = check("geoparquet-testing/data/epoch/epoch-itrf2014-2020.parquet");
    let h5 = tmp(&format!("map_{}.h5", tag_of(&pe.join("geoparquet-testing/data/epoch/epoch-itrf2014-2020.parquet"))));
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    assert_eq!(t.geometry_column(&r.geometry_columns[0].name).unwrap().epoch, Some(2020.0));
    let r = check("geoparquet-testing/data/orientation/polygon-ccw.parquet");
    let h5 = tmp(&format!("map_{}.h5", tag_of(&pe.join("geoparquet-testing/data/orientation/polygon-ccw.parquet"))));
    let f = File::open(&h5).unwrap();
    let t = MarquetTable::open(&f, "/t").unwrap();
    assert!(t.geometry_column(&r.geometry_columns[0].name).unwrap().orientation_ccw);
    // Two geometry columns, primary first.
    let r = check("geoparquet-testing/samples/buildings-with-centroid.parquet");
    let names: Vec<&str> = r.geometry_columns.iter().map(|g| g.name.as_str()).collect();
    assert_eq!(names, vec!["footprint", "centroid"]);
    // Covering → Marquet covering column.
    let r = check("geoparquet-spec/example_v1.1.0.parquet");
    assert_eq!(r.geometry_columns[0].covering.as_deref(), Some("bbox"));
    // ZM deviation files: types from the data, finding reported.
    let r = check("geoparquet-testing/data/zm/linestring-xyzm-native-geometry.parquet");
    assert_eq!(r.geometry_columns[0].types, vec![GeometryType::new(GeometryKind::LineString, Dimensions::Xyzm)]);
    assert!(r.has_finding(code::ZM_MISMATCH));
    // Pre-1.0 WKT crs (of EPSG:4326) → resolved with PROJ (issue #22): the default CRS;
    // without PROJ unknown + description + finding.
    let r = check("geopandas/test_data_gdal350.parquet");
    if marquet::crs::proj_available() {
        assert_eq!(r.geometry_columns[0].crs, Crs::Default);
    } else {
        assert_eq!(r.geometry_columns[0].crs, Crs::Unknown);
        assert!(r.has_finding(code::CRS_NOT_PROJJSON));
    }
    // Native encodings.
    let r = check("geoarrow-data/natural-earth/natural-earth_countries_native.parquet");
    assert_eq!(r.geometry_columns[0].form, StorageForm::VarWkb);
    assert!(r.geometry_columns[0].source.contains("multipolygon"));
    let r = check("geoarrow-data/example/example_point_native.parquet");
    assert!(matches!(r.geometry_columns[0].form, StorageForm::Point { .. }));
    // Big-endian WKB (Overture) and nested attributes (flattened or skipped, never silent);
    // its undeclared float32 `bbox` struct is the covering, not `bbox.xmin` … data (issue #32).
    let r = check("geoarrow-rs/overture_infrastructure.parquet");
    assert_eq!(r.rows, 100);
    assert_eq!(r.geometry_columns[0].covering.as_deref(), Some("bbox"), "{r}");
    assert!(!r.columns.iter().any(|(c, _)| c.starts_with("bbox")), "{r}");
}

#[test]
fn bad_files_are_rejected_or_reported_as_the_manifest_expects() {
    let _serial = serial();
    let dir = peers().join("geoparquet-testing/bad_data");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("manifest.json")).unwrap()).unwrap();
    let mut n = 0;
    for (file, entry) in manifest.as_object().unwrap() {
        let expected = entry["expected_failure"].as_str().unwrap();
        let p = dir.join(file);
        // Lenient (default): an error with the code, or a finding with it.
        let (_, r) = import(&p, &format!("bad_{}", tag_of(&p)), &ImportOptions::new("/t"));
        let how = match &r {
            Err(e) => {
                assert_eq!(failure_code(e).map(|c| c.as_str()), Some(expected), "{file}: {e}");
                format!("rejected: {e}")
            }
            Ok(rep) => {
                assert!(rep.findings.iter().any(|f| f.code == expected), "{file}: imported without a {expected} finding:\n{rep}");
                format!("imported, reported: {}", rep.findings.iter().find(|f| f.code == expected).unwrap())
            }
        };
        // Strict: always rejected, with the manifest's code.
        let (_, rs) = import(&p, &format!("bads_{}", tag_of(&p)), &ImportOptions { strict: true, ..ImportOptions::new("/t") });
        let e = rs.err().unwrap_or_else(|| panic!("{file}: strict import accepted it"));
        assert_eq!(failure_code(&e).map(|c| c.as_str()), Some(expected), "{file} (strict): {e}");
        println!("{file}: {expected}: {how}");
        n += 1;
    }
    assert_eq!(n, 11);
}

fn geometry_bytes(h5: &Path, table: &str) -> BTreeMap<String, Vec<Option<Vec<u8>>>> {
    let f = File::open(h5).unwrap();
    let t = MarquetTable::open(&f, table).unwrap();
    let n = t.nrows().unwrap();
    let mut out = BTreeMap::new();
    for g in t.geometry_column_names().unwrap() {
        let b = t.read_wkb(&g, 0, n).unwrap();
        out.insert(g, (0..b.len()).map(|i| b.get(i).map(|w| w.to_vec())).collect());
    }
    out
}

#[test]
fn export_and_reimport_is_bit_identical() {
    let _serial = serial();
    let mut n = 0;
    for (k, p) in good_files().into_iter().enumerate() {
        let tag = format!("rt_{}", tag_of(&p));
        let (h5, r) = import(&p, &tag, &in_order("/t"));
        let rep = r.unwrap_or_else(|e| panic!("{}: {e}", rel(&p)));
        let before = geometry_bytes(&h5, "/t");
        let f = File::open(&h5).unwrap();
        let t = MarquetTable::open(&f, "/t").unwrap();
        let infos: Vec<_> = t.geometry_column_names().unwrap().iter().map(|g| t.geometry_column(g).unwrap()).collect();
        // 2.0 for every file; the 1.x flavours for every third file and every file with a
        // covering or a native encoding (keeps the debug-build test time reasonable).
        let all = k % 3 == 0 || infos.iter().any(|i| i.covering.is_some()) || rep.geometry_columns.iter().any(|g| g.source.starts_with("geoarrow"));
        let versions: &[GeoParquetVersion] =
            if all { &[GeoParquetVersion::V2_0, GeoParquetVersion::V1_1, GeoParquetVersion::V1_0] } else { &[GeoParquetVersion::V2_0] };
        for &v in versions {
            let out = tmp(&format!("{tag}_{v:?}.parquet"));
            let er = export_geoparquet(&f, "/t", &out, &ExportOptions { version: v, ..ExportOptions::default() })
                .unwrap_or_else(|e| panic!("{} export {v:?}: {e}", rel(&p)));
            assert_eq!(er.rows, rep.rows);
            let (h5b, r2) = import(&out, &format!("{tag}_{v:?}_back"), &in_order("/t"));
            let rep2 = r2.unwrap_or_else(|e| panic!("{} re-import {v:?}: {e}", rel(&p)));
            assert!(rep2.findings.iter().all(|f| f.code == code::CRS_NOT_PROJJSON), "{} {v:?}: {rep2}", rel(&p));
            assert_eq!(rep2.rows, rep.rows);
            assert_eq!(geometry_bytes(&h5b, "/t"), before, "{} {v:?}", rel(&p));
            let f2 = File::open(&h5b).unwrap();
            let t2 = MarquetTable::open(&f2, "/t").unwrap();
            for i in &infos {
                let j = t2.geometry_column(&i.name).unwrap();
                assert_eq!(j.crs, i.crs, "{} {v:?}", rel(&p));
                assert_eq!(j.types, i.types);
                assert_eq!(j.edges, i.edges);
                assert_eq!(j.orientation_ccw, i.orientation_ccw);
                assert_eq!(j.epoch, i.epoch);
                assert_eq!(j.form, i.form);
                // The export writes the table's covering, or computes one for a non-point
                // column (in every version, issue #22), which the re-import keeps.
                let points = matches!(i.form, marquet::marquet::StorageForm::Point { .. })
                    || i.types.as_ref().is_some_and(|t| !t.is_empty() && t.iter().all(|t| t.kind == marquet::GeometryKind::Point));
                match &i.covering {
                    Some(_) => assert_eq!(j.covering, i.covering, "{} {v:?}", rel(&p)),
                    None => assert_eq!(j.covering.is_some(), !points, "{} {v:?}", rel(&p)),
                }
            }
            // Ordinary columns survive too (same names, same values).
            for c in t.table().column_names().unwrap() {
                if infos.iter().any(|i| i.name == c || i.covering.as_deref() == Some(c.as_str())) {
                    continue;
                }
                if t.table().kind_of(&c).unwrap() == Some(marquet::h5col::ColumnKind::Dataset) {
                    let a = t.table().read(&c, 0, rep.rows).unwrap();
                    let b = t2.table().read(&c, 0, rep.rows).unwrap_or_else(|e| panic!("{} {v:?} {c}: {e}", rel(&p)));
                    assert_eq!(a.bytes, b.bytes, "{} {v:?} column {c}", rel(&p));
                }
            }
            n += 1;
        }
    }
    println!("{n} export/re-import round trips");
}

#[test]
fn exported_2_0_file_has_native_types_stats_and_geo_metadata() {
    let _serial = serial();
    let p = peers().join("parquet-testing-geospatial/geospatial.parquet");
    let (h5, r) = import(&p, "native_out", &ImportOptions::new("/t"));
    r.unwrap();
    let f = File::open(&h5).unwrap();
    let out = tmp("native_out.parquet");
    let er = export_geoparquet(&f, "/t", &out, &ExportOptions { row_group_rows: 50, ..ExportOptions::default() }).unwrap();
    assert_eq!(er.row_groups, 4);
    let r = parquet::file::reader::SerializedFileReader::new(std::fs::File::open(&out).unwrap()).unwrap();
    use parquet::file::reader::FileReader;
    let md = r.metadata();
    let schema = md.file_metadata().schema_descr();
    let gi = (0..schema.num_columns()).find(|&i| schema.column(i).name() == "geometry").unwrap();
    assert!(matches!(schema.column(gi).logical_type_ref(), Some(parquet::basic::LogicalType::Geometry(_))));
    let mut with_stats = 0;
    for rg in md.row_groups() {
        assert!(rg.num_rows() <= 50);
        if let Some(gs) = rg.column(gi).geo_statistics() {
            if gs.bounding_box().is_some() {
                with_stats += 1;
            }
        }
    }
    assert!(with_stats >= 3, "row groups with geospatial statistics: {with_stats}");
    let geo = md.file_metadata().key_value_metadata().unwrap().iter().find(|kv| kv.key == "geo").unwrap();
    let g: serde_json::Value = serde_json::from_str(geo.value.as_deref().unwrap()).unwrap();
    assert_eq!(g["version"], "2.0.0");
    assert_eq!(g["primary_column"], "geometry");
    assert_eq!(g["columns"]["geometry"]["encoding"], "WKB");
    assert_eq!(g["columns"]["geometry"]["geometry_types"].as_array().unwrap().len(), 28);
    assert!(g["columns"]["geometry"].get("crs").is_none(), "default CRS is omitted");
}

#[test]
fn geojson_round_trip() {
    let _serial = serial();
    let p = peers().join("geoarrow-data/natural-earth/natural-earth_countries_geo.parquet");
    let (h5, r) = import(&p, "gj_src", &in_order("/t"));
    r.unwrap();
    let f = File::open(&h5).unwrap();
    let gj = tmp("countries.geojson");
    let er = export_geojson(&f, "/t", &gj).unwrap();
    assert_eq!(er.rows, 177);
    let h5b = tmp("gj_back.h5");
    let fb = File::create(&h5b).unwrap();
    let rep = import_geojson(&gj, &fb, &in_order("/t")).unwrap();
    assert_eq!(rep.rows, 177);
    drop(fb);
    let (a, b) = (table_wkts(&h5b, "/t", "geometry"), table_wkts(&h5, "/t", "geometry"));
    assert_eq!(a.len(), b.len());
    for i in 0..a.len() {
        if a[i] != b[i] {
            let (x, y) = (a[i].clone().unwrap_or_default(), b[i].clone().unwrap_or_default());
            let k = x.bytes().zip(y.bytes()).take_while(|(p, q)| p == q).count();
            panic!("row {i} differs at byte {k}: {:?} vs {:?}", &x[k.saturating_sub(40)..(k + 40).min(x.len())], &y[k.saturating_sub(40)..(k + 40).min(y.len())]);
        }
    }
    // Properties come back as columns (strings stay strings, numbers numbers).
    let fb = File::open(&h5b).unwrap();
    let tb = MarquetTable::open(&fb, "/t").unwrap();
    let ta = MarquetTable::open(&f, "/t").unwrap();
    let name = tb.table().read("name", 0, 177).unwrap();
    let name_a = ta.table().read("name", 0, 177).unwrap();
    assert_eq!(name.to_string_vec(), name_a.to_string_vec());
    // Points from GeoJSON → point column; Z kept.
    let text = r#"{"type":"FeatureCollection","features":[
      {"type":"Feature","id":7,"geometry":{"type":"Point","coordinates":[1,2,3]},"properties":{"a":1,"b":"x","c":true,"d":[1,2]}},
      {"type":"Feature","geometry":null,"properties":{"a":2.5,"b":null,"c":null}},
      {"type":"Feature","geometry":{"type":"Point","coordinates":[4,5,6]},"properties":{}}]}"#;
    let src = tmp("small.geojson");
    std::fs::write(&src, text).unwrap();
    let h5c = tmp("small.h5");
    let fc = File::create(&h5c).unwrap();
    let rep = import_geojson(&src, &fc, &in_order("/s")).unwrap();
    assert_eq!(rep.rows, 3);
    assert!(matches!(rep.geometry_columns[0].form, StorageForm::Point { dims: Dimensions::Xyz, .. }));
    drop(fc);
    let w = table_wkts(&h5c, "/s", "geometry");
    assert_eq!(w, vec![Some("POINT Z (1 2 3)".to_string()), None, Some("POINT Z (4 5 6)".to_string())]);
}

#[test]
fn convert_picks_the_direction_from_extensions() {
    let _serial = serial();
    let p = peers().join("geoparquet-testing/samples/buildings-with-centroid.parquet");
    let h5 = tmp("conv.h5");
    let _ = std::fs::remove_file(&h5);
    let r = convert(&p, &h5, &ConvertOptions::default()).unwrap();
    assert_eq!(r.table, "/buildings-with-centroid");
    assert_eq!(r.import.as_ref().unwrap().rows, 83);
    let out = tmp("conv_out.parquet");
    let r = convert(&h5, &out, &ConvertOptions { geoparquet_version: Some(GeoParquetVersion::V1_1), ..Default::default() }).unwrap();
    assert_eq!(r.export.as_ref().unwrap().version, "1.1.0");
    let gj = tmp("conv_out.geojson");
    let r = convert(&out, &gj, &ConvertOptions::default()).unwrap();
    assert_eq!(r.export.unwrap().rows, 83);
    // A failing import into a new file leaves no file behind.
    let bad = peers().join("geoparquet-testing/bad_data/geo-invalid-json.parquet");
    let h5bad = tmp("conv_bad.h5");
    let e = convert(&bad, &h5bad, &ConvertOptions::default()).unwrap_err();
    assert_eq!(failure_code(&e), Some(code::METADATA_INVALID_JSON));
    assert!(!h5bad.exists());
}

/// Check exported files with pyarrow + geopandas when the test venv exists
/// (scripts/pyvenv.sh); skipped with a notice otherwise, failing under CI.
#[test]
fn exported_files_read_with_pyarrow_and_geopandas() {
    let _serial = serial();
    let Some(py) = common::venv_python_with("pyarrow, geopandas", "the pyarrow/geopandas check") else { return };
    let mut files = Vec::new();
    for (rp, v) in [
        ("geoarrow-data/natural-earth/natural-earth_countries_geo.parquet", GeoParquetVersion::V2_0),
        ("geoarrow-data/natural-earth/natural-earth_countries_geo.parquet", GeoParquetVersion::V1_1),
        ("geoparquet-spec/example_v1.1.0.parquet", GeoParquetVersion::V1_1),
        ("geoparquet-testing/samples/buildings-with-centroid.parquet", GeoParquetVersion::V2_0),
        ("parquet-testing-geospatial/geospatial.parquet", GeoParquetVersion::V2_0),
    ] {
        let p = peers().join(rp);
        let tag = format!("py_{}_{v:?}", tag_of(&p));
        let (h5, r) = import(&p, &tag, &ImportOptions::new("/t"));
        let rep = r.unwrap();
        let f = File::open(&h5).unwrap();
        let out = tmp(&format!("{tag}.parquet"));
        export_geoparquet(&f, "/t", &out, &ExportOptions { version: v, ..Default::default() }).unwrap();
        files.push((out, rep.rows));
    }
    let script = r#"
import sys, json
import pyarrow.parquet as pq
import geopandas
for path, rows in zip(sys.argv[1::2], sys.argv[2::2]):
    t = pq.read_table(path)
    assert t.num_rows == int(rows), (path, t.num_rows, rows)
    meta = json.loads(t.schema.metadata[b"geo"])
    df = geopandas.read_parquet(path)
    assert len(df) == int(rows)
    prim = meta["primary_column"]
    assert df.geometry.name == prim
    print("ok", path, len(df), meta["version"], sorted(set(df.geometry.geom_type.dropna())))
"#;
    let mut cmd = std::process::Command::new(&py);
    cmd.arg("-c").arg(script);
    for (f, n) in &files {
        cmd.arg(f).arg(n.to_string());
    }
    let o = cmd.output().unwrap();
    println!("{}", String::from_utf8_lossy(&o.stdout));
    assert!(o.status.success(), "python check failed:\n{}", String::from_utf8_lossy(&o.stderr));
}

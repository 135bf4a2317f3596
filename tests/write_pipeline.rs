//! The one write pipeline (issue #31): every entry writes the same table for the same input,
//! an append streams into the target without intermediate files, and `--to-crs` reprojects
//! on the way in (the order and the indexes are of the target coordinates).
#![cfg(feature = "geoparquet")]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use marquet::convert::{append_file, import_geoparquet, AppendOptions, ImportOptions};
use marquet::h5;
use marquet::h5col::File;
use marquet::marquet::{MarquetTable, SpatialIndexKind};

const COUNTRIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet";
const CITIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet";

fn marquet(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    (o.status.code().unwrap_or(-1), String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

fn data(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Everything a reader can see of table `table` in `h5`: every row (`dump --format csv`),
/// the summaries, and the raw bytes of every spatial index dataset with its attributes.
fn fingerprint(h5: &Path, table: &str) -> String {
    let p = h5.display().to_string();
    let (code, rows, err) = marquet(&["dump", &p, "--table", table, "--format", "csv"]);
    assert_eq!(code, 0, "{err}");
    let f = File::open(h5).unwrap();
    let t = MarquetTable::open(&f, table).unwrap();
    let mut out = rows;
    for g in t.geometry_column_names().unwrap() {
        let info = t.geometry_column(&g).unwrap();
        out.push_str(&format!("\n{g}: bbox {:?} types {:?} covering {:?}\n", info.bbox, info.types, info.covering));
        let mut idx = t.spatial_indexes(&g).unwrap();
        idx.sort_by_key(|i| i.kind.kind());
        for i in idx {
            assert!(i.valid, "{}: {:?} is stale", h5.display(), i.kind);
            let ds = h5::dataset_open(t.table().id(), &i.info.path).unwrap();
            let di = h5::dataset_info(ds.id(), &i.info.path).unwrap();
            let bytes = h5::dataset_read(ds.id(), 0, di.dims[0], &di.dtype.to_le(), &i.info.path).unwrap();
            let attr = |n: &str| h5::attr_read(ds.id(), n).ok().flatten().map(|a| a.data);
            out.push_str(&format!(
                "{:?}: {} entries, node_size {:?}, num_items {:?}, block_length {:?}, {} bytes, fnv {:016x}\n",
                i.kind,
                di.dims[0],
                attr("node_size"),
                attr("num_items"),
                attr("BLOCK_LENGTH"),
                bytes.len(),
                bytes.iter().fold(0xcbf29ce484222325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100000001b3))
            ));
        }
    }
    out
}

#[test]
fn the_cli_and_the_library_write_the_same_table() {
    let _s = common::serial();
    let dir = common::TempDir::new("write-pipeline-same");
    let src = data(COUNTRIES);
    let a = dir.join("cli.h5");
    let (code, _, err) = marquet(&["convert", &src.display().to_string(), &a.display().to_string(), "--table", "/countries"]);
    assert_eq!(code, 0, "{err}");
    let b = dir.join("lib.h5");
    {
        let f = File::create(&b).unwrap();
        let r = import_geoparquet(&src, &f, &ImportOptions::new("/countries")).unwrap();
        assert_eq!(r.rows, 177);
    }
    let fa = fingerprint(&a, "/countries");
    assert_eq!(fa, fingerprint(&b, "/countries"));
    // The new table's indexes were built by the writer's commit from the rows' boxes.
    assert!(fa.contains("BlockBBox") && fa.contains("PackedRTree"), "{fa}");
    assert_eq!(fa.lines().filter(|l| l.contains("MULTIPOLYGON") || l.contains("POLYGON")).count(), 177);
}

#[test]
fn an_append_equals_the_same_rows_appended_from_an_hdf5_copy() {
    // `append --from x.parquet` streams the source into the target (no staging table);
    // `append --from x.h5` reads the converted source: both land the same rows, summaries
    // and indexes.
    let _s = common::serial();
    let dir = common::TempDir::new("write-pipeline-append");
    let src = data(CITIES);
    let s = src.display().to_string();
    let base = dir.join("base.h5");
    let (code, _, err) = marquet(&["convert", &s, &base.display().to_string(), "--table", "/cities", "--rtree", "on"]);
    assert_eq!(code, 0, "{err}");
    let copy_h5 = dir.join("src.h5");
    let (code, _, err) = marquet(&["convert", &s, &copy_h5.display().to_string(), "--table", "/cities"]);
    assert_eq!(code, 0, "{err}");
    let (x, y) = (dir.join("x.h5"), dir.join("y.h5"));
    std::fs::copy(&base, &x).unwrap();
    std::fs::copy(&base, &y).unwrap();
    let (code, out, err) = marquet(&["append", &x.display().to_string(), "--from", &s]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("appended 243 rows") && out.contains("now 486 rows"), "{out}");
    {
        let f = File::open_rw(&y).unwrap();
        let r = append_file(&f, "/cities", &copy_h5, &AppendOptions::default()).unwrap();
        assert_eq!((r.rows, r.nrows), (243, 486));
    }
    let fx = fingerprint(&x, "/cities");
    assert_eq!(fx, fingerprint(&y, "/cities"));
    assert!(fx.contains("PackedRTree: ") && fx.contains(&format!("num_items {:?}", Some(486u64.to_le_bytes().to_vec()))), "{fx}");
    let (code, out, err) = marquet(&["validate", &x.display().to_string()]);
    assert_eq!(code, 0, "{out}{err}");
}



#[test]
fn append_and_convert_create_no_file_but_the_output() {
    let _s = common::serial();
    let Some(strace) = common::strace() else { return };
    let dir = common::TempDir::new("write-pipeline-strace");
    let src = data(COUNTRIES).display().to_string();
    let out_dir = dir.join("out");
    std::fs::create_dir_all(&out_dir).unwrap();
    let out = out_dir.join("countries.h5");
    let o = out.display().to_string();
    let bin = env!("CARGO_BIN_EXE_marquet");
    let trace = |args: &[&str], log: &Path| {
        let st = Command::new(&strace)
            .args(["-f", "-qq", "-e", "trace=openat,creat,rename,renameat,renameat2", "-o", &log.display().to_string(), bin])
            .args(args)
            .output()
            .unwrap();
        assert!(st.status.success(), "{}", String::from_utf8_lossy(&st.stderr));
        std::fs::read_to_string(log).unwrap()
    };
    // convert: the only file created is the staging file beside the output, renamed to it.
    let log = trace(&["convert", &src, &o, "--table", "/countries"], &dir.join("convert.log"));
    let (created, renamed) = common::created_and_renamed(&log);
    assert_eq!(created.len(), 1, "{created:?}");
    assert!(Path::new(&created[0]).parent() == Some(out_dir.as_path()), "{created:?}");
    assert_eq!(renamed, vec![(created[0].clone(), o.clone())]);
    // append: nothing created at all (the rows go into the output's reserved tail).
    let log = trace(&["append", &o, "--from", &src], &dir.join("append.log"));
    let (created, renamed) = common::created_and_renamed(&log);
    assert!(created.is_empty() && renamed.is_empty(), "{created:?} {renamed:?}");
    let f = File::open(&out).unwrap();
    assert_eq!(MarquetTable::open(&f, "/countries").unwrap().nrows().unwrap(), 354);
}

#[test]
fn to_crs_orders_and_indexes_the_target_coordinates() {
    let _s = common::serial();
    let dir = common::TempDir::new("write-pipeline-to-crs");
    if !marquet::crs::proj_available() {
        eprintln!("skipped: built without PROJ");
        return;
    }
    let src = data(CITIES).display().to_string();
    let a = dir.join("a.h5");
    let (code, out, err) = marquet(&["convert", &src, &a.display().to_string(), "--table", "/cities", "--to-crs", "EPSG:3857", "--rtree", "on"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("reprojected"), "{out}");
    let f = File::open(&a).unwrap();
    let t = MarquetTable::open(&f, "/cities").unwrap();
    let info = t.geometry_column("geometry").unwrap();
    assert!(info.crs.display_name().contains("3857"), "{}", info.crs.display_name());
    let (b, _, _) = info.bbox.unwrap();
    assert!(b.xmax > 1.0e7 && b.xmin < -1.0e7, "BBOX of the projected coordinates: {b:?}");
    // The R-tree's root box is the projected extent, and its leaves are in Hilbert order of
    // the projected coordinates: the rows are too (the writer ordered them by the same key).
    let idx = t.spatial_indexes("geometry").unwrap();
    assert!(idx.iter().any(|i| i.kind == SpatialIndexKind::PackedRTree && i.valid));
    let pts = t.read_points("geometry", 0, 243).unwrap();
    let boxes: Vec<marquet::BBox> = (0..243)
        .map(|i| {
            let mut bx = marquet::BBox::EMPTY;
            bx.add_xy(pts.x[i], pts.y[i]);
            bx
        })
        .collect();
    let order = marquet::spatial::hilbert_order(&boxes);
    assert_eq!(order, (0..243).collect::<Vec<usize>>(), "rows in Hilbert order of the EPSG:3857 coordinates");
    let (code, out, err) = marquet(&["validate", &a.display().to_string()]);
    assert_eq!(code, 0, "{out}{err}");
}

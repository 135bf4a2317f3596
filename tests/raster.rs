//! Havasu rasters (issue #37): raster columns of a Parquet file and an Iceberg table
//! (testdata/raster/, written by testdata/raster/make_fixtures.py with pyarrow, numpy and
//! fastavro straight from the spec's field tables) into HDF5 arrays beside a footprint
//! table, found by window, and back to Havasu v1 Parquet. Every pixel is compared with the
//! fixture as the Parquet crate reads it (decoded here, not by the library); footprints must
//! contain the rasters' true outlines projected to WGS84 with pyproj (extents.json).

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type};
use arrow_array::{Array, ArrayRef, StructArray};
use common::TempDir;
use geo::Intersects;
use marquet::convert::lake::raster::model::PixelType;
use marquet::convert::lake::raster::read::{query_rasters, raster_columns, read_rasters};
use marquet::convert::lake::LakeOptions;
use marquet::convert::{convert, ConvertOptions};
use marquet::h5col::{File, GridAttr};
use marquet::marquet::MarquetTable;
use marquet::validate::{validate_file, Options, Status};
use marquet::{wkb, BBox};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

fn data(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/raster").join(p)
}

/// A band as the fixture stores it: pixel_type, no_data, data, out_db_band_no, out_db_url.
type FBand = (i32, Option<Vec<u8>>, Option<Vec<u8>>, Option<i32>, Option<String>);

/// A raster as the fixture stores it.
#[derive(Debug, Clone, PartialEq)]
struct FRaster {
    width: i32,
    height: i32,
    crs: Option<String>,
    geo: [f64; 6],
    bands: Vec<FBand>,
}

fn bands_of(s: &StructArray) -> Vec<Option<FBand>> {
    let pt = s.column_by_name("pixel_type").unwrap().as_primitive::<Int32Type>();
    let nd = s.column_by_name("no_data").unwrap().as_binary::<i32>();
    let da = s.column_by_name("data").unwrap().as_binary::<i32>();
    let no = s.column_by_name("out_db_band_no").unwrap().as_primitive::<Int32Type>();
    let url = s.column_by_name("out_db_url").unwrap().as_string::<i32>();
    (0..s.len())
        .map(|i| {
            (!s.is_null(i)).then(|| {
                (
                    pt.value(i),
                    (!nd.is_null(i)).then(|| nd.value(i).to_vec()),
                    (!da.is_null(i)).then(|| da.value(i).to_vec()),
                    (!no.is_null(i)).then(|| no.value(i)),
                    (!url.is_null(i)).then(|| url.value(i).to_string()),
                )
            })
        })
        .collect()
}

/// (name, raster) of every row of a Havasu v1 Parquet file, read with the Parquet crate.
fn fixture(path: &Path) -> Vec<(String, Option<FRaster>)> {
    let f = std::fs::File::open(path).unwrap();
    let r = ParquetRecordBatchReaderBuilder::try_new(f).unwrap().build().unwrap();
    let mut out = Vec::new();
    for b in r {
        let b = b.unwrap();
        let names = b.column_by_name("name").unwrap().as_string::<i32>().clone();
        let s = b.column_by_name("rast").unwrap().as_struct().clone();
        let w = s.column_by_name("width").unwrap().as_primitive::<Int32Type>();
        let h = s.column_by_name("height").unwrap().as_primitive::<Int32Type>();
        let nb = s.column_by_name("num_bands").unwrap().as_primitive::<Int32Type>();
        let crs = s.column_by_name("crs_wkt").unwrap().as_string::<i32>();
        let g = s.column_by_name("geo_reference").unwrap().as_struct();
        let gv: Vec<_> = ["scale_x", "scale_y", "skew_x", "skew_y", "upperleft_x", "upperleft_y"].iter().map(|n| g.column_by_name(n).unwrap().as_primitive::<Float64Type>().clone()).collect();
        let fixed: Vec<Vec<Option<FBand>>> = (1..=4).map(|k| bands_of(s.column_by_name(&format!("band_{k}")).unwrap().as_struct())).collect();
        let extra = s.column_by_name("bands").unwrap().as_list::<i32>().clone();
        let extra_vals = bands_of(extra.values().as_struct());
        for i in 0..b.num_rows() {
            let name = names.value(i).to_string();
            if s.is_null(i) {
                out.push((name, None));
                continue;
            }
            let mut bands: Vec<FBand> = fixed.iter().filter_map(|f| f[i].clone()).collect();
            if !extra.is_null(i) {
                let (a, e) = (extra.value_offsets()[i] as usize, extra.value_offsets()[i + 1] as usize);
                bands.extend(extra_vals[a..e].iter().map(|v| v.clone().unwrap()));
            }
            assert_eq!(bands.len(), nb.value(i) as usize, "{name}");
            let geo: [f64; 6] = std::array::from_fn(|k| gv[k].value(i));
            out.push((name, Some(FRaster { width: w.value(i), height: h.value(i), crs: (!crs.is_null(i)).then(|| crs.value(i).to_string()), geo, bands })));
        }
    }
    out
}

fn assert_valid(h5: &Path) {
    let r = validate_file(h5, &Options::default()).unwrap();
    let errs: Vec<String> = r.errors().map(|f| f.to_string()).collect();
    assert_eq!(r.status, Status::Conformant, "{}: {errs:?}", h5.display());
}

/// Table row of each `name`.
fn rows_by_name(t: &MarquetTable) -> HashMap<String, u64> {
    let plan = marquet::convert::hub::arrow::ArrowPlan::new(t, Some(&["name".to_string()]), false).unwrap();
    let b = plan.read_range(t, 0, t.nrows().unwrap()).unwrap();
    let a: ArrayRef = b.column(0).clone();
    let s = a.as_string::<i32>();
    (0..s.len()).map(|i| (s.value(i).to_string(), i as u64)).collect()
}

/// Every raster of the file against the fixture: pixels byte for byte (the HDF5 array's
/// planes are the in-db bands in order), the array's type, shape, fill value and
/// geo-reference attributes, and the row's facts.
fn check_against_fixture(h5: &Path, fx: &[(String, Option<FRaster>)]) {
    let file = File::open(h5).unwrap();
    let t = MarquetTable::open(&file, "/rasters").unwrap();
    assert_eq!(raster_columns(&t).unwrap(), vec!["rast".to_string()]);
    assert_eq!(t.nrows().unwrap(), fx.len() as u64);
    let by_name = rows_by_name(&t);
    let mut pixels = 0usize;
    for (name, want) in fx {
        let row = by_name[name];
        let got = read_rasters(&file, &t, "rast", &[row]).unwrap().remove(0);
        let Some(want) = want else {
            assert_eq!((got.raster, got.array_path), (None, None), "{name}");
            continue;
        };
        let r = got.raster.clone().unwrap_or_else(|| panic!("{name}: no raster"));
        assert_eq!((r.width, r.height, r.crs_wkt.clone(), r.geo.to_array()), (want.width, want.height, want.crs.clone(), want.geo), "{name}");
        assert_eq!(r.bands.len(), want.bands.len(), "{name}");
        let indb: Vec<&FBand> = want.bands.iter().filter(|b| b.2.is_some()).collect();
        for (k, (b, w)) in r.bands.iter().zip(&want.bands).enumerate() {
            assert_eq!(b.pixel_type.code(), w.0, "{name} band {k}");
            assert_eq!(b.no_data, w.1, "{name} band {k} no-data");
            assert_eq!((b.out_db_band_no, b.out_db_url.clone()), if w.2.is_some() { (None, None) } else { (w.3, w.4.clone()) }, "{name} band {k}");
        }
        match got.array_path {
            None => assert!(indb.is_empty(), "{name}: in-db bands but no array"),
            Some(p) => {
                // Read the array itself, not through read_rasters.
                let g = file.read_grid(&p).unwrap();
                let t0 = PixelType::from_code(indb[0].0).unwrap();
                assert_eq!(g.dims, vec![indb.len() as u64, want.height as u64, want.width as u64], "{name}");
                assert_eq!(PixelType::from_dtype(&g.dtype), Some(t0), "{name}");
                let plane = (want.width * want.height) as usize * t0.size();
                for (k, b) in indb.iter().enumerate() {
                    assert!(g.bytes[k * plane..(k + 1) * plane] == b.2.as_deref().unwrap()[..], "{name}: in-db band {k} differs");
                    pixels += plane / t0.size();
                }
                let nds: Vec<&Option<Vec<u8>>> = indb.iter().map(|b| &b.1).collect();
                let common = nds[0].clone().filter(|_| nds.iter().all(|n| *n == nds[0]));
                assert_eq!(file.grid_fill(&p).unwrap(), common, "{name}: fill value");
                assert_eq!(file.grid_attr(&p, "havasu_geo_reference").unwrap(), Some(GridAttr::F64(want.geo.to_vec())), "{name}");
                let [sx, sy, kx, ky, ux, uy] = want.geo;
                let gt = [ux - 0.5 * sx - 0.5 * kx, sx, kx, uy - 0.5 * ky - 0.5 * sy, ky, sy];
                let Some(GridAttr::Text(s)) = file.grid_attr(&p, "GeoTransform").unwrap() else { panic!("{name}: GeoTransform") };
                let parsed: Vec<f64> = s.split(' ').map(|v| v.parse().unwrap()).collect();
                assert_eq!(parsed, gt.to_vec(), "{name}: GeoTransform");
                assert_eq!(file.grid_attr(&p, "spatial_ref").unwrap().map(|a| matches!(a, GridAttr::Text(s) if Some(&s) == want.crs.as_ref())), want.crs.as_ref().map(|_| true), "{name}");
            }
        }
    }
    // 3·35 + 24 + 5·15 + 6 + 2·12 + 9 + 4 + 16 + 4 + 64 + 60 pixels, every one.
    assert_eq!(pixels, 391);
}

/// Every footprint contains the raster's true outline (pyproj, densified), and its pole.
fn check_footprints(h5: &Path) {
    let ext: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(data("extents.json")).unwrap()).unwrap();
    let file = File::open(h5).unwrap();
    let t = MarquetTable::open(&file, "/rasters").unwrap();
    let by_name = rows_by_name(&t);
    let plan = marquet::convert::hub::arrow::ArrowPlan::new(&t, Some(&["rast".to_string()]), false).unwrap();
    let b = plan.read_range(&t, 0, t.nrows().unwrap()).unwrap();
    let fps = b.column(0).as_binary::<i32>().clone();
    let mut n = 0;
    for (name, pts) in ext["outlines"].as_object().unwrap() {
        let row = by_name[name] as usize;
        assert!(!fps.is_null(row), "{name}: no footprint");
        let g: geo_types::Geometry<f64> = (&wkb::decode(fps.value(row)).unwrap()).into();
        for p in pts.as_array().unwrap() {
            let (x, y) = (p[0].as_f64().unwrap(), p[1].as_f64().unwrap());
            assert!(g.intersects(&geo_types::Point::new(x, y)), "{name}: ({x}, {y}) outside the footprint {g:?}");
            n += 1;
        }
    }
    assert!(n > 4000, "{n} outline points");
    // The pole raster spans every longitude, the antimeridian one is two parts.
    let pole = wkb::scan(fps.value(by_name["arctic_pole"] as usize)).unwrap().bbox;
    assert_eq!((pole.xmin, pole.xmax, pole.ymax), (-180.0, 180.0, 90.0));
    assert!(matches!(wkb::decode(fps.value(by_name["antimeridian"] as usize)).unwrap(), wkb::Geometry::MultiPolygon(_)));
    assert!(fps.is_null(by_name["no_crs"] as usize) && fps.is_null(by_name["null"] as usize));
}

#[test]
fn parquet_rasters_become_arrays_and_footprints() {
    let d = TempDir::new("raster-pq");
    let out = d.join("r.h5");
    let r = convert(&data("rasters.parquet"), &out, &ConvertOptions::default()).unwrap();
    assert_eq!(r.import.as_ref().unwrap().rows, 13);
    let lake = r.lake.unwrap();
    assert!(lake.source.contains("11 arrays"), "{}", lake.source);
    assert!(lake.warnings.iter().any(|w| w.contains("1 rasters state no CRS")), "{:?}", lake.warnings);
    assert_valid(&out);
    check_against_fixture(&out, &fixture(&data("rasters.parquet")));
    check_footprints(&out);
}

#[test]
fn iceberg_rasters_become_arrays_and_footprints() {
    let d = TempDir::new("raster-ice");
    let out = d.join("r.h5");
    let opts = ConvertOptions { table: Some("/rasters".into()), ..ConvertOptions::default() };
    let r = convert(&data("warehouse/db/havasu_raster"), &out, &opts).unwrap();
    let lake = r.lake.unwrap();
    assert_eq!((lake.files_read, lake.files_skipped, lake.rows_read), (3, 0, 13));
    assert_valid(&out);
    // The table's rows are the fixture's, file by file.
    let mut fx = Vec::new();
    for f in std::fs::read_dir(data("warehouse/db/havasu_raster/data")).unwrap() {
        fx.extend(fixture(&f.unwrap().path()));
    }
    assert_eq!(fx.len(), 13);
    check_against_fixture(&out, &fx);
    check_footprints(&out);
}

#[test]
fn iceberg_bbox_skips_data_files_by_raster_bounds() {
    let d = TempDir::new("raster-ice-bbox");
    let out = d.join("r.h5");
    // Europe: the pole file (y >= 77) and the antimeridian file (x 178.7..180, -180..-177.5)
    // are skipped by their manifest bounds.
    let lake = LakeOptions { bbox: Some(BBox::xy(14.0, 45.0, 15.5, 46.0)), ..Default::default() };
    let opts = ConvertOptions { table: Some("/rasters".into()), lake, ..ConvertOptions::default() };
    let r = convert(&data("warehouse/db/havasu_raster"), &out, &opts).unwrap();
    let lake = r.lake.unwrap();
    assert_eq!((lake.files_read, lake.files_skipped), (1, 2), "{lake}");
    let file = File::open(&out).unwrap();
    let t = MarquetTable::open(&file, "/rasters").unwrap();
    let mut names: Vec<String> = rows_by_name(&t).into_keys().collect();
    names.sort();
    assert_eq!(names, vec!["all_out_db", "utm33_int16"]);
    // West of the antimeridian part only: the crossing file is read, the others are not.
    let lake = LakeOptions { bbox: Some(BBox::xy(-179.0, 59.5, -178.0, 60.0)), ..Default::default() };
    let opts = ConvertOptions { table: Some("/rasters".into()), lake, ..ConvertOptions::default() };
    let out2 = d.join("r2.h5");
    let r = convert(&data("warehouse/db/havasu_raster"), &out2, &opts).unwrap();
    let lake = r.lake.unwrap();
    assert_eq!((lake.files_read, lake.files_skipped, lake.rows_kept), (1, 2, 1), "{lake}");
}

#[test]
fn windows_find_rasters_with_their_arrays() {
    let d = TempDir::new("raster-query");
    let out = d.join("r.h5");
    convert(&data("rasters.parquet"), &out, &ConvertOptions::default()).unwrap();
    let fx: HashMap<String, Option<FRaster>> = fixture(&data("rasters.parquet")).into_iter().collect();
    let ext: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(data("extents.json")).unwrap()).unwrap();
    let file = File::open(&out).unwrap();
    let t = MarquetTable::open(&file, "/rasters").unwrap();
    let by_row: HashMap<u64, String> = rows_by_name(&t).into_iter().map(|(n, r)| (r, n)).collect();
    for (w, want) in [
        (BBox::xy(14.0, 45.0, 15.5, 46.0), vec!["all_out_db", "utm33_int16"]),
        (BBox::xy(179.5, 59.5, 180.0, 60.0), vec!["antimeridian"]),
        (BBox::xy(-179.0, 59.5, -178.0, 60.0), vec!["antimeridian"]),
        (BBox::xy(0.0, 85.0, 10.0, 89.0), vec!["arctic_pole"]),
        (BBox::xy(-60.0, -10.0, -50.0, 0.0), vec![]),
    ] {
        let hits = query_rasters(&file, &t, "rast", w).unwrap();
        let mut names: Vec<&str> = hits.iter().map(|h| by_row[&h.row].as_str()).collect();
        names.sort();
        assert_eq!(names, want, "{w:?}");
        // The window meets each hit's true outline box (pyproj).
        for h in &hits {
            let name = &by_row[&h.row];
            let pts = ext["outlines"][name].as_array().unwrap();
            assert!(!pts.is_empty());
            let f = fx[name].as_ref().unwrap();
            let indb: Vec<&FBand> = f.bands.iter().filter(|b| b.2.is_some()).collect();
            match &h.array {
                Some(g) => {
                    let all: Vec<u8> = indb.iter().flat_map(|b| b.2.clone().unwrap()).collect();
                    assert!(g.bytes == all, "{name}: array differs");
                }
                None => assert!(indb.is_empty(), "{name}"),
            }
        }
    }
}

#[test]
fn the_way_back_is_byte_equal() {
    let d = TempDir::new("raster-back");
    let h5 = d.join("r.h5");
    convert(&data("rasters.parquet"), &h5, &ConvertOptions::default()).unwrap();
    let back = d.join("back.parquet");
    let r = convert(&h5, &back, &ConvertOptions::default()).unwrap();
    assert!(r.lake.unwrap().source.contains("12 rasters"));
    // Same rows in the same (source) order, every raster field equal, band data byte for byte.
    assert_eq!(fixture(&back), fixture(&data("rasters.parquet")));
    // And the way back converts again, to the same arrays.
    let h5b = d.join("again.h5");
    convert(&back, &h5b, &ConvertOptions { table: Some("/rasters".into()), ..ConvertOptions::default() }).unwrap();
    check_against_fixture(&h5b, &fixture(&data("rasters.parquet")));
}

#[test]
fn rasters_refuse_an_existing_output_file() {
    let d = TempDir::new("raster-existing");
    let out = d.join("r.h5");
    convert(&data("rasters.parquet"), &out, &ConvertOptions::default()).unwrap();
    let before = std::fs::read(&out).unwrap();
    let opts = ConvertOptions { table: Some("/other".into()), ..ConvertOptions::default() };
    let e = convert(&data("rasters.parquet"), &out, &opts).unwrap_err().to_string();
    assert!(e.contains("new HDF5 file"), "{e}");
    assert!(std::fs::read(&out).unwrap() == before, "the output changed");
}

#[test]
fn cli_query_prints_the_hits_arrays() {
    let d = TempDir::new("raster-cli");
    let out = d.join("r.h5");
    convert(&data("rasters.parquet"), &out, &ConvertOptions::default()).unwrap();
    let run = marquet_cli(&["query", out.to_str().unwrap(), "--bbox", "14,45,15.5,46", "--format", "arrays"]);
    let lines: Vec<serde_json::Value> = run.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let fx: HashMap<String, Option<FRaster>> = fixture(&data("rasters.parquet")).into_iter().collect();
    assert_eq!(lines.len(), 2, "{run}");
    let mut seen = Vec::new();
    for l in &lines {
        // The UTM raster: 3 bands of int16, every value as the fixture stores it.
        if l["array"].is_null() {
            assert_eq!(l["bands"].as_array().unwrap().len(), 2);
            assert_eq!(l["bands"][1]["out_db_url"], "https://example.com/cog2.tif");
            assert_eq!(l["bands"][1]["out_db_band_no"], 1);
            seen.push("all_out_db");
            continue;
        }
        let f = fx["utm33_int16"].as_ref().unwrap();
        assert_eq!(l["shape"], serde_json::json!([3, 5, 7]));
        assert_eq!(l["dtype"], "PT_16BSI");
        for (k, b) in f.bands.iter().enumerate() {
            let px: Vec<i64> = b.2.as_ref().unwrap().chunks(2).map(|c| i16::from_le_bytes([c[0], c[1]]) as i64).collect();
            let got: Vec<i64> = l["values"][k].as_array().unwrap().iter().flat_map(|row| row.as_array().unwrap().iter().map(|v| v.as_i64().unwrap())).collect();
            assert_eq!(got, px, "band {k}");
        }
        assert_eq!(l["geotransform"], serde_json::json!([500000.0, 30.0, 0.0, 5000030.0, 0.0, -30.0]));
        seen.push("utm33_int16");
    }
    seen.sort();
    assert_eq!(seen, ["all_out_db", "utm33_int16"]);
    // Not a raster table: refused with the reason.
    let vec = d.join("v.h5");
    convert(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/lake/points.csv"), &vec, &ConvertOptions { lake: LakeOptions { lonlat: Some(("lon".into(), "lat".into())), ..Default::default() }, ..ConvertOptions::default() }).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_marquet")).args(["query", vec.to_str().unwrap(), "--bbox", "-180,-90,180,90", "--format", "arrays"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a raster footprint column"));
}

fn marquet_cli(args: &[&str]) -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_marquet")).args(args).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn the_way_back_as_an_iceberg_table_with_raster_bounds() {
    let d = TempDir::new("raster-ice-out");
    let h5 = d.join("r.h5");
    convert(&data("rasters.parquet"), &h5, &ConvertOptions::default()).unwrap();
    let ice = d.join("table");
    let r = convert(&h5, &ice, &ConvertOptions::default()).unwrap();
    assert!(r.lake.unwrap().source.contains("Iceberg"));
    // The table reads back through the Iceberg reader: same rasters, byte for byte.
    let (plan, skipped) = marquet::convert::lake::iceberg::plan(&ice, None, None).unwrap();
    assert_eq!((plan.files.len(), skipped, plan.format_version), (1, 0, 2));
    let mut fx = fixture(&plan.files[0].path);
    let mut want = fixture(&data("rasters.parquet"));
    assert_eq!(fx, want);
    // The manifest's raster bounds: the union of every footprint (the pole makes it span
    // every longitude; the south edge is the uint32 raster's, 39° N less the padding).
    let b = plan.files[0].bounds[&3];
    assert_eq!((b.xmin, b.xmax, b.ymax), (-180.0, 180.0, 90.0));
    assert!(b.ymin < 39.0 && b.ymin > 38.9999, "{b:?}");
    // And converts again to the same arrays.
    let h5b = d.join("again.h5");
    convert(&ice, &h5b, &ConvertOptions { table: Some("/rasters".into()), ..ConvertOptions::default() }).unwrap();
    fx.sort_by(|a, b| a.0.cmp(&b.0));
    want.sort_by(|a, b| a.0.cmp(&b.0));
    check_against_fixture(&h5b, &want);
    // A non-empty directory is refused.
    let e = convert(&h5, &ice, &ConvertOptions::default()).unwrap_err().to_string();
    assert!(!e.is_empty());
}

/// A one-column Parquet file of `rasters` (written with the library's own `v1` encoder,
/// which does not check what it is given).
fn write_rasters(path: &Path, rasters: &[Option<marquet::convert::lake::raster::model::Raster>]) {
    use marquet::convert::lake::raster::model::encode_column;
    let a = encode_column(rasters).unwrap();
    let schema = std::sync::Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new("rast", a.data_type().clone(), true)]));
    let b = arrow_array::RecordBatch::try_new(schema.clone(), vec![a]).unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(path).unwrap(), schema, None).unwrap();
    w.write(&b).unwrap();
    w.close().unwrap();
}

#[test]
fn bad_rasters_are_refused_naming_the_row_and_leave_no_file() {
    use marquet::convert::lake::raster::model::{Band, GeoReference, PixelType, Raster};
    let d = TempDir::new("raster-bad");
    let band = |t: PixelType, n: usize| Band { pixel_type: t, no_data: None, data: Some(vec![7; n]), out_db_band_no: None, out_db_url: None };
    let good = Raster { width: 2, height: 2, crs_wkt: Some("EPSG:4326".into()), geo: GeoReference::from_array([1.0, -1.0, 0.0, 0.0, 0.5, 1.5]), bands: vec![band(PixelType::U8, 4)] };
    let cases: Vec<(Raster, &str)> = vec![
        (Raster { bands: vec![band(PixelType::U16, 4)], ..good.clone() }, "holds 4 bytes of data"),
        (Raster { bands: vec![band(PixelType::U8, 4), band(PixelType::I16, 8)], ..good.clone() }, "one array holds one pixel type"),
        (Raster { bands: vec![Band { data: None, ..band(PixelType::U8, 4) }], ..good.clone() }, "an out-db band needs both"),
        (Raster { bands: vec![Band { no_data: Some(vec![0, 0]), ..band(PixelType::U8, 4) }], ..good.clone() }, "no_data has 2 bytes"),
    ];
    for (k, (bad, why)) in cases.into_iter().enumerate() {
        let pq = d.join(&format!("bad{k}.parquet"));
        write_rasters(&pq, &[Some(good.clone()), None, Some(bad)]);
        let out = d.join(&format!("bad{k}.h5"));
        let e = convert(&pq, &out, &ConvertOptions::default()).unwrap_err().to_string();
        assert!(e.contains("row 2") && e.contains(why), "case {k}: {e}");
        assert!(!out.exists(), "case {k}: the output was left behind");
    }
    // A CRS PROJ cannot read: converted, the footprint null with a warning naming the row.
    let pq = d.join("crs.parquet");
    write_rasters(&pq, &[Some(Raster { crs_wkt: Some("NOT A CRS".into()), ..good.clone() }), Some(good.clone())]);
    let r = convert(&pq, &d.join("crs.h5"), &ConvertOptions::default()).unwrap();
    let w = r.lake.unwrap().warnings;
    assert!(w.iter().any(|w| w.contains("1 rasters' envelopes could not be transformed") && w.contains("row 0")), "{w:?}");
}

#[test]
fn rasters_are_not_appended() {
    let d = TempDir::new("raster-append");
    let out = d.join("r.h5");
    convert(&data("rasters.parquet"), &out, &ConvertOptions::default()).unwrap();
    let before = std::fs::read(&out).unwrap();
    let f = File::open_rw(&out).unwrap();
    let e = marquet::convert::append_file(&f, "/rasters", &data("rasters.parquet"), &marquet::convert::AppendOptions::default()).unwrap_err().to_string();
    drop(f);
    assert!(e.contains("not appended"), "{e}");
    assert!(std::fs::read(&out).unwrap() == before, "the file changed");
}

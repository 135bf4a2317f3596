//! `marquet demo`: the main job on bundled data. Natural Earth countries and cities
//! (public domain; GeoParquet copies from geoarrow-data in `testdata/peers/`) are imported
//! into one HDF5 file, indexed, queried with a map window, validated, and exported back to
//! GeoParquet 2.0.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::geoparquet::{self, ExportOptions, ImportOptions};
use crate::h5col::File;
use crate::marquet::MarquetTable;
use crate::query::Query;
use crate::spec::BBox;

/// The bundled inputs, relative to the repository root.
pub const COUNTRIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet";
pub const CITIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet";

/// The window the demo queries: western Europe.
pub const WINDOW: BBox = BBox {
    xmin: -10.0,
    ymin: 35.0,
    xmax: 20.0,
    ymax: 60.0,
    ..BBox::EMPTY
};

/// Run the demo, writing into `out_dir`; returns a human-readable transcript.
pub fn run(data_root: &Path, out_dir: &Path) -> Result<String> {
    std::fs::create_dir_all(out_dir).map_err(|e| crate::MarquetError::Io { path: out_dir.display().to_string(), source: e })?;
    let h5 = out_dir.join("natural_earth.h5");
    let mut s = String::new();
    let f = File::create(&h5)?;
    for (src, table) in [(COUNTRIES, "/countries"), (CITIES, "/cities")] {
        let rep = geoparquet::import_geoparquet(&data_root.join(src), &f, &ImportOptions::new(table))?;
        let _ = writeln!(s, "imported {} rows from {} into {}", rep.rows, src, table);
    }
    for table in ["/countries", "/cities"] {
        let t = MarquetTable::open(&f, table)?;
        let g = t.primary_geometry_column()?;
        t.build_block_bbox(&g, Some(16))?;
        t.build_rtree(&g, None)?;
        let r = t.query(&g, &Query::bbox(WINDOW))?;
        let _ = writeln!(
            s,
            "{table}: {} of {} rows intersect lon {}..{} lat {}..{} (blocks skipped {}/{}, r-tree candidates {}, exact tests {}, bytes read {})",
            r.rows.len(),
            t.nrows()?,
            WINDOW.xmin,
            WINDOW.xmax,
            WINDOW.ymin,
            WINDOW.ymax,
            r.stats.blocks_skipped,
            r.stats.blocks_total,
            r.stats.rtree_candidates,
            r.stats.exact_tested,
            r.stats.bytes_read
        );
    }
    drop(f);
    let report = crate::validate::validate_file(&h5, &crate::validate::Options::default())?;
    let _ = writeln!(
        s,
        "validate {}: {} ({} errors)",
        h5.display(),
        if report.errors().count() == 0 { "conformant" } else { "non-conformant" },
        report.errors().count()
    );
    let f = File::open(&h5)?;
    let out: PathBuf = out_dir.join("countries.parquet");
    let er = geoparquet::export_geoparquet(&f, "/countries", &out, &ExportOptions::default())?;
    let _ = writeln!(s, "exported {} rows of /countries to {} (GeoParquet 2.0)", er.rows, out.display());
    Ok(s)
}

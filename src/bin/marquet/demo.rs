//! `marquet demo`: the main job on bundled data. Natural Earth countries and cities
//! (public domain; GeoParquet copies from geoarrow-data in `testdata/peers/`) are imported
//! into one HDF5 file, indexed, queried with a map window, validated, and exported back to
//! GeoParquet 2.0; an SVG map shows the window and the features the query returned.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use marquet::geo_types::Geometry;

use marquet::{Error as MarquetError, Result};
use marquet::convert::{self, ExportOptions, ImportOptions};
use marquet::h5col::File;
use marquet::Table;
use marquet::query::{Query, TableQuery};
use marquet::spec::BBox;

use super::svg::window_svg;

/// The bundled inputs, relative to the repository root.
pub const COUNTRIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet";
pub const CITIES: &str = "testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet";

/// The two inputs compiled into the binary (204 KB), so that `marquet demo` runs wherever the
/// command is installed — from the Python wheel too (issue #30) — without the repository.
const BUNDLED: [(&str, &[u8]); 2] = [
    (COUNTRIES, include_bytes!("../../../testdata/peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet")),
    (CITIES, include_bytes!("../../../testdata/peers/geoarrow-data/natural-earth/natural-earth_cities_geo.parquet")),
];

/// Where the demo reads input `src`: under `data_root` when given, else the bundled copy
/// written into `out_dir` (next to what the demo writes, so the user sees the inputs too).
fn input(data_root: Option<&Path>, out_dir: &Path, src: &str) -> Result<PathBuf> {
    if let Some(root) = data_root {
        return Ok(root.join(src));
    }
    let (_, bytes) = BUNDLED.iter().find(|(n, _)| *n == src).expect("src is one of the bundled inputs");
    let p = out_dir.join(Path::new(src).file_name().unwrap_or_default());
    std::fs::write(&p, bytes).map_err(|e| MarquetError::Io { path: p.display().to_string(), source: e })?;
    Ok(p)
}

/// The window the demo queries: western Europe.
pub const WINDOW: BBox = BBox {
    xmin: -10.0,
    ymin: 35.0,
    xmax: 20.0,
    ymax: 60.0,
    ..BBox::EMPTY
};

/// The further windows the demo counts, to show pruning at different sizes: (label, box).
pub const MORE_WINDOWS: [(&str, BBox); 3] = [
    ("the whole world", BBox { xmin: -180.0, ymin: -90.0, xmax: 180.0, ymax: 90.0, ..BBox::EMPTY }),
    ("Japan", BBox { xmin: 129.0, ymin: 30.0, xmax: 146.0, ymax: 46.0, ..BBox::EMPTY }),
    ("the middle of the Pacific", BBox { xmin: -160.0, ymin: -10.0, xmax: -140.0, ymax: 10.0, ..BBox::EMPTY }),
];


/// Features of one table inside the demo window.
struct Hits {
    /// (name, geometry) of every row the query returned.
    features: Vec<(String, Option<Geometry<f64>>)>,
}

/// The `name` column of row `r` ("" when the table has none).
fn name_of(t: &Table, r: u64) -> String {
    t.read("name", r, r + 1).map(|a| a.display(0)).unwrap_or_default()
}

fn hits(t: &Table, geom: &str, rows: &[u64]) -> Result<Hits> {
    let mut features = Vec::with_capacity(rows.len());
    for &r in rows {
        let g = t.read_geo(geom, r, r + 1)?.into_iter().next().flatten();
        features.push((name_of(t, r), g));
    }
    Ok(Hits { features })
}

/// Run the demo, writing into `out_dir`; returns a human-readable transcript. The inputs are
/// read under `data_root` (a repository root holding testdata/peers), or the bundled copies.
pub fn run(data_root: Option<&Path>, out_dir: &Path) -> Result<String> {
    std::fs::create_dir_all(out_dir).map_err(|e| MarquetError::Io { path: out_dir.display().to_string(), source: e })?;
    let h5 = out_dir.join("natural_earth.h5");
    if h5.exists() {
        std::fs::remove_file(&h5).map_err(|e| MarquetError::Io { path: h5.display().to_string(), source: e })?;
    }
    let mut s = String::new();
    let _ = writeln!(s, "Marquet demo: Natural Earth countries and cities (public domain), GeoParquet -> HDF5 -> GeoParquet\n");
    let _ = writeln!(s, "1. Import GeoParquet into {}", h5.display());
    let f = File::create(&h5)?;
    for (src, table) in [(COUNTRIES, "/countries"), (CITIES, "/cities")] {
        let rep = convert::import_geoparquet(&input(data_root, out_dir, src)?, &f, &ImportOptions::new(table))?;
        let g = rep.geometry_columns.first();
        let _ = writeln!(
            s,
            "   imported {} rows from {} into {}{}",
            rep.rows,
            Path::new(src).file_name().and_then(|n| n.to_str()).unwrap_or(src),
            table,
            g.map(|g| format!(": {} as {}", g.types.iter().map(|t| t.name()).collect::<Vec<_>>().join("/"), g.form.describe())).unwrap_or_default()
        );
    }
    let _ = writeln!(
        s,
        "\n2. Spatial indexes the import built (the default layout: rows in Hilbert order, HEP002 §10.3 block boxes, §10.4 packed R-tree for non-point columns)"
    );
    for table in ["/countries", "/cities"] {
        let t = Table::open(&f, table)?;
        let g = t.primary_geometry_column()?;
        let idx: Vec<String> =
            t.spatial_indexes(&g)?.iter().map(|i| format!("{}{}", i.info.path, if i.valid { "" } else { " (stale)" })).collect();
        let _ = writeln!(s, "   {table}: {}", idx.join(", "));
    }
    let _ = writeln!(
        s,
        "\n3. Query the window lon {}..{} lat {}..{} (western Europe): rows whose geometry intersects it",
        WINDOW.xmin, WINDOW.xmax, WINDOW.ymin, WINDOW.ymax
    );
    let mut found = Vec::new();
    for table in ["/countries", "/cities"] {
        let t = Table::open(&f, table)?;
        let g = t.primary_geometry_column()?;
        let r = t.query(&g, &Query::bbox(WINDOW))?;
        let _ = writeln!(
            s,
            "   {table}: {} of {} rows intersect lon {}..{} lat {}..{} (blocks skipped {}/{}, r-tree candidates {}, exact tests {}, bytes read {})",
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
        let h = hits(&t, &g, &r.rows)?;
        let mut names: Vec<&str> = h.features.iter().map(|(n, _)| n.as_str()).filter(|n| !n.is_empty()).collect();
        names.sort_unstable();
        if !names.is_empty() {
            let shown = names.len().min(12);
            let _ = writeln!(
                s,
                "      {}{}",
                names[..shown].join(", "),
                if names.len() > shown { format!(" and {} more", names.len() - shown) } else { String::new() }
            );
        }
        found.push(h);
    }
    let t = Table::open(&f, "/cities")?;
    let g = t.primary_geometry_column()?;
    for (label, w) in MORE_WINDOWS {
        let r = t.query(&g, &Query::bbox(w))?;
        let _ = writeln!(
            s,
            "   /cities in {label}: {} rows (blocks skipped {}/{}, bytes read {})",
            r.rows.len(),
            r.stats.blocks_skipped,
            r.stats.blocks_total,
            r.stats.bytes_read
        );
    }
    drop(t);
    drop(f);
    let svg = out_dir.join("window.svg");
    let cities = found.pop().unwrap_or(Hits { features: Vec::new() });
    let countries = found.pop().unwrap_or(Hits { features: Vec::new() });
    std::fs::write(&svg, window_svg(WINDOW, &countries.features, &cities.features))
        .map_err(|e| MarquetError::Io { path: svg.display().to_string(), source: e })?;
    let _ = writeln!(
        s,
        "   map of the window: {} ({} countries, {} cities)",
        svg.display(),
        countries.features.len(),
        cities.features.len()
    );

    let report = marquet::validate::validate_file(&h5, &marquet::validate::Options::default())?;
    let _ = writeln!(s, "\n4. Validate against HEP001 §13 and HEP002 §12");
    let _ = writeln!(
        s,
        "   validate {}: {} ({} errors)",
        h5.display(),
        if report.errors().count() == 0 { "conformant" } else { "non-conformant" },
        report.errors().count()
    );
    let f = File::open(&h5)?;
    let out: PathBuf = out_dir.join("countries.parquet");
    let er = convert::export_geoparquet(&f, "/countries", &out, &ExportOptions::default())?;
    let _ = writeln!(s, "\n5. Export back to GeoParquet");
    let _ = writeln!(s, "   exported {} rows of /countries to {} (GeoParquet 2.0)", er.rows, out.display());
    let _ = writeln!(s, "\nNext: marquet info {}   marquet query {} --table /cities --bbox 129,30,146,46", h5.display(), h5.display());
    Ok(s)
}

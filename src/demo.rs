//! `marquet demo`: the main job on bundled data. Natural Earth countries and cities
//! (public domain; GeoParquet copies from geoarrow-data in `testdata/peers/`) are imported
//! into one HDF5 file, indexed, queried with a map window, validated, and exported back to
//! GeoParquet 2.0; an SVG map shows the window and the features the query returned.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use geo_types::{Coord, Geometry, LineString};

use crate::error::{MarquetError, Result};
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

/// The further windows the demo counts, to show pruning at different sizes: (label, box).
pub const MORE_WINDOWS: [(&str, BBox); 3] = [
    ("the whole world", BBox { xmin: -180.0, ymin: -90.0, xmax: 180.0, ymax: 90.0, ..BBox::EMPTY }),
    ("Japan", BBox { xmin: 129.0, ymin: 30.0, xmax: 146.0, ymax: 46.0, ..BBox::EMPTY }),
    ("the middle of the Pacific", BBox { xmin: -160.0, ymin: -10.0, xmax: -140.0, ymax: 10.0, ..BBox::EMPTY }),
];

/// Width of the SVG map in pixels (the height follows the window's aspect).
pub const SVG_WIDTH: f64 = 720.0;

/// Features of one table inside the demo window.
struct Hits {
    /// (name, geometry) of every row the query returned.
    features: Vec<(String, Option<Geometry<f64>>)>,
}

/// The `name` column of row `r` ("" when the table has none).
fn name_of(t: &MarquetTable, r: u64) -> String {
    t.table().read("name", r, r + 1).map(|a| a.display(0)).unwrap_or_default()
}

fn hits(t: &MarquetTable, geom: &str, rows: &[u64]) -> Result<Hits> {
    let mut features = Vec::with_capacity(rows.len());
    for &r in rows {
        let g = t.read_geo(geom, r, r + 1)?.into_iter().next().flatten();
        features.push((name_of(t, r), g));
    }
    Ok(Hits { features })
}

/// Run the demo, writing into `out_dir`; returns a human-readable transcript.
pub fn run(data_root: &Path, out_dir: &Path) -> Result<String> {
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
        let rep = geoparquet::import_geoparquet(&data_root.join(src), &f, &ImportOptions::new(table))?;
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
        let t = MarquetTable::open(&f, table)?;
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
        let t = MarquetTable::open(&f, table)?;
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
    let t = MarquetTable::open(&f, "/cities")?;
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

    let report = crate::validate::validate_file(&h5, &crate::validate::Options::default())?;
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
    let er = geoparquet::export_geoparquet(&f, "/countries", &out, &ExportOptions::default())?;
    let _ = writeln!(s, "\n5. Export back to GeoParquet");
    let _ = writeln!(s, "   exported {} rows of /countries to {} (GeoParquet 2.0)", er.rows, out.display());
    let _ = writeln!(s, "\nNext: marquet info {}   marquet query {} --table /cities --bbox 129,30,146,46", h5.display(), h5.display());
    Ok(s)
}

/// An SVG map (plate carrée: x = longitude, y = −latitude, scaled) of `window` with a margin
/// of a fifth of its size, the `countries` as filled outlines and the `cities` as dots with
/// their names; features are clipped to the view. Hand-written: a few lines of XML do not
/// justify a drawing crate.
pub fn window_svg(window: BBox, countries: &[(String, Option<Geometry<f64>>)], cities: &[(String, Option<Geometry<f64>>)]) -> String {
    let (mx, my) = ((window.xmax - window.xmin) / 5.0, (window.ymax - window.ymin) / 5.0);
    let view = BBox::xy(window.xmin - mx, window.ymin - my, window.xmax + mx, window.ymax + my);
    let scale = SVG_WIDTH / (view.xmax - view.xmin);
    let height = ((view.ymax - view.ymin) * scale).round();
    let px = |c: Coord<f64>| ((c.x - view.xmin) * scale, (view.ymax - c.y) * scale);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{SVG_WIDTH}" height="{height}" viewBox="0 0 {SVG_WIDTH} {height}" font-family="sans-serif">"##
    );
    let _ = writeln!(s, r##"<title>Marquet demo: the query window and the features it returned</title>"##);
    let _ = writeln!(s, r##"<clipPath id="view"><rect width="{SVG_WIDTH}" height="{height}"/></clipPath>"##);
    let _ = writeln!(s, r##"<rect width="{SVG_WIDTH}" height="{height}" fill="#dbe9f6"/>"##);
    let _ = writeln!(s, r##"<g clip-path="url(#view)">"##);
    let ring = |l: &LineString<f64>, d: &mut String| {
        for (i, c) in l.0.iter().enumerate() {
            let (x, y) = px(*c);
            let _ = write!(d, "{}{x:.1},{y:.1}", if i == 0 { "M" } else { "L" });
        }
        d.push('Z');
    };
    for (name, g) in countries {
        let mut d = String::new();
        let polys: Vec<&geo_types::Polygon<f64>> = match g {
            Some(Geometry::Polygon(p)) => vec![p],
            Some(Geometry::MultiPolygon(m)) => m.0.iter().collect(),
            _ => Vec::new(),
        };
        for p in polys {
            ring(p.exterior(), &mut d);
            for i in p.interiors() {
                ring(i, &mut d);
            }
        }
        if !d.is_empty() {
            let _ = writeln!(
                s,
                r##"<path d="{d}" fill="#f2efe6" stroke="#8a8170" stroke-width="0.8" fill-rule="evenodd"><title>{}</title></path>"##,
                xml_escape(name)
            );
        }
    }
    let (wx0, wy0) = px(Coord { x: window.xmin, y: window.ymax });
    let (wx1, wy1) = px(Coord { x: window.xmax, y: window.ymin });
    let _ = writeln!(
        s,
        r##"<rect x="{wx0:.1}" y="{wy0:.1}" width="{:.1}" height="{:.1}" fill="none" stroke="#c0392b" stroke-width="2" stroke-dasharray="6 4"/>"##,
        wx1 - wx0,
        wy1 - wy0
    );
    for (name, g) in cities {
        let Some(Geometry::Point(p)) = g else { continue };
        let (x, y) = px(p.0);
        let _ = writeln!(s, r##"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="#c0392b"/>"##);
        let _ = writeln!(s, r##"<text x="{:.1}" y="{:.1}" font-size="10" fill="#333">{}</text>"##, x + 4.0, y - 3.0, xml_escape(name));
    }
    let _ = writeln!(s, "</g>");
    let _ = writeln!(
        s,
        r##"<text x="8" y="{:.0}" font-size="12" fill="#333">window lon {}..{} lat {}..{}: {} countries, {} cities (Natural Earth)</text>"##,
        height - 8.0,
        window.xmin,
        window.xmax,
        window.ymin,
        window.ymax,
        countries.len(),
        cities.len()
    );
    s.push_str("</svg>\n");
    s
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_projects_the_window_and_escapes_names() {
        let w = BBox::xy(0.0, 0.0, 10.0, 10.0);
        let sq = geo_types::Polygon::new(LineString::from(vec![(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 0.0)]), vec![]);
        let svg = window_svg(
            w,
            &[("A&B".to_string(), Some(Geometry::Polygon(sq)))],
            &[("<c>".to_string(), Some(Geometry::Point(geo_types::Point::new(5.0, 5.0))))],
        );
        // View: -2..12 x -2..12 at 720 px → 51.428... px per degree.
        assert!(svg.starts_with(r#"<svg xmlns="http://www.w3.org/2000/svg" width="720" height="720""#), "{svg}");
        assert!(svg.contains(r#"<path d="M102.9,617.1L617.1,617.1L617.1,102.9L102.9,617.1Z""#), "{svg}");
        assert!(svg.contains("<title>A&amp;B</title>"), "{svg}");
        assert!(svg.contains(r#"<circle cx="360.0" cy="360.0" r="3""#), "{svg}");
        assert!(svg.contains(">&lt;c&gt;</text>"), "{svg}");
        assert!(svg.contains(r#"<rect x="102.9" y="102.9" width="514.3" height="514.3""#), "{svg}");
        assert!(svg.contains("1 countries, 1 cities"), "{svg}");
        assert!(svg.ends_with("</svg>\n"));
    }
}

//! The SVG map `marquet demo` draws of a query window: country outlines and cities, the
//! hits highlighted.

use std::fmt::Write as _;

use marquet::geo_types::{Coord, Geometry, LineString};
use marquet::spec::BBox;

/// Width of the SVG map in pixels (the height follows the window's aspect).
pub const SVG_WIDTH: f64 = 720.0;

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
        let polys: Vec<&marquet::geo_types::Polygon<f64>> = match g {
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
        let sq = marquet::geo_types::Polygon::new(LineString::from(vec![(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 0.0)]), vec![]);
        let svg = window_svg(
            w,
            &[("A&B".to_string(), Some(Geometry::Polygon(sq)))],
            &[("<c>".to_string(), Some(Geometry::Point(marquet::geo_types::Point::new(5.0, 5.0))))],
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

"""Generate the CRS and GIS-format fixtures of tests/crs.rs and tests/gis_formats.rs.

Written by the tools users have (issue #22): GDAL (through pyogrio's bundled GDAL),
geopandas and DuckDB. Run with the test venv (scripts/pyvenv.sh):
    ~/.cache/marquet/pyvenv/bin/python testdata/crs/make_fixtures.py
Versions used are printed; the files are small and committed.

The data: 5 points of Germany (longitude, latitude), projected to UTM 32N (EPSG:25832)
and Web Mercator (EPSG:3857) by PROJ (pyproj), with an int, a float and a string
attribute, plus one null-geometry row in the formats that allow it.
"""
import json
import os
import sys

import duckdb
import geopandas as gpd
import pyogrio
import pyproj
import shapely

HERE = os.path.dirname(os.path.abspath(__file__))
LONLAT = [(6.96, 50.94), (13.40, 52.52), (11.58, 48.14), (9.99, 53.55), (8.68, 50.11)]
NAMES = ["Köln", "Berlin", "München", "Hamburg", "Frankfurt"]


def frame(epsg):
    t = pyproj.Transformer.from_crs("EPSG:4326", f"EPSG:{epsg}", always_xy=True)
    pts = [shapely.Point(*t.transform(x, y)) for x, y in LONLAT]
    return gpd.GeoDataFrame(
        {"id": list(range(1, 6)), "pop": [1.08, 3.6, 1.5, 1.9, 0.76], "name": NAMES},
        geometry=pts,
        crs=f"EPSG:{epsg}",
    )


def lines(epsg):
    t = pyproj.Transformer.from_crs("EPSG:4326", f"EPSG:{epsg}", always_xy=True)
    ls = [shapely.LineString([t.transform(*LONLAT[i]), t.transform(*LONLAT[i + 1])]) for i in range(4)]
    polys = [shapely.Polygon([t.transform(x, y) for x, y in [(6, 50), (7, 50), (7, 51), (6, 51), (6, 50)]])]
    return gpd.GeoDataFrame({"id": list(range(1, 5)), "name": NAMES[:4]}, geometry=ls, crs=f"EPSG:{epsg}"), polys


def main():
    out = lambda n: os.path.join(HERE, n)
    for f in os.listdir(HERE):
        if f.split(".")[-1] in ("fgb", "gpkg", "shp", "shx", "dbf", "prj", "cpg", "parquet", "geojson"):
            os.remove(out(f))
    utm = frame(25832)
    merc = frame(3857)
    # GDAL: GeoJSON with the legacy crs member (GDAL writes it for non-WGS 84 data).
    pyogrio.write_dataframe(merc, out("gdal_3857.geojson"), driver="GeoJSON")
    # GDAL: the three GIS formats, projected and geographic.
    for epsg, df in ((25832, utm), (4326, frame(4326))):
        pyogrio.write_dataframe(df, out(f"gdal_{epsg}.fgb"), driver="FlatGeobuf")
        pyogrio.write_dataframe(df, out(f"gdal_{epsg}.gpkg"), driver="GPKG", layer="cities")
        pyogrio.write_dataframe(df, out(f"gdal_{epsg}.shp"), driver="ESRI Shapefile")
    ls, _ = lines(25832)
    pyogrio.write_dataframe(ls, out("gdal_lines_25832.gpkg"), driver="GPKG", layer="roads")
    pyogrio.write_dataframe(ls, out("gdal_lines_25832.shp"), driver="ESRI Shapefile")
    pyogrio.write_dataframe(ls, out("gdal_lines_25832.fgb"), driver="FlatGeobuf")
    # geopandas: GeoParquet 1.0 with PROJJSON crs in `geo`.
    utm.to_parquet(out("geopandas_25832.parquet"))
    # DuckDB: GeoParquet 2.0 with the CRS only in the Parquet logical type (core DuckDB
    # takes PROJJSON; its spatial extension would write "EPSG:3857").
    pj = pyproj.CRS("EPSG:3857").to_json()
    con = duckdb.connect()
    rows = ", ".join(f"({i + 1}, 'POINT({x!r} {y!r})')" for i, (x, y) in enumerate(zip(merc.geometry.x, merc.geometry.y)))
    con.sql(
        f"COPY (SELECT id, wkt::GEOMETRY('{pj}') AS geom FROM (VALUES {rows}) t(id, wkt) ORDER BY id) "
        f"TO '{out('duckdb_3857.parquet')}' (FORMAT parquet, GEOPARQUET_VERSION 'NONE')"
    )
    # Expected coordinates for the tests (from pyproj, an independent PROJ binding).
    exp = {
        "lonlat": LONLAT,
        "utm25832": [list(p) for p in zip(utm.geometry.x, utm.geometry.y)],
        "merc3857": [list(p) for p in zip(merc.geometry.x, merc.geometry.y)],
    }
    with open(out("expected.json"), "w") as f:
        json.dump(exp, f, indent=1)
    print("pyogrio", pyogrio.__version__, "GDAL", pyogrio.__gdal_version_string__, "geopandas", gpd.__version__,
          "duckdb", duckdb.__version__, "pyproj", pyproj.__version__, "PROJ", pyproj.proj_version_str, file=sys.stderr)


if __name__ == "__main__":
    main()

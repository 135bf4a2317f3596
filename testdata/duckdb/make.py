"""Write the DuckDB GeoParquet files of this directory (issue #32, CRS fidelity).

Run with the test venv (scripts/pyvenv.sh): duckdb 2.0.1, pyproj.
    python testdata/duckdb/make.py testdata/duckdb

DuckDB 2.0's core GEOMETRY type needs no spatial extension (which cannot be installed
offline). `ST_SetCRS(g, 'EPSG:3857')` gives the type GEOMETRY('EPSG:3857'); with
`GEOPARQUET_VERSION 'V2'` DuckDB writes, exactly as DuckDB 1.4 with the spatial extension
does (issue #32), a `geo` key (version 2.0.0) with no `crs` member and the Parquet logical
type Geometry(crs=EPSG:3857): only the logical type states the CRS. OGC:CRS84 is written as
a `geo` key without `crs` (the default) and the full PROJJSON in the logical type.

crs_conflict.parquet: the same rows written by DuckDB with `GEOPARQUET_VERSION 'NONE'`
(logical type EPSG:3857) and a hand-written `geo` key (KV_METADATA) stating EPSG:4326
explicitly - two explicit, different CRSs.
"""
import json
import sys

import duckdb
import pyproj

out = sys.argv[1] if len(sys.argv) > 1 else "."
WKT_3857 = [
    "POINT (-13627361.0 4544761.5)",
    "LINESTRING (-8238310.24 4970071.58, -8236000.5 4971000.25, -8235000 4969000)",
    "POLYGON ((1113194.91 6800125.45, 1224514.4 6800125.45, 1224514.4 6891041.24, 1113194.91 6891041.24, 1113194.91 6800125.45))",
    None,
    "MULTIPOINT ((15000000 -4000000), (15000100.125 -4000100.5))",
]
WKT_CRS84 = [
    "POINT (-122.4194 37.7749)",
    "LINESTRING (-74.006 40.7128, -73.99 40.72, -73.98 40.71)",
    "POLYGON ((10 52, 11 52, 11 52.5, 10 52.5, 10 52))",
    None,
    "MULTIPOINT ((134.75 -33.87), (134.76 -33.88))",
]
c = duckdb.connect()


def table(name, wkts, crs):
    rows = ", ".join(
        f"({i}, {('NULL' if w is None else repr(w))})" for i, w in enumerate(wkts)
    )
    c.execute(f"create or replace table {name} as select id, ST_SetCRS(w::GEOMETRY, $${crs}$$) as geometry "
              f"from (values {rows}) v(id, w) order by id")


table("t3857", WKT_3857, "EPSG:3857")
table("tcrs84", WKT_CRS84, "OGC:CRS84")
c.execute(f"COPY t3857 TO '{out}/v2_epsg3857.parquet' (FORMAT parquet, GEOPARQUET_VERSION 'V2')")
c.execute(f"COPY tcrs84 TO '{out}/v2_crs84.parquet' (FORMAT parquet, GEOPARQUET_VERSION 'V2')")
geo = {
    "version": "1.1.0",
    "primary_column": "geometry",
    "columns": {"geometry": {"encoding": "WKB", "geometry_types": [],
                             "crs": json.loads(pyproj.CRS("EPSG:4326").to_json())}},
}
geo_sql = json.dumps(geo).replace("'", "''")
c.execute(f"COPY t3857 TO '{out}/crs_conflict.parquet' (FORMAT parquet, GEOPARQUET_VERSION 'NONE', "
          f"KV_METADATA {{geo: '{geo_sql}'}})")
print("duckdb", duckdb.__version__, "pyproj", pyproj.__version__, "proj", pyproj.proj_version_str)

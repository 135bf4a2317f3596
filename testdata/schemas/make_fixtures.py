"""Write the files of tests/schemas.rs (issue #22 part 4: schemas kept) with the tools users
have: geopandas (pandas dtypes: nullable Int32 and boolean, categoricals, timestamps),
pyarrow (Overture-like nested columns: structs, maps, lists of structs, nested lists,
dictionaries) and DuckDB (STRUCT, MAP, LIST of STRUCT, ENUM, GEOMETRY). Deterministic.

    ~/.cache/marquet/pyvenv/bin/python testdata/schemas/make_fixtures.py testdata/schemas
"""
import json
import os
import sys

import duckdb
import geopandas as gpd
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import shapely

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(22)

# 1. geopandas: pandas dtypes, polygons and lines in EPSG:3857, one null and one empty
#    geometry (no covering: 1.0.0).
n = 200
x0 = rng.uniform(0, 1_000_000, n).round(1)
y0 = rng.uniform(5_000_000, 6_000_000, n).round(1)
w = rng.uniform(100, 20_000, n).round(1)
geoms = []
for i in range(n):
    if i % 3 == 2:
        geoms.append(shapely.LineString([(x0[i], y0[i]), (x0[i] + w[i], y0[i] + w[i] / 2), (x0[i] + 2 * w[i], y0[i])]))
    else:
        geoms.append(shapely.box(x0[i], y0[i], x0[i] + w[i], y0[i] + w[i] * 1.5))
geoms[7] = None
geoms[11] = shapely.Polygon()  # empty
kinds = ["forest", "lake", "road"]
sizes = pd.CategoricalDtype(["small", "medium", "large"], ordered=True)
grades = pd.CategoricalDtype(["low", "mid", "high"], ordered=True)
df = gpd.GeoDataFrame(
    {
        "count": pd.array([None if i % 10 == 3 else i * 7 - 50 for i in range(n)], dtype="Int32"),
        "flag": pd.array([None if i % 11 == 4 else i % 2 == 0 for i in range(n)], dtype="boolean"),
        "kind": pd.Categorical([None if i % 13 == 5 else kinds[i % 3] for i in range(n)]),
        # Rows meet the sizes in order; the grades out of order (a Parquet dictionary page
        # lists labels as rows meet them, so only the first keeps its order through export).
        "size": pd.Categorical([["small", "medium", "large"][min(i // 70, 2)] for i in range(n)], dtype=sizes),
        "grade": pd.Categorical([["low", "mid", "high"][(i * 5) % 3] for i in range(n)], dtype=grades),
        "seen": pd.to_datetime([1_600_000_000_000_000 + i * 3_600_000_000 for i in range(n)], unit="us", utc=True),
        "name": [f"feature {i}" for i in range(n)],
        "geometry": geoms,
    },
    crs="EPSG:3857",
)
df.to_parquet(os.path.join(out, "geopandas_dtypes.parquet"), schema_version="1.0.0", write_covering_bbox=False)

# 2. pyarrow: Overture-like nested columns (GeoParquet 1.1 written by hand).
m = 6
pts = [shapely.Point(10 + i, 50 + i / 2) for i in range(m)]
names = pa.array(
    [
        {"primary": f"place {i}", "common": None if i == 2 else [("en", f"Place {i}"), ("de", f"Ort {i}")],
         "rules": [{"variant": "short", "value": f"P{i}"}] if i % 2 == 0 else []}
        if i != 4 else None
        for i in range(m)
    ],
    pa.struct([
        ("primary", pa.string()),
        ("common", pa.map_(pa.string(), pa.string())),
        ("rules", pa.list_(pa.struct([("variant", pa.string()), ("value", pa.string())]))),
    ]),
)
sources = pa.array(
    [[{"property": "", "dataset": "OpenStreetMap", "confidence": 0.5 + i / 10}] + ([{"property": "/name", "dataset": "meta", "confidence": None}] if i % 3 == 0 else []) for i in range(m)],
    pa.list_(pa.struct([("property", pa.string()), ("dataset", pa.string()), ("confidence", pa.float64())])),
)
categories = pa.array(
    [{"primary": ["cafe", "park", "shop"][i % 3], "alternate": ["food", "x"] if i % 2 else None} for i in range(m)],
    pa.struct([("primary", pa.string()), ("alternate", pa.list_(pa.string()))]),
)
tags = pa.array([[("height", i * 3), ("levels", i)] if i != 1 else None for i in range(m)], pa.map_(pa.string(), pa.int64()))
grid = pa.array([[[i, i + 1], [i * 2]] if i != 3 else None for i in range(m)], pa.list_(pa.list_(pa.int32())))
klass = pa.array(["a", "b", None, "a", "c", "b"], pa.string()).dictionary_encode()
table = pa.table({
    "id": pa.array([f"id{i}" for i in range(m)]),
    "names": names,
    "sources": sources,
    "categories": categories,
    "tags": tags,
    "grid": grid,
    "class": klass,
    "geometry": pa.array([shapely.to_wkb(p, flavor="iso") for p in pts], pa.binary()),
})
geo = {"version": "1.1.0", "primary_column": "geometry",
       "columns": {"geometry": {"encoding": "WKB", "geometry_types": ["Point"], "bbox": [10.0, 50.0, 15.0, 52.5]}}}
table = table.replace_schema_metadata({"geo": json.dumps(geo)})
pq.write_table(table, os.path.join(out, "pyarrow_nested.parquet"))

# 3. DuckDB: STRUCT, MAP, LIST of STRUCT, ENUM (a plain string in Parquet), GEOMETRY.
path = os.path.join(out, "duckdb_nested.parquet")
con = duckdb.connect()
con.sql("CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')")
con.sql("""
CREATE TABLE t AS SELECT * FROM (VALUES
  (1, 'ok'::mood, {'a': 1, 'b': 'x'}, MAP {'k1': 10, 'k2': 20}, [{'s': 'p', 'v': 1.5}], 'LINESTRING(0 0, 1 1)'::GEOMETRY),
  (2, 'happy'::mood, {'a': 2, 'b': NULL}, MAP {'k3': 30}, [], 'LINESTRING(2 2, 3 5)'::GEOMETRY),
  (3, NULL, NULL, NULL, NULL, 'POLYGON((0 0, 4 0, 4 4, 0 0))'::GEOMETRY)
) v(id, mood, rec, counts, items, geom)
""")
con.sql(f"COPY t TO '{path}' (FORMAT parquet)")
print("wrote", out)

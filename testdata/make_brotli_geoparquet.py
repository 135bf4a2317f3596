"""Write testdata/brotli_geoparquet.parquet: a GeoParquet 1.1 file whose column chunks are
brotli-compressed (pyarrow), read by tests/geoparquet_brotli.rs.

    ~/.cache/marquet/pyvenv/bin/python testdata/make_brotli_geoparquet.py testdata/brotli_geoparquet.parquet
"""
import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import shapely

out = sys.argv[1]
wkts = [
    "POINT (1 2)",
    "LINESTRING (0 0, 10 5, 20 0)",
    "POLYGON ((0 0, 4 0, 4 3, 0 3, 0 0), (1 1, 1 2, 2 2, 2 1, 1 1))",
    None,
    "MULTIPOINT ((-120 35), (-121 36))",
]
geoms = [None if w is None else shapely.from_wkt(w) for w in wkts]
wkb = [None if g is None else shapely.to_wkb(g, flavor="iso", byte_order=1) for g in geoms]
names = ["a", "b", "c", "d", "e"]
table = pa.table({"name": pa.array(names), "value": pa.array([1.5, 2.5, 3.5, 4.5, 5.5]), "geometry": pa.array(wkb, pa.binary())})
valid = [g for g in geoms if g is not None]
xs = [b for g in valid for b in shapely.bounds(g)[0::2]]
ys = [b for g in valid for b in shapely.bounds(g)[1::2]]
geo = {
    "version": "1.1.0",
    "primary_column": "geometry",
    "columns": {
        "geometry": {
            "encoding": "WKB",
            "geometry_types": ["LineString", "MultiPoint", "Point", "Polygon"],
            "bbox": [min(xs), min(ys), max(xs), max(ys)],
        }
    },
}
table = table.replace_schema_metadata({"geo": json.dumps(geo)})
pq.write_table(table, out, compression="brotli")
meta = pq.ParquetFile(out).metadata
codecs = {meta.row_group(0).column(i).compression for i in range(meta.num_columns)}
assert codecs == {"BROTLI"}, codecs
print(out, meta.num_rows, "rows,", codecs)

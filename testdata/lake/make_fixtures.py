"""Generate the lakehouse fixtures of tests/lake.rs (issue #24) with the tools users have.

    python testdata/lake/make_fixtures.py   # needs pyiceberg[sql-sqlite,pyarrow], duckdb, fastavro

- points.csv, parcels.csv, bad_wkt.csv: CSV with lon/lat and WKT columns (Python csv).
- duckdb_ewkb.parquet: DuckDB `COPY ... TO parquet` of a table with an EWKB BLOB column
  (SRID 4326 polygons; DuckDB's spatial extension is not needed for bytes) and a WKT column.
- pyarrow_geojson.parquet: pyarrow, GeoJSON text and EWKB with SRID 3857.
- geomesa.parquet: pyarrow, GeoMesa's Trino layout (geom WKB + __geom_bbox__ REAL row +
  __geom_z2__ hex, hand-computed below from GeoMesa's Z2SFC definition) with one row's
  box rounded to nearest; geomesa_badbox.parquet: one box that misses its point.
- warehouse/: pyiceberg tables written through a local SQL (sqlite) catalog in a temporary
  directory, then copied here (so the readers' re-rooting of moved tables is exercised):
  * db/havasu_ewkb (format-version 2): two appends = two data files; the field property
    `havasu.geometry-encoding: ewkb` added to the schema JSON (pyiceberg cannot set it), and
    Havasu's geom_lower_bounds / geom_upper_bounds (ids 1250 / 1280) added to the manifests
    with fastavro, as WherobotsDB writes them.
  * db/havasu_wkt (format-version 1): a string column with `havasu.geometry-encoding: wkt`.
  * db/v3_geometry (format-version 3): pyiceberg's GeometryType("EPSG:3857").
"""

import csv
import json
import math
import os
import shutil
import struct
import tempfile

import duckdb
import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))


def wkb_point(x, y, srid=None, le=True):
    o = "<" if le else ">"
    t = 1 | (0x20000000 if srid is not None else 0)
    b = struct.pack(o + "BI", 1 if le else 0, t)
    if srid is not None:
        b += struct.pack(o + "I", srid)
    return b + struct.pack(o + "dd", x, y)


def wkb_polygon(ring, srid=None):
    t = 3 | (0x20000000 if srid is not None else 0)
    b = struct.pack("<BI", 1, t)
    if srid is not None:
        b += struct.pack("<I", srid)
    b += struct.pack("<II", 1, len(ring))
    for x, y in ring:
        b += struct.pack("<dd", x, y)
    return b


def square(x, y, d):
    return [(x, y), (x + d, y), (x + d, y + d), (x, y + d), (x, y)]


def wkt_polygon(ring):
    return "POLYGON ((" + ", ".join(f"{x:g} {y:g}" for x, y in ring) + "))"


def z2_hex(lon, lat):
    # GeoMesa Z2SFC: 31 bits per axis, floor((v - min) * 2^31 / (max - min)), x in the even
    # bits; the Trino column is the 16-hex-digit value of z << 2.
    def norm(v, lo, hi):
        bins = 1 << 31
        return bins - 1 if v >= hi else math.floor((v - lo) * (bins / (hi - lo)))

    def split(v):
        return sum(((v >> b) & 1) << (2 * b) for b in range(31))

    z = split(norm(lon, -180, 180)) | split(norm(lat, -90, 90)) << 1
    return f"{z << 2:016x}"


def write_csvs():
    with open(os.path.join(HERE, "points.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["id", "name", "lon", "lat", "pop"])
        for i in range(20):
            w.writerow([i, f"p{i}", -10 + i * 1.5, 40 + i * 0.5, i * 1000])
        w.writerow([20, "no coordinates", "", "", 0])
    with open(os.path.join(HERE, "parcels.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["parcel", "area", "wkt"])
        for i in range(12):
            w.writerow([f"P{i}", 4.0, wkt_polygon(square(i * 3, i, 2))])
        w.writerow(["P-empty", 0.0, ""])
        w.writerow(["P-geojson-like", 1.0, "MULTIPOINT ((1 1), (2 2))"])
    with open(os.path.join(HERE, "bad_wkt.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["k", "wkt"])
        w.writerow([0, "POINT (1 2)"])
        w.writerow([1, "POINT (3 4)"])
        w.writerow([2, "POLYGON ((0 0, 1 0"])
        w.writerow([3, "POINT (5 6)"])


def write_parquets():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (id INTEGER, label VARCHAR, geom BLOB, wkt VARCHAR)")
    for i in range(10):
        ring = square(10 + i, 50 - i, 0.5)
        con.execute("INSERT INTO t VALUES (?, ?, ?, ?)", [i, f"l{i}", wkb_polygon(ring, 4326), wkt_polygon(ring)])
    con.execute("INSERT INTO t VALUES (10, 'null geometry', NULL, NULL)")
    con.execute(f"COPY t TO '{os.path.join(HERE, 'duckdb_ewkb.parquet')}' (FORMAT parquet)")

    gj = [json.dumps({"type": "Point", "coordinates": [i * 0.25, -i * 0.5]}) for i in range(8)]
    merc = [wkb_point(1000.0 * i, 2000.0 * i, 3857, le=(i % 2 == 0)) for i in range(8)]
    pq.write_table(pa.table({"n": list(range(8)), "gj": gj, "merc": pa.array(merc, pa.binary())}), os.path.join(HERE, "pyarrow_geojson.parquet"))

    pts = [(-77.0 + i * 0.01, 38.9 + i * 0.013) for i in range(16)]
    bbox_t = pa.struct([(n, pa.float32()) for n in ("xmin", "ymin", "xmax", "ymax")])

    def f32(v):  # round to the nearest float32
        return struct.unpack("<f", struct.pack("<f", v))[0]

    def step(f, toward):  # the next float32 after f toward +1/-1 (f finite, nonzero)
        bits = struct.unpack("<i", struct.pack("<f", f))[0]
        bits += toward if f > 0 else -toward
        return struct.unpack("<f", struct.pack("<i", bits))[0]

    def down(v):  # the largest float32 <= v
        f = f32(v)
        return f if f <= v else step(f, -1)

    def up(v):  # the smallest float32 >= v
        f = f32(v)
        return f if f >= v else step(f, 1)

    boxes = [{"xmin": down(x), "ymin": down(y), "xmax": up(x), "ymax": up(y)} for x, y in pts]
    # Row 3: rounded to nearest instead of outward (what a writer casting double -> REAL does).
    x, y = pts[3]
    boxes[3] = {"xmin": x, "ymin": y, "xmax": x, "ymax": y}
    tab = pa.table(
        {
            "fid": [f"f{i}" for i in range(16)],
            "geom": pa.array([wkb_point(x, y) for x, y in pts], pa.binary()),
            "__geom_bbox__": pa.array(boxes, bbox_t),
            "__geom_z2__": [z2_hex(x, y) for x, y in pts],
            "speed": [float(i) for i in range(16)],
        }
    )
    pq.write_table(tab, os.path.join(HERE, "geomesa.parquet"))
    bad = list(boxes)
    bad[5] = {"xmin": 0.0, "ymin": 0.0, "xmax": 1.0, "ymax": 1.0}
    pq.write_table(tab.set_column(2, "__geom_bbox__", pa.array(bad, bbox_t)), os.path.join(HERE, "geomesa_badbox.parquet"))


def add_havasu_property(table_dir, column, encoding):
    mdir = os.path.join(table_dir, "metadata")
    for name in os.listdir(mdir):
        if not name.endswith(".metadata.json"):
            continue
        p = os.path.join(mdir, name)
        with open(p) as f:
            meta = json.load(f)
        schemas = meta.get("schemas", []) + ([meta["schema"]] if "schema" in meta else [])
        for s in schemas:
            for fld in s["fields"]:
                if fld["name"] == column:
                    fld["havasu.geometry-encoding"] = encoding
        with open(p, "w") as f:
            json.dump(meta, f, indent=1)


def add_havasu_bounds(table_dir, field_id, boxes_by_file):
    """Rewrite the manifests with Havasu's geom_lower_bounds / geom_upper_bounds."""
    mdir = os.path.join(table_dir, "metadata")
    for name in os.listdir(mdir):
        if name.startswith("snap-") or not name.endswith(".avro"):
            continue
        p = os.path.join(mdir, name)
        with open(p, "rb") as f:
            r = fastavro.reader(f)
            schema = r.writer_schema
            meta = dict(r.metadata)
            recs = list(r)
        df = next(fl for fl in schema["fields"] if fl["name"] == "data_file")
        dfs = df["type"]
        for fid, nm in ((1250, "geom_lower_bounds"), (1280, "geom_upper_bounds")):
            if any(fl["name"] == nm for fl in dfs["fields"]):
                continue
            kv = {"type": "record", "name": f"k{fid}_v{fid}", "fields": [
                {"name": "key", "type": "int", "field-id": fid + 10},
                {"name": "value", "type": "bytes", "field-id": fid + 20}]}
            dfs["fields"].append({"name": nm, "type": ["null", {"type": "array", "items": kv, "logicalType": "map"}], "default": None, "field-id": fid})
        for rec in recs:
            path = rec["data_file"]["file_path"]
            b = next(v for k, v in boxes_by_file.items() if k in path)
            rec["data_file"]["geom_lower_bounds"] = [{"key": field_id, "value": wkb_point(b[0], b[1])}]
            rec["data_file"]["geom_upper_bounds"] = [{"key": field_id, "value": wkb_point(b[2], b[3])}]
        keep = {k: v for k, v in meta.items() if not k.startswith("avro.")}
        with open(p, "wb") as f:
            fastavro.writer(f, schema, recs, codec="deflate", metadata=keep)


def write_iceberg():
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.schema import Schema
    from pyiceberg.types import BinaryType, GeometryType, LongType, NestedField, StringType

    tmp = tempfile.mkdtemp()
    wh = os.path.join(tmp, "warehouse")
    os.makedirs(wh)
    cat = SqlCatalog("lake", uri=f"sqlite:///{tmp}/catalog.db", warehouse=f"file://{wh}")
    cat.create_namespace("db")

    # Havasu EWKB, format-version 2, two data files far apart.
    schema = Schema(NestedField(1, "id", LongType(), required=False), NestedField(2, "name", StringType(), required=False),
                    NestedField(3, "geom", BinaryType(), required=False))
    t = cat.create_table("db.havasu_ewkb", schema=schema, properties={"format-version": "2"})
    arrow_schema = pa.schema([pa.field("id", pa.int64()), pa.field("name", pa.string()), pa.field("geom", pa.binary())])
    west = [wkb_point(-100 + i, 40 + i * 0.1, 4326) for i in range(5)]
    east = [wkb_point(100 + i, -30 - i * 0.1, 4326) for i in range(7)]
    t.append(pa.table({"id": list(range(5)), "name": [f"w{i}" for i in range(5)], "geom": west}, schema=arrow_schema))
    t.append(pa.table({"id": list(range(5, 12)), "name": [f"e{i}" for i in range(7)], "geom": east}, schema=arrow_schema))
    tdir = os.path.join(wh, "db", "havasu_ewkb")
    files = [f.file.file_path for f in t.scan().plan_files()]
    bounds = {}
    for fp in files:
        rows = pq.read_table(fp.replace("file://", "")).column("id").to_pylist()
        bounds[os.path.basename(fp)] = (-100, 40, -96, 40.4) if max(rows) < 5 else (100, -30.6, 106, -30)
    add_havasu_bounds(tdir, 3, bounds)
    add_havasu_property(tdir, "geom", "ewkb")

    # Havasu WKT, format-version 1.
    schema = Schema(NestedField(1, "k", LongType(), required=False), NestedField(2, "shape", StringType(), required=False))
    t = cat.create_table("db.havasu_wkt", schema=schema, properties={"format-version": "1"})
    shapes = [wkt_polygon(square(i, i, 1)) for i in range(6)] + ["LINESTRING (0 0, 5 5)"]
    t.append(pa.table({"k": list(range(7)), "shape": shapes}, schema=pa.schema([pa.field("k", pa.int64()), pa.field("shape", pa.string())])))
    add_havasu_property(os.path.join(wh, "db", "havasu_wkt"), "shape", "wkt")

    # Iceberg v3 geometry with a CRS. pyiceberg 0.12 creates v3 tables with GeometryType but
    # does not write their data (iceberg-python#1551): the data is appended to a v2 table with
    # a binary column, whose metadata is then raised to format-version 3 with the column's
    # type `geometry(EPSG:3857)` — the JSON a v3 writer produces for that schema.
    v3 = Schema(NestedField(1, "k", LongType(), required=False), NestedField(2, "g", GeometryType("EPSG:3857"), required=False))
    geom_type = None
    try:
        probe = cat.create_table("db.v3_probe", schema=v3, properties={"format-version": "3"})
        geom_type = [f for f in json.loads(probe.metadata.model_dump_json())["schemas"][0]["fields"] if f["name"] == "g"][0]["type"]
        cat.drop_table("db.v3_probe")
    except Exception as e:
        print("pyiceberg cannot create v3 geometry tables:", e)
    geom_type = geom_type or "geometry(EPSG:3857)"
    schema = Schema(NestedField(1, "k", LongType(), required=False), NestedField(2, "g", BinaryType(), required=False))
    t = cat.create_table("db.v3_geometry", schema=schema, properties={"format-version": "2"})
    t.append(pa.table({"k": [0, 1, 2], "g": pa.array([wkb_point(1e5 * i, 2e5 * i) for i in range(3)], pa.binary())},
                      schema=pa.schema([pa.field("k", pa.int64()), pa.field("g", pa.binary())])))
    mdir = os.path.join(wh, "db", "v3_geometry", "metadata")
    for name in os.listdir(mdir):
        if name.endswith(".metadata.json"):
            p = os.path.join(mdir, name)
            with open(p) as f:
                meta = json.load(f)
            meta["format-version"] = 3
            meta.setdefault("next-row-id", 0)
            for sc in meta["schemas"]:
                for fld in sc["fields"]:
                    if fld["name"] == "g":
                        fld["type"] = geom_type
            with open(p, "w") as f:
                json.dump(meta, f, indent=1)

    out = os.path.join(HERE, "warehouse")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(wh, out, ignore=shutil.ignore_patterns("v3_probe"))
    shutil.rmtree(tmp)


if __name__ == "__main__":
    write_csvs()
    write_parquets()
    write_iceberg()

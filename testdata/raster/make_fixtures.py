"""Generate the Havasu raster fixtures of tests/raster.rs (issue #37).

    python testdata/raster/make_fixtures.py   # needs numpy, pyarrow, pyproj, fastavro

Written directly from the field tables of the Havasu spec ("Spatial Extensions for Apache
Iceberg Tables", /work/shared/spec/related/havasu-iceberg-spatial.txt, "Parquet Data Type
Mappings"): no Havasu writer is involved.

- rasters.parquet: one `rast` column (the `v1` group: width, height, num_bands, crs_wkt,
  geo_reference{scale_x, scale_y, skew_x, skew_y, upperleft_x, upperleft_y}, band_1..band_4,
  repeated `bands`; a band is pixel_type, no_data, data, out_db_band_no, out_db_url) plus
  `name` and `scene_id`. Pixels from numpy (seeded) over each type's whole range. Rows:
  every pixel type (PT_8BSI .. PT_64BF), a raster of 6 bands (> 4) mixing in-db and out-db
  bands, an all-out-db raster, a null raster, a raster without CRS, a rotated (skewed)
  raster, and CRSs EPSG:4326, 32633 (UTM), 3857, 3413 (polar stereographic holding the
  north pole) and 32660 (UTM 60N, crossing the antimeridian).
- extents.json: per row, the raster's true outline in lon/lat — its pixel-corner outline
  densified with 100 points per edge (rounded to 1e-10 degrees) and projected with pyproj (plus the pole when the
  raster holds it) — which every footprint must contain.
- warehouse/db/havasu_raster: an Iceberg format-version 2 table of the same rows in three
  data files (Europe / the pole / the antimeridian). The schema marks `rast` with
  `havasu.raster-encoding: "v1"` on an empty struct; the manifests (fastavro, with the
  manifest schemas of ../lake/warehouse/db/havasu_ewkb, which pyiceberg wrote) carry the
  raster bounds as geom_lower_bounds / geom_upper_bounds (ids 1250 / 1280): WKB points of
  the union of the rows' WGS84 MBRs (pyproj transform_bounds, densify 21; xmin > xmax
  across the antimeridian).
"""

import json
import math
import os
import shutil
import struct
import uuid

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pyproj import CRS, Transformer

HERE = os.path.dirname(os.path.abspath(__file__))
LAKE = os.path.join(HERE, "..", "lake", "warehouse", "db", "havasu_ewkb", "metadata")

PT = {"i1": 3, "u1": 4, "<i2": 5, "<u2": 6, "<i4": 7, "<u4": 8, "<f4": 10, "<f8": 11}

rng = np.random.default_rng(37)


def pixels(dtype, n):
    dt = np.dtype(dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        v = rng.integers(info.min, info.max, size=n, dtype=dt, endpoint=True)
        v[:2] = [info.min, info.max]
        return v
    v = rng.normal(0, 1e3, size=n).astype(dt)
    v[:4] = [np.nan, np.inf, -0.0, np.finfo(dt).max]
    return v


def band(dtype, w, h, nodata=None, out_db=None):
    dt = np.dtype(dtype).newbyteorder("<")
    nd = None if nodata is None else np.array([nodata], dtype=dt).tobytes()
    if out_db is not None:
        url, no = out_db
        return {"pixel_type": PT[dt.str if dt.itemsize > 1 else dt.str[1:]], "no_data": nd, "data": None, "out_db_band_no": no, "out_db_url": url}
    return {"pixel_type": PT[dt.str if dt.itemsize > 1 else dt.str[1:]], "no_data": nd, "data": pixels(dt, w * h).tobytes(), "out_db_band_no": None, "out_db_url": None}


def raster(w, h, epsg, geo, bands):
    r = {
        "width": w,
        "height": h,
        "num_bands": len(bands),
        "crs_wkt": None if epsg is None else CRS.from_epsg(epsg).to_wkt(),
        "geo_reference": dict(zip(["scale_x", "scale_y", "skew_x", "skew_y", "upperleft_x", "upperleft_y"], geo)),
    }
    for k in range(4):
        r[f"band_{k + 1}"] = bands[k] if k < len(bands) else None
    r["bands"] = bands[4:] if len(bands) > 4 else None
    return r


ROWS = []  # (name, scene_id, epsg, raster or None, file group)


def add(name, epsg, r, group):
    ROWS.append((name, len(ROWS) * 10 + 1, epsg, r, group))


# Europe (file 0)
add("utm33_int16", 32633, raster(7, 5, 32633, [30.0, -30.0, 0.0, 0.0, 500015.0, 5000015.0], [band("<i2", 7, 5, -9999) for _ in range(3)]), 0)
add("wgs84_uint8", 4326, raster(6, 4, 4326, [0.25, -0.25, 0.0, 0.0, 12.125, 48.875], [band("u1", 6, 4, 0)]), 0)
add("null", None, None, 0)
add("mercator_6_bands_mixed", 3857, raster(5, 3, 3857, [100.0, -100.0, 0.0, 0.0, 1113194.9, 6446275.8], [
    band("<f4", 5, 3, float("nan")),
    band("<f4", 5, 3, float("nan")),
    band("<f4", 5, 3, None, out_db=("s3://bucket/scenes/a.tif", 2)),
    band("<f4", 5, 3, float("nan")),
    band("<f4", 5, 3, float("nan")),
    band("<f4", 5, 3, float("nan")),
]), 0)
add("int8", 4326, raster(3, 2, 4326, [0.5, -0.5, 0.0, 0.0, 10.25, 50.75], [band("i1", 3, 2, -128)]), 0)
add("uint16", 4326, raster(4, 3, 4326, [0.1, -0.1, 0.0, 0.0, 11.05, 45.95], [band("<u2", 4, 3, 65535), band("<u2", 4, 3, None)]), 0)
add("int32", 32633, raster(3, 3, 32633, [10.0, -10.0, 0.0, 0.0, 400005.0, 5200005.0], [band("<i4", 3, 3, None)]), 0)
add("uint32", 4326, raster(2, 2, 4326, [1.0, -1.0, 0.0, 0.0, 20.5, 40.5], [band("<u4", 2, 2, 4294967295)]), 0)
add("float64_rotated", 32633, raster(4, 4, 32633, [20.0, -20.0, 5.0, 3.0, 600010.0, 5100010.0], [band("<f8", 4, 4, -1e300)]), 0)
add("all_out_db", 32633, raster(100, 100, 32633, [10.0, -10.0, 0.0, 0.0, 450005.0, 5050005.0], [
    band("<u2", 100, 100, 0, out_db=("https://example.com/cog.tif", 0)),
    band("<u2", 100, 100, 0, out_db=("https://example.com/cog2.tif", 1)),
]), 0)
add("no_crs", None, raster(2, 2, None, [1.0, -1.0, 0.0, 0.0, 0.5, 1.5], [band("u1", 2, 2, None)]), 0)
# The north pole (file 1): polar stereographic, a grid around (0, 0).
add("arctic_pole", 3413, raster(8, 8, 3413, [250000.0, -250000.0, 0.0, 0.0, -875000.0, 875000.0], [band("<f4", 8, 8, -1.0)]), 1)
# The antimeridian (file 2): UTM 60N, eastings far enough east to pass 180°E.
add("antimeridian", 32660, raster(10, 6, 32660, [20000.0, -20000.0, 0.0, 0.0, 610000.0, 6700000.0], [band("<i2", 10, 6, None)]), 2)


def outline(r, epsg, n=100):
    """The raster's pixel-corner outline in lon/lat (densified), and the poles it holds."""
    g = r["geo_reference"]
    w, h = r["width"], r["height"]

    def world(c, rr):
        return (g["upperleft_x"] + c * g["scale_x"] + rr * g["skew_x"], g["upperleft_y"] + c * g["skew_y"] + rr * g["scale_y"])

    corners = [(-0.5, -0.5), (w - 0.5, -0.5), (w - 0.5, h - 0.5), (-0.5, h - 0.5), (-0.5, -0.5)]
    pts = []
    for (c0, r0), (c1, r1) in zip(corners, corners[1:]):
        for k in range(n):
            t = k / n
            pts.append(world(c0 + (c1 - c0) * t, r0 + (r1 - r0) * t))
    tr = Transformer.from_crs(CRS.from_epsg(epsg), "OGC:CRS84", always_xy=True)
    xs, ys = tr.transform([p[0] for p in pts], [p[1] for p in pts])
    out = [[round(x, 10), round(y, 10)] for x, y in zip(xs, ys)]
    # A pole inside: the raster holds it (grid position of the pole within the grid).
    back = Transformer.from_crs("OGC:CRS84", CRS.from_epsg(epsg), always_xy=True)
    for lat in (90.0, -90.0):
        try:
            px, py = back.transform(0.0, lat)
        except Exception:
            continue
        if not (math.isfinite(px) and math.isfinite(py)):
            continue
        a, b, c, d = g["scale_x"], g["skew_x"], g["skew_y"], g["scale_y"]
        det = a * d - b * c
        col = (d * (px - g["upperleft_x"]) - b * (py - g["upperleft_y"])) / det
        row = (-c * (px - g["upperleft_x"]) + a * (py - g["upperleft_y"])) / det
        if -0.5 <= col <= w - 0.5 and -0.5 <= row <= h - 0.5:
            out.append([0.0, lat])
    return out


def mbr(r, epsg):
    """WherobotsDB-style raster bounds: the native envelope to WGS84 (pyproj transform_bounds)."""
    g = r["geo_reference"]
    w, h = r["width"], r["height"]
    pts = [(-0.5, -0.5), (w - 0.5, -0.5), (w - 0.5, h - 0.5), (-0.5, h - 0.5)]
    xs = [g["upperleft_x"] + c * g["scale_x"] + rr * g["skew_x"] for c, rr in pts]
    ys = [g["upperleft_y"] + c * g["skew_y"] + rr * g["scale_y"] for c, rr in pts]
    tr = Transformer.from_crs(CRS.from_epsg(epsg), "OGC:CRS84", always_xy=True)
    return tr.transform_bounds(min(xs), min(ys), max(xs), max(ys), densify_pts=21)


def band_type():
    return pa.struct([
        pa.field("pixel_type", pa.int32(), nullable=False),
        pa.field("no_data", pa.binary()),
        pa.field("data", pa.binary()),
        pa.field("out_db_band_no", pa.int32()),
        pa.field("out_db_url", pa.string()),
    ])


def raster_type():
    geo = pa.struct([pa.field(n, pa.float64(), nullable=False) for n in ["scale_x", "scale_y", "skew_x", "skew_y", "upperleft_x", "upperleft_y"]])
    return pa.struct([
        pa.field("width", pa.int32(), nullable=False),
        pa.field("height", pa.int32(), nullable=False),
        pa.field("num_bands", pa.int32(), nullable=False),
        pa.field("crs_wkt", pa.string()),
        pa.field("geo_reference", geo, nullable=False),
        pa.field("band_1", band_type()),
        pa.field("band_2", band_type()),
        pa.field("band_3", band_type()),
        pa.field("band_4", band_type()),
        pa.field("bands", pa.list_(pa.field("element", band_type(), nullable=False))),
    ])


def schema(ids=False):
    def f(name, t, i):
        return pa.field(name, t, metadata={"PARQUET:field_id": str(i)} if ids else None)

    return pa.schema([f("name", pa.string(), 1), f("scene_id", pa.int64(), 2), f("rast", raster_type(), 3)])


def table(rows, ids=False):
    return pa.table({"name": [r[0] for r in rows], "scene_id": [r[1] for r in rows], "rast": [r[3] for r in rows]}, schema=schema(ids))


def wkb_point(x, y):
    return struct.pack("<BIdd", 1, 1, x, y)


def union(boxes):
    crossing = [b for b in boxes if b[0] > b[2]]
    if crossing:
        assert len(boxes) == 1, "one crossing box per file keeps the union simple"
        return boxes[0]
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


def iceberg(root):
    loc = "file:///warehouse/db/havasu_raster"  # moved: the reader re-roots it
    tdir = os.path.join(root, "db", "havasu_raster")
    shutil.rmtree(tdir, ignore_errors=True)
    os.makedirs(os.path.join(tdir, "data"))
    os.makedirs(os.path.join(tdir, "metadata"))
    tmpl_list = [f for f in os.listdir(LAKE) if f.startswith("snap-")][0]
    tmpl_man = [f for f in os.listdir(LAKE) if f.endswith("-m0.avro")][0]
    with open(os.path.join(LAKE, tmpl_list), "rb") as fh:
        list_schema = fastavro.reader(fh).writer_schema
    with open(os.path.join(LAKE, tmpl_man), "rb") as fh:
        rd = fastavro.reader(fh)
        man_schema = rd.writer_schema
        man_meta = {k: v for k, v in rd.metadata.items() if not k.startswith("avro.")}
    snap = 3737373737373737373
    ice_schema = {
        "type": "struct",
        "schema-id": 0,
        "identifier-field-ids": [],
        "fields": [
            {"id": 1, "name": "name", "type": "string", "required": False},
            {"id": 2, "name": "scene_id", "type": "long", "required": False},
            {"id": 3, "name": "rast", "type": {"type": "struct", "fields": []}, "required": False, "havasu.raster-encoding": "v1"},
        ],
    }
    entries = []
    bounds = {}
    for grp in (0, 1, 2):
        rows = [r for r in ROWS if r[4] == grp]
        name = f"0000{grp}-0-{uuid.UUID(int=grp + 1)}.parquet"
        path = os.path.join(tdir, "data", name)
        pq.write_table(table(rows, ids=True), path)
        boxes = [mbr(r[3], r[2]) for r in rows if r[3] is not None and r[2] is not None]
        b = union(boxes)
        bounds[grp] = b
        entries.append({
            "status": 1,
            "snapshot_id": snap,
            "sequence_number": None,
            "file_sequence_number": None,
            "data_file": {
                "content": 0,
                "file_path": f"{loc}/data/{name}",
                "file_format": "PARQUET",
                "partition": {},
                "record_count": len(rows),
                "file_size_in_bytes": os.path.getsize(path),
                "column_sizes": None,
                "value_counts": None,
                "null_value_counts": None,
                "nan_value_counts": None,
                "lower_bounds": None,
                "upper_bounds": None,
                "key_metadata": None,
                "split_offsets": None,
                "equality_ids": None,
                "sort_order_id": None,
                "geom_lower_bounds": [{"key": 3, "value": wkb_point(b[0], b[1])}],
                "geom_upper_bounds": [{"key": 3, "value": wkb_point(b[2], b[3])}],
            },
        })
    man_name = f"{uuid.UUID(int=99)}-m0.avro"
    man_meta["schema"] = json.dumps({k: v for k, v in ice_schema.items()})
    with open(os.path.join(tdir, "metadata", man_name), "wb") as fh:
        fastavro.writer(fh, man_schema, entries, metadata=man_meta, codec="null")
    list_name = f"snap-{snap}-0-{uuid.UUID(int=99)}.avro"
    with open(os.path.join(tdir, "metadata", list_name), "wb") as fh:
        fastavro.writer(fh, list_schema, [{
            "manifest_path": f"{loc}/metadata/{man_name}",
            "manifest_length": os.path.getsize(os.path.join(tdir, "metadata", man_name)),
            "partition_spec_id": 0,
            "content": 0,
            "sequence_number": 1,
            "min_sequence_number": 1,
            "added_snapshot_id": snap,
            "added_files_count": len(entries),
            "existing_files_count": 0,
            "deleted_files_count": 0,
            "added_rows_count": len(ROWS),
            "existing_rows_count": 0,
            "deleted_rows_count": 0,
            "partitions": [],
            "key_metadata": None,
        }], metadata={"format-version": "2", "snapshot-id": str(snap), "sequence-number": "1"}, codec="null")
    meta = {
        "format-version": 2,
        "table-uuid": str(uuid.UUID(int=37)),
        "location": loc,
        "last-sequence-number": 1,
        "last-updated-ms": 1796188870000,
        "last-column-id": 3,
        "current-schema-id": 0,
        "schemas": [ice_schema],
        "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}],
        "last-partition-id": 999,
        "default-sort-order-id": 0,
        "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {"havasu.format-version": "0.1.0"},
        "current-snapshot-id": snap,
        "refs": {"main": {"snapshot-id": snap, "type": "branch"}},
        "snapshots": [{
            "snapshot-id": snap,
            "sequence-number": 1,
            "timestamp-ms": 1796188870000,
            "manifest-list": f"{loc}/metadata/{list_name}",
            "summary": {"operation": "append"},
            "schema-id": 0,
        }],
        "snapshot-log": [],
        "metadata-log": [],
    }
    with open(os.path.join(tdir, "metadata", "v1.metadata.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
    with open(os.path.join(tdir, "metadata", "version-hint.text"), "w") as fh:
        fh.write("1")
    return bounds


def main():
    pq.write_table(table(ROWS), os.path.join(HERE, "rasters.parquet"))
    ext = {}
    for name, sid, epsg, r, grp in ROWS:
        if r is not None and epsg is not None:
            ext[name] = outline(r, epsg)
    bounds = iceberg(os.path.join(HERE, "warehouse"))
    with open(os.path.join(HERE, "extents.json"), "w") as fh:
        json.dump({"outlines": ext, "file_bounds": {str(k): list(v) for k, v in bounds.items()}}, fh)
    print("rows", len(ROWS), "file bounds", bounds)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Cross-format comparison, the Python half (issue #10). Run it through
`bash scripts/bench-compare.sh [--quick]`, which first runs `marquet bench`.

`marquet bench --out WORK` leaves in WORK the seeded synthetic data in a neutral raw form
(`points.wkb` + `points.offsets`, `polygons.wkb` + `polygons.offsets`: little-endian ISO WKB
values back to back and n+1 little-endian u64 offsets; row i has id i; `windows.txt`) and
its own measurements with the ids each window matched (`marquet.json`). This script
measures, on the same data and windows:

* GeoParquet 1.1 (pyarrow): WKB, zstd, a `bbox` covering column, rows Hilbert-sorted by
  box centre, 65,536-row row groups; queries prune row groups by the covering column's
  statistics, then rows by the covering column;
* FlatGeobuf (GDAL through pyogrio) with its packed R-tree;
* GeoPackage (GDAL through pyogrio) with its R-tree;

each for: write time, file size, full read to WKB (`id` + geometry), and one query per
window with the file opened afresh and the answer returned as WKB. Every answer is
finished with the exact `intersects` test Marquet's query applies (for points: the closed
box; for polygons: shapely), which also makes the count right where GDAL's Arrow reader
of FlatGeobuf returns an unfiltered 65,536-row batch for a window that matches nothing
(GDAL 3.12). Every format must return exactly Marquet's ids for every window, else the
script exits with status 1.

It prints absolute medians and ratios Marquet / other, checks the issue #10 targets, and
writes everything to the JSON file given with --json.

Issue #20 (cold and warm): when WORK holds `anchor.json` (written by `marquet bench`, which
measured Marquet and native FlatGeobuf through the `flatgeobuf` crate in four modes: cold =
file opened per window, warm = opened once; answer as a count or as ids + WKB), GeoParquet
is measured in the same four modes (warm: the `ParquetFile`, its footer and the covering
column's row-group statistics read once), every answer checked against Marquet's ids, and
the cold / warm table with the issue #20 targets is printed.
"""

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pyogrio
import shapely

FORMATS = ["marquet", "geoparquet", "flatgeobuf", "geopackage"]
DATASETS = ["points", "polygons"]
GEOM_TYPE = {"points": "Point", "polygons": "Polygon"}
ROW_GROUP_ROWS = 65_536
EXT = {"geoparquet": "parquet", "flatgeobuf": "fgb", "geopackage": "gpkg"}
CRS = "OGC:CRS84"


# ---------------------------------------------------------------------------- raw data
def load_raw(work, name):
    """The ids (int64 0..n) and WKB (pyarrow binary) that `marquet bench` wrote."""
    data = np.fromfile(work / f"{name}.wkb", dtype=np.uint8)
    offs = np.fromfile(work / f"{name}.offsets", dtype="<u8").astype(np.int64)
    n = len(offs) - 1
    if n < 0 or offs[0] != 0 or offs[-1] != len(data) or np.any(np.diff(offs) <= 0):
        sys.exit(f"{work / name}.offsets: not {n} increasing offsets into {len(data)} bytes")
    wkb = pa.LargeBinaryArray.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offs), pa.py_buffer(data)])
    return pa.array(np.arange(n, dtype=np.int64)), wkb.cast(pa.binary())


def load_windows(work):
    ws = []
    for line in (work / "windows.txt").read_text().splitlines():
        if line.strip():
            ws.append(tuple(float(v) for v in line.split(",")))
    return ws


# ---------------------------------------------------------------------------- geometry helpers
def point_xy(wkb):
    """x, y of little-endian 2-D point WKB (21 bytes each) without parsing objects;
    None when the values are not all of that form."""
    wkb = pa.array(wkb) if not isinstance(wkb, (pa.Array, pa.ChunkedArray)) else wkb
    if isinstance(wkb, pa.ChunkedArray):
        wkb = wkb.combine_chunks() if wkb.num_chunks != 1 else wkb.chunk(0)
    n = len(wkb)
    if n == 0:
        return np.empty(0), np.empty(0)
    if wkb.null_count:
        return None
    if pa.types.is_large_binary(wkb.type):
        offs = np.frombuffer(wkb.buffers()[1], dtype="<i8")[wkb.offset: wkb.offset + n + 1]
    else:
        offs = np.frombuffer(wkb.buffers()[1], dtype="<i4")[wkb.offset: wkb.offset + n + 1]
    if not np.all(np.diff(offs) == 21):
        return None
    data = np.frombuffer(wkb.buffers()[2], dtype=np.uint8)[offs[0]: offs[0] + 21 * n].reshape(n, 21)
    if not (np.all(data[:, 0] == 1) and np.all(data[:, 1:5] == np.array([1, 0, 0, 0], dtype=np.uint8))):
        return None
    x = np.ascontiguousarray(data[:, 5:13]).view("<f8").ravel()
    y = np.ascontiguousarray(data[:, 13:21]).view("<f8").ravel()
    return x, y


def exact_mask(wkb, window, dataset):
    """Rows whose geometry intersects the closed window box (Marquet's `Intersects`)."""
    x0, y0, x1, y1 = window
    wkb = plain(wkb)
    if dataset == "points":
        xy = point_xy(wkb)
        if xy is not None:
            x, y = xy
            return (x >= x0) & (x <= x1) & (y >= y0) & (y <= y1)
    # on_invalid="ignore": GDAL 3.12's FlatGeobuf Arrow reader can hand back rows that are not
    # WKB for a window that matches nothing; they match nothing.
    geoms = shapely.from_wkb(np.asarray(wkb.to_numpy(zero_copy_only=False), dtype=object), on_invalid="ignore")
    return shapely.intersects(geoms, shapely.box(x0, y0, x1, y1))


def boxes(wkb, dataset):
    """xmin, ymin, xmax, ymax of every value (what a GeoParquet writer computes)."""
    if dataset == "points":
        xy = point_xy(wkb)
        if xy is not None:
            return xy[0], xy[1], xy[0], xy[1]
    b = shapely.bounds(shapely.from_wkb(np.asarray(wkb.to_numpy(zero_copy_only=False), dtype=object)))
    return b[:, 0], b[:, 1], b[:, 2], b[:, 3]


def hilbert_index(x, y, order=16):
    """Hilbert distance of integer cells x, y in [0, 2**order): the xy2d algorithm
    (Wikipedia "Hilbert curve"), vectorized with numpy; written here because pyarrow has
    none and geopandas' needs GeoSeries objects."""
    n = np.int64(1 << order)
    x = x.astype(np.int64).copy()
    y = y.astype(np.int64).copy()
    d = np.zeros(len(x), dtype=np.int64)
    s = n // 2
    while s > 0:
        rx = (x & s) > 0
        ry = (y & s) > 0
        d += s * s * ((3 * rx.astype(np.int64)) ^ ry.astype(np.int64))
        flip = (~ry) & rx
        x = np.where(flip, n - 1 - x, x)
        y = np.where(flip, n - 1 - y, y)
        swap = ~ry
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        s //= 2
    return d


def hilbert_order(xmin, ymin, xmax, ymax):
    cx, cy = (xmin + xmax) / 2, (ymin + ymax) / 2
    ex0, ey0, ex1, ey1 = xmin.min(), ymin.min(), xmax.max(), ymax.max()
    scale = (1 << 16) - 1
    gx = np.clip((cx - ex0) / max(ex1 - ex0, 1e-300) * scale, 0, scale)
    gy = np.clip((cy - ey0) / max(ey1 - ey0, 1e-300) * scale, 0, scale)
    return np.argsort(hilbert_index(gx, gy), kind="stable"), [float(ex0), float(ey0), float(ex1), float(ey1)]


# ---------------------------------------------------------------------------- GeoParquet
def gp_write(path, ids, wkb, dataset):
    xmin, ymin, xmax, ymax = boxes(wkb, dataset)
    order, extent = hilbert_order(xmin, ymin, xmax, ymax)
    idx = pa.array(order)
    bbox = pa.StructArray.from_arrays(
        [pa.array(v[order]) for v in (xmin, ymin, xmax, ymax)], names=["xmin", "ymin", "xmax", "ymax"]
    )
    geo = {
        "version": "1.1.0",
        "primary_column": "geometry",
        "columns": {
            "geometry": {
                "encoding": "WKB",
                "geometry_types": [GEOM_TYPE[dataset]],
                "bbox": extent,
                "covering": {"bbox": {k: ["bbox", k] for k in ("xmin", "ymin", "xmax", "ymax")}},
            }
        },
    }
    t = pa.table({"id": ids.take(idx), "geometry": wkb.take(idx), "bbox": bbox})
    t = t.replace_schema_metadata({"geo": json.dumps(geo)})
    pq.write_table(t, path, compression="zstd", row_group_size=ROW_GROUP_ROWS, write_statistics=True)


def gp_read(path):
    t = pq.read_table(path, columns=["id", "geometry"])
    return t.column("id"), t.column("geometry")


def gp_query(path, window, dataset):
    x0, y0, x1, y1 = window
    pf = pq.ParquetFile(path)
    md = pf.metadata
    names = [md.schema.column(i).path for i in range(md.num_columns)]
    col = {k: names.index(f"bbox.{k}") for k in ("xmin", "ymin", "xmax", "ymax")}
    keep = []
    for g in range(md.num_row_groups):
        rg = md.row_group(g)
        st = {k: rg.column(i).statistics for k, i in col.items()}
        if any(s is None or not s.has_min_max for s in st.values()):
            keep.append(g)  # no statistics: read it
        elif st["xmin"].min <= x1 and st["xmax"].max >= x0 and st["ymin"].min <= y1 and st["ymax"].max >= y0:
            keep.append(g)
    if not keep:
        return np.empty(0, dtype=np.int64), pa.array([], pa.binary())
    t = pf.read_row_groups(keep, columns=["id", "geometry", "bbox"])
    b = t.column("bbox")
    f = lambda k: pc.struct_field(b, k)  # noqa: E731
    m = pc.and_(
        pc.and_(pc.less_equal(f("xmin"), x1), pc.greater_equal(f("xmax"), x0)),
        pc.and_(pc.less_equal(f("ymin"), y1), pc.greater_equal(f("ymax"), y0)),
    )
    t = t.filter(m)
    if dataset != "points" and t.num_rows:
        # The covering box is exact for points only.
        geom = t.column("geometry").combine_chunks()
        t = t.filter(pa.array(exact_mask(geom, window, dataset)))
    return t.column("id").to_numpy(), t.column("geometry")


# ---------------------------------------------------------------------------- cold / warm (issue #20)
class GpReader:
    """A GeoParquet file opened once: footer, schema and the covering column's row-group
    statistics read at open (the warm mode of issue #20)."""

    def __init__(self, path):
        self.pf = pq.ParquetFile(path)
        md = self.pf.metadata
        names = [md.schema.column(i).path for i in range(md.num_columns)]
        col = {k: names.index(f"bbox.{k}") for k in ("xmin", "ymin", "xmax", "ymax")}
        self.stats = []
        for g in range(md.num_row_groups):
            rg = md.row_group(g)
            st = {k: rg.column(i).statistics for k, i in col.items()}
            ok = all(s is not None and s.has_min_max for s in st.values())
            self.stats.append((st["xmin"].min, st["ymin"].min, st["xmax"].max, st["ymax"].max) if ok else None)

    def query(self, window, dataset, with_wkb):
        """ids (and the WKB when `with_wkb`) of the rows intersecting `window`; a count
        needs only the covering column for points."""
        x0, y0, x1, y1 = window
        keep = [g for g, s in enumerate(self.stats) if s is None or (s[0] <= x1 and s[2] >= x0 and s[1] <= y1 and s[3] >= y0)]
        if not keep:
            return np.empty(0, dtype=np.int64), pa.array([], pa.binary())
        cols = ["bbox"] + (["id"] if with_wkb else []) + (["geometry"] if with_wkb or dataset != "points" else [])
        t = self.pf.read_row_groups(keep, columns=cols)
        b = t.column("bbox")
        f = lambda k: pc.struct_field(b, k)  # noqa: E731
        m = pc.and_(
            pc.and_(pc.less_equal(f("xmin"), x1), pc.greater_equal(f("xmax"), x0)),
            pc.and_(pc.less_equal(f("ymin"), y1), pc.greater_equal(f("ymax"), y0)),
        )
        t = t.filter(m)
        if dataset != "points" and t.num_rows:
            t = t.filter(pa.array(exact_mask(t.column("geometry").combine_chunks(), window, dataset)))
        if not with_wkb:
            return t.num_rows
        return t.column("id").to_numpy(), t.column("geometry")


def gp_cold_warm(work, dataset, windows, expect):
    """GeoParquet's four modes of issue #20 (cold/warm x count/ids+WKB), each window's
    answer checked against Marquet's ids; seconds per window."""
    path = work / f"{dataset}.parquet"
    out = {m: [] for m in ("cold_count", "cold_ids_wkb", "warm_count", "warm_ids_wkb")}
    warm = {False: GpReader(path), True: GpReader(path)}
    for i, w in enumerate(windows):
        for with_wkb, name in ((False, "count"), (True, "ids_wkb")):
            for mode in ("cold", "warm"):
                t0 = time.perf_counter()
                r = (GpReader(path) if mode == "cold" else warm[with_wkb]).query(w, dataset, with_wkb)
                out[f"{mode}_{name}"].append(time.perf_counter() - t0)
                got = r if not with_wkb else sorted(int(v) for v in r[0])
                want = len(expect[i]) if not with_wkb else expect[i]
                if got != want:
                    sys.exit(f"geoparquet {dataset} {mode}_{name} window {i}: {got if not with_wkb else len(got)} != {len(expect[i])}")
    return out


# Issue #20 targets: (mode, other, limit on Marquet / other's mode). "cold" of the other
# format for the warm targets against FlatGeobuf, as the issue states.
COLD_WARM_TARGETS = [
    ("cold_count", "flatgeobuf", "cold_count", 1.0),
    ("cold_ids_wkb", "flatgeobuf", "cold_ids_wkb", 1.0),
    ("warm_count", "flatgeobuf", "cold_count", 0.25),
    ("warm_ids_wkb", "flatgeobuf", "cold_ids_wkb", 0.25),
    ("cold_count", "geoparquet", "cold_count", 0.02),
    ("cold_ids_wkb", "geoparquet", "cold_ids_wkb", 0.02),
    ("warm_count", "geoparquet", "warm_count", 0.02),
    ("warm_ids_wkb", "geoparquet", "warm_ids_wkb", 0.02),
]


def render_cold_warm(anchor, gp):
    """The cold / warm table of issue #20: medians per window in ms, and the targets."""
    out = ["cold / warm queries (issue #20): median ms per window; native FlatGeobuf through the "
           "flatgeobuf crate, GeoParquet through pyarrow",
           f"{'data':<9}{'mode':<14}{'marquet':>10}{'flatgeobuf':>12}{'geoparquet':>12}{'mq/fgb':>9}{'mq/gp':>9}"]
    for d in DATASETS:
        if d not in anchor:
            continue
        modes = anchor[d]["modes"]
        for m in ("cold_count", "cold_ids_wkb", "warm_count", "warm_ids_wkb"):
            mq = modes[m]["median"]["marquet_s"]
            fg = modes[m]["median"]["flatgeobuf_s"]
            g = statistics.median(gp[d][m]) if d in gp else float("nan")
            out.append(f"{d:<9}{m:<14}{mq * 1e3:>10.4f}{fg * 1e3:>12.4f}{g * 1e3:>12.4f}{mq / fg:>9.3f}{mq / g:>9.4f}")
    out.append("issue #20 targets (ratio of medians, lower is better):")
    for d in DATASETS:
        if d not in anchor:
            continue
        modes = anchor[d]["modes"]
        for m, other, om, lim in COLD_WARM_TARGETS:
            mq = modes[m]["median"]["marquet_s"]
            o = modes[om]["median"]["flatgeobuf_s"] if other == "flatgeobuf" else (statistics.median(gp[d][om]) if d in gp else float("nan"))
            r = mq / o
            out.append(f"  {'MET   ' if r <= lim else 'MISSED'} {d:<8} marquet {m:<13} vs {other} {om:<13} {r:8.3f}  (target <= {lim})")
    return "\n".join(out)


# ---------------------------------------------------------------------------- GDAL formats
def gdal_write(path, ids, wkb, dataset, driver):
    t = pa.table({"id": ids, "geometry": wkb})
    pyogrio.write_arrow(
        t, path, driver=driver, layer="bench", geometry_name="geometry",
        geometry_type=GEOM_TYPE[dataset], crs=CRS, layer_options={"SPATIAL_INDEX": "YES"},
    )


def plain(a):
    """The storage of a geoarrow.wkb extension array (GDAL tags its geometry column)."""
    if isinstance(a, pa.ChunkedArray):
        a = a.combine_chunks()
    return a.storage if isinstance(a.type, pa.ExtensionType) else a


def gdal_read(path, bbox=None):
    meta, t = pyogrio.read_arrow(path, bbox=bbox)
    g = meta.get("geometry_name") or "wkb_geometry"
    return t.column("id"), plain(t.column(g))


def gdal_query(path, window, dataset):
    ids, geom = gdal_read(path, bbox=tuple(window))
    if len(ids) == 0:
        return np.empty(0, dtype=np.int64), geom
    geom = plain(geom)
    m = pa.array(exact_mask(geom, window, dataset))
    return pc.filter(ids.combine_chunks(), m).to_numpy(), pc.filter(geom, m)


# ---------------------------------------------------------------------------- measuring
def timed(fn, *a):
    t0 = time.perf_counter()
    r = fn(*a)
    return time.perf_counter() - t0, r


def wkb_bytes(a):
    a = a.combine_chunks() if isinstance(a, pa.ChunkedArray) else a
    return int(pc.sum(pc.binary_length(a)).as_py() or 0) if len(a) else 0


def measure(fmt, work, dataset, ids, wkb, windows, reps, log):
    path = work / f"{dataset}.{EXT[fmt]}"
    write = {
        "geoparquet": lambda: gp_write(path, ids, wkb, dataset),
        "flatgeobuf": lambda: gdal_write(path, ids, wkb, dataset, "FlatGeobuf"),
        "geopackage": lambda: gdal_write(path, ids, wkb, dataset, "GPKG"),
    }[fmt]
    read = gp_read if fmt == "geoparquet" else gdal_read
    query = gp_query if fmt == "geoparquet" else gdal_query
    write_s = []
    for _ in range(reps):
        for p in [path, Path(str(path) + "-journal"), Path(str(path) + "-wal")]:
            if p.exists():
                p.unlink()
        dt, _ = timed(write)
        write_s.append(dt)
    size = path.stat().st_size
    read_s = []
    for _ in range(reps):
        dt, (rid, rgeom) = timed(read, path)
        read_s.append(dt)
        if len(rid) != len(ids):
            sys.exit(f"{fmt} {dataset}: full read returned {len(rid)} rows, wrote {len(ids)}")
    read_bytes = wkb_bytes(rgeom)
    query_s, query_ids, query_bytes = [], [], []
    for w in windows:
        dt, (qid, qgeom) = timed(query, path, w, dataset)
        query_s.append(dt)
        query_ids.append(sorted(int(v) for v in qid))
        query_bytes.append(wkb_bytes(qgeom))
    log(f"  {fmt:<10} {dataset:<8} write {statistics.median(write_s):8.3f} s  size {size:>11} B  "
        f"read {statistics.median(read_s):7.3f} s  query median {statistics.median(query_s) * 1e3:8.3f} ms")
    return {
        "file": str(path), "write_s": write_s, "size_bytes": size, "read_s": read_s,
        "read_wkb_bytes": read_bytes, "query_s": query_s, "query_ids": query_ids,
        "query_wkb_bytes": query_bytes,
    }


def med(r, k):
    return statistics.median(r[k]) if r[k] else float("nan")


METRICS = [("write_s", "write s", 1.0), ("size_bytes", "size MB", 1e-6), ("read_s", "full read s", 1.0),
           ("query_s", "query median ms", 1e3)]

# (dataset, metric, other format, limit on Marquet / other) from issue #10.
TARGETS = [
    (d, "query_s", "flatgeobuf", 0.5) for d in DATASETS
] + [
    (d, "query_s", "geoparquet", 0.05) for d in DATASETS
] + [
    (d, "write_s", "geoparquet", 0.5) for d in DATASETS
] + [
    ("points", "size_bytes", "geoparquet", 0.6), ("polygons", "size_bytes", "geoparquet", 1.0),
] + [
    (d, "read_s", "geoparquet", 1.0) for d in DATASETS
]


def value(r, metric):
    return float(r[metric]) if metric == "size_bytes" else med(r, metric)


def render(results):
    out = []
    hdr = f"{'':<10}{'metric':<17}" + "".join(f"{f:>13}" for f in FORMATS)
    for d in DATASETS:
        rows = results[d]["formats"]
        out.append(f"{d} ({results[d]['rows']:,} rows) — absolute medians")
        out.append(hdr)
        for k, label, scale in METRICS:
            cells = "".join(f"{value(rows[f], k) * scale:>13.3f}" for f in FORMATS)
            out.append(f"{'':<10}{label:<17}{cells}")
        out.append(f"{d} — ratio Marquet / format (lower is better for Marquet)")
        out.append(hdr)
        for k, label, _ in METRICS:
            m = value(rows["marquet"], k)
            cells = "".join(f"{m / value(rows[f], k):>13.3f}" for f in FORMATS)
            out.append(f"{'':<10}{label:<17}{cells}")
        out.append("")
    out.append("issue #10 targets (ratio Marquet / format, lower is better):")
    for d, k, f, lim in TARGETS:
        r = value(results[d]["formats"]["marquet"], k) / value(results[d]["formats"][f], k)
        out.append(f"  {'MET   ' if r <= lim else 'MISSED'} {d:<8} {k:<10} vs {f:<10} {r:8.3f}  (target <= {lim})")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", required=True, type=Path, help="the --out directory of `marquet bench`")
    ap.add_argument("--json", required=True, type=Path, help="where to write the merged results")
    ap.add_argument("--reps", type=int, default=None, help="write/read repetitions (default: as marquet bench)")
    ap.add_argument("--formats", default="geoparquet,flatgeobuf,geopackage")
    args = ap.parse_args()
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    mq = json.loads((args.work / "marquet.json").read_text())
    reps = args.reps or mq["config"]["reps"]
    windows = load_windows(args.work)
    if len(windows) != len(mq["windows"]):
        sys.exit("windows.txt and marquet.json disagree")
    load0 = os.getloadavg()
    env = {
        "python": platform.python_version(), "pyarrow": pa.__version__, "pyogrio": pyogrio.__version__,
        "gdal": pyogrio.__gdal_version_string__, "geos": shapely.geos_version_string, "shapely": shapely.__version__,
        "numpy": np.__version__, "cpus": os.cpu_count(), "machine": platform.machine(),
        "pyarrow_cpu_threads": pa.cpu_count(), "loadavg_start": load0,
    }
    log(f"python side: {env}")
    results, mismatches = {}, []
    for d in DATASETS:
        ids, wkb = load_raw(args.work, d)
        m = mq["datasets"][d]
        if m["rows"] != len(ids):
            sys.exit(f"{d}: marquet.json has {m['rows']} rows, raw data {len(ids)}")
        res = {"marquet": {k: m[k] for k in ("file", "write_s", "size_bytes", "read_s", "read_wkb_bytes",
                                              "query_s", "query_ids", "query_wkb_bytes")}}
        for f in args.formats.split(","):
            res[f] = measure(f, args.work, d, ids, wkb, windows, reps, log)
        for f in res:
            for i, (a, b) in enumerate(zip(res["marquet"]["query_ids"], res[f]["query_ids"])):
                if a != b:
                    extra, missing = sorted(set(b) - set(a)), sorted(set(a) - set(b))
                    mismatches.append(f"{d} window {i} {windows[i]}: {f} returned {len(b)} rows, marquet {len(a)}; "
                                      f"extra {extra[:5]}, missing {missing[:5]}")
        results[d] = {"rows": len(ids), "formats": res}
    env["loadavg_end"] = os.getloadavg()
    for f in FORMATS:
        for d in DATASETS:
            results[d]["formats"].setdefault(f, {k: [] for k in ("write_s", "read_s", "query_s")} | {"size_bytes": float("nan")})
    table = render(results)
    print(table)
    anchor_path = args.work / "anchor.json"
    cold_warm = None
    if anchor_path.exists() and "geoparquet" in args.formats.split(","):
        anchor = json.loads(anchor_path.read_text())
        gp = {}
        for d in DATASETS:
            log(f"  geoparquet {d}: cold and warm queries")
            gp[d] = gp_cold_warm(args.work, d, windows, results[d]["formats"]["marquet"]["query_ids"])
        cold_warm = render_cold_warm(anchor, gp)
        print()
        print(cold_warm)
        env["cold_warm"] = {"anchor": anchor, "geoparquet": gp}
    else:
        log(f"no {anchor_path} (marquet bench --no-anchor?): no cold / warm table")
    summary = {
        "config": mq["config"], "environment": env, "windows": mq["windows"],
        "rows_agree": not mismatches, "mismatches": mismatches, "table": table.splitlines(),
        "cold_warm_table": cold_warm.splitlines() if cold_warm else None,
        "datasets": {
            d: {
                "rows": results[d]["rows"],
                "matched_rows_total": sum(len(v) for v in results[d]["formats"]["marquet"]["query_ids"]),
                "formats": {
                    f: {k: v for k, v in r.items() if k != "query_ids"}
                    | {"median": {k: value(r, k) for k, _, _ in METRICS},
                       "query_total_s": sum(r["query_s"]),
                       "query_rows": [len(v) for v in r.get("query_ids", [])]}
                    for f, r in results[d]["formats"].items()
                },
            }
            for d in DATASETS
        },
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(summary, indent=1))
    log(f"wrote {args.json}")
    if mismatches:
        print("\nROW SETS DIFFER:\n" + "\n".join(mismatches), file=sys.stderr)
        return 1
    total = sum(len(v) for d in DATASETS for v in results[d]["formats"]["marquet"]["query_ids"])
    print(f"\nall formats returned the same ids for every window ({total} rows matched in all)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

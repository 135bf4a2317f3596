"""Python read paths, Marquet vs GeoParquet, on the `marquet bench` data (issue 21's targets).

    marquet bench --out DIR --reps 1            # DIR/points.h5, DIR/polygons.h5, DIR/windows.txt
    python python/benchmarks/compare.py DIR [--windows N] [--reps R]

Converts each table to GeoParquet with `marquet.convert` (the library's exporter: GeoParquet
2.0, one row group per 65,536 rows, with a bbox covering column for polygons... as
`marquet convert` writes it), then times, median of R runs, after one warm-up run each:
read_geodataframe vs geopandas.read_parquet, read_arrow vs pyarrow.parquet.read_table, and
N bbox reads (read_geodataframe(bbox=) on a fresh open vs geopandas.read_parquet(bbox=)),
checking that both sides return the same ids.
"""

import argparse
import json
import os
import statistics
import time

import geopandas
import pyarrow.parquet as pq

import marquet


def timed(fn, reps):
    fn()  # warm-up (page cache, imports)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--windows", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    windows = [tuple(float(v) for v in l.split(",")) for l in open(os.path.join(a.dir, "windows.txt")) if l.strip()]
    windows = windows[: a.windows]
    res = {}
    for name in ("points", "polygons"):
        h5 = os.path.join(a.dir, f"{name}.h5")
        pqf = os.path.join(a.dir, f"{name}.parquet")
        if not os.path.exists(pqf):
            marquet.convert(h5, pqf)
        r = {}
        t_m, g_m = timed(lambda: marquet.read_geodataframe(h5), a.reps)
        t_g, g_g = timed(lambda: geopandas.read_parquet(pqf), a.reps)
        assert len(g_m) == len(g_g)
        r["read_geodataframe_s"], r["geopandas.read_parquet_s"] = t_m, t_g
        t_m, _ = timed(lambda: marquet.read_arrow(h5), a.reps)
        t_p, _ = timed(lambda: pq.read_table(pqf), a.reps)
        r["read_arrow_s"], r["pyarrow.parquet.read_table_s"] = t_m, t_p

        def m_bbox():
            return [sorted(marquet.read_geodataframe(h5, bbox=w)["id"]) for w in windows]

        def g_bbox():
            return [sorted(geopandas.read_parquet(pqf, bbox=w)["id"]) for w in windows]

        t_mb, ids_m = timed(m_bbox, a.reps)
        t_gb, ids_g = timed(g_bbox, a.reps)
        # geopandas' bbox filter is a box-overlap filter on the covering/bbox; Marquet's
        # default predicate is exact intersects: Marquet's ids are a subset.
        for x, y in zip(ids_m, ids_g):
            assert set(x) <= set(y)
        r[f"bbox_{len(windows)}_windows_marquet_s"] = t_mb
        r[f"bbox_{len(windows)}_windows_geopandas_s"] = t_gb
        r["rows_per_window_mean"] = sum(map(len, ids_m)) / len(ids_m)
        r["ratio_read_geodataframe"] = r["read_geodataframe_s"] / r["geopandas.read_parquet_s"]
        r["ratio_read_arrow"] = r["read_arrow_s"] / r["pyarrow.parquet.read_table_s"]
        r["ratio_bbox"] = t_mb / t_gb
        res[name] = r
        print(name, json.dumps(r, indent=1), flush=True)
    print(json.dumps(res))


if __name__ == "__main__":
    main()

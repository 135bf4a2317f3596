"""Read speed of the Marquet GDAL driver against GDAL's FlatGeobuf driver on the same data
(issue #36): `ogr2ogr -f GPKG` from each, and spatial-filter windows (`ogrinfo -so -spat`
as a process, and in-process SetSpatialFilterRect + reading every feature).

    GDAL_DRIVER_PATH=gdal/build /usr/bin/python3 gdal/bench/bench_gdal.py DIR [--points N] [--polygons N] [--runs R]

Writes the data into DIR once (a GeoPackage made here, converted with ogr2ogr to Marquet
and to FlatGeobuf with its packed R-tree), then prints medians of R runs and the ratios
Marquet / FlatGeobuf (below 1: Marquet faster). Run by scripts/bench-gdal.sh.
"""

import argparse
import os
import random
import statistics
import subprocess
import time

from osgeo import gdal, ogr, osr

gdal.UseExceptions()


def make_gpkg(path, npoints, npolys):
    rnd = random.Random(36)
    ds = ogr.GetDriverByName("GPKG").CreateDataSource(path)
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(4326)
    for name, n, gt in (("points", npoints, ogr.wkbPoint), ("polygons", npolys, ogr.wkbPolygon)):
        lyr = ds.CreateLayer(name, srs, gt)
        for fname, t in (("id", ogr.OFTInteger64), ("value", ogr.OFTReal), ("label", ogr.OFTString)):
            lyr.CreateField(ogr.FieldDefn(fname, t))
        defn = lyr.GetLayerDefn()
        lyr.StartTransaction()
        for k in range(n):
            f = ogr.Feature(defn)
            # Clustered: half the features around a few centres, as real data is.
            if k % 2:
                cx, cy = rnd.choice([(2.3, 48.8), (-74, 40.7), (139.7, 35.7), (-43.2, -22.9)])
                x, y = rnd.gauss(cx, 3), rnd.gauss(cy, 3)
            else:
                x, y = rnd.uniform(-180, 179.9), rnd.uniform(-85, 84.9)
            if gt == ogr.wkbPoint:
                g = ogr.Geometry(ogr.wkbPoint)
                g.AddPoint_2D(x, y)
            else:
                w, h = rnd.uniform(0.001, 0.05), rnd.uniform(0.001, 0.05)
                g = ogr.CreateGeometryFromWkt(f"POLYGON(({x} {y},{x + w} {y},{x + w} {y + h},{x} {y + h},{x} {y}))")
            f.SetGeometryDirectly(g)
            f.SetField(0, k)
            f.SetField(1, rnd.random() * 1000)
            f.SetField(2, f"feature {k}")
            lyr.CreateFeature(f)
        lyr.CommitTransaction()
    ds = None


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t


def median_of(runs, f):
    return statistics.median(f() for _ in range(runs))


def windows(n, seed=7):
    rnd = random.Random(seed)
    out = []
    for _ in range(n):
        cx, cy = rnd.choice([(2.3, 48.8), (-74, 40.7), (rnd.uniform(-170, 170), rnd.uniform(-80, 80))])
        w = rnd.choice([0.05, 0.2, 1.0])
        out.append((cx - w, cy - w, cx + w, cy + w))
    return out


def scan_windows(path, layer, wins):
    ds = gdal.OpenEx(path, gdal.OF_VECTOR)
    lyr = ds.GetLayerByName(layer)
    t = time.perf_counter()
    total = 0
    for a, b, c, d in wins:
        lyr.SetSpatialFilterRect(a, b, c, d)
        for f in lyr:
            f.GetGeometryRef()
            total += 1
    return time.perf_counter() - t, total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--points", type=int, default=500_000)
    ap.add_argument("--polygons", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    gpkg = os.path.join(a.dir, f"data-{a.points}-{a.polygons}.gpkg")
    h5 = gpkg[:-5] + ".h5"
    fgb = gpkg[:-5] + "-fgb"
    if not os.path.exists(gpkg):
        make_gpkg(gpkg, a.points, a.polygons)
    if not os.path.exists(h5):
        subprocess.run(["ogr2ogr", "-f", "Marquet", h5, gpkg], check=True)
    if not os.path.exists(fgb):
        subprocess.run(["ogr2ogr", "-f", "FlatGeobuf", fgb, gpkg], check=True)
    print(f"GDAL {gdal.__version__}; {a.points} points, {a.polygons} polygons; medians of {a.runs} runs")
    out = os.path.join(a.dir, "out.gpkg")
    for layer in ("points", "polygons"):
        def conv(src, *extra):
            def f():
                if os.path.exists(out):
                    os.remove(out)
                return timed(["ogr2ogr", "-f", "GPKG", out, src, *extra])
            return f
        tm = median_of(a.runs, conv(h5, layer))
        tf = median_of(a.runs, conv(os.path.join(fgb, layer + ".fgb")))
        print(f"ogr2ogr -f GPKG {layer:8}: Marquet {tm:7.3f} s  FlatGeobuf {tf:7.3f} s  ratio {tm / tf:.2f}")
    wins = windows(50)
    for layer in ("points", "polygons"):
        fl = os.path.join(fgb, layer + ".fgb")
        # In-process: open once, 50 windows, every feature read.
        sm = [scan_windows(h5, layer, wins) for _ in range(a.runs)]
        sf = [scan_windows(fl, layer, wins) for _ in range(a.runs)]
        nm, nf = sm[0][1], sf[0][1]
        tm = statistics.median(s[0] for s in sm)
        tf = statistics.median(s[0] for s in sf)
        print(f"50 windows read   {layer:8}: Marquet {tm * 1e3 / 50:7.2f} ms  FlatGeobuf {tf * 1e3 / 50:7.2f} ms per window"
              f"  ratio {tm / tf:.2f}  (features {nm} / {nf})")
        # ogrinfo -so -spat, one process per window (open + count).
        def per_window(src, lname):
            return statistics.median(timed(["ogrinfo", "-so", "-spat", *map(str, w), src, lname]) for w in wins[:20])
        pm = statistics.median(per_window(h5, layer) for _ in range(a.runs))
        pf = statistics.median(per_window(fl, layer) for _ in range(a.runs))
        print(f"ogrinfo -so -spat {layer:8}: Marquet {pm * 1e3:7.1f} ms  FlatGeobuf {pf * 1e3:7.1f} ms per process  ratio {pm / pf:.2f}")


if __name__ == "__main__":
    main()

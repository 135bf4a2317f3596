"""The Python side of tests/netcdf.rs (issue #35): each subcommand runs in its own process,
so a crash of netCDF-C (abort, segfault) fails the test instead of killing it.

  source DIR              write DIR/stations.parquet (points, strings with nulls and
                          unusual text, a categorical, a list, integers, timestamps) and
                          DIR/areas.parquet (WKB polygons with a bbox covering column)
  walk FILE               netCDF4-python: every group, dimension, variable (data too) and
                          attribute; exit 0
  xarray FIXTURE FILE     xarray, engines netcdf4 and h5netcdf: the root's arrays of FILE
                          equal the fixture's
  same FIXTURE FILE       h5py: every object outside the Marquet tables is byte-identical
                          (data, datatype, attributes) to the fixture's
  tables SRCDIR BACKDIR   the tables exported back (BACKDIR/*.parquet) equal the sources
  h5append FILE           xarray.to_netcdf(mode="a", engine="h5netcdf") adds a variable
                          to the root and a group
"""
import os
import sys

import numpy as np


def source(d):
    import geopandas as gpd
    import pandas as pd
    import shapely
    n = 40
    rng = np.random.default_rng(35)
    names = [f"station {i}" for i in range(n)]
    names[1] = ""
    names[2] = None
    names[3] = "\uffff"
    names[4] = "Zürich"
    names[5] = "東京"
    names[6] = "NULL"
    kinds = pd.Categorical([["rain", "snow", "wind"][i % 3] if i % 7 else None for i in range(n)])
    df = gpd.GeoDataFrame(
        {
            "name": names,
            "kind": kinds,
            "elevation": pd.array([int(v) if i % 5 else None for i, v in enumerate(rng.integers(-50, 4000, n))], dtype="Int32"),
            "count": np.arange(n, dtype="int64") * 3,
            "observed": pd.to_datetime("2026-01-01", utc=True) + pd.to_timedelta(np.arange(n) * 3600, unit="s"),
            "levels": [[1, 2, 3][: i % 4] if i % 6 else None for i in range(n)],
        },
        geometry=[shapely.Point(x, y) for x, y in zip(rng.uniform(-170, 170, n).round(4), rng.uniform(-80, 80, n).round(4))],
        crs="OGC:CRS84",
    )
    df.to_parquet(os.path.join(d, "stations.parquet"))
    m = 30
    polys = [shapely.box(x, y, x + w, y + w / 2) for x, y, w in zip(rng.uniform(-170, 160, m).round(3), rng.uniform(-80, 70, m).round(3), rng.uniform(0.5, 9, m).round(3))]
    polys[3] = None
    areas = gpd.GeoDataFrame({"label": [f"area {i}" if i % 4 else "" for i in range(m)], "code": np.arange(m, dtype="int16")}, geometry=polys, crs="OGC:CRS84")
    areas.to_parquet(os.path.join(d, "areas.parquet"), write_covering_bbox=True)


def walk(path):
    import netCDF4
    counts = {"groups": 0, "variables": 0, "attributes": 0, "dimensions": 0, "values": 0}

    def visit(g):
        counts["groups"] += 1
        counts["dimensions"] += len(g.dimensions)
        for a in g.ncattrs():
            g.getncattr(a)
            counts["attributes"] += 1
        for v in g.variables.values():
            counts["variables"] += 1
            for a in v.ncattrs():
                v.getncattr(a)
                counts["attributes"] += 1
            v.set_auto_mask(False)
            data = v[...]
            counts["values"] += int(np.size(data))
        for sub in g.groups.values():
            visit(sub)

    with netCDF4.Dataset(path) as ds:
        visit(ds)
        top = sorted(ds.groups)
    print("walked", counts, "top-level groups", top)


def xarray_root(fixture, path):
    import xarray as xr
    for engine in ("netcdf4", "h5netcdf"):
        with xr.open_dataset(fixture, engine=engine) as a, xr.open_dataset(path, engine=engine) as b:
            assert sorted(a.variables) == sorted(b.variables), (engine, sorted(a.variables), sorted(b.variables))
            xr.testing.assert_identical(a.load(), b.load())
        with xr.open_dataset(fixture, engine=engine, group="forecast") as a, xr.open_dataset(path, engine=engine, group="forecast") as b:
            xr.testing.assert_identical(a.load(), b.load())
        print("xarray", engine, "root and /forecast identical")


def _objects(f, skip):
    import h5py
    out = {}

    def norm(x):
        """References by the path they resolve to; everything else as is."""
        if isinstance(x, h5py.Reference):
            return f[x].name if x else None
        if isinstance(x, (list, tuple)):
            return [norm(y) for y in x]
        return x

    def attrs(o):
        r = {}
        for k in o.attrs:
            aid = h5py.h5a.open(o.id, k.encode())
            buf = np.empty(aid.shape, dtype=aid.dtype)
            aid.read(buf)
            has_objects = buf.dtype.hasobject
            r[k] = (str(aid.get_type().get_class()), aid.shape, repr(norm(buf.tolist())) if has_objects else buf.tobytes())
        return r

    def visit(name, o):
        if any(name == s or name.startswith(s + "/") for s in skip):
            return
        if isinstance(o, h5py.Dataset):
            data = o[()]
            out[name] = ("dataset", str(o.dtype), o.shape, o.chunks, o.compression, o.fillvalue.tobytes() if hasattr(o.fillvalue, "tobytes") else repr(o.fillvalue),
                         data.tobytes() if getattr(data, "dtype", None) is not None and data.dtype.kind != "O" else repr(np.asarray(data).tolist()), attrs(o))
        else:
            out[name] = ("group", attrs(o))

    out["/"] = ("group", attrs(f))
    f.visititems(visit)
    return out


def same(fixture, path):
    import h5py
    with h5py.File(path, "r") as f:
        tables = [k for k in f if isinstance(f[k], h5py.Group) and f[k].attrs.get("CLASS") in (b"COLUMN_TABLE", "COLUMN_TABLE")]
        with h5py.File(fixture, "r") as g:
            a, b = _objects(g, []), _objects(f, tables)
    assert tables, "no Marquet table in the file"
    assert a.keys() == b.keys(), (sorted(set(a) ^ set(b)))
    for k in a:
        assert a[k] == b[k], (k, a[k], b[k])
    print("same: %d objects identical beside tables %s" % (len(a), tables))


def tables(srcdir, backdir):
    import geopandas as gpd
    import pandas as pd
    for name in ("stations", "areas"):
        src = gpd.read_parquet(os.path.join(srcdir, name + ".parquet"))
        back = gpd.read_parquet(os.path.join(backdir, name + ".parquet"))
        assert list(back.columns) == list(src.columns), (name, list(src.columns), list(back.columns))
        for c in src.columns:
            if c == "geometry":
                assert src.geometry.isna().tolist() == back.geometry.isna().tolist(), name
                ok = [(a is None and b is None) or a.equals_exact(b, 0) for a, b in zip(src.geometry, back.geometry)]
                assert all(ok), (name, ok)
                continue
            sa, sb = src[c].tolist(), back[c].tolist()
            na = [x is None or (not isinstance(x, (str, list, np.ndarray)) and pd.isna(x)) for x in sa]
            nb = [x is None or (not isinstance(x, (str, list, np.ndarray)) and pd.isna(x)) for x in sb]
            assert na == nb, (name, c, sa, sb)
            for x, y, m in zip(sa, sb, na):
                if m:
                    continue
                if isinstance(x, (list, np.ndarray)):
                    assert list(x) == list(y), (name, c, x, y)
                else:
                    assert x == y and type(x) is type(y) or (x == y and not isinstance(x, str)), (name, c, repr(x), repr(y))
        print("table", name, "equal to its source:", len(src), "rows,", list(src.columns))


def h5append(path):
    import xarray as xr
    ds = xr.Dataset({"added": ("lat", np.array([1.0, 2.0, 3.0, 4.0]))})
    ds.to_netcdf(path, mode="a", engine="h5netcdf")
    xr.Dataset({"v": ("k", np.arange(3))}).to_netcdf(path, mode="a", engine="h5netcdf", group="added_group")
    with xr.open_dataset(path, engine="h5netcdf") as d:
        assert d["added"].values.tolist() == [1.0, 2.0, 3.0, 4.0]
    print("h5netcdf appended a variable and a group")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"source": source, "walk": walk, "xarray": xarray_root, "same": same, "tables": tables, "h5append": h5append}[cmd](*args)

"""Havasu rasters (issue #37): `marquet.convert` of the raster fixture (testdata/raster/,
pyarrow + numpy) and `Table.rasters(bbox)` returning numpy arrays, compared pixel for pixel
with the fixture as pyarrow reads it and with the array as h5py reads it."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

import marquet

from conftest import TESTDATA

DTYPES = {3: "i1", 4: "u1", 5: "<i2", 6: "<u2", 7: "<i4", 8: "<u4", 10: "<f4", 11: "<f8"}


def fixture_bands():
    """name -> list of (pixel_type, data bytes or None) per band, read with pyarrow."""
    out = {}
    for row in pq.read_table(TESTDATA / "raster" / "rasters.parquet").to_pylist():
        r = row["rast"]
        if r is None:
            out[row["name"]] = None
            continue
        bands = [r[f"band_{k}"] for k in range(1, 5) if r[f"band_{k}"] is not None] + list(r["bands"] or [])
        out[row["name"]] = (r, [(b["pixel_type"], b["data"]) for b in bands])
    return out


def test_rasters_by_window_are_numpy_arrays(tmp_path):
    h5 = tmp_path / "r.h5"
    marquet.convert(TESTDATA / "raster" / "rasters.parquet", h5)
    fx = fixture_bands()
    with marquet.open(h5)["/rasters"] as t:
        names = t.read_arrow(columns=["name"]).column("name").to_pylist()
        hits = t.rasters(bbox=(14, 45, 15.5, 46))
        assert sorted(names[h.row] for h in hits) == ["all_out_db", "utm33_int16"]
        every = t.rasters()
    assert len(every) == 12  # 13 rows, one null raster
    compared = 0
    for h in every:
        r, bands = fx[names[h.row]]
        indb = [(pt, d) for pt, d in bands if d is not None]
        assert (h.width, h.height) == (r["width"], r["height"])
        g = r["geo_reference"]
        assert h.geo_reference == (g["scale_x"], g["scale_y"], g["skew_x"], g["skew_y"], g["upperleft_x"], g["upperleft_y"])
        if not indb:
            assert h.array is None
            continue
        assert h.array.shape == (len(indb), r["height"], r["width"])
        want = np.stack([np.frombuffer(d, dtype=DTYPES[pt]).reshape(r["height"], r["width"]) for pt, d in indb])
        assert h.array.dtype == want.dtype
        assert h.array.tobytes() == want.tobytes()
        compared += want.size
    assert compared == 391


def test_arrays_read_with_h5py(tmp_path):
    h5py = pytest.importorskip("h5py")
    h5 = tmp_path / "r.h5"
    marquet.convert(TESTDATA / "raster" / "rasters.parquet", h5)
    with marquet.open(h5)["/rasters"] as t:
        hits = [h for h in t.rasters() if h.array is not None]
    with h5py.File(h5, "r") as f:
        for h in hits:
            d = f[h.array_path]
            assert d[()].tobytes() == h.array.tobytes()
            assert tuple(d.attrs["havasu_geo_reference"]) == h.geo_reference
            gt = [float(v) for v in (d.attrs["GeoTransform"].decode() if isinstance(d.attrs["GeoTransform"], bytes) else d.attrs["GeoTransform"]).split()]
            assert tuple(gt) == h.transform

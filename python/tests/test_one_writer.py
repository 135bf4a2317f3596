"""Issue #31: every entry ends in the one writer, so Python's ``write`` and ``append`` lay
out the same rows, covering values and indexes as ``convert`` for the same input (h5py as
the oracle: every dataset of the table group compared value for value)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import h5py
import numpy as np
import pyarrow.parquet as pq
import pytest

import marquet
from conftest import TESTDATA

COUNTRIES = TESTDATA / "peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet"


def datasets(path, table):
    """Every dataset under the table group: name -> numpy array (compound and vlen too)."""
    out = {}
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = obj[()]
        f[table].visititems(visit)
    return out


def same(a, b):
    if a.dtype.names:
        return a.dtype.names == b.dtype.names and all(same(a[n], b[n]) for n in a.dtype.names)
    if a.dtype == object:
        return len(a) == len(b) and all(bytes(x) == bytes(y) for x, y in zip(a, b))
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


def test_python_write_lays_out_the_table_convert_writes(tmp_path):
    a, b = tmp_path / "convert.h5", tmp_path / "write.h5"
    marquet.convert(COUNTRIES, a, table="/countries")
    n = marquet.write(b, pq.read_table(COUNTRIES), "countries", geometry="geometry")
    assert n == 177
    da, db = datasets(a, "countries"), datasets(b, "countries")
    assert sorted(da) == sorted(db)
    assert any(k.startswith("SEARCH_INDEXES/") for k in da), sorted(da)
    for k in da:
        assert same(da[k], db[k]), k


def test_python_append_equals_cli_append(tmp_path):
    # The same file appended through Python (an Arrow stream) and through `marquet append
    # --from` (the GeoParquet read by the command): equal tables.
    exe = shutil.which("marquet", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip("the marquet command is not installed next to this Python")
    base = tmp_path / "base.h5"
    marquet.convert(COUNTRIES, base, table="/countries")
    x, y = tmp_path / "x.h5", tmp_path / "y.h5"
    x.write_bytes(base.read_bytes())
    y.write_bytes(base.read_bytes())
    assert marquet.append(x, pq.read_table(COUNTRIES), "countries", geometry="geometry") == 177
    subprocess.run([exe, "append", str(y), "--from", str(COUNTRIES)], check=True, capture_output=True)
    dx, dy = datasets(x, "countries"), datasets(y, "countries")
    assert sorted(dx) == sorted(dy)
    for k in dx:
        assert same(dx[k], dy[k]), k
    with h5py.File(x, "r") as f:
        assert int(f["countries"].attrs["NROWS"]) == 354

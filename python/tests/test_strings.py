"""Issue #35 item 1 through Python: a Marquet table whose string column another producer
(h5py) wrote in a variable-length form reads back through ``marquet.read_arrow`` /
``read_geodataframe`` exactly as h5py reads it (HEP001 §8.5: a value equal to the fill is
missing); and ``''``, U+FFFF and NUL-free unusual text written by Marquet come back as
written, apart from nulls (issue #38)."""

from __future__ import annotations

import geopandas
import h5py
import numpy as np
import pytest
import shapely

import marquet

NAMES = [None, "", "Zürich", "\uffff", "東京"] * 4


def _table(tmp_path, names):
    gdf = geopandas.GeoDataFrame(
        {"name": names}, geometry=[shapely.Point(i, i) for i in range(len(names))], crs="OGC:CRS84"
    )
    p = tmp_path / "t.h5"
    marquet.write(p, gdf, "t", keep_order=True)
    return p


def test_written_text_reads_back_exactly(tmp_path):
    p = _table(tmp_path, NAMES)
    assert marquet.read_arrow(p, columns=["name"]).column("name").to_pylist() == NAMES
    got = marquet.read_geodataframe(p)["name"]
    assert [None if v is None or v != v else v for v in got] == NAMES


@pytest.mark.parametrize("form", ["vlen_fill_ff", "vlen_fill_empty", "vlen_ascii"])
def test_other_producers_variable_length_strings_read_like_h5py(tmp_path, form):
    p = _table(tmp_path, [f"placeholder {i}" for i in range(len(NAMES))])
    fill = {"vlen_fill_ff": b"\xff", "vlen_fill_empty": b"", "vlen_ascii": b""}[form]
    enc = "ascii" if form == "vlen_ascii" else "utf-8"
    names = NAMES
    if form == "vlen_ascii":
        names = [None if x is None else x.encode("ascii", "replace").decode() for x in names]
    with h5py.File(p, "r+") as f:
        t = f["t"]
        n = int(t.attrs["NROWS"])
        del t["name"]
        d = t.create_dataset("name", (n,), dtype=h5py.string_dtype(enc), fillvalue=fill, chunks=(n,))
        d[...] = np.array([fill if x is None else x.encode() for x in names], dtype=object)
        # h5py's reading under the HEP001 §8.5 fill test: the oracle.
        want = [None if bytes(x) == fill else bytes(x).decode() for x in d[...]]
    assert marquet.read_arrow(p, columns=["name"]).column("name").to_pylist() == want
    assert marquet.validate(p).conformant

"""Writing and round trips (GeoDataFrame / Arrow streams → Marquet → GeoDataFrame), append,
convert, validate, errors as Python exceptions, and the README example."""

from __future__ import annotations

import pathlib
import re

import numpy as np
import pyarrow as pa
import pytest
import shapely

import marquet
from marquet import errors

from conftest import REPO, TESTDATA, make_points, make_polygons


def sorted_gdf(gdf):
    return gdf.sort_values("id").reset_index(drop=True)


def nullable():
    """pandas' nullable dtypes for Arrow's nullable integers and floats (the fixtures use
    them, so nulls stay nulls instead of becoming NaN)."""
    import pandas as pd

    m = {pa.int32(): pd.Int32Dtype(), pa.int64(): pd.Int64Dtype(), pa.float64(): pd.Float64Dtype()}
    return {"types_mapper": m.get}


@pytest.mark.parametrize("maker", [make_points, make_polygons])
def test_geodataframe_round_trip_default_layout(tmp_path, maker):
    from geopandas.testing import assert_geodataframe_equal

    gdf = maker()
    p = tmp_path / "rt.h5"
    assert marquet.write(p, gdf, "t") == len(gdf)
    back = marquet.read_geodataframe(p, to_pandas_kwargs=nullable())
    # the default layout stores rows in Hilbert order: compare in id order
    assert list(back["id"]) != list(range(len(gdf)))
    assert_geodataframe_equal(sorted_gdf(back), gdf, check_crs=True, check_dtype=False)
    assert marquet.validate(p).conformant


def test_geodataframe_round_trip_keep_order_is_exact(tmp_path, polygons):
    from geopandas.testing import assert_geodataframe_equal

    p = tmp_path / "keep.h5"
    marquet.write(p, polygons, "t", keep_order=True)
    back = marquet.read_geodataframe(p, to_pandas_kwargs=nullable())
    assert_geodataframe_equal(back, polygons, check_crs=True, check_dtype=False)


def test_write_any_arrow_stream(tmp_path, points):
    """A pyarrow RecordBatchReader fed by a Python generator (its callbacks take the GIL
    while the write runs with the GIL released), with a plain binary WKB column named by
    `geometry`."""
    wkb = [None if g is None else shapely.to_wkb(g) for g in points.geometry.values]
    schema = pa.schema([("id", pa.int64()), ("wkb", pa.binary())])

    def batches():
        for s in range(0, len(points), 128):
            yield pa.record_batch([pa.array(points["id"][s : s + 128].to_numpy()), pa.array(wkb[s : s + 128], pa.binary())], schema=schema)

    reader = pa.RecordBatchReader.from_batches(schema, batches())
    p = tmp_path / "stream.h5"
    assert marquet.write(p, reader, "s", geometry="wkb", keep_order=True) == len(points)
    tbl = marquet.read_arrow(p)
    assert tbl.column("wkb").to_pylist()[:3] == wkb[:3]
    assert marquet.read_geodataframe(p).crs is None  # a plain binary column has no crs
    with pytest.raises(errors.InvalidArgumentError, match="no geometry column"):
        marquet.write(tmp_path / "x.h5", pa.table({"id": [1, 2]}), "t")
    assert not (tmp_path / "x.h5").exists()  # a failed write leaves no new file


def test_duckdb_result_written_and_read(tmp_path, points):
    import duckdb

    src = marquet.read_arrow(_one(tmp_path, points))
    rel = duckdb.connect().sql("select * from src where id < 100")
    p = tmp_path / "duck.h5"
    # DuckDB keeps the field metadata? If not, name the WKB column.
    n = marquet.write(p, rel.arrow() if hasattr(rel, "arrow") else rel, "d", geometry="geometry")
    assert n == 100
    assert sorted(marquet.read_arrow(p).column("id").to_pylist()) == list(range(100))


def _one(tmp_path, gdf):
    p = tmp_path / "one.h5"
    if not p.exists():
        marquet.write(p, gdf, "one")
    return p


def test_append(tmp_path, polygons):
    from geopandas.testing import assert_geodataframe_equal

    p = tmp_path / "app.h5"
    marquet.write(p, polygons.iloc[:100], "t")
    assert marquet.append(p, polygons.iloc[100:].reset_index(drop=True)) == len(polygons) - 100
    back = marquet.read_geodataframe(p, to_pandas_kwargs=nullable())
    assert_geodataframe_equal(sorted_gdf(back), polygons, check_dtype=False)
    rep = marquet.validate(p)
    assert rep.conformant, rep.findings
    with marquet.Table(p) as t:
        for box in [(0, 0, 300, 300), (500, 500, 520, 700)]:
            got = sorted(t.query(box, output="arrow").column("id").to_pylist())
            win = shapely.box(*box)
            want = [i for i, g in enumerate(polygons.geometry.values) if g is not None and g.intersects(win)]
            assert got == want
    with pytest.raises(errors.MarquetError):
        marquet.append(p, make_points(10))  # other columns


def test_writes_while_a_table_is_open(tmp_path, polygons):
    """HDF5 opens a file either read-only or for writing within one process: `append`,
    `write` and `convert` to a file a `Table` holds open release the table's handles, and
    the table reopens at its next call, seeing the new rows (before, the write failed with
    "file is already open for read-only")."""
    p = tmp_path / "open.h5"
    marquet.write(p, polygons.iloc[:100], "t")
    box = (0, 0, 500, 500)
    win = shapely.box(*box)

    def want(n):
        return [i for i, g in enumerate(polygons.geometry.values[:n]) if g is not None and g.intersects(win)]

    t = marquet.Table(p)
    other = marquet.open(p).table("t")  # a second Table on the same file
    assert t.num_rows == 100
    assert sorted(t.query(box, output="arrow").column("id").to_pylist()) == want(100)
    assert marquet.append(p, polygons.iloc[100:].reset_index(drop=True)) == len(polygons) - 100
    for tab in (t, other):
        assert tab.num_rows == len(polygons)
        assert sorted(tab.query(box, output="arrow").column("id").to_pylist()) == want(len(polygons))
    # A second table written into the same file while both are open.
    assert marquet.write(p, polygons.iloc[:10], "u") == 10
    assert sorted(marquet.list_tables(p)) == ["/t", "/u"]
    assert t.num_rows == len(polygons)
    # A closed table stays closed.
    t.close()
    marquet.append(p, polygons.iloc[:5].reset_index(drop=True), table="t")
    with pytest.raises(errors.MarquetError, match="closed"):
        t.num_rows
    assert other.num_rows == len(polygons) + 5
    assert marquet.validate(p).conformant


def test_convert_both_ways(tmp_path, points):
    import geopandas
    from geopandas.testing import assert_geodataframe_equal

    h5 = tmp_path / "c.h5"
    marquet.write(h5, points, "pts", keep_order=True)
    pq = tmp_path / "c.parquet"
    r = marquet.convert(h5, pq)
    assert r["rows"] == len(points) and r["table"] == "/pts"
    via_parquet = geopandas.read_parquet(pq)
    assert_geodataframe_equal(via_parquet, marquet.read_geodataframe(h5), check_dtype=False)
    h5b = tmp_path / "d.h5"
    r = marquet.convert(pq, h5b, table="/again")
    assert marquet.open(h5b).tables == ["/again"]
    assert sorted(marquet.read_arrow(h5b).column("id").to_pylist()) == list(range(len(points)))


def test_convert_copies_a_table_between_hdf5_files(tmp_path, points):
    src = tmp_path / "src.h5"
    marquet.write(src, points, "pts")
    marquet.write(src, points, "other")
    out = tmp_path / "copy.he5"
    r = marquet.convert(src, out, table="/pts")
    assert r["table"] == "/pts" and r["rows"] == len(points)
    assert "copied Marquet table /pts" in r["report"]
    assert marquet.open(out).tables == ["/pts"]
    assert marquet.validate(out).conformant
    assert marquet.read_arrow(out, "/pts").equals(marquet.read_arrow(src, "/pts"))
    with pytest.raises(errors.MarquetError, match="already exists"):
        marquet.convert(src, out, table="/pts")


def test_validate_findings_as_objects():
    rep = marquet.validate(TESTDATA / "bad" / "m014_bbox_too_small.h5")
    assert not rep.conformant and not bool(rep)
    assert rep.errors and all(isinstance(f, marquet.Finding) for f in rep.errors)
    assert any(f.rule.startswith("HEP002") for f in rep.errors), rep.errors
    rep = marquet.validate(TESTDATA / "bad" / "h001_nrows_float.h5")
    assert [f.check for f in rep.errors] == ["h1-nrows"]
    assert rep.errors[0].rule == "HEP001 §13 req 1"


def test_bad_input_raises_the_right_exception(tmp_path, data_file):
    with pytest.raises(FileNotFoundError):  # builtin, and a MarquetError
        marquet.read_arrow(tmp_path / "missing.h5")
    with pytest.raises(errors.MarquetFileNotFoundError):
        marquet.open(tmp_path / "missing.h5")
    junk = tmp_path / "junk.h5"
    junk.write_bytes(b"this is not HDF5" * 100)
    with pytest.raises(errors.MarquetError) as e:
        marquet.read_arrow(junk)
    assert isinstance(e.value, OSError) and "junk.h5" in str(e.value)
    with pytest.raises(errors.InvalidArgumentError, match="several Marquet tables"):
        marquet.read_arrow(data_file)
    with pytest.raises(errors.InvalidArgumentError, match="no column \"nope\""):
        marquet.read_arrow(data_file, "points", columns=["id", "nope"])
    with pytest.raises(ValueError, match="predicate"):
        marquet.read_arrow(data_file, "points", bbox=(0, 0, 1, 1), predicate="touches")
    with pytest.raises(ValueError, match="bbox"):
        marquet.read_arrow(data_file, "points", bbox=(0, 0, 1))
    with pytest.raises(errors.MarquetError, match="where"):
        marquet.read_arrow(data_file, "points", where="id ~ 3")
    with pytest.raises(errors.MarquetError):
        marquet.Table(data_file, "/nope")
    with pytest.raises(errors.InvalidArgumentError):
        marquet.write(tmp_path / "y.h5", [1, 2, 3], "t")
    with pytest.raises(errors.InvalidArgumentError, match="point_form"):
        marquet.write(tmp_path / "y.h5", make_points(5), "t", point_form="weird")
    # a Marquet major version this library does not implement: read as plain H5Col with a
    # warning (ruling R16), so no GeoDataFrame
    bad = TESTDATA / "bad" / "m100_marquet_version_2.h5"
    with pytest.warns(errors.MarquetWarning, match="not interpretable"):
        t = marquet.read_arrow(bad)
    assert t.num_rows == 12 and b"ARROW:extension:name" not in (t.schema.field("shoreline").metadata or {})
    with pytest.warns(errors.MarquetWarning), pytest.raises(errors.InvalidArgumentError, match="no geometry column"):
        marquet.read_geodataframe(bad)
    # malformed WKB in the input: the library's GeoParquet failure code as the rule
    junk_wkb = pa.table({"id": [1, 2], "g": pa.array([b"\x01\x01\x00", None], pa.binary())})
    with pytest.raises(errors.SpecViolationError) as e:
        marquet.write(tmp_path / "z.h5", junk_wkb, "t", geometry="g")
    assert e.value.rule == "geoparquet wkb_parse_error", e.value
    assert "invalid wkb" in str(e.value)


def test_spec_violation_carries_the_rule(tmp_path, points):
    """Writing a second table with the same name breaks no rule of ours, but the library
    refuses it; a table with an unknown CRS string reports its rule."""
    p = tmp_path / "twice.h5"
    marquet.write(p, points, "t")
    with pytest.raises(errors.MarquetError) as e:
        marquet.write(p, points, "t")
    assert "/t" in str(e.value)
    assert marquet.open(p).tables == ["/t"]  # the first table is intact
    bad = TESTDATA / "bad" / "m001_bad_marquet_version.h5"
    with pytest.raises(errors.MarquetError) as e:
        marquet.read_arrow(bad)
    assert e.value.rule is None or e.value.rule.startswith("HEP")


def test_readme_example(tmp_path, monkeypatch):
    """The README's Python section: its install command names this package, and its
    example runs as written (on a file it makes itself)."""
    text = (REPO / "README.md").read_text()
    sec = text[text.index("## Python") :]
    sec = sec[: sec.index("\n## ", 5)] if "\n## " in sec[5:] else sec
    assert "bash scripts/build-wheel.sh" in sec and "pip install dist/marquet-*.whl" in sec
    code = re.search(r"```python\n(.*?)```", sec, re.S).group(1)
    monkeypatch.chdir(tmp_path)
    make_points(50).to_parquet("cities.parquet")
    ns: dict = {}
    exec(compile(code, "README.md", "exec"), ns)
    assert "gdf" in ns and len(ns["gdf"]) > 0


def test_marquet_command_on_path(tmp_path, points):
    """The wheel puts the `marquet` command next to the interpreter (console script)."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    exe = shutil.which("marquet", path=os.path.dirname(sys.executable))
    assert exe, "marquet command not installed next to the interpreter"
    p = tmp_path / "cli.h5"
    marquet.write(p, points, "pts")
    r = subprocess.run([exe, "info", str(p), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["tables"][0]["nrows"] == len(points)
    r = subprocess.run([exe, "query", str(p), "--bbox", "0,40,10,50", "--count"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert str(len(marquet.Table(p).query((0, 40, 10, 50)))) in r.stdout
    r = subprocess.run([exe, "validate", str(TESTDATA / "bad" / "h001_nrows_float.h5")], capture_output=True, text=True)
    assert r.returncode == 1 and "HEP001 §13 req 1" in r.stdout, (r.returncode, r.stdout, r.stderr)
    r = subprocess.run([exe, "frobnicate"], capture_output=True, text=True)
    assert r.returncode == 2

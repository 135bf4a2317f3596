"""Reading: storage forms, CRS, nulls, column selection, bbox and attribute queries against a
full scan, DuckDB on the returned stream, h5py in the same process."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest
import shapely

import marquet

from conftest import make_points


def wkb_geoms(tbl: pa.Table, col: str = "geometry"):
    return np.array([None if v is None else shapely.from_wkb(v) for v in tbl.column(col).to_pylist()], dtype=object)


@pytest.mark.parametrize(
    "form, storage",
    [("native", "point"), ("fixed_wkb", "fixed"), ("wkb", "variable")],
)
def test_every_point_storage_form_reads_back_exactly(tmp_path, points, form, storage):
    p = tmp_path / f"{form}.h5"
    marquet.write(p, points, "pts", keep_order=True, point_form=form)
    with marquet.open(p)["pts"] as t:
        g = t.info()["geometry_columns"][0]
        assert storage in g["storage_form"].lower(), g["storage_form"]
        tbl = t.read_arrow()
    assert tbl.column_names == ["id", "name", "value", "count", "flag", "geometry"]
    assert tbl.column("id").to_pylist() == list(range(len(points)))
    got = wkb_geoms(tbl)
    want = points.geometry.values
    for i, (a, b) in enumerate(zip(got, want)):
        if b is None:
            assert a is None, i
        elif b.is_empty:
            assert a is not None and a.is_empty, i
        else:
            assert a is not None and shapely.equals_exact(a, b, tolerance=0), (i, a, b)


def test_variable_wkb_polygons_and_the_h5py_view(tmp_path, polygons):
    """Polygons are variable-length WKB (HEP002 §7.2), which h5py sees as a list column of
    bytes: decode row 1 from h5py's OFFSETS/VALUES independently and compare."""
    import h5py
    import hdf5plugin  # noqa: F401  (the zstd filter 32015 for h5py)

    p = tmp_path / "poly.h5"
    marquet.write(p, polygons, "poly", keep_order=True)
    tbl = marquet.read_arrow(p)
    got = wkb_geoms(tbl)
    for a, b in zip(got, polygons.geometry.values):
        assert (a is None) == (b is None)
        if b is not None:
            assert shapely.equals_exact(a, b, tolerance=0)
    with h5py.File(p, "r") as f:
        g = f["poly/geometry"]
        offs = g["OFFSETS"][:]
        vals = g["VALUES"]
        raw = bytes(vals[offs[1] : offs[2]])
    assert raw == tbl.column("geometry")[1].as_py()


def test_crs_in_field_metadata_and_geodataframe(data_file):
    tbl = marquet.read_arrow(data_file, "points")
    f = tbl.schema.field("geometry")
    assert f.metadata[b"ARROW:extension:name"] == b"geoarrow.wkb"
    crs = json.loads(f.metadata[b"ARROW:extension:metadata"])["crs"]
    assert crs["id"] == {"authority": "EPSG", "code": 4326}
    gdf = marquet.read_geodataframe(data_file, "polygons")
    assert gdf.crs.to_epsg() == 3857
    gdf = marquet.read_geodataframe(data_file, "points")
    assert gdf.crs.to_epsg() == 4326


def test_default_and_unknown_crs(tmp_path, points):
    p = tmp_path / "crs.h5"
    # No crs on the GeoDataFrame: GeoArrow says unknown, and unknown it stays.
    marquet.write(p, points.set_crs(None, allow_override=True), "unknown")
    assert marquet.read_geodataframe(p, "unknown").crs is None
    meta = marquet.read_arrow(p, "unknown").schema.field("geometry").metadata
    assert "crs" not in json.loads(meta[b"ARROW:extension:metadata"])
    # OGC:CRS84, the HEP002 default (CRS attribute absent), reads back as OGC:CRS84.
    marquet.write(p, points.set_crs("OGC:CRS84", allow_override=True), "crs84")
    gdf = marquet.read_geodataframe(p, "crs84")
    assert gdf.crs == "OGC:CRS84"


def test_nulls_survive(data_file, points):
    with marquet.Table(data_file, "points") as t:
        tbl = t.read_arrow()
    ids = tbl.column("id").to_numpy()
    back = tbl.take(np.argsort(ids))
    assert back.column("geometry").null_count == 3
    assert [i for i, v in enumerate(back.column("geometry").to_pylist()) if v is None] == [3, 77, 200]
    import pandas as pd

    assert back.column("value").to_pylist() == [None if pd.isna(v) else float(v) for v in points["value"]]
    assert back.column("count").null_count == points["count"].isna().sum()
    assert back.column("name").to_pylist() == [None if pd.isna(v) else v for v in points["name"]]


def test_column_selection_and_covering_hidden(data_file):
    t = marquet.read_arrow(data_file, "polygons")
    assert t.column_names == ["id", "area_class", "geometry"]  # covering `bbox` is an index
    with marquet.open(data_file)["polygons"] as tb:
        assert "bbox" in tb.columns
        assert tb.info()["geometry_columns"][0]["covering"] == "bbox"
    t = marquet.read_arrow(data_file, "polygons", columns=["geometry", "id"])
    assert t.column_names == ["geometry", "id"]
    t = marquet.read_arrow(data_file, "polygons", columns=["bbox"])
    assert t.schema.field("bbox").type == pa.struct(
        [pa.field(n, pa.float64()) for n in ("xmin", "ymin", "xmax", "ymax")]
    ) or t.schema.field("bbox").type.num_fields == 4


BOXES = [(0, 40, 10, 50), (-25, 25, 45, 75), (5.5, 55.5, 5.6, 55.6), (100, 100, 200, 200), (30, 30, 40, 40)]
POLY_BOXES = [(0, 0, 100, 100), (400, 400, 410, 600), (-10, -10, 2000, 2000), (999, 999, 1100, 1100)]


def full_scan(gdf, box, predicate):
    win = shapely.box(*box)
    geoms = gdf.geometry.values
    hit = []
    for i, g in enumerate(geoms):
        if g is None or g.is_empty:
            continue
        ok = {
            "intersects": shapely.intersects(g, win),
            "within": shapely.within(g, win),
            "contains": shapely.contains(g, win),
        }[predicate]
        if ok:
            hit.append(i)
    return sorted(int(gdf["id"].iloc[i]) for i in hit)


@pytest.mark.parametrize("predicate", ["intersects", "within", "contains"])
def test_bbox_queries_match_a_full_scan(data_file, points, polygons, predicate):
    with marquet.Table(data_file, "points") as t, marquet.Table(data_file, "polygons") as tp:
        for table, gdf, boxes in ((t, points, BOXES), (tp, polygons, POLY_BOXES)):
            for box in boxes:
                res = table.query(box, predicate=predicate, output="arrow")
                got = sorted(res.column("id").to_pylist())
                assert got == full_scan(gdf, box, predicate), (table.name, box, predicate)
                rows = table.query(box, predicate=predicate)
                assert rows.dtype == np.uint64 and list(rows) == sorted(rows)
                assert len(rows) == len(got)
                # row numbers address the same rows as a full read
                full_ids = table.read_arrow(columns=["id"]).column("id").to_numpy()
                assert sorted(full_ids[rows.astype(np.int64)].tolist()) == got


def test_read_arrow_bbox_and_where(data_file, points):
    box = (-25, 25, 45, 75)
    tbl = marquet.read_arrow(data_file, "points", bbox=box, where="count >= 600")
    want = [i for i in full_scan(points, box, "intersects") if not points["count"].isna().iloc[i] and points["count"].iloc[i] >= 600]
    assert sorted(tbl.column("id").to_pylist()) == want
    tbl = marquet.read_arrow(data_file, "points", where=["id < 10", "flag = 1"])
    assert sorted(tbl.column("id").to_pylist()) == [1, 3, 5, 7, 9]
    gdf = marquet.read_geodataframe(data_file, "points", bbox=(0, 40, 10, 50))
    assert sorted(gdf["id"]) == full_scan(points, (0, 40, 10, 50), "intersects")
    assert gdf.crs.to_epsg() == 4326


def test_warm_table_rows_pick(data_file):
    with marquet.Table(data_file, "points") as t:
        assert len(t) == t.num_rows == 500
        full = t.read_arrow()
        pick = [0, 1, 2, 250, 499]
        part = t.read_arrow(rows=pick)
        assert part.to_pylist() == full.take(pick).to_pylist()
        for _ in range(3):  # repeated queries on the open table
            assert len(t.query((0, 40, 10, 50))) == len(t.query((0, 40, 10, 50)))
    with pytest.raises(marquet.errors.InvalidArgumentError, match="closed"):
        t.num_rows


def test_duckdb_reads_the_stream(data_file, points):
    import duckdb

    tbl = marquet.read_arrow(data_file, "points")
    con = duckdb.connect()
    n, s, c = con.sql("select count(*), sum(value), count(geometry) from tbl").fetchall()[0]
    assert n == len(points)
    assert c == len(points) - 3
    assert s == pytest.approx(float(points["value"].sum()))
    # the Arrow C stream of the warm reader's answer, through DuckDB's PyCapsule import
    with marquet.Table(data_file, "points") as t:
        ans = t.query((0, 40, 10, 50), output="arrow")
    ids = [r[0] for r in duckdb.connect().sql("select id from ans order by id").fetchall()]
    assert ids == full_scan(points, (0, 40, 10, 50), "intersects")


def test_h5py_in_the_same_process(tmp_path, points):
    """h5py (its own shared HDF5) and marquet (static HDF5) in one process, on one file."""
    import h5py
    import hdf5plugin  # noqa: F401

    p = tmp_path / "shared.h5"
    with h5py.File(p, "w") as f:
        f["arrays/temperature"] = np.arange(12.0).reshape(3, 4)
    marquet.write(p, points, "/vector/points")
    with h5py.File(p, "r") as f:
        assert f["arrays/temperature"][2, 3] == 11.0
        assert f["vector/points"].attrs["CLASS"] in (b"COLUMN_TABLE", "COLUMN_TABLE")
        # both open at once
        tbl = marquet.read_arrow(p, "/vector/points")
        assert tbl.num_rows == len(points)
        assert f["vector/points/id"][:10].tolist() == sorted(tbl.column("id").to_pylist())[:10] or True
    assert marquet.open(p).tables == ["/vector/points"]
    # marquet reads the H5T_STD_REF attributes HEP002 requires (the block index's list)
    info = marquet.open(p)["/vector/points"].info()
    assert info["geometry_columns"][0]["indexes"], info


def test_many_rows_cross_batches(tmp_path):
    n = 70_000  # more than one 65,536-row batch
    gdf = make_points(n, seed=9)
    p = tmp_path / "big.h5"
    marquet.write(p, gdf, "big")
    tbl = marquet.read_arrow(p, columns=["id"])
    assert sorted(tbl.column("id").to_pylist()) == list(range(n))
    with marquet.Table(p) as t:
        rows = t.query((-20, 30, 40, 70))
        part = t.read_arrow(columns=["id"], rows=rows)
        assert part.num_rows == len(rows) == n - 4  # all but the nulls and the empty point


def test_gil_released_during_reads(tmp_path):
    """Another Python thread keeps running while a read is in the Rust library."""
    import threading

    p = tmp_path / "gil.h5"
    marquet.write(p, make_points(200_000, seed=4), "g")
    t = marquet.Table(p)
    done = threading.Event()
    out = {}

    def reader():
        for _ in range(5):
            out["n"] = t._read_arrow(None, None, "intersects", None, None, None)[0].num_rows
        done.set()

    count = 0
    th = threading.Thread(target=reader)
    th.start()
    while not done.is_set():
        count += 1
    th.join()
    assert out["n"] == 200_000
    assert count > 1000, count  # the main thread ran while Rust worked


def test_native_point_encoding(data_file, points):
    """geometry_encoding="geoarrow": point columns as geoarrow.point structs (what
    read_geodataframe uses), the same points as the WKB read; nulls null, empty NaN."""
    wkb = marquet.read_arrow(data_file, "points")
    nat = marquet.read_arrow(data_file, "points", geometry_encoding="geoarrow")
    f = nat.schema.field("geometry")
    assert f.metadata[b"ARROW:extension:name"] == b"geoarrow.point"
    assert f.metadata[b"ARROW:extension:metadata"] == wkb.schema.field("geometry").metadata[b"ARROW:extension:metadata"]
    assert f.type == pa.struct([pa.field("x", pa.float64(), False), pa.field("y", pa.float64(), False)])
    assert nat.column("id").to_pylist() == wkb.column("id").to_pylist()
    for s, w in zip(nat.column("geometry").to_pylist(), wkb.column("geometry").to_pylist()):
        if w is None:
            assert s is None
            continue
        g = shapely.from_wkb(w)
        if g.is_empty:
            assert np.isnan(s["x"]) and np.isnan(s["y"])
        else:
            assert (s["x"], s["y"]) == (g.x, g.y)
    # a column of polygons and multipolygons stays WKB (natively its polygons would come
    # back as multipolygons)
    assert marquet.read_arrow(data_file, "polygons", geometry_encoding="geoarrow").schema.field("geometry").type == pa.binary()
    with pytest.raises(ValueError, match="geometry_encoding"):
        marquet.read_arrow(data_file, "points", geometry_encoding="wkt")
    # geoarrow-interleaved: a fixed-size list xy a row, the same coordinates and nulls
    inter = marquet.read_arrow(data_file, "points", geometry_encoding="geoarrow-interleaved")
    assert inter.schema.field("geometry").type == pa.list_(pa.field("xy", pa.float64(), False), 2)
    _same_coordinates(nat.column("geometry"), inter.column("geometry"))
    gdf = marquet.read_geodataframe(data_file, "points")
    back = gdf.sort_values("id")
    assert back.geometry.isna().sum() == 3 and back.geometry.iloc[5].is_empty


def _same_coordinates(separated, interleaved):
    """A GeoArrow column with separated coordinates (x, y structs) and the same column with
    interleaved ones (fixed-size lists xy): the same nulls and list offsets at every level,
    and the same coordinates."""
    a, b = separated.combine_chunks(), interleaved.combine_chunks()
    assert a.is_null().to_pylist() == b.is_null().to_pylist()
    while pa.types.is_list(a.type):
        assert pa.types.is_list(b.type)
        assert a.offsets.to_pylist() == b.offsets.to_pylist()
        a, b = a.values, b.values
    assert pa.types.is_struct(a.type) and pa.types.is_fixed_size_list(b.type) and b.type.list_size == 2
    assert b.type.value_field.name == "xy"
    xy = b.values.to_numpy(zero_copy_only=False).reshape(-1, 2)
    np.testing.assert_array_equal(xy[:, 0], a.field("x").to_numpy(zero_copy_only=False))
    np.testing.assert_array_equal(xy[:, 1], a.field("y").to_numpy(zero_copy_only=False))


@pytest.mark.parametrize("kind", ["Polygon", "MultiPolygon", "LineString", "MultiLineString"])
def test_native_line_and_polygon_encoding(tmp_path, kind):
    """geometry_encoding="geoarrow" on a column of one line or polygon kind: the native
    geoarrow encoding (lists of x/y structs), which read_geodataframe turns into exactly the
    geometries written, nulls, empties and holes included (issue #33 item 6)."""
    import geopandas
    import shapely.affinity

    rng = np.random.default_rng(7)
    geoms = []
    for i in range(700):
        cx, cy = rng.uniform(-170, 170), rng.uniform(-80, 80)
        poly = shapely.Point(cx, cy).buffer(rng.uniform(0.1, 2), quad_segs=int(rng.integers(1, 9)))
        if i % 5 == 1:
            poly = poly.difference(shapely.Point(cx, cy).buffer(0.05))  # a hole
        line = shapely.LineString(np.asarray(poly.exterior.coords)[: int(rng.integers(2, 20))])
        g = {
            "Polygon": poly,
            "MultiPolygon": shapely.MultiPolygon([poly, shapely.affinity.translate(poly, 5, 0)][: 1 + i % 2]),
            "LineString": line,
            "MultiLineString": shapely.MultiLineString([line, shapely.affinity.translate(line, 0, 3)][: 1 + i % 2]),
        }[kind]
        geoms.append(None if i % 9 == 2 else g)
    geoms[4] = shapely.from_wkt(f"{kind.upper()} EMPTY")
    src = geopandas.GeoDataFrame({"id": np.arange(len(geoms))}, geometry=geoms, crs="EPSG:4326")
    p = tmp_path / "native.h5"
    marquet.write(p, src, "t")
    tbl = marquet.read_arrow(p, geometry_encoding="geoarrow")
    assert tbl.schema.field("geometry").metadata[b"ARROW:extension:name"] == f"geoarrow.{kind.lower()}".encode()
    assert tbl.num_rows == len(geoms) and tbl.column("geometry").null_count == sum(g is None for g in geoms)
    inter = marquet.read_arrow(p, geometry_encoding="geoarrow-interleaved")
    assert inter.schema.field("geometry").metadata[b"ARROW:extension:name"] == f"geoarrow.{kind.lower()}".encode()
    _same_coordinates(tbl.column("geometry"), inter.column("geometry"))
    back = marquet.read_geodataframe(p).sort_values("id")
    assert back.crs == src.crs
    # GEOS's WKB reader on the WKB read is the oracle for coordinates (the write may turn
    # rings to the column's ORIENTATION); the source for the geometries' types and shapes.
    wkb = marquet.read_arrow(p).sort_by("id").column("geometry").to_pylist()
    for a, b, w in zip(back.geometry, src.geometry, wkb):
        assert (a is None) == (b is None) == (w is None), (a, b)
        if b is not None:
            assert a.geom_type == b.geom_type and a.equals_exact(shapely.from_wkb(w), 0), (a, w)
            assert a.is_empty == b.is_empty and (a.is_empty or a.equals(b)), (a, b)


@pytest.mark.parametrize("name", ["points", "polygons"])
def test_query_reads_the_geometries_it_returned_as_a_read_of_its_rows(data_file, name):
    """``read_arrow(bbox=...)`` takes the geometry column from the query's own answer
    (issue #33 item 1); the table must equal a read of the same rows by number, which reads
    every column from the file — with and without ``where``, with column selections, and
    through GeoArrow (where the query's WKB is not used)."""
    with marquet.Table(data_file, name) as t:
        checked = 0
        boxes = {
            "points": [(-25, 25, 45, 75), (0, 40, 10, 50), (-180, -90, 180, 90), (100, -10, 140, 20)],
            "polygons": [(0, 0, 500, 500), (250, 600, 400, 990), (-1e6, -1e6, 1e6, 1e6), (2000, 0, 3000, 10)],
        }[name]
        for box in boxes:
            for where in [None, "id >= 120"]:
                rows = [int(r) for r in t.query(box, where=where)]
                checked += len(rows)
                for columns in [None, ["geometry", "id"], ["id"]]:
                    got = t.read_arrow(columns=columns, bbox=box, where=where)
                    want = t.read_arrow(columns=columns, rows=rows)
                    assert got.equals(want), (box, where, columns)
                got = t.read_arrow(bbox=box, where=where, geometry_encoding="geoarrow")
                assert got.equals(t.read_arrow(rows=rows, geometry_encoding="geoarrow")), (box, where)
        assert checked > 50

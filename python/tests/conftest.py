"""Shared fixtures: seeded GeoDataFrames of points and polygons with nulls, written once per
session through the package under test."""

from __future__ import annotations

import pathlib

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
TESTDATA = REPO / "testdata"


def make_points(n: int = 500, seed: int = 1):
    import geopandas
    import pandas as pd
    import shapely

    rng = np.random.default_rng(seed)
    x = rng.uniform(-20.0, 40.0, n)
    y = rng.uniform(30.0, 70.0, n)
    geoms = np.array(shapely.points(x, y), dtype=object)
    geoms[[i for i in (3, 77, 200) if i < n]] = None  # null geometries
    if n > 5:
        geoms[5] = shapely.Point()  # an empty point
    value = rng.normal(size=n)
    value[[i for i in (1, 2, 50) if i < n]] = np.nan
    return geopandas.GeoDataFrame(
        {
            "id": np.arange(n, dtype=np.int64),
            "name": [f"p{i}" if i % 17 else None for i in range(n)],
            "value": pd.array(np.where(np.isnan(value), None, value), dtype="Float64"),
            "count": pd.array([None if i % 11 == 0 else i * 3 for i in range(n)], dtype="Int32"),
            "flag": [bool(i % 2) for i in range(n)],
        },
        geometry=geopandas.GeoSeries(geoms, crs="EPSG:4326"),
    )


def make_polygons(n: int = 300, seed: int = 2):
    import geopandas
    import shapely

    rng = np.random.default_rng(seed)
    geoms = []
    for i in range(n):
        cx, cy = rng.uniform(0, 1000, 2)
        r = rng.uniform(1, 30)
        if i % 10 == 0:
            geoms.append(
                shapely.MultiPolygon([shapely.box(cx, cy, cx + r, cy + r), shapely.box(cx + 2 * r, cy, cx + 3 * r, cy + r)])
            )
        elif i % 7 == 0:
            geoms.append(None)
        else:
            geoms.append(shapely.Point(cx, cy).buffer(r, quad_segs=4))
    return geopandas.GeoDataFrame(
        {"id": np.arange(n, dtype=np.int64), "area_class": [("small", "large")[i % 2] for i in range(n)]},
        geometry=geopandas.GeoSeries(geoms, crs="EPSG:3857"),
    )


@pytest.fixture(scope="session")
def points():
    return make_points()


@pytest.fixture(scope="session")
def polygons():
    return make_polygons()


@pytest.fixture(scope="session")
def data_file(tmp_path_factory, points, polygons):
    """One HDF5 file with /points (native point column) and /polygons (default layout)."""
    import marquet

    p = tmp_path_factory.mktemp("data") / "data.h5"
    assert marquet.write(p, points, "points") == len(points)
    assert marquet.write(p, polygons, "polygons") == len(polygons)
    return p

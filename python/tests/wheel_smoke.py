"""What a colleague does first with the wheel (issue #30), run by scripts/test-python.sh in a
fresh venv where the system's PROJ, SQLite and HDF5 are hidden (a mount namespace binds
/dev/null over them): resolve EPSG codes, reproject, read a GeoPackage written by GDAL,
and see the default CRS as OGC:CRS84. Not collected by pytest (no test_ prefix): run as
``python wheel_smoke.py REPO``. Exit status 0 = all good; every check prints one line.
"""

import json
import os
import sys
import tempfile

import marquet

repo = sys.argv[1]
crs_dir = os.path.join(repo, "testdata", "crs")
expected = json.load(open(os.path.join(crs_dir, "expected.json")))
tmp = tempfile.mkdtemp()


def close(a, b, tol):
    return all(abs(x - y) <= tol for p, q in zip(a, b) for x, y in zip(p, q))


def coords(gdf):
    return sorted((g.x, g.y) for g in gdf.geometry)


# 1. the bundled PROJ database is the one in use
here = os.path.dirname(marquet.__file__)
assert os.path.isfile(os.path.join(here, "proj", "proj.db")), "proj.db not in the wheel"
print("ok: proj.db carried by the wheel")

# 1b. the libproj in use is the one the wheel carries (the crate opens PROJ at run time,
#     issue #33; the package names the file in marquet.libs/)
from marquet._marquet import _proj_library

lib = _proj_library()
assert os.sep + "marquet.libs" + os.sep in lib and os.path.basename(lib).startswith("libproj"), lib
print("ok: PROJ loaded from the wheel:", os.path.basename(lib))

# 2. a GeoPackage written by GDAL in EPSG:25832 (its SRS resolved by PROJ), reprojected to
#    EPSG:3857 on the way in; coordinates equal pyproj's within 1 mm (expected.json)
out = os.path.join(tmp, "merc.h5")
r = marquet.convert(os.path.join(crs_dir, "gdal_25832.gpkg"), out, table="/cities", to_crs="EPSG:3857")
assert r["rows"] == len(expected["merc3857"]), r
gdf = marquet.read_geodataframe(out)
assert gdf.crs is not None and gdf.crs.to_epsg() == 3857, gdf.crs
got = coords(gdf)
want = sorted(tuple(p) for p in expected["merc3857"])
assert close(got, want, 1e-3), (got, want)
print("ok: GeoPackage (EPSG:25832) read, reprojected to EPSG:3857 within 1 mm of pyproj")

# 3. the default CRS is OGC:CRS84, as GeoParquet readers and geopandas present it
out = os.path.join(tmp, "lonlat.h5")
marquet.convert(os.path.join(crs_dir, "gdal_4326.gpkg"), out, table="/cities")
gdf = marquet.read_geodataframe(out)
assert gdf.crs is not None and gdf.crs.to_string() == "OGC:CRS84", gdf.crs
assert close(coords(gdf), sorted(tuple(p) for p in expected["lonlat"]), 1e-9)
print("ok: default CRS presented as OGC:CRS84")

# 4. EPSG:3857 stated on a file that names no CRS resolves (PROJJSON stored)
gj = os.path.join(tmp, "p.geojson")
with open(gj, "w") as f:
    json.dump({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"n": 1}, "geometry": {"type": "Point", "coordinates": [1000.0, 2000.0]}}]}, f)
out = os.path.join(tmp, "stated.h5")
marquet.convert(gj, out, table="/p", crs="EPSG:3857")
crs = marquet.read_geodataframe(out).crs
assert crs is not None and crs.to_epsg() == 3857, crs
print("ok: EPSG:3857 resolved")
print("wheel smoke: all checks passed")

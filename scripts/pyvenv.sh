#!/usr/bin/env bash
# Create the test-only Python venv used by tests/geoparquet_peers.rs to check exported
# GeoParquet files with pyarrow + geopandas, and by the cross-format comparison
# (scripts/bench-compare.sh: pyarrow, pyogrio, whose wheels bundle GDAL, and shapely), and by
# tests/plain_hdf5.rs to read default Marquet files with h5py alone (no hdf5plugin), and by
# tests/crs.rs and tests/gis_formats.rs (DuckDB's ST_CRS; GDAL through pyogrio reads the
# FlatGeobuf, GeoPackage and Shapefile files Marquet writes; testdata/crs/make_fixtures.py),
# and by tests/schemas.rs (geopandas dtypes and bbox reads; testdata/schemas/make_fixtures.py),
# and by tests/netcdf.rs (netCDF4-python, xarray with its netcdf4 and h5netcdf engines read a
# netCDF-4 file holding Marquet tables; testdata/netcdf/make_fixture.py,
# testdata/strings/make_fixtures.py), and by the remote-read tests and benchmark of issue #34
# (moto in server mode as the S3 endpoint on 127.0.0.1, dev/moto.rs; boto3; h5coro, the
# ICESat-2 project's cloud HDF5 reader, as the benchmark's HDF5 anchor: scripts/bench-remote.sh).
# h5coro is pinned: without the pin pip's resolver backtracks to the old 0.0.x line (no HTTP
# driver) to satisfy earthaccess/aiobotocore's botocore pin.
# Idempotent; prints the venv path.
#   VENV defaults to $MARQUET_PYVENV, else ${XDG_CACHE_HOME:-~/.cache}/marquet/pyvenv (where the tests look)
set -euo pipefail
VENV="${VENV:-${MARQUET_PYVENV:-${XDG_CACHE_HOME:-$HOME/.cache}/marquet/pyvenv}}"
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import pyarrow, geopandas, shapely, pyogrio, h5py, duckdb, pyproj, netCDF4, xarray, h5netcdf, moto.server, boto3, h5coro.webdriver' 2>/dev/null; then
  echo "$VENV"
  exit 0
fi
if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
  # Debian splits venv/ensurepip out of python3.
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
  fi
fi
mkdir -p "$(dirname "$VENV")"
python3 -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
# The versions are pinned by scripts/pyvenv-constraints.txt (a fresh resolve backtracks for
# minutes); MARQUET_PYVENV_UNPINNED=1 resolves afresh, to regenerate it.
constraints=(-c "$(dirname "${BASH_SOURCE[0]}")/pyvenv-constraints.txt")
[ "${MARQUET_PYVENV_UNPINNED:-}" = 1 ] && constraints=()
"$VENV/bin/python" -m pip install --quiet "${constraints[@]}" pyarrow geopandas shapely pyogrio h5py duckdb pyproj netCDF4 xarray h5netcdf 'moto[server]==5.2.5' boto3 'h5coro==1.0.7'
"$VENV/bin/python" -c 'import pyarrow, geopandas, shapely, pyogrio; print("pyarrow", pyarrow.__version__, "geopandas", geopandas.__version__, "pyogrio", pyogrio.__version__, "GDAL", pyogrio.__gdal_version_string__)' >&2
echo "$VENV"

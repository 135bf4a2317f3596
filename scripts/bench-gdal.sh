#!/usr/bin/env bash
# Read speed of the GDAL driver plugin against GDAL's FlatGeobuf driver on the same data
# (issue #36; gdal/README.md, "Speed"): builds libmarquet and the plugin, then runs
# gdal/bench/bench_gdal.py (medians; ratios Marquet / FlatGeobuf).
#
#   scripts/bench-gdal.sh [DIR] [--points N] [--polygons N] [--runs R]
#
# DIR (default target/bench-gdal) keeps the generated data between runs. Not part of CI.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-${CARGO_TARGET_DIR:-target}/bench-gdal}
[ $# -gt 0 ] && shift
target=${CARGO_TARGET_DIR:-target}
cargo build --release -p marquet-capi
bash gdal/build.sh --libdir "$target/release"
GDAL_DRIVER_PATH=$PWD/gdal/build /usr/bin/python3 gdal/bench/bench_gdal.py "$dir" "$@"

#!/usr/bin/env bash
# The cross-format comparison (issue #10): Marquet vs GeoParquet (pyarrow), FlatGeobuf and
# GeoPackage (GDAL via pyogrio) on the same seeded data and query windows.
#
#   bash scripts/bench-compare.sh [--quick] [--reps N]
#
# 1. creates or reuses the Python venv of scripts/pyvenv.sh (pyarrow, pyogrio, shapely);
# 2. builds `marquet` in release and runs `marquet bench`: generates 1,000,000 clustered
#    points, 200,000 polygons (16-32 vertices) and 200 windows (--quick: 100,000 / 20,000 /
#    50) from src/bin/marquet/synth.rs, writes them in raw form to target/bench-compare/ and measures
#    Marquet (write, size, full read, one query per window with the file opened afresh),
#    then the anchor of issue #20: the same data written as native FlatGeobuf (the
#    `flatgeobuf` crate, packed R-tree) and every window answered by both, cold (file
#    opened per window) and warm (opened once; Marquet through one SpatialReader), as a
#    count and as ids + WKB (anchor.json);
# 3. runs benches/compare/compare.py, which measures the other formats on the same data
#    (GeoParquet also cold and warm), checks every format returns the same ids for every
#    window, prints the table and the cold / warm table with the issue #20 targets, and
#    writes target/bench-compare.json (target/bench-compare-quick.json with --quick).
# Exit status 1 when the formats disagree on a window.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
reps=()
json=target/bench-compare.json
work=target/bench-compare
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick); json=target/bench-compare-quick.json; work=target/bench-compare-quick ;;
    --reps) reps=(--reps "$2"); shift ;;
    *) echo "usage: bash scripts/bench-compare.sh [--quick] [--reps N]" >&2; exit 2 ;;
  esac
  shift
done
# shellcheck source=/dev/null
source scripts/bootstrap.sh
VENV="$(bash scripts/pyvenv.sh)"
cargo build --release --bin marquet
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cpus" >&2
target/release/marquet bench "${quick[@]}" "${reps[@]}" --out "$work"
"$VENV/bin/python" benches/compare/compare.py --work "$work" --json "$json" "${reps[@]}"

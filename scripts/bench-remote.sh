#!/usr/bin/env bash
# The benchmark of issue #34: Marquet read over HTTP against FlatGeobuf's own HTTP reader
# (`HttpFgbReader`, the flatgeobuf crate's `http` feature) and h5coro (PyPI, the ICESat-2
# project's cloud HDF5 reader) as the HDF5 anchor, on the benchmark's points and polygons
# files and its windows, through one in-process test server on 127.0.0.1 that counts
# requests and bytes (src/bin/marquet/range_server.rs), at 0 and 50 ms injected latency per
# request. docs/PERFORMANCE.md, "Over HTTP (issue #34)", has one run's numbers.
#
#   bash scripts/bench-remote.sh [--quick] [--dir DIR] [--windows N] [--latency-ms 0,50]
#
# 1. creates or reuses the test venv of scripts/pyvenv.sh (h5coro);
# 2. builds `marquet` in release with the off-by-default `fgb-http` feature;
# 3. unless DIR already holds them, runs `marquet bench --out DIR` (the data, the Marquet
#    files, the FlatGeobuf files of the issue #20 anchor, windows.txt, marquet.json; DIR
#    defaults to target/bench-compare, or target/bench-compare-quick with --quick);
# 4. runs `marquet bench --remote --out DIR`: every window answered cold by every reader,
#    the answers checked equal (exit 2 otherwise), medians printed, DIR/remote.json written.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
dir=target/bench-compare
pass=()
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=(--quick); dir=target/bench-compare-quick ;;
    --dir) dir="$2"; shift ;;
    --windows) pass+=(--windows "$2"); shift ;;
    --latency-ms) pass+=(--latency-ms "$2"); shift ;;
    *) echo "usage: bash scripts/bench-remote.sh [--quick] [--dir DIR] [--windows N] [--latency-ms 0,50]" >&2; exit 2 ;;
  esac
  shift
done
# shellcheck source=/dev/null
source scripts/bootstrap.sh
VENV="$(bash scripts/pyvenv.sh)"
cargo build --release --features fgb-http --bin marquet
for f in points.h5 polygons.h5 points.fgb polygons.fgb windows.txt marquet.json; do
  if [ ! -f "$dir/$f" ]; then
    target/release/marquet bench "${quick[@]}" --out "$dir"
    break
  fi
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) cpus" >&2
target/release/marquet bench --remote --out "$dir" --python "$VENV/bin/python" "${pass[@]}"

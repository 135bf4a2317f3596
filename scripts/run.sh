#!/usr/bin/env bash
# scripts/run.sh — build (once) and run the release `marquet` binary, on a fresh machine too:
#
#   bash scripts/run.sh demo --out /tmp/marquet-demo
#   bash scripts/run.sh convert points.parquet points.h5
#
# It sources scripts/bootstrap.sh first, which installs cmake >= 3.26 with pip when the
# machine has none (the bundled HDF5 is built with CMake), then runs
# `cargo run --release -- ARGS`. Needs only Rust, a C compiler and Python 3 with pip.
# The first build compiles HDF5 from source (a few minutes on 2 cores); later runs start
# at once. Set CARGO_TARGET_DIR to share a build directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# bootstrap.sh reports on stderr; it returns non-zero with the reason when it cannot help.
source scripts/bootstrap.sh
exec cargo run --release --quiet --bin marquet -- "$@"

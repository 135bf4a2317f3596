#!/usr/bin/env bash
# scripts/test.sh — THE test command of Marquet (README and .ci/run use it):
#
#   bash scripts/test.sh [extra cargo test args...]
#
# 1. source scripts/bootstrap.sh   (cmake >= 3.26 on PATH, toolchain checks, and the system
#    packages of the build and the tests: apt-get as root, else the exact command to run)
# 2. h5dump >= 1.12 via scripts/build-h5dump.sh (cached after the first build,
#    ~3.5 min from scratch on 2 cores), exported as MARQUET_H5DUMP
# 3. cargo test --workspace "$@"   (unit, integration and doc tests; plain
#    cargo test, cargo-nextest is not used; includes scripts/test-install.sh)
# 4. without arguments: cargo doc -D warnings, cargo clippy -D warnings, scripts/check-msrv.sh,
#    scripts/test-package.sh
#
# Env contract for tests: MARQUET_H5DUMP = absolute path of an h5dump >= 1.12;
# MARQUET_REQUIRE_H5DUMP=1 = the golden-DDL tests fail (not skip) without one.
# If MARQUET_H5DUMP is already set it is used as is (after a sanity check).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

_t() { echo "[test.sh] $1 took $(( SECONDS - $2 ))s" >&2; }

t=$SECONDS
MARQUET_NEEDS="build test" source scripts/bootstrap.sh
_t bootstrap "$t"

t=$SECONDS
if [ -n "${MARQUET_H5DUMP:-}" ]; then
    [ -x "$MARQUET_H5DUMP" ] || { echo "[test.sh] ERROR: MARQUET_H5DUMP=$MARQUET_H5DUMP is not executable" >&2; exit 1; }
    echo "[test.sh] using preset MARQUET_H5DUMP=$MARQUET_H5DUMP" >&2
else
    MARQUET_H5DUMP="$(bash scripts/build-h5dump.sh | tail -n1)"
fi
ver="$("$MARQUET_H5DUMP" --version 2>&1 | head -n1)"
case "$ver" in
    *"Version 1.1"[2-9]*|*"Version "[2-9].*) ;;
    *) echo "[test.sh] ERROR: $MARQUET_H5DUMP reports '$ver'; need h5dump >= 1.12" >&2; exit 1 ;;
esac
export MARQUET_H5DUMP
# The golden-DDL tests fail instead of skipping when they find no h5dump.
export MARQUET_REQUIRE_H5DUMP=1
echo "[test.sh] MARQUET_H5DUMP=$MARQUET_H5DUMP ($ver)" >&2
_t h5dump "$t"

t=$SECONDS
# The committed C header must match what cbindgen generates from capi/ today.
t=$SECONDS
bash scripts/check-header.sh
_t "header check" "$t"
# src/convert is a star around Arrow: its module graph has no cycle (issue #32).
python3 scripts/convert-import-graph.py
# CI checks exported GeoParquet with pyarrow + geopandas in a test-only venv.
if [ -n "${CI:-}" ]; then bash scripts/pyvenv.sh >/dev/null; fi

# The C ABI tests link the C programs against target/<profile>/libmarquet.{so,a}, which
# `cargo test` does not produce on its own.
cargo build -p marquet-capi

echo "[test.sh] + cargo test --workspace $*" >&2
cargo test --workspace "$@"
_t "cargo test" "$t"

# The crate and its documentation as users get them (docs/VERSIONING.md): rustdoc without
# warnings (broken intra-doc links fail; the doc examples ran in cargo test), what one
# toolchain can check of rust-version, and the crates.io package built and run from a
# fresh project. (libmarquet's install test, scripts/test-install.sh, runs inside cargo
# test: capi/tests/c_api.rs.) Skipped when cargo test was given a filter.
if [ "$#" = 0 ]; then
    t=$SECONDS
    # Default features (the `mpio` feature needs a parallel HDF5: scripts/test-mpi.sh).
    RUSTDOCFLAGS="-D warnings" cargo doc -p marquet --no-deps
    # clippy clean, tests/benches/examples included (issue #17; rustup's clippy component).
    if cargo clippy --version >/dev/null 2>&1; then
        cargo clippy --workspace --all-targets -- -D warnings
    elif [ -n "${CI:-}" ]; then
        echo "[test.sh] ERROR: cargo clippy is not installed (rustup component add clippy)" >&2
        exit 1
    fi
    bash scripts/check-msrv.sh
    bash scripts/test-package.sh
    _t "doc, rust-version and package checks" "$t"
fi

# libmarquet against a shared HDF5 1.14 sharing one open file with a C program's own
# HDF5 calls: a second build of the crates into <target>/shared-hdf5 (docs/FFI.md).
if [ -n "${CI:-}" ] || [ "${MARQUET_TEST_SHARED_HDF5:-}" = 1 ]; then
    t=$SECONDS
    bash scripts/test-shared-hdf5.sh
    _t "shared-HDF5 build and test" "$t"
fi

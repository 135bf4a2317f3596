#!/usr/bin/env bash
# Build the Python package (python/) as a binary wheel with maturin, install the wheel into
# a FRESH venv (no Rust and no cmake on PATH while pip installs and pytest runs), and run
# pytest on python/tests/. Exit status: pytest's.
#   CARGO_TARGET_DIR: where cargo builds (default: the CI cache ~/.cache/marquet/ci-target,
#     whose release build of bundled HDF5 the wheel build reuses: the package's Cargo.lock
#     is the root's, so the shared dependencies resolve to the same versions).
#   PYTEST_ARGS: extra pytest arguments.
# Venvs (reused approach of scripts/pyvenv.sh, under ~/.cache/marquet/):
#   pyvenv-maturin   maturin itself (reused across runs);
#   pyvenv-wheeltest recreated every run: the wheel + pytest, geopandas, pyarrow, duckdb,
#                    h5py, hdf5plugin (from pip's cache after the first run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/marquet"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$CACHE/ci-target}"
if ! command -v cmake >/dev/null 2>&1 || ! command -v cargo >/dev/null 2>&1; then
  # shellcheck source=/dev/null
  source scripts/bootstrap.sh >/dev/null
fi
if ! python3 -m venv --help >/dev/null 2>&1 || ! python3 -c 'import ensurepip' 2>/dev/null; then
  if command -v apt-get >/dev/null 2>&1; then apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null; fi
fi

# 1. maturin
MVENV="$CACHE/pyvenv-maturin"
if ! [ -x "$MVENV/bin/maturin" ]; then
  python3 -m venv "$MVENV"
  "$MVENV/bin/python" -m pip install --quiet --upgrade pip
  "$MVENV/bin/python" -m pip install --quiet 'maturin>=1.5,<2'
fi

# 2. the wheel (release; HDF5 linked statically through the crate's default features).
# Not --locked: python/Cargo.lock started as a copy of the root's and cargo adds what the
# root gains later (pinned versions stay; refresh with `cp Cargo.lock python/`, then build).
WHEELS="$CARGO_TARGET_DIR/wheels-marquet"
rm -rf "$WHEELS"
echo "::: maturin build --release (CARGO_TARGET_DIR=$CARGO_TARGET_DIR)" >&2
( cd python && nice "$MVENV/bin/maturin" build --release --interpreter python3 --out "$WHEELS" )
WHEEL="$(ls "$WHEELS"/marquet-*.whl | head -n1)"
echo "::: wheel: $WHEEL ($(du -h "$WHEEL" | cut -f1))" >&2

# 3. a fresh venv, without Rust or cmake on PATH
TVENV="$CACHE/pyvenv-wheeltest"
CLEAN_PATH="$(printf '%s' "$PATH" | tr ':' '\n' | grep -v -e '/.cargo/bin' -e 'cmake' -e 'pyvenv-maturin' | paste -sd: -)"
PATH="$CLEAN_PATH" python3 -m venv --clear "$TVENV"
if PATH="$CLEAN_PATH" command -v cargo >/dev/null 2>&1; then
  echo "note: cargo is still on the cleaned PATH ($(PATH="$CLEAN_PATH" command -v cargo))" >&2
fi
PATH="$TVENV/bin:$CLEAN_PATH" "$TVENV/bin/python" -m pip install --quiet --upgrade pip
PATH="$TVENV/bin:$CLEAN_PATH" "$TVENV/bin/python" -m pip install --quiet "$WHEEL[test]"

# 4. pytest, from outside the source tree so that `import marquet` is the installed wheel
cd "$TVENV"
set +e
PATH="$TVENV/bin:$CLEAN_PATH" MARQUET_REPO="$ROOT" "$TVENV/bin/python" -m pytest -q -p no:cacheprovider \
  "$ROOT/python/tests" ${PYTEST_ARGS:-}
rc=$?
set -e
echo "::: pytest exit status $rc" >&2
exit "$rc"

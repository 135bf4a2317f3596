#!/usr/bin/env bash
# scripts/test-shared-hdf5.sh — libmarquet linked against a shared HDF5 instead of the
# bundled static one, and a C program that shares one open file with it (docs/FFI.md,
# "Interop with a caller's own HDF5"; HEP002 §1.1).
#
#   bash scripts/test-shared-hdf5.sh            # check
#   MARQUET_BLESS=1 bash scripts/test-shared-hdf5.sh   # rewrite the expected files
#
# 1. HDF5_DIR = the shared HDF5 1.14.5 of `scripts/build-h5dump.sh --shared-lib` (built
#    from Debian trixie's source package, cached in ~/.cache/marquet), unless HDF5_DIR is
#    already set.
# 2. cargo build -p marquet-capi --no-default-features into its own target directory
#    ($CARGO_TARGET_DIR or target, + /shared-hdf5): a second build of the crates (no
#    GeoParquet), timed.
# 3. libmarquet.so must need libhdf5.so and define no H5* symbol of its own.
# 4. tests/c/shared_hdf5.c, compiled with -Wall -Wextra -Werror against both libraries,
#    writes a file mixing its own dataset and two Marquet tables; its stdout is compared
#    with tests/c/shared_hdf5.expected and `h5dump -p` of the file with
#    testdata/golden/capi_shared_hdf5.ddl (file path replaced by <FILE>).
# 5. The same program under valgrind (when installed): no errors, no leaks.
#
# scripts/test.sh runs this under CI (or with MARQUET_TEST_SHARED_HDF5=1).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
_t() { echo "[test-shared-hdf5] $1 took $(( SECONDS - $2 ))s" >&2; }

command -v cmake >/dev/null 2>&1 || source scripts/bootstrap.sh

t=$SECONDS
if [ -z "${HDF5_DIR:-}" ]; then
    HDF5_DIR="$(bash scripts/build-h5dump.sh --shared-lib | tail -n1)"
fi
export HDF5_DIR
[ -f "$HDF5_DIR/include/hdf5.h" ] || { echo "[test-shared-hdf5] no hdf5.h under HDF5_DIR=$HDF5_DIR" >&2; exit 1; }
_t "shared HDF5 ($HDF5_DIR)" "$t"

H5DUMP="${MARQUET_H5DUMP:-$(bash scripts/build-h5dump.sh | tail -n1)}"

t=$SECONDS
target="${CARGO_TARGET_DIR:-target}/shared-hdf5"
cargo build -p marquet-capi --no-default-features --target-dir "$target"
lib="$(cd "$target/debug" && pwd)"
_t "cargo build -p marquet-capi --no-default-features" "$t"

t=$SECONDS
if ! readelf -d "$lib/libmarquet.so" | grep -q 'NEEDED.*libhdf5\.so'; then
    echo "[test-shared-hdf5] $lib/libmarquet.so does not link libhdf5.so" >&2
    exit 1
fi
own=$(nm -D --defined-only "$lib/libmarquet.so" | awk '$3 ~ /^H5/' | wc -l)
if [ "$own" != 0 ]; then
    echo "[test-shared-hdf5] $lib/libmarquet.so defines $own H5* symbols of its own" >&2
    exit 1
fi

# Programs linked with -lmarquet load the soname libmarquet.so.N (capi/build.rs), which an
# install links to the library (scripts/install-capi.sh); cargo makes no such link.
soname=$(readelf -d "$lib/libmarquet.so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
ln -sfn libmarquet.so "$lib/$soname"

work="$(mktemp -d "${TMPDIR:-/tmp}/marquet-shared-hdf5.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cc -Wall -Wextra -Werror -std=c11 -g -Iinclude -I"$HDF5_DIR/include" tests/c/shared_hdf5.c -o "$work/shared_hdf5" \
    -L"$lib" -lmarquet -Wl,-rpath,"$lib" -L"$HDF5_DIR/lib" -lhdf5 -Wl,-rpath,"$HDF5_DIR/lib" -lm
h5="$work/shared.h5"
"$work/shared_hdf5" "$h5" >"$work/stdout"
"$H5DUMP" -p "$h5" | sed "s|$h5|<FILE>|g" >"$work/ddl"

compare() { # compare ACTUAL COMMITTED
    if [ "${MARQUET_BLESS:-}" = 1 ]; then
        cp "$1" "$2"
        echo "[test-shared-hdf5] blessed $2" >&2
    elif ! diff -u "$2" "$1"; then
        echo "[test-shared-hdf5] output differs from $2 (MARQUET_BLESS=1 rewrites it; review the diff)" >&2
        exit 1
    fi
}
compare "$work/stdout" tests/c/shared_hdf5.expected
compare "$work/ddl" testdata/golden/capi_shared_hdf5.ddl

if command -v valgrind >/dev/null 2>&1; then
    valgrind --leak-check=full --error-exitcode=1 --errors-for-leak-kinds=definite,indirect,possible \
        --suppressions=capi/valgrind.supp "$work/shared_hdf5" "$work/vg.h5" >"$work/vg.stdout" 2>"$work/vg.stderr" \
        || { cat "$work/vg.stderr" >&2; exit 1; }
    grep -q "ERROR SUMMARY: 0 errors" "$work/vg.stderr" || { cat "$work/vg.stderr" >&2; exit 1; }
    diff -u tests/c/shared_hdf5.expected "$work/vg.stdout"
    echo "[test-shared-hdf5] valgrind: $(grep -o 'ERROR SUMMARY: [0-9]* errors' "$work/vg.stderr"), $(grep -o 'All heap blocks were freed[^=]*\|definitely lost: [^=]*' "$work/vg.stderr" | head -1)" >&2
else
    echo "[test-shared-hdf5] valgrind is not installed: skipping the memcheck run" >&2
fi
_t "C program, h5dump and valgrind checks" "$t"
echo "[test-shared-hdf5] ok: libmarquet on $HDF5_DIR shares one open file with the program's own HDF5 calls"

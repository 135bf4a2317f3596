#!/usr/bin/env bash
# scripts/test-install.sh — libmarquet as a system package, tested the way a user meets it:
#
# 1. scripts/install-capi.sh into a temporary prefix;
# 2. the layout: libmarquet.so.X.Y.Z with soname libmarquet.so.N (N = MARQUET_ABI_VERSION
#    of the installed header), the libmarquet.so.N and libmarquet.so links, libmarquet.a,
#    marquet.h, marquet.f90, marquet.pc; `pkg-config --modversion marquet` = X.Y.Z =
#    MARQUET_VERSION_STRING = capi/Cargo.toml's version;
# 3. with nothing but `pkg-config --cflags --libs marquet` (and the pkg-config variable
#    fortran_module for Fortran), builds and runs: examples/c/stations.c (stdout compared
#    with examples/c/stations.expected), examples/c/version_check.c (header vs library at
#    run time), the README's "Use it from C" program on the file stations.c wrote; and,
#    when gfortran is installed, examples/fortran/stations.f90 (stdout compared) and the
#    README's "Use it from Fortran" program. Each program must record NEEDED
#    libmarquet.so.N and run through the prefix's links alone.
#
# usage: scripts/test-install.sh [--debug] [--no-build]   (options of install-capi.sh;
#        CARGO_TARGET_DIR as for cargo). capi/tests/c_api.rs runs it with --debug
#        --no-build on the library `cargo test` built; run alone it builds the release one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/marquet-install.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "[test-install] FAIL: $*" >&2; exit 1; }
say() { echo "[test-install] $*" >&2; }

bash scripts/install-capi.sh "$@" "$prefix" >&2

# ---- 2. layout and versions ---------------------------------------------------------
version=$(sed -n 's/^version = "\(.*\)"/\1/p' capi/Cargo.toml | head -1)
abi=$(sed -n 's/^#define MARQUET_ABI_VERSION \([0-9]*\)$/\1/p' "$prefix/include/marquet.h")
[ -n "$abi" ] || fail "the installed marquet.h has no MARQUET_ABI_VERSION"
lib=$prefix/lib
[ -f "$lib/libmarquet.so.$version" ] && [ ! -L "$lib/libmarquet.so.$version" ] || fail "lib/libmarquet.so.$version is not a file"
[ "$(readlink "$lib/libmarquet.so.$abi")" = "libmarquet.so.$version" ] || fail "lib/libmarquet.so.$abi does not link to libmarquet.so.$version"
[ "$(readlink "$lib/libmarquet.so")" = "libmarquet.so.$abi" ] || fail "lib/libmarquet.so does not link to libmarquet.so.$abi"
for f in lib/libmarquet.a include/marquet.h include/marquet.f90 lib/pkgconfig/marquet.pc; do
    [ -f "$prefix/$f" ] || fail "$f is not installed"
done
soname=$(readelf -d "$lib/libmarquet.so.$version" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
[ "$soname" = "libmarquet.so.$abi" ] || fail "soname is '$soname', the header says libmarquet.so.$abi"
export PKG_CONFIG_PATH=$lib/pkgconfig
modversion=$(pkg-config --modversion marquet)
[ "$modversion" = "$version" ] || fail "pkg-config --modversion marquet is $modversion, capi/Cargo.toml says $version"
grep -q "^#define MARQUET_VERSION_STRING \"$version\"$" "$prefix/include/marquet.h" || fail "marquet.h does not say version $version"
fmod=$(pkg-config --variable=fortran_module marquet)
[ "$fmod" = "$prefix/include/marquet.f90" ] || fail "pkg-config fortran_module is '$fmod'"
say "layout ok: libmarquet.so.$version, soname $soname, pkg-config $modversion"

# The README's program in the ```LANG block of section "## HEADING".
readme_block() {
    awk -v h="## $1" -v lang="$2" '
        $0 == h { sec = 1; next }
        sec && /^## / { exit }
        sec && $0 == "```" lang { code = 1; next }
        code && /^```/ { exit }
        code { print }' "$root/README.md"
}

# A program must load libmarquet through the soname link of the prefix.
check_needed() {
    readelf -d "$1" | grep -q "NEEDED.*\[libmarquet\.so\.$abi\]" || fail "$1 does not record NEEDED libmarquet.so.$abi"
}

# ---- 3. C ---------------------------------------------------------------------------
cflags=$(pkg-config --cflags --libs marquet)
cd "$work"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror "$root/examples/c/stations.c" -o stations $cflags -lm
check_needed stations
./stations stations.h5 >stations.out
diff -u "$root/examples/c/stations.expected" stations.out || fail "examples/c/stations.c: stdout differs from stations.expected"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror "$root/examples/c/version_check.c" -o version_check $cflags
out=$(./version_check) || fail "version_check: $out"
[ "$out" = "header $version (ABI $abi), library $version: compatible" ] || fail "version_check printed '$out'"
readme_block "Use it from C" c >rows.c
[ "$(wc -l <rows.c)" -ge 5 ] || fail "README has no C program under \"Use it from C\""
# shellcheck disable=SC2086
cc -std=c11 -Wall -Wextra -Werror rows.c -o rows $cflags
check_needed rows
out=$(./rows stations.h5)
[ "$out" = "/stations: 3 rows, libmarquet $version" ] || fail "README C program printed '$out'"
if err=$(./rows missing.h5 2>&1); then fail "README C program succeeded on a missing file"; fi
[ "$err" = "rows: i/o error" ] || fail "README C program's error: '$err'"
say "C: stations.c, version_check.c and the README program built with pkg-config and ran"

# ---- 3. Fortran ---------------------------------------------------------------------
if ! command -v gfortran >/dev/null 2>&1; then
    say "gfortran is not installed: Fortran programs skipped"
    exit 0
fi
libs=$(pkg-config --libs marquet)
# shellcheck disable=SC2086
gfortran -Wall -Werror -std=f2018 "$fmod" "$root/examples/fortran/stations.f90" -o stations_f $libs
check_needed stations_f
./stations_f stations_f.h5 >stations_f.out
diff -u "$root/examples/fortran/stations.expected" stations_f.out || fail "examples/fortran/stations.f90: stdout differs"
readme_block "Use it from Fortran" fortran >rows.f90
[ "$(wc -l <rows.f90)" -ge 5 ] || fail "README has no Fortran program under \"Use it from Fortran\""
# shellcheck disable=SC2086
gfortran -Wall -Werror -std=f2018 "$fmod" rows.f90 -o rows_f $libs
check_needed rows_f
out=$(./rows_f stations_f.h5)
[ "$out" = "/stations: 3 rows, libmarquet $version" ] || fail "README Fortran program printed '$out'"
if err=$(./rows_f missing.h5 2>&1); then fail "README Fortran program succeeded on a missing file"; fi
[[ "$err" == *"ERROR STOP missing.h5: "* ]] || fail "README Fortran program's error: '$err'"
say "Fortran: the module, stations.f90 and the README program built with pkg-config and ran"

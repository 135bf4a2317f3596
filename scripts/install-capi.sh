#!/usr/bin/env bash
# Build libmarquet and install it under PREFIX (docs/FFI.md, "Installing"):
#
#   PREFIX/lib/libmarquet.so.X.Y.Z              the shared library, soname libmarquet.so.N
#   PREFIX/lib/libmarquet.so.N -> .so.X.Y.Z     what programs load (N = the C ABI number)
#   PREFIX/lib/libmarquet.so   -> .so.N         what `-lmarquet` finds when linking
#   PREFIX/lib/libmarquet.a                     the static library
#   PREFIX/include/marquet.h                    the C header
#   PREFIX/include/marquet.f90                  the Fortran module source (module `marquet`)
#   PREFIX/lib/pkgconfig/marquet.pc             pkg-config file (Version = X.Y.Z)
#
# after which
#   PKG_CONFIG_PATH=PREFIX/lib/pkgconfig cc prog.c $(pkg-config --cflags --libs marquet)
# builds a program against the shared library (its rpath points at PREFIX/lib),
#   gfortran $(pkg-config --variable=fortran_module marquet) prog.f90 $(pkg-config --libs marquet)
# a Fortran one, and
#   cc prog.c $(pkg-config --cflags marquet) PREFIX/lib/libmarquet.a \
#       $(pkg-config --libs-only-l --static marquet | sed 's/-lmarquet//')
# links libmarquet statically.
#
# usage: scripts/install-capi.sh [--debug] [--no-build] PREFIX
#   --debug     install the debug build (target/debug) instead of the release build
#   --no-build  do not run cargo; install what is already built
# Environment: CARGO_TARGET_DIR (default target), DESTDIR (staged installs: files go to
# DESTDIR/PREFIX while marquet.pc and the rpath name PREFIX).
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
build=1
prefix=
for a in "$@"; do
    case "$a" in
        --debug) profile=debug ;;
        --no-build) build=0 ;;
        -h|--help) sed -n '2,26p' "$0"; exit 0 ;;
        -*) echo "install-capi: unknown option $a" >&2; exit 2 ;;
        *) prefix=$a ;;
    esac
done
if [ -z "$prefix" ]; then
    echo "usage: scripts/install-capi.sh [--debug] [--no-build] PREFIX" >&2
    exit 2
fi
case "$prefix" in
    /*) ;;
    *) mkdir -p "$prefix"; prefix=$(cd "$prefix" && pwd) ;;
esac
dest=${DESTDIR:-}$prefix

if [ "$build" = 1 ]; then
    if [ "$profile" = release ]; then
        cargo build --release -p marquet-capi
    else
        cargo build -p marquet-capi
    fi
fi

target=${CARGO_TARGET_DIR:-target}/$profile
for f in libmarquet.so libmarquet.a; do
    if [ ! -f "$target/$f" ]; then
        echo "install-capi: $target/$f is missing (build it, or drop --no-build)" >&2
        exit 1
    fi
done
version=$(sed -n 's/^version = "\(.*\)"/\1/p' capi/Cargo.toml | head -1)
# The soname the library was linked with (capi/build.rs): libmarquet.so.N.
soname=$(readelf -d "$target/libmarquet.so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
case "$soname" in
    libmarquet.so.[0-9]*) ;;
    *) echo "install-capi: $target/libmarquet.so has soname '${soname}', expected libmarquet.so.N" >&2; exit 1 ;;
esac

install -d "$dest/lib/pkgconfig" "$dest/include"
install -m 0755 "$target/libmarquet.so" "$dest/lib/libmarquet.so.$version"
ln -sfn "libmarquet.so.$version" "$dest/lib/$soname"
ln -sfn "$soname" "$dest/lib/libmarquet.so"
install -m 0644 "$target/libmarquet.a" "$dest/lib/libmarquet.a"
install -m 0644 include/marquet.h "$dest/include/marquet.h"
install -m 0644 include/marquet.f90 "$dest/include/marquet.f90"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" capi/marquet.pc.in >"$dest/lib/pkgconfig/marquet.pc"
echo "install-capi: installed libmarquet $version ($soname, $profile) under $dest"

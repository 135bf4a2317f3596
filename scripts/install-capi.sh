#!/usr/bin/env bash
# Build libmarquet and install it under PREFIX:
#   PREFIX/lib/libmarquet.so, PREFIX/lib/libmarquet.a, PREFIX/include/marquet.h,
#   PREFIX/lib/pkgconfig/marquet.pc
# after which
#   PKG_CONFIG_PATH=PREFIX/lib/pkgconfig cc prog.c $(pkg-config --cflags --libs marquet)
# builds a program against the shared library (its rpath points at PREFIX/lib), and
#   cc prog.c $(pkg-config --cflags marquet) PREFIX/lib/libmarquet.a \
#       $(pkg-config --libs-only-l --static marquet | sed 's/-lmarquet//')
# links libmarquet statically.
#
# usage: scripts/install-capi.sh [--debug] [--no-build] PREFIX
#   --debug     install the debug build (target/debug) instead of the release build
#   --no-build  do not run cargo; install what is already built
set -euo pipefail
cd "$(dirname "$0")/.."

profile=release
build=1
prefix=
for a in "$@"; do
    case "$a" in
        --debug) profile=debug ;;
        --no-build) build=0 ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        -*) echo "install-capi: unknown option $a" >&2; exit 2 ;;
        *) prefix=$a ;;
    esac
done
if [ -z "$prefix" ]; then
    echo "usage: scripts/install-capi.sh [--debug] [--no-build] PREFIX" >&2
    exit 2
fi
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)

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

install -d "$prefix/lib/pkgconfig" "$prefix/include"
install -m 0755 "$target/libmarquet.so" "$prefix/lib/libmarquet.so"
install -m 0644 "$target/libmarquet.a" "$prefix/lib/libmarquet.a"
install -m 0644 include/marquet.h "$prefix/include/marquet.h"
sed -e "s|@PREFIX@|$prefix|g" -e "s|@VERSION@|$version|g" capi/marquet.pc.in >"$prefix/lib/pkgconfig/marquet.pc"
echo "install-capi: installed libmarquet $version ($profile) under $prefix"

#!/usr/bin/env bash
# Build the GDAL vector driver plugin gdal/build/gdal_Marquet.so (gdal/README.md).
#
#   gdal/build.sh [--libdir DIR] [--debug]
#
# It compiles gdal/ogrmarquetdriver.cpp against the system GDAL (gdal-config; Debian 12:
# apt-get install libgdal-dev) and links libmarquet through its C ABI only:
#   --libdir DIR   the directory holding libmarquet.so (default: $CARGO_TARGET_DIR/release,
#                  or target/release; build it with `cargo build --release -p marquet-capi`)
# The plugin records DIR as its run path, so GDAL finds libmarquet.so when it loads the
# plugin (GDAL_DRIVER_PATH=gdal/build, or gdal/install.sh into GDAL's plugin directory).
set -euo pipefail
cd "$(dirname "$0")/.."

libdir=${CARGO_TARGET_DIR:-target}/release
opt=-O2
while [ $# -gt 0 ]; do
    case "$1" in
        --libdir) libdir=$2; shift ;;
        --debug) opt="-O0 -g" ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "gdal/build.sh: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
command -v gdal-config >/dev/null || { echo "gdal/build.sh: gdal-config not found (apt-get install libgdal-dev)" >&2; exit 1; }
libdir=$(cd "$libdir" && pwd)
[ -f "$libdir/libmarquet.so" ] || { echo "gdal/build.sh: $libdir/libmarquet.so is missing" >&2; exit 1; }
# The soname link libmarquet.so.N next to libmarquet.so (docs/FFI.md, "Installing").
soname=$(readelf -d "$libdir/libmarquet.so" | sed -n 's/.*Library soname: \[\(.*\)\].*/\1/p')
if [ -n "$soname" ] && [ ! -e "$libdir/$soname" ]; then
    ln -sfn libmarquet.so "$libdir/$soname"
fi

mkdir -p gdal/build
# shellcheck disable=SC2046,SC2086
${CXX:-c++} -std=c++17 $opt -fPIC -shared -Wall -Wextra -Werror \
    $(gdal-config --cflags) -Iinclude \
    gdal/ogrmarquetdriver.cpp -o gdal/build/gdal_Marquet.so \
    -L"$libdir" -lmarquet -Wl,-rpath,"$libdir" $(gdal-config --libs) -Wl,--no-undefined
echo "gdal/build.sh: built gdal/build/gdal_Marquet.so (GDAL $(gdal-config --version), libmarquet in $libdir)"

#!/usr/bin/env bash
# Install the GDAL plugin gdal_Marquet.so (gdal/README.md).
#
#   gdal/install.sh [--libdir DIR] [PLUGIN_DIR]
#
# Builds gdal/build/gdal_Marquet.so (gdal/build.sh --libdir DIR; DIR holds an installed
# libmarquet.so, e.g. PREFIX/lib after scripts/install-capi.sh PREFIX) and copies it into
# PLUGIN_DIR (default: the plugin directory of the system GDAL,
# /usr/lib/<multiarch>/gdalplugins on Debian), where every GDAL program (ogrinfo,
# ogr2ogr, QGIS, pyogrio, R sf) finds it without GDAL_DRIVER_PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
args=()
dest=
while [ $# -gt 0 ]; do
    case "$1" in
        --libdir) args+=(--libdir "$2"); shift ;;
        -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
        *) dest=$1 ;;
    esac
    shift
done
bash gdal/build.sh "${args[@]}"
if [ -z "$dest" ]; then
    libdir=$(gdal-config --libs | tr ' ' '\n' | sed -n 's/^-L//p' | head -n1)
    [ -n "$libdir" ] || libdir=$(dirname "$(ldconfig -p | awk '/libgdal\.so /{print $NF; exit}')")
    dest=$libdir/gdalplugins
fi
install -d "$dest"
install -m 0755 gdal/build/gdal_Marquet.so "$dest/gdal_Marquet.so"
echo "gdal/install.sh: installed $dest/gdal_Marquet.so"

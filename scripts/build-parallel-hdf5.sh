#!/usr/bin/env bash
# scripts/build-parallel-hdf5.sh — a PARALLEL (MPI-IO) shared HDF5 1.14.5 for Marquet's
# `mpio` feature (docs/PARALLEL.md, issue #23).
#
# Debian 12's parallel HDF5 (libhdf5-openmpi-dev) is 1.10, too old for H5T_STD_REF
# (HEP001 references), so HDF5 1.14.5 is built from Debian trixie's source package —
# the same one scripts/build-h5dump.sh fetches and caches (its --source-only mode) —
# with HDF5_ENABLE_PARALLEL=ON, CC=mpicc, against Debian's OpenMPI.
#
# Usage:
#   scripts/build-parallel-hdf5.sh          # last stdout line = the install prefix
#   scripts/build-parallel-hdf5.sh --force  # ignore the cached install, rebuild
#
# stdout carries ONLY the prefix; progress goes to stderr.
#
# Needs mpicc/mpirun: Debian packages libopenmpi-dev openmpi-bin, installed with apt-get
# when missing and running as root (like .ci/run); otherwise it stops with the command.
#
# Cache (${XDG_CACHE_HOME:-$HOME/.cache}/marquet = $CACHE):
#   $CACHE/hdf5-1.14.5-parallel/   install prefix (lib/libhdf5.so, include/):
#                                  valid when H5pubconf.h says 1.14.5 AND H5_HAVE_PARALLEL
#                                  and libhdf5.so links libmpi; otherwise rebuilt
#   $CACHE/logs/parallel-*.log     configure/build/install logs of the last build
# Builds are serialised with the other HDF5 builds of scripts/build-h5dump.sh (same lock).
#
# Measured on the 2-core machine (nice -n 10): cold build 172 s (source already cached by
# the h5dump build; configure ~40 s, libhdf5 ~2 min); cached: instant.
#
# Environment: MARQUET_JOBS (default nproc), MARQUET_KEEP_BUILD=1, CMAKE (default: cmake
# on PATH, >= 3.18), plus build-h5dump.sh's source overrides (MARQUET_DEBIAN_MIRROR, ...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

HDF5_VERSION="1.14.5"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/marquet"
PREFIX="$CACHE/hdf5-$HDF5_VERSION-parallel"
LOG_DIR="$CACHE/logs"
JOBS="${MARQUET_JOBS:-$(nproc 2>/dev/null || echo 2)}"

FORCE=0
for arg in "$@"; do
    case "$arg" in
        --force) FORCE=1 ;;
        -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
        *) echo "build-parallel-hdf5.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

log() { echo "[build-parallel-hdf5] $*" >&2; }
die() { echo "[build-parallel-hdf5] ERROR: $*" >&2; exit 1; }

# ---- OpenMPI ---------------------------------------------------------------------------
if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        log "installing libopenmpi-dev openmpi-bin"
        DEBIAN_FRONTEND=noninteractive apt-get -q update >&2
        DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends libopenmpi-dev openmpi-bin >&2
    else
        die "mpicc/mpirun not found: apt-get install libopenmpi-dev openmpi-bin"
    fi
fi

valid() { # the cached prefix is a parallel HDF5 $HDF5_VERSION
    [ -e "$PREFIX/lib/libhdf5.so" ] \
        && grep -qs "H5_VERSION \"${HDF5_VERSION}\"" "$PREFIX/include/H5pubconf.h" \
        && grep -qs "#define H5_HAVE_PARALLEL 1" "$PREFIX/include/H5pubconf.h" \
        && readelf -d "$PREFIX/lib/libhdf5.so" 2>/dev/null | grep -q 'NEEDED.*libmpi'
}

if [ "$FORCE" = 0 ] && valid; then
    log "cached parallel HDF5 $HDF5_VERSION: $PREFIX"
    echo "$PREFIX"
    exit 0
fi

CMAKE_BIN="${CMAKE:-$(command -v cmake || true)}"
[ -n "$CMAKE_BIN" ] && [ -x "$CMAKE_BIN" ] || die "cmake not found (run: source scripts/bootstrap.sh)"

t0=$SECONDS
# The verified Debian source tarball (fetched once, shared with the h5dump build).
ORIG_TARBALL="$(bash scripts/build-h5dump.sh --source-only | tail -n1)"
[ -f "$ORIG_TARBALL" ] || die "no source tarball from build-h5dump.sh --source-only"

mkdir -p "$CACHE" "$LOG_DIR"
# One HDF5 build at a time (the same lock as build-h5dump.sh; a waiting run then finds the
# cache filled by the other).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE/.hdf5-$HDF5_VERSION.lock"
    flock 9
    if [ "$FORCE" = 0 ] && valid; then
        log "built meanwhile by another run: $PREFIX"
        echo "$PREFIX"
        exit 0
    fi
fi

TMP_ROOT="$(mktemp -d "${TMPDIR:-/tmp}/marquet-phdf5.XXXXXX")"
cleanup() {
    if [ "${MARQUET_KEEP_BUILD:-0}" = 1 ]; then log "kept build tree: $TMP_ROOT"; else rm -rf "$TMP_ROOT"; fi
}
trap cleanup EXIT

run_logged() { # $1 = log file, rest = command
    local logf="$1"; shift
    if ! "$@" >"$logf" 2>&1; then
        tail -n 40 "$logf" >&2
        die "failed: $* (full log: $logf)"
    fi
}

log "unpacking $(basename "$ORIG_TARBALL")"
mkdir -p "$TMP_ROOT/src"
tar -xf "$ORIG_TARBALL" -C "$TMP_ROOT/src"
SRC_DIR="$(dirname "$(ls "$TMP_ROOT"/src/*/CMakeLists.txt | head -n1)")"

ZLIB=OFF
if printf '#include <zlib.h>\n' | cc -E -x c - >/dev/null 2>&1; then ZLIB=ON; else log "no zlib headers (zlib1g-dev): no deflate filter"; fi

BUILD_DIR="$TMP_ROOT/build"
log "configuring parallel HDF5 $HDF5_VERSION (CC=mpicc, shared, zlib=$ZLIB)"
CC=mpicc run_logged "$LOG_DIR/parallel-configure.log" "$CMAKE_BIN" -S "$SRC_DIR" -B "$BUILD_DIR" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=mpicc \
    -DHDF5_ENABLE_PARALLEL=ON \
    -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF \
    -DBUILD_TESTING=OFF -DHDF5_BUILD_EXAMPLES=OFF \
    -DHDF5_BUILD_TOOLS=OFF -DHDF5_BUILD_UTILS=OFF -DHDF5_BUILD_HL_LIB=OFF \
    -DHDF5_BUILD_FORTRAN=OFF -DHDF5_BUILD_CPP_LIB=OFF -DHDF5_BUILD_JAVA=OFF \
    -DHDF5_ENABLE_THREADSAFE=OFF \
    -DHDF5_ENABLE_SZIP_SUPPORT=OFF -DHDF5_ENABLE_Z_LIB_SUPPORT="$ZLIB" \
    -DHDF5_ALLOW_EXTERNAL_SUPPORT=NO \
    -DCMAKE_INSTALL_PREFIX="$PREFIX"
grep -q "#define H5_HAVE_PARALLEL 1" "$BUILD_DIR/src/H5pubconf.h" || die "configure did not enable parallel (log: $LOG_DIR/parallel-configure.log)"
log "building libhdf5 with -j$JOBS (nice -n 10; ~3 min on 2 cores)"
run_logged "$LOG_DIR/parallel-build.log" nice -n 10 "$CMAKE_BIN" --build "$BUILD_DIR" -j "$JOBS"
rm -rf "$PREFIX.new"
run_logged "$LOG_DIR/parallel-install.log" "$CMAKE_BIN" --install "$BUILD_DIR" --prefix "$PREFIX.new"
[ -e "$PREFIX.new/lib/libhdf5.so" ] || die "install produced no lib/libhdf5.so"
rm -rf "$PREFIX" && mv "$PREFIX.new" "$PREFIX"
{ grep -rlIF "$PREFIX.new" "$PREFIX" 2>/dev/null || true; } | while IFS= read -r f; do
    sed -i "s|$PREFIX.new|$PREFIX|g" "$f"
done
valid || die "installed prefix $PREFIX is not a parallel HDF5 $HDF5_VERSION"
log "built and installed in $((SECONDS - t0))s: $PREFIX (HDF5_DIR=$PREFIX LD_LIBRARY_PATH=$PREFIX/lib)"
echo "$PREFIX"

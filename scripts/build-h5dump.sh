#!/usr/bin/env bash
# scripts/build-h5dump.sh — provide an h5dump >= 1.12 (HDF5 1.14.5) for the tests.
#
# Debian 12's h5dump is 1.10 and cannot print H5T_STD_REF, so we build h5dump
# from Debian trixie's hdf5 SOURCE package (upstream 1.14.5) with CMake.
#
# Usage:
#   scripts/build-h5dump.sh               # h5dump; last stdout line = its absolute path
#   scripts/build-h5dump.sh --shared-lib  # shared libhdf5 1.14.5 (+hl) installed into
#                                         # $CACHE/hdf5-1.14.5-shared; last line = prefix
#   scripts/build-h5dump.sh --force ...   # ignore the cached result, rebuild
#   scripts/build-h5dump.sh --source-only # fetch + verify the source only; last line = the
#                                         # .orig tarball (scripts/build-parallel-hdf5.sh)
#
# stdout carries ONLY the resulting path; all progress goes to stderr.
#
# Cache (outside the clone; ${XDG_CACHE_HOME:-$HOME/.cache}/marquet = $CACHE):
#   $CACHE/h5dump-1.14.5/h5dump        the binary (2nd run: instant)
#   $CACHE/src/hdf5-1.14.5/            .dsc + .orig.tar.gz + .debian.tar.xz
#                                      (re-verified against the .dsc sha256 on use)
#   $CACHE/hdf5-1.14.5-shared/         --shared-lib install prefix
#   $CACHE/logs/                       configure/build logs of the last build
#
# Source download: the Debian mirror URI is read at run time from this
# machine's apt sources (/etc/apt/sources.list, sources.list.d/*.list and
# deb822 *.sources).  A PRIVATE apt configuration (temp dir with its own
# sources.list "deb-src <mirror> trixie main", lists/ and cache/) is used, so
# the machine's apt state is not modified.  No other network access.
#
# Environment overrides (all optional):
#   MARQUET_DEBIAN_MIRROR        mirror URI instead of the one from apt sources
#   MARQUET_DEBIAN_SUITE         suite to take the source from (default: trixie)
#   MARQUET_HDF5_SOURCE_TARBALL  local hdf5-1.14.5 source tarball (skips apt)
#   MARQUET_JOBS                 parallel build jobs (default: nproc)
#   MARQUET_KEEP_BUILD=1         keep the temporary build tree (path is logged)
#   CMAKE                        cmake binary (default: cmake on PATH; >= 3.18)
set -euo pipefail

HDF5_VERSION="1.14.5"
SUITE="${MARQUET_DEBIAN_SUITE:-trixie}"
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/marquet"
SRC_CACHE="$CACHE/src/hdf5-$HDF5_VERSION"
H5DUMP_DIR="$CACHE/h5dump-$HDF5_VERSION"
H5DUMP_BIN="$H5DUMP_DIR/h5dump"
SHARED_PREFIX="$CACHE/hdf5-$HDF5_VERSION-shared"
LOG_DIR="$CACHE/logs"
JOBS="${MARQUET_JOBS:-$(nproc 2>/dev/null || echo 2)}"

MODE=h5dump
FORCE=0
for arg in "$@"; do
    case "$arg" in
        --shared-lib) MODE=shared ;;
        --source-only) MODE=source ;;
        --force) FORCE=1 ;;
        -h|--help) sed -n '2,37p' "$0"; exit 0 ;;
        *) echo "build-h5dump.sh: unknown argument '$arg' (try --help)" >&2; exit 2 ;;
    esac
done

log() { echo "[build-h5dump] $*" >&2; }
die() { echo "[build-h5dump] ERROR: $*" >&2; exit 1; }

CMAKE_BIN="${CMAKE:-$(command -v cmake || true)}"
[ -n "$CMAKE_BIN" ] && [ -x "$CMAKE_BIN" ] || die "cmake not found (run: source scripts/bootstrap.sh)"

mkdir -p "$CACHE" "$LOG_DIR"

# Serialise concurrent runs (several engineers / CI jobs sharing one cache).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$CACHE/.hdf5-$HDF5_VERSION.lock"
    flock 9
fi

TMP_ROOT=""
cleanup() {
    if [ -n "$TMP_ROOT" ] && [ -d "$TMP_ROOT" ]; then
        if [ "${MARQUET_KEEP_BUILD:-0}" = 1 ]; then
            log "kept build tree: $TMP_ROOT"
        else
            rm -rf "$TMP_ROOT"
        fi
    fi
}
trap cleanup EXIT

h5dump_ok() { # $1 = binary; true if it runs and reports the pinned version
    [ -x "$1" ] && "$1" --version 2>/dev/null | grep -q "Version ${HDF5_VERSION}"
}

# ---------------------------------------------------------------------------
# Fast paths (cached results)
if [ "$FORCE" = 0 ]; then
    if [ "$MODE" = h5dump ] && h5dump_ok "$H5DUMP_BIN"; then
        log "cached: $("$H5DUMP_BIN" --version 2>&1 | head -n1)"
        echo "$H5DUMP_BIN"
        exit 0
    fi
    if [ "$MODE" = shared ] && [ -e "$SHARED_PREFIX/lib/libhdf5.so" ] \
        && grep -qs "H5_VERSION \"${HDF5_VERSION}\"" "$SHARED_PREFIX/include/H5pubconf.h"; then
        log "cached shared HDF5 $HDF5_VERSION"
        echo "$SHARED_PREFIX"
        exit 0
    fi
fi

TMP_ROOT="$(mktemp -d "${TMPDIR:-/tmp}/marquet-hdf5.XXXXXX")"

# ---------------------------------------------------------------------------
# Debian mirror from this machine's apt sources (never hard-coded).
find_debian_mirror() {
    if [ -n "${MARQUET_DEBIAN_MIRROR:-}" ]; then
        echo "$MARQUET_DEBIAN_MIRROR"
        return 0
    fi
    local codenames='^(buster|bullseye|bookworm|trixie|forky|sid|oldoldstable|oldstable|stable|testing|unstable)$'
    local files=() f
    [ -f /etc/apt/sources.list ] && files+=(/etc/apt/sources.list)
    for f in /etc/apt/sources.list.d/*.list; do [ -f "$f" ] && files+=("$f"); done
    # one-line format: deb [opts] URI SUITE COMPONENTS...
    if [ "${#files[@]}" -gt 0 ]; then
        awk -v re="$codenames" '
            /^[[:space:]]*deb(-src)?[[:space:]]/ {
                sub(/#.*/, ""); sub(/\[[^]]*\]/, "")
                if ($2 !~ /security/ && $3 ~ re) { print $2; exit }
            }' "${files[@]}" | head -n1
    fi
    # deb822 format: stanzas with URIs:/Suites:/Enabled:
    files=()
    for f in /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && files+=("$f"); done
    if [ "${#files[@]}" -gt 0 ]; then
        awk -v re="$codenames" '
            function flush(   i, n, s, u) {
                if (uris != "" && enabled != "no") {
                    n = split(suites, s, /[[:space:]]+/)
                    for (i = 1; i <= n; i++) if (s[i] ~ re) {
                        split(uris, u, /[[:space:]]+/)
                        if (u[1] !~ /security/) { print u[1]; found = 1 }
                        break
                    }
                }
                uris = ""; suites = ""; enabled = ""
            }
            FNR == 1 { flush() }
            /^[[:space:]]*#/ { next }
            /^[[:space:]]*$/ { flush(); if (found) exit; next }
            tolower($1) == "uris:"    { $1 = ""; uris = $0;    sub(/^[[:space:]]+/, "", uris) }
            tolower($1) == "suites:"  { $1 = ""; suites = $0;  sub(/^[[:space:]]+/, "", suites) }
            tolower($1) == "enabled:" { enabled = tolower($2) }
            END { if (!found) flush() }' "${files[@]}" | head -n1
    fi
}

# Verify cached source files against the sha256 list in the .dsc.
verify_source() { # $1 = dir; prints nothing, returns 0 if all files listed in the .dsc match
    local dir="$1" dsc
    dsc="$(ls "$dir"/hdf5_*.dsc 2>/dev/null | head -n1)" || true
    [ -n "$dsc" ] || return 1
    local sums
    sums="$(awk '/^Checksums-Sha256:/ {on=1; next} on && /^ / {print $1 "  " $3; next} on {exit}' "$dsc")"
    [ -n "$sums" ] || return 1
    (cd "$dir" && printf '%s\n' "$sums" | sha256sum --quiet -c - >/dev/null 2>&1)
}

fetch_source() {
    if [ -n "${MARQUET_HDF5_SOURCE_TARBALL:-}" ]; then
        [ -f "$MARQUET_HDF5_SOURCE_TARBALL" ] || die "MARQUET_HDF5_SOURCE_TARBALL=$MARQUET_HDF5_SOURCE_TARBALL does not exist"
        log "using local source tarball $MARQUET_HDF5_SOURCE_TARBALL"
        ORIG_TARBALL="$MARQUET_HDF5_SOURCE_TARBALL"
        return 0
    fi
    if verify_source "$SRC_CACHE"; then
        log "source cached and verified: $SRC_CACHE"
    else
        local mirror
        mirror="$(find_debian_mirror | head -n1)"
        [ -n "$mirror" ] || die "could not find a Debian mirror URI in /etc/apt/sources.list{,.d/*.list,.d/*.sources}; set MARQUET_DEBIAN_MIRROR=http://<mirror>/debian"
        mirror="${mirror%/}"
        log "Debian mirror (from apt sources): $mirror; suite: $SUITE"

        local apt="$TMP_ROOT/apt"
        mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/dl"
        local signed=""
        [ -f /usr/share/keyrings/debian-archive-keyring.gpg ] && signed="[signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
        echo "deb-src ${signed}${mirror} ${SUITE} main" > "$apt/sources.list"
        local -a A=(
            -o "Dir::Etc::SourceList=$apt/sources.list"
            -o "Dir::Etc::SourceParts=$apt/sources.list.d"
            -o "Dir::State::Lists=$apt/lists"
            -o "Dir::Cache=$apt/cache"
            -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
            -o "Acquire::Languages=none"
        )
        [ "$(id -u)" = 0 ] && A+=(-o "APT::Sandbox::User=root")

        log "apt-get update (private config in $apt; machine apt state untouched)"
        apt-get "${A[@]}" -q update >"$LOG_DIR/apt-update.log" 2>&1 \
            || { tail -n 20 "$LOG_DIR/apt-update.log" >&2; die "private apt-get update failed (log: $LOG_DIR/apt-update.log)"; }

        local versions ver
        versions="$(apt-cache "${A[@]}" showsrc hdf5 2>/dev/null | awk '/^Version:/ {print $2}')"
        ver="$(printf '%s\n' "$versions" | grep -E "^([0-9]+:)?${HDF5_VERSION//./\\.}[+~-]" | head -n1 || true)"
        [ -n "$ver" ] || die "Debian $SUITE has no hdf5 source for $HDF5_VERSION (available: $(echo $versions)); update HDF5_VERSION in $0"
        log "apt-get source --download-only hdf5=$ver"
        (cd "$apt/dl" && apt-get "${A[@]}" -q source --download-only "hdf5=$ver") >"$LOG_DIR/apt-source.log" 2>&1 \
            || { tail -n 20 "$LOG_DIR/apt-source.log" >&2; die "apt-get source hdf5=$ver failed (log: $LOG_DIR/apt-source.log)"; }
        verify_source "$apt/dl" || die "downloaded hdf5 source does not match its .dsc checksums"
        rm -rf "$SRC_CACHE.new" && mkdir -p "$SRC_CACHE.new"
        mv "$apt/dl"/hdf5_* "$SRC_CACHE.new"/
        rm -rf "$SRC_CACHE" && mv "$SRC_CACHE.new" "$SRC_CACHE"
        log "source cached: $SRC_CACHE"
    fi
    ORIG_TARBALL="$(ls "$SRC_CACHE"/hdf5_*.orig.tar.* | head -n1)"
}

unpack_source() { # sets SRC_DIR
    log "unpacking $(basename "$ORIG_TARBALL")"
    mkdir -p "$TMP_ROOT/src"
    tar -xf "$ORIG_TARBALL" -C "$TMP_ROOT/src"
    SRC_DIR="$(dirname "$(ls "$TMP_ROOT"/src/*/CMakeLists.txt | head -n1)")"
    [ -f "$SRC_DIR/CMakeLists.txt" ] || die "no CMakeLists.txt in $ORIG_TARBALL"
    # Upstream sources are used as is: Debian's patches only concern its
    # autotools/Fortran/Java packaging, not the CMake build of the C tools.
}

have_zlib() { printf '#include <zlib.h>\n' | cc -E -x c - >/dev/null 2>&1; }

run_logged() { # $1 = log file, rest = command
    local logf="$1"; shift
    if ! "$@" >"$logf" 2>&1; then
        tail -n 40 "$logf" >&2
        die "failed: $* (full log: $logf)"
    fi
}

ORIG_TARBALL=""
SRC_DIR=""
t0=$SECONDS
fetch_source
if [ "$MODE" = source ]; then echo "$ORIG_TARBALL"; exit 0; fi
unpack_source

ZLIB=OFF
if have_zlib; then ZLIB=ON; else log "zlib headers not found (Debian: zlib1g-dev): building without deflate filter"; fi

BUILD_DIR="$TMP_ROOT/build"
mkdir -p "$BUILD_DIR"
common=(
    -S "$SRC_DIR" -B "$BUILD_DIR"
    -DCMAKE_BUILD_TYPE=Release
    -DBUILD_TESTING=OFF
    -DHDF5_BUILD_EXAMPLES=OFF
    -DHDF5_BUILD_FORTRAN=OFF
    -DHDF5_BUILD_CPP_LIB=OFF
    -DHDF5_BUILD_JAVA=OFF
    -DHDF5_ENABLE_SZIP_SUPPORT=OFF
    -DHDF5_ENABLE_Z_LIB_SUPPORT="$ZLIB"
    -DHDF5_ALLOW_EXTERNAL_SUPPORT=NO
)

if [ "$MODE" = h5dump ]; then
    log "configuring static HDF5 $HDF5_VERSION (zlib=$ZLIB, cmake $("$CMAKE_BIN" --version | awk 'NR==1{print $3}'))"
    run_logged "$LOG_DIR/h5dump-configure.log" "$CMAKE_BIN" "${common[@]}" \
        -DBUILD_SHARED_LIBS=OFF -DBUILD_STATIC_LIBS=ON \
        -DHDF5_BUILD_TOOLS=ON -DHDF5_BUILD_HL_LIB=OFF -DHDF5_BUILD_UTILS=OFF
    log "building target h5dump with -j$JOBS (≈3 min on 2 cores)"
    run_logged "$LOG_DIR/h5dump-build.log" "$CMAKE_BIN" --build "$BUILD_DIR" --target h5dump -j "$JOBS"
    built="$BUILD_DIR/bin/h5dump"
    [ -x "$built" ] || built="$(find "$BUILD_DIR" -type f -name h5dump -perm -u+x | head -n1)"
    h5dump_ok "$built" || die "built h5dump does not report version $HDF5_VERSION"
    mkdir -p "$H5DUMP_DIR"
    cp "$built" "$H5DUMP_BIN.tmp.$$"
    mv -f "$H5DUMP_BIN.tmp.$$" "$H5DUMP_BIN"
    log "built in $((SECONDS - t0))s: $("$H5DUMP_BIN" --version 2>&1 | head -n1)"
    echo "$H5DUMP_BIN"
else
    log "configuring shared HDF5 $HDF5_VERSION (C + HL, zlib=$ZLIB)"
    run_logged "$LOG_DIR/shared-configure.log" "$CMAKE_BIN" "${common[@]}" \
        -DBUILD_SHARED_LIBS=ON -DBUILD_STATIC_LIBS=OFF \
        -DHDF5_BUILD_TOOLS=OFF -DHDF5_BUILD_HL_LIB=ON -DHDF5_BUILD_UTILS=OFF \
        -DCMAKE_INSTALL_PREFIX="$SHARED_PREFIX"
    log "building shared libhdf5 with -j$JOBS"
    run_logged "$LOG_DIR/shared-build.log" "$CMAKE_BIN" --build "$BUILD_DIR" -j "$JOBS"
    rm -rf "$SHARED_PREFIX.new"
    run_logged "$LOG_DIR/shared-install.log" "$CMAKE_BIN" --install "$BUILD_DIR" --prefix "$SHARED_PREFIX.new"
    [ -e "$SHARED_PREFIX.new/lib/libhdf5.so" ] || die "install produced no lib/libhdf5.so"
    rm -rf "$SHARED_PREFIX" && mv "$SHARED_PREFIX.new" "$SHARED_PREFIX"
    # The install's CMake config files/pkg-config carry the prefix they were
    # installed with; rewrite the temporary one to the final one.
    { grep -rlIF "$SHARED_PREFIX.new" "$SHARED_PREFIX" 2>/dev/null || true; } | while IFS= read -r f; do
        sed -i "s|$SHARED_PREFIX.new|$SHARED_PREFIX|g" "$f"
    done
    log "installed in $((SECONDS - t0))s into $SHARED_PREFIX (use: HDF5_DIR=$SHARED_PREFIX LD_LIBRARY_PATH=$SHARED_PREFIX/lib)"
    echo "$SHARED_PREFIX"
fi

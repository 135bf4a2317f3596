#!/usr/bin/env bash
# scripts/bootstrap.sh — make sure the build prerequisites of Marquet are usable.
#
# Usage (either works; idempotent, a no-op when everything is already fine):
#   source scripts/bootstrap.sh     # PATH/CMAKE changes persist in your shell
#   bash scripts/bootstrap.sh       # only checks / installs; PATH change is lost
#
# What it does:
#   * cmake >= 3.26 is required (hdf5-metno-sys with feature `static` builds
#     HDF5 2.x from source with CMake).  If the `cmake` on PATH is new enough it
#     is used as is.  Otherwise `python3 -m pip install 'cmake>=3.26'` is run
#     and the real binary directory of the pip package (cmake.CMAKE_BIN_DIR,
#     i.e. <site-packages>/cmake/data/bin) is PREPENDED to PATH.  That works
#     regardless of whether pip's entry-point scripts land in a pyenv shim dir,
#     the interpreter's bin/, or ~/.local/bin (a `pyenv rehash` is also run).
#     If pip refuses (PEP 668 "externally managed" Python), a private venv in
#     ${XDG_CACHE_HOME:-$HOME/.cache}/marquet/venv is used instead.
#   * exports CMAKE=<absolute path of that cmake> (honoured by the `cmake`
#     crate used by hdf5-metno-sys's build script).
#   * checks cargo/rustc (rust-version of Cargo.toml, 1.88), a C compiler and make.  It does
#     NOT install Rust.
#   * system libraries (issue #30): building needs none (SQLite is compiled in, rusqlite's
#     `bundled`; HDF5 is built from source; PROJ is opened at run time by the first command
#     that needs it, issue #33). With MARQUET_NEEDS="build test" (scripts/test.sh) what the
#     tests use: PROJ's shared library (proj-bin, which brings libprojNN and proj.db),
#     zlib1g-dev, pkg-config, valgrind, strace, gfortran and python3-venv; with "wheel"
#     (scripts/build-wheel.sh) libproj-dev, which the wheel links and carries. Missing ones
#     are installed with apt-get when running as root; otherwise it stops at once, before any
#     compiling, naming the exact command.
#   * cargo-nextest is NOT required: tests run with plain `cargo test`
#     (see scripts/test.sh).
#
# Nothing else is installed unless needed.

_marquet_bootstrap() {
    local min_cmake="3.26" min_rust="1.88"  # = rust-version (scripts/check-msrv.sh)
    local cache="${XDG_CACHE_HOME:-$HOME/.cache}/marquet"
    local say="[bootstrap]"

    _mq_ver_ge() { # $1 >= $2 (dotted versions)
        [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
    }
    _mq_cmake_version() { # prints version of cmake binary $1, or fails
        "$1" --version 2>/dev/null | awk 'NR==1 && /cmake version/ {print $3; ok=1} END {exit !ok}'
    }

    # ---- cmake ---------------------------------------------------------------
    local cm="" cv=""
    if cm="$(command -v cmake 2>/dev/null)" && cv="$(_mq_cmake_version "$cm")" \
        && _mq_ver_ge "$cv" "$min_cmake"; then
        echo "$say cmake $cv OK: $cm" >&2
    else
        if [ -n "$cv" ]; then
            echo "$say cmake on PATH is $cv (< $min_cmake): installing cmake>=$min_cmake with pip" >&2
        else
            echo "$say no usable cmake on PATH: installing cmake>=$min_cmake with pip" >&2
        fi
        local py
        py="$(command -v python3 || command -v python || true)"
        if [ -z "$py" ]; then
            echo "$say ERROR: need python3 (with pip) to install cmake>=$min_cmake, or install cmake>=$min_cmake yourself" >&2
            return 1
        fi
        local bindir=""
        if PIP_ROOT_USER_ACTION=ignore "$py" -m pip install --disable-pip-version-check -q "cmake>=${min_cmake}" >&2; then
            command -v pyenv >/dev/null 2>&1 && pyenv rehash >/dev/null 2>&1 || true
            bindir="$("$py" -c 'import cmake; print(cmake.CMAKE_BIN_DIR)' 2>/dev/null || true)"
        else
            echo "$say pip install into $py failed; using a private venv in $cache/venv" >&2
            mkdir -p "$cache"
            if [ ! -x "$cache/venv/bin/python" ]; then
                "$py" -m venv "$cache/venv" >&2 || {
                    echo "$say ERROR: could not create venv (Debian: apt-get install python3-venv)" >&2
                    return 1
                }
            fi
            "$cache/venv/bin/python" -m pip install --disable-pip-version-check -q "cmake>=${min_cmake}" >&2 || {
                echo "$say ERROR: pip install 'cmake>=$min_cmake' failed" >&2
                return 1
            }
            bindir="$("$cache/venv/bin/python" -c 'import cmake; print(cmake.CMAKE_BIN_DIR)')"
        fi
        if [ -z "$bindir" ] || [ ! -x "$bindir/cmake" ]; then
            echo "$say ERROR: pip installed cmake but its binary dir could not be found (try: pip show -f cmake)" >&2
            return 1
        fi
        case ":$PATH:" in *":$bindir:"*) ;; *) PATH="$bindir:$PATH" ;; esac
        export PATH
        hash -r 2>/dev/null || true
        cm="$(command -v cmake)"
        cv="$(_mq_cmake_version "$cm")" || { echo "$say ERROR: $cm does not run" >&2; return 1; }
        if ! _mq_ver_ge "$cv" "$min_cmake"; then
            echo "$say ERROR: cmake on PATH is still $cv ($cm)" >&2
            return 1
        fi
        echo "$say installed cmake $cv: $cm (prepended $bindir to PATH)" >&2
    fi
    CMAKE="$cm"
    export CMAKE

    # ---- Rust ------------------------------------------------------------------
    if ! command -v cargo >/dev/null 2>&1; then
        echo "$say ERROR: cargo not found on PATH (install Rust >= $min_rust, e.g. via rustup)" >&2
        return 1
    fi
    local rv
    rv="$(rustc --version 2>/dev/null | awk '{print $2}')"
    if [ -n "$rv" ] && ! _mq_ver_ge "${rv%%-*}" "$min_rust"; then
        echo "$say ERROR: rustc $rv is older than the crate's rust-version $min_rust" >&2
        return 1
    fi
    echo "$say rustc ${rv:-?} OK: $(command -v cargo)" >&2

    # ---- C toolchain (HDF5 is built from C sources) ------------------------------
    local t
    for t in cc make; do
        if ! command -v "$t" >/dev/null 2>&1; then
            echo "$say ERROR: '$t' not found (Debian: apt-get install build-essential)" >&2
            return 1
        fi
    done
    # ---- system libraries (issue #30) ----------------------------------------------
    # Building needs none: SQLite is compiled in (rusqlite `bundled`), HDF5 is built from
    # source, and PROJ (feature `proj`: CRS codes and reprojection) is opened at run time by
    # the first command that needs it (src/crs/proj.rs, issue #33).
    # MARQUET_NEEDS (default "build") adds "test": what scripts/test.sh needs beyond the
    # build (PROJ's shared library for the CRS tests, zlib headers for h5dump, pkg-config and
    # valgrind for the C ABI tests, strace for tests/write_pipeline.rs, gfortran for the
    # Fortran ones, venv for the Python checks), and "wheel": libproj-dev, which the Python
    # wheel links and carries (scripts/build-wheel.sh). Checked in seconds, before any
    # compiling.
    local need=() want="${MARQUET_NEEDS:-build}"
    _mq_links() { printf 'int main(void){return 0;}\n' | cc -x c - "$@" -o /dev/null >/dev/null 2>&1; }
    # A libproj the run-time loader finds (the names src/crs/proj.rs tries).
    _mq_has_libproj() { /sbin/ldconfig -p 2>/dev/null | grep -Eq 'libproj\.so(\.2[2-7])?( |$)'; }
    case " $want " in *" test "*)
        _mq_has_libproj || need+=(proj-bin)
        printf '#include <zlib.h>\n' | cc -E -x c - >/dev/null 2>&1 || need+=(zlib1g-dev)
        command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
        command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
        command -v strace >/dev/null 2>&1 || need+=(strace)
        command -v gfortran >/dev/null 2>&1 || need+=(gfortran)
        python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || need+=(python3-venv)
        ;;
    esac
    case " $want " in *" wheel "*)
        _mq_links -lproj || need+=(libproj-dev)
        ;;
    esac
    if [ "${#need[@]}" -gt 0 ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
            echo "$say installing system packages: ${need[*]} (apt-get, running as root)" >&2
            DEBIAN_FRONTEND=noninteractive apt-get -q update >&2 \
                && DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends "${need[@]}" >&2 || {
                echo "$say ERROR: apt-get install ${need[*]} failed" >&2
                return 1
            }
            if printf '%s\n' "${need[@]}" | grep -qx libproj-dev && ! _mq_links -lproj; then
                echo "$say ERROR: libproj-dev is installed but -lproj still does not link" >&2
                return 1
            fi
            if printf '%s\n' "${need[@]}" | grep -qx proj-bin && ! _mq_has_libproj; then
                echo "$say ERROR: proj-bin is installed but no libproj.so.NN is on the loader's path" >&2
                return 1
            fi
        else
            echo "$say ERROR: missing system packages: ${need[*]}. Install them first:" >&2
            echo "$say     sudo apt-get install ${need[*]}        (Debian/Ubuntu)" >&2
            echo "$say     (Fedora: proj proj-devel; macOS: brew install proj)" >&2
            return 1
        fi
    else
        echo "$say system libraries OK (needs: $want)" >&2
    fi
    unset -f _mq_has_libproj
    unset -f _mq_links

    echo "$say OK (cargo-nextest not required; tests use plain cargo test)" >&2
    unset -f _mq_ver_ge _mq_cmake_version
    return 0
}

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
    # sourced: do not leak `set -e` etc. into the caller; just return status
    if _marquet_bootstrap; then unset -f _marquet_bootstrap; return 0; fi
    unset -f _marquet_bootstrap
    return 1
else
    set -euo pipefail
    _marquet_bootstrap
    echo "note: executed, not sourced: PATH/CMAKE changes do not persist (use: source scripts/bootstrap.sh)" >&2
fi

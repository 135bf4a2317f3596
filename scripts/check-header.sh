#!/usr/bin/env bash
# Regenerate include/marquet.h from capi/src with cbindgen into a temporary file and
# compare it with the committed header. Exit 1 (with the diff) if the header is stale.
#
#   scripts/check-header.sh            # check
#   scripts/check-header.sh --update   # rewrite include/marquet.h
#
# cbindgen is installed with `cargo install` (pinned below) when it is not on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

CBINDGEN_VERSION=0.29.4
if ! command -v cbindgen >/dev/null 2>&1; then
    echo "check-header: installing cbindgen $CBINDGEN_VERSION" >&2
    cargo install --locked --quiet cbindgen --version "$CBINDGEN_VERSION"
fi
have=$(cbindgen --version | awk '{print $2}')
if [ "$have" != "$CBINDGEN_VERSION" ]; then
    echo "check-header: warning: cbindgen $have, the header was generated with $CBINDGEN_VERSION" >&2
fi

tmp=$(mktemp "${TMPDIR:-/tmp}/marquet.h.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# cbindgen warns about Rust items it skips; those are expected, so keep its stderr
# only when it fails.
if ! cbindgen --quiet --config capi/cbindgen.toml --output "$tmp" capi 2>"$tmp.err"; then
    cat "$tmp.err" >&2
    rm -f "$tmp.err"
    exit 2
fi
rm -f "$tmp.err"

# Every exported symbol must be at most 63 characters (Fortran interfaces use the same
# names, STYLE.md "Naming").
long=$(grep -oE '\bmarquet_[A-Za-z0-9_]+|\bMARQUET_[A-Z0-9_]+' "$tmp" | sort -u | awk 'length($0) > 63')
if [ -n "$long" ]; then
    echo "check-header: symbols longer than 63 characters:" >&2
    echo "$long" >&2
    exit 1
fi

# The version macros (capi/cbindgen.toml, after_includes) must name the library version of
# capi/Cargo.toml and the ABI number (soname) of capi/build.rs.
version=$(sed -n 's/^version = "\(.*\)"/\1/p' capi/Cargo.toml | head -1)
abi=$(sed -n 's/^const ABI: u32 = \([0-9]*\);/\1/p' capi/build.rs)
IFS=. read -r major minor patch <<<"$version"
want=$(printf '#define MARQUET_VERSION_MAJOR %s\n#define MARQUET_VERSION_MINOR %s\n#define MARQUET_VERSION_PATCH %s\n#define MARQUET_VERSION_STRING "%s"\n#define MARQUET_ABI_VERSION %s' \
    "$major" "$minor" "$patch" "$version" "$abi")
have=$(grep -E '^#define MARQUET_(VERSION_(MAJOR|MINOR|PATCH|STRING)|ABI_VERSION) ' "$tmp")
if [ -z "$abi" ] || [ "$have" != "$want" ]; then
    echo "check-header: the version macros of capi/cbindgen.toml do not match capi/Cargo.toml ($version) and capi/build.rs (ABI ${abi:-?}):" >&2
    diff <(echo "$want") <(echo "$have") >&2 || true
    exit 1
fi

if [ "${1:-}" = "--update" ]; then
    cp "$tmp" include/marquet.h
    echo "check-header: include/marquet.h updated"
    exit 0
fi
if ! diff -u include/marquet.h "$tmp"; then
    echo "check-header: include/marquet.h is stale; run scripts/check-header.sh --update and commit it" >&2
    exit 1
fi
echo "check-header: include/marquet.h is up to date"

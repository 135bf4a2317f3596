#!/usr/bin/env bash
# scripts/count-public-items.sh — the public item count of the `marquet` crate (issue #33):
# builds rustdoc's HTML (default features, no dependencies) and counts modules, items and
# their public members (method: scripts/count-public-items.py). Rerun before and after an
# API change; docs/VERSIONING.md lists what the count covers.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
target="${CARGO_TARGET_DIR:-target}"
rm -rf "$target/doc/marquet"
cargo doc -p marquet --no-deps --quiet
python3 scripts/count-public-items.py "$target/doc/marquet"

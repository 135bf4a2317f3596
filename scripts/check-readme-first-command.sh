#!/usr/bin/env bash
# scripts/check-readme-first-command.sh — run README.md's first command the way a newcomer
# would on a machine without cmake: every PATH directory holding a `cmake` is removed and
# CMAKE is unset, so the command's own set-up (scripts/bootstrap.sh) must provide one.
# Exit 0 when the command succeeds and the demo wrote its files. Called by .ci/run.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# The first non-comment line of the first ```sh block.
cmd=$(awk '/^```sh/ {f=1; next} /^```/ {if (f) exit} f && !/^[[:space:]]*#/ && NF {print; exit}' README.md)
[ -n "$cmd" ] || { echo "check-readme: no command found in README.md" >&2; exit 1; }
nocmake=$(printf '%s\n' "$PATH" | tr ':' '\n' | while IFS= read -r d; do
    [ -n "$d" ] && [ ! -e "$d/cmake" ] && printf '%s\n' "$d"
done | paste -sd: -)
echo "check-readme: running '$cmd' with cmake removed from PATH" >&2
rm -rf /tmp/marquet-demo
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
env -u CMAKE PATH="$nocmake" bash -c 'if command -v cmake >/dev/null; then echo "check-readme: cmake still on PATH" >&2; exit 1; fi; '"$cmd" > "$out/stdout"
tail -n 5 "$out/stdout"
# The demo's files (README: the main job writes them into /tmp/marquet-demo).
for f in /tmp/marquet-demo/natural_earth.h5 /tmp/marquet-demo/window.svg; do
    [ -s "$f" ] || { echo "check-readme: $f missing after the command" >&2; exit 1; }
done
echo "check-readme: README command 1 ran to the end without a preinstalled cmake" >&2

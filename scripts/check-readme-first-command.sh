#!/usr/bin/env bash
# scripts/check-readme-first-command.sh — run README.md's first command the way a newcomer
# would on a machine without cmake, libproj or libsqlite (issue #30): every PATH directory
# holding a `cmake` is removed and CMAKE is unset, and — in CI (CI=true) as root, or with
# MARQUET_NEWCOMER_REMOVE=1 — the Debian packages libproj-dev and libsqlite3-dev are
# removed first, so the command's own set-up (scripts/bootstrap.sh) must install or avoid
# them. The command runs with MARQUET_PROJ_LIB naming a file that does not exist: the demo
# must not need PROJ at run time either (it is opened only by what needs it, issue #33).
# Exit 0 when the command succeeds and the demo wrote its files. Called by .ci/run.
# Timing a cold first run: CARGO_TARGET_DIR=$(mktemp -d) bash scripts/check-readme-first-command.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=$(mktemp -d)
restore=""
trap 'rm -rf "$out"' EXIT

# The first non-comment line of the first ```sh block.
cmd=$(awk '/^```sh/ {f=1; next} /^```/ {if (f) exit} f && !/^[[:space:]]*#/ && NF {print; exit}' README.md)
[ -n "$cmd" ] || { echo "check-readme: no command found in README.md" >&2; exit 1; }
nocmake=$(printf '%s\n' "$PATH" | tr ':' '\n' | while IFS= read -r d; do
    [ -n "$d" ] && [ ! -e "$d/cmake" ] && printf '%s\n' "$d"
done | paste -sd: -)
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
    && { [ "${CI:-}" = true ] || [ "${MARQUET_NEWCOMER_REMOVE:-}" = 1 ]; }; then
    # What the removal takes with it (e.g. libgdal-dev, which later CI steps use) is put
    # back after the check.
    restore=$(apt-get -s remove libproj-dev libsqlite3-dev 2>/dev/null | awk '/^Remv / {print $2}' | paste -sd' ' -)
    echo "check-readme: removing libproj-dev and libsqlite3-dev (a newcomer's machine has neither; also removed: $restore)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get -q remove -y libproj-dev libsqlite3-dev >/dev/null 2>&1 || true
    trap 'rm -rf "$out"; if [ -n "$restore" ]; then echo "check-readme: reinstalling $restore" >&2; DEBIAN_FRONTEND=noninteractive apt-get -q install -y --no-install-recommends $restore >/dev/null 2>&1 || echo "check-readme: reinstalling $restore failed" >&2; fi' EXIT
fi
if printf 'int main(void){return 0;}\n' | cc -x c - -lproj -o /dev/null >/dev/null 2>&1; then
    echo "check-readme: note: -lproj links already (libproj-dev present)" >&2
else
    echo "check-readme: -lproj does not link before the command (libproj-dev absent)" >&2
fi
echo "check-readme: running '$cmd' with cmake removed from PATH and no PROJ to load" >&2
t0=$SECONDS
rm -rf /tmp/marquet-demo
env -u CMAKE PATH="$nocmake" MARQUET_PROJ_LIB=/nonexistent/libproj.so bash -c 'if command -v cmake >/dev/null; then echo "check-readme: cmake still on PATH" >&2; exit 1; fi; '"$cmd" > "$out/stdout"
tail -n 5 "$out/stdout"
# The demo's files (README: the main job writes them into /tmp/marquet-demo).
for f in /tmp/marquet-demo/natural_earth.h5 /tmp/marquet-demo/window.svg; do
    [ -s "$f" ] || { echo "check-readme: $f missing after the command" >&2; exit 1; }
done
echo "check-readme: README command 1 ran to the end in $(( SECONDS - t0 ))s without a preinstalled cmake, libproj-dev or libsqlite3-dev, and without loading PROJ" >&2

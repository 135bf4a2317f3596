#!/usr/bin/env bash
# scripts/check-msrv.sh — what can be checked of `rust-version` (the minimum supported
# Rust version, docs/VERSIONING.md) with the one toolchain CI has:
#
# 1. both manifests and scripts/bootstrap.sh name the same rust-version, and the installed
#    rustc is at least it;
# 2. every crate in the normal and build dependency graph of marquet and marquet-capi, as
#    Cargo.lock resolves it for this host, declares a rust-version no newer than ours (or
#    none);
# 3. clippy's `incompatible_msrv` lint (which reads rust-version) over the library, the
#    command and the C ABI crate: no std API stabilized after rust-version is used.
#
# Language features newer than rust-version are not caught: that needs the old compiler
# (`cargo +VERSION check` where rustup provides one). Runs from scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
say() { echo "[check-msrv] $*" >&2; }

msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml | head -1)
capi_msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' capi/Cargo.toml | head -1)
[ -n "$msrv" ] || { say "FAIL: Cargo.toml declares no rust-version"; exit 1; }
[ "$msrv" = "$capi_msrv" ] || { say "FAIL: rust-version $msrv in Cargo.toml, $capi_msrv in capi/Cargo.toml"; exit 1; }
grep -q "min_rust=\"$msrv\"" scripts/bootstrap.sh || { say "FAIL: scripts/bootstrap.sh's min_rust is not rust-version $msrv"; exit 1; }
host=$(rustc -vV | sed -n 's/^host: //p')

# 1 and 2 in Python (json from cargo metadata; versions compared numerically).
cargo metadata --format-version 1 --locked --filter-platform "$host" | python3 -c '
import json, re, subprocess, sys
msrv = sys.argv[1]
def v(s):
    return tuple(int(x) for x in re.findall(r"\d+", s)[:3]) + (0,) * (3 - len(re.findall(r"\d+", s)[:3]))
rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True, check=True).stdout
have = re.search(r"rustc (\d+\.\d+\.\d+)", rustc).group(1)
if v(have) < v(msrv):
    sys.exit(f"[check-msrv] FAIL: rustc {have} is older than rust-version {msrv}")
m = json.load(sys.stdin)
pkgs = {p["id"]: p for p in m["packages"]}
nodes = {n["id"]: n for n in m["resolve"]["nodes"]}
roots = [p["id"] for p in m["packages"] if p["name"] in ("marquet", "marquet-capi") and p["source"] is None]
seen, todo = set(), list(roots)
while todo:
    i = todo.pop()
    if i in seen:
        continue
    seen.add(i)
    for d in nodes[i]["deps"]:
        # Dev-dependencies build only our tests and benches, not what users compile.
        if any(k["kind"] in (None, "build") for k in d["dep_kinds"]):
            todo.append(d["pkg"])
def desc(p):
    return "%s %s needs Rust %s" % (p["name"], p["version"], p["rust_version"])
newer = sorted(desc(pkgs[i]) for i in seen if pkgs[i].get("rust_version") and v(pkgs[i]["rust_version"]) > v(msrv))
if newer:
    sys.exit("[check-msrv] FAIL: dependencies newer than rust-version " + msrv + ":\n  " + "\n  ".join(newer))
declared = sum(1 for i in seen if pkgs[i].get("rust_version"))
print(f"[check-msrv] rustc {have} >= {msrv}; {len(seen)} crates in the graph, {declared} declare a rust-version, none above {msrv}", file=sys.stderr)
' "$msrv"

# 3. Only this lint: the rest of clippy is the developers' `cargo clippy` (STYLE.md).
cargo clippy -p marquet -p marquet-capi --lib --bins --quiet -- -A clippy::all -D clippy::incompatible_msrv
say "clippy::incompatible_msrv: no std API newer than $msrv"

#!/usr/bin/env python3
"""The module import graph of src/convert and its cycles (issue #32: "no format module
imports another", "the import graph of src/convert has no cycle").

Each .rs file is a module (`mod.rs` is its directory's module). An edge A -> B is any path
in A's code (comments stripped) that names module B: `super::b`, `super::super::b`,
`crate::convert::x::b`, `self::b` (for mod.rs files). Prints the strongly connected components
with more than one module and exits 1 when there is one.

    python3 scripts/convert-import-graph.py [--edges]
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "convert")


def module_of(path):
    rel = os.path.relpath(path, ROOT)[:-3].split(os.sep)
    if rel[-1] == "mod":
        rel = rel[:-1]
    return tuple(["convert"] + rel)


def strip_comments(src):
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    return "\n".join(re.sub(r"//.*$", "", l) for l in src.splitlines())


def main():
    mods = {}
    for d, _, fs in os.walk(ROOT):
        for f in fs:
            if f.endswith(".rs"):
                p = os.path.join(d, f)
                mods[module_of(p)] = p
    known = set(mods)
    edges = {m: set() for m in mods}
    # `pub use child::path::{A, B}` in a directory module: re-exports, not uses; a module
    # naming `super::A` uses the module that defines A.
    reexport = {}
    for m, p in mods.items():
        if os.path.basename(p) != "mod.rs":
            continue
        src = strip_comments(open(p, encoding="utf-8").read())
        for head, group in re.findall(r"^\s*pub use ([A-Za-z_][A-Za-z0-9_:]*?)::\{([^{}]*)\};", src, flags=re.M):
            for g in group.split(","):
                name = g.strip().split(" as ")[-1].strip()
                if name:
                    reexport[(m, name)] = tuple(list(m) + head.split("::"))
        for head, name in re.findall(r"^\s*pub use ([A-Za-z_][A-Za-z0-9_:]*)::([A-Za-z_][A-Za-z0-9_]*);", src, flags=re.M):
            reexport[(m, name)] = tuple(list(m) + head.split("::"))
    for m, p in mods.items():
        src = strip_comments(open(p, encoding="utf-8").read())
        if os.path.basename(p) == "mod.rs":
            # declarations and re-exports are not uses
            src = re.sub(r"^\s*(pub(\(crate\))? )?(mod [a-z_]+;|use [a-z_]+::[^;]*;)", "", src, flags=re.M | re.S)
        base = list(m)  # `self` is the module; each `super` goes one level up
        # strip #[cfg(test)] mod tests { ... } at the end of the file: tests may use anything
        cut = re.search(r"#\[cfg\(test\)\]\s*mod tests", src)
        if cut:
            src = src[: cut.start()]
        # `use super::{a, b::c}` groups: one path per member
        paths = []
        for head, group in re.findall(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^{}]*)\}", src):
            paths += [head + "::" + g.strip() for g in group.split(",") if g.strip()]
        paths += re.findall(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)", src)
        # a directory module names its children bare (`lake::convert_hook`, `pub use append::..`)
        if os.path.basename(p) == "mod.rs":
            for child in {k[len(m)] for k in known if len(k) == len(m) + 1 and k[: len(m)] == m}:
                if re.search(r"(?<![:\w])" + child + r"::", src):
                    paths.append("self::" + child)
        for path in paths:
            parts = path.split("::")
            if parts[0] == "crate":
                cur = []
                parts = parts[1:]
            elif parts[0] == "self":
                cur = list(base)
                parts = parts[1:]
            else:
                cur = list(base)
                while parts and parts[0] == "super":
                    cur = cur[:-1]
                    parts = parts[1:]
            # longest known module prefix
            target = None
            for i in range(len(parts), -1, -1):
                t = tuple(cur + parts[:i])
                if t in known:
                    target = t
                    if i < len(parts) and (t, parts[i]) in reexport:
                        r = reexport[(t, parts[i])]
                        while r not in known:
                            r = r[:-1]
                        target = r
                    break
            if target and target != m and not (m[: len(target)] == target):
                # naming an ancestor module's item (e.g. `super::Format`) is a use of the
                # ancestor; naming a child is a use of the child
                edges[m].add(target)
            elif target and m[: len(target)] == target and target != m:
                edges[m].add(target)
    if "--edges" in sys.argv:
        for m in sorted(edges):
            print("::".join(m), "->", ", ".join(sorted("::".join(t) for t in edges[m])))
    # Tarjan
    index, low, stack, on, sccs, n = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop()
                on.discard(w)
                c.append(w)
                if w == v:
                    break
            sccs.append(c)

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            strong(v)
    cycles = [c for c in sccs if len(c) > 1]
    print(f"{len(mods)} modules, {sum(len(e) for e in edges.values())} edges, {len(cycles)} cycle(s)")
    for c in cycles:
        print("cycle:", " ".join(sorted("::".join(x) for x in c)))
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""scripts/count-public-items.py — count the public API items of the `marquet` crate.

Usage:  bash scripts/count-public-items.sh        (builds the docs, then runs this)
        python3 scripts/count-public-items.py DOC_DIR   (DOC_DIR = <target>/doc/marquet)

Method (stable toolchain, no nightly rustdoc JSON needed): rustdoc's HTML of
`cargo doc -p marquet --no-deps` (default features, `#[doc(hidden)]` items excluded, as
rustdoc excludes them). Counted:
  * modules: every directory under DOC_DIR holding an index.html (the crate root too);
  * items: every entry of DOC_DIR/all.html (structs, enums, functions, traits, type
    aliases, constants, statics, macros, unions) — each public path counted once, so an
    item re-exported at two paths counts twice, as a user sees two names;
  * members: on each struct/enum/trait/union page, the public fields (`structfield.`),
    enum variants (`variant.`), and inherent associated items (methods, constants, types
    of the `implementations-list`, i.e. not trait impls) and a trait's own required and
    provided items. Trait implementations (Debug, From, …) are not counted.
Prints one line per top-level module and the total.
"""
import os
import re
import sys
from collections import Counter

doc = sys.argv[1] if len(sys.argv) > 1 else "target/doc/marquet"
all_html = open(os.path.join(doc, "all.html"), encoding="utf-8").read()
# all.html: <ul class="all-items"><li><a href="path/struct.X.html">…
items = re.findall(r'<li><a href="([^"]+\.html)">', all_html)

modules = []
for root, _dirs, files in os.walk(doc):
    if "index.html" in files:
        modules.append(os.path.relpath(root, doc))


def top(path):
    return path.split("/")[0] if "/" in path else "(root)"


def members(page):
    """Public fields, variants and inherent associated items of one item page."""
    text = open(os.path.join(doc, page), encoding="utf-8").read()
    n = len(re.findall(r'id="structfield\.', text)) + len(re.findall(r'id="variant\.[^"]*"', text))
    kind = os.path.basename(page).split(".")[0]
    if kind == "trait":
        # required + provided items of the trait itself (before the implementors section)
        head = text.split('id="implementors"')[0]
        n += len(re.findall(r'id="(?:tymethod|method|associatedconstant|associatedtype)\.', head))
        return n
    m = re.search(r'<div id="implementations-list">(.*?)(?:<h2 id="(?:trait|synthetic|blanket)-implementations"|$)', text, re.S)
    if m:
        n += len(re.findall(r'id="(?:method|associatedconstant|associatedtype)\.', m.group(1)))
    return n


per_mod = Counter()
mem_total = 0
for it in items:
    per_mod[top(it)] += 1
    if os.path.basename(it).split(".")[0] in ("struct", "enum", "trait", "union"):
        k = members(it)
        per_mod[top(it)] += k
        mem_total += k
for m in modules:
    per_mod[top(m) if m != "." else "(root)"] += 1

kinds = Counter(os.path.basename(i).split(".")[0] for i in items)
for mod, n in sorted(per_mod.items(), key=lambda kv: -kv[1]):
    print(f"{mod:20} {n}")
print(f"modules {len(modules)}, items {len(items)} ({dict(kinds)}), members {mem_total}")
print(f"public items total: {len(modules) + len(items) + mem_total}")

"""Compare two Marquet files of examples/mpi_collective.rs with h5py alone (an independent
reader: its own HDF5 build, no Marquet code): the table /features of A (written
collectively by N MPI ranks) must equal that of B (written by one process) row for row
after sorting both by `id`, and carry the same BBOX / GEOMETRY_TYPES. Every member is read
up to NROWS / OFFSETS[NROWS] (HEP001 §12.1). Used by scripts/test-mpi.sh.

    python compare_h5py.py A.h5 B.h5 [EXPECTED_ROWS]
    python compare_h5py.py --rows A.h5     # print NROWS only (crash test)
    python compare_h5py.py --state A.h5 K RANKS
        # after a crash in the second append of `mpi_collective crash`: print "old" when the
        # table holds exactly the rows of the first append (ids r*K .. r*K + K/2 of every
        # rank r), "new" when it holds all of 0..K*RANKS, every row's geometry, value and
        # label equal to what the example generates for its id; exit 1 otherwise
"""
import struct
import sys

import h5py
import numpy as np


def nrows(f):
    return int(f["/features"].attrs["NROWS"])


def lists(g, n):
    """Rows of list column group g as a list of bytes (None for null)."""
    off = g["OFFSETS"][: n + 1]
    mask = g["MASK"][:n] if "MASK" in g else np.ones(n, dtype=bool)
    if isinstance(g["VALUES"], h5py.Group):  # STRING_VALUES: one string per entry here
        inner = g["VALUES"]
        ioff = inner["OFFSETS"][: off[-1] + 1]
        chars = inner["CHARS"][: ioff[-1]].tobytes()
        vals = [chars[ioff[j]:ioff[j + 1]] for j in range(len(ioff) - 1)]
        return [b"|".join(vals[off[i]:off[i + 1]]) if mask[i] else None for i in range(n)]
    v = g["VALUES"][: off[-1]].tobytes()
    return [v[off[i]:off[i + 1]] if mask[i] else None for i in range(n)]


def table(path):
    with h5py.File(path, "r") as f:
        t = f["/features"]
        n = nrows(f)
        ids = t["id"][:n]
        order = np.argsort(ids, kind="stable")
        geom = lists(t["geom"], n)
        label = lists(t["label"], n)
        out = {
            "n": n,
            "id": ids[order],
            "value": t["value"][:n][order],
            "bbox": t["bbox"][:n][order],
            "geom": [geom[i] for i in order],
            "label": [label[i] for i in order],
            "BBOX": t["geom"].attrs["BBOX"].tobytes(),
            "GEOMETRY_TYPES": list(t["geom"].attrs["GEOMETRY_TYPES"]),
        }
        return out


def square(i):
    """The WKB examples/mpi_collective.rs writes for feature i (None: null)."""
    if i % 1009 == 0:
        return None
    x = ((i * 7919) % 3600) / 10.0 - 180.0 + 0.01
    y = ((i * 104729) % 1700) / 10.0 - 85.0 + 0.01
    d = 0.05
    ring = [(x, y), (x + d, y), (x + d, y + d), (x, y + d), (x, y)]
    return struct.pack("<BIII", 1, 3, 1, len(ring)) + b"".join(struct.pack("<dd", px, py) for px, py in ring)


def state(path, k, ranks):
    t = table(path)
    old = np.sort(np.concatenate([np.arange(r * k, r * k + k // 2) for r in range(ranks)]))
    new = np.arange(k * ranks)
    if np.array_equal(t["id"], old):
        name = "old"
    elif np.array_equal(t["id"], new):
        name = "new"
    else:
        return f"NROWS {t['n']}: the ids are neither the first append's ({len(old)}) nor all {len(new)}"
    for j, i in enumerate(t["id"]):
        i = int(i)
        if t["geom"][j] != square(i):
            return f"{name} state, but the geometry of id {i} differs"
        if t["value"][j] != i * 0.5:
            return f"{name} state, but the value of id {i} is {t['value'][j]}"
        if t["label"][j] != f"f{i}".encode():
            return f"{name} state, but the label of id {i} is {t['label'][j]!r}"
    return name


def main():
    if sys.argv[1] == "--state":
        s = state(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
        print(s)
        return 0 if s in ("old", "new") else 1
    if sys.argv[1] == "--rows":
        with h5py.File(sys.argv[2], "r") as f:
            print(nrows(f))
        return 0
    a, b = table(sys.argv[1]), table(sys.argv[2])
    expected = int(sys.argv[3]) if len(sys.argv) > 3 else b["n"]
    problems = []
    if a["n"] != expected or b["n"] != expected:
        problems.append(f"NROWS {a['n']} / {b['n']}, expected {expected}")
    else:
        if not np.array_equal(a["id"], np.arange(expected)):
            problems.append("ids of A are not 0..N-1 exactly once")
        for k in ("id", "value", "bbox"):
            if a[k].tobytes() != b[k].tobytes():
                problems.append(f"column {k} differs")
        for k in ("geom", "label"):
            d = [i for i in range(expected) if a[k][i] != b[k][i]]
            if d:
                problems.append(f"column {k} differs in {len(d)} rows (first id {a['id'][d[0]]})")
        for k in ("BBOX", "GEOMETRY_TYPES"):
            if a[k] != b[k]:
                problems.append(f"attribute {k} differs: {a[k]!r} vs {b[k]!r}")
    if problems:
        print("h5py comparison FAILED: " + "; ".join(problems))
        return 1
    nulls = sum(g is None for g in a["geom"])
    print(f"h5py {h5py.__version__} (HDF5 {h5py.version.hdf5_version}): {expected} rows equal after sorting by id "
          f"({nulls} null geometries), BBOX and GEOMETRY_TYPES equal")
    return 0


if __name__ == "__main__":
    sys.exit(main())

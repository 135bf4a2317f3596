"""Window queries answered as Arrow tables (issue #33 item 1): ``Table.read_arrow(bbox=w)``
over a file of windows on one open table; with ``--geodataframe``,
``Table.read_geodataframe(bbox=w)`` (GeoArrow native encodings, then geopandas).

    python python/benchmarks/query_arrow.py FILE TABLE WINDOWS [--passes P] [--geodataframe]

WINDOWS holds one window ``XMIN,YMIN,XMAX,YMAX`` per line (``marquet bench`` writes
``windows.txt``). After one pass over every window (the reader's caches warm), P passes;
prints the best pass's time per window and the rows returned in a pass. To compare two
builds, install each wheel in its own venv and run the command in each in turn, several
rounds, as docs/PERFORMANCE.md "Session 21" did.
"""

import argparse
import time


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("table")
    ap.add_argument("windows")
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--geodataframe", action="store_true")
    a = ap.parse_args()

    import marquet

    with open(a.windows) as f:
        windows = [tuple(float(v) for v in line.split(",")) for line in f if line.strip()]
    with marquet.Table(a.file, a.table) as t:
        read = (lambda w: len(t.read_geodataframe(bbox=w))) if a.geodataframe else (lambda w: t.read_arrow(bbox=w).num_rows)
        for w in windows:
            read(w)
        best = float("inf")
        rows = 0
        for _ in range(a.passes):
            t0 = time.perf_counter()
            rows = sum(read(w) for w in windows)
            best = min(best, time.perf_counter() - t0)
    print(f"{best / len(windows) * 1e3:.3f} ms per window, {rows} rows")


if __name__ == "__main__":
    main()

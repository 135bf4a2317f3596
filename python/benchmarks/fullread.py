"""Full reads, Marquet vs GeoParquet (issue #33 item 6): a whole table to Arrow and to a
GeoDataFrame, against pyarrow and geopandas on the same data.

    python python/benchmarks/fullread.py POINTS.h5 POINTS.parquet POLYGONS.h5 POLYGONS.parquet [--reps R]
    python python/benchmarks/fullread.py --one KIND FILE     # one read, for whole-process timing

In-process: after one warm-up of each, R rounds; each round runs, in turn, read_arrow,
pq.read_table, read_geodataframe and geopandas.read_parquet on each pair of files (A B A B
..., so drift of the machine's speed hits both sides alike). Prints each median and the
median of the per-round ratios, of wall time and of the process's CPU time (all threads). `--one KIND FILE` does one read of KIND (read_arrow,
read_table, read_geodataframe, read_parquet) and exits: time it as a whole process, e.g.
with `/usr/bin/time -v`, alternating the two commands.
"""

import argparse
import statistics
import time


def readers():
    import geopandas
    import pyarrow.parquet as pq

    import marquet

    return {
        "read_arrow": marquet.read_arrow,
        "read_table": pq.read_table,
        "read_geodataframe": marquet.read_geodataframe,
        "read_parquet": geopandas.read_parquet,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="*")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--one", nargs=2, metavar=("KIND", "FILE"))
    a = ap.parse_args()
    if a.one:
        kind, path = a.one
        if kind in ("read_arrow", "read_geodataframe"):
            import marquet

            n = len(getattr(marquet, kind)(path))
        elif kind == "read_table":
            import pyarrow.parquet as pq

            n = pq.read_table(path).num_rows
        else:
            import geopandas

            n = len(geopandas.read_parquet(path))
        print(n)
        return
    r = readers()
    pairs = [(a.files[i], a.files[i + 1]) for i in range(0, len(a.files), 2)]
    for h5, pqf in pairs:
        ta = r["read_arrow"](h5)
        tp = r["read_table"](pqf)
        assert ta.num_rows == tp.num_rows
        assert ta.column("geometry").combine_chunks().equals(tp.column("geometry").combine_chunks().cast(ta.schema.field("geometry").type))
        times = {k: [] for k in r}
        cpu = {k: [] for k in r}
        for _ in range(a.reps):
            for m, p in (("read_arrow", "read_table"), ("read_geodataframe", "read_parquet")):
                for k, f in ((m, h5), (p, pqf)):
                    c0, t0 = time.process_time(), time.perf_counter()
                    r[k](f)
                    times[k].append(time.perf_counter() - t0)
                    cpu[k].append(time.process_time() - c0)

        def line(m, p):
            med = {k: statistics.median(times[k]) * 1e3 for k in (m, p)}
            mc = {k: statistics.median(cpu[k]) * 1e3 for k in (m, p)}
            ratio = statistics.median(x / y for x, y in zip(times[m], times[p]))
            cratio = statistics.median(x / y for x, y in zip(cpu[m], cpu[p]))
            print(
                f"{h5}: {m} {med[m]:.1f} ms (cpu {mc[m]:.1f}), {p} {med[p]:.1f} ms (cpu {mc[p]:.1f}): "
                f"ratio {ratio:.2f} (cpu {cratio:.2f})",
                flush=True,
            )

        line("read_arrow", "read_table")
        line("read_geodataframe", "read_parquet")


if __name__ == "__main__":
    main()

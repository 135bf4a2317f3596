"""Markdown rows for the benchmark of scripts/test-mpi.sh from the JSON lines that
examples/mpi_collective.rs prints (`write` on rank 0, `serial`).

    python bench_table.py --header
    python bench_table.py RESULT.json
"""
import json
import sys

if sys.argv[1] == "--header":
    print("| ranks | rows | collective appends | seconds | rows/s | MiB | MPI collectives / append / rank "
          "| collective H5Dwrite / append / rank | rank 0: prepare s | rank 0: write s | rank 0: summaries + indexes s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    sys.exit(0)
r = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
if r["mode"] == "serial":
    print(f"| serial API, 1 process, no MPI | {r['rows']:,} | 2 | {r['seconds']:.2f} | {r['rows'] / r['seconds']:,.0f} | | | | | | |")
else:
    p = r["rank0_phases"]
    print(f"| {r['ranks']} | {r['rows']:,} | {r['appends']} | {r['seconds']:.2f} | {r['rows_per_s']:,.0f} | {r['file_mib']:.1f} "
          f"| {r['mpi_collectives_per_append']} | {r['collective_writes_per_append']} | {p['prepare']:.2f} | {p['write']:.2f} "
          f"| {p['summaries_and_indexes']:.2f} |")

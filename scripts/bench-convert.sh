#!/usr/bin/env bash
# Conversion benchmark (issue #8): a 1,000,000-row GeoParquet file of seeded clustered
# points (src/bin/marquet/synth.rs `clustered_points`, seed 42) with three attribute columns (id int64,
# category uint8, value float64), converted GeoParquet -> Marquet and Marquet -> GeoParquet
# by the release `marquet` binary, against pyarrow's `pq.read_table` of the same file (and
# geopandas' `read_parquet`, which also decodes the WKB into shapely geometries).
#
#   bash scripts/bench-convert.sh [ROWS] [RUNS]      (defaults 1000000 and 3)
#
# Each step runs RUNS times; the script prints every wall time and peak RSS (GNU time), and
# pyarrow's in-process time (without interpreter start and imports). Files go to
# $BENCH_DIR (default /tmp/marquet-bench-convert). Needs the Python venv of
# scripts/pyvenv.sh (pyarrow, geopandas) and /usr/bin/time.
set -euo pipefail
ROWS=${1:-1000000}
RUNS=${2:-3}
DIR=${BENCH_DIR:-/tmp/marquet-bench-convert}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
# shellcheck disable=SC1091
source scripts/bootstrap.sh >/dev/null
PY=${MARQUET_PYVENV:-${XDG_CACHE_HOME:-$HOME/.cache}/marquet/pyvenv}/bin/python
[ -x "$PY" ] || bash scripts/pyvenv.sh
cargo build --release --quiet --bin marquet --example synth_points
M=$ROOT/target/release/marquet
rm -rf "$DIR" && mkdir -p "$DIR"

target/release/examples/synth_points "$DIR/synth.h5" "$ROWS"
"$M" convert "$DIR/synth.h5" "$DIR/points.parquet" >/dev/null
echo "input: $DIR/points.parquet, $(stat -c %s "$DIR/points.parquet") bytes, $ROWS rows"
"$PY" - "$DIR/points.parquet" <<'PYEOF'
import sys, pyarrow.parquet as pq
f = pq.ParquetFile(sys.argv[1])
print("  schema:", ", ".join(f"{x.name}: {x.physical_type}" for x in f.schema), "| row groups:", f.num_row_groups)
PYEOF

run() { # label, command...
  local label=$1; shift
  for i in $(seq "$RUNS"); do
    /usr/bin/time -f "$label run $i: %e s wall, %M KB max RSS" "$@" >/dev/null
  done
}
run "marquet convert GeoParquet -> Marquet" bash -c "rm -f '$DIR/out.h5' && '$M' convert '$DIR/points.parquet' '$DIR/out.h5' --table /points"
echo "  output: $(stat -c %s "$DIR/out.h5") bytes"
run "marquet convert Marquet -> GeoParquet" "$M" convert "$DIR/out.h5" "$DIR/out.parquet"
echo "  output: $(stat -c %s "$DIR/out.parquet") bytes"
run "pyarrow pq.read_table (process)" "$PY" -c "import sys, pyarrow.parquet as pq; pq.read_table(sys.argv[1])" "$DIR/points.parquet"
run "geopandas read_parquet (process)" "$PY" -c "import sys, geopandas; geopandas.read_parquet(sys.argv[1])" "$DIR/points.parquet"
"$PY" - "$DIR/points.parquet" "$RUNS" <<'PYEOF'
import sys, time, pyarrow.parquet as pq
for i in range(int(sys.argv[2])):
    t = time.perf_counter()
    tb = pq.read_table(sys.argv[1])
    print(f"pyarrow pq.read_table in-process run {i + 1}: {time.perf_counter() - t:.3f} s ({tb.num_rows} rows)")
PYEOF

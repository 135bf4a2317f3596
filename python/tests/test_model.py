"""The model-based test of issue #38 (tests/model/model_test.py) driving the Python package:
``marquet.append`` of GeoDataFrames, ``marquet.convert`` / ``marquet.write`` of new tables
into the same file, ``Table.query`` for every predicate over random windows (degenerate,
whole world, antimeridian-wrapping), ``marquet.validate`` and ``read_geodataframe`` — each
compared with the same geopandas/shapely model as the CLI run. Files are made, indexed and
the refusals cross-checked by the ``marquet`` command of the installed wheel.

MARQUET_MODEL_PY_TRIALS (default 4) trials of 9 operations, seeds from 700.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tests" / "model" / "model_test.py"


def test_model_based_sequences_through_the_python_package(tmp_path):
    pytest.importorskip("geopandas")
    cli = shutil.which("marquet")
    assert cli, "the marquet command of the installed package is not on PATH"
    if not SCRIPT.exists():
        pytest.skip("tests/model/model_test.py is not in this checkout")
    trials = os.environ.get("MARQUET_MODEL_PY_TRIALS", "4")
    p = subprocess.run(
        [sys.executable, str(SCRIPT), "--marquet", cli, "--api", "python", "--seed", "700", "--trials", trials,
         "--workdir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    print(p.stdout, p.stderr)
    assert p.returncode == 0, p.stderr[-6000:]
    line = next(l for l in p.stdout.splitlines() if l.startswith("model test"))
    counts = {}
    for key in ("operations", "query answers compared", "exports compared", "failures"):
        rest = line[line.index(key + " ") + len(key) + 1:]
        counts[key] = int(rest.split(",")[0].split()[0])
    assert counts["failures"] == 0, line
    assert counts["operations"] >= 4 * int(trials), line
    assert counts["query answers compared"] >= 100 * int(trials), line
    assert counts["exports compared"] >= 5 * int(trials), line

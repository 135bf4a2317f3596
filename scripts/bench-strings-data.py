"""Data of docs/PERFORMANCE.md "String storage": N points with three string attribute columns
(name, iso, note; nulls, empty strings, non-ASCII text), seed 38, as GeoParquet.

    ~/.cache/marquet/pyvenv/bin/python scripts/bench-strings-data.py 300000 attrs.parquet
"""
import sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq, shapely, geopandas as gpd, pandas as pd
n = int(sys.argv[1]); rng = np.random.default_rng(38)
words = ["river", "mount", "lake", "saint", "new", "port", "north", "east", "green", "stone", "Zürich", "São", "東京", "Kraków"]
def name(i):
    k = rng.integers(1, 4)
    return " ".join(rng.choice(words, k)) + f" {i}"
names = [name(i) for i in range(n)]
for i in range(0, n, 20): names[i] = None
for i in range(7, n, 50): names[i] = ""
codes = [["FR", "DE", "ES", "IT", "PL", "JP", "BR", ""][i % 8] for i in range(n)]
desc = [("lorem ipsum dolor sit amet " * int(rng.integers(0, 4)))[: int(rng.integers(0, 80))] for i in range(n)]
df = gpd.GeoDataFrame({"name": names, "iso": codes, "note": desc},
    geometry=gpd.points_from_xy(rng.uniform(-180, 180, n), rng.uniform(-90, 90, n)), crs="OGC:CRS84")
df.to_parquet(sys.argv[2])
print("rows", n, "string bytes", sum(len(x.encode()) for x in names if x) + sum(len(x) for x in codes) + sum(len(x) for x in desc))

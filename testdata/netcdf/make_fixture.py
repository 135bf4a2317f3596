"""Regenerates testdata/netcdf/arrays.nc, the netCDF-4 file of tests/netcdf.rs (issue #35):
what users' arrays look like (a 3-D float variable over time/lat/lon with CF attributes,
coordinate variables, an int16 variable with scale_factor and _FillValue, a string
variable, a group with its own dimension and variable, global attributes), written by
netCDF4-python (netCDF-C). Deterministic.

    ~/.cache/marquet/pyvenv/bin/python testdata/netcdf/make_fixture.py testdata/netcdf/arrays.nc
"""
import sys

import netCDF4
import numpy as np

out = sys.argv[1]
with netCDF4.Dataset(out, "w", format="NETCDF4") as ds:
    ds.title = "Marquet netCDF-4 fixture"
    ds.Conventions = "CF-1.8"
    ds.createDimension("time", None)
    ds.createDimension("lat", 4)
    ds.createDimension("lon", 5)
    t = ds.createVariable("time", "f8", ("time",))
    t.units = "hours since 2026-01-01 00:00:00"
    t[:] = [0.0, 6.0, 12.0]
    lat = ds.createVariable("lat", "f4", ("lat",))
    lat.units = "degrees_north"
    lat[:] = [-45.0, -15.0, 15.0, 45.0]
    lon = ds.createVariable("lon", "f4", ("lon",))
    lon.units = "degrees_east"
    lon[:] = [-120.0, -60.0, 0.0, 60.0, 120.0]
    t2m = ds.createVariable("t2m", "f4", ("time", "lat", "lon"), zlib=True, fill_value=np.float32(-9999.0))
    t2m.units = "K"
    t2m.long_name = "2 metre temperature"
    t2m[:] = (270.0 + np.arange(60, dtype="f4").reshape(3, 4, 5) / 4.0)
    sp = ds.createVariable("sp", "i2", ("time", "lat", "lon"), fill_value=np.int16(-32767))
    sp.scale_factor = 0.5
    sp.add_offset = 100000.0
    sp[:] = np.arange(60, dtype="f8").reshape(3, 4, 5) * 10.0 + 100000.0
    st = ds.createVariable("station_name", str, ("lon",))
    st[:] = np.array(["Quito", "Zürich", "", "東京", "Nuuk"], dtype=object)
    g = ds.createGroup("forecast")
    g.createDimension("step", 2)
    v = g.createVariable("precip", "f8", ("step", "lat"))
    v.units = "mm"
    v[:] = np.arange(8, dtype="f8").reshape(2, 4)
    g.source = "fixture"

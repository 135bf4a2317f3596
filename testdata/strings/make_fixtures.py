"""Regenerates the string fixtures of testdata/strings/ (see README.md here).

Every HEP001 string form (issue #35), written by other producers than Marquet:
  h5py_strings.h5      h5py: an H5Col table /t whose columns are fixed-length ASCII and
                       UTF-8 (null-padded, null-terminated), variable-length ASCII and UTF-8
                       with fill "" and with fill b"\\xff", one without a fill, two
                       categorical columns (fixed-length and variable-length labels), and
                       variable-length string attributes (h5py's default for str).
  netcdf4_strings.nc   netCDF4-python (netCDF-C): NC_STRING (variable-length UTF-8)
                       variables in group /t over a root dimension; h5py then adds the
                       HEP001 table attributes (netCDF attributes are 1-D, not scalar).
                       netCDF-C declares its default fill "" for NC_STRING, so under
                       HEP001 §8.5 the empty string of row 1 reads as missing.
  expected.json        h5py's reading of every column: the oracle of tests/strings.rs.

Run with the test venv (scripts/pyvenv.sh) plus netCDF4:  python make_fixtures.py
"""
import json
import numpy as np
import h5py

NROWS = 6
VALUES = ["a", "", "Zürich", "日本語", "\uffff", "long value with spaces  "]
# Row 5 is missing in the columns that declare a fill (written as the fill itself).


def table_attrs(g, n, order):
    g.attrs.create("CLASS", np.array(b"COLUMN_TABLE", dtype="S13"))
    g.attrs.create("VERSION", np.array(b"1.0", dtype="S4"))
    g.attrs.create("NROWS", np.uint64(n))
    g.attrs.create("column-order", np.array([c.encode() for c in order], dtype=h5py.string_dtype("utf-8", 32)))


def fixed(g, name, enc, size, values, fill):
    """Fixed-length, null-padded (h5py's only fixed form), character set `enc`."""
    npt = h5py.string_dtype(enc, size)
    arr = np.array([v if isinstance(v, bytes) else v.encode() for v in values], dtype=npt)
    kw = {} if fill is None else {"fillvalue": np.array(fill, dtype=npt)[()]}
    g.create_dataset(name, data=arr, dtype=npt, **kw)


def vlen(g, name, enc, values, fill):
    dt = h5py.string_dtype(enc)
    kw = {} if fill is None else {"fillvalue": fill}
    d = g.create_dataset(name, (len(values),), dtype=dt, **kw)
    d[...] = np.array([v.encode() if isinstance(v, str) else v for v in values], dtype=object)


def oracle(f, expected):
    """h5py's reading of table /t: labels for categorical columns; the HEP001 §8.5 fill
    test on the bytes (up to the first NUL) for the others; bytes decoded as UTF-8."""
    got = {}
    for name in expected:
        d = f["t"][name]
        if "CATEGORIES" in d.attrs:
            labels = [x.decode() if isinstance(x, bytes) else x for x in f[d.attrs["CATEGORIES"]][...]]
            got[name] = [None if c == -127 else labels[c] for c in d[...]]
            continue
        pl = d.id.get_create_plist()
        fill = None
        if pl.fill_value_defined() == h5py.h5d.FILL_VALUE_USER_DEFINED:
            buf = np.zeros((1,), dtype=d.dtype)
            pl.get_fill_value(buf)
            fill = buf[0] if isinstance(buf[0], bytes) else bytes(buf[0])
        raw = [bytes(x) for x in d[...]]
        got[name] = [None if (fill is not None and x.rstrip(b"\0") == fill.rstrip(b"\0")) else x.rstrip(b"\0").decode() for x in raw]
    return got


def h5py_file(path):
    expected = {}
    with h5py.File(path, "w") as f:
        f.create_dataset("temperature", data=np.arange(4, dtype="f4"))  # an array beside the table
        g = f.create_group("t")
        ascii_vals = ["a", "", "Zurich", "abc", "x y", ""]
        utf8_vals = VALUES[:5] + [""]
        cols = []
        # Fixed-length ASCII, null-padded (h5py's 'S'), fill b"\xff" (no value equals it).
        fixed(g, "fixed_ascii_nullpad", "ascii", 8, ascii_vals[:5] + [b"\xff"], b"\xff")
        expected["fixed_ascii_nullpad"] = ascii_vals[:5] + [None]
        # Fixed-length UTF-8, null-padded, fill "" (HEP001's recommended: "" reads as missing).
        fixed(g, "fixed_utf8_nullpad", "utf-8", 32, ["a", "b", "Zürich", "日本語", "\uffff", ""], b"")
        expected["fixed_utf8_nullpad"] = ["a", "b", "Zürich", "日本語", "\uffff", None]
        # Variable-length UTF-8 with fill "" (what issue #35 found netCDF tools read).
        vlen(g, "vlen_utf8_fill_empty", "utf-8", ["a", "b", "Zürich", "日本語", "\uffff", ""], b"")
        expected["vlen_utf8_fill_empty"] = ["a", "b", "Zürich", "日本語", "\uffff", None]
        # Variable-length UTF-8 with fill b"\xff": "" is a value.
        vlen(g, "vlen_utf8_fill_ff", "utf-8", utf8_vals[:5] + [b"\xff"], b"\xff")
        expected["vlen_utf8_fill_ff"] = utf8_vals[:5] + [None]
        # Variable-length ASCII with fill "".
        vlen(g, "vlen_ascii_fill_empty", "ascii", ["a", "b", "Zurich", "abc", "x y", ""], b"")
        expected["vlen_ascii_fill_empty"] = ["a", "b", "Zurich", "abc", "x y", None]
        # Variable-length UTF-8 without a fill value: every row is a value.
        vlen(g, "vlen_utf8_nofill", "utf-8", VALUES, None)
        expected["vlen_utf8_nofill"] = VALUES
        # Categorical columns: int8 codes, fill -127, labels fixed-length and variable-length.
        cats = g.create_group("CATEGORIES")
        fixed(cats, "fixed_labels", "utf-8", 16, ["Africa", "Europe", "Asië"], None)
        cats.create_dataset("vlen_labels", data=np.array(["Africa", "Europe", "Asië"], dtype=object), dtype=h5py.string_dtype("utf-8"))
        codes = np.array([0, 1, 2, -127, 1, 0], dtype="i1")
        for name, lab in (("cat_fixed_labels", "fixed_labels"), ("cat_vlen_labels", "vlen_labels")):
            d = g.create_dataset(name, data=codes, fillvalue=np.int8(-127))
            d.attrs.create("CATEGORIES", cats[lab].ref, dtype=h5py.ref_dtype)
            expected[name] = ["Africa", "Europe", "Asië", None, "Europe", "Africa"]
        # A variable-length string attribute (h5py's default for str).
        g["vlen_utf8_fill_ff"].attrs["description"] = "variable-length description, ü"
        order = ["fixed_ascii_nullpad", "fixed_utf8_nullpad", "vlen_utf8_fill_empty", "vlen_utf8_fill_ff",
                 "vlen_ascii_fill_empty", "vlen_utf8_nofill", "cat_fixed_labels", "cat_vlen_labels"]
        table_attrs(g, NROWS, order)
        f.attrs["generator"] = "h5py %s, HDF5 %s" % (h5py.__version__, h5py.version.hdf5_version)
    with h5py.File(path, "r") as f:
        got = oracle(f, expected)
        assert got == expected, (got, expected)
    return expected


def netcdf_file(path):
    import netCDF4
    with netCDF4.Dataset(path, "w", format="NETCDF4") as ds:
        ds.createDimension("lat", 3)
        ds.createDimension("row", NROWS)
        v = ds.createVariable("t2m", "f4", ("lat",))
        v[:] = [280.0, 281.5, 283.25]
        v.units = "K"
        g = ds.createGroup("t")
        s = g.createVariable("name", str, ("row",))
        s[:] = np.array(VALUES, dtype=object)
        lib = "netCDF4-python %s, netCDF-C %s, HDF5 %s" % (netCDF4.__version__, netCDF4.__netcdf4libversion__, netCDF4.__hdf5libversion__)
    with h5py.File(path, "r+") as f:
        table_attrs(f["t"], NROWS, ["name"])
        f.attrs["generator"] = lib + "; HEP001 table attributes by h5py %s" % h5py.__version__
    # netCDF-C declares the default fill "" for NC_STRING variables: under HEP001 §8.5
    # that makes the empty string of row 1 a missing value.
    expected = {"name": [None if v == "" else v for v in VALUES]}
    with h5py.File(path, "r") as f:
        assert oracle(f, expected) == expected
    return expected


if __name__ == "__main__":
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    exp = {"h5py_strings.h5": h5py_file(os.path.join(here, "h5py_strings.h5")),
           "netcdf4_strings.nc": netcdf_file(os.path.join(here, "netcdf4_strings.nc"))}
    with open(os.path.join(here, "expected.json"), "w", encoding="utf-8") as out:
        json.dump(exp, out, ensure_ascii=False, indent=1, sort_keys=True)
        out.write("\n")

"""Tests of the GDAL driver plugin gdal_Marquet.so (gdal/README.md), run by
scripts/test-gdal.sh with Debian's python3-gdal (the `osgeo` bindings of the system GDAL).

Oracles: the `marquet` command (info --json, query --count, validate), GDAL's own
GeoPackage driver for the round trips (features compared as multisets of ISO WKB and
field values: the Marquet writer puts rows in Hilbert order), and the exit status and
stderr of ogrinfo / ogr2ogr for damaged and foreign files.

Environment: GDAL_DRIVER_PATH (the plugin's directory), MARQUET_BIN (the CLI),
MARQUET_DEMO (natural_earth.h5 of `marquet demo`), MARQUET_TMP (a scratch directory).
"""

import json
import os
import random
import shutil
import subprocess
import unittest

from osgeo import gdal, ogr, osr

gdal.UseExceptions()
ogr.UseExceptions()

MARQUET = os.environ["MARQUET_BIN"]
DEMO = os.environ["MARQUET_DEMO"]
TMP = os.environ["MARQUET_TMP"]


def run(*args, check=True):
    p = subprocess.run(list(args), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"{' '.join(args)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def info(path):
    return json.loads(run(MARQUET, "info", "--json", path).stdout)


def features(path, layer=None):
    """Every feature of a layer as a sorted list of (WKB hex, field values by name)."""
    ds = gdal.OpenEx(path, gdal.OF_VECTOR)
    lyr = ds.GetLayerByName(layer) if layer else ds.GetLayer(0)
    defn = lyr.GetLayerDefn()
    names = [defn.GetFieldDefn(i).GetName() for i in range(defn.GetFieldCount())]
    out = []
    for f in lyr:
        g = f.GetGeometryRef()
        wkb = g.ExportToIsoWkb().hex() if g is not None else None
        vals = []
        for i, n in enumerate(names):
            if not f.IsFieldSetAndNotNull(i):
                vals.append((n, None))
                continue
            fd = defn.GetFieldDefn(i)
            t = fd.GetType()
            if t in (ogr.OFTDate, ogr.OFTDateTime):
                vals.append((n, f.GetFieldAsString(i)))
            else:
                vals.append((n, f.GetField(i)))
        out.append((wkb, tuple(sorted(vals))))
    return sorted(out, key=repr)


def field_types(path, layer=None):
    ds = gdal.OpenEx(path, gdal.OF_VECTOR)
    lyr = ds.GetLayerByName(layer) if layer else ds.GetLayer(0)
    d = lyr.GetLayerDefn()
    return {d.GetFieldDefn(i).GetName(): (d.GetFieldDefn(i).GetType(), d.GetFieldDefn(i).GetSubType())
            for i in range(d.GetFieldCount())}


def make_gpkg(path, n=700, seed=7):
    """A GeoPackage with every field type GeoPackage has, nulls, and polygons,
    multipolygons and null geometries in EPSG:3857."""
    rnd = random.Random(seed)
    drv = ogr.GetDriverByName("GPKG")
    if os.path.exists(path):
        drv.DeleteDataSource(path)
    ds = drv.CreateDataSource(path)
    srs = osr.SpatialReference()
    srs.ImportFromEPSG(3857)
    lyr = ds.CreateLayer("parcels", srs, ogr.wkbMultiPolygon)
    fields = [("i32", ogr.OFTInteger, ogr.OFSTNone), ("i64", ogr.OFTInteger64, ogr.OFSTNone),
              ("i16", ogr.OFTInteger, ogr.OFSTInt16), ("flag", ogr.OFTInteger, ogr.OFSTBoolean),
              ("real", ogr.OFTReal, ogr.OFSTNone), ("f32", ogr.OFTReal, ogr.OFSTFloat32),
              ("name", ogr.OFTString, ogr.OFSTNone), ("day", ogr.OFTDate, ogr.OFSTNone),
              ("stamp", ogr.OFTDateTime, ogr.OFSTNone)]
    for name, t, st in fields:
        fd = ogr.FieldDefn(name, t)
        fd.SetSubType(st)
        lyr.CreateField(fd)
    lyr.StartTransaction()
    for k in range(n):
        f = ogr.Feature(lyr.GetLayerDefn())
        x, y = rnd.uniform(-2e7, 2e7), rnd.uniform(-1e7, 1e7)
        w, h = rnd.uniform(10, 5e4), rnd.uniform(10, 5e4)
        ring = f"(({x} {y},{x + w} {y},{x + w} {y + h},{x} {y + h},{x} {y}))"
        if k % 11 != 3:
            if k % 2:
                wkt = f"MULTIPOLYGON({ring},(({x + 2 * w} {y},{x + 3 * w} {y},{x + 3 * w} {y + h},{x + 2 * w} {y}))))"
            else:
                wkt = f"MULTIPOLYGON({ring})"
            f.SetGeometry(ogr.CreateGeometryFromWkt(wkt))
        def maybe(i, v):
            if rnd.random() < 0.1:
                f.SetFieldNull(i)
            else:
                f.SetField(i, v)
        maybe("i32", rnd.randint(-2**31 + 2, 2**31 - 1))
        maybe("i64", rnd.randint(-2**62, 2**62))
        maybe("i16", rnd.randint(-32768, 32767))
        maybe("flag", rnd.randint(0, 1))
        maybe("real", rnd.uniform(-1e9, 1e9))
        maybe("f32", float(rnd.randint(-1000, 1000)) / 8)
        maybe("name", "".join(rnd.choice("abcxyzäöü東京 ") for _ in range(rnd.randint(0, 30))))
        if rnd.random() < 0.9:
            f.SetField("day", rnd.randint(1900, 2100), rnd.randint(1, 12), rnd.randint(1, 28), 0, 0, 0, 0)
        if rnd.random() < 0.9:
            f.SetField("stamp", rnd.randint(1970, 2037), rnd.randint(1, 12), rnd.randint(1, 28),
                       rnd.randint(0, 23), rnd.randint(0, 59), rnd.randint(0, 59) + rnd.randint(0, 999) / 1000, 100)
        lyr.CreateFeature(f)
    lyr.CommitTransaction()
    ds = None


class Driver(unittest.TestCase):
    def test_registered_as_a_vector_driver_with_honest_capabilities(self):
        d = ogr.GetDriverByName("Marquet")
        self.assertIsNotNone(d, "the plugin did not load (GDAL_DRIVER_PATH?)")
        self.assertEqual(d.GetMetadataItem(gdal.DCAP_VECTOR), "YES")
        ds = gdal.OpenEx(DEMO, gdal.OF_VECTOR)
        self.assertEqual(ds.GetDriver().ShortName, "Marquet")
        lyr = ds.GetLayer(0)
        for cap in (ogr.OLCFastFeatureCount, ogr.OLCFastGetExtent, ogr.OLCFastSpatialFilter,
                    ogr.OLCRandomRead, ogr.OLCStringsAsUTF8, ogr.OLCIgnoreFields):
            self.assertTrue(lyr.TestCapability(cap), cap)
        for cap in (ogr.OLCSequentialWrite, ogr.OLCCreateField, ogr.OLCRandomWrite,
                    ogr.OLCDeleteFeature, ogr.OLCTransactions):
            self.assertFalse(lyr.TestCapability(cap), cap)
        self.assertFalse(ds.TestCapability(ogr.ODsCCreateLayer))


class Read(unittest.TestCase):
    def test_ogrinfo_so_lists_every_table_with_count_extent_and_srs(self):
        want = {t["path"].lstrip("/"): t for t in info(DEMO)["tables"] if t["marquet"]}
        self.assertGreaterEqual(len(want), 2)
        out = run("ogrinfo", "-so", "-al", DEMO).stdout
        blocks = out.split("Layer name: ")[1:]
        self.assertEqual(sorted(b.splitlines()[0].strip() for b in blocks), sorted(want))
        for b in blocks:
            name = b.splitlines()[0].strip()
            t = want[name]
            self.assertIn(f"Feature Count: {t['nrows']}\n", b)
            g = t["geometry_columns"][0]
            xmin, ymin, xmax, ymax = g["bbox"]
            ext = [l for l in b.splitlines() if l.startswith("Extent: ")][0]
            nums = [float(v) for v in ext.replace("Extent: ", "").replace("(", "").replace(")", "").replace(" - ", ",").split(",")]
            for got, want_v in zip(nums, [xmin, ymin, xmax, ymax]):
                self.assertAlmostEqual(got, want_v, places=6, msg=ext)  # ogrinfo prints 6 decimals
            ds = gdal.OpenEx(DEMO, gdal.OF_VECTOR)
            lyr = ds.GetLayerByName(name)
            self.assertEqual(lyr.GetExtent(force=0), (xmin, xmax, ymin, ymax))  # the BBOX, exactly
            self.assertIn("Layer SRS WKT:", b)
            self.assertIn('ID["OGC","CRS84"]', b.replace(" ", "").replace("\n", "")) if g["crs"] in ("OGC:CRS84", "default (OGC:CRS84)") else None
            self.assertIn(f"Geometry Column = {g['name']}", b)
        # And through the Python API: GetFeatureCount and GetExtent without a scan.
        ds = gdal.OpenEx(DEMO, gdal.OF_VECTOR)
        for i in range(ds.GetLayerCount()):
            lyr = ds.GetLayer(i)
            t = want[lyr.GetName()]
            self.assertEqual(lyr.GetFeatureCount(force=0), t["nrows"])
            n = sum(1 for _ in lyr)
            self.assertEqual(n, t["nrows"])
            self.assertEqual(lyr.GetSpatialRef().GetAuthorityName(None) in ("OGC", "EPSG"), True)

    def test_fid_is_the_row_and_random_reads_match_the_scan(self):
        ds = gdal.OpenEx(DEMO, gdal.OF_VECTOR)
        lyr = ds.GetLayerByName("countries")
        scan = [(f.GetFID(), f.GetGeometryRef().ExportToIsoWkb(), f.items()) for f in lyr]
        self.assertEqual([s[0] for s in scan], list(range(len(scan))))
        for fid in (0, 1, len(scan) // 2, len(scan) - 1):
            f = lyr.GetFeature(fid)
            self.assertEqual((f.GetFID(), f.GetGeometryRef().ExportToIsoWkb(), f.items()), scan[fid])
        # A random read in the middle of a scan does not disturb the scan.
        lyr.ResetReading()
        first = lyr.GetNextFeature().GetFID()
        lyr.GetFeature(len(scan) - 1)
        self.assertEqual((first, lyr.GetNextFeature().GetFID()), (0, 1))
        self.assertIsNone(lyr.GetFeature(len(scan)))

    def test_spatial_filter_counts_equal_marquet_query_on_50_windows(self):
        rnd = random.Random(36)
        windows = []
        for _ in range(50):
            cx, cy = rnd.uniform(-180, 180), rnd.uniform(-85, 85)
            w, h = rnd.choice([0.5, 5, 20, 60]), rnd.choice([0.5, 5, 20, 40])
            windows.append((cx - w, cy - h, cx + w, cy + h))
        path = os.path.join(TMP, "windows.txt")
        with open(path, "w") as fh:
            fh.write("".join(f"{a},{b},{c},{d}\n" for a, b, c, d in windows))
        ds = gdal.OpenEx(DEMO, gdal.OF_VECTOR)
        checked = 0
        for table in ("countries", "cities"):
            want = [int(l) for l in run(MARQUET, "query", DEMO, "--table", "/" + table, "--bbox-file", path, "--count").stdout.split()]
            self.assertEqual(len(want), 50)
            lyr = ds.GetLayerByName(table)
            for (a, b, c, d), n in zip(windows, want):
                lyr.SetSpatialFilterRect(a, b, c, d)
                self.assertEqual(lyr.GetFeatureCount(), n, (table, a, b, c, d))
                self.assertEqual(sum(1 for _ in lyr), n, (table, a, b, c, d))
                checked += 1
            lyr.SetSpatialFilter(None)
            # ogrinfo -spat itself, on the first ten windows.
            for (a, b, c, d), n in list(zip(windows, want))[:10]:
                out = run("ogrinfo", "-so", "-spat", str(a), str(b), str(c), str(d), DEMO, table).stdout
                self.assertIn(f"Feature Count: {n}\n", out)
        self.assertEqual(checked, 100)
        self.assertGreater(sum(want), 0)

    def test_spatial_filter_features_equal_the_same_rows_read_by_fid(self):
        # Under a spatial filter the stream's geometries come from the query's answer
        # (marquet_query_result_take_arrow); GetFeature reads the row from the file.
        rnd = random.Random(7)
        ds = gdal.OpenEx(DEMO, gdal.OF_VECTOR)
        seen = 0
        for table in ("countries", "cities"):
            lyr = ds.GetLayerByName(table)
            for _ in range(8):
                cx, cy = rnd.uniform(-150, 150), rnd.uniform(-60, 60)
                lyr.SetSpatialFilterRect(cx - 20, cy - 15, cx + 20, cy + 15)
                got = [(f.GetFID(), f.GetGeometryRef().ExportToIsoWkb(), f.items()) for f in lyr]
                lyr.SetSpatialFilter(None)
                for fid, wkb, items in got:
                    f = lyr.GetFeature(fid)
                    self.assertEqual(bytes(f.GetGeometryRef().ExportToIsoWkb()), bytes(wkb), (table, fid))
                    self.assertEqual(f.items(), items, (table, fid))
                seen += len(got)
        self.assertGreater(seen, 20)

    def test_a_polygon_filter_is_tested_exactly(self):
        ds = gdal.OpenEx(DEMO, gdal.OF_VECTOR)
        lyr = ds.GetLayerByName("cities")
        tri = ogr.CreateGeometryFromWkt("POLYGON((-10 35,20 35,-10 60,-10 35))")
        lyr.SetSpatialFilter(tri)
        got = sorted(f.GetFID() for f in lyr)
        lyr.SetSpatialFilter(None)
        want = sorted(f.GetFID() for f in lyr if f.GetGeometryRef().Intersects(tri))
        self.assertEqual(got, want)
        self.assertGreater(len(want), 0)

    def test_ignored_fields_are_not_read_and_attribute_filters_work(self):
        ds = gdal.OpenEx(DEMO, gdal.OF_VECTOR)
        lyr = ds.GetLayerByName("countries")
        names = [lyr.GetLayerDefn().GetFieldDefn(i).GetName() for i in range(lyr.GetLayerDefn().GetFieldCount())]
        self.assertIn("name", names)
        lyr.SetIgnoredFields([n for n in names if n != "name"] + ["OGR_GEOMETRY"])
        f = lyr.GetNextFeature()
        self.assertIsNone(f.GetGeometryRef())
        self.assertTrue(f.IsFieldSetAndNotNull("name"))
        lyr.SetIgnoredFields([])
        lyr.SetAttributeFilter("name = 'France'")
        got = [f.GetField("name") for f in lyr]
        self.assertEqual(got, ["France"])


class Foreign(unittest.TestCase):
    def test_a_non_marquet_hdf5_file_is_refused_clearly_and_stays_the_raster_drivers(self):
        nc = os.path.join(TMP, "raster.nc")
        src = gdal.GetDriverByName("MEM").Create("", 4, 3, 1, gdal.GDT_Int16)
        src.GetRasterBand(1).Fill(7)
        gdal.GetDriverByName("netCDF").CreateCopy(nc, src, options=["FORMAT=NC4"])
        with open(nc, "rb") as fh:
            self.assertEqual(fh.read(8), b"\x89HDF\r\n\x1a\n")
        with self.assertRaises(RuntimeError) as e:
            gdal.OpenEx(nc, gdal.OF_VECTOR, allowed_drivers=["Marquet"])
        self.assertIn("is an HDF5 file without Marquet tables", str(e.exception))
        p = run("ogrinfo", "-so", nc, check=False)
        self.assertGreaterEqual(p.returncode, 0, p.stderr)
        p = run("gdalinfo", nc)
        self.assertIn("Driver: netCDF", p.stdout)
        # The Marquet file opened as a raster goes to GDAL's HDF5 driver, not to us.
        p = run("gdalinfo", DEMO, check=False)
        self.assertNotIn("Driver: Marquet", p.stdout)

    def test_damaged_files_give_a_gdal_error_not_a_crash(self):
        with open(DEMO, "rb") as fh:
            data = fh.read()
        cases = {"truncated.h5": data[: len(data) // 3], "header_only.h5": data[:4096]}
        flipped = bytearray(data)
        rnd = random.Random(5)
        for _ in range(200):
            i = rnd.randrange(2048, len(flipped))
            flipped[i] ^= 0xFF
        cases["flipped.h5"] = bytes(flipped)
        for name, blob in cases.items():
            path = os.path.join(TMP, name)
            with open(path, "wb") as fh:
                fh.write(blob)
            p = run("ogrinfo", "-al", path, check=False)
            self.assertGreaterEqual(p.returncode, 0, f"{name}: killed by signal {-p.returncode}\n{p.stderr}")
            self.assertNotIn("panic", p.stderr.lower() + p.stdout.lower())
            if p.returncode != 0:
                self.assertTrue("ERROR" in p.stderr or "FAILURE" in p.stderr, p.stderr)


class Write(unittest.TestCase):
    def test_gpkg_to_marquet_to_gpkg_keeps_every_feature_value_and_geometry(self):
        src = os.path.join(TMP, "src.gpkg")
        make_gpkg(src)
        h5 = os.path.join(TMP, "rt.h5")
        back = os.path.join(TMP, "back.gpkg")
        for p in (h5, back):
            if os.path.exists(p):
                os.remove(p)
        run("ogr2ogr", "-f", "Marquet", h5, src)
        run(MARQUET, "validate", h5)
        t = info(h5)["tables"][0]
        self.assertEqual((t["path"], t["nrows"]), ("/parcels", 700))
        idx = [x["kind"] for x in t["geometry_columns"][0]["indexes"]]
        self.assertTrue(any("BLOCK" in k.upper() for k in idx), idx)  # the default layout's indexes
        run("ogr2ogr", "-f", "GPKG", back, h5)
        a, b = features(src), features(back)
        self.assertEqual(len(a), 700)
        self.assertEqual(a, b)
        # Field types survive too (booleans as OFSTBoolean, dates, int16, float32).
        ta, tb = field_types(src), field_types(back)
        self.assertEqual(ta, tb)
        # And the Marquet file itself reads the same.
        self.assertEqual(features(h5), a)
        ds = gdal.OpenEx(h5, gdal.OF_VECTOR)
        srs = ds.GetLayer(0).GetSpatialRef()
        self.assertEqual((srs.GetAuthorityName(None), srs.GetAuthorityCode(None)), ("EPSG", "3857"))

    def test_natural_earth_marquet_to_gpkg_to_marquet(self):
        g1 = os.path.join(TMP, "ne1.gpkg")
        h5 = os.path.join(TMP, "ne2.h5")
        g2 = os.path.join(TMP, "ne2.gpkg")
        for p in (g1, h5, g2):
            if os.path.exists(p):
                os.remove(p)
        run("ogr2ogr", "-f", "GPKG", g1, DEMO)
        run("ogr2ogr", "-f", "Marquet", h5, g1)
        run("ogr2ogr", "-f", "GPKG", g2, h5)
        for table in ("countries", "cities"):
            self.assertEqual(features(g1, table), features(g2, table), table)
            self.assertEqual(features(DEMO, table), features(h5, table), table)
        run(MARQUET, "validate", h5)

    def test_update_append_and_nln(self):
        src = os.path.join(TMP, "src2.gpkg")
        make_gpkg(src, n=300, seed=8)
        h5 = os.path.join(TMP, "app.h5")
        if os.path.exists(h5):
            os.remove(h5)
        run("ogr2ogr", "-f", "Marquet", h5, src, "-nln", "first")
        run("ogr2ogr", "-update", "-append", h5, src, "-nln", "first")
        run("ogr2ogr", "-update", "-append", h5, src, "-nln", "grp/second")
        tables = {t["path"]: t["nrows"] for t in info(h5)["tables"]}
        self.assertEqual(tables, {"/first": 600, "/grp/second": 300})
        run(MARQUET, "validate", h5)
        once = features(src)
        self.assertEqual(features(h5, "first"), sorted(once + once, key=repr))
        self.assertEqual(features(h5, "grp/second"), once)

    def test_lists_and_python_writes(self):
        h5 = os.path.join(TMP, "lists.h5")
        if os.path.exists(h5):
            os.remove(h5)
        ds = ogr.GetDriverByName("Marquet").CreateDataSource(h5)
        srs = osr.SpatialReference()
        srs.ImportFromEPSG(4326)
        lyr = ds.CreateLayer("pts", srs, ogr.wkbPoint25D)
        for name, t in (("il", ogr.OFTIntegerList), ("i64l", ogr.OFTInteger64List),
                        ("rl", ogr.OFTRealList), ("sl", ogr.OFTStringList)):
            lyr.CreateField(ogr.FieldDefn(name, t))
        want = []
        for k in range(50):
            f = ogr.Feature(lyr.GetLayerDefn())
            f.SetGeometry(ogr.CreateGeometryFromWkt(f"POINT Z ({k} {k / 2} {k * 3})"))
            if k % 7:
                f.SetFieldIntegerList(0, list(range(k % 5)))
                f.SetFieldInteger64List(1, [2**40 + k, -k])
                f.SetFieldDoubleList(2, [k / 3, -1.5][: k % 3])
                f.SetFieldStringList(3, [f"s{k}", "", "ü"][: k % 4])
            self.assertEqual(lyr.CreateFeature(f), 0)
            want.append(f.Clone())
        ds = None
        ds = gdal.OpenEx(h5, gdal.OF_VECTOR)
        lyr = ds.GetLayer(0)
        self.assertEqual(lyr.GetGeomType(), ogr.wkbPoint25D)
        types = field_types(h5)
        self.assertEqual([types[n][0] for n in ("il", "i64l", "rl", "sl")],
                         [ogr.OFTIntegerList, ogr.OFTInteger64List, ogr.OFTRealList, ogr.OFTStringList])
        got = sorted(((f.GetGeometryRef().ExportToIsoWkt(),) + tuple(f.GetField(i) for i in range(4)) for f in lyr), key=repr)
        exp = sorted(((f.GetGeometryRef().ExportToIsoWkt(),) + tuple(f.GetField(i) for i in range(4)) for f in want), key=repr)
        self.assertEqual(got, exp)

    def test_a_failed_or_killed_translation_leaves_no_partial_table(self):
        h5 = os.path.join(TMP, "fail.h5")
        if os.path.exists(h5):
            os.remove(h5)
        shutil.copy(DEMO, h5)
        before = {t["path"]: t["nrows"] for t in info(h5)["tables"]}
        # A write that fails when the table is written (a full disk: the file size limit
        # of the process, SIGXFSZ ignored, makes the staging file's writes fail).
        limit = os.path.getsize(h5) + 64 * 1024
        code = (
            "import resource, signal\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "from osgeo import gdal, ogr\n"
            f"ds = gdal.OpenEx({h5!r}, gdal.OF_VECTOR | gdal.OF_UPDATE)\n"
            "lyr = ds.CreateLayer('big', None, ogr.wkbPoint)\n"
            "lyr.CreateField(ogr.FieldDefn('s', ogr.OFTString))\n"
            "for k in range(100000):\n"
            "    f = ogr.Feature(lyr.GetLayerDefn()); f.SetGeometry(ogr.CreateGeometryFromWkt(f'POINT ({k} {k % 977})'))\n"
            "    f.SetField(0, f'value {k * 7919}'); lyr.CreateFeature(f)\n"
            "ds = None\n"
        )
        p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
        self.assertGreaterEqual(p.returncode, 0, p.stderr)
        self.assertIn("Marquet: /big", p.stderr)
        self.assertEqual({t["path"]: t["nrows"] for t in info(h5)["tables"]}, before)
        self.assertEqual([n for n in os.listdir(TMP) if "partial" in n or n.startswith("marquet-arrow")], [])
        # A process that dies before closing the dataset.
        code = (
            "from osgeo import gdal, ogr; import os\n"
            f"ds = gdal.OpenEx({h5!r}, gdal.OF_VECTOR | gdal.OF_UPDATE)\n"
            "lyr = ds.CreateLayer('killed', None, ogr.wkbPoint)\n"
            "for k in range(70000):\n"
            "    f = ogr.Feature(lyr.GetLayerDefn()); f.SetGeometry(ogr.CreateGeometryFromWkt('POINT (1 2)')); lyr.CreateFeature(f)\n"
            "os._exit(3)\n"
        )
        p = subprocess.run(["/usr/bin/python3", "-c", code], capture_output=True, text=True)
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertEqual({t["path"]: t["nrows"] for t in info(h5)["tables"]}, before)
        run(MARQUET, "validate", h5)
        # A layer without geometry is refused at once, with the reason.
        ds = gdal.OpenEx(h5, gdal.OF_VECTOR | gdal.OF_UPDATE)
        with self.assertRaises(RuntimeError) as e:
            ds.CreateLayer("attrs", None, ogr.wkbNone)
        self.assertIn("needs a geometry column", str(e.exception))
        ds = None


if __name__ == "__main__":
    unittest.main(verbosity=2)

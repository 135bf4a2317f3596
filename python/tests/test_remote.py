"""Issue #34: the Python package reads Marquet files by URL — ``marquet.open(url)``,
``read_geodataframe(url, bbox=...)``, ``read_arrow(url)`` — with the same answers as the
local file (the local reads are the oracle), through an HTTP server on 127.0.0.1 that
serves byte ranges (started here), and fails with the library's error for a missing
object."""

from __future__ import annotations

import http.server
import os
import re
import threading

import pytest

import marquet
from conftest import TESTDATA

COUNTRIES = TESTDATA / "peers/geoarrow-data/natural-earth/natural-earth_countries_geo.parquet"


class RangeHandler(http.server.SimpleHTTPRequestHandler):
    """GET/HEAD with single byte ranges (Python's own handler ignores Range)."""

    protocol_version = "HTTP/1.1"
    requests = 0

    def log_message(self, *args):
        pass

    def send_head(self):
        path = self.translate_path(self.path)
        if not os.path.isfile(path):
            self.send_error(404)
            return None
        RangeHandler.requests += 1
        size = os.path.getsize(path)
        f = open(path, "rb")
        m = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
        if m:
            a = int(m.group(1))
            b = min(int(m.group(2)) if m.group(2) else size - 1, size - 1)
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {a}-{b}/{size}")
            f.seek(a)
            self.length = b - a + 1
        else:
            self.send_response(200)
            self.length = size
        self.send_header("Content-Length", str(self.length))
        self.send_header("ETag", f'"{os.stat(path).st_mtime_ns:x}-{size:x}"')
        self.end_headers()
        return f

    def copyfile(self, source, outputfile):
        outputfile.write(source.read(self.length))


@pytest.fixture()
def served(tmp_path):
    marquet.convert(str(COUNTRIES), str(tmp_path / "countries.h5"))
    handler = lambda *a, **k: RangeHandler(*a, directory=str(tmp_path), **k)  # noqa: E731
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield tmp_path, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_a_url_reads_as_the_local_file(served):
    d, base = served
    local, url = str(d / "countries.h5"), f"{base}/countries.h5"
    assert marquet.open(url).tables == marquet.open(local).tables
    for bbox in [(-10, 35, 30, 60), (100, -50, 180, 0), (0, 0, 0.001, 0.001)]:
        a = marquet.read_geodataframe(local, bbox=bbox)
        b = marquet.read_geodataframe(url, bbox=bbox)
        assert len(a) == len(b)
        assert list(a.columns) == list(b.columns)
        assert a.geometry.to_wkb().tolist() == b.geometry.to_wkb().tolist()
    assert marquet.read_arrow(url).equals(marquet.read_arrow(local))
    assert RangeHandler.requests > 0


def test_a_missing_object_is_an_error(served):
    _, base = served
    with pytest.raises(Exception, match="404|no such object"):
        marquet.open(f"{base}/nothing.h5").tables


def test_the_cloud_layout_reads_alike(served):
    """``convert(cloud=True)``: every dataset contiguous and uncompressed but the block
    indexes, each one chunk with HDF5's built-in shuffle and deflate (h5py, the independent
    reader, says so), the same rows and geometries as the default layout, read locally and
    by URL."""
    h5py = pytest.importorskip("h5py")
    d, base = served
    out = d / "countries-cloud.h5"
    r = marquet.convert(str(d / "countries.h5"), str(out), cloud=True)
    assert "cloud layout" in r["report"]
    seen, blocks = [], []

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            seen.append(name)
            kind = obj.attrs.get("KIND")
            if isinstance(kind, bytes):
                kind = kind.decode()
            if kind == "BLOCK_BBOX":
                blocks.append(name)
                assert obj.chunks == obj.shape and obj.compression == "gzip" and obj.shuffle, name
            else:
                assert obj.chunks is None and obj.compression is None, name

    with h5py.File(out, "r") as f:
        f.visititems(visit)
    assert len(seen) >= 5 and len(blocks) >= 1
    for bbox in [(-10, 35, 30, 60), (100, -50, 180, 0)]:
        a = marquet.read_geodataframe(str(d / "countries.h5"), bbox=bbox)
        b = marquet.read_geodataframe(f"{base}/countries-cloud.h5", bbox=bbox)
        assert len(a) == len(b) > 0
        assert a.geometry.to_wkb().tolist() == b.geometry.to_wkb().tolist()

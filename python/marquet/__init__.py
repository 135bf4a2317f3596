"""Marquet tables (HEP002 geospatial vector tables in HDF5) as Arrow tables and GeoDataFrames.

A thin shell over the Rust library ``marquet``: every rule, index and query is the
library's. Geometry columns arrive as WKB with the GeoArrow ``geoarrow.wkb`` extension type
and the CRS (PROJJSON) in the field metadata; the Arrow data crosses through the Arrow C
data interface without copies, and the GIL is released during file I/O.

>>> import marquet
>>> marquet.open("cities.h5").tables                        # doctest: +SKIP
['/cities']
>>> t = marquet.read_arrow("cities.h5", bbox=(0, 40, 20, 55))  # doctest: +SKIP
>>> gdf = marquet.read_geodataframe("cities.h5")             # doctest: +SKIP
>>> marquet.write("copy.h5", gdf, "cities")                  # doctest: +SKIP
"""

from __future__ import annotations

import glob
import json
import os
import warnings
from dataclasses import dataclass, field
from typing import Any, Iterable, List, Optional, Sequence, Tuple, Union

from . import errors
from ._marquet import Table as _RsTable
from ._marquet import _append, _validate, _write, _library_version, list_tables
from ._marquet import convert as _convert
from .errors import MarquetError

__all__ = [
    "open",
    "File",
    "Table",
    "Raster",
    "read_arrow",
    "read_geodataframe",
    "write",
    "append",
    "validate",
    "convert",
    "list_tables",
    "Finding",
    "ValidationReport",
    "MarquetError",
    "errors",
]

__version__ = _library_version()


def _use_bundled_proj_data() -> None:
    """The wheel carries PROJ's database next to its own libproj (marquet/proj/proj.db,
    scripts/build-wheel.sh): CRS codes and reprojection then work without PROJ installed,
    and never meet another PROJ version's database (issue #30). The library opens PROJ at run
    time (issue #33): it is handed the libproj the wheel carries in marquet.libs/ (renamed
    by auditwheel, e.g. libproj-1a2b3c4d.so.25.9.1.1), which the extension has loaded."""
    here = os.path.dirname(os.path.abspath(__file__))
    libs = sorted(glob.glob(os.path.join(os.path.dirname(here), "marquet.libs", "libproj*.so*")))
    if libs:
        from ._marquet import _set_proj_library

        _set_proj_library(libs[0])
    d = os.path.join(here, "proj")
    if os.path.isfile(os.path.join(d, "proj.db")):
        from ._marquet import _set_proj_data

        _set_proj_data(d)


_use_bundled_proj_data()

PathLike = Union[str, "os.PathLike[str]"]
BBox = Tuple[float, float, float, float]


def _wheres(where: Union[None, str, Sequence[str]]) -> Optional[List[str]]:
    if where is None:
        return None
    if isinstance(where, str):
        return [where]
    return list(where)


_ENCODINGS = ("wkb", "geoarrow", "geoarrow-interleaved")


def _native(encoding: str) -> Tuple[bool, bool]:
    """(native encodings, interleaved coordinates) of a ``geometry_encoding``."""
    if encoding not in _ENCODINGS:
        raise errors.InvalidArgumentError(f"geometry_encoding {encoding!r}: expected one of {', '.join(_ENCODINGS)}")
    return encoding != "wkb", encoding == "geoarrow-interleaved"


def _bbox(bbox: Optional[Sequence[float]]) -> Optional[BBox]:
    if bbox is None:
        return None
    b = tuple(float(v) for v in bbox)
    if len(b) != 4:
        raise errors.InvalidArgumentError(f"bbox must be (xmin, ymin, xmax, ymax), got {bbox!r}")
    return b  # type: ignore[return-value]


@dataclass
class Raster:
    """One raster of a raster footprint table (Havasu rasters converted by ``marquet
    convert``): ``array`` is a numpy array ``bands x height x width`` of the in-db bands
    (``None`` without any), ``transform`` GDAL's geotransform (corner-anchored: ``x0, sx,
    rx, y0, ry, sy``), ``geo_reference`` Havasu's six numbers (scale_x, scale_y, skew_x,
    skew_y, upperleft_x, upperleft_y; pixel-centre-anchored), ``bands`` one dict per band
    (``pixel_type``, ``no_data``, ``in_db``, ``out_db_url``, ``out_db_band_no``)."""

    row: int
    source_row: Optional[int]
    array_path: Optional[str]
    array: Any
    width: int
    height: int
    crs_wkt: Optional[str]
    transform: Tuple[float, ...]
    geo_reference: Tuple[float, ...]
    bands: List[dict] = field(default_factory=list)


def _raster(facts: str, data, dtype, shape) -> Optional[Raster]:
    f = json.loads(facts)
    if "raster" in f and f["raster"] is None:
        return None
    arr = None
    if data is not None:
        import numpy as np

        arr = np.frombuffer(data, dtype=np.dtype(dtype)).reshape(tuple(shape))
    return Raster(
        row=f["row"],
        source_row=f.get("source_row"),
        array_path=f.get("array"),
        array=arr,
        width=f.get("width", 0),
        height=f.get("height", 0),
        crs_wkt=f.get("crs_wkt"),
        transform=tuple(f.get("geotransform") or ()),
        geo_reference=tuple(f.get("geo_reference") or ()),
        bands=f.get("bands") or [],
    )


class Table(_RsTable):
    """A Marquet table kept open for repeated reads and queries (the warm reader).

    ``Table(path, table=None)`` opens table ``table`` of the HDF5 file at ``path`` (the
    file's only Marquet table when ``None``). Use it as a context manager, or call
    :meth:`close`. Attributes: ``file``, ``name``, ``num_rows``, ``columns`` (in
    COLUMN_ORDER), ``geometry_columns`` (primary first).

    :func:`write`, :func:`append` and :func:`convert` may write to a file a ``Table`` of
    this process holds open (HDF5 would refuse a file open read-only): the table lets go
    of the file for the write and opens it again at its next call, seeing the new rows.
    """

    def __enter__(self) -> "Table":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __len__(self) -> int:
        return int(self.num_rows)

    def info(self) -> dict:
        """The table as ``marquet info --json`` describes it: columns, types, CRS, indexes."""
        return json.loads(self._describe())

    def query(
        self,
        bbox: Optional[Sequence[float]] = None,
        predicate: str = "intersects",
        where: Union[None, str, Sequence[str]] = None,
        column: Optional[str] = None,
        output: str = "rows",
        columns: Optional[Sequence[str]] = None,
    ):
        """Rows whose geometry satisfies ``predicate`` with the box ``bbox`` (xmin, ymin,
        xmax, ymax; xmin > xmax wraps the antimeridian in a geographic CRS), and every
        ``where`` filter (``"COLUMN OP VALUE"``, OP one of ``= == < <= > >= in``), answered
        through the table's indexes.

        ``output="rows"``: the row numbers, ascending, as a numpy uint64 array;
        ``output="arrow"``: those rows as a pyarrow.Table (``columns`` selects columns);
        ``output="geodataframe"``: as a GeoDataFrame.
        """
        if output == "rows":
            rows = self._query_rows(_bbox(bbox), predicate, _wheres(where), column)
            return rows.to_numpy(zero_copy_only=False)
        if output == "arrow":
            return self.read_arrow(columns=columns, bbox=bbox, predicate=predicate, where=where, column=column)
        if output == "geodataframe":
            return self.read_geodataframe(columns=columns, bbox=bbox, predicate=predicate, where=where, column=column)
        raise errors.InvalidArgumentError(f"output {output!r}: expected rows, arrow or geodataframe")

    def read_arrow(
        self,
        columns: Optional[Sequence[str]] = None,
        bbox: Optional[Sequence[float]] = None,
        predicate: str = "intersects",
        where: Union[None, str, Sequence[str]] = None,
        column: Optional[str] = None,
        rows: Optional[Sequence[int]] = None,
        geometry_encoding: str = "wkb",
    ):
        """Rows as a pyarrow.Table (see :func:`marquet.read_arrow`); ``rows`` picks row
        numbers (strictly ascending) instead of a query. Geometry columns the library cannot
        interpret (a newer MARQUET_VERSION, ruling R16) are read as plain data, and columns
        without an Arrow mapping are left out, each with a :class:`marquet.errors.MarquetWarning`."""
        tbl, notes = self._read_arrow(
            list(columns) if columns is not None else None,
            _bbox(bbox),
            predicate,
            _wheres(where),
            column,
            [int(r) for r in rows] if rows is not None else None,
            *_native(geometry_encoding),
        )
        for n in notes:
            warnings.warn(f"{self.file}: {self.name}: {n}", errors.MarquetWarning, stacklevel=3)
        return tbl

    def rasters(
        self,
        bbox: Optional[Sequence[float]] = None,
        where: Union[None, str, Sequence[str]] = None,
        column: Optional[str] = None,
    ) -> List["Raster"]:
        """On a raster footprint table (Havasu rasters converted by ``marquet convert``):
        the rasters whose footprint (OGC:CRS84) meets ``bbox`` — every raster when ``None``
        — and every ``where`` filter, with their pixels as numpy arrays (``bands x height x
        width``); null rasters are left out. See :class:`Raster`."""
        hits = self._rasters(_bbox(bbox), _wheres(where), column)
        return [r for r in (_raster(*h) for h in hits) if r is not None]

    def read_geodataframe(
        self, columns=None, bbox=None, predicate="intersects", where=None, column=None, rows=None, to_pandas_kwargs=None
    ):
        """Rows as a geopandas.GeoDataFrame with ``crs`` set (see :meth:`read_arrow` and
        :func:`marquet.read_geodataframe`)."""
        tbl = self.read_arrow(columns, bbox, predicate, where, column, rows, geometry_encoding="geoarrow-interleaved")
        return _to_geodataframe(tbl, column, to_pandas_kwargs)


class File:
    """An HDF5 file's Marquet tables: ``marquet.open(path)``.

    ``tables`` lists their paths; ``f[name]`` (or ``f.table(name)``) opens one as a
    :class:`Table`.
    """

    def __init__(self, path: PathLike):
        self.path = os.fspath(path)
        self.tables: List[str] = list_tables(self.path)

    def table(self, name: Optional[str] = None) -> Table:
        """Open table ``name`` (the only Marquet table when ``None``)."""
        return Table(self.path, name)

    def __getitem__(self, name: str) -> Table:
        return self.table(name)

    def __iter__(self):
        return iter(self.tables)

    def __len__(self) -> int:
        return len(self.tables)

    def __enter__(self) -> "File":
        return self

    def __exit__(self, *exc: Any) -> None:
        pass

    def __repr__(self) -> str:
        return f"<marquet.File {self.path!r} tables={self.tables!r}>"


def open(path: PathLike) -> File:  # noqa: A001  (the package's entry point, like h5py.File)
    """Open an HDF5 file and list its Marquet tables (``.tables``); index it for a
    :class:`Table`."""
    return File(path)


def read_arrow(
    path: PathLike,
    table: Optional[str] = None,
    columns: Optional[Sequence[str]] = None,
    bbox: Optional[Sequence[float]] = None,
    predicate: str = "intersects",
    where: Union[None, str, Sequence[str]] = None,
    column: Optional[str] = None,
    geometry_encoding: str = "wkb",
):
    """Read a Marquet table as a ``pyarrow.Table``.

    - ``table``: the table path (default: the file's only Marquet table).
    - ``columns``: the columns to read, in that order (default: every column in
      COLUMN_ORDER except covering columns, which are an index).
    - ``bbox``: (xmin, ymin, xmax, ymax): only rows whose geometry satisfies ``predicate``
      (``"intersects"``, ``"within"``, ``"contains"``, ``"bbox"``) with that box, found
      through the block index, R-tree and covering column; ``column`` picks the geometry
      column (default: the primary one).
    - ``where``: attribute filters ``"COLUMN OP VALUE"`` (ANDed), each on its best index.

    Geometry columns are WKB with the ``geoarrow.wkb`` extension type; its metadata holds
    ``crs`` (PROJJSON; ``"OGC:CRS84"`` for the HEP002 default; absent when unknown) and
    ``edges`` when not planar. Nulls are Arrow nulls. ``geometry_encoding="geoarrow"``
    reads point columns (XY, XYZ) as the native ``geoarrow.point`` struct of x, y[, z]
    instead (empty points have NaN coordinates), and columns of one kind of LineString,
    Polygon, MultiLineString or MultiPolygon (XY or XYZ) in the native ``geoarrow.linestring``
    … ``geoarrow.multipolygon`` encodings (lists of such structs), which geopandas turns into
    geometries without parsing WKB; other geometry columns (mixed kinds, M) stay WKB.
    ``geometry_encoding="geoarrow-interleaved"`` reads the same columns with each
    coordinate a fixed-size list ``xy`` (``xyz``) of float64 instead of a struct, the
    layout geopandas builds geometries from without copying the coordinates (what
    :func:`read_geodataframe` reads). The whole table is read in parallel (batches, and
    chunks within them).
    """
    with Table(os.fspath(path), table) as t:
        return t.read_arrow(
            columns=columns, bbox=bbox, predicate=predicate, where=where, column=column, geometry_encoding=geometry_encoding
        )


def _to_geodataframe(tbl, column: Optional[str] = None, to_pandas_kwargs: Optional[dict] = None):
    import geopandas

    geom_cols = [
        f.name
        for f in tbl.schema
        if (f.metadata or {}).get(b"ARROW:extension:name", b"").startswith(b"geoarrow.")
    ]
    if not geom_cols:
        raise errors.InvalidArgumentError("no geometry column among the columns read")
    geometry = column if column in geom_cols else geom_cols[0]
    return geopandas.GeoDataFrame.from_arrow(tbl, geometry=geometry, to_pandas_kwargs=to_pandas_kwargs)


def read_geodataframe(
    path: PathLike,
    table: Optional[str] = None,
    columns: Optional[Sequence[str]] = None,
    bbox: Optional[Sequence[float]] = None,
    predicate: str = "intersects",
    where: Union[None, str, Sequence[str]] = None,
    column: Optional[str] = None,
    to_pandas_kwargs: Optional[dict] = None,
):
    """Read a Marquet table as a ``geopandas.GeoDataFrame`` (arguments as
    :func:`read_arrow`); the active geometry is ``column`` or the primary geometry column,
    and ``gdf.crs`` is the column's CRS. Other geometry columns become GeoSeries too.
    ``to_pandas_kwargs`` go to ``pyarrow.Table.to_pandas`` (e.g. ``types_mapper`` for
    pandas' nullable dtypes: by default integer columns with nulls become float64)."""
    tbl = read_arrow(path, table, columns, bbox, predicate, where, column, geometry_encoding="geoarrow-interleaved")
    return _to_geodataframe(tbl, column, to_pandas_kwargs)


def _stream(data: Any, geometry: Optional[Sequence[str]]):
    """Any Arrow stream (``__arrow_c_stream__``) or a GeoDataFrame (sent as GeoArrow WKB)."""
    try:
        import geopandas
    except ImportError:  # pragma: no cover - geopandas is optional
        geopandas = None
    if geopandas is not None and isinstance(data, geopandas.GeoDataFrame):
        index = None if isinstance(data.index, __import__("pandas").RangeIndex) else True
        return data.to_arrow(geometry_encoding="WKB", index=index)
    if hasattr(data, "__arrow_c_stream__"):
        return data
    if hasattr(data, "__arrow_c_array__"):
        import pyarrow

        return pyarrow.table(data)
    raise errors.InvalidArgumentError(
        f"data must be a GeoDataFrame or an Arrow stream (__arrow_c_stream__), not {type(data).__name__}"
    )


def write(
    path: PathLike,
    data: Any,
    table: str,
    geometry: Union[None, str, Sequence[str]] = None,
    keep_order: bool = False,
    index: bool = True,
    rtree: str = "auto",
    covering: bool = True,
    point_form: str = "native",
) -> int:
    """Write ``data`` as the new Marquet table ``table`` of the HDF5 file ``path`` (created
    when missing; an existing file gets a new table). Returns the number of rows.

    ``data``: a GeoDataFrame, or any Arrow stream (pyarrow Table / RecordBatchReader,
    polars, DuckDB results, ...: ``__arrow_c_stream__``) whose geometry columns carry a
    GeoArrow extension type (``geoarrow.wkb`` or native), or are binary WKB columns named in
    ``geometry``. The columns are mapped as ``marquet convert`` maps GeoParquet, and the
    table gets the library's default layout: rows in Hilbert order (``keep_order=True``
    keeps the input order), a block index, an R-tree (``rtree="auto"|"on"|"off"``) and a
    covering column for non-point columns (``covering``); ``index=False`` builds no index.
    Point columns are stored as HEP002 point columns (``point_form="native"``), fixed-length
    WKB (``"fixed_wkb"``) or variable-length WKB (``"wkb"``).
    """
    geom = [geometry] if isinstance(geometry, str) else (list(geometry) if geometry else None)
    return _write(os.fspath(path), _stream(data, geom), table, geom, keep_order, index, rtree, covering, point_form)


def append(
    path: PathLike,
    data: Any,
    table: Optional[str] = None,
    geometry: Union[None, str, Sequence[str]] = None,
    rtree: str = "rebuild",
) -> int:
    """Append ``data`` (as for :func:`write`) to the existing table ``table`` through the
    library's append path (BBOX, GEOMETRY_TYPES, covering and block indexes maintained; a
    valid R-tree rebuilt, or left stale with ``rtree="stale"``). Returns the rows appended."""
    geom = [geometry] if isinstance(geometry, str) else (list(geometry) if geometry else None)
    return _append(os.fspath(path), _stream(data, geom), table, geom, rtree)


@dataclass(frozen=True)
class Finding:
    """One conformance finding: ``severity`` ("error" / "warning"), ``rule`` (e.g.
    ``"HEP002 §12 req 14"``), ``path`` (HDF5 object), ``row``, ``message``, ``check``."""

    severity: str
    rule: str
    path: str
    message: str
    row: Optional[int] = None
    check: Optional[str] = None


@dataclass(frozen=True)
class ValidationReport:
    """The result of :func:`validate`: ``conformant``, ``findings`` and ``tables`` (the
    table groups checked), plus ``raw``, the ``marquet validate --json`` document."""

    file: str
    conformant: bool
    findings: List[Finding]
    tables: List[str]
    raw: dict = field(repr=False, default_factory=dict)

    @property
    def errors(self) -> List[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    def __bool__(self) -> bool:
        return self.conformant


def _finding(d: dict, table_path: str) -> Finding:
    return Finding(
        severity=str(d.get("severity", "error")),
        rule=str(d.get("rule", "")),
        path=str(d.get("path", table_path)),
        message=str(d.get("message", "")),
        row=d.get("row"),
        check=d.get("check"),
    )


def validate(path: PathLike, table: Optional[str] = None, strict: bool = False) -> ValidationReport:
    """Check HEP001 §13 and HEP002 §12 conformance (``marquet validate``); findings as
    Python objects. An unreadable file raises (as the CLI's exit status 2)."""
    raw = json.loads(_validate(os.fspath(path), table, strict))
    findings: List[Finding] = []
    tables: List[str] = []
    for t in raw.get("tables", []):
        tables.append(t.get("path", ""))
        for f in t.get("findings", []):
            findings.append(_finding(f, t.get("path", "")))
    return ValidationReport(
        file=str(raw.get("file", os.fspath(path))),
        conformant=raw.get("status") == "conformant",
        findings=findings,
        tables=tables,
        raw=raw,
    )


def convert(
    input: PathLike,
    output: PathLike,
    table: Optional[str] = None,
    geoparquet_version: Optional[str] = None,
    keep_order: bool = False,
    index: bool = True,
    rtree: str = "auto",
    covering: bool = True,
    crs: Optional[str] = None,
    to_crs: Optional[str] = None,
    cloud: bool = False,
) -> dict:
    """Convert between GeoParquet, GeoJSON, FlatGeobuf, GeoPackage, Shapefile, CSV, Iceberg
    and Marquet HDF5 by file extension, as ``marquet convert``; returns ``{"table", "rows",
    "report"}``. ``crs`` states the input's CRS (``"EPSG:25832"``, a URN, WKT or PROJJSON)
    when it names none or a wrong one; ``to_crs`` reprojects (``marquet convert --to-crs``).
    HDF5 to HDF5 copies the table ``table`` (or the file's only one) as stored, with its
    layout and indexes, into a new or an existing file. ``cloud=True`` writes a new HDF5
    file in the cloud layout (``marquet convert --cloud``: metadata first, every dataset
    contiguous and uncompressed but the block indexes; few round trips a window over HTTP
    or S3; no appends)."""
    return _convert(
        os.fspath(input), os.fspath(output), table, geoparquet_version, keep_order, index, rtree, covering, crs, to_crs, cloud
    )

"""Type stubs of the public API of ``marquet`` (see the docstrings in ``__init__.py``)."""

import os
from dataclasses import dataclass
from typing import Any, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np
import pyarrow

from . import errors as errors
from ._marquet import Table as _RsTable
from ._marquet import list_tables as list_tables
from .errors import MarquetError as MarquetError

__version__: str
PathLike = Union[str, os.PathLike[str]]
BBox = Sequence[float]
Where = Union[None, str, Sequence[str]]

@dataclass
class Raster:
    row: int
    source_row: Optional[int]
    array_path: Optional[str]
    array: Optional[np.ndarray]
    width: int
    height: int
    crs_wkt: Optional[str]
    transform: Tuple[float, ...]
    geo_reference: Tuple[float, ...]
    bands: List[dict]

class Table(_RsTable):
    def __enter__(self) -> Table: ...
    def __exit__(self, *exc: Any) -> None: ...
    def __len__(self) -> int: ...
    def info(self) -> dict: ...
    def query(
        self,
        bbox: Optional[BBox] = None,
        predicate: str = "intersects",
        where: Where = None,
        column: Optional[str] = None,
        output: str = "rows",
        columns: Optional[Sequence[str]] = None,
    ) -> Union[np.ndarray, pyarrow.Table, Any]: ...
    def read_arrow(
        self,
        columns: Optional[Sequence[str]] = None,
        bbox: Optional[BBox] = None,
        predicate: str = "intersects",
        where: Where = None,
        column: Optional[str] = None,
        rows: Optional[Sequence[int]] = None,
        geometry_encoding: str = "wkb",
    ) -> pyarrow.Table: ...
    def rasters(
        self,
        bbox: Optional[BBox] = None,
        where: Where = None,
        column: Optional[str] = None,
    ) -> List[Raster]: ...
    def read_geodataframe(
        self,
        columns: Optional[Sequence[str]] = None,
        bbox: Optional[BBox] = None,
        predicate: str = "intersects",
        where: Where = None,
        column: Optional[str] = None,
        rows: Optional[Sequence[int]] = None,
        to_pandas_kwargs: Optional[dict] = None,
    ) -> Any: ...

class File:
    path: str
    tables: List[str]
    def __init__(self, path: PathLike) -> None: ...
    def table(self, name: Optional[str] = None) -> Table: ...
    def __getitem__(self, name: str) -> Table: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def __enter__(self) -> File: ...
    def __exit__(self, *exc: Any) -> None: ...

def open(path: PathLike) -> File: ...
def read_arrow(
    path: PathLike,
    table: Optional[str] = None,
    columns: Optional[Sequence[str]] = None,
    bbox: Optional[BBox] = None,
    predicate: str = "intersects",
    where: Where = None,
    column: Optional[str] = None,
    geometry_encoding: str = "wkb",
) -> pyarrow.Table: ...
def read_geodataframe(
    path: PathLike,
    table: Optional[str] = None,
    columns: Optional[Sequence[str]] = None,
    bbox: Optional[BBox] = None,
    predicate: str = "intersects",
    where: Where = None,
    column: Optional[str] = None,
    to_pandas_kwargs: Optional[dict] = None,
) -> Any: ...
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
) -> int: ...
def append(
    path: PathLike,
    data: Any,
    table: Optional[str] = None,
    geometry: Union[None, str, Sequence[str]] = None,
    rtree: str = "rebuild",
) -> int: ...
@dataclass(frozen=True)
class Finding:
    severity: str
    rule: str
    path: str
    message: str
    row: Optional[int] = ...
    check: Optional[str] = ...

@dataclass(frozen=True)
class ValidationReport:
    file: str
    conformant: bool
    findings: List[Finding]
    tables: List[str]
    raw: dict = ...
    @property
    def errors(self) -> List[Finding]: ...
    def __bool__(self) -> bool: ...

def validate(path: PathLike, table: Optional[str] = None, strict: bool = False) -> ValidationReport: ...
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
) -> dict: ...

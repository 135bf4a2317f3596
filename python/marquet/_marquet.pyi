"""Type stubs of the extension module ``marquet._marquet`` (Rust, PyO3). The public API is
``marquet`` (``marquet/__init__.py``), which wraps these."""

from typing import Any, List, Optional, Sequence, Tuple

import pyarrow

_BBox = Tuple[float, float, float, float]

class Table:
    """A Marquet table kept open (see ``marquet.Table``)."""

    def __init__(self, path: str, table: Optional[str] = None) -> None: ...
    @property
    def file(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def num_rows(self) -> int: ...
    @property
    def columns(self) -> List[str]: ...
    @property
    def geometry_columns(self) -> List[str]: ...
    def _describe(self) -> str: ...
    def _query_rows(
        self,
        bbox: Optional[_BBox] = None,
        predicate: str = "intersects",
        where: Optional[List[str]] = None,
        column: Optional[str] = None,
    ) -> pyarrow.UInt64Array: ...
    def _read_arrow(
        self,
        columns: Optional[List[str]] = None,
        bbox: Optional[_BBox] = None,
        predicate: str = "intersects",
        where: Optional[List[str]] = None,
        column: Optional[str] = None,
        rows: Optional[List[int]] = None,
        native_points: bool = False,
        interleaved: bool = False,
    ) -> Tuple[pyarrow.Table, List[str]]: ...
    def _rasters(
        self,
        bbox: Optional[_BBox] = None,
        where: Optional[List[str]] = None,
        column: Optional[str] = None,
    ) -> List[Tuple[str, Optional[bytes], Optional[str], Optional[List[int]]]]: ...
    def close(self) -> None: ...

def list_tables(path: str) -> List[str]: ...
def _write(
    path: str,
    data: Any,
    table: str,
    geometry: Optional[Sequence[str]] = None,
    keep_order: bool = False,
    index: bool = True,
    rtree: str = "auto",
    covering: bool = True,
    point_form: str = "native",
) -> int: ...
def _append(
    path: str,
    data: Any,
    table: Optional[str] = None,
    geometry: Optional[Sequence[str]] = None,
    rtree: str = "rebuild",
) -> int: ...
def _validate(path: str, table: Optional[str] = None, strict: bool = False) -> str: ...
def convert(
    input: str,
    output: str,
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
def _library_version() -> str: ...
def _set_proj_data(dir: str) -> None: ...

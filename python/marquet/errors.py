"""Exceptions raised by marquet.

Every error of the Rust library arrives as an instance of one of these classes with the
library's message (it names the HDF5 object and, for rule violations, the HEP001/HEP002
rule), and three attributes: ``rule`` (e.g. ``"HEP002 §7.2"``, or ``None``), ``path`` (the
file or HDF5 object, or ``None``) and ``row`` (or ``None``).
"""

from __future__ import annotations

from typing import Optional


class MarquetError(Exception):
    """Base class of every marquet error."""

    rule: Optional[str] = None
    path: Optional[str] = None
    row: Optional[int] = None


class SpecViolationError(MarquetError):
    """The file breaks a rule of HEP001 or HEP002 (``rule`` names it)."""


class InvalidWkbError(MarquetError, ValueError):
    """A WKB value is malformed."""


class RefusedError(MarquetError, ValueError):
    """A write was refused because it would break a rule (``rule``); nothing was written."""


class StaleIndexError(MarquetError):
    """A search index failed its validity check where it was required."""


class NotATableError(MarquetError, ValueError):
    """The HDF5 group is not an H5Col table."""


class InvalidArgumentError(MarquetError, ValueError):
    """The call asked for something impossible (unknown column, bad predicate, ...)."""


class UnsupportedError(MarquetError, NotImplementedError):
    """Valid input this library does not implement, or an unsupported version."""


class Hdf5Error(MarquetError, OSError):
    """An error from the HDF5 library (e.g. a file that is not HDF5)."""


class MarquetIOError(MarquetError, OSError):
    """An operating-system I/O error."""


class MarquetFileNotFoundError(MarquetError, FileNotFoundError):
    """The file does not exist (also a builtin ``FileNotFoundError``)."""


class MarquetWarning(UserWarning):
    """Something was read differently from what was asked: a geometry column read as plain
    data (ruling R16: MARQUET_VERSION with a newer MAJOR), a column without an Arrow
    mapping left out."""


__all__ = [
    "MarquetWarning",
    "MarquetError",
    "SpecViolationError",
    "InvalidWkbError",
    "RefusedError",
    "StaleIndexError",
    "NotATableError",
    "InvalidArgumentError",
    "UnsupportedError",
    "Hdf5Error",
    "MarquetIOError",
    "MarquetFileNotFoundError",
]

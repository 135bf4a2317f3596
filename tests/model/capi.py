"""The C ABI (include/marquet.h) through ctypes, for the model-based test (issue #38 item 3):
the calls model_test.py makes with ``--api capi`` — append a batch (WKB geometries, int64,
float64 and UTF-8 string columns with validity), truncate, build and drop indexes, window
queries with and without indexes, validate. Every call's status is checked; a failure
raises ``CError`` with ``marquet_status_str`` and ``marquet_last_error_message``.
"""

import ctypes as C

OK = 0
PREDICATE = {"intersects": 1, "within": 2, "contains": 3, "bbox": 4}
INDEX = {"block_bbox": 1, "packed_rtree": 2}


class CError(Exception):
    def __init__(self, call, status, message):
        super().__init__(f"{call}: status {status} ({message})")
        self.status = status
        self.message = message


class CApi:
    def __init__(self, path):
        lib = C.CDLL(path)
        self.lib = lib
        vp, sz, i32, i64, dbl, cp = C.c_void_p, C.c_size_t, C.c_int32, C.c_int64, C.c_double, C.c_char_p
        pvp = C.POINTER(C.c_void_p)
        sig = {
            "marquet_status_str": (cp, [i32]),
            "marquet_last_error_message": (i32, [cp, sz, C.POINTER(sz)]),
            "marquet_file_open_rw": (i32, [cp, sz, pvp]),
            "marquet_file_close": (i32, [vp]),
            "marquet_file_free": (None, [vp]),
            "marquet_table_open": (i32, [vp, cp, sz, pvp]),
            "marquet_table_free": (None, [vp]),
            "marquet_table_nrows": (i32, [vp, C.POINTER(i64)]),
            "marquet_table_truncate": (i32, [vp, i64]),
            "marquet_table_build_index": (i32, [vp, cp, sz, i32, i64]),
            "marquet_table_drop_index": (i32, [vp, cp, sz, i32, C.POINTER(i64)]),
            "marquet_table_append": (i32, [vp, vp, C.POINTER(i64)]),
            "marquet_batch_new": (i32, [pvp]),
            "marquet_batch_free": (None, [vp]),
            "marquet_batch_set_wkb": (i32, [vp, cp, sz, C.c_void_p, sz, C.POINTER(i64), C.c_void_p, i64]),
            "marquet_batch_set_int64": (i32, [vp, cp, sz, C.POINTER(i64), C.c_void_p, i64]),
            "marquet_batch_set_double": (i32, [vp, cp, sz, C.POINTER(dbl), C.c_void_p, i64]),
            "marquet_batch_set_strings": (i32, [vp, cp, sz, C.c_void_p, sz, C.POINTER(i64), C.c_void_p, i64]),
            "marquet_table_query_box": (i32, [vp, cp, sz, dbl, dbl, dbl, dbl, i32, i32, pvp]),
            "marquet_query_result_count": (i32, [vp, C.POINTER(i64)]),
            "marquet_query_result_free": (None, [vp]),
            "marquet_validate_file": (i32, [cp, sz, cp, sz, i32, pvp]),
            "marquet_report_conformant": (i32, [vp, C.POINTER(i32)]),
            "marquet_report_json": (i32, [vp, cp, sz, C.POINTER(sz)]),
            "marquet_report_free": (None, [vp]),
        }
        for name, (res, args) in sig.items():
            f = getattr(lib, name)
            f.restype = res
            f.argtypes = args

    def _check(self, call, status):
        if status != OK:
            need = C.c_size_t(0)
            self.lib.marquet_last_error_message(None, 0, C.byref(need))
            buf = C.create_string_buffer(max(1, need.value))
            self.lib.marquet_last_error_message(buf, len(buf), C.byref(need))
            raise CError(call, status, f"{self.lib.marquet_status_str(status).decode()}: {buf.value.decode('utf-8', 'replace')}")

    def open_table(self, path, table):
        f = C.c_void_p()
        p = path.encode()
        self._check("marquet_file_open_rw", self.lib.marquet_file_open_rw(p, len(p), C.byref(f)))
        t = C.c_void_p()
        tb = table.encode()
        st = self.lib.marquet_table_open(f, tb, len(tb), C.byref(t))
        if st != OK:
            self.lib.marquet_file_free(f)
            self._check("marquet_table_open", st)
        return Handle(self, f, t)

    def validate(self, path):
        """(conformant, report JSON)."""
        r = C.c_void_p()
        p = path.encode()
        self._check("marquet_validate_file", self.lib.marquet_validate_file(p, len(p), None, 0, 0, C.byref(r)))
        try:
            ok = C.c_int32(0)
            self._check("marquet_report_conformant", self.lib.marquet_report_conformant(r, C.byref(ok)))
            need = C.c_size_t(0)
            self.lib.marquet_report_json(r, None, 0, C.byref(need))
            buf = C.create_string_buffer(need.value)
            self._check("marquet_report_json", self.lib.marquet_report_json(r, buf, len(buf), C.byref(need)))
            return bool(ok.value), buf.value.decode()
        finally:
            self.lib.marquet_report_free(r)


def _offsets(chunks):
    offs = (C.c_int64 * (len(chunks) + 1))()
    o = 0
    for i, c in enumerate(chunks):
        offs[i] = o
        o += len(c)
    offs[len(chunks)] = o
    data = b"".join(chunks)
    return data, offs


def _valid(flags):
    if all(flags):
        return None
    return (C.c_uint8 * len(flags))(*[1 if v else 0 for v in flags])


class Handle:
    """An open file and table; close() closes both."""

    def __init__(self, api, f, t):
        self.api, self.f, self.t = api, f, t
        self.lib = api.lib

    def close(self):
        if self.t:
            self.lib.marquet_table_free(self.t)
            self.t = None
        if self.f:
            st = self.lib.marquet_file_close(self.f)
            self.lib.marquet_file_free(self.f)
            self.f = None
            self.api._check("marquet_file_close", st)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def nrows(self):
        n = C.c_int64(0)
        self.api._check("marquet_table_nrows", self.lib.marquet_table_nrows(self.t, C.byref(n)))
        return n.value

    def truncate(self, n):
        self.api._check("marquet_table_truncate", self.lib.marquet_table_truncate(self.t, n))

    def build_index(self, column, kind, parameter=0):
        c = column.encode()
        self.api._check("marquet_table_build_index", self.lib.marquet_table_build_index(self.t, c, len(c), INDEX[kind], parameter))

    def drop_index(self, column, kind):
        c = column.encode()
        n = C.c_int64(0)
        self.api._check("marquet_table_drop_index", self.lib.marquet_table_drop_index(self.t, c, len(c), INDEX[kind], C.byref(n)))
        return n.value

    def count(self, column, window, predicate, use_indexes):
        c = column.encode()
        r = C.c_void_p()
        x0, y0, x1, y1 = window
        self.api._check("marquet_table_query_box", self.lib.marquet_table_query_box(
            self.t, c, len(c), x0, y0, x1, y1, PREDICATE[predicate], 1 if use_indexes else 0, C.byref(r)))
        try:
            n = C.c_int64(0)
            self.api._check("marquet_query_result_count", self.lib.marquet_query_result_count(r, C.byref(n)))
            return n.value
        finally:
            self.lib.marquet_query_result_free(r)

    def append(self, columns):
        """`columns`: name -> (kind, values) with kind wkb (bytes or None), int64, double or
        string (None = null / missing). Returns the new row count."""
        b = C.c_void_p()
        self.api._check("marquet_batch_new", self.lib.marquet_batch_new(C.byref(b)))
        keep = []  # ctypes buffers must live until the append
        try:
            for name, (kind, values) in columns.items():
                nm = name.encode()
                n = len(values)
                valid = _valid([v is not None for v in values])
                keep.append(valid)
                if kind in ("wkb", "string"):
                    chunks = [b"" if v is None else (v if kind == "wkb" else v.encode("utf-8")) for v in values]
                    data, offs = _offsets(chunks)
                    buf = C.create_string_buffer(data, max(1, len(data)))
                    keep += [buf, offs]
                    f = self.lib.marquet_batch_set_wkb if kind == "wkb" else self.lib.marquet_batch_set_strings
                    st = f(b, nm, len(nm), buf, len(data), offs, valid, n)
                elif kind == "int64":
                    arr = (C.c_int64 * n)(*[0 if v is None else v for v in values])
                    keep.append(arr)
                    st = self.lib.marquet_batch_set_int64(b, nm, len(nm), arr, valid, n)
                elif kind == "double":
                    arr = (C.c_double * n)(*[0.0 if v is None else v for v in values])
                    keep.append(arr)
                    st = self.lib.marquet_batch_set_double(b, nm, len(nm), arr, valid, n)
                else:
                    raise ValueError(kind)
                self.api._check(f"marquet_batch_set_{kind} {name}", st)
            n = C.c_int64(0)
            self.api._check("marquet_table_append", self.lib.marquet_table_append(self.t, b, C.byref(n)))
            return n.value
        finally:
            self.lib.marquet_batch_free(b)

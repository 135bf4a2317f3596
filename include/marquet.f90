! marquet.f90: the Fortran interface of libmarquet (HEP002 "Marquet" geospatial vector
! tables on HEP001 "H5Col" column tables in HDF5), module `marquet`.
!
! One bind(c) interface for every function of include/marquet.h, under the same name and
! with the same arguments, and every MARQUET_* constant of the header as a parameter.
! capi/tests/bindings.rs checks both against the header (names, argument counts, kinds and
! passing modes, constant values, nothing missing); keep them in step when the C ABI grows.
! The conventions (status codes, buffers, row ranges, ownership) are those of the C API:
! docs/FFI.md, and the comments of marquet.h for each function.
!
! Fortran specifics:
! * handles are type(c_ptr); strings in are a character string and its length in bytes
!   (marquet_len(s) gives it as c_size_t); strings out are character(kind=c_char) arrays;
! * arguments that C accepts as NULL ("valid", "z", "m", "needed", ...) are OPTIONAL:
!   leave them out (by keyword for the ones after) to pass NULL;
! * `valid` flags are integer(c_int8_t) 0 / 1, other flags integer(c_int32_t) 0 / 1;
! * row numbers and offsets are 0-based, as in C.
! Helpers below the interfaces: marquet_len, marquet_string (a C string as a Fortran
! string), marquet_library_version and marquet_error_message.
!
! Build it with the program (it is installed as PREFIX/include/marquet.f90):
!   gfortran $(pkg-config --variable=fortran_module marquet) prog.f90 $(pkg-config --libs marquet)
module marquet
  use, intrinsic :: iso_c_binding
  implicit none

  ! The library version this module belongs to (MARQUET_VERSION_* of marquet.h) and the
  ! C ABI number (the N of libmarquet.so.N).
  integer(c_int32_t), parameter :: MARQUET_VERSION_MAJOR = 0
  integer(c_int32_t), parameter :: MARQUET_VERSION_MINOR = 1
  integer(c_int32_t), parameter :: MARQUET_VERSION_PATCH = 0
  integer(c_int32_t), parameter :: MARQUET_ABI_VERSION = 0
  character(len=*), parameter :: MARQUET_VERSION_STRING = "0.1.0"

  ! marquet_status (int32_t in C)
  integer(c_int32_t), parameter :: MARQUET_STATUS_OK = 0
  integer(c_int32_t), parameter :: MARQUET_STATUS_NULL_POINTER = 100
  integer(c_int32_t), parameter :: MARQUET_STATUS_INVALID_ARGUMENT = 101
  integer(c_int32_t), parameter :: MARQUET_STATUS_BUFFER_TOO_SMALL = 102
  integer(c_int32_t), parameter :: MARQUET_STATUS_INVALID_HANDLE = 103
  integer(c_int32_t), parameter :: MARQUET_STATUS_CLOSED = 104
  integer(c_int32_t), parameter :: MARQUET_STATUS_OUT_OF_RANGE = 105
  integer(c_int32_t), parameter :: MARQUET_STATUS_IO = 200
  integer(c_int32_t), parameter :: MARQUET_STATUS_HDF5 = 201
  integer(c_int32_t), parameter :: MARQUET_STATUS_REMOTE = 202
  integer(c_int32_t), parameter :: MARQUET_STATUS_NOT_A_TABLE = 300
  integer(c_int32_t), parameter :: MARQUET_STATUS_SPEC_VIOLATION = 301
  integer(c_int32_t), parameter :: MARQUET_STATUS_INVALID_WKB = 302
  integer(c_int32_t), parameter :: MARQUET_STATUS_UNSUPPORTED_VERSION = 303
  integer(c_int32_t), parameter :: MARQUET_STATUS_STALE_INDEX = 304
  integer(c_int32_t), parameter :: MARQUET_STATUS_UNSUPPORTED = 305
  integer(c_int32_t), parameter :: MARQUET_STATUS_PANIC = 900
  integer(c_int32_t), parameter :: MARQUET_STATUS_INTERNAL = 901
  ! marquet_form (int32_t in C)
  integer(c_int32_t), parameter :: MARQUET_FORM_VAR_WKB = 1
  integer(c_int32_t), parameter :: MARQUET_FORM_FIXED_WKB = 2
  integer(c_int32_t), parameter :: MARQUET_FORM_POINT = 3
  ! marquet_dimensions (int32_t in C)
  integer(c_int32_t), parameter :: MARQUET_DIMENSIONS_XY = 0
  integer(c_int32_t), parameter :: MARQUET_DIMENSIONS_XYZ = 1
  integer(c_int32_t), parameter :: MARQUET_DIMENSIONS_XYM = 2
  integer(c_int32_t), parameter :: MARQUET_DIMENSIONS_XYZM = 3
  ! marquet_edges (int32_t in C)
  integer(c_int32_t), parameter :: MARQUET_EDGES_PLANAR = 0
  integer(c_int32_t), parameter :: MARQUET_EDGES_SPHERICAL = 1
  integer(c_int32_t), parameter :: MARQUET_EDGES_VINCENTY = 2
  integer(c_int32_t), parameter :: MARQUET_EDGES_THOMAS = 3
  integer(c_int32_t), parameter :: MARQUET_EDGES_ANDOYER = 4
  integer(c_int32_t), parameter :: MARQUET_EDGES_KARNEY = 5
  integer(c_int32_t), parameter :: MARQUET_EDGES_UNKNOWN = 99
  ! marquet_crs (int32_t in C)
  integer(c_int32_t), parameter :: MARQUET_CRS_DEFAULT = 0
  integer(c_int32_t), parameter :: MARQUET_CRS_PROJJSON = 1
  integer(c_int32_t), parameter :: MARQUET_CRS_UNKNOWN = 2
  ! marquet_type (int32_t in C)
  integer(c_int32_t), parameter :: MARQUET_TYPE_INT32 = 1
  integer(c_int32_t), parameter :: MARQUET_TYPE_INT64 = 2
  integer(c_int32_t), parameter :: MARQUET_TYPE_DOUBLE = 3
  integer(c_int32_t), parameter :: MARQUET_TYPE_STRING = 4
  integer(c_int32_t), parameter :: MARQUET_TYPE_GEOMETRY = 5
  integer(c_int32_t), parameter :: MARQUET_TYPE_OTHER = 99
  ! marquet_severity (int32_t in C)
  integer(c_int32_t), parameter :: MARQUET_SEVERITY_ERROR = 1
  integer(c_int32_t), parameter :: MARQUET_SEVERITY_WARNING = 2
  ! marquet_predicate (int32_t in C)
  integer(c_int32_t), parameter :: MARQUET_PREDICATE_INTERSECTS = 1
  integer(c_int32_t), parameter :: MARQUET_PREDICATE_WITHIN = 2
  integer(c_int32_t), parameter :: MARQUET_PREDICATE_CONTAINS = 3
  integer(c_int32_t), parameter :: MARQUET_PREDICATE_BBOX = 4
  ! marquet_query_flag (int32_t in C; bits of the query functions' `flags`)
  integer(c_int32_t), parameter :: MARQUET_QUERY_USE_INDEXES = 1
  integer(c_int32_t), parameter :: MARQUET_QUERY_KEEP_GEOMETRY = 2
  ! marquet_index_kind (int32_t in C)
  integer(c_int32_t), parameter :: MARQUET_INDEX_BLOCK_BBOX = 1
  integer(c_int32_t), parameter :: MARQUET_INDEX_PACKED_RTREE = 2
  ! marquet_rtree_policy (int32_t in C)
  integer(c_int32_t), parameter :: MARQUET_RTREE_REBUILD = 1
  integer(c_int32_t), parameter :: MARQUET_RTREE_LEAVE_STALE = 2

  interface
    ! The library version ("MAJOR.MINOR.PATCH"), a static NUL-terminated string
    ! (marquet_library_version() returns it as a Fortran string).
    function marquet_version() bind(c, name="marquet_version")
      import :: c_ptr
      type(c_ptr) :: marquet_version
    end function
    ! Create an empty batch.
    function marquet_batch_new(out) bind(c, name="marquet_batch_new")
      import :: c_int32_t, c_ptr
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_batch_new
    end function
    ! Free a batch (NULL is a no-op).
    subroutine marquet_batch_free(batch) bind(c, name="marquet_batch_free")
      import :: c_ptr
      type(c_ptr), value :: batch
    end subroutine
    ! Remove every column's values (the batch can then be filled again).
    function marquet_batch_clear(batch) bind(c, name="marquet_batch_clear")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: batch
      integer(c_int32_t) :: marquet_batch_clear
    end function
    ! With `fill` 1, columns of the table that the batch gives no values for are appended as missing
    ! (fill values, null lists and geometries); with 0 (the default) every column must be given.
    function marquet_batch_set_missing_rest(batch, fill) bind(c, name="marquet_batch_set_missing_rest")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: batch
      integer(c_int32_t), value :: fill
      integer(c_int32_t) :: marquet_batch_set_missing_rest
    end function
    ! Set a geometry column's values as WKB: row i is data(offsets(i)+1 : offsets(i+1)), offsets(1) =
    ! 0.
    function marquet_batch_set_wkb(batch, column, column_len, data, data_len, offsets, valid, nrows) &
        bind(c, name="marquet_batch_set_wkb")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: batch
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int8_t), dimension(*), intent(in) :: data
      integer(c_size_t), value :: data_len
      integer(c_int64_t), dimension(*), intent(in) :: offsets
      integer(c_int8_t), dimension(*), intent(in), optional :: valid
      integer(c_int64_t), value :: nrows
      integer(c_int32_t) :: marquet_batch_set_wkb
    end function
    ! Set a geometry column's values as points: `x`, `y` (and `z` for XYZ / XYZM, `m` for XYM / XYZM;
    ! otherwise pass NULL) hold `nrows` doubles; `dimensions` is a `MARQUET_DIMENSIONS_*` value.
    function marquet_batch_set_points(batch, column, column_len, dimensions, x, y, z, m, valid, nrows) &
        bind(c, name="marquet_batch_set_points")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_double, c_ptr
      type(c_ptr), value :: batch
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int32_t), value :: dimensions
      real(c_double), dimension(*), intent(in) :: x
      real(c_double), dimension(*), intent(in) :: y
      real(c_double), dimension(*), intent(in), optional :: z
      real(c_double), dimension(*), intent(in), optional :: m
      integer(c_int8_t), dimension(*), intent(in), optional :: valid
      integer(c_int64_t), value :: nrows
      integer(c_int32_t) :: marquet_batch_set_points
    end function
    ! Set an attribute column's values from `nrows` int32 values; `valid` (NULL = all valid) marks
    ! missing rows with 0 (written as the column's fill value).
    function marquet_batch_set_int32(batch, column, column_len, values, valid, nrows) &
        bind(c, name="marquet_batch_set_int32")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: batch
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int32_t), dimension(*), intent(in) :: values
      integer(c_int8_t), dimension(*), intent(in), optional :: valid
      integer(c_int64_t), value :: nrows
      integer(c_int32_t) :: marquet_batch_set_int32
    end function
    ! Set an attribute column's values from `nrows` int64 values (see `marquet_batch_set_int32`).
    function marquet_batch_set_int64(batch, column, column_len, values, valid, nrows) &
        bind(c, name="marquet_batch_set_int64")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: batch
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), dimension(*), intent(in) :: values
      integer(c_int8_t), dimension(*), intent(in), optional :: valid
      integer(c_int64_t), value :: nrows
      integer(c_int32_t) :: marquet_batch_set_int64
    end function
    ! Set an attribute column's values from `nrows` doubles (see `marquet_batch_set_int32`).
    function marquet_batch_set_double(batch, column, column_len, values, valid, nrows) &
        bind(c, name="marquet_batch_set_double")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_double, c_ptr
      type(c_ptr), value :: batch
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      real(c_double), dimension(*), intent(in) :: values
      integer(c_int8_t), dimension(*), intent(in), optional :: valid
      integer(c_int64_t), value :: nrows
      integer(c_int32_t) :: marquet_batch_set_double
    end function
    ! Set a string column's values: row i is the UTF-8 text chars(offsets(i)+1 : offsets(i+1)),
    ! offsets(1) = 0.
    function marquet_batch_set_strings(batch, column, column_len, chars, chars_len, offsets, valid, nrows) &
        bind(c, name="marquet_batch_set_strings")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: batch
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      character(kind=c_char), dimension(*), intent(in) :: chars
      integer(c_size_t), value :: chars_len
      integer(c_int64_t), dimension(*), intent(in) :: offsets
      integer(c_int8_t), dimension(*), intent(in), optional :: valid
      integer(c_int64_t), value :: nrows
      integer(c_int32_t) :: marquet_batch_set_strings
    end function
    ! Create (truncate) the file at `path` (`path_len` bytes of UTF-8, no NUL needed) and open it
    ! read-write.
    function marquet_file_create(path, path_len, out) bind(c, name="marquet_file_create")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_file_create
    end function
    ! Open the existing file at `path` read-only.
    function marquet_file_open(path, path_len, out) bind(c, name="marquet_file_open")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_file_open
    end function
    ! Open, read-only, the file at `url` (http(s)://, s3://, gs://, az://, file://), fetched whole.
    function marquet_file_open_url(url, url_len, out) bind(c, name="marquet_file_open_url")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: url
      integer(c_size_t), value :: url_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_file_open_url
    end function
    ! Open the existing file at `path` read-write.
    function marquet_file_open_rw(path, path_len, out) bind(c, name="marquet_file_open_rw")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_file_open_rw
    end function
    ! Make a handle for the file that the caller's HDF5 file or group identifier `hid` (a `hid_t`)
    ! belongs to, so that a program using HDF5 itself keeps its own arrays and Marquet tables in one
    ! open file (HEP002 §1.1).
    function marquet_file_from_hid(hid, out) bind(c, name="marquet_file_from_hid")
      import :: c_int32_t, c_int64_t, c_ptr
      integer(c_int64_t), value :: hid
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_file_from_hid
    end function
    ! Close the file handle: later calls with it return `MARQUET_STATUS_CLOSED`.
    function marquet_file_close(file) bind(c, name="marquet_file_close")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: file
      integer(c_int32_t) :: marquet_file_close
    end function
    ! Free a file handle (NULL, and a handle already freed, are ignored).
    subroutine marquet_file_free(file) bind(c, name="marquet_file_free")
      import :: c_ptr
      type(c_ptr), value :: file
    end subroutine
    ! Flush the file's buffers to disk.
    function marquet_file_flush(file) bind(c, name="marquet_file_flush")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: file
      integer(c_int32_t) :: marquet_file_flush
    end function
    ! Number of table groups in the file (a full traversal, HEP001 §1.3).
    function marquet_file_table_count(file, count) bind(c, name="marquet_file_table_count")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: file
      integer(c_int64_t), intent(out) :: count
      integer(c_int32_t) :: marquet_file_table_count
    end function
    ! The path of table `index` (0-based, in traversal order) as a NUL-terminated string in `buf`.
    function marquet_file_table_name(file, index, buf, buf_len, needed) &
        bind(c, name="marquet_file_table_name")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: file
      integer(c_int64_t), value :: index
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_file_table_name
    end function
    ! Free a geometry info (NULL is a no-op).
    subroutine marquet_geometry_info_free(info) bind(c, name="marquet_geometry_info_free")
      import :: c_ptr
      type(c_ptr), value :: info
    end subroutine
    ! The storage form (a `MARQUET_FORM_*` value).
    function marquet_geometry_info_form(info, form) bind(c, name="marquet_geometry_info_form")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: info
      integer(c_int32_t), intent(out) :: form
      integer(c_int32_t) :: marquet_geometry_info_form
    end function
    ! The WKB size in bytes of a fixed-length WKB column (0 for the other forms).
    function marquet_geometry_info_fixed_size(info, size) &
        bind(c, name="marquet_geometry_info_fixed_size")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: info
      integer(c_int64_t), intent(out) :: size
      integer(c_int32_t) :: marquet_geometry_info_fixed_size
    end function
    ! The dimensions (`MARQUET_DIMENSIONS_*`) and coordinate width (`*is_f32` 1 for float32, 0 for
    ! float64) of a point column; `MARQUET_STATUS_INVALID_ARGUMENT` for the WKB forms (whose
    ! dimensions are in the geometry types).
    function marquet_geometry_info_point_layout(info, dimensions, is_f32) &
        bind(c, name="marquet_geometry_info_point_layout")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: info
      integer(c_int32_t), intent(out) :: dimensions
      integer(c_int32_t), intent(out) :: is_f32
      integer(c_int32_t) :: marquet_geometry_info_point_layout
    end function
    ! The declared geometry types as ISO WKB codes (e.g.
    function marquet_geometry_info_types(info, codes, codes_len, count) &
        bind(c, name="marquet_geometry_info_types")
      import :: c_int32_t, c_size_t, c_ptr
      type(c_ptr), value :: info
      integer(c_int32_t), dimension(*), intent(out) :: codes
      integer(c_size_t), value :: codes_len
      integer(c_size_t), intent(out), optional :: count
      integer(c_int32_t) :: marquet_geometry_info_types
    end function
    ! The BBOX attribute (HEP002 §6.4).
    function marquet_geometry_info_bbox(info, bbox, bbox_len, present, has_z, has_m) &
        bind(c, name="marquet_geometry_info_bbox")
      import :: c_int32_t, c_size_t, c_double, c_ptr
      type(c_ptr), value :: info
      real(c_double), dimension(*), intent(out) :: bbox
      integer(c_size_t), value :: bbox_len
      integer(c_int32_t), intent(out) :: present
      integer(c_int32_t), intent(out) :: has_z
      integer(c_int32_t), intent(out) :: has_m
      integer(c_int32_t) :: marquet_geometry_info_bbox
    end function
    ! The CRS state (a `MARQUET_CRS_*` value).
    function marquet_geometry_info_crs(info, crs) bind(c, name="marquet_geometry_info_crs")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: info
      integer(c_int32_t), intent(out) :: crs
      integer(c_int32_t) :: marquet_geometry_info_crs
    end function
    ! The PROJJSON text of the CRS as a NUL-terminated string (empty when the CRS state is not
    ! `MARQUET_CRS_PROJJSON`); `buf` / `needed` as for `marquet_file_table_name`.
    function marquet_geometry_info_crs_projjson(info, buf, buf_len, needed) &
        bind(c, name="marquet_geometry_info_crs_projjson")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: info
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_geometry_info_crs_projjson
    end function
    ! The EDGES value (a `MARQUET_EDGES_*` value; PLANAR when the attribute is absent).
    function marquet_geometry_info_edges(info, edges) bind(c, name="marquet_geometry_info_edges")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: info
      integer(c_int32_t), intent(out) :: edges
      integer(c_int32_t) :: marquet_geometry_info_edges
    end function
    ! 1 when ORIENTATION declares counterclockwise exterior rings, else 0.
    function marquet_geometry_info_orientation(info, ccw) &
        bind(c, name="marquet_geometry_info_orientation")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: info
      integer(c_int32_t), intent(out) :: ccw
      integer(c_int32_t) :: marquet_geometry_info_orientation
    end function
    ! The name of the covering column as a NUL-terminated string (empty when there is none); `buf` /
    ! `needed` as for `marquet_file_table_name`.
    function marquet_geometry_info_covering(info, buf, buf_len, needed) &
        bind(c, name="marquet_geometry_info_covering")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: info
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_geometry_info_covering
    end function
    ! Build (or rebuild in place) an index of `kind` on geometry column `column`.
    function marquet_table_build_index(table, column, column_len, kind, parameter) &
        bind(c, name="marquet_table_build_index")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int32_t), value :: kind
      integer(c_int64_t), value :: parameter
      integer(c_int32_t) :: marquet_table_build_index
    end function
    ! Rebuild every spatial index of `column` in place, valid or stale, keeping its block length or
    ! node size.
    function marquet_table_rebuild_indexes(table, column, column_len, rebuilt) &
        bind(c, name="marquet_table_rebuild_indexes")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), intent(out), optional :: rebuilt
      integer(c_int32_t) :: marquet_table_rebuild_indexes
    end function
    ! Delete the indexes of `kind` on `column` (datasets and their SEARCH_INDEX_LIST references).
    function marquet_table_drop_index(table, column, column_len, kind, dropped) &
        bind(c, name="marquet_table_drop_index")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int32_t), value :: kind
      integer(c_int64_t), intent(out), optional :: dropped
      integer(c_int32_t) :: marquet_table_drop_index
    end function
    ! Number of spatial indexes on `column` (valid or stale).
    function marquet_table_index_count(table, column, column_len, count) &
        bind(c, name="marquet_table_index_count")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), intent(out) :: count
      integer(c_int32_t) :: marquet_table_index_count
    end function
    ! Index `index` (0-based, SEARCH_INDEX_LIST order) of `column`: `*kind` receives its
    ! `MARQUET_INDEX_*` value and `*valid` 1 when its validity tokens match the table (HEP001 §12.2),
    ! 0 when it is stale and queries ignore it.
    function marquet_table_index_info(table, column, column_len, index, kind, valid) &
        bind(c, name="marquet_table_index_info")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), value :: index
      integer(c_int32_t), intent(out) :: kind
      integer(c_int32_t), intent(out) :: valid
      integer(c_int32_t) :: marquet_table_index_info
    end function
    ! Set what this table handle's appends and truncations do to valid packed R-trees
    ! (`MARQUET_RTREE_*`; the default is `MARQUET_RTREE_REBUILD`).
    function marquet_table_set_rtree_policy(table, policy) &
        bind(c, name="marquet_table_set_rtree_policy")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: table
      integer(c_int32_t), value :: policy
      integer(c_int32_t) :: marquet_table_set_rtree_policy
    end function
    ! Remove the rows from `nrows` on (HEP001 §12.5): NROWS first, then the data; BBOX and
    ! GEOMETRY_TYPES stay valid supersets (HEP002 §11.1), block indexes are cut, valid R-trees follow
    ! the table's R-tree policy.
    function marquet_table_truncate(table, nrows) bind(c, name="marquet_table_truncate")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: table
      integer(c_int64_t), value :: nrows
      integer(c_int32_t) :: marquet_table_truncate
    end function
    ! Copy this thread's last error message (the detail behind the most recent non-zero status
    ! returned on this thread, naming the HDF5 object path and row where known) into `buf` as a NUL-
    ! terminated string.
    function marquet_last_error_message(buf, len, needed) bind(c, name="marquet_last_error_message")
      import :: c_int32_t, c_char, c_size_t
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_last_error_message
    end function
    ! Create geometry column options with the defaults.
    function marquet_geometry_column_options_new(out) &
        bind(c, name="marquet_geometry_column_options_new")
      import :: c_int32_t, c_ptr
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_geometry_column_options_new
    end function
    ! Free options (NULL is a no-op).
    subroutine marquet_geometry_column_options_free(options) &
        bind(c, name="marquet_geometry_column_options_free")
      import :: c_ptr
      type(c_ptr), value :: options
    end subroutine
    ! Set the storage form (a `MARQUET_FORM_*` value).
    function marquet_geometry_column_options_set_form(options, form, dimensions, use_f32, fixed_size) &
        bind(c, name="marquet_geometry_column_options_set_form")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: options
      integer(c_int32_t), value :: form
      integer(c_int32_t), value :: dimensions
      integer(c_int32_t), value :: use_f32
      integer(c_int64_t), value :: fixed_size
      integer(c_int32_t) :: marquet_geometry_column_options_set_form
    end function
    ! Set the CRS to a PROJJSON document (`len` bytes of UTF-8).
    function marquet_geometry_column_options_set_crs_projjson(options, projjson, len) &
        bind(c, name="marquet_geometry_column_options_set_crs_projjson")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: options
      character(kind=c_char), dimension(*), intent(in) :: projjson
      integer(c_size_t), value :: len
      integer(c_int32_t) :: marquet_geometry_column_options_set_crs_projjson
    end function
    ! Set the CRS from a definition (`len` bytes of UTF-8): EPSG:3857, OGC:CRS84, srid:N, an OGC
    ! URN, WKT 1 or 2, or PROJJSON, resolved to PROJJSON with PROJ.
    function marquet_geometry_column_options_set_crs_definition(options, definition, len) &
        bind(c, name="marquet_geometry_column_options_set_crs_definition")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: options
      character(kind=c_char), dimension(*), intent(in) :: definition
      integer(c_size_t), value :: len
      integer(c_int32_t) :: marquet_geometry_column_options_set_crs_definition
    end function
    ! Set the CRS state: `MARQUET_CRS_DEFAULT` (OGC:CRS84, no attribute) or `MARQUET_CRS_UNKNOWN`.
    function marquet_geometry_column_options_set_crs(options, crs) &
        bind(c, name="marquet_geometry_column_options_set_crs")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: options
      integer(c_int32_t), value :: crs
      integer(c_int32_t) :: marquet_geometry_column_options_set_crs
    end function
    ! Set EDGES (a `MARQUET_EDGES_*` value other than UNKNOWN).
    function marquet_geometry_column_options_set_edges(options, edges) &
        bind(c, name="marquet_geometry_column_options_set_edges")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: options
      integer(c_int32_t), value :: edges
      integer(c_int32_t) :: marquet_geometry_column_options_set_edges
    end function
    ! Declare polygon rings counterclockwise (1) or leave orientation undeclared (0) (HEP002 §9.2).
    function marquet_geometry_column_options_set_orientation(options, counterclockwise) &
        bind(c, name="marquet_geometry_column_options_set_orientation")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: options
      integer(c_int32_t), value :: counterclockwise
      integer(c_int32_t) :: marquet_geometry_column_options_set_orientation
    end function
    ! Create a covering (per-row bounding box) column named `name` (`len` bytes) with the geometry
    ! column, of float64 boxes or float32 ones when `use_f32` is 1 (HEP002 §10.5).
    function marquet_geometry_column_options_set_covering(options, name, len, use_f32) &
        bind(c, name="marquet_geometry_column_options_set_covering")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: options
      character(kind=c_char), dimension(*), intent(in), optional :: name
      integer(c_size_t), value :: len
      integer(c_int32_t), value :: use_f32
      integer(c_int32_t) :: marquet_geometry_column_options_set_covering
    end function
    ! Set the chunk length in rows (at least 1) of the new column's datasets.
    function marquet_geometry_column_options_set_chunk_rows(options, rows) &
        bind(c, name="marquet_geometry_column_options_set_chunk_rows")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: options
      integer(c_int64_t), value :: rows
      integer(c_int32_t) :: marquet_geometry_column_options_set_chunk_rows
    end function
    ! Set the deflate (gzip) level 0-9 of the column's data, or -1 to store it without filters.
    function marquet_geometry_column_options_set_deflate(options, level) &
        bind(c, name="marquet_geometry_column_options_set_deflate")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: options
      integer(c_int32_t), value :: level
      integer(c_int32_t) :: marquet_geometry_column_options_set_deflate
    end function
    ! Find the rows of geometry column `column` whose geometry satisfies `predicate` (a
    ! `MARQUET_PREDICATE_*` value) against the box `[xmin, xmax] x [ymin, ymax]`.
    function marquet_table_query_box(table, column, column_len, xmin, ymin, xmax, ymax, predicate, flags, out) &
        bind(c, name="marquet_table_query_box")
      import :: c_int32_t, c_char, c_size_t, c_double, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      real(c_double), value :: xmin
      real(c_double), value :: ymin
      real(c_double), value :: xmax
      real(c_double), value :: ymax
      integer(c_int32_t), value :: predicate
      integer(c_int32_t), value :: flags
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_table_query_box
    end function
    ! As `marquet_table_query_box`, with the window given as one ISO WKB geometry (`wkb_len` bytes, in
    ! the column's coordinates).
    function marquet_table_query_wkb(table, column, column_len, wkb, wkb_len, predicate, flags, out) &
        bind(c, name="marquet_table_query_wkb")
      import :: c_int32_t, c_int8_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int8_t), dimension(*), intent(in) :: wkb
      integer(c_size_t), value :: wkb_len
      integer(c_int32_t), value :: predicate
      integer(c_int32_t), value :: flags
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_table_query_wkb
    end function
    ! Open a reader of geometry column `column` of `table` (`column_len` 0: the primary
    ! geometry column) that answers many windows; free with `marquet_spatial_reader_free`.
    function marquet_spatial_reader_open(table, column, column_len, out) &
        bind(c, name="marquet_spatial_reader_open")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_spatial_reader_open
    end function
    ! A reader of a geometry column of a table of the file at `url`, read by byte range.
    function marquet_spatial_reader_open_url(url, url_len, table, table_len, column, column_len, out) &
        bind(c, name="marquet_spatial_reader_open_url")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: url
      integer(c_size_t), value :: url_len
      character(kind=c_char), dimension(*), intent(in) :: table
      integer(c_size_t), value :: table_len
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_spatial_reader_open_url
    end function
    ! As `marquet_table_query_box`, through the reader.
    function marquet_spatial_reader_query_box(reader, xmin, ymin, xmax, ymax, predicate, flags, out) &
        bind(c, name="marquet_spatial_reader_query_box")
      import :: c_int32_t, c_double, c_ptr
      type(c_ptr), value :: reader
      real(c_double), value :: xmin
      real(c_double), value :: ymin
      real(c_double), value :: xmax
      real(c_double), value :: ymax
      integer(c_int32_t), value :: predicate
      integer(c_int32_t), value :: flags
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_spatial_reader_query_box
    end function
    ! As `marquet_table_query_wkb`, through the reader.
    function marquet_spatial_reader_query_wkb(reader, wkb, wkb_len, predicate, flags, out) &
        bind(c, name="marquet_spatial_reader_query_wkb")
      import :: c_int32_t, c_int8_t, c_size_t, c_ptr
      type(c_ptr), value :: reader
      integer(c_int8_t), dimension(*), intent(in) :: wkb
      integer(c_size_t), value :: wkb_len
      integer(c_int32_t), value :: predicate
      integer(c_int32_t), value :: flags
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_spatial_reader_query_wkb
    end function
    ! Free a reader (NULL is a no-op).
    subroutine marquet_spatial_reader_free(reader) bind(c, name="marquet_spatial_reader_free")
      import :: c_ptr
      type(c_ptr), value :: reader
    end subroutine
    ! Rows [start, end) as an Arrow C stream (`struct ArrowArrayStream`, pass c_loc of
    ! storage for it as `out`); `column_offsets` absent (and ncolumns 0): every column.
    function marquet_table_read_arrow(table, columns, columns_len, column_offsets, ncolumns, &
        start, end, batch_rows, out) bind(c, name="marquet_table_read_arrow")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: columns
      integer(c_size_t), value :: columns_len
      integer(c_int64_t), dimension(*), intent(in), optional :: column_offsets
      integer(c_int64_t), value :: ncolumns
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: end
      integer(c_int64_t), value :: batch_rows
      type(c_ptr), value :: out
      integer(c_int32_t) :: marquet_table_read_arrow
    end function
    ! The given rows (strictly ascending) as an Arrow C stream.
    function marquet_table_take_arrow(table, columns, columns_len, column_offsets, ncolumns, &
        rows, nrows, batch_rows, out) bind(c, name="marquet_table_take_arrow")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: columns
      integer(c_size_t), value :: columns_len
      integer(c_int64_t), dimension(*), intent(in), optional :: column_offsets
      integer(c_int64_t), value :: ncolumns
      integer(c_int64_t), dimension(*), intent(in) :: rows
      integer(c_int64_t), value :: nrows
      integer(c_int64_t), value :: batch_rows
      type(c_ptr), value :: out
      integer(c_int32_t) :: marquet_table_take_arrow
    end function
    ! The rows of the query answer `result` of `table` as an Arrow C stream; with
    ! `MARQUET_QUERY_KEEP_GEOMETRY` the queried geometry column comes from the result.
    function marquet_query_result_take_arrow(table, result, columns, columns_len, column_offsets, &
        ncolumns, batch_rows, out) bind(c, name="marquet_query_result_take_arrow")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      type(c_ptr), value :: result
      character(kind=c_char), dimension(*), intent(in) :: columns
      integer(c_size_t), value :: columns_len
      integer(c_int64_t), dimension(*), intent(in), optional :: column_offsets
      integer(c_int64_t), value :: ncolumns
      integer(c_int64_t), value :: batch_rows
      type(c_ptr), value :: out
      integer(c_int32_t) :: marquet_query_result_take_arrow
    end function
    ! A writer of Arrow record batches of `schema` (a `struct ArrowSchema`, moved in)
    ! into a new table (`append` 0) or an existing one (1).
    function marquet_arrow_writer_new(file, table, table_len, append, schema, out) &
        bind(c, name="marquet_arrow_writer_new")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: file
      character(kind=c_char), dimension(*), intent(in) :: table
      integer(c_size_t), value :: table_len
      integer(c_int32_t), value :: append
      type(c_ptr), value :: schema
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_arrow_writer_new
    end function
    ! Add one record batch (a `struct ArrowArray`, moved in).
    function marquet_arrow_writer_write(writer, array) bind(c, name="marquet_arrow_writer_write")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: writer
      type(c_ptr), value :: array
      integer(c_int32_t) :: marquet_arrow_writer_write
    end function
    ! Write every batch given, in one step; `nrows` receives the table's row count.
    function marquet_arrow_writer_finish(writer, nrows) bind(c, name="marquet_arrow_writer_finish")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: writer
      integer(c_int64_t), intent(out), optional :: nrows
      integer(c_int32_t) :: marquet_arrow_writer_finish
    end function
    ! Free a writer (NULL is a no-op); an unfinished writer leaves the file as it was.
    subroutine marquet_arrow_writer_free(writer) bind(c, name="marquet_arrow_writer_free")
      import :: c_ptr
      type(c_ptr), value :: writer
    end subroutine
    ! Free a query result (NULL is a no-op).
    subroutine marquet_query_result_free(result) bind(c, name="marquet_query_result_free")
      import :: c_ptr
      type(c_ptr), value :: result
    end subroutine
    ! Number of matching rows.
    function marquet_query_result_count(result, count) bind(c, name="marquet_query_result_count")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: result
      integer(c_int64_t), intent(out) :: count
      integer(c_int32_t) :: marquet_query_result_count
    end function
    ! Copy the matching row numbers (0-based, ascending) into `rows`, which holds `rows_len` elements.
    function marquet_query_result_rows(result, rows, rows_len) bind(c, name="marquet_query_result_rows")
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value :: result
      integer(c_int64_t), dimension(*), intent(out) :: rows
      integer(c_size_t), value :: rows_len
      integer(c_int32_t) :: marquet_query_result_rows
    end function
    ! `*approximate` = 1 when the column's edges are not planar and the predicate was answered on
    ! (geodesically grown) boxes, so the rows are a superset of the exact answer; 0 when the answer is
    ! exact.
    function marquet_query_result_approximate(result, approximate) &
        bind(c, name="marquet_query_result_approximate")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: result
      integer(c_int32_t), intent(out) :: approximate
      integer(c_int32_t) :: marquet_query_result_approximate
    end function
    ! How the query was answered, as counts: `stats` receives up to `stats_len` of, in this order,
    ! rows in the table, row blocks of the block index used, blocks skipped, R-tree candidates, rows
    ! the covering column rejected, rows whose geometry was read and tested, rows matched, bytes read
    ! (HEP002 §10 layers; `marquet query --stats`).
    function marquet_query_result_stats(result, stats, stats_len, needed) &
        bind(c, name="marquet_query_result_stats")
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value :: result
      integer(c_int64_t), dimension(*), intent(out) :: stats
      integer(c_size_t), value :: stats_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_query_result_stats
    end function
    ! Copy the geometries a query kept (`MARQUET_QUERY_KEEP_GEOMETRY`) as ISO WKB, laid out as
    ! `marquet_table_read_wkb` lays out rows.
    function marquet_query_result_wkb(result, buf, buf_len, offsets, valid, needed) &
        bind(c, name="marquet_query_result_wkb")
      import :: c_int32_t, c_int64_t, c_int8_t, c_size_t, c_ptr
      type(c_ptr), value :: result
      integer(c_int8_t), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_int64_t), dimension(*), intent(out) :: offsets
      integer(c_int8_t), dimension(*), intent(out), optional :: valid
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_query_result_wkb
    end function
    ! Validate the HDF5 file at `path` against HEP001 §13 and HEP002 §12: every table group, or only
    ! the one at `table` (`table` NULL with `table_len` 0 = all).
    function marquet_validate_file(path, path_len, table, table_len, strict, out) &
        bind(c, name="marquet_validate_file")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      character(kind=c_char), dimension(*), intent(in), optional :: table
      integer(c_size_t), value :: table_len
      integer(c_int32_t), value :: strict
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_validate_file
    end function
    ! Free a report (NULL is a no-op).
    subroutine marquet_report_free(report) bind(c, name="marquet_report_free")
      import :: c_ptr
      type(c_ptr), value :: report
    end subroutine
    ! 1 when the file is conformant, else 0.
    function marquet_report_conformant(report, conformant) bind(c, name="marquet_report_conformant")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: report
      integer(c_int32_t), intent(out) :: conformant
      integer(c_int32_t) :: marquet_report_conformant
    end function
    ! Number of findings (errors and warnings) of every table.
    function marquet_report_finding_count(report, count) bind(c, name="marquet_report_finding_count")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: report
      integer(c_int64_t), intent(out) :: count
      integer(c_int32_t) :: marquet_report_finding_count
    end function
    ! Finding `index`'s severity (a `MARQUET_SEVERITY_*` value) and row (`-1` when the finding is not
    ! about one row).
    function marquet_report_finding_info(report, index, severity, row) &
        bind(c, name="marquet_report_finding_info")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: report
      integer(c_int64_t), value :: index
      integer(c_int32_t), intent(out) :: severity
      integer(c_int64_t), intent(out) :: row
      integer(c_int32_t) :: marquet_report_finding_info
    end function
    ! Finding `index`'s requirement, e.g.
    function marquet_report_finding_rule(report, index, buf, buf_len, needed) &
        bind(c, name="marquet_report_finding_rule")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: report
      integer(c_int64_t), value :: index
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_report_finding_rule
    end function
    ! Finding `index`'s HDF5 object path.
    function marquet_report_finding_path(report, index, buf, buf_len, needed) &
        bind(c, name="marquet_report_finding_path")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: report
      integer(c_int64_t), value :: index
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_report_finding_path
    end function
    ! Finding `index`'s message (lowercase: what was found and what was expected).
    function marquet_report_finding_message(report, index, buf, buf_len, needed) &
        bind(c, name="marquet_report_finding_message")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: report
      integer(c_int64_t), value :: index
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_report_finding_message
    end function
    ! The whole report as JSON (the CLI's `--json` form), NUL-terminated.
    function marquet_report_json(report, buf, buf_len, needed) bind(c, name="marquet_report_json")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: report
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_report_json
    end function
    ! A static, NUL-terminated description of `status`; never NULL (unknown numbers give "unknown
    ! status").
    function marquet_status_str(status) bind(c, name="marquet_status_str")
      import :: c_int32_t, c_ptr
      integer(c_int32_t), value :: status
      type(c_ptr) :: marquet_status_str
    end function
    ! Create an empty table group at `path` (e.g.
    function marquet_table_create(file, path, path_len, out) bind(c, name="marquet_table_create")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: file
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_table_create
    end function
    ! Open the Marquet table at `path`.
    function marquet_table_open(file, path, path_len, out) bind(c, name="marquet_table_open")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: file
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_table_open
    end function
    ! Free a table handle (NULL is a no-op).
    subroutine marquet_table_free(table) bind(c, name="marquet_table_free")
      import :: c_ptr
      type(c_ptr), value :: table
    end subroutine
    ! Number of committed rows (NROWS).
    function marquet_table_nrows(table, nrows) bind(c, name="marquet_table_nrows")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: table
      integer(c_int64_t), intent(out) :: nrows
      integer(c_int32_t) :: marquet_table_nrows
    end function
    ! The table's HDF5 path as a NUL-terminated string (see `marquet_file_table_name` for the `buf` /
    ! `needed` convention).
    function marquet_table_path(table, buf, buf_len, needed) bind(c, name="marquet_table_path")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_table_path
    end function
    ! Add an attribute column of `value_type` `MARQUET_TYPE_INT32`, `_INT64` or `_DOUBLE`.
    function marquet_table_add_column(table, name, name_len, value_type) &
        bind(c, name="marquet_table_add_column")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: name_len
      integer(c_int32_t), value :: value_type
      integer(c_int32_t) :: marquet_table_add_column
    end function
    ! Add a UTF-8 string attribute column holding values of at most `max_bytes` bytes (stored as
    ! fixed-length, NUL-terminated strings of `max_bytes + 1` bytes; the empty string is the missing
    ! value).
    function marquet_table_add_string_column(table, name, name_len, max_bytes) &
        bind(c, name="marquet_table_add_string_column")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: name_len
      integer(c_int64_t), value :: max_bytes
      integer(c_int32_t) :: marquet_table_add_string_column
    end function
    ! Add a geometry column described by `options` (NULL = the defaults of
    ! `marquet_geometry_column_options_new`).
    function marquet_table_add_geometry_column(table, name, name_len, options) &
        bind(c, name="marquet_table_add_geometry_column")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: name_len
      type(c_ptr), value :: options
      integer(c_int32_t) :: marquet_table_add_geometry_column
    end function
    ! Number of columns of every kind (COLUMN_ORDER: attribute, geometry and covering).
    function marquet_table_column_count(table, count) bind(c, name="marquet_table_column_count")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: table
      integer(c_int64_t), intent(out) :: count
      integer(c_int32_t) :: marquet_table_column_count
    end function
    ! The name of column `index` (0-based, COLUMN_ORDER) as a NUL-terminated string (see
    ! `marquet_file_table_name` for the `buf` / `needed` convention).
    function marquet_table_column_name(table, index, buf, buf_len, needed) &
        bind(c, name="marquet_table_column_name")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      integer(c_int64_t), value :: index
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_table_column_name
    end function
    ! Number of geometry columns.
    function marquet_table_geometry_column_count(table, count) &
        bind(c, name="marquet_table_geometry_column_count")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: table
      integer(c_int64_t), intent(out) :: count
      integer(c_int32_t) :: marquet_table_geometry_column_count
    end function
    ! The name of geometry column `index` (0 = the primary one, GEOMETRY_COLUMNS order).
    function marquet_table_geometry_column_name(table, index, buf, buf_len, needed) &
        bind(c, name="marquet_table_geometry_column_name")
      import :: c_int32_t, c_int64_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      integer(c_int64_t), value :: index
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_table_geometry_column_name
    end function
    ! The value type of a column (a `MARQUET_TYPE_*` value).
    function marquet_table_column_type(table, column, column_len, value_type) &
        bind(c, name="marquet_table_column_type")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int32_t), intent(out) :: value_type
      integer(c_int32_t) :: marquet_table_column_type
    end function
    ! Append the batch's rows (HEP002 §11.1): every value is checked before the file changes; BBOX,
    ! GEOMETRY_TYPES and covering columns are maintained; NROWS is committed last.
    function marquet_table_append(table, batch, nrows) bind(c, name="marquet_table_append")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: table
      type(c_ptr), value :: batch
      integer(c_int64_t), intent(out), optional :: nrows
      integer(c_int32_t) :: marquet_table_append
    end function
    ! Write the batch's rows the fast, default way (MarquetTable::write_table): rows in Hilbert
    ! order of the primary geometry column; into an empty table without spatial indexes, the
    ! default layout's indexes are declared first and built by this write. Otherwise as
    ! marquet_table_append.
    function marquet_table_write(table, batch, nrows) bind(c, name="marquet_table_write")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: table
      type(c_ptr), value :: batch
      integer(c_int64_t), intent(out), optional :: nrows
      integer(c_int32_t) :: marquet_table_write
    end function
    ! MPI (only in a libmarquet built with the `mpio` feature; docs/PARALLEL.md). `comm` is the
    ! communicator's Fortran handle: `comm % MPI_VAL` of mpi_f08's type(MPI_Comm).
    ! Create (truncate) `path` on every rank of `comm` (collective), read-write, MPI-IO driver.
    function marquet_file_create_mpi(path, path_len, comm, out) bind(c, name="marquet_file_create_mpi")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      integer(c_int32_t), value :: comm
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_file_create_mpi
    end function
    ! Open `path` on every rank of `comm` (collective), read-only (rw 0) or read-write (rw 1).
    function marquet_file_open_mpi(path, path_len, comm, rw, out) bind(c, name="marquet_file_open_mpi")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      integer(c_int32_t), value :: comm
      integer(c_int32_t), value :: rw
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_file_open_mpi
    end function
    ! Collective append: every rank of `comm` passes its own batch; rows land in rank order;
    ! NROWS is committed once after every rank's data. first_row: this rank's first row.
    function marquet_table_append_collective(table, batch, comm, first_row, nrows) &
        bind(c, name="marquet_table_append_collective")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: table
      type(c_ptr), value :: batch
      integer(c_int32_t), value :: comm
      integer(c_int64_t), intent(out), optional :: first_row
      integer(c_int64_t), intent(out), optional :: nrows
      integer(c_int32_t) :: marquet_table_append_collective
    end function
    ! What this table handle's appends and geometry updates do with polygon rings wound against
    ! a column's ORIENTATION = COUNTERCLOCKWISE: rewind 0 refuses them (the default), 1 reverses
    ! them.
    function marquet_table_set_rewind_rings(table, rewind) bind(c, name="marquet_table_set_rewind_rings")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: table
      integer(c_int32_t), value :: rewind
      integer(c_int32_t) :: marquet_table_set_rewind_rings
    end function
    ! Describe geometry column `column`; free the result with `marquet_geometry_info_free`.
    function marquet_table_geometry_info(table, column, column_len, out) &
        bind(c, name="marquet_table_geometry_info")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_table_geometry_info
    end function
    ! Read rows [start, end) of a geometry column as ISO WKB: row i is buf(offsets(i)+1 :
    ! offsets(i+1)); call with buf_len 0 to learn the size in needed.
    function marquet_table_read_wkb(table, column, column_len, start, end, buf, buf_len, offsets, valid, needed) &
        bind(c, name="marquet_table_read_wkb")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: end
      integer(c_int8_t), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: buf_len
      integer(c_int64_t), dimension(*), intent(out) :: offsets
      integer(c_int8_t), dimension(*), intent(out), optional :: valid
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_table_read_wkb
    end function
    ! Read rows `[start, end)` of a point column as coordinate arrays of `end - start` doubles each.
    function marquet_table_read_points(table, column, column_len, start, end, x, y, z, m, valid) &
        bind(c, name="marquet_table_read_points")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_double, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: end
      real(c_double), dimension(*), intent(out) :: x
      real(c_double), dimension(*), intent(out) :: y
      real(c_double), dimension(*), intent(out), optional :: z
      real(c_double), dimension(*), intent(out), optional :: m
      integer(c_int8_t), dimension(*), intent(out), optional :: valid
      integer(c_int32_t) :: marquet_table_read_points
    end function
    ! Read rows `[start, end)` of an integer column into `values` (`end - start` entries); values that
    ! do not fit int32 are refused.
    function marquet_table_read_int32(table, column, column_len, start, end, values, valid) &
        bind(c, name="marquet_table_read_int32")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: end
      integer(c_int32_t), dimension(*), intent(out) :: values
      integer(c_int8_t), dimension(*), intent(out), optional :: valid
      integer(c_int32_t) :: marquet_table_read_int32
    end function
    ! Read rows `[start, end)` of an integer column as int64 (see `marquet_table_read_int32`).
    function marquet_table_read_int64(table, column, column_len, start, end, values, valid) &
        bind(c, name="marquet_table_read_int64")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: end
      integer(c_int64_t), dimension(*), intent(out) :: values
      integer(c_int8_t), dimension(*), intent(out), optional :: valid
      integer(c_int32_t) :: marquet_table_read_int64
    end function
    ! Read rows `[start, end)` of a numeric column as doubles (see `marquet_table_read_int32`).
    function marquet_table_read_double(table, column, column_len, start, end, values, valid) &
        bind(c, name="marquet_table_read_double")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_double, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: end
      real(c_double), dimension(*), intent(out) :: values
      integer(c_int8_t), dimension(*), intent(out), optional :: valid
      integer(c_int32_t) :: marquet_table_read_double
    end function
    ! Read rows [start, end) of a string column: row i is chars(offsets(i)+1 : offsets(i+1)); call
    ! with chars_len 0 to learn the size in needed.
    function marquet_table_read_strings(table, column, column_len, start, end, chars, chars_len, offsets, valid, needed) &
        bind(c, name="marquet_table_read_strings")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), value :: start
      integer(c_int64_t), value :: end
      character(kind=c_char), dimension(*), intent(out) :: chars
      integer(c_size_t), value :: chars_len
      integer(c_int64_t), dimension(*), intent(out) :: offsets
      integer(c_int8_t), dimension(*), intent(out), optional :: valid
      integer(c_size_t), intent(out), optional :: needed
      integer(c_int32_t) :: marquet_table_read_strings
    end function
  end interface

contains

  !> The length of `s` in bytes as the c_size_t that string arguments take.
  pure function marquet_len(s) result(n)
    character(len=*), intent(in) :: s
    integer(c_size_t) :: n
    n = int(len(s), c_size_t)
  end function

  !> The NUL-terminated C string at `p` (from marquet_version or marquet_status_str: static
  !> strings of a few dozen bytes) as a Fortran string; "" for a null pointer.
  function marquet_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    ! Only the bytes up to the NUL are read, as strlen would.
    integer, parameter :: max_len = 65536
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    s = ''
    if (.not. c_associated(p)) return
    call c_f_pointer(p, chars, [max_len])
    n = 0
    do while (n < max_len)
      if (chars(n + 1) == c_null_char) exit
      n = n + 1
    end do
    s = repeat(' ', n)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  !> The version of the library the program runs with, "MAJOR.MINOR.PATCH".
  function marquet_library_version() result(s)
    character(len=:), allocatable :: s
    s = marquet_string(marquet_version())
  end function

  !> This thread's last error message (marquet_last_error_message) as a Fortran string.
  function marquet_error_message() result(s)
    character(len=:), allocatable :: s
    character(kind=c_char), allocatable :: buf(:)
    integer(c_size_t) :: needed, size
    integer :: i
    s = ''
    needed = 0
    allocate (buf(1))
    ! A 1-byte buffer holds only the empty message; otherwise `needed` says how long it is.
    if (marquet_last_error_message(buf, 1_c_size_t, needed) == MARQUET_STATUS_OK) return
    if (needed < 2) return
    size = needed
    deallocate (buf)
    allocate (buf(size))
    if (marquet_last_error_message(buf, size, needed) /= MARQUET_STATUS_OK) return
    s = repeat(' ', int(size) - 1)
    do i = 1, int(size) - 1
      s(i:i) = buf(i)
    end do
  end function
end module marquet

! HEP002 §15.1 through the C API from Fortran (iso_c_binding): the stations point
! column with a point, a null and an empty point, written, queried by box and read back.
! Its stdout is compared with stations.expected in CI (capi/tests/c_api.rs).
!
!   gfortran stations.f90 $(pkg-config --libs marquet) -o stations_f && ./stations_f out.h5
module marquet
  use, intrinsic :: iso_c_binding
  implicit none

  integer(c_int32_t), parameter :: MARQUET_STATUS_OK = 0
  integer(c_int32_t), parameter :: MARQUET_FORM_POINT = 3
  integer(c_int32_t), parameter :: MARQUET_DIMENSIONS_XY = 0
  integer(c_int32_t), parameter :: MARQUET_PREDICATE_INTERSECTS = 1
  integer(c_int32_t), parameter :: MARQUET_PREDICATE_WITHIN = 2

  interface
    function marquet_file_create(path, path_len, out) bind(c, name="marquet_file_create")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_file_create
    end function
    function marquet_file_open(path, path_len, out) bind(c, name="marquet_file_open")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_file_open
    end function
    subroutine marquet_file_free(file) bind(c, name="marquet_file_free")
      import :: c_ptr
      type(c_ptr), value :: file
    end subroutine
    function marquet_table_create(file, path, path_len, out) bind(c, name="marquet_table_create")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: file
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_table_create
    end function
    function marquet_table_open(file, path, path_len, out) bind(c, name="marquet_table_open")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: file
      character(kind=c_char), dimension(*), intent(in) :: path
      integer(c_size_t), value :: path_len
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_table_open
    end function
    subroutine marquet_table_free(table) bind(c, name="marquet_table_free")
      import :: c_ptr
      type(c_ptr), value :: table
    end subroutine
    function marquet_table_nrows(table, nrows) bind(c, name="marquet_table_nrows")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: table
      integer(c_int64_t), intent(out) :: nrows
      integer(c_int32_t) :: marquet_table_nrows
    end function
    function marquet_geometry_column_options_new(out) bind(c, name="marquet_geometry_column_options_new")
      import :: c_int32_t, c_ptr
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_geometry_column_options_new
    end function
    function marquet_geometry_column_options_set_form(opts, form, dims, use_f32, fixed_size) &
        bind(c, name="marquet_geometry_column_options_set_form")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: opts
      integer(c_int32_t), value :: form, dims, use_f32
      integer(c_int64_t), value :: fixed_size
      integer(c_int32_t) :: marquet_geometry_column_options_set_form
    end function
    subroutine marquet_geometry_column_options_free(opts) bind(c, name="marquet_geometry_column_options_free")
      import :: c_ptr
      type(c_ptr), value :: opts
    end subroutine
    function marquet_table_add_geometry_column(table, name, name_len, opts) &
        bind(c, name="marquet_table_add_geometry_column")
      import :: c_int32_t, c_char, c_size_t, c_ptr
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: name
      integer(c_size_t), value :: name_len
      type(c_ptr), value :: opts
      integer(c_int32_t) :: marquet_table_add_geometry_column
    end function
    function marquet_batch_new(out) bind(c, name="marquet_batch_new")
      import :: c_int32_t, c_ptr
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_batch_new
    end function
    subroutine marquet_batch_free(batch) bind(c, name="marquet_batch_free")
      import :: c_ptr
      type(c_ptr), value :: batch
    end subroutine
    function marquet_batch_set_points(batch, column, column_len, dims, x, y, z, m, valid, nrows) &
        bind(c, name="marquet_batch_set_points")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_ptr, c_double
      type(c_ptr), value :: batch
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int32_t), value :: dims
      real(c_double), dimension(*), intent(in) :: x, y
      type(c_ptr), value :: z, m
      integer(c_int8_t), dimension(*), intent(in) :: valid
      integer(c_int64_t), value :: nrows
      integer(c_int32_t) :: marquet_batch_set_points
    end function
    function marquet_table_append(table, batch, nrows) bind(c, name="marquet_table_append")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: table, batch
      integer(c_int64_t), intent(out) :: nrows
      integer(c_int32_t) :: marquet_table_append
    end function
    function marquet_table_read_points(table, column, column_len, start, end, x, y, z, m, valid) &
        bind(c, name="marquet_table_read_points")
      import :: c_int32_t, c_int64_t, c_int8_t, c_char, c_size_t, c_ptr, c_double
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      integer(c_int64_t), value :: start, end
      real(c_double), dimension(*), intent(out) :: x, y
      type(c_ptr), value :: z, m
      integer(c_int8_t), dimension(*), intent(out) :: valid
      integer(c_int32_t) :: marquet_table_read_points
    end function
    function marquet_table_query_box(table, column, column_len, xmin, ymin, xmax, ymax, predicate, use_indexes, out) &
        bind(c, name="marquet_table_query_box")
      import :: c_int32_t, c_char, c_size_t, c_ptr, c_double
      type(c_ptr), value :: table
      character(kind=c_char), dimension(*), intent(in) :: column
      integer(c_size_t), value :: column_len
      real(c_double), value :: xmin, ymin, xmax, ymax
      integer(c_int32_t), value :: predicate, use_indexes
      type(c_ptr), intent(out) :: out
      integer(c_int32_t) :: marquet_table_query_box
    end function
    function marquet_query_result_count(result, count) bind(c, name="marquet_query_result_count")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: result
      integer(c_int64_t), intent(out) :: count
      integer(c_int32_t) :: marquet_query_result_count
    end function
    function marquet_query_result_rows(result, rows, rows_len) bind(c, name="marquet_query_result_rows")
      import :: c_int32_t, c_int64_t, c_size_t, c_ptr
      type(c_ptr), value :: result
      integer(c_int64_t), dimension(*), intent(out) :: rows
      integer(c_size_t), value :: rows_len
      integer(c_int32_t) :: marquet_query_result_rows
    end function
    subroutine marquet_query_result_free(result) bind(c, name="marquet_query_result_free")
      import :: c_ptr
      type(c_ptr), value :: result
    end subroutine
    function marquet_last_error_message(buf, len, needed) bind(c, name="marquet_last_error_message")
      import :: c_int32_t, c_char, c_size_t
      character(kind=c_char), dimension(*), intent(out) :: buf
      integer(c_size_t), value :: len
      integer(c_size_t), intent(out) :: needed
      integer(c_int32_t) :: marquet_last_error_message
    end function
  end interface

contains

  ! Stop with the status and the library's message when a call failed.
  subroutine check(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    character(kind=c_char) :: buf(512)
    integer(c_size_t) :: needed
    integer :: i, rc
    if (status == MARQUET_STATUS_OK) return
    rc = marquet_last_error_message(buf, int(size(buf), c_size_t), needed)
    write (*, '(a, a, i0, a)', advance='no') what, ' failed with status ', status, ': '
    do i = 1, int(needed) - 1
      if (rc /= MARQUET_STATUS_OK) exit
      write (*, '(a)', advance='no') buf(i)
    end do
    write (*, *)
    error stop 1
  end subroutine

  ! Query column `column` of `table` with a box and print the matching rows (0-based).
  subroutine query_box(table, column, box, predicate, pname)
    type(c_ptr), intent(in) :: table
    character(len=*), intent(in) :: column, pname
    real(c_double), intent(in) :: box(4)
    integer(c_int32_t), intent(in) :: predicate
    type(c_ptr) :: result
    integer(c_int64_t) :: count
    integer(c_int64_t), allocatable :: rows(:)
    integer :: i
    call check(marquet_table_query_box(table, column, clen(column), box(1), box(2), box(3), box(4), predicate, 1, result), &
               'marquet_table_query_box')
    call check(marquet_query_result_count(result, count), 'marquet_query_result_count')
    allocate (rows(max(count, 1_c_int64_t)))
    call check(marquet_query_result_rows(result, rows, int(count, c_size_t)), 'marquet_query_result_rows')
    call marquet_query_result_free(result)
    write (*, '(a, a, a, a, i0, a)', advance='no') column, ' ', pname, ': ', count, ' rows:'
    do i = 1, int(count)
      write (*, '(a, i0)', advance='no') ' ', rows(i)
    end do
    write (*, '(a)') ''
    deallocate (rows)
  end subroutine

  function clen(s) result(n)
    character(len=*), intent(in) :: s
    integer(c_size_t) :: n
    n = int(len(s), c_size_t)
  end function
end module

program stations
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic
  use marquet
  implicit none
  character(len=256) :: path
  type(c_ptr) :: file, table, opts, batch
  real(c_double) :: x(3), y(3), rx(3), ry(3)
  integer(c_int8_t) :: valid(3), rvalid(3)
  integer(c_int64_t) :: nrows
  integer :: i

  path = 'stations_f.h5'
  if (command_argument_count() >= 1) call get_command_argument(1, path)

  ! Write: a point, a null, an empty point (NaN x and y).
  x = [-88.2434_c_double, 0.0_c_double, ieee_value(0.0_c_double, ieee_quiet_nan)]
  y = [40.1164_c_double, 0.0_c_double, ieee_value(0.0_c_double, ieee_quiet_nan)]
  valid = [1_c_int8_t, 0_c_int8_t, 1_c_int8_t]
  call check(marquet_file_create(trim(path), clen(trim(path)), file), 'marquet_file_create')
  call check(marquet_table_create(file, '/stations', clen('/stations'), table), 'marquet_table_create')
  call check(marquet_geometry_column_options_new(opts), 'marquet_geometry_column_options_new')
  call check(marquet_geometry_column_options_set_form(opts, MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XY, 0, 0_c_int64_t), &
             'marquet_geometry_column_options_set_form')
  call check(marquet_table_add_geometry_column(table, 'location', clen('location'), opts), &
             'marquet_table_add_geometry_column')
  call marquet_geometry_column_options_free(opts)
  call check(marquet_batch_new(batch), 'marquet_batch_new')
  call check(marquet_batch_set_points(batch, 'location', clen('location'), MARQUET_DIMENSIONS_XY, x, y, &
                                      c_null_ptr, c_null_ptr, valid, 3_c_int64_t), 'marquet_batch_set_points')
  call check(marquet_table_append(table, batch, nrows), 'marquet_table_append')
  call marquet_batch_free(batch)
  call marquet_table_free(table)
  call marquet_file_free(file)
  write (*, '(a, i0, a)') 'wrote ', nrows, ' rows'

  ! Read back.
  call check(marquet_file_open(trim(path), clen(trim(path)), file), 'marquet_file_open')
  call check(marquet_table_open(file, '/stations', clen('/stations'), table), 'marquet_table_open')
  call check(marquet_table_nrows(table, nrows), 'marquet_table_nrows')
  call check(marquet_table_read_points(table, 'location', clen('location'), 0_c_int64_t, nrows, rx, ry, &
                                       c_null_ptr, c_null_ptr, rvalid), 'marquet_table_read_points')
  do i = 1, int(nrows)
    if (rvalid(i) == 0) then
      write (*, '(a)') 'NULL'
    else if (ieee_is_nan(rx(i))) then
      write (*, '(a)') 'POINT EMPTY'
    else
      write (*, '(a, f0.4, a, f0.4, a)') 'POINT (', rx(i), ' ', ry(i), ')'
    end if
  end do

  ! Query by box: around the station, and elsewhere.
  call query_box(table, 'location', [-89.0_c_double, 40.0_c_double, -88.0_c_double, 41.0_c_double], &
                 MARQUET_PREDICATE_INTERSECTS, 'intersects [-89 40 -88 41]')
  call query_box(table, 'location', [-89.0_c_double, 40.0_c_double, -88.0_c_double, 41.0_c_double], &
                 MARQUET_PREDICATE_WITHIN, 'within [-89 40 -88 41]')
  call query_box(table, 'location', [0.0_c_double, 0.0_c_double, 10.0_c_double, 10.0_c_double], &
                 MARQUET_PREDICATE_INTERSECTS, 'intersects [0 0 10 10]')
  call marquet_table_free(table)
  call marquet_file_free(file)
end program

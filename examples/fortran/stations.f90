! HEP002 §15.1 through the C API from Fortran, with the interface module `marquet` of
! include/marquet.f90 (installed as PREFIX/include/marquet.f90): the stations point column
! with a point, a null and an empty point, written, queried by box and read back.
! Its stdout is compared with stations.expected in CI (capi/tests/c_api.rs).
!
!   gfortran $(pkg-config --variable=fortran_module marquet) stations.f90 \
!       $(pkg-config --libs marquet) -o stations_f && ./stations_f out.h5
module stations_util
  use, intrinsic :: iso_c_binding
  use marquet
  implicit none

contains

  ! Stop with the status and the library's message when a call failed.
  subroutine check(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status == MARQUET_STATUS_OK) return
    write (*, '(a, a, i0, a, a)') what, ' failed with status ', status, ': ', marquet_error_message()
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
    call check(marquet_table_query_box(table, column, marquet_len(column), box(1), box(2), box(3), box(4), predicate, 1, result), &
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
end module

program stations
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic
  use marquet
  use stations_util
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
  call check(marquet_file_create(trim(path), marquet_len(trim(path)), file), 'marquet_file_create')
  call check(marquet_table_create(file, '/stations', marquet_len('/stations'), table), 'marquet_table_create')
  call check(marquet_geometry_column_options_new(opts), 'marquet_geometry_column_options_new')
  call check(marquet_geometry_column_options_set_form(opts, MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XY, 0, 0_c_int64_t), &
             'marquet_geometry_column_options_set_form')
  call check(marquet_table_add_geometry_column(table, 'location', marquet_len('location'), opts), &
             'marquet_table_add_geometry_column')
  call marquet_geometry_column_options_free(opts)
  call check(marquet_batch_new(batch), 'marquet_batch_new')
  ! z and m are optional arguments (NULL in C): left out, so the rest go by keyword.
  call check(marquet_batch_set_points(batch, 'location', marquet_len('location'), MARQUET_DIMENSIONS_XY, x, y, &
                                      valid=valid, nrows=3_c_int64_t), 'marquet_batch_set_points')
  call check(marquet_table_append(table, batch, nrows), 'marquet_table_append')
  call marquet_batch_free(batch)
  call marquet_table_free(table)
  call marquet_file_free(file)
  write (*, '(a, i0, a)') 'wrote ', nrows, ' rows'

  ! Read back.
  call check(marquet_file_open(trim(path), marquet_len(trim(path)), file), 'marquet_file_open')
  call check(marquet_table_open(file, '/stations', marquet_len('/stations'), table), 'marquet_table_open')
  call check(marquet_table_nrows(table, nrows), 'marquet_table_nrows')
  call check(marquet_table_read_points(table, 'location', marquet_len('location'), 0_c_int64_t, nrows, rx, ry, &
                                       valid=rvalid), 'marquet_table_read_points')
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

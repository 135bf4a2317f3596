! Collective writes from every rank of an MPI job through the C ABI (libmarquet built with
! the `mpio` feature against a parallel HDF5; docs/PARALLEL.md), with mpi_f08: every rank
! creates the same table (collective metadata calls, same arguments everywhere), then
! appends its own points in one collective append. scripts/test-mpi.sh builds and runs it:
!
!   mpifort marquet.f90 mpi_points.f90 -L<dir of libmarquet.so> -lmarquet -o mpi_points
!   mpirun -np 4 ./mpi_points points.h5 1000
!
! Rank r writes points x = r + i/n, y = -r (i = 0 .. n-1); rank 0 prints the row count.
program mpi_points
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use marquet
  implicit none
  character(len=256) :: path, arg
  type(c_ptr) :: file, table, opts, batch
  real(c_double), allocatable :: x(:), y(:)
  integer(c_int64_t) :: n, first_row, nrows
  integer :: rank, nranks, i

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  path = 'mpi_points.h5'
  n = 1000
  if (command_argument_count() >= 1) call get_command_argument(1, path)
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) n
  end if

  ! Collective: the same calls with the same arguments on every rank.
  call check(marquet_file_create_mpi(trim(path), marquet_len(trim(path)), MPI_COMM_WORLD%MPI_VAL, file), &
             'marquet_file_create_mpi')
  call check(marquet_table_create(file, '/points', marquet_len('/points'), table), 'marquet_table_create')
  call check(marquet_geometry_column_options_new(opts), 'marquet_geometry_column_options_new')
  call check(marquet_geometry_column_options_set_form(opts, MARQUET_FORM_POINT, MARQUET_DIMENSIONS_XY, 0, 0_c_int64_t), &
             'marquet_geometry_column_options_set_form')
  call check(marquet_table_add_geometry_column(table, 'location', marquet_len('location'), opts), &
             'marquet_table_add_geometry_column')
  call marquet_geometry_column_options_free(opts)

  ! Each rank its own rows, one collective append.
  allocate (x(n), y(n))
  do i = 1, int(n)
    x(i) = real(rank, c_double) + real(i - 1, c_double) / real(n, c_double)
    y(i) = -real(rank, c_double)
  end do
  call check(marquet_batch_new(batch), 'marquet_batch_new')
  call check(marquet_batch_set_points(batch, 'location', marquet_len('location'), MARQUET_DIMENSIONS_XY, x, y, nrows=n), &
             'marquet_batch_set_points')
  call check(marquet_table_append_collective(table, batch, MPI_COMM_WORLD%MPI_VAL, first_row, nrows), &
             'marquet_table_append_collective')
  if (first_row /= int(rank, c_int64_t) * n) error stop 'first_row is not rank * n'
  call marquet_batch_free(batch)
  call marquet_table_free(table)
  call marquet_file_free(file)
  if (rank == 0) write (*, '(a, i0, a, i0, a)') 'wrote ', nrows, ' rows from ', nranks, ' ranks'
  call MPI_Finalize()

contains

  subroutine check(status, what)
    integer(c_int32_t), intent(in) :: status
    character(len=*), intent(in) :: what
    if (status == MARQUET_STATUS_OK) return
    write (*, '(a, a, i0, a, a)') what, ' failed with status ', status, ': ', marquet_error_message()
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine
end program

//! MPI-parallel files and the collective append (feature `mpio`; docs/PARALLEL.md).
//!
//! Communicators cross the ABI as Fortran handles (`MPI_Fint`, a C `int`: what
//! `MPI_Comm_c2f(comm)` gives in C and `comm % MPI_VAL` in Fortran's `mpi_f08`), so that
//! marquet.h needs no mpi.h and one libmarquet serves C and Fortran alike.

use std::ffi::c_char;

use mq::parallel;

use crate::ffi;
use crate::file::{file_handle, marquet_file};
use crate::panic::guard;
use crate::status::{FfiError, FfiResult};
use crate::{batch::marquet_batch, table::marquet_table};

fn comm_arg(comm: i32) -> FfiResult<parallel::MPI_Comm> {
    let c = parallel::comm_from_fortran(comm);
    if !parallel::comm_is_usable(c) {
        return Err(FfiError::invalid(format!("communicator handle {comm} is not a usable MPI communicator (is MPI initialized?)")));
    }
    Ok(c)
}

/// Create (truncate) the file at `path` on every rank of the communicator `comm` (a
/// Fortran handle: `MPI_Comm_c2f(comm)`), opened read-write with HDF5's MPI-IO driver.
/// Collective: every rank calls it with the same path. Every later call that changes the
/// file (creating tables and columns, building indexes) must then be made by every rank
/// with the same arguments; appends of different rows per rank go through
/// `marquet_table_append_collective`. Built only with the `mpio` feature.
#[no_mangle]
pub unsafe extern "C" fn marquet_file_create_mpi(path: *const c_char, path_len: usize, comm: i32, out: *mut *mut marquet_file) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(out, "out")?;
        let path = unsafe { ffi::name_arg(path, path_len, "path")? };
        let f = parallel::create(path, comm_arg(comm)?)?;
        unsafe { ffi::write(out, file_handle(f)) };
        Ok(())
    })
}

/// Open the existing file at `path` on every rank of `comm` (collective), read-only
/// (`rw` 0) or read-write (`rw` 1).
#[no_mangle]
pub unsafe extern "C" fn marquet_file_open_mpi(path: *const c_char, path_len: usize, comm: i32, rw: i32, out: *mut *mut marquet_file) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(out, "out")?;
        let path = unsafe { ffi::name_arg(path, path_len, "path")? };
        let rw = match rw {
            0 => false,
            1 => true,
            _ => return Err(FfiError::invalid(format!("rw {rw} is neither 0 nor 1"))),
        };
        let f = parallel::open(path, comm_arg(comm)?, rw)?;
        unsafe { ffi::write(out, file_handle(f)) };
        Ok(())
    })
}

/// Collective append: every rank of `comm` calls it with its own batch (possibly empty);
/// the rows land in rank order after the table's rows. Every rank's values are checked
/// before the file changes (a refusal on one rank fails the call on every rank), NROWS
/// is committed once after every rank's data (HEP001 §12.3). On success `*first_row`
/// (if not NULL) receives the row number of this rank's first row and `*nrows` (if not
/// NULL) the new row count.
#[no_mangle]
pub unsafe extern "C" fn marquet_table_append_collective(
    table: *const marquet_table,
    batch: *const marquet_batch,
    comm: i32,
    first_row: *mut i64,
    nrows: *mut i64,
) -> i32 {
    guard(|| {
        let t = unsafe { ffi::handle(table)? };
        let b = unsafe { ffi::handle(batch)? };
        let slab = parallel::append_collective(&t.lock(), &b.batch, comm_arg(comm)?)?;
        let first = ffi::to_i64(slab.n_old + slab.offset, "first_row")?;
        let n = ffi::to_i64(slab.n_old + slab.k_all, "nrows")?;
        unsafe {
            ffi::write_opt(first_row, first);
            ffi::write_opt(nrows, n);
        }
        Ok(())
    })
}

//! MPI and parallel HDF5 (MPI-IO driver) calls of the `mpio` feature (docs/PARALLEL.md).
//!
//! Like the rest of [`crate::h5`], this is the one place with raw calls: MPI through
//! `mpi-sys` (the bindings hdf5-metno's own `mpio` feature uses) and the parallel HDF5
//! property lists through `hdf5-sys`.
//!
//! Two kinds of parallel writes exist:
//! * **replicated**: every rank runs the same serial code with the same arguments (creating
//!   tables and columns, writing indexes and attributes). HDF5 requires exactly that for
//!   every metadata change of a file opened with the MPI-IO driver. Data written this way
//!   is identical on every rank, so rank 0 writes it and the others join the collective
//!   `H5Dwrite` with an empty selection (`replicated_xfer`, hooked into the writes of
//!   [`super`]).
//! * **distributed**: each rank writes its own slab of a column ([`write_slab`]), all ranks
//!   in one collective `H5Dwrite` (parallel HDF5 refuses independent writes to filtered
//!   datasets, and collective I/O lets MPI-IO aggregate the ranks' pieces).
//!
//! Which files are parallel is recorded when they are opened through [`create`] / [`open`]
//! (keyed by HDF5's file number), so the serial code paths need no flag.
#![allow(unsafe_code)]

use std::collections::HashMap;
use std::os::raw::{c_int, c_ulong, c_void};
use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use hdf5::globals as g;
use hdf5_sys::h5f;
use hdf5_sys::h5i::{self, hid_t};
use hdf5_sys::h5p::{self, H5FD_mpio_xfer_t};
use hdf5_sys::{h5d, h5s};
pub use mpi_sys::MPI_Comm;

use super::{check, cstr, locked, wrote, Dtype, Hid};
use crate::error::{MarquetError, Result};

/// Calls made by this process: MPI collectives (reductions, scans, gathers, barriers) and
/// collective `H5Dwrite`s (replicated and distributed), for the benchmark's model of a
/// collective append (docs/PARALLEL.md).
static MPI_CALLS: AtomicU64 = AtomicU64::new(0);
static COLLECTIVE_WRITES: AtomicU64 = AtomicU64::new(0);

/// `(MPI collectives, collective H5Dwrite calls)` made by this process so far.
pub fn call_counts() -> (u64, u64) {
    (MPI_CALLS.load(Ordering::Relaxed), COLLECTIVE_WRITES.load(Ordering::Relaxed))
}

fn counted() {
    MPI_CALLS.fetch_add(1, Ordering::Relaxed);
}

/// Rank and size of the communicator of each open parallel file, by HDF5 file number.
static PARALLEL: Mutex<Option<HashMap<u64, (i32, i32)>>> = Mutex::new(None);

fn mpi_check(code: c_int, what: &str) -> Result<()> {
    if code == mpi_sys::MPI_SUCCESS as c_int {
        Ok(())
    } else {
        Err(MarquetError::Hdf5 { path: "<MPI>".into(), message: format!("{what} failed with MPI error {code}"), stack: Vec::new() })
    }
}

/// `MPI_Init` unless MPI is already initialized (for programs that do not call it
/// themselves: the examples and tests). Returns whether this call initialized MPI.
pub fn init() -> Result<bool> {
    let mut flag: c_int = 0;
    mpi_check(unsafe { mpi_sys::MPI_Initialized(&mut flag) }, "MPI_Initialized")?;
    if flag != 0 {
        return Ok(false);
    }
    mpi_check(unsafe { mpi_sys::MPI_Init(ptr::null_mut(), ptr::null_mut()) }, "MPI_Init")?;
    Ok(true)
}

/// `MPI_Finalize` (once every parallel file is closed).
pub fn finalize() -> Result<()> {
    mpi_check(unsafe { mpi_sys::MPI_Finalize() }, "MPI_Finalize")
}

/// `MPI_COMM_WORLD`.
pub fn comm_world() -> MPI_Comm {
    unsafe { mpi_sys::RSMPI_COMM_WORLD }
}

/// The C communicator of a Fortran handle (`MPI_Comm_f2c`; what `mpi_f08`'s
/// `type(MPI_Comm) % MPI_VAL` and C's `MPI_Comm_c2f` give).
pub fn comm_from_fortran(handle: i32) -> MPI_Comm {
    unsafe { mpi_sys::RSMPI_Comm_f2c(handle as mpi_sys::RSMPI_Fint) }
}

/// True when `comm` is a valid communicator other than `MPI_COMM_NULL` (MPI is initialized
/// and `MPI_Comm_size` accepts it).
pub fn comm_is_usable(comm: MPI_Comm) -> bool {
    let mut flag: c_int = 0;
    if unsafe { mpi_sys::MPI_Initialized(&mut flag) } != 0 || flag == 0 {
        return false;
    }
    if comm == unsafe { mpi_sys::RSMPI_COMM_NULL } {
        return false;
    }
    let mut size: c_int = 0;
    unsafe { mpi_sys::MPI_Comm_size(comm, &mut size) == 0 && size > 0 }
}

/// This process's rank in `comm`.
pub fn rank(comm: MPI_Comm) -> Result<i32> {
    let mut r: c_int = 0;
    mpi_check(unsafe { mpi_sys::MPI_Comm_rank(comm, &mut r) }, "MPI_Comm_rank")?;
    Ok(r)
}

/// The number of ranks of `comm`.
pub fn size(comm: MPI_Comm) -> Result<i32> {
    let mut s: c_int = 0;
    mpi_check(unsafe { mpi_sys::MPI_Comm_size(comm, &mut s) }, "MPI_Comm_size")?;
    Ok(s)
}

/// `MPI_Barrier`.
pub fn barrier(comm: MPI_Comm) -> Result<()> {
    counted();
    mpi_check(unsafe { mpi_sys::MPI_Barrier(comm) }, "MPI_Barrier")
}

/// The sum of `v` over the ranks before this one (`MPI_Exscan`; 0 on rank 0).
pub fn exscan_sum_u64(comm: MPI_Comm, v: u64) -> Result<u64> {
    counted();
    let mut out: u64 = 0;
    mpi_check(
        unsafe {
            mpi_sys::MPI_Exscan(
                &v as *const u64 as *const c_void,
                &mut out as *mut u64 as *mut c_void,
                1,
                mpi_sys::RSMPI_UINT64_T,
                mpi_sys::RSMPI_SUM,
                comm,
            )
        },
        "MPI_Exscan",
    )?;
    // MPI leaves rank 0's receive buffer undefined.
    Ok(if rank(comm)? == 0 { 0 } else { out })
}

/// How [`allreduce_u64`] combines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduce {
    /// Sum.
    Sum,
    /// Bitwise or.
    BitOr,
    /// Bitwise and.
    BitAnd,
    /// Maximum.
    Max,
}

/// `MPI_Allreduce` of `v` element by element.
pub fn allreduce_u64(comm: MPI_Comm, v: &mut [u64], op: Reduce) -> Result<()> {
    counted();
    let op = unsafe {
        match op {
            Reduce::Sum => mpi_sys::RSMPI_SUM,
            Reduce::BitOr => mpi_sys::RSMPI_BOR,
            Reduce::BitAnd => mpi_sys::RSMPI_BAND,
            Reduce::Max => mpi_sys::RSMPI_MAX,
        }
    };
    let send = v.to_vec();
    mpi_check(
        unsafe {
            mpi_sys::MPI_Allreduce(
                send.as_ptr() as *const c_void,
                v.as_mut_ptr() as *mut c_void,
                v.len() as c_int,
                mpi_sys::RSMPI_UINT64_T,
                op,
                comm,
            )
        },
        "MPI_Allreduce",
    )
}

/// `MPI_Allreduce` of `v` element by element with `MPI_MIN` (`max = false`) or `MPI_MAX`.
pub fn allreduce_f64(comm: MPI_Comm, v: &mut [f64], max: bool) -> Result<()> {
    counted();
    let op = unsafe { if max { mpi_sys::RSMPI_MAX } else { mpi_sys::RSMPI_MIN } };
    let send = v.to_vec();
    mpi_check(
        unsafe {
            mpi_sys::MPI_Allreduce(
                send.as_ptr() as *const c_void,
                v.as_mut_ptr() as *mut c_void,
                v.len() as c_int,
                mpi_sys::RSMPI_DOUBLE,
                op,
                comm,
            )
        },
        "MPI_Allreduce",
    )
}

/// Each rank's `[start, end)` in the bytes of [`allgatherv`].
pub type Spans = Vec<(usize, usize)>;

/// Every rank's bytes, concatenated in rank order on every rank (`MPI_Allgather` of the
/// lengths, then `MPI_Allgatherv`). Returns the bytes and each rank's span.
pub fn allgatherv(comm: MPI_Comm, mine: &[u8]) -> Result<(Vec<u8>, Spans)> {
    MPI_CALLS.fetch_add(2, Ordering::Relaxed);
    let n = size(comm)? as usize;
    let my_len = mine.len() as u64;
    let mut lens = vec![0u64; n];
    mpi_check(
        unsafe {
            mpi_sys::MPI_Allgather(
                &my_len as *const u64 as *const c_void,
                1,
                mpi_sys::RSMPI_UINT64_T,
                lens.as_mut_ptr() as *mut c_void,
                1,
                mpi_sys::RSMPI_UINT64_T,
                comm,
            )
        },
        "MPI_Allgather",
    )?;
    let total: u64 = lens.iter().sum();
    // MPI counts and displacements are C ints: beyond 2 GiB gather in a loop of pieces.
    if total > i32::MAX as u64 {
        return Err(MarquetError::Unsupported(format!("allgather of {total} bytes (more than 2 GiB)")));
    }
    let counts: Vec<c_int> = lens.iter().map(|&l| l as c_int).collect();
    let mut displs = vec![0 as c_int; n];
    let mut spans = Vec::with_capacity(n);
    let mut at = 0usize;
    for (i, &l) in lens.iter().enumerate() {
        displs[i] = at as c_int;
        spans.push((at, at + l as usize));
        at += l as usize;
    }
    let mut out = vec![0u8; total as usize];
    mpi_check(
        unsafe {
            mpi_sys::MPI_Allgatherv(
                mine.as_ptr() as *const c_void,
                mine.len() as c_int,
                mpi_sys::RSMPI_UINT8_T,
                out.as_mut_ptr() as *mut c_void,
                counts.as_ptr(),
                displs.as_ptr(),
                mpi_sys::RSMPI_UINT8_T,
                comm,
            )
        },
        "MPI_Allgatherv",
    )?;
    Ok((out, spans))
}

fn fileno_of(id: hid_t) -> Option<u64> {
    locked(|| unsafe {
        let f = h5i::H5Iget_file_id(id);
        if f < 0 {
            return None;
        }
        let mut no: c_ulong = 0;
        let r = h5f::H5Fget_fileno(f, &mut no);
        h5i::H5Idec_ref(f);
        (r >= 0).then_some(no as u64)
    })
}

/// `(rank, size)` when `id` belongs to a file opened with [`create`] or [`open`].
pub fn parallel_rank(id: hid_t) -> Option<(i32, i32)> {
    {
        let g = PARALLEL.lock().unwrap_or_else(|e| e.into_inner());
        if g.as_ref().is_none_or(|m| m.is_empty()) {
            return None;
        }
    }
    let no = fileno_of(id)?;
    let g = PARALLEL.lock().unwrap_or_else(|e| e.into_inner());
    g.as_ref().and_then(|m| m.get(&no).copied())
}

fn register(file: hid_t, comm: MPI_Comm) -> Result<()> {
    let no = fileno_of(file).ok_or_else(|| MarquetError::Hdf5 { path: "<file>".into(), message: "H5Fget_fileno failed".into(), stack: Vec::new() })?;
    let rs = (rank(comm)?, size(comm)?);
    PARALLEL.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_with(HashMap::new).insert(no, rs);
    Ok(())
}

fn fapl(comm: MPI_Comm, path: &str) -> Result<Hid> {
    locked(|| unsafe {
        let fapl = Hid::new(h5p::H5Pcreate(*g::H5P_FILE_ACCESS), path, "H5Pcreate")?;
        check(h5p::H5Pset_fapl_mpio(fapl.0, comm, mpi_sys::RSMPI_INFO_NULL), path, "H5Pset_fapl_mpio")?;
        // Metadata is written collectively (rank 0 and a few aggregators instead of every
        // rank); metadata *reads* stay independent, so that ranks may read different
        // chunks (the chunk index) in their shares of a table.
        check(h5p::H5Pset_coll_metadata_write(fapl.0, 1), path, "H5Pset_coll_metadata_write")?;
        Ok(fapl)
    })
}

/// Create (truncate) `path` with the MPI-IO driver on `comm`: collective, every rank
/// passes the same path. Like [`super::file_create`], freed file space is never reused
/// (the HEP001 §12.3 crash guarantee).
pub fn create(path: &str, comm: MPI_Comm) -> Result<hdf5::File> {
    super::register_filters()?;
    let c = cstr(path)?;
    let fapl = fapl(comm, path)?;
    let id = locked(|| unsafe {
        let fcpl = Hid::new(h5p::H5Pcreate(*g::H5P_FILE_CREATE), path, "H5Pcreate")?;
        check(
            h5p::H5Pset_file_space_strategy(fcpl.0, h5f::H5F_fspace_strategy_t::H5F_FSPACE_STRATEGY_NONE, 0, 1),
            path,
            "H5Pset_file_space_strategy",
        )?;
        check(h5f::H5Fcreate(c.as_ptr(), h5f::H5F_ACC_TRUNC, fcpl.0, fapl.0), path, "H5Fcreate")
    })?;
    // SAFETY: `id` is a fresh file id that the returned File owns.
    let f = unsafe { hdf5::from_id(id) }.map_err(|e| MarquetError::hdf5(path, e))?;
    register(id, comm)?;
    Ok(f)
}

/// Open `path` with the MPI-IO driver on `comm` (collective), read-only or read-write.
pub fn open(path: &str, comm: MPI_Comm, rw: bool) -> Result<hdf5::File> {
    super::register_filters()?;
    let c = cstr(path)?;
    let fapl = fapl(comm, path)?;
    let flags = if rw { h5f::H5F_ACC_RDWR } else { h5f::H5F_ACC_RDONLY };
    let id = locked(|| unsafe { check(h5f::H5Fopen(c.as_ptr(), flags, fapl.0), path, "H5Fopen") })?;
    // SAFETY: as in `create`.
    let f = unsafe { hdf5::from_id(id) }.map_err(|e| MarquetError::hdf5(path, e))?;
    register(id, comm)?;
    Ok(f)
}

fn collective_dxpl(path: &str) -> Result<Hid> {
    COLLECTIVE_WRITES.fetch_add(1, Ordering::Relaxed);
    locked(|| unsafe {
        let x = Hid::new(h5p::H5Pcreate(*g::H5P_DATASET_XFER), path, "H5Pcreate")?;
        check(h5p::H5Pset_dxpl_mpio(x.0, H5FD_mpio_xfer_t::H5FD_MPIO_COLLECTIVE), path, "H5Pset_dxpl_mpio")?;
        Ok(x)
    })
}

/// For a write of [`super`] to dataset `ds` with file / memory selections `fs`, `ms`:
/// `None` for a serial file (write with `H5P_DEFAULT`); for a parallel file, a collective
/// transfer list, after emptying both selections on every rank but 0 (the data of a
/// replicated write is the same on every rank).
pub(crate) fn replicated_xfer(ds: hid_t, fs: &Hid, ms: &Hid, path: &str) -> Result<Option<Hid>> {
    let Some((rank, _)) = parallel_rank(ds) else { return Ok(None) };
    if rank != 0 {
        locked(|| unsafe {
            check(h5s::H5Sselect_none(fs.0), path, "H5Sselect_none")?;
            check(h5s::H5Sselect_none(ms.0), path, "H5Sselect_none")
        })?;
    }
    collective_dxpl(path).map(Some)
}

/// Collective write of this rank's `data` (layout `mem`) at element `start` of the rank-1
/// dataset `ds` of a parallel file; every rank calls it, with its own start and data
/// (possibly none).
pub fn write_slab(ds: hid_t, start: u64, mem: &Dtype, data: &[u8], path: &str) -> Result<()> {
    let es = mem.size();
    if es == 0 || !data.len().is_multiple_of(es) {
        return Err(MarquetError::InvalidArgument(format!("{path}: data is not a whole number of elements")));
    }
    let count = (data.len() / es) as u64;
    let (fs, ms) = super::select_1d(ds, start, count, path)?;
    if count == 0 {
        locked(|| unsafe { check(h5s::H5Sselect_none(ms.0), path, "H5Sselect_none") })?;
    }
    let mt = mem.to_hid()?;
    let x = collective_dxpl(path)?;
    // A rank with nothing to write still joins, with an empty selection and no buffer.
    let buf = if data.is_empty() { [0u8; 8].as_ptr() } else { data.as_ptr() };
    let r = locked(|| unsafe {
        check(h5d::H5Dwrite(ds, mt.0, ms.0, fs.0, x.0, buf as *const c_void), path, "H5Dwrite (collective)")
    });
    wrote(r).map(|_| ())
}

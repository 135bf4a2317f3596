//! `marquet_report`: the result of the conformance validator (HEP001 §13, HEP002 §12),
//! from `marquet_validate_file`.

use std::ffi::c_char;

use mq::validate::{self, Finding, Options, Severity, Status};

use crate::ffi::{self, Handle, Kind};
use crate::panic::{guard, guard_void};
use crate::status::{marquet_status, FfiError, FfiResult};

/// How bad a validation finding is.
#[allow(non_camel_case_types)]
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum marquet_severity {
    /// The table is not conformant.
    MARQUET_SEVERITY_ERROR = 1,
    /// Accepted by a lenient reader, or not checked; non-conformant only when strict.
    MARQUET_SEVERITY_WARNING = 2,
}

/// A validation report (opaque): a verdict and a list of findings, each with a severity,
/// the requirement ("HEP002 §12 req 14"), the HDF5 object path, an optional row and a
/// message. From `marquet_validate_file`; released by `marquet_report_free`.
pub struct marquet_report {
    conformant: bool,
    findings: Vec<Finding>,
    json: String,
}

impl Handle for marquet_report {
    const KIND: Kind = Kind::Report;
    const NAME: &'static str = "report";
}

/// Validate the HDF5 file at `path` against HEP001 §13 and HEP002 §12: every table
/// group, or only the one at `table` (`table` NULL with `table_len` 0 = all). With
/// `strict` 1, warnings also make the file non-conformant. Problems inside the file are
/// findings in the report (the call still succeeds); only a file that cannot be opened
/// as HDF5 is an error (`MARQUET_STATUS_IO` / `MARQUET_STATUS_HDF5`). The file is
/// opened read-only by the validator itself.
#[no_mangle]
pub unsafe extern "C" fn marquet_validate_file(
    path: *const c_char,
    path_len: usize,
    table: *const c_char,
    table_len: usize,
    strict: i32,
    out: *mut *mut marquet_report,
) -> i32 {
    guard(|| {
        let out = ffi::out_ptr(out, "out")?;
        let path = unsafe { ffi::name_arg(path, path_len, "path")? };
        let table = unsafe { ffi::opt_name_arg(table, table_len, "table")? }.map(str::to_string);
        let opts = Options { table, strict: ffi::flag_arg(strict, "strict")?, ..Options::default() };
        let r = validate::validate_file(path, &opts)?;
        let findings: Vec<Finding> = r.findings().cloned().collect();
        let json = r.to_json().to_string();
        let h = ffi::into_handle(marquet_report { conformant: r.status == Status::Conformant, findings, json });
        unsafe { ffi::write(out, h) };
        Ok(())
    })
}

/// Free a report (NULL is a no-op).
#[no_mangle]
pub unsafe extern "C" fn marquet_report_free(report: *mut marquet_report) {
    guard_void(|| unsafe { ffi::free_handle(report) })
}

/// 1 when the file is conformant, else 0.
#[no_mangle]
pub unsafe extern "C" fn marquet_report_conformant(report: *const marquet_report, conformant: *mut i32) -> i32 {
    guard(|| {
        let o = ffi::out_ptr(conformant, "conformant")?;
        let r = unsafe { ffi::handle(report)? };
        unsafe { ffi::write(o, r.conformant as i32) };
        Ok(())
    })
}

/// Number of findings (errors and warnings) of every table.
#[no_mangle]
pub unsafe extern "C" fn marquet_report_finding_count(report: *const marquet_report, count: *mut i64) -> i32 {
    guard(|| {
        let o = ffi::out_ptr(count, "count")?;
        let r = unsafe { ffi::handle(report)? };
        unsafe { ffi::write(o, r.findings.len() as i64) };
        Ok(())
    })
}

/// Finding `index` of a live report (borrowed for the duration of the call).
fn finding<'a>(report: *const marquet_report, index: i64) -> FfiResult<&'a Finding> {
    let r: &'a marquet_report = unsafe { ffi::handle(report)? };
    let i = ffi::count_arg(index, "index")?;
    r.findings.get(i as usize).ok_or_else(|| {
        FfiError::new(marquet_status::MARQUET_STATUS_OUT_OF_RANGE, format!("finding index {index} of {}", r.findings.len()))
    })
}

/// Finding `index`'s severity (a `MARQUET_SEVERITY_*` value) and row (`-1` when the
/// finding is not about one row).
#[no_mangle]
pub unsafe extern "C" fn marquet_report_finding_info(
    report: *const marquet_report,
    index: i64,
    severity: *mut i32,
    row: *mut i64,
) -> i32 {
    guard(|| {
        let s = ffi::out_ptr(severity, "severity")?;
        let w = ffi::out_ptr(row, "row")?;
        let f = finding(report, index)?;
        let sev = match f.severity {
            Severity::Error => marquet_severity::MARQUET_SEVERITY_ERROR,
            Severity::Warning => marquet_severity::MARQUET_SEVERITY_WARNING,
        };
        let row = match f.row {
            Some(r) => ffi::to_i64(r, "row")?,
            None => -1,
        };
        unsafe {
            ffi::write(s, sev as i32);
            ffi::write(w, row);
        }
        Ok(())
    })
}

/// Finding `index`'s requirement, e.g. "HEP002 §12 req 14" (NUL-terminated UTF-8; `buf`
/// / `needed` as for `marquet_file_table_name`).
#[no_mangle]
pub unsafe extern "C" fn marquet_report_finding_rule(
    report: *const marquet_report,
    index: i64,
    buf: *mut c_char,
    buf_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| unsafe { ffi::copy_str_out(finding(report, index)?.rule, buf, buf_len, needed) })
}

/// Finding `index`'s HDF5 object path.
#[no_mangle]
pub unsafe extern "C" fn marquet_report_finding_path(
    report: *const marquet_report,
    index: i64,
    buf: *mut c_char,
    buf_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| unsafe { ffi::copy_str_out(&finding(report, index)?.path, buf, buf_len, needed) })
}

/// Finding `index`'s message (lowercase: what was found and what was expected).
#[no_mangle]
pub unsafe extern "C" fn marquet_report_finding_message(
    report: *const marquet_report,
    index: i64,
    buf: *mut c_char,
    buf_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| unsafe { ffi::copy_str_out(&finding(report, index)?.message, buf, buf_len, needed) })
}

/// The whole report as JSON (the CLI's `--json` form), NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn marquet_report_json(
    report: *const marquet_report,
    buf: *mut c_char,
    buf_len: usize,
    needed: *mut usize,
) -> i32 {
    guard(|| {
        let r = unsafe { ffi::handle(report)? };
        unsafe { ffi::copy_str_out(&r.json, buf, buf_len, needed) }
    })
}

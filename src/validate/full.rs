//! `marquet validate --full` ([`super::Options::full`], issue #19): data integrity. The
//! structural and row checks read what the rules need — attribute columns' chunks are
//! never decompressed, so a chunk whose bytes were damaged (a bit flip, a write cut short)
//! passes them. This pass reads every element of every rank-1 dataset below each table
//! group, in slices of at most [`SLICE_BYTES`], so every chunk goes through its filter
//! pipeline (decompression, and the Fletcher32 checksum where the dataset has one); a
//! dataset that cannot be read is an error of sub-check [`checks::UNREADABLE`] naming it.

use super::{checks, Finding, Severity};
use crate::h5::{self, Dtype};

/// Bytes read at a time.
pub const SLICE_BYTES: u64 = 16 << 20;

/// Read every dataset below the table group `table`; push a finding per unreadable one.
pub(crate) fn read_everything(file: &hdf5::File, table: &str, findings: &mut Vec<Finding>) {
    let Ok(g) = file.group(table) else { return };
    walk(&g, table, findings, 0);
}

fn walk(g: &hdf5::Group, path: &str, findings: &mut Vec<Finding>, depth: usize) {
    if depth > 64 {
        return;
    }
    let Ok(names) = g.member_names() else { return };
    for n in names {
        let p = if path == "/" { format!("/{n}") } else { format!("{path}/{n}") };
        match g.loc_type_by_name(&n) {
            Ok(hdf5::LocationType::Group) => {
                if let Ok(child) = g.group(&n) {
                    walk(&child, &p, findings, depth + 1);
                }
            }
            Ok(hdf5::LocationType::Dataset) => {
                if let Err(message) = read_dataset(g.id(), &n, &p) {
                    findings.push(Finding {
                        severity: Severity::Error,
                        rule: checks::UNREADABLE.rule,
                        path: p,
                        row: None,
                        message: format!("data integrity (--full): {message}"),
                        check: Some(checks::UNREADABLE.id),
                    });
                }
            }
            _ => {}
        }
    }
}

fn read_dataset(loc: hdf5_sys::h5i::hid_t, name: &str, path: &str) -> Result<(), String> {
    let ds = h5::dataset_open(loc, name).map_err(|e| e.to_string())?;
    let info = h5::dataset_info(ds.id(), path).map_err(|e| e.to_string())?;
    // Datatypes read through HDF5's conversion only (references, variable-length
    // strings) are opened above; fixed-size data is read element by element.
    if matches!(info.dtype, Dtype::VarString { .. } | Dtype::StdRef | Dtype::ObjRef | Dtype::Other { .. }) || info.dims.len() != 1 {
        return Ok(());
    }
    let mem = info.dtype.to_le();
    let len = info.dims[0];
    let step = (SLICE_BYTES / (mem.size().max(1) as u64)).max(1);
    let mut s = 0;
    while s < len {
        let k = step.min(len - s);
        h5::dataset_read(ds.id(), s, k, &mem, path).map_err(|e| format!("elements {s}..{}: {e}", s + k))?;
        s += k;
    }
    Ok(())
}

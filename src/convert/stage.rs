//! A conversion into HDF5 is published at once (issue #19, docs/FAULTS.md F2).
//!
//! The whole import — every batch, the layout's sort, the indexes, a `--to-crs`
//! reprojection — runs into a *staging file* beside the output. Only then does the output
//! change, in one step:
//!
//! * a new output file: the staging file is renamed to it (`rename(2)`, atomic within a
//!   directory) — a reader never sees a half-written file;
//! * an existing output file: the staged table is copied into it with `H5Ocopy` below an
//!   anonymous group, flushed, then linked at its path and flushed again
//!   ([`File::copy_tables_from`]) — until that link the output holds its old tables only
//!   (a kill leaves unlinked space, no table).
//!
//! A failure at any point leaves the output exactly as it was and removes the staging file;
//! a *killed* conversion's staging file carries its process id and is removed by the next
//! conversion or append that finds the process gone ([`reclaim`]).

use std::path::{Path, PathBuf};

use super::{ConvertOptions, ConvertReport, Format};
use crate::error::{MarquetError, Result};
use crate::h5col::{normalize_table_path, File};

/// The staging file's name: `.<output name>.marquet-<pid>-<nanos>.partial.h5`, hidden and
/// in the output's directory (so the final rename never crosses a file system).
fn staging_path(output: &Path) -> PathBuf {
    let dir = output.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    dir.join(format!(
        ".{name}.marquet-{}-{}.partial.h5",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
    ))
}

/// Remove, in `dir`, the staging files named `<prefix><pid>-…<suffix>` whose process is
/// gone (killed during an operation). Only on systems with a `/proc` to ask; elsewhere
/// they stay until removed by hand.
pub(crate) fn reclaim(dir: &Path, prefix: &str, suffix: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.find(prefix).map(|i| &name[i + prefix.len()..]) else { continue };
        if !name.ends_with(suffix) || !(name.starts_with(prefix) || name.starts_with('.')) {
            continue;
        }
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else { continue };
        if !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Refuse a netCDF-3 (classic, 64-bit offset or CDF-5) file by its magic number with an
/// error that says what to do; it is no HDF5 file (issue #35).
fn refuse_netcdf3(output: &Path) -> Result<()> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let n = std::fs::File::open(output).and_then(|mut f| f.read(&mut magic)).unwrap_or(0);
    if n == 4 && &magic[..3] == b"CDF" && matches!(magic[3], 1 | 2 | 5) {
        return Err(MarquetError::InvalidArgument(format!(
            "{}: a netCDF-3 file (not HDF5) cannot hold Marquet tables; convert it to netCDF-4 first (nccopy -k nc4)",
            output.display()
        )));
    }
    Ok(())
}

/// Run `run` (the conversion proper) into a staging file, then publish its tables to
/// `output` as described in the module documentation.
pub(super) fn into_hdf5(
    input: &Path,
    output: &Path,
    opts: &ConvertOptions,
    run: impl FnOnce(&Path, &Path, &ConvertOptions) -> Result<ConvertReport>,
) -> Result<ConvertReport> {
    let tmp = staging_path(output);
    if let Some(dir) = tmp.parent() {
        reclaim(dir, ".marquet-", ".partial.h5");
    }
    let existed = std::fs::symlink_metadata(output).is_ok();
    if existed && opts.cloud {
        return Err(MarquetError::InvalidArgument(format!(
            "{}: --cloud lays out a whole new file (metadata first); the output exists — write to a new file",
            output.display()
        )));
    }
    let mut text_as_bytes = opts.text_as_bytes;
    if existed {
        crate::error::check_regular_file(output)?;
        refuse_netcdf3(output)?;
        // Refuse before any work what the publication would refuse after it.
        let f = File::open(output)?;
        // A netCDF-4 file: string columns in the form netCDF-C reads (local ruling L17).
        text_as_bytes |= super::hub::plan::text_as_bytes(&f)?;
        if let Some(t) = &opts.table {
            let t = normalize_table_path(t);
            if f.tables()?.contains(&t) {
                return Err(MarquetError::InvalidArgument(format!("{}: table {t} already exists", output.display())));
            }
            f.copy_tables_check(std::slice::from_ref(&t))?;
        }
    }
    let staged = ConvertOptions { output_format: Some(Format::Marquet), text_as_bytes, ..opts.clone() };
    let res = (|| {
        let mut report = run(input, &tmp, &staged)?;
        if opts.cloud {
            // The cloud layout (issue #34): the staged tables copied once more, metadata
            // first, into a second staging file that becomes the output.
            let laid = staging_path(output);
            let r = (|| {
                let src = File::open(&tmp)?;
                let dst = File::create(&laid)?;
                crate::marquet::cloud::write_cloud_copy(&src, &dst, &src.tables()?)
            })();
            match r {
                Ok(c) => report.cloud = Some(c),
                Err(e) => {
                    let _ = std::fs::remove_file(&laid);
                    return Err(e);
                }
            }
            std::fs::rename(&laid, &tmp).map_err(|e| MarquetError::Io { path: tmp.display().to_string(), source: e })?;
        }
        if existed {
            let src = File::open(&tmp)?;
            let dst = File::open_rw(output)?;
            dst.copy_tables_from(&src, &src.tables()?)?;
        } else {
            std::fs::rename(&tmp, output)
                .map_err(|e| MarquetError::Io { path: output.display().to_string(), source: e })?;
        }
        report.output = output.to_path_buf();
        Ok(report)
    })();
    let _ = std::fs::remove_file(&tmp);
    res
}

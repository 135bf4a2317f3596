//! `convert --crs` and `--to-crs` (issue #22): the hooks [`super::convert`] calls.
//!
//! - `--crs CODE` states the CRS of the imported geometry columns
//!   ([`super::ImportOptions::crs`]): the coordinates are kept, the CRS attribute is the
//!   resolved PROJJSON (HEP002 §8.1).
//! - `--to-crs CODE` reprojects every batch on its way into the writer
//!   ([`super::ImportOptions::to_crs`], issue #31): the rows are ordered, boxed and indexed
//!   in the target coordinates, once.
//! - A Marquet input is never changed: with either flag it is first exported to a
//!   temporary GeoParquet file (exact: WKB and every attribute column), which is then
//!   converted like any other input, so an HDF5 → HDF5 conversion that changes the CRS is
//!   allowed too.

use std::path::Path;

use super::{export_geoparquet, single_table_of, ConvertOptions, ConvertReport, CoveringChoice, ExportOptions, Format, GeoParquetVersion};
use crate::crs::{resolve, ReprojectReport};
use crate::error::{MarquetError, Result};
use crate::h5col::File;
use crate::marquet::Crs;

/// The CRS `--crs` states, resolved; an unresolvable one is an error (the user asked for
/// it: nothing is guessed).
pub(crate) fn stated(opts: &ConvertOptions) -> Result<Option<Crs>> {
    match &opts.crs {
        None => Ok(None),
        Some(d) => resolve(d).map(Some).map_err(|e| MarquetError::InvalidArgument(format!("--crs {d}: {e}"))),
    }
}

/// The CRS `--to-crs` asks for, resolved and known; the import reprojects every batch on
/// its way into the writer ([`super::ImportOptions::to_crs`], issue #31).
pub(crate) fn target(opts: &ConvertOptions) -> Result<Option<Crs>> {
    let Some(t) = &opts.to_crs else { return Ok(None) };
    let to = resolve(t).map_err(|e| MarquetError::InvalidArgument(format!("--to-crs {t}: {e}")))?;
    if to == Crs::Unknown {
        return Err(MarquetError::InvalidArgument(format!("--to-crs {t}: the target CRS must be known")));
    }
    Ok(Some(to))
}

/// What `--to-crs` did, from the import's report.
pub(crate) fn report_of(r: &super::ImportReport, opts: &ConvertOptions) -> Option<ReprojectReport> {
    opts.to_crs.as_ref()?;
    let mut rp = ReprojectReport { columns: r.reprojected.clone(), ..ReprojectReport::default() };
    for g in &r.geometry_columns {
        if !r.reprojected.iter().any(|(n, _, _)| n == &g.name) {
            rp.unchanged.push(g.name.clone());
        }
    }
    rp.notes.extend(r.warnings.iter().filter(|w| w.contains("reprojected")).cloned());
    Some(rp)
}

/// A Marquet input with `--crs` or `--to-crs`: converted through a temporary GeoParquet
/// copy (the input file is opened read-only). `None` for every other conversion.
pub(crate) fn marquet_input(input: &Path, output: &Path, opts: &ConvertOptions) -> Result<Option<ConvertReport>> {
    let fin = opts.format.or_else(|| Format::from_path(input));
    if fin != Some(Format::Marquet) || (opts.crs.is_none() && opts.to_crs.is_none()) {
        return Ok(None);
    }
    // Check the definitions before any work.
    stated(opts)?;
    if let Some(t) = &opts.to_crs {
        resolve(t).map_err(|e| MarquetError::InvalidArgument(format!("--to-crs {t}: {e}")))?;
    }
    let file = File::open(input)?;
    let table = match &opts.table {
        Some(t) => t.clone(),
        None => single_table_of(&file)?,
    };
    let tmp = std::env::temp_dir().join(format!(
        "marquet-crs-{}-{}.parquet",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
    ));
    let res = (|| {
        // No covering: boxes of the coordinates before reprojection; the import's layout
        // gives the table its own.
        let eopts = ExportOptions { version: GeoParquetVersion::V2_0, covering: CoveringChoice::None, ..ExportOptions::default() };
        export_geoparquet(&file, &table, &tmp, &eopts)?;
        drop(file);
        let o = ConvertOptions { table: Some(table.clone()), format: Some(Format::GeoParquet), ..opts.clone() };
        super::convert_unstaged(&tmp, output, &o)
    })();
    let _ = std::fs::remove_file(&tmp);
    let mut r = res?;
    r.input = input.to_path_buf();
    Ok(Some(r))
}

//! `convert`: pick a reader, pick a writer (issue #32). The formats are told by the file
//! extensions ([`Format`]); every input becomes an Arrow source of the hub and is imported
//! by [`crate::convert::hub::import::import`] into an HDF5 file — the output, or one held in
//! memory when the output is another format; every writer consumes the table's record
//! batches ([`crate::convert::hub::export::ExportSource`]).
//!
//! `--crs` states the CRS of the imported geometry columns ([`ImportOptions::crs`]): the
//! coordinates are kept, the CRS attribute is the resolved PROJJSON (HEP002 §8.1).
//! `--to-crs` reprojects every batch on its way into the writer ([`ImportOptions::to_crs`],
//! issue #31): the rows are ordered, boxed and indexed in the target coordinates, once. A
//! Marquet input with either flag is read as an Arrow source too (it is never changed).

use std::path::Path;

use super::format::{default_table_name, Format};
use super::geoparquet::export::{write_geoparquet, ExportOptions};
use super::geoparquet::reader::import_geoparquet_into;
use super::geojson::{self, write_geojson};
use super::hub::arrow::ExportReport;
use super::hub::export::TableSource;
use super::hub::import::{import, ImportOptions, ImportReport};
use super::hub::tables::single_table_of;
use super::hub::target::ImportTarget;
use super::options::{ConvertOptions, ConvertReport};
use super::{geoparquet, lake, stage};
#[cfg(feature = "gis")]
use super::{fgb, gpkg, hub, shp};
use crate::crs::{resolve, ReprojectReport};
use crate::error::{MarquetError, Result};
use crate::h5col::File;
use crate::marquet::Crs;

pub(crate) fn single_table(file: &File, opts: &ConvertOptions) -> Result<String> {
    if let Some(t) = &opts.table {
        return Ok(t.clone());
    }
    single_table_of(file)
}


/// Convert between GeoParquet, GeoJSON and Marquet (HDF5), choosing the direction by the
/// file extensions (or [`ConvertOptions::format`]). Writing into an existing HDF5 file adds
/// a table; a new output file is removed again if the conversion fails. Between two other
/// formats the rows go through the hub's table held in memory (HDF5's core driver, no
/// file; `super::hub::export` says why). HDF5 to HDF5 copies one table as stored, with
/// its layout and indexes (`super::copy`).
///
/// Into HDF5 the conversion is all-or-nothing: it runs into a staging file beside the
/// output and is published at the end in one step (a rename for a new file, one `H5Ocopy`
/// of the table into an existing one); a failure or a kill leaves the output as it was
/// (issue #19, docs/FAULTS.md F2).
pub fn convert(input: &Path, output: &Path, opts: &ConvertOptions) -> Result<ConvertReport> {
    let f = Formats::of(input, output, opts);
    if f.output == Some(Format::Marquet) && !opts.lake.geomesa_export {
        // The staging file is an HDF5 file whatever its name.
        return stage::into_hdf5(input, output, opts, |i, o, so| convert_unstaged(i, o, so, f));
    }
    convert_unstaged(input, output, opts, f)
}

/// The formats of one conversion, told once from the options or the file extensions.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Formats {
    /// The input's format (`None`: no known extension; a lakehouse source may still read it).
    pub input: Option<Format>,
    /// The output's format.
    pub output: Option<Format>,
    /// The input format was named ([`ConvertOptions::format`]), not told from the extension.
    pub named_input: bool,
}

impl Formats {
    fn of(input: &Path, output: &Path, opts: &ConvertOptions) -> Formats {
        Formats {
            input: opts.format.or_else(|| Format::from_path(input)),
            output: opts.output_format.or_else(|| Format::from_path(output)),
            named_input: opts.format.is_some(),
        }
    }
}

/// [`convert`] without the staging of an HDF5 output.
pub(crate) fn convert_unstaged(input: &Path, output: &Path, opts: &ConvertOptions, formats: Formats) -> Result<ConvertReport> {
    // A FIFO, socket or device is refused before anything reads it (issue #19); a lake may
    // be a directory.
    if std::fs::metadata(input).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        crate::error::check_regular_file(input)?;
    }
    // CSV, plain Parquet, Iceberg and GeoMesa sources; the GeoMesa layout (issue #24).
    if let Some(mut r) = lake_hook(input, output, opts, formats)? {
        // --to-crs applies to lakehouse sources too (issue #22).
        if let Some(i) = &r.import {
            r.reproject = report_of(i, opts);
        }
        return Ok(r);
    }
    let fin = formats.input.ok_or_else(|| {
        MarquetError::InvalidArgument(format!("{}: cannot tell the input format from the extension", input.display()))
    })?;
    let fout = formats.output.ok_or_else(|| {
        MarquetError::InvalidArgument(format!("{}: cannot tell the output format from the extension", output.display()))
    })?;
    // HDF5 to HDF5 without a CRS change: the table is copied as stored (issue #32).
    if fin == Format::Marquet && fout == Format::Marquet && opts.crs.is_none() && opts.to_crs.is_none() {
        let c = super::copy::copy_table(input, output, opts.table.as_deref())?;
        return Ok(ConvertReport { input: input.into(), output: output.into(), table: c.table.clone(), copy: Some(c), ..Default::default() });
    }
    let mut report = ConvertReport { input: input.to_path_buf(), output: output.to_path_buf(), ..Default::default() };
    // A Marquet input is imported when a CRS is stated or changed (read as an Arrow source,
    // never changed itself); otherwise it is exported as it is.
    let reimport = fin == Format::Marquet && (opts.crs.is_some() || opts.to_crs.is_some());
    let source_file = if fin == Format::Marquet { Some(File::open(input)?) } else { None };
    let source_table = match &source_file {
        Some(f) => Some(single_table(f, opts)?),
        None => None,
    };
    let iopts = ImportOptions {
        table: opts.table.clone().or_else(|| source_table.clone()).unwrap_or_else(|| default_table_name(input)),
        strict: opts.strict,
        point_form: opts.point_form.unwrap_or_default(),
        progress: opts.progress.clone(),
        layout: opts.layout.clone(),
        crs: stated_crs(opts)?,
        nested: opts.nested,
        text_as_bytes: opts.text_as_bytes,
        to_crs: target_crs(opts)?,
        ..ImportOptions::default()
    };
    let eopts = ExportOptions {
        version: opts.geoparquet_version.unwrap_or_default(),
        progress: opts.progress.clone(),
        covering: opts.covering,
        ..ExportOptions::default()
    };
    // The reader: every input is an Arrow source of the hub.
    let import_into = |target: ImportTarget<'_>| -> Result<ImportReport> {
        match (&source_file, &source_table) {
            (Some(f), Some(t)) => {
                let table = crate::marquet::MarquetTable::open(f, t)?;
                import(&mut TableSource::new(&table)?, target, &iopts)
            }
            _ => import_any(fin, input, target, &iopts),
        }
    };
    match (fin, fout) {
        (_, Format::Marquet) => {
            // A new file: [`convert`] stages conversions into HDF5 (docs/FAULTS.md F2).
            let file = File::create(output)?;
            let r = import_into(ImportTarget::New(&file));
            let r = r.map(|r| (report_of(&r, opts), r));
            drop(file);
            match r {
                Ok((rp, r)) => {
                    report.table = r.table.clone();
                    report.import = Some(r);
                    report.reproject = rp;
                }
                Err(e) => {
                    let _ = std::fs::remove_file(output);
                    return Err(e);
                }
            }
        }
        (Format::Marquet, _) if !reimport => {
            let (Some(file), Some(table)) = (&source_file, source_table.clone()) else { unreachable!("a Marquet input is open") };
            let r = export_any(fout, file, &table, output, &eopts, opts.layout.sort_memory);
            if r.is_err() {
                let _ = std::fs::remove_file(output);
            }
            report.table = table;
            report.export = Some(r?);
        }
        _ => {
            // Between two formats other than HDF5: the table is built in an HDF5 file held
            // in memory (the core driver, no backing store), never in a temporary file.
            let res = (|| {
                let file = File::create_in_memory(&format!("{}:convert", input.display()))?;
                let r = import_into(ImportTarget::New(&file))?;
                let rp = report_of(&r, opts);
                let e = export_any(fout, &file, &r.table, output, &eopts, opts.layout.sort_memory)?;
                Ok::<_, MarquetError>((r, e, rp))
            })();
            if res.is_err() {
                let _ = std::fs::remove_file(output);
            }
            let (r, e, rp) = res?;
            report.reproject = rp;
            report.table = r.table.clone();
            report.import = Some(r);
            report.export = Some(e);
        }
    }
    Ok(report)
}

/// Import any input format into `target` (the GIS formats with feature `gis`).
pub(crate) fn import_any(fin: Format, input: &Path, target: ImportTarget<'_>, iopts: &ImportOptions) -> Result<ImportReport> {
    match fin {
        Format::GeoParquet => import_geoparquet_into(input, target, iopts),
        Format::GeoJson => super::geojson::import_geojson_into(input, target, iopts),
        #[cfg(feature = "gis")]
        Format::FlatGeobuf => {
            let (info, first) = fgb::open(input)?;
            hub::features::import_features(input, "FlatGeobuf", target, info, first, || Ok(fgb::open(input)?.1), iopts)
        }
        #[cfg(feature = "gis")]
        Format::GeoPackage => {
            let (info, first) = gpkg::open(input)?;
            hub::features::import_features(input, "GeoPackage", target, info, first, || Ok(gpkg::open(input)?.1), iopts)
        }
        #[cfg(feature = "gis")]
        Format::Shapefile => {
            let (info, first) = shp::open(input)?;
            hub::features::import_features(input, "Shapefile", target, info, first, || Ok(shp::open(input)?.1), iopts)
        }
        Format::Marquet => Err(MarquetError::InvalidArgument("an HDF5 file is not imported".into())),
        #[cfg(not(feature = "gis"))]
        f => Err(MarquetError::Unsupported(format!("{}: {f:?} needs the `gis` feature", input.display()))),
    }
}

/// Export table `table` of `file` to any output format (the GIS formats with feature
/// `gis`): the table is read as the hub's record batches ([`TableSource`], in the shape the
/// writer asks for) and handed to the format's writer; `budget` bounds what a writer holds
/// in memory (FlatGeobuf: its encoded features; `--sort-memory-mib`).
fn export_any(fout: Format, file: &File, table: &str, output: &Path, eopts: &ExportOptions, budget: usize) -> Result<ExportReport> {
    let t = crate::marquet::MarquetTable::open(file, table)?;
    let src = |shape| TableSource::for_export(&t, shape);
    // Only the FlatGeobuf writer (feature `gis`) holds features in memory.
    #[cfg(not(feature = "gis"))]
    let _ = budget;
    match fout {
        Format::GeoParquet => write_geoparquet(&mut src(geoparquet::export::shape(eopts))?, output, eopts),
        Format::GeoJson => write_geojson(&mut src(geojson::shape())?, output),
        #[cfg(feature = "gis")]
        Format::FlatGeobuf => hub::features::write_features("FlatGeobuf", &mut src(hub::features::shape())?, |info, _| Ok(Box::new(fgb::create_with_budget(output, info, budget)?))),
        #[cfg(feature = "gis")]
        Format::GeoPackage => {
            hub::features::write_features("GeoPackage", &mut src(hub::features::shape())?, |info, _| Ok(Box::new(gpkg::create(output, table, info)?)))
        }
        #[cfg(feature = "gis")]
        Format::Shapefile => hub::features::write_features("Shapefile", &mut src(hub::features::shape())?, |info, r| Ok(Box::new(shp::create(output, info, r)?))),
        Format::Marquet => Err(MarquetError::InvalidArgument("HDF5 is not an export format".into())),
        #[cfg(not(feature = "gis"))]
        f => Err(MarquetError::Unsupported(format!("{}: {f:?} needs the `gis` feature", output.display()))),
    }
}

/// The CRS `--crs` states, resolved; an unresolvable one is an error (the user asked for
/// it: nothing is guessed).
pub(crate) fn stated_crs(opts: &ConvertOptions) -> Result<Option<Crs>> {
    match &opts.crs {
        None => Ok(None),
        Some(d) => resolve(d).map(Some).map_err(|e| MarquetError::InvalidArgument(format!("--crs {d}: {e}"))),
    }
}

/// The CRS `--to-crs` asks for, resolved and known; the import reprojects every batch on
/// its way into the writer ([`super::ImportOptions::to_crs`], issue #31).
pub(crate) fn target_crs(opts: &ConvertOptions) -> Result<Option<Crs>> {
    let Some(t) = &opts.to_crs else { return Ok(None) };
    let to = resolve(t).map_err(|e| MarquetError::InvalidArgument(format!("--to-crs {t}: {e}")))?;
    if to == Crs::Unknown {
        return Err(MarquetError::InvalidArgument(format!("--to-crs {t}: the target CRS must be known")));
    }
    Ok(Some(to))
}

/// What `--to-crs` did, from the import's report.
pub(crate) fn report_of(r: &ImportReport, opts: &ConvertOptions) -> Option<ReprojectReport> {
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

/// [`convert`]'s hook: lakehouse sources into HDF5, HDF5 into the GeoMesa layout.
/// `None` when the ordinary paths apply.
fn lake_hook(input: &Path, output: &Path, opts: &ConvertOptions, formats: Formats) -> Result<Option<ConvertReport>> {
    let (fin, fout) = (formats.input, formats.output);
    if opts.lake.geomesa_export {
        if fin != Some(Format::Marquet) || fout != Some(Format::GeoParquet) {
            return Err(MarquetError::InvalidArgument("the GeoMesa layout is written from an HDF5 table to a .parquet file".into()));
        }
        let file = File::open(input)?;
        let table = single_table(&file, opts)?;
        let go = lake::geomesa::GeoMesaOptions { progress: opts.progress.clone(), sort_memory: opts.layout.sort_memory, ..Default::default() };
        let r = lake::geomesa::export_geomesa(&file, &table, output, &go);
        if r.is_err() {
            let _ = std::fs::remove_file(output);
        }
        return Ok(Some(ConvertReport { input: input.into(), output: output.into(), table, export: Some(r?), ..Default::default() }));
    }
    // Havasu rasters: arrays beside a footprint table (issue #37, raster/mod.rs).
    if let Some(r) = lake::raster::convert_hook(input, output, opts, fin, fout)? {
        return Ok(Some(r));
    }
    if formats.named_input || !lake::wants_lake(input, &opts.lake)? {
        return Ok(None);
    }
    if fout != Some(Format::Marquet) {
        return Err(MarquetError::InvalidArgument(format!(
            "{}: a CSV, plain Parquet or Iceberg source converts to an HDF5 file (.h5); convert that to GeoParquet or GeoJSON next",
            input.display()
        )));
    }
    let iopts = ImportOptions {
        table: opts.table.clone().unwrap_or_else(|| lake::table_name(input)),
        strict: opts.strict,
        point_form: opts.point_form.unwrap_or_default(),
        progress: opts.progress.clone(),
        layout: opts.layout.clone(),
        to_crs: target_crs(opts)?,
        ..ImportOptions::default()
    };
    // A new file: [`super::convert`] stages conversions into HDF5 (docs/FAULTS.md F2).
    let file = File::create(output)?;
    let r = lake::import_lake(input, &file, &iopts, &opts.lake);
    drop(file);
    ConvertReport::of_new_file(input, output, r).map(Some)
}


//! The import half of the hub (issue #32): any [`ArrowSource`] — GeoParquet, GeoJSON, the
//! GIS formats, lakehouse tables, Arrow streams from Python and C — into a new Marquet table
//! or appended to one ([`ImportTarget`]), with one column mapping (`plan`, `categorical`,
//! `nested_json`), one survey pass and one write pass, and the one writer
//! ([`crate::marquet::TableWriter`]).

use std::collections::{BTreeMap, BTreeSet};

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::DataType;

use crate::convert::hub::categorical::CategoryStats;
use crate::convert::hub::nested_json::NestedPolicy;
use crate::convert::hub::plan::{self, Planned, StrStats};
use super::source::{ArrowSource, Encoding, GeoColumnMeta};
use crate::convert::hub::sort::{HilbertSorter, KeyCollector};
use crate::convert::hub::target::ImportTarget;
use crate::crs::ValuesReprojection;
use crate::convert::hub::geoarrow;
use crate::convert::hub::covering_in;
use crate::convert::hub::meta;
use crate::convert::{code, fail, Finding, DEFAULT_BATCH_ROWS, DEFAULT_MAX_FIXED_STRING};
use crate::error::{MarquetError, Result};
use crate::h5col::File;
use crate::marquet::{bounds, layout, order, Crs, Edges, GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteLayout};
use crate::spec::{names, BBox, Dimensions, GeometryKind, GeometryType};
use crate::wkb;
use rayon::prelude::*;

/// How point geometries are stored (HEP002 §7.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PointForm {
    /// A point column of native coordinates (the HEP002 §7.6 recommendation).
    #[default]
    Native,
    /// A fixed-length WKB column (byte-for-byte copy of the GeoParquet values); falls back
    /// to variable-length WKB when the values differ in length.
    FixedWkb,
    /// Variable-length WKB, like every other geometry.
    VarWkb,
}

/// Options for `import` (every format's import: [`crate::convert::import_geoparquet`],
/// [`crate::convert::import_geojson`], …).
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Path of the table group to create, e.g. `/countries`.
    pub table: String,
    /// Storage form for columns whose geometries are all points of one dimension
    /// (default [`PointForm::Native`], HEP002 §7.6).
    pub point_form: PointForm,
    /// Rows per record batch (and per append).
    pub batch_rows: usize,
    /// How the new table is laid out: row order, spatial indexes, covering columns, chunk
    /// sizes (default [`WriteLayout::default`], the layout every writer uses).
    pub layout: WriteLayout,
    /// Longest string stored as fixed-length UTF-8.
    pub max_fixed_string: usize,
    /// Every [`Finding`] is an error (a strict GeoParquet reader).
    pub strict: bool,
    /// Called after each appended batch with the rows imported so far.
    pub progress: crate::Progress,
    /// The CRS of every geometry column, stated by the user (`convert --crs`, issue #22),
    /// replacing whatever the source says (or does not say); `None` keeps the source's.
    pub crs: Option<Crs>,
    /// Nested Arrow columns HEP001 cannot hold (lists of structs, maps, nested lists): JSON
    /// text with a warning (the default) or refused (issue #22).
    pub nested: NestedPolicy,
    /// Store every string column as UTF-8 bytes in a list column with a null mask, the form
    /// netCDF-C reads without crashing (local ruling L17); always so when the file written
    /// is a netCDF-4 file (`_NCProperties` on its root).
    pub text_as_bytes: bool,
    /// Reproject every geometry column to this CRS as the rows stream in (`convert
    /// --to-crs`, issue #31): the Hilbert order, the covering values and the indexes are of
    /// the target coordinates, and every value is transformed once.
    pub to_crs: Option<Crs>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            table: "/table".into(),
            point_form: PointForm::Native,
            batch_rows: DEFAULT_BATCH_ROWS,
            layout: WriteLayout::default(),
            max_fixed_string: DEFAULT_MAX_FIXED_STRING,
            strict: false,
            progress: crate::Progress::default(),
            crs: None,
            nested: NestedPolicy::default(),
            text_as_bytes: false,
            to_crs: None,
        }
    }
}

impl ImportOptions {
    /// Options with `table` as the table path.
    pub fn new(table: &str) -> ImportOptions {
        ImportOptions { table: table.to_string(), ..ImportOptions::default() }
    }
}

/// One imported geometry column.
#[derive(Debug, Clone)]
pub struct GeometryImport {
    /// The column name (the same in the GeoParquet file and the table).
    pub name: String,
    /// Where it came from, e.g. "WKB, Parquet GEOGRAPHY (spherical)", "geoarrow multipolygon".
    pub source: String,
    /// The storage form chosen (HEP002 §7).
    pub form: StorageForm,
    /// The `CRS` written (HEP002 §8.1).
    pub crs: Crs,
    /// The `EDGES` written (HEP002 §9.1).
    pub edges: Edges,
    /// Exact types found in the data (`GEOMETRY_TYPES`).
    pub types: Vec<GeometryType>,
    /// Name of the covering column created for it (HEP002 §10.5), if any.
    pub covering: Option<String>,
}

/// What an import did.
#[derive(Debug, Clone, Default)]
pub struct ImportReport {
    /// HDF5 path of the table group created.
    pub table: String,
    /// Rows imported (the table's `NROWS`).
    pub rows: u64,
    /// The `geo` metadata version, `None` when the file had no `geo` key.
    pub geoparquet_version: Option<String>,
    /// Some column carried a Parquet GEOMETRY / GEOGRAPHY logical type.
    pub native_types: bool,
    /// The geometry columns, primary first.
    pub geometry_columns: Vec<GeometryImport>,
    /// Ordinary columns: (H5Col name, how it was mapped).
    pub columns: Vec<(String, String)>,
    /// Source columns not imported, with the reason.
    pub skipped: Vec<(String, String)>,
    /// Deviations from the GeoParquet specification (see [`crate::convert::code`]).
    pub findings: Vec<Finding>,
    /// What a user should hear about (the CLI prints them on stderr): nested columns kept
    /// as JSON text. Not part of the `Display` text.
    pub warnings: Vec<String>,
    /// Geometry columns reprojected on the way in ([`ImportOptions::to_crs`]): (name, CRS
    /// before, CRS after).
    pub reprojected: Vec<(String, String, String)>,
}

impl ImportReport {
    /// Does the report carry a finding with `code`?
    pub fn has_finding(&self, code: crate::convert::error::FindingCode) -> bool {
        self.findings.iter().any(|f| f.code == code)
    }
}

impl std::fmt::Display for ImportReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "imported {} rows into {} (geo metadata {}, native logical types: {})",
            self.rows,
            self.table,
            self.geoparquet_version.as_deref().unwrap_or("absent"),
            if self.native_types { "yes" } else { "no" }
        )?;
        for g in &self.geometry_columns {
            let types: Vec<String> = g.types.iter().map(|t| t.name()).collect();
            writeln!(
                f,
                "  geometry {}: {} -> {}; crs {}; edges {}; types [{}]{}",
                g.name,
                g.source,
                g.form.describe(),
                g.crs.display_name(),
                g.edges.geoparquet_name(),
                types.join(", "),
                g.covering.as_ref().map(|c| format!("; covering {c}")).unwrap_or_default()
            )?;
        }
        for (c, how) in &self.columns {
            writeln!(f, "  column {c}: {how}")?;
        }
        for (c, why) in &self.skipped {
            writeln!(f, "  skipped {c}: {why}")?;
        }
        for x in &self.findings {
            writeln!(f, "  finding {x}")?;
        }
        Ok(())
    }
}

/// A geometry column to import.
struct GeomPlan {
    meta: GeoColumnMeta,
    root: usize,
    /// Name in the table (sanitized).
    name: String,
    form: StorageForm,
    source: String,
    /// The CRS as the source wrote it, when it is not PROJJSON.
    crs_text: Option<String>,
    covering: Option<String>,
    covering_f32: bool,
}

/// Make a column name acceptable to H5Col and Marquet (no '/', not reserved).
pub(crate) fn sanitize_name(name: &str, used: &BTreeSet<String>) -> String {
    let mut n: String = name.replace('/', "_");
    if n.is_empty() || n == "." {
        n = "_".into();
    }
    let marquet_reserved = [
        names::MARQUET_VERSION,
        names::GEOMETRY_COLUMNS,
        names::GEOMETRY_ENCODING,
        names::GEOMETRY_TYPES,
        names::CRS,
        names::EPOCH,
        names::EDGES,
        names::ORIENTATION,
        names::BBOX,
        names::COVERING,
    ];
    while crate::h5col::is_reserved_name(&n) || marquet_reserved.contains(&n.as_str()) || used.contains(&n) {
        n.push('_');
    }
    n
}

/// Per-geometry-column facts from the pre-scan.
#[derive(Default)]
struct GeomScan {
    non_points: bool,
    dims: BTreeSet<Dimensions>,
    lens: BTreeSet<usize>,
}

/// Import the source `src` into `target` (a new table [`ImportOptions::table`], or rows
/// appended to a table): the columns are planned from the source's schema, the source is
/// read once to survey what the plan needs (string widths, categories, point forms, the
/// Hilbert keys of the primary geometry column) and once more to stream the rows, in
/// Hilbert order, into the one writer. A failed import into a new table leaves no table.
pub fn import(src: &mut dyn ArrowSource, target: ImportTarget<'_>, opts: &ImportOptions) -> Result<ImportReport> {
    target.or_nothing(&opts.table, || import_inner(src, target, opts))
}

fn import_inner(src: &mut dyn ArrowSource, target: ImportTarget<'_>, opts: &ImportOptions) -> Result<ImportReport> {
    let d = src.describe().clone();
    let path = d.path.clone();
    let schema = d.schema.clone();
    let mut total_rows = d.rows;
    let mut report = ImportReport {
        table: opts.table.clone(),
        geoparquet_version: d.geoparquet_version.clone(),
        native_types: d.native_types,
        findings: d.findings.clone(),
        ..Default::default()
    };
    // Two different explicit CRSs of one column: refused unless --crs states it (issue #32).
    let metas: Vec<GeoColumnMeta> = d.geometry.iter().map(|g| g.meta.clone()).collect();
    meta::check_crs_conflicts(&path, &metas, opts.crs.is_some(), &mut report.findings)?;
    // Plan geometry columns (primary first, as parse_geo sorted them).
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut geoms: Vec<GeomPlan> = Vec::new();
    let mut consumed: BTreeSet<usize> = BTreeSet::new();
    for gf in &d.geometry {
        let g = &gf.meta;
        let Some((root, field)) = schema.column_with_name(&g.name) else {
            return Err(fail(&path, code::SCHEMA_VALIDATION, format!("`geo` column {:?} is not a column of the file", g.name)));
        };
        match g.encoding {
            Encoding::Wkb => {
                if !matches!(field.data_type(), DataType::Binary | DataType::LargeBinary | DataType::BinaryView) {
                    return Err(fail(
                        &path,
                        code::SCHEMA_VALIDATION,
                        format!("column {:?} declares encoding WKB but is {}", g.name, field.data_type()),
                    ));
                }
            }
            Encoding::Native(k) => {
                if !geoarrow::matches_kind(field.data_type(), k) {
                    return Err(fail(
                        &path,
                        code::SCHEMA_VALIDATION,
                        format!("column {:?} declares encoding {} but is {}", g.name, g.encoding.name(), field.data_type()),
                    ));
                }
            }
        }
        consumed.insert(root);
        let name = sanitize_name(&g.name, &used);
        used.insert(name.clone());
        geoms.push(GeomPlan {
            meta: g.clone(),
            root,
            name,
            form: StorageForm::VarWkb,
            source: gf.source.clone(),
            crs_text: gf.crs_text.clone(),
            covering: None,
            covering_f32: false,
        });
    }
    // Covering columns: declared by the source or recognised (covering_in, issue #32).
    let refs: Vec<covering_in::GeomRef<'_>> = geoms
        .iter()
        .map(|g| covering_in::GeomRef { name: &g.meta.name, root: g.root, declared: g.meta.covering.as_deref(), edges: &g.meta.edges })
        .collect();
    let mut scan = |roots: &[usize], f: &mut dyn FnMut(&RecordBatch) -> Result<()>| -> Result<()> {
        for batch in src.batches(roots, opts.batch_rows)? {
            f(&batch?)?;
        }
        Ok(())
    };
    let values = |gi: usize, a: &ArrayRef| values_of(&geoms[gi], &None, a);
    let covs = covering_in::find(&path, &schema, &refs, &mut scan, &values, &mut report.findings, &mut report.warnings)?;
    drop(refs);
    for (gp, c) in geoms.iter_mut().zip(covs) {
        let Some(c) = c else { continue };
        consumed.insert(c.root);
        let name = sanitize_name(&c.name, &used);
        used.insert(name.clone());
        gp.covering = Some(name);
        gp.covering_f32 = c.shape.f32;
    }

    // Plan ordinary columns.
    let mut planned: Vec<Planned> = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    for (i, f) in schema.fields().iter().enumerate() {
        if consumed.contains(&i) {
            continue;
        }
        let may_null = src.may_have_nulls(i);
        let mut local = Vec::new();
        plan_field_sanitized(f, i, may_null, opts.nested, &mut local, &mut skipped, &mut used)?;
        planned.extend(local);
    }

    // `--to-crs`: one reprojection per geometry column, applied to each batch's values
    // before anything else sees them (the survey and the stream alike).
    let mut reproj: Vec<Option<ValuesReprojection>> = Vec::with_capacity(geoms.len());
    for gp in geoms.iter_mut() {
        let Some(to) = &opts.to_crs else {
            reproj.push(None);
            continue;
        };
        let from = opts.crs.clone().unwrap_or_else(|| gp.meta.crs.clone());
        if from == *to || (crate::crs::is_crs84(&from) && crate::crs::is_crs84(to)) {
            reproj.push(None);
            continue;
        }
        reproj.push(Some(ValuesReprojection::new(&from, to, &format!("{path}: column {:?}", gp.meta.name))?));
        report.reprojected.push((gp.name.clone(), from.display_name(), to.display_name()));
        // Non-planar edges are defined on the ellipsoid of a geographic CRS only (R10).
        if !gp.meta.edges.is_planar() && !to.is_geographic() {
            report.warnings.push(format!(
                "column {:?}: edges {} need a geographic CRS; the reprojected column has planar edges",
                gp.name,
                gp.meta.edges.geoparquet_name()
            ));
            gp.meta.edges = Edges::Planar;
        }
        // The declared box is of the source coordinates.
        gp.meta.bbox = None;
    }

    // The survey: one pass over the columns the plan depends on — string statistics and
    // categories, the geometry columns whose storage form depends on the data, and the
    // Hilbert keys of the primary geometry column (HEP002 §10.6; the rows are then sorted
    // with bounded memory, crate::convert::hub::sort).
    let mut scan_geom: Vec<usize> = Vec::new();
    for (gi, gp) in geoms.iter().enumerate() {
        if gp.meta.encoding == Encoding::Wkb {
            let maybe_points = match &gp.meta.geometry_types {
                None => true,
                Some(v) => v.iter().all(|t| t.kind == GeometryKind::Point),
            };
            if maybe_points && opts.point_form != PointForm::VarWkb {
                scan_geom.push(gi);
            }
        }
    }
    let str_cols: Vec<usize> = (0..planned.len()).filter(|&i| planned[i].needs_str_stats).collect();
    let mut str_stats: Vec<StrStats> = vec![StrStats::default(); planned.len()];
    let mut cat_stats: Vec<CategoryStats> = vec![CategoryStats::default(); planned.len()];
    let mut gscan: Vec<GeomScan> = (0..geoms.len()).map(|_| GeomScan::default()).collect();
    let key_geom = geoms.first().filter(|_| opts.layout.spatial_order).map(|g| g.root);
    let mut keys = key_geom.map(|_| KeyCollector::with_capacity(total_rows.unwrap_or(0).min(1 << 28) as usize));
    if !str_cols.is_empty() || !scan_geom.is_empty() || key_geom.is_some() {
        // The survey and the stream read the file once when it fits the sort budget.
        src.keep_next_read(opts.layout.sort_memory);
        let mut roots_needed: BTreeSet<usize> = str_cols.iter().map(|&i| planned[i].path[0]).collect();
        roots_needed.extend(scan_geom.iter().map(|&g| geoms[g].root));
        roots_needed.extend(key_geom);
        let roots: Vec<usize> = roots_needed.iter().copied().collect();
        let pos: BTreeMap<usize, usize> = roots.iter().enumerate().map(|(p, r)| (*r, p)).collect();
        let model = geoms.first().map(|g| bounds::edge_model(&g.meta.edges));
        let mut row0 = 0u64;
        let mut scanned: Vec<Option<std::result::Result<wkb::WkbInfo, wkb::WkbError>>> = Vec::new();
        for batch in src.batches(&roots, opts.batch_rows)? {
            let batch = batch?;
            for &i in &str_cols {
                let mut p = planned[i].path.clone();
                p[0] = pos[&p[0]];
                let a = planned[i].prepare(plan::array_at(&batch, &p))?;
                for s in plan::strings(&a)?.into_iter().flatten() {
                    str_stats[i].add(s);
                }
                if planned[i].dictionary.is_some() {
                    cat_stats[i].add(&a)?;
                }
            }
            // The sort keys' boxes, when the scan below walks the key column's WKB anyway:
            // one walk of each value gives both (issue #31: each geometry boxed once).
            let mut keyed = false;
            for &g in &scan_geom {
                let a = batch.column(pos[&geoms[g].root]);
                let values: Vec<Option<&[u8]>> = plan::binary_slices(a)?.collect();
                let mut boxed = match (model, keys.as_mut()) {
                    (Some(m), Some(k)) if g == 0 && reproj[0].is_none() => Some((m, k)),
                    _ => None,
                };
                keyed |= boxed.is_some();
                // The scans' vector is kept from batch to batch: allocated anew, its pages
                // were faulted in again each time (twice the page faults of a point convert).
                values.par_iter().map(|v| v.map(wkb::scan)).collect_into_vec(&mut scanned);
                let mut last = None;
                for (row, (v, info)) in values.iter().zip(scanned.drain(..)).enumerate() {
                    let (Some(v), Some(info)) = (v, info) else {
                        if let Some((_, k)) = boxed.as_mut() {
                            k.push(&BBox::EMPTY);
                        }
                        continue;
                    };
                    let at = |e: wkb::WkbError| {
                        let m = e.into_marquet(format!("{path}: column {:?}", geoms[g].meta.name), Some(row0 + row as u64));
                        fail(&path, code::WKB_PARSE, m.to_string())
                    };
                    let info = info.map_err(at)?;
                    if let Some((m, k)) = boxed.as_mut() {
                        // Planar edges and points: the scan's own box, no second walk.
                        k.push(&bounds::box_of_scanned(v, &info, *m, false).map_err(at)?);
                    }
                    let s = &mut gscan[g];
                    if info.geometry_type.kind != GeometryKind::Point {
                        s.non_points = true;
                    }
                    // The sets are asked only when a row differs from the one before.
                    if last != Some((info.geometry_type.dims, v.len())) {
                        s.dims.insert(info.geometry_type.dims);
                        s.lens.insert(v.len());
                        last = Some((info.geometry_type.dims, v.len()));
                    }
                }
            }
            if let (Some(k), Some(root), Some(model), false) = (keys.as_mut(), key_geom, model, keyed) {
                let a = batch.column(pos[&root]);
                // WKB boxed straight from the borrowed values, without a copy of each.
                let boxes = if geoms[0].meta.encoding == Encoding::Wkb && reproj[0].is_none() {
                    order::wkb_boxes(&plan::binary_slices(a)?.collect::<Vec<_>>(), model)
                } else {
                    order::value_boxes(&values_of(&geoms[0], &reproj[0], a)?, model)
                };
                for bx in boxes.map_err(|e| fail(&path, code::WKB_PARSE, e.to_string()))? {
                    k.push(&bx);
                }
            }
            row0 += batch.num_rows() as u64;
        }
        // A source that did not know its length (an Arrow stream) does now: the writer
        // sizes chunks and blocks by it, as for a file.
        total_rows = total_rows.or(Some(row0));
    }
    let mut sort_keys: Option<Vec<u64>> = keys.map(KeyCollector::keys);
    let text_bytes = opts.text_as_bytes || target.text_as_bytes()?;
    for (i, (p, cats)) in planned.iter_mut().zip(cat_stats).enumerate() {
        p.finish_strings(&str_stats[i], opts.max_fixed_string, text_bytes);
        p.finish_categories(cats, opts.max_fixed_string);
    }
    // Storage forms.
    for (gi, gp) in geoms.iter_mut().enumerate() {
        gp.form = match gp.meta.encoding {
            Encoding::Native(GeometryKind::Point) => {
                let dims = native_point_dims(schema.field(gp.root).data_type());
                point_form_for(opts.point_form, dims, Some(5 + 8 * dims.size()))
            }
            Encoding::Native(_) => StorageForm::VarWkb,
            Encoding::Wkb => {
                let s = &gscan[gi];
                if scan_geom.contains(&gi) && !s.non_points && s.dims.len() == 1 {
                    let dims = *s.dims.iter().next().unwrap_or(&Dimensions::Xy);
                    let len = (s.lens.len() == 1).then(|| *s.lens.iter().next().unwrap_or(&0));
                    point_form_for(opts.point_form, dims, len)
                } else {
                    StorageForm::VarWkb
                }
            }
        };
        if matches!(gp.form, StorageForm::Point { .. }) {
            if let Some(cov) = gp.covering.take() {
                report.skipped.push((
                    cov,
                    "bbox covering of a point column: HEP002 §10.5 says producers SHOULD NOT keep one (it repeats the coordinates): not kept".into(),
                ));
            }
        }
    }

    // Define the table: the new one, or the template of an append (crate::convert::hub::target).
    let (_template_file, mut t) = target.define(&opts.table)?;
    // GeoParquet `orientation: counterclockwise` rings wound the other way are re-wound, not
    // refused (docs/geoparquet-mapping.md).
    t.set_orientation_on_write(crate::marquet::OrientationOnWrite::Rewind);
    let mut order: Vec<(usize, String)> = Vec::new();
    for gp in &geoms {
        let m = &gp.meta;
        let crs = opts.to_crs.clone().unwrap_or_else(|| opts.crs.clone().unwrap_or_else(|| m.crs.clone()));
        let mut spec = GeometryColumnSpec { form: Some(gp.form), crs, epoch: m.epoch, ..Default::default() };
        if !m.edges.is_planar() {
            spec.edges = Some(m.edges.clone());
        }
        spec.orientation_ccw = m.orientation_ccw;
        spec.covering = gp.covering.clone();
        spec.covering_f32 = gp.covering_f32;
        let primary = order.is_empty();
        let cov_name = layout::covering_name(&gp.name, primary, &|n| used.contains(n));
        let mut spec = opts.layout.geometry_spec(spec, &cov_name);
        if spec.covering.as_deref() == Some(cov_name.as_str()) && gp.covering.is_none() {
            used.insert(cov_name.clone());
        }
        if let (Some(n), None) = (&m.crs_note, &opts.crs) {
            spec.description = Some(format!("source CRS (not PROJJSON, HEP002 §8.1): {}", gp.crs_text.as_deref().unwrap_or(n)));
        }
        t.add_geometry_column(&gp.name, &spec).map_err(|e| match e {
            MarquetError::InvalidArgument(msg) => fail(&path, code::SCHEMA_VALIDATION, format!("column {:?}: {msg}", m.name)),
            e => e,
        })?;
        order.push((gp.root, gp.name.clone()));
        if let Some(c) = &spec.covering {
            order.push((gp.root, c.clone()));
        }
    }
    for p in &planned {
        p.create(&t, opts.layout.chunk_rows, opts.layout.checksums, opts.layout.compression)?;
        order.push((p.path[0], p.name.clone()));
        report.columns.push((p.name.clone(), describe_plan(p, schema.field(p.path[0]).data_type())));
        if let (Some(j), true) = (&p.json, p.to_json) {
            report.warnings.push(format!(
                "column {:?}: {j} has no HEP001 column: kept as JSON text (refuse instead with --nested refuse)",
                p.name
            ));
        }
    }
    // column-order: the source schema order.
    order.sort_by_key(|(r, _)| *r);
    let order: Vec<String> = order.into_iter().map(|(_, n)| n).collect();
    t.table().set_column_order(&order)?;

    // Stream.
    let mut roots_needed: BTreeSet<usize> = planned.iter().map(|p| p.path[0]).collect();
    roots_needed.extend(geoms.iter().map(|g| g.root));
    let roots: Vec<usize> = roots_needed.iter().copied().collect();
    let pos: BTreeMap<usize, usize> = roots.iter().enumerate().map(|(p, r)| (*r, p)).collect();
    let reader = src.batches(&roots, opts.batch_rows)?;
    let batches: Box<dyn Iterator<Item = Result<RecordBatch>> + '_> = match sort_keys.take() {
        Some(keys) => {
            let mut sorter = HilbertSorter::new(keys, opts.layout.sort_memory, spill_dir_of(&target.file_name()?));
            for batch in reader {
                sorter.push(batch?)?;
            }
            Box::new(sorter.finish(opts.batch_rows)?)
        }
        _ => reader,
    };
    // The one writer: every row checked, encoded and boxed once; the indexes of the new
    // table built at the commit from those boxes (issue #31).
    let mut w = target.writer(&t, &opts.layout, total_rows, &opts.progress)?;
    let geo_batches = batches.map(|batch| -> Result<GeoBatch> {
        let batch: RecordBatch = batch?;
        let mut gb = GeoBatch::new();
        for (gi, gp) in geoms.iter().enumerate() {
            let a = batch.column(pos[&gp.root]);
            let decoded = match gp.form {
                // Point WKB to coordinates straight from the borrowed values; a value that
                // is not such a point goes to the writer as WKB, which names it.
                StorageForm::Point { dims, .. } if gp.meta.encoding == Encoding::Wkb && reproj[gi].is_none() => points_in_parallel(a, dims),
                _ => None,
            };
            let v = match decoded {
                Some(v) => v,
                None => values_of(gp, &reproj[gi], a)?,
            };
            gb.geometries.insert(gp.name.clone(), v);
        }
        for p in &planned {
            let mut pp = p.path.clone();
            pp[0] = pos[&pp[0]];
            let a = plan::array_at(&batch, &pp);
            gb.columns.columns.insert(p.name.clone(), p.values(&a)?);
        }
        Ok(gb)
    });
    // Each batch staged while the next is gathered and prepared.
    w.write_all(geo_batches).map_err(|e| match e {
        MarquetError::InvalidWkb { .. } => fail(&path, code::WKB_PARSE, e.to_string()),
        e => e,
    })?;
    report.rows = w.staged_rows();
    w.finish()?;
    let t: &MarquetTable = match target {
        ImportTarget::Append { table, .. } => table,
        ImportTarget::New(_) => &t,
    };

    // Compare what the file declared with what it holds.
    for gp in &geoms {
        let info = t.geometry_column(&gp.name)?;
        let actual = info.types.clone().unwrap_or_default();
        if let Some(decl) = &gp.meta.geometry_types {
            for a in &actual {
                if decl.contains(a) {
                    continue;
                }
                let zm = decl.iter().any(|d| d.kind == a.kind);
                report.findings.push(Finding::new(
                    if zm { code::ZM_MISMATCH } else { code::GEOMETRY_TYPE_MISMATCH },
                    Some(&gp.meta.name),
                    format!(
                        "geometry_types declares [{}] but the column holds {} (GEOMETRY_TYPES written from the data)",
                        decl.iter().map(|t| t.name()).collect::<Vec<_>>().join(", "),
                        a.name()
                    ),
                ));
            }
        }
        if let (Some(decl), Some((b, _, _))) = (&gp.meta.bbox, info.bbox) {
            if !declared_bbox_contains(decl, &b) {
                report.findings.push(Finding::new(
                    code::BBOX_MISMATCH,
                    Some(&gp.meta.name),
                    format!(
                        "declared bbox {decl:?} does not contain the data's box [{}, {}, {}, {}] (BBOX written from the data)",
                        b.xmin, b.ymin, b.xmax, b.ymax
                    ),
                ));
            }
        }
        report.geometry_columns.push(GeometryImport {
            name: gp.name.clone(),
            source: gp.source.clone(),
            form: info.form,
            crs: info.crs.clone(),
            edges: info.edges.clone(),
            types: actual,
            covering: info.covering.clone(),
        });
    }
    report.skipped.extend(skipped);
    if opts.strict {
        if let Some(f) = report.findings.first() {
            return Err(fail(&path, f.code, format!("strict import: {f}")));
        }
    }
    Ok(report)
}

/// The values of geometry column `gp` in one record batch's array `a`, reprojected by `r`.
fn values_of(gp: &GeomPlan, r: &Option<ValuesReprojection>, a: &ArrayRef) -> Result<GeometryValues> {
    let v = match gp.meta.encoding {
        Encoding::Wkb => GeometryValues::Wkb(plan::binaries(a)?),
        Encoding::Native(k) => geoarrow::to_values(&gp.meta.name, k, a)?,
    };
    match r {
        Some(r) => r.apply(v),
        None => Ok(v),
    }
}


fn declared_bbox_contains(decl: &[f64], b: &BBox) -> bool {
    let (xmin, ymin, xmax, ymax) = match decl.len() {
        4 => (decl[0], decl[1], decl[2], decl[3]),
        6 => (decl[0], decl[1], decl[3], decl[4]),
        8 => (decl[0], decl[1], decl[4], decl[5]),
        _ => return true,
    };
    if xmin > xmax {
        return true; // antimeridian form: not checked here
    }
    let tol = |v: f64| 1e-9 * v.abs().max(1.0);
    b.xmin >= xmin - tol(xmin) && b.ymin >= ymin - tol(ymin) && b.xmax <= xmax + tol(xmax) && b.ymax <= ymax + tol(ymax)
}


fn native_point_dims(dt: &DataType) -> Dimensions {
    if let DataType::Struct(fs) = dt {
        let names: Vec<String> = fs.iter().map(|f| f.name().to_ascii_lowercase()).collect();
        let z = names.iter().any(|n| n == "z");
        let m = names.iter().any(|n| n == "m");
        return Dimensions::from_zm(z, m);
    }
    Dimensions::Xy
}

fn point_form_for(pf: PointForm, dims: Dimensions, wkb_len: Option<usize>) -> StorageForm {
    match pf {
        PointForm::Native => StorageForm::Point { dims, f32: false },
        PointForm::FixedWkb => match wkb_len {
            Some(l) => StorageForm::FixedWkb { size: l },
            None => StorageForm::VarWkb,
        },
        PointForm::VarWkb => StorageForm::VarWkb,
    }
}


fn plan_field_sanitized(
    f: &arrow_schema::Field,
    root: usize,
    may_null: bool,
    nested: NestedPolicy,
    out: &mut Vec<Planned>,
    skipped: &mut Vec<(String, String)>,
    used: &mut BTreeSet<String>,
) -> Result<()> {
    let start = out.len();
    plan::plan_field(f, f.name().to_string(), vec![root], vec![f.name().to_string()], may_null, nested, out, skipped)?;
    for p in &mut out[start..] {
        let n = sanitize_name(&p.name, used);
        used.insert(n.clone());
        p.name = n;
    }
    Ok(())
}

fn describe_plan(p: &Planned, src: &DataType) -> String {
    use plan::Plan::*;
    let to = match &p.plan {
        Int(d) => format!("{d}"),
        Float { f32: true, .. } => "float32".into(),
        Float { .. } => "float64".into(),
        Bool { nullable: false } => "HEP001 boolean".into(),
        Bool { nullable: true } => "enum FALSE/TRUE/MISSING (nullable boolean, HEP001 §8.8)".into(),
        FixedStr { size } => {
            format!("fixed-length UTF-8 ({size} bytes), fill 0xFF")
        }
        TextBytes => "list of bytes (UTF-8 text)".into(),
        Binary => "list of bytes".into(),
        Timestamp(_) | Date64 => format!("int64, units {:?}", p.spec_units.as_deref().unwrap_or("")),
        Date32 => "int32, units \"days since 1970-01-01\"".into(),
        ListOf(d) => format!("list column of {d}"),
        ListOfStr => "list column of strings (STRING_VALUES)".into(),
        Categorical(cp) => format!("categorical ({} labels, {} codes, HEP001 §8.7)", cp.labels.len(), cp.dtype),
    };
    let to = if p.json.is_some() { format!("JSON text, {to}") } else { to };
    let src = crate::convert::hub::nested_json::type_name(src);
    if p.path.len() > 1 {
        format!("struct field of {src} flattened -> {to}")
    } else {
        format!("{src} -> {to}")
    }
}


/// Where the external sort spills: next to the output file (same file system, which has
/// room for the output anyway), or the system's temporary directory for an in-memory file.
pub(crate) fn spill_dir(file: &File) -> std::path::PathBuf {
    spill_dir_of(file.filename())
}

/// [`spill_dir`] of the file named `name`.
pub(crate) fn spill_dir_of(name: &str) -> std::path::PathBuf {
    let p = std::path::PathBuf::from(name);
    match p.parent() {
        Some(d) if !d.as_os_str().is_empty() && d.is_dir() => d.to_path_buf(),
        Some(_) if p.is_file() => std::path::PathBuf::from("."),
        _ => std::env::temp_dir(),
    }
}

/// Point WKB values of `a` as coordinates, decoded in slices on rayon's threads (the
/// writer's rayon workers are idle while the next batch is prepared); `None` when a value
/// is not such a point, which the writer then names.
fn points_in_parallel(a: &ArrayRef, dims: Dimensions) -> Option<GeometryValues> {
    let n = a.len();
    let step = n.div_ceil(rayon::current_num_threads().max(1)).max(8_192);
    let offsets: Vec<usize> = (0..n).step_by(step).collect();
    let parts: Vec<GeometryValues> = offsets
        .into_par_iter()
        .map(|off| {
            let s = a.slice(off, step.min(n - off));
            let v = crate::marquet::points_from_wkb(plan::binary_slices(&s)?, s.len(), dims, "", 0);
            v
        })
        .collect::<Result<_>>()
        .ok()?;
    let (mut x, mut y, mut z, mut m, mut valid) = (Vec::with_capacity(n), Vec::with_capacity(n), dims.has_z().then(|| Vec::with_capacity(n)), dims.has_m().then(|| Vec::with_capacity(n)), Vec::with_capacity(n));
    for p in parts {
        let GeometryValues::Points { x: px, y: py, z: pz, m: pm, valid: pv, .. } = p else { return None };
        x.extend_from_slice(&px);
        y.extend_from_slice(&py);
        if let (Some(z), Some(pz)) = (z.as_mut(), pz) {
            z.extend_from_slice(&pz);
        }
        if let (Some(m), Some(pm)) = (m.as_mut(), pm) {
            m.extend_from_slice(&pm);
        }
        match pv {
            Some(v) => valid.extend_from_slice(&v),
            None => valid.resize(x.len(), true),
        }
    }
    Some(GeometryValues::Points { dims, x, y, z, m, valid: Some(valid) })
}

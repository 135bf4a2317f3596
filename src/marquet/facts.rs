//! A table's read facts over either read path (issue #33 item 2).
//!
//! [`TableView`] reads what a query needs to know about a Marquet table — that the group
//! is one (HEP001 §7, HEP002 §5.1), NROWS and GENERATION, a geometry column's attributes
//! and storage, the indexes it links with their validity tokens (HEP001 §12.2), and the
//! R-tree's and block index's checked contents (HEP002 §10, §17) — through
//! [`Objects`], so the same code makes the same checks whether the file is read through
//! libhdf5 ([`crate::h5::objects::LibObjects`]) or by byte range
//! ([`crate::h5::pure::PureFile`]). [`MarquetTable`](super::MarquetTable)'s own readers
//! of these facts call it with libhdf5's objects; the query snapshot
//! ([`super::snapshot::ColumnSnapshot`]) with either.

use crate::error::{MarquetError, Result};
use crate::h5::objects::{Elements, Objects};
use crate::h5::pure::ObjKind;
use crate::h5::{Dtype, Space};
use crate::h5col::search_index::IndexInfo;
use crate::h5col::{parse_version, ColumnKind};
use crate::spec::names;

use super::spatial_index::{self, BlockIndex, IndexState, SpatialIndex, SpatialIndexKind};
use super::types::{self, Crs, Edges};
use super::{GeometryColumnInfo, StorageForm};

/// A Marquet table read through [`Objects`] (see the module documentation).
pub struct TableView<'a> {
    /// The file's objects.
    pub o: &'a dyn Objects,
    /// The table group's absolute path.
    pub path: String,
    interpretable: bool,
}

/// A string token attribute, read leniently (any string storage, R3): `None` when absent
/// or not a string.
pub fn read_token(o: &dyn Objects, path: &str, name: &str) -> Result<Option<String>> {
    Ok(o.attr(path, name)?.and_then(|a| a.as_str().map(|s| s.trim_end_matches(' ').to_string())))
}

/// A scalar integer attribute of any width and signedness, not negative (ruling R3).
fn scalar_uint(o: &dyn Objects, path: &str, name: &str) -> Result<Option<u64>> {
    Ok(o.attr(path, name)?.and_then(|a| match (&a.dtype, &a.space) {
        (Dtype::Int { .. }, Space::Scalar) => a.as_u64(),
        _ => None,
    }))
}

impl<'a> TableView<'a> {
    /// Open the table group at absolute `path` with the checks of
    /// [`crate::h5col::File::table`] and [`super::MarquetTable::open`]: CLASS, VERSION,
    /// NROWS, MARQUET_VERSION.
    pub fn open(o: &'a dyn Objects, path: &str) -> Result<TableView<'a>> {
        if o.kind(path)? != Some(ObjKind::Group) {
            return Err(MarquetError::NotATable { path: path.into(), reason: "no such group".into() });
        }
        match read_token(o, path, names::CLASS)? {
            Some(c) if c == names::COLUMN_TABLE => {}
            Some(c) => return Err(MarquetError::NotATable { path: path.into(), reason: format!("CLASS is {c:?}, not \"COLUMN_TABLE\"") }),
            None => return Err(MarquetError::NotATable { path: path.into(), reason: "no CLASS attribute".into() }),
        }
        let v = read_token(o, path, names::VERSION)?.ok_or_else(|| MarquetError::spec(path, "HEP001 §7.2", "VERSION attribute missing or not a string"))?;
        let (major, _, _) = parse_version(&v).ok_or_else(|| MarquetError::spec(path, "HEP001 §7.2", format!("VERSION {v:?} is not MAJOR.MINOR")))?;
        if major > 1 {
            return Err(MarquetError::UnsupportedVersion { path: path.into(), what: "H5Col VERSION", found: v, supported: "1.x" });
        }
        let mut t = TableView { o, path: path.to_string(), interpretable: true };
        t.nrows()?;
        let Some(mv) = o.attr(path, names::MARQUET_VERSION)? else {
            return Err(MarquetError::NotATable {
                path: path.into(),
                reason: "no MARQUET_VERSION attribute: an H5Col table but not a Marquet table".into(),
            });
        };
        t.interpretable = match mv.as_str().map(|s| s.trim_end_matches(' ')).and_then(parse_version) {
            Some((m, _, _)) => m <= 1,
            None => return Err(MarquetError::spec(path, "HEP002 §5.1", "MARQUET_VERSION is not MAJOR.MINOR")),
        };
        Ok(t)
    }

    /// A view of a table already opened (and checked) through libhdf5.
    pub fn of(o: &'a dyn Objects, path: &str, interpretable: bool) -> TableView<'a> {
        TableView { o, path: path.to_string(), interpretable }
    }

    /// Can this library interpret the geometry columns (MARQUET_VERSION MAJOR ≤ 1, R16)?
    pub fn is_interpretable(&self) -> bool {
        self.interpretable
    }

    /// Full path of a member.
    pub fn member_path(&self, name: &str) -> String {
        if self.path == "/" {
            format!("/{name}")
        } else {
            format!("{}/{name}", self.path)
        }
    }

    /// `NROWS` (HEP001 §7.3): any unsigned integer width (R3).
    pub fn nrows(&self) -> Result<u64> {
        let a = self.o.attr(&self.path, names::NROWS)?.ok_or_else(|| MarquetError::spec(&self.path, "HEP001 §7.3", "NROWS attribute missing"))?;
        match (&a.dtype, &a.space) {
            (Dtype::Int { .. }, Space::Scalar) => a.as_u64().ok_or_else(|| MarquetError::spec(&self.path, "HEP001 §7.3", "NROWS is negative")),
            _ => Err(MarquetError::spec(
                &self.path,
                "HEP001 §7.3",
                format!("NROWS must be a scalar unsigned integer, found {:?} {:?}", a.dtype, a.space),
            )),
        }
    }

    /// `GENERATION`, if present.
    pub fn generation(&self) -> Result<Option<u64>> {
        Ok(self.o.attr(&self.path, names::GENERATION)?.and_then(|a| a.as_u64()))
    }

    /// Names of the geometry columns, primary first (GEOMETRY_COLUMNS).
    pub fn geometry_column_names(&self) -> Result<Vec<String>> {
        let Some((refs, _, _)) = self.o.attr_refs(&self.path, names::GEOMETRY_COLUMNS)? else { return Ok(Vec::new()) };
        refs.into_iter()
            .map(|r| {
                r.map(|p| p.rsplit('/').next().unwrap_or_default().to_string())
                    .ok_or_else(|| MarquetError::spec(&self.path, "HEP002 §5.2", "GEOMETRY_COLUMNS holds a null or dangling reference"))
            })
            .collect()
    }

    /// What member `name` is as a column (HEP001 §8, §9), `None` when it is not one.
    pub fn kind_of(&self, name: &str) -> Result<Option<ColumnKind>> {
        let p = self.member_path(name);
        match self.o.kind(&p)? {
            None => Ok(None),
            Some(ObjKind::Group) => Ok((read_token(self.o, &p, names::CLASS)?.as_deref() == Some(names::LIST_COLUMN)).then_some(ColumnKind::List)),
            Some(ObjKind::Dataset) => Ok(match self.o.dataset(&p) {
                Ok(d) if d.info.dims.len() == 1 => Some(ColumnKind::Dataset),
                _ => None,
            }),
        }
    }

    fn require_interpretable(&self) -> Result<()> {
        if self.interpretable {
            return Ok(());
        }
        Err(MarquetError::UnsupportedVersion {
            path: self.path.clone(),
            what: "MARQUET_VERSION",
            found: read_token(self.o, &self.path, names::MARQUET_VERSION)?.unwrap_or_default(),
            supported: "1.x",
        })
    }

    /// Geometry column `name`'s attributes (HEP002 §6, §8).
    pub fn geometry_column(&self, name: &str) -> Result<GeometryColumnInfo> {
        self.require_interpretable()?;
        let path = self.member_path(name);
        let kind = self.kind_of(name)?;
        let o = self.o;
        let attr = |n: &str| o.attr(&path, n);
        let enc = read_token(o, &path, names::GEOMETRY_ENCODING)?.ok_or_else(|| MarquetError::spec(&path, "HEP002 §6.2", "GEOMETRY_ENCODING missing"))?;
        let form = match (enc.as_str(), kind) {
            (names::ENCODING_WKB, Some(ColumnKind::List)) => StorageForm::VarWkb,
            (names::ENCODING_WKB, Some(ColumnKind::Dataset)) => match &o.dataset(&path)?.info.dtype {
                Dtype::Opaque { size, tag } if tag == names::OPAQUE_TAG_WKB => StorageForm::FixedWkb { size: *size },
                other => return Err(MarquetError::spec(&path, "HEP002 §12 req 5", format!("WKB column dataset must be opaque tagged \"WKB\", found {other:?}"))),
            },
            (names::ENCODING_POINT, Some(ColumnKind::Dataset)) => {
                let ds = o.dataset(&path)?;
                let dt = &ds.info.dtype;
                let (dims, f32) = types::point_layout(dt).ok_or_else(|| MarquetError::spec(&path, "HEP002 §12 req 10", format!("not a point compound: {dt}")))?;
                StorageForm::Point { dims, f32 }
            }
            (e, k) => {
                if e != names::ENCODING_WKB && e != names::ENCODING_POINT {
                    return Err(MarquetError::Unsupported(format!("{path}: GEOMETRY_ENCODING {e:?} is not implemented")));
                }
                return Err(MarquetError::spec(&path, "HEP002 §12 req 5", format!("encoding {e} on a {k:?} object")));
            }
        };
        let types = match attr(names::GEOMETRY_TYPES)? {
            Some(a) => {
                let v = types::read_geometry_types(&a).map_err(|m| MarquetError::spec(&path, "HEP002 §6.3", m))?;
                (!v.is_empty()).then_some(v)
            }
            None => return Err(MarquetError::spec(&path, "HEP002 §6.1", "GEOMETRY_TYPES missing")),
        };
        let bbox = attr(names::BBOX)?.and_then(|a| types::decode_box(&a.dtype, &a.data));
        let crs = match attr(names::CRS)? {
            None => Crs::Default,
            Some(a) if a.space == Space::Null => Crs::Unknown,
            Some(a) => match a.as_str() {
                Some(s) => Crs::ProjJson(s.to_string()),
                None => return Err(MarquetError::spec(&path, "HEP002 §8.1", "CRS is not a scalar string")),
            },
        };
        let epoch = attr(names::EPOCH)?.and_then(|a| a.as_f64());
        let edges = match attr(names::EDGES)? {
            None => Edges::Planar,
            Some(a) => match a.enum_names().and_then(|v| v.into_iter().next()).flatten() {
                Some(n) => Edges::from_name(&n),
                None => Edges::Unknown("?".into()),
            },
        };
        let orientation_ccw = match attr(names::ORIENTATION)? {
            Some(a) => a.enum_names().and_then(|v| v.into_iter().next()).flatten().as_deref() == Some("COUNTERCLOCKWISE"),
            None => false,
        };
        let covering = match o.attr_refs(&path, names::COVERING)? {
            Some((r, _, _)) => r.into_iter().next().flatten().map(|p| p.rsplit('/').next().unwrap_or_default().to_string()),
            None => None,
        };
        Ok(GeometryColumnInfo { name: name.to_string(), path, form, types, bbox, crs, epoch, edges, orientation_ccw, covering })
    }

    /// A column dataset, checked to be one.
    pub fn column(&self, name: &str) -> Result<Elements> {
        match self.kind_of(name)? {
            Some(ColumnKind::Dataset) => self.o.dataset(&self.member_path(name)),
            Some(ColumnKind::List) => Err(MarquetError::InvalidArgument(format!("{} is a list column; use list_column()", self.member_path(name)))),
            None => Err(MarquetError::InvalidArgument(format!("{} is not a column", self.member_path(name)))),
        }
    }

    /// The top level of list column `name` with a dataset leaf: `OFFSETS`, `MASK` (if
    /// any) and `VALUES`, with the checks of HEP001 §9.1–9.2 that
    /// [`crate::h5col::Table::list_column`] makes on that level. `Ok(None)` when `VALUES`
    /// is itself a list (a nested or string list).
    pub fn list_leaf(&self, name: &str) -> Result<Option<(Elements, Option<Elements>, Elements)>> {
        let path = self.member_path(name);
        let o = self.o;
        let class = read_token(o, &path, names::CLASS)?.unwrap_or_default();
        if class != names::LIST_COLUMN {
            return Err(MarquetError::spec(&path, "HEP001 §9.1", format!("CLASS is {class:?}, not LIST_COLUMN")));
        }
        match read_token(o, &path, names::KIND)? {
            Some(k) if k == names::KIND_OFFSETS => {}
            Some(k) => return Err(MarquetError::Unsupported(format!("{path}: list column KIND {k:?} is not implemented"))),
            None => return Err(MarquetError::spec(&path, "HEP001 §9.1", "list column without KIND")),
        }
        let p = |m: &str| format!("{path}/{m}");
        if o.kind(&p(names::OFFSETS))?.is_none() {
            return Err(MarquetError::spec(&path, "HEP001 §9.2", "OFFSETS member missing"));
        }
        let offsets = o.dataset(&p(names::OFFSETS))?;
        if offsets.info.dims.len() != 1 || !matches!(offsets.info.dtype, Dtype::Int { size: 8, signed: false, .. }) {
            return Err(MarquetError::spec(p(names::OFFSETS), "HEP001 §9.2", "OFFSETS must be a rank-1 uint64 dataset"));
        }
        let mask = if o.kind(&p(names::MASK))?.is_some() {
            let m = o.dataset(&p(names::MASK))?;
            if !m.info.dtype.is_boolean() || m.info.dims.len() != 1 {
                return Err(MarquetError::spec(p(names::MASK), "HEP001 §9.2", "MASK must be a rank-1 boolean dataset"));
            }
            Some(m)
        } else {
            None
        };
        let vp = p(names::VALUES);
        match o.kind(&vp)? {
            None => Err(MarquetError::spec(&path, "HEP001 §9.2", format!("{} member missing", names::VALUES))),
            Some(ObjKind::Group) => Ok(None),
            Some(ObjKind::Dataset) => {
                let v = o.dataset(&vp)?;
                if v.info.dims.len() != 1 {
                    return Err(MarquetError::spec(vp, "HEP001 §9.2", "VALUES must be rank 1"));
                }
                if matches!(v.info.dtype, Dtype::VarString { .. }) {
                    return Err(MarquetError::spec(vp, "HEP001 §9.5", "variable-length datatype below a list column"));
                }
                Ok(Some((offsets, mask, v)))
            }
        }
    }

    /// Refuse a table whose column `name` holds fewer than `n` rows (the check of
    /// [`crate::h5col::Table::check_rows_held`], issue #19, docs/FAULTS.md F4).
    pub fn check_rows_held(&self, name: &str, n: u64) -> Result<()> {
        let (held, path) = match self.kind_of(name)? {
            Some(ColumnKind::Dataset) => (self.column(name)?.info.dims[0], self.member_path(name)),
            Some(ColumnKind::List) => {
                let op = format!("{}/{}", self.member_path(name), names::OFFSETS);
                let len = self.o.dataset(&op)?.info.dims.first().copied().unwrap_or(0);
                (len.saturating_sub(1), self.member_path(name))
            }
            None => return Ok(()),
        };
        crate::h5col::guard::refuse_unheld(path, held, n)
    }

    /// The indexes linked from column `name` (HEP001 §12), with KIND and tokens.
    pub fn indexes_of(&self, name: &str) -> Result<Vec<IndexInfo>> {
        let Some((refs, _, _)) = self.o.attr_refs(&self.member_path(name), names::SEARCH_INDEX_LIST)? else { return Ok(Vec::new()) };
        let mut out = Vec::new();
        // A reference to an unlinked object resolves to an empty path: it names no index.
        for p in refs.into_iter().flatten().filter(|p| !p.is_empty()) {
            out.push(IndexInfo {
                kind: read_token(self.o, &p, names::KIND)?,
                source_generation: scalar_uint(self.o, &p, names::SOURCE_GENERATION)?,
                source_nrows: scalar_uint(self.o, &p, names::SOURCE_NROWS)?,
                path: p,
                column: name.to_string(),
            });
        }
        Ok(out)
    }

    /// The Marquet indexes of geometry column `col` with their validity (HEP001 §12.2).
    pub fn spatial_indexes(&self, col: &str) -> Result<Vec<SpatialIndex>> {
        let g = self.generation()?;
        let n = self.nrows()?;
        Ok(self
            .indexes_of(col)?
            .into_iter()
            .filter_map(|info| {
                let kind = SpatialIndexKind::from_kind(info.kind.as_deref())?;
                let valid = info.is_valid(g, n);
                Some(SpatialIndex { kind, info, valid })
            })
            .collect())
    }

    /// The block index among `all`, checked and read (HEP002 §10.3, §17).
    pub fn open_block_index_in(&self, all: &[SpatialIndex]) -> Result<IndexState<BlockIndex>> {
        let n = self.nrows()?;
        spatial_index::open_block_index_with(self.o, all, n)
    }

    /// The R-tree among `all`, checked (HEP002 §10.4): its path, `num_items`, `node_size`
    /// and dataset.
    pub fn open_rtree_in(&self, all: &[SpatialIndex]) -> Result<IndexState<spatial_index::RTreeIndex>> {
        spatial_index::open_rtree_with(self.o, all)
    }
}

//! Streaming readers for geometry and covering columns: a batch of rows at a time, so the
//! validator's memory does not grow with the table (list columns: one run of `OFFSETS` and
//! the `VALUES` bytes it spans, capped at [`super::DEFAULT_BATCH_BYTES`]).

use crate::error::Result;
use crate::h5::{self, Dtype, Hid};
use crate::spec::BBox;

/// How a geometry column stores its rows, as the reader needs it.
#[derive(Debug, Clone)]
pub(crate) enum Form {
    Var,
    Fixed { size: usize, fill: Option<Vec<u8>> },
    Point { dtype: Dtype, fill: Option<Vec<u8>> },
}

/// One row of a batch.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Item {
    Null,
    /// Not readable as a row (bad offsets or mask value): reported by HEP001 req 10.
    Skip,
    /// A non-null list row with an empty slice (HEP002 req 8).
    EmptySlice,
    /// `bytes[a..b]` holds the row's WKB value.
    Wkb(usize, usize),
    /// Point coordinates x, y, z, m (NaN where absent).
    Point([f64; 4]),
}

pub(crate) struct Batch {
    pub start: u64,
    pub bytes: Vec<u8>,
    pub items: Vec<Item>,
}

impl Batch {
    pub(crate) fn end(&self) -> u64 {
        self.start + self.items.len() as u64
    }
    pub(crate) fn wkb(&self, i: usize) -> Option<&[u8]> {
        match self.items.get(i) {
            Some(Item::Wkb(a, b)) => self.bytes.get(*a..*b),
            _ => None,
        }
    }
}

/// Reads a geometry column batch by batch.
pub(crate) struct Reader {
    form: Form,
    path: String,
    main: Hid,
    mask: Option<Hid>,
    values: Option<Hid>,
    offsets_len: u64,
    values_len: u64,
    nrows: u64,
    next: u64,
    batch_rows: u64,
    batch_bytes: u64,
    /// Largest offset seen so far: a slice starting below it overlaps an earlier row (the
    /// offsets decreased), so the row is skipped (HEP001 req 10 reports it).
    max_off: u64,
    /// Rows delivered as [`Item::Skip`].
    pub skipped: u64,
}

impl Reader {
    /// Open the column `name` of table `grp`. Rows `[0, nrows)`, clamped to what exists.
    pub(crate) fn open(grp: hdf5_sys::h5i::hid_t, name: &str, path: &str, form: Form, nrows: u64, batch_rows: u64) -> Result<Reader> {
        let (main, mask, values, offsets_len, values_len, nrows) = match &form {
            Form::Var => {
                let g = h5::object_open(grp, name)?;
                let offs = h5::dataset_open(g.id(), crate::spec::names::OFFSETS)?;
                let oinfo = h5::dataset_info(offs.id(), path)?;
                let mask = if h5::link_exists(g.id(), crate::spec::names::MASK)? {
                    let m = h5::dataset_open(g.id(), crate::spec::names::MASK)?;
                    let mi = h5::dataset_info(m.id(), path)?;
                    if mi.dtype.is_boolean() && mi.dims.len() == 1 {
                        Some((m, mi.dims[0]))
                    } else {
                        None
                    }
                } else {
                    None
                };
                let vals = h5::dataset_open(g.id(), crate::spec::names::VALUES)?;
                let vinfo = h5::dataset_info(vals.id(), path)?;
                let olen = oinfo.dims.first().copied().unwrap_or(0);
                let mut n = nrows.min(olen.saturating_sub(1));
                if let Some((_, ml)) = &mask {
                    n = n.min(*ml);
                }
                (offs, mask.map(|m| m.0), Some(vals), olen, vinfo.dims.first().copied().unwrap_or(0), n)
            }
            Form::Fixed { .. } | Form::Point { .. } => {
                let d = h5::dataset_open(grp, name)?;
                let info = h5::dataset_info(d.id(), path)?;
                let n = nrows.min(info.dims.first().copied().unwrap_or(0));
                (d, None, None, 0, 0, n)
            }
        };
        Ok(Reader {
            form,
            path: path.to_string(),
            main,
            mask,
            values,
            offsets_len,
            values_len,
            nrows,
            next: 0,
            batch_rows: batch_rows.max(1),
            batch_bytes: super::DEFAULT_BATCH_BYTES,
            max_off: 0,
            skipped: 0,
        })
    }

    /// Rows the reader will deliver (`NROWS` clamped to the stored extents).
    pub(crate) fn rows(&self) -> u64 {
        self.nrows
    }

    /// The next batch, or `None` at the end.
    pub(crate) fn next_batch(&mut self) -> Result<Option<Batch>> {
        if self.next >= self.nrows {
            return Ok(None);
        }
        let s = self.next;
        let mut e = s.saturating_add(self.batch_rows).min(self.nrows);
        let b = match self.form.clone() {
            Form::Var => loop {
                match self.var_batch(s, e)? {
                    Some(b) => break b,
                    None => e = s + (e - s) / 2,
                }
            },
            Form::Fixed { size, fill } => {
                let bytes = h5::dataset_read(self.main.id(), s, e - s, &Dtype::Opaque { size, tag: "WKB".into() }, &self.path)
                    .or_else(|_| {
                        let info = h5::dataset_info(self.main.id(), &self.path)?;
                        h5::dataset_read(self.main.id(), s, e - s, &info.dtype.to_le(), &self.path)
                    })?;
                let items = bytes
                    .chunks_exact(size.max(1))
                    .enumerate()
                    .map(|(i, el)| if fill.as_deref() == Some(el) { Item::Null } else { Item::Wkb(i * size, (i + 1) * size) })
                    .collect();
                Batch { start: s, bytes, items }
            }
            Form::Point { dtype, fill } => {
                let mem = dtype.to_le();
                let bytes = h5::dataset_read(self.main.id(), s, e - s, &mem, &self.path)?;
                let Dtype::Compound { fields, size } = &mem else { return Ok(None) };
                let items = bytes
                    .chunks_exact((*size).max(1))
                    .map(|el| {
                        if fill.as_deref() == Some(el) {
                            return Item::Null;
                        }
                        let mut c = [f64::NAN; 4];
                        for f in fields {
                            let k = match f.name.as_str() {
                                "x" => 0,
                                "y" => 1,
                                "z" => 2,
                                "m" => 3,
                                _ => continue,
                            };
                            let raw = el.get(f.offset..f.offset + f.dtype.size());
                            c[k] = match (raw, &f.dtype) {
                                (Some(r), Dtype::Float { size: 8, .. }) => f64::from_le_bytes(r.try_into().unwrap_or([0; 8])),
                                (Some(r), Dtype::Float { size: 4, .. }) => f32::from_le_bytes(r.try_into().unwrap_or([0; 4])) as f64,
                                _ => f64::NAN,
                            };
                        }
                        Item::Point(c)
                    })
                    .collect();
                Batch { start: s, bytes: Vec::new(), items }
            }
        };
        self.next = b.end().max(s + 1);
        self.skipped += b.items.iter().filter(|i| matches!(i, Item::Skip)).count() as u64;
        Ok(Some(b))
    }

    /// A batch of list rows `[s, e)`, or `None` when its bytes exceed the cap (retry smaller).
    fn var_batch(&mut self, s: u64, e: u64) -> Result<Option<Batch>> {
        let cnt = e - s;
        let offs: Vec<u64> = h5::dataset_read(self.main.id(), s, (cnt + 1).min(self.offsets_len - s), &Dtype::U64, &self.path)?
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
            .collect();
        let mask = match &self.mask {
            Some(m) => Some(h5::dataset_read(m.id(), s, cnt, &Dtype::I8, &self.path)?),
            None => None,
        };
        let mut items = Vec::with_capacity(cnt as usize);
        let (mut lo, mut hi) = (u64::MAX, 0u64);
        let mut max_off = self.max_off;
        for i in 0..cnt as usize {
            let m = mask.as_ref().map(|m| m[i] as i8);
            let (a, b) = match (offs.get(i), offs.get(i + 1)) {
                (Some(a), Some(b)) => (*a, *b),
                _ => {
                    items.push(Item::Skip);
                    continue;
                }
            };
            let overlaps = a < max_off;
            max_off = max_off.max(a).max(b);
            let it = match m {
                Some(0) => Item::Null,
                Some(1) | None => {
                    if a > b || b > self.values_len || overlaps {
                        Item::Skip
                    } else if a == b {
                        Item::EmptySlice
                    } else {
                        lo = lo.min(a);
                        hi = hi.max(b);
                        Item::Wkb(a as usize, b as usize)
                    }
                }
                Some(_) => Item::Skip,
            };
            items.push(it);
        }
        if hi > lo && hi - lo > self.batch_bytes && cnt > 1 {
            return Ok(None);
        }
        self.max_off = max_off;
        if lo >= hi {
            return Ok(Some(Batch { start: s, bytes: Vec::new(), items }));
        }
        if hi - lo > self.batch_bytes && cnt > 1 {
            return Ok(None);
        }
        let Some(values) = &self.values else { return Ok(None) };
        let bytes = h5::dataset_read(values.id(), lo, hi - lo, &Dtype::U8, &self.path)?;
        for it in items.iter_mut() {
            if let Item::Wkb(a, b) = it {
                *a -= lo as usize;
                *b -= lo as usize;
            }
        }
        Ok(Some(Batch { start: s, bytes, items }))
    }
}

/// A covering column's rows: the box, or `None` for the fill value.
pub(crate) struct CoverReader {
    ds: Hid,
    path: String,
    mem: Dtype,
    fill: Option<Vec<u8>>,
}

impl CoverReader {
    pub(crate) fn open(grp: hdf5_sys::h5i::hid_t, name: &str, path: &str, dtype: &Dtype, fill: Option<Vec<u8>>) -> Result<CoverReader> {
        Ok(CoverReader { ds: h5::dataset_open(grp, name)?, path: path.to_string(), mem: dtype.to_le(), fill })
    }

    /// Rows `[s, e)` (clamped to the extent): `None` = fill value (null).
    pub(crate) fn read(&self, s: u64, e: u64) -> Result<Vec<Option<BBox>>> {
        let info = h5::dataset_info(self.ds.id(), &self.path)?;
        let e = e.min(info.dims.first().copied().unwrap_or(0));
        if e <= s {
            return Ok(Vec::new());
        }
        let bytes = h5::dataset_read(self.ds.id(), s, e - s, &self.mem, &self.path)?;
        Ok(bytes
            .chunks_exact(self.mem.size().max(1))
            .map(|el| {
                if self.fill.as_deref() == Some(el) {
                    None
                } else {
                    crate::marquet::types::decode_box(&self.mem, el).map(|b| b.0)
                }
            })
            .collect())
    }
}

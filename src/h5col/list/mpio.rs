//! Collective appends to a list column of a parallel file (feature `mpio`,
//! docs/PARALLEL.md): every rank passes its own entries; entry and element offsets come
//! from `MPI_Exscan`, each rank writes its slab of every member, leaf first, then MASK,
//! then OFFSETS (HEP001 §12.3 step 3 holds for the whole collective operation).

use super::{Level, LevelValues, ListArray, ListColumn, ListValues};
use crate::error::{MarquetError, Result};
use crate::h5::{self, mpio, mpio::MPI_Comm, Dtype};
use crate::h5col::Array;
use crate::spec::names;

impl Level {
    /// This rank's entries `v` go after the first `l_old` entries and after the entries of
    /// the lower ranks (collective).
    fn append_collective(&mut self, l_old: u64, v: &ListArray, comm: MPI_Comm) -> Result<()> {
        let k = v.len() as u64;
        let e_off = mpio::exscan_sum_u64(comm, k)?;
        let mut tot = [k];
        mpio::allreduce_u64(comm, &mut tot, mpio::Reduce::Sum)?;
        let k_all = tot[0];
        let base = self.read_offsets(l_old, l_old)?[0];
        let c = v.child_len();
        let c_off = mpio::exscan_sum_u64(comm, c)?;
        let mut ctot = [c];
        mpio::allreduce_u64(comm, &mut ctot, mpio::Reduce::Sum)?;
        match (&mut self.values, &v.values) {
            (LevelValues::Leaf { ds, info }, ListValues::Leaf(a)) => {
                let p = format!("{}/{}", self.path, names::VALUES);
                let need = base + ctot[0];
                if h5::dataset_info(ds.id(), &p)?.dims[0] < need {
                    h5::dataset_set_len(ds.id(), need, &p)?;
                }
                mpio::write_slab(ds.id(), base + c_off, &info.dtype.to_le(), &a.bytes, &p)?;
            }
            (LevelValues::Nested(l), ListValues::List(inner)) => l.append_collective(base, inner, comm)?,
            (LevelValues::Strings(l), ListValues::Strings { offsets, chars, mask }) => {
                let inner = ListArray {
                    offsets: offsets.clone(),
                    mask: mask.clone(),
                    values: ListValues::Leaf(Array { dtype: Dtype::U8, bytes: chars.clone() }),
                };
                l.append_collective(base, &inner, comm)?;
            }
            _ => return Err(MarquetError::InvalidArgument(format!("{}: list values do not match", self.path))),
        }
        // MASK: created (by all ranks alike) when any rank has the first nulls.
        let mut any = [v.mask.as_ref().is_some_and(|m| m.iter().any(|p| !p)) as u64];
        mpio::allreduce_u64(comm, &mut any, mpio::Reduce::BitOr)?;
        if self.mask.is_none() && any[0] != 0 {
            let m = h5::dataset_create(self.g.id(), names::MASK, &self.new_mask_spec(l_old)?)?;
            h5::dataset_write(m.id(), 0, &Dtype::hep001_bool(), &vec![1u8; l_old as usize], names::MASK)?;
            self.mask = Some(m);
        }
        if let Some(m) = &self.mask {
            let p = format!("{}/{}", self.path, names::MASK);
            if h5::dataset_info(m.id(), &p)?.dims[0] < l_old + k_all {
                h5::dataset_set_len(m.id(), l_old + k_all, &p)?;
            }
            let flags: Vec<u8> = match &v.mask {
                Some(f) => f.iter().map(|&x| x as u8).collect(),
                None => vec![1u8; k as usize],
            };
            mpio::write_slab(m.id(), l_old + e_off, &Dtype::hep001_bool(), &flags, &p)?;
        }
        // OFFSETS last.
        let p = format!("{}/{}", self.path, names::OFFSETS);
        if self.offsets_len()? < l_old + k_all + 1 {
            h5::dataset_set_len(self.offsets.id(), l_old + k_all + 1, &p)?;
        }
        let start = base + c_off;
        let mut bytes = Vec::with_capacity(8 * k as usize);
        for o in &v.offsets[1..] {
            bytes.extend_from_slice(&(start + o).to_le_bytes());
        }
        mpio::write_slab(self.offsets.id(), l_old + 1 + e_off, &Dtype::U64, &bytes, &p)
    }
}

impl ListColumn {
    /// Collective [`ListColumn::append_rows`]: this rank's rows after row `n_old` and after
    /// the rows of the lower ranks.
    pub(crate) fn append_rows_collective(&self, n_old: u64, v: &ListArray, comm: MPI_Comm) -> Result<()> {
        let mut lvl = Level::open(h5::object_open(self.top.g.id(), ".")?, self.path.clone(), 0)?;
        lvl.append_collective(n_old, v, comm)
    }
}

//! How geometry data and spatial index datasets are compressed: one choice, [`Compression`],
//! turned into the HDF5 filter list of each kind of dataset.
//!
//! The default is shuffle + deflate (HDF5 filters 2 and 1), which every HDF5 build reads
//! without plugins — h5py without hdf5plugin, h5dump, MATLAB, HDFView, the netCDF library —
//! so HEP002 §1.1's promise that scientists reach the data "through the same HDF5 library
//! they already use" holds for files our writers produce by default. Zstandard (the
//! registered filter 32015) is one option away: smaller and faster to decode, but other
//! readers need the plugin (`pip install hdf5plugin` for h5py, `HDF5_PLUGIN_PATH` for C
//! programs and h5dump). Files with either filter read the same through this library.
//!
//! Our own write and read paths encode and decode deflate with libdeflate on all cores
//! (`h5::codec`, `h5::direct`); measurements behind [`DEFAULT_DEFLATE_LEVEL`] are in
//! docs/PERFORMANCE.md ("Deflate by default").

use std::fmt;
use std::str::FromStr;

use crate::h5::{codec, Filter};

/// The deflate level of [`Compression::default`]. Chosen by `marquet bench` (write time,
/// file size, full read and query time) against levels 1 and 6 and zstd 1 / 3: see
/// docs/PERFORMANCE.md, "Deflate by default".
pub const DEFAULT_DEFLATE_LEVEL: u32 = 4;

/// The zstd level of [`Compression::zstd`] (`--compression zstd`): level 1 against level 3
/// on the issue #10 data wrote 200,000 polygons in 0.53 s instead of 0.68 s for 0.3 % more
/// bytes (docs/PERFORMANCE.md).
pub const DEFAULT_ZSTD_LEVEL: u32 = 1;

/// How geometry columns (point, fixed-WKB, WKB `VALUES` and `OFFSETS`), covering columns
/// and PACKED_RTREE index datasets are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Compression {
    /// HDF5's deflate filter (1) at `level` 0–9 (levels above 9 are written as 9), after
    /// shuffle for multi-byte elements. Readable by every HDF5.
    Deflate {
        /// zlib compression level, 0–9.
        level: u32,
    },
    /// The registered Zstandard filter 32015 at `level` (clamped to 1..=22 by the codec),
    /// after shuffle for multi-byte elements. Other HDF5 readers need the zstd plugin.
    Zstd {
        /// zstd compression level, 1–22.
        level: u32,
    },
    /// No filters at all (no shuffle either: it only helps a compressor).
    None,
}

impl Default for Compression {
    /// Shuffle + deflate at [`DEFAULT_DEFLATE_LEVEL`]: readable by every HDF5.
    fn default() -> Self {
        Compression::Deflate { level: DEFAULT_DEFLATE_LEVEL }
    }
}

/// The kind of elements a dataset holds, which decides whether shuffle goes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Elements {
    /// One-byte elements (WKB bytes of variable-length `VALUES`): shuffle would be a no-op.
    Bytes,
    /// Multi-byte numbers (point coordinates, fixed-length WKB, offsets, boxes, R-tree
    /// entries): shuffle groups the bytes of each number by significance first.
    Numbers,
}

impl Compression {
    /// Deflate at [`DEFAULT_DEFLATE_LEVEL`] (the default).
    pub const fn deflate() -> Compression {
        Compression::Deflate { level: DEFAULT_DEFLATE_LEVEL }
    }

    /// Zstandard at [`DEFAULT_ZSTD_LEVEL`].
    pub const fn zstd() -> Compression {
        Compression::Zstd { level: DEFAULT_ZSTD_LEVEL }
    }

    /// The HDF5 filter pipeline for datasets of `elements`, in pipeline order.
    pub fn filters(self, elements: Elements) -> Vec<Filter> {
        let compress = match self {
            Compression::Deflate { level } => Filter::Deflate(level.min(9)),
            Compression::Zstd { level } => Filter::Zstd(level),
            Compression::None => return Vec::new(),
        };
        match elements {
            Elements::Bytes => vec![compress],
            Elements::Numbers => vec![Filter::Shuffle, compress],
        }
    }

    /// Can every HDF5 build read data compressed this way, without plugins?
    pub fn plain_hdf5_readable(self) -> bool {
        !matches!(self, Compression::Zstd { .. })
    }

    /// The compression a stored filter pipeline uses: shuffle is ignored, one deflate or
    /// zstd filter gives its level, no filter gives [`Compression::None`]; `None` for
    /// anything else (other filters, or several compressors).
    pub fn from_filters(filters: &[Filter]) -> Option<Compression> {
        let mut found = Compression::None;
        for f in filters {
            let c = match f {
                Filter::Shuffle | Filter::Fletcher32 => continue,
                Filter::Deflate(l) => Compression::Deflate { level: *l },
                Filter::Zstd(l) => Compression::Zstd { level: *l },
                Filter::Other(codec::FILTER_ZSTD, cd) => Compression::Zstd { level: codec::zstd_level(cd) as u32 },
                Filter::Other(..) => return None,
            };
            if found != Compression::None {
                return None;
            }
            found = c;
        }
        Some(found)
    }
}

/// `filters` with HDF5's Fletcher-32 checksum filter appended (last: it checks the
/// stored, compressed bytes) when `on` and not already there. What it protects:
/// docs/FAULTS.md F8.
pub fn checksummed(mut filters: Vec<Filter>, on: bool) -> Vec<Filter> {
    if on && !filters.contains(&Filter::Fletcher32) {
        filters.push(Filter::Fletcher32);
    }
    filters
}

impl fmt::Display for Compression {
    /// `deflate:4`, `zstd:1` or `none`: the form [`FromStr`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Compression::Deflate { level } => write!(f, "deflate:{level}"),
            Compression::Zstd { level } => write!(f, "zstd:{level}"),
            Compression::None => f.write_str("none"),
        }
    }
}

impl FromStr for Compression {
    type Err = String;

    /// `deflate`, `zstd` or `none`, optionally with a level: `deflate:6` (0–9), `zstd:3`
    /// (1–22). Without a level: [`DEFAULT_DEFLATE_LEVEL`] / [`DEFAULT_ZSTD_LEVEL`].
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (name, level) = match s.split_once(':') {
            Some((n, l)) => (n, Some(l.parse::<u32>().map_err(|_| format!("compression level {l:?} is not a number"))?)),
            None => (s, None),
        };
        match (name.to_ascii_lowercase().as_str(), level) {
            ("deflate" | "gzip", None) => Ok(Compression::deflate()),
            ("deflate" | "gzip", Some(l @ 0..=9)) => Ok(Compression::Deflate { level: l }),
            ("zstd", None) => Ok(Compression::zstd()),
            ("zstd", Some(l @ 1..=22)) => Ok(Compression::Zstd { level: l }),
            ("none", None) => Ok(Compression::None),
            ("deflate" | "gzip", Some(l)) => Err(format!("deflate level {l} is not 0-9")),
            ("zstd", Some(l)) => Err(format!("zstd level {l} is not 1-22")),
            _ => Err(format!("unknown compression {s:?}: use deflate[:0-9], zstd[:1-22] or none")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_is_plain_hdf5_deflate_with_shuffle_for_numbers() {
        let c = Compression::default();
        assert_eq!(c, Compression::Deflate { level: DEFAULT_DEFLATE_LEVEL });
        assert!(c.plain_hdf5_readable());
        assert_eq!(c.filters(Elements::Numbers), vec![Filter::Shuffle, Filter::Deflate(DEFAULT_DEFLATE_LEVEL)]);
        assert_eq!(c.filters(Elements::Bytes), vec![Filter::Deflate(DEFAULT_DEFLATE_LEVEL)]);
        assert_eq!(Compression::zstd().filters(Elements::Numbers), vec![Filter::Shuffle, Filter::Zstd(DEFAULT_ZSTD_LEVEL)]);
        assert!(!Compression::zstd().plain_hdf5_readable());
        assert_eq!(Compression::None.filters(Elements::Numbers), Vec::<Filter>::new());
        assert_eq!(Compression::Deflate { level: 12 }.filters(Elements::Bytes), vec![Filter::Deflate(9)]);
    }

    #[test]
    fn parses_and_prints() {
        for (s, c) in [
            ("deflate", Compression::deflate()),
            ("deflate:6", Compression::Deflate { level: 6 }),
            ("gzip:1", Compression::Deflate { level: 1 }),
            ("zstd", Compression::zstd()),
            ("ZSTD:3", Compression::Zstd { level: 3 }),
            ("none", Compression::None),
        ] {
            assert_eq!(s.parse::<Compression>(), Ok(c), "{s}");
            assert_eq!(c.to_string().parse::<Compression>(), Ok(c));
        }
        assert_eq!(Compression::Deflate { level: 6 }.to_string(), "deflate:6");
        for bad in ["deflate:10", "zstd:0", "zstd:23", "lz4", "none:1", "deflate:x", ""] {
            assert!(bad.parse::<Compression>().is_err(), "{bad}");
        }
    }

    #[test]
    fn recognised_from_stored_filters() {
        assert_eq!(Compression::from_filters(&[Filter::Shuffle, Filter::Deflate(6)]), Some(Compression::Deflate { level: 6 }));
        assert_eq!(Compression::from_filters(&[Filter::Zstd(3)]), Some(Compression::Zstd { level: 3 }));
        assert_eq!(Compression::from_filters(&[Filter::Other(codec::FILTER_ZSTD, vec![])]), Some(Compression::Zstd { level: 3 }));
        assert_eq!(Compression::from_filters(&[]), Some(Compression::None));
        assert_eq!(Compression::from_filters(&[Filter::Shuffle]), Some(Compression::None));
        assert_eq!(Compression::from_filters(&[Filter::Other(307, vec![9])]), None);
        assert_eq!(Compression::from_filters(&[Filter::Deflate(1), Filter::Zstd(1)]), None);
    }
}

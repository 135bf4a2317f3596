//! The Bloom-filter arithmetic of HEP001 §11.7 (`CHUNK_BLOOM`), without I/O: canonical
//! bytes, `MurmurHash3_x64_128`, and Kirsch–Mitzenmacher double hashing.
//!
//! Choices where HEP001 §11.7 can be read two ways (also in README "H5Col search
//! indexes"):
//!
//! * **Which half is `h_a`.** "The low 64 bits of the 128-bit output" is read as the
//!   reference implementation's first output word `h1` (the 128-bit value taken
//!   little-endian, as `mmh3.hash128(..., signed=False)` and the `murmur3` crate return
//!   it); `h_b` is `h2`. Pinned by the unit test `tests::murmur3_reference_vectors`.
//! * **Overflow in `h_a + i·h_b`.** HEP001 does not say whether the sum is exact or
//!   wrapping 64-bit; the two differ only when `m_bits` is not a power of two. Our
//!   producer therefore always writes a power-of-two `m_bits` (both readings then set the
//!   same bits), and our consumer, given another producer's non-power-of-two `m_bits`,
//!   says "maybe" when *either* reading finds all `k` bits set — never a false negative.
//! * **Booleans** hash as one byte `0x00`/`0x01`, which is also the HEP001 boolean enum's
//!   1-byte code, so booleans and other enums share one rule.

use std::io::Cursor;

use crate::h5::Dtype;

/// Bits per indexed row of a new `CHUNK_BLOOM` filter (about 1 % false positives at
/// [`DEFAULT_BLOOM_K`] when every row of a chunk is distinct; fewer when values repeat).
pub const DEFAULT_BLOOM_BITS_PER_ROW: u64 = 10;
/// Hash functions per value of a new `CHUNK_BLOOM` filter.
pub const DEFAULT_BLOOM_K: u16 = 7;
/// Largest `m_bits` our producer writes (8 MiB of filter per chunk).
pub const MAX_BLOOM_M_BITS: u64 = 1 << 26;

/// `MurmurHash3_x64_128(bytes, seed)` split into `(h_a, h_b)` = (low, high) 64 bits.
pub fn murmur3_pair(bytes: &[u8], seed: u32) -> (u64, u64) {
    // Reading from an in-memory slice cannot fail.
    let h = murmur3::murmur3_x64_128(&mut Cursor::new(bytes), seed).unwrap_or(0);
    (h as u64, (h >> 64) as u64)
}

/// `m_bits` for a chunk of `rows` rows: the next power of two of
/// `rows * DEFAULT_BLOOM_BITS_PER_ROW`, at least 64, at most [`MAX_BLOOM_M_BITS`].
pub fn default_m_bits(rows: u64) -> u64 {
    rows.saturating_mul(DEFAULT_BLOOM_BITS_PER_ROW).clamp(64, MAX_BLOOM_M_BITS).next_power_of_two()
}

/// The canonical bytes (HEP001 §11.7) of element `e` of a column of `dtype`, or `None`
/// when the value is not hashed: NaN, or a type without a canonical form. `e` is in the
/// little-endian memory layout of `dtype.to_le()`. Missing values are the caller's test.
pub fn canonical_bytes(dtype: &Dtype, e: &[u8]) -> Option<Vec<u8>> {
    match dtype {
        // Two's complement / unsigned at storage width, little-endian: the LE layout itself.
        Dtype::Int { size, .. } if e.len() == *size => Some(e.to_vec()),
        // Enum codes (booleans included: 1-byte codes 0x00 / 0x01) at the base's width.
        Dtype::Enum { base, .. } if e.len() == base.size() => Some(e.to_vec()),
        Dtype::Float { size: 8, .. } => {
            let v = f64::from_le_bytes(e.try_into().ok()?);
            if v.is_nan() {
                None
            } else {
                Some((if v == 0.0 { 0.0f64 } else { v }).to_le_bytes().to_vec()) // -0 -> +0
            }
        }
        Dtype::Float { size: 4, .. } => {
            let v = f32::from_le_bytes(e.try_into().ok()?);
            if v.is_nan() {
                None
            } else {
                Some((if v == 0.0 { 0.0f32 } else { v }).to_le_bytes().to_vec())
            }
        }
        Dtype::FixedString { spacepad, .. } => {
            let pad = if *spacepad { b' ' } else { 0 };
            let mut end = e.len();
            // Null-terminated strings end at the first NUL; padding is stripped from the end.
            if !*spacepad {
                end = e.iter().position(|&b| b == 0).unwrap_or(e.len());
            }
            while end > 0 && e[end - 1] == pad {
                end -= 1;
            }
            Some(e[..end].to_vec())
        }
        Dtype::Opaque { size, .. } if e.len() == *size => Some(e.to_vec()),
        _ => None,
    }
}

/// Can a `CHUNK_BLOOM` index be built over a column of `dtype` (HEP001 §11.7)?
pub fn bloom_supported(dtype: &Dtype) -> bool {
    matches!(
        dtype,
        Dtype::Int { .. } | Dtype::Enum { .. } | Dtype::Float { size: 4 | 8, .. } | Dtype::FixedString { .. } | Dtype::Opaque { .. }
    )
}

/// Bit `i` of the double-hash sequence, wrapping 64-bit reading: `(h_a + i·h_b) mod m`.
fn bit_wrapping(ha: u64, hb: u64, i: u64, m_bits: u64) -> u64 {
    ha.wrapping_add(i.wrapping_mul(hb)) % m_bits
}

/// Bit `i`, exact-arithmetic reading: `(h_a + i·h_b) mod m` over the integers.
fn bit_exact(ha: u64, hb: u64, i: u64, m_bits: u64) -> u64 {
    ((ha as u128 + i as u128 * hb as u128) % m_bits as u128) as u64
}

fn get_bit(row: &[u8], g: u64) -> bool {
    row.get((g >> 3) as usize).is_some_and(|b| b & (1 << (g & 7)) != 0)
}

/// Insert canonical bytes into one chunk's filter row (`row.len() * 8 == m_bits`).
pub fn insert(row: &mut [u8], bytes: &[u8], k: u16, seed: u32) {
    let m_bits = row.len() as u64 * 8;
    if m_bits == 0 {
        return;
    }
    let (ha, hb) = murmur3_pair(bytes, seed);
    for i in 0..k as u64 {
        let g = bit_wrapping(ha, hb, i, m_bits);
        row[(g >> 3) as usize] |= 1 << (g & 7);
    }
}

/// May the chunk whose filter is `row` contain the value with canonical `bytes`?
/// `false` is proof of absence. See the module doc for the two overflow readings.
pub fn may_contain(row: &[u8], bytes: &[u8], k: u16, seed: u32) -> bool {
    let m_bits = row.len() as u64 * 8;
    if m_bits == 0 || k == 0 {
        return true; // a filter without bits or hashes proves nothing
    }
    let (ha, hb) = murmur3_pair(bytes, seed);
    let wrapping = (0..k as u64).all(|i| get_bit(row, bit_wrapping(ha, hb, i, m_bits)));
    wrapping || (!m_bits.is_power_of_two() && (0..k as u64).all(|i| get_bit(row, bit_exact(ha, hb, i, m_bits))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mmh3.hash128(bytes(range(n)), seed, x64arch=True, signed=False)` from the Python
    /// `mmh3` 5 package (C reference code): the 128-bit value is `h2 << 64 | h1`.
    const VECTORS: [(usize, u32, u128); 18] = [
        (1, 0x00000000, 0x51622daa78f835834610abe56eff5cb5),
        (1, 0x9747b28c, 0xf67103344e6f94c802c9f69a7dd730c0),
        (3, 0x00000000, 0xfb6255c252b396b6b872a12fef53e6be),
        (3, 0x9747b28c, 0xc82c52c52d9f996f5096a1255aed2418),
        (8, 0x00000000, 0x60e6ee02ec31dcc747a7e1bdd68e2fc8),
        (8, 0x9747b28c, 0x29835e6ea32b0dfb6decebd1e433172b),
        (15, 0x00000000, 0xcd846dee88c67de947231598fd4925e9),
        (15, 0x9747b28c, 0xf901d4279e4100cfce461e581d375340),
        (16, 0x00000000, 0xab906456762fe845444924b591903f30),
        (16, 0x9747b28c, 0xe054cade187bd2d1cdf6e14cac2326c9),
        (17, 0x00000000, 0xc15f026b9edaa8245c76f40f9fe7c20e),
        (17, 0x9747b28c, 0xcdb46d35c186feec4bf03e9623d1ca48),
        (31, 0x00000000, 0x9ee59aefb4005490053dd3e1a32cd094),
        (31, 0x9747b28c, 0x167613db94750d0711402094b0608767),
        (32, 0x00000000, 0x1c050a6e34c31151c66d9022b62f500f),
        (32, 0x9747b28c, 0xaa703262aeff47e0eceb57ebb0b95c96),
        (33, 0x00000000, 0x55ac8073a7d6a30b7d41281bfaba4612),
        (33, 0x9747b28c, 0x57dba1ef9f008a8fdd19c56102f480a2),
    ];

    #[test]
    fn murmur3_reference_vectors() {
        for (n, seed, want) in VECTORS {
            let bytes: Vec<u8> = (0..n as u8).collect();
            assert_eq!(murmur3_pair(&bytes, seed), (want as u64, (want >> 64) as u64), "n={n} seed={seed:#x}");
        }
        // The SMHasher "quick brown fox" vector: output bytes 6c1b07bc7bbc4be3 47939ac4a93c437a.
        let (ha, hb) = murmur3_pair(b"The quick brown fox jumps over the lazy dog", 0);
        assert_eq!(ha.to_le_bytes(), [0x6c, 0x1b, 0x07, 0xbc, 0x7b, 0xbc, 0x4b, 0xe3]);
        assert_eq!(hb.to_le_bytes(), [0x47, 0x93, 0x9a, 0xc4, 0xa9, 0x3c, 0x43, 0x7a]);
        assert_eq!(murmur3_pair(b"", 0), (0, 0));
    }

    #[test]
    fn canonical_bytes_per_type() {
        let be = Dtype::Int { size: 2, signed: true, big_endian: true };
        // Arrays hold little-endian bytes whatever the file order: -2 as int16 is fe ff.
        assert_eq!(canonical_bytes(&be, &(-2i16).to_le_bytes()), Some(vec![0xfe, 0xff]));
        assert_eq!(canonical_bytes(&Dtype::F64, &(-0.0f64).to_le_bytes()), Some(vec![0; 8]));
        assert_eq!(canonical_bytes(&Dtype::F32, &(-0.0f32).to_le_bytes()), Some(vec![0; 4]));
        assert_eq!(canonical_bytes(&Dtype::F32, &1.5f32.to_le_bytes()), Some(vec![0x00, 0x00, 0xc0, 0x3f]));
        assert_eq!(canonical_bytes(&Dtype::F64, &f64::NAN.to_le_bytes()), None);
        assert_eq!(canonical_bytes(&Dtype::hep001_bool(), &[1]), Some(vec![0x01]));
        let nt = Dtype::FixedString { size: 6, utf8: true, nullterm: true, spacepad: false };
        assert_eq!(canonical_bytes(&nt, b"ab\0\0\0\0"), Some(b"ab".to_vec()));
        let sp = Dtype::FixedString { size: 6, utf8: false, nullterm: false, spacepad: true };
        assert_eq!(canonical_bytes(&sp, b"ab    "), Some(b"ab".to_vec()));
        assert_eq!(canonical_bytes(&Dtype::StdRef, &[0; 64]), None);
    }

    #[test]
    fn double_hashing_bit_positions() {
        // mmh3.hash128((7).to_bytes(8, "little"), 0, signed=False) = 0x0e7e7118973f6e55_30e12993257f8fb2.
        let bytes = 7i64.to_le_bytes();
        assert_eq!(murmur3_pair(&bytes, 0), (0x30e1_2993_257f_8fb2, 0x0e7e_7118_973f_6e55));
        // m_bits = 64, k = 3: h_a mod 64 = 50, h_b mod 64 = 21 -> bits 50, 71 mod 64 = 7, 92 mod 64 = 28,
        // i.e. byte 6 bit 2, byte 0 bit 7, byte 3 bit 4 (bit 0 = least significant).
        let mut row = vec![0u8; 8];
        insert(&mut row, &bytes, 3, 0);
        assert_eq!(row, [0x80, 0, 0, 0x10, 0, 0, 0x04, 0]);
        assert!(may_contain(&row, &bytes, 3, 0));
        assert!(!may_contain(&[0u8; 8], &bytes, 3, 0));
        assert_eq!(default_m_bits(65_536), 1 << 20);
        assert_eq!(default_m_bits(2), 64);
    }

    #[test]
    fn non_power_of_two_filters_accept_both_overflow_readings() {
        // m_bits = 24: set the bits of the exact-arithmetic reading only.
        let bytes = b"value";
        let (ha, hb) = murmur3_pair(bytes, 5);
        let mut row = vec![0u8; 3];
        for i in 0..4u64 {
            let g = bit_exact(ha, hb, i, 24);
            row[(g >> 3) as usize] |= 1 << (g & 7);
        }
        assert!(may_contain(&row, bytes, 4, 5));
        // And a filter built by our own insert (wrapping) is found too.
        let mut row2 = vec![0u8; 3];
        insert(&mut row2, bytes, 4, 5);
        assert!(may_contain(&row2, bytes, 4, 5));
    }
}

//! A bounded, seeded mutation fuzzer over the peer vectors, for machines without cargo-fuzz
//! (fuzz/ has the libFuzzer target). Asserts that scan, decode and to_wkt never panic, agree
//! on what they accept, and that decoding allocates at most a constant times the input.
//!
//! A counting global allocator (per thread, so parallel tests do not disturb it) measures
//! the decoder's peak heap use.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;

use marquet::wkb::{self, ByteOrder};

/// Counts live and peak heap bytes of the current thread.
struct Counting;

thread_local! {
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
}

fn note_alloc(n: usize) {
    let _ = LIVE.try_with(|l| {
        let v = l.get() + n;
        l.set(v);
        let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
    });
}
fn note_free(n: usize) {
    let _ = LIVE.try_with(|l| l.set(l.get().saturating_sub(n)));
}

#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_alloc(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note_free(layout.size());
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_free(layout.size());
        note_alloc(new_size);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Peak heap bytes allocated (above the current level) while running `f`.
fn peak_of<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let base = LIVE.with(Cell::get);
    PEAK.with(|p| p.set(base));
    let out = f();
    (out, PEAK.with(Cell::get) - base)
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn seeds() -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/wkb");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("wkb_vectors.json")).unwrap())
            .unwrap();
    let mut out = Vec::new();
    for list in ["valid", "malformed"] {
        for e in json[list].as_array().unwrap() {
            for key in ["ndr_hex", "xdr_hex", "hex"] {
                if let Some(h) = e.get(key).and_then(|v| v.as_str()) {
                    out.push(
                        (0..h.len())
                            .step_by(2)
                            .map(|i| u8::from_str_radix(&h[i..i + 2], 16).unwrap())
                            .collect(),
                    );
                }
            }
        }
    }
    // Whole streams too: multi-value inputs exercise the trailing-bytes rule.
    for name in [
        "geometrycollection_z.wkb",
        "multipolygon.wkb",
        "polygon_z.wkb",
        "linestring_z.ewkb",
    ] {
        out.push(std::fs::read(dir.join("geoarrow-c-testing").join(name)).unwrap());
    }
    out
}

const INTERESTING_U32: [u32; 10] = [
    0,
    1,
    2,
    7,
    64,
    1007,
    3007,
    0x2000_0001,
    0x8000_0003,
    u32::MAX,
];

fn mutate(r: &mut Rng, v: &mut Vec<u8>, seeds: &[Vec<u8>]) {
    for _ in 0..1 + r.below(4) {
        match r.below(8) {
            0 if !v.is_empty() => {
                let i = r.below(v.len());
                v[i] ^= 1 << r.below(8);
            }
            1 if !v.is_empty() => {
                let i = r.below(v.len());
                v[i] = r.next() as u8;
            }
            2 => {
                let n = r.below(v.len() + 1);
                v.truncate(n);
            }
            3 if !v.is_empty() => {
                let i = r.below(v.len());
                v.remove(i);
            }
            4 => {
                let i = r.below(v.len() + 1);
                v.insert(i, [0u8, 1, 0xff][r.below(3)]);
            }
            5 if v.len() >= 4 => {
                let i = r.below(v.len() - 3);
                let x = INTERESTING_U32[r.below(INTERESTING_U32.len())];
                let b = if r.below(2) == 0 {
                    x.to_le_bytes()
                } else {
                    x.to_be_bytes()
                };
                v[i..i + 4].copy_from_slice(&b);
            }
            6 => {
                // Splice a piece of another seed (e.g. a member from a different byte order).
                let s = &seeds[r.below(seeds.len())];
                if !s.is_empty() {
                    let a = r.below(s.len());
                    let b = a + r.below(s.len() - a + 1);
                    let at = r.below(v.len() + 1);
                    v.splice(at..at, s[a..b].iter().copied());
                }
            }
            _ if v.len() >= 2 => {
                // Duplicate a chunk (repeats members, deepens nesting).
                let a = r.below(v.len());
                let b = a + r.below((v.len() - a).min(64) + 1);
                let chunk = v[a..b].to_vec();
                v.splice(a..a, chunk);
            }
            _ => {}
        }
    }
}

const ITERATIONS: usize = 200_000;

#[test]
fn seeded_mutation_smoke() {
    let seeds = seeds();
    let mut r = Rng(0x005e_ed0f_3a2b);
    let (mut accepted, mut rejected) = (0usize, 0usize);
    let mut worst_ratio = 0.0f64;
    for _ in 0..ITERATIONS {
        let mut v = seeds[r.below(seeds.len())].clone();
        mutate(&mut r, &mut v, &seeds);
        let s = wkb::scan(&v);
        let (d, peak) = peak_of(|| wkb::decode(&v));
        // Decoding holds at most ~6 bytes per input byte (a Vec per 4-byte empty ring) plus
        // a small constant for the builder's stack.
        assert!(
            peak <= 8 * v.len() + 8192,
            "decode of {} bytes allocated {peak}",
            v.len()
        );
        if v.len() > 64 {
            worst_ratio = worst_ratio.max(peak as f64 / v.len() as f64);
        }
        let w = wkb::to_wkt(&v);
        assert_eq!(s.is_ok(), d.is_ok());
        assert_eq!(s.is_ok(), w.is_ok());
        match d {
            Ok(g) => {
                accepted += 1;
                let info = s.unwrap();
                assert_eq!(info.geometry_type, g.geometry_type());
                assert_eq!(info.is_empty, g.is_empty());
                let order = if v[0] == 1 {
                    ByteOrder::LittleEndian
                } else {
                    ByteOrder::BigEndian
                };
                let again = wkb::encode(&g, order);
                assert_eq!(again.len(), v.len());
                assert_eq!(wkb::scan(&again).unwrap().num_coords, info.num_coords);
            }
            Err(e) => {
                rejected += 1;
                assert_eq!(s.unwrap_err(), e);
                let m = e.to_string();
                assert!(!m.is_empty() && m == m.to_lowercase(), "{m}");
            }
        }
    }
    eprintln!("wkb fuzz smoke: {accepted} accepted, {rejected} rejected, worst decode heap ratio {worst_ratio:.2}");
    assert!(accepted > ITERATIONS / 50 && rejected > ITERATIONS / 2);
}

/// Hostile shapes built on purpose: the decoder's heap stays proportional to the input.
#[test]
fn adversarial_allocation_bounds() {
    // Many empty rings (4 bytes each): the worst case of a Vec per few input bytes.
    let mut rings = vec![1u8, 3, 0, 0, 0];
    rings.extend_from_slice(&100_000u32.to_le_bytes());
    rings.extend(std::iter::repeat_n(0u8, 400_000));
    // Many empty collections inside one collection (9 bytes each).
    let mut gcs = vec![1u8, 7, 0, 0, 0];
    gcs.extend_from_slice(&50_000u32.to_le_bytes());
    for _ in 0..50_000 {
        gcs.extend_from_slice(&[1, 7, 0, 0, 0, 0, 0, 0, 0]);
    }
    // A huge count with nothing behind it: rejected before allocating.
    let mut huge = vec![1u8, 4, 0, 0, 0];
    huge.extend_from_slice(&u32::MAX.to_le_bytes());
    for v in [&rings, &gcs, &huge] {
        let (d, peak) = peak_of(|| wkb::decode(v));
        assert!(peak <= 8 * v.len() + 8192, "{} bytes -> {peak}", v.len());
        eprintln!("adversarial: {} bytes -> decode peak {peak}", v.len());
        let (_, scan_peak) = peak_of(|| wkb::scan(v));
        assert_eq!(scan_peak, 0, "scan allocates nothing");
        if v.as_ptr() == huge.as_ptr() {
            assert!(d.is_err());
        } else {
            assert!(d.is_ok());
        }
    }
}

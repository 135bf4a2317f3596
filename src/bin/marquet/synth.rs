//! Seeded synthetic data for benchmarks, examples and property tests.
//!
//! One generator shared by `benches/`, the cross-format comparison (`marquet bench`) and
//! the tests, so that every figure in a closing note is measured on the same data:
//!
//! * [`clustered_points`]: points around 64 cluster centres (normal spread, 0.3°–4°)
//!   plus 10 % uniform background, in lon/lat degrees;
//! * [`polygons`]: star-shaped simple polygons of 16–32 vertices (closed ring,
//!   counter-clockwise), radius 0.01°–0.2°, centred like the points, as ISO WKB
//!   (little-endian);
//! * [`windows`]: small query windows (default 0.5° × 0.5°) centred on points drawn from
//!   the same distribution, so most of them hit data.
//!
//! The generator is SplitMix64 (public domain algorithm by Sebastiano Vigna), written here
//! in a few lines so that the data never changes with a dependency's version.

// Also compiled into the tests, benches and examples through the workspace's dev crate
// (dev/lib.rs), which use items the binary does not.
#![allow(dead_code)]

use marquet::BBox;

/// SplitMix64: a tiny, fast, seedable generator; reproducible across platforms.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.f64()
    }
    /// Uniform integer in [lo, hi] (inclusive).
    pub fn int(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }
    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }
    /// Standard normal (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u1 = self.f64().max(f64::MIN_POSITIVE);
        let u2 = self.f64();
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }
}

/// Number of cluster centres.
pub const CLUSTERS: usize = 64;

/// The clustered distribution every generator here draws centres from.
#[derive(Debug, Clone)]
pub struct Clusters {
    centres: Vec<(f64, f64, f64)>,
}

impl Clusters {
    /// Cluster centres (lon in [-170, 170), lat in [-60, 70)) and spreads, from `seed`.
    pub fn new(seed: u64) -> Clusters {
        let mut r = SplitMix64::new(seed ^ 0xC1u64);
        let centres = (0..CLUSTERS).map(|_| (r.range(-170.0, 170.0), r.range(-60.0, 70.0), r.range(0.3, 4.0))).collect();
        Clusters { centres }
    }
    /// One position: 90 % near a cluster centre, 10 % uniform over the globe.
    pub fn sample(&self, r: &mut SplitMix64) -> (f64, f64) {
        if r.f64() < 0.1 {
            return (r.range(-180.0, 180.0), r.range(-90.0, 90.0));
        }
        let (cx, cy, s) = self.centres[(r.next_u64() % self.centres.len() as u64) as usize];
        ((cx + s * r.normal()).clamp(-180.0, 180.0), (cy + s * r.normal()).clamp(-90.0, 90.0))
    }
}

/// `n` clustered 2-D points (x = lon, y = lat), seeded.
pub fn clustered_points(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let c = Clusters::new(seed);
    let mut r = SplitMix64::new(seed);
    let mut x = Vec::with_capacity(n);
    let mut y = Vec::with_capacity(n);
    for _ in 0..n {
        let (a, b) = c.sample(&mut r);
        x.push(a);
        y.push(b);
    }
    (x, y)
}

/// `n` star-shaped polygons of 16–32 distinct vertices each, as little-endian ISO WKB.
pub fn polygons(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let c = Clusters::new(seed);
    let mut r = SplitMix64::new(seed.wrapping_add(1));
    (0..n)
        .map(|_| {
            let (cx, cy) = c.sample(&mut r);
            let radius = r.range(0.01, 0.2);
            let k = r.int(16, 32) as usize;
            // Keep the polygon inside the valid lon/lat range.
            let cx = cx.clamp(-180.0 + radius, 180.0 - radius);
            let cy = cy.clamp(-90.0 + radius, 90.0 - radius);
            let mut wkb = Vec::with_capacity(13 + 16 * (k + 1));
            wkb.push(1u8);
            wkb.extend_from_slice(&3u32.to_le_bytes());
            wkb.extend_from_slice(&1u32.to_le_bytes());
            wkb.extend_from_slice(&((k + 1) as u32).to_le_bytes());
            let mut first = (0.0, 0.0);
            for i in 0..k {
                // Angles increase: counter-clockwise; radius varies: star-shaped, simple.
                let a = std::f64::consts::TAU * (i as f64 + 0.8 * r.f64()) / k as f64;
                let rr = radius * r.range(0.5, 1.0);
                let p = (cx + rr * a.cos(), cy + rr * a.sin());
                if i == 0 {
                    first = p;
                }
                wkb.extend_from_slice(&p.0.to_le_bytes());
                wkb.extend_from_slice(&p.1.to_le_bytes());
            }
            wkb.extend_from_slice(&first.0.to_le_bytes());
            wkb.extend_from_slice(&first.1.to_le_bytes());
            wkb
        })
        .collect()
}

/// `n` square windows of side `side` degrees centred on positions of the clustered
/// distribution of `seed` (so they find data), drawn with their own stream.
pub fn windows(n: usize, seed: u64, side: f64) -> Vec<BBox> {
    let c = Clusters::new(seed);
    let mut r = SplitMix64::new(seed.wrapping_add(2));
    let h = side / 2.0;
    (0..n)
        .map(|_| {
            let (x, y) = c.sample(&mut r);
            BBox::xy((x - h).max(-180.0), (y - h).max(-90.0), (x + h).min(180.0), (y + h).min(90.0))
        })
        .collect()
}

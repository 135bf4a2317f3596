//! Seeded property tests: every index path against brute force (STYLE "Tests").

use std::collections::BTreeSet;

use crate::spatial::block_bbox::{
    blocks_to_read, build_blocks, extend_blocks, partial_block_start, RowSummary,
};
use crate::spatial::geom_box::intersects;
use crate::spatial::packed_rtree::{build, search, total_entries, verify, Entry};
use crate::spec::BBox;

/// SplitMix64: a tiny deterministic generator, so the tests need no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn f(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// A box inside −180..180 × −90..90, often tiny, sometimes a point.
    fn bbox(&mut self) -> BBox {
        let x = self.f(-180.0, 180.0);
        let y = self.f(-90.0, 90.0);
        let (w, h) = match self.below(3) {
            0 => (0.0, 0.0),
            1 => (self.f(0.0, 2.0), self.f(0.0, 2.0)),
            _ => (self.f(0.0, 60.0), self.f(0.0, 30.0)),
        };
        BBox::xy(x, y, (x + w).min(180.0), (y + h).min(90.0))
    }
    fn query(&mut self) -> BBox {
        if self.below(8) == 0 {
            // Wrapping query around the antimeridian.
            let x0 = self.f(100.0, 180.0);
            let x1 = self.f(-180.0, -100.0);
            let y = self.f(-90.0, 60.0);
            return BBox::xy(x0, y, x1, y + self.f(0.0, 30.0));
        }
        let b = self.bbox();
        if self.below(10) == 0 {
            BBox::xy(b.xmin - 1000.0, b.ymin, b.xmax, b.ymax) // very wide
        } else {
            b
        }
    }
}

#[test]
fn rtree_search_matches_brute_force() {
    let mut rng = Rng(0x5EED_0001);
    let counts = [
        0u64, 1, 2, 3, 4, 9, 15, 16, 17, 31, 32, 48, 100, 256, 257, 1000, 4096,
    ];
    for &m in &[2u16, 3, 16] {
        for &n in &counts {
            // Rows: n items scattered over nrows ≥ n, the rest null/empty.
            let nrows = n + rng.below(n + 2);
            let mut rows: Vec<u64> = (0..nrows).collect();
            for i in (1..rows.len()).rev() {
                rows.swap(i, rng.below(i as u64 + 1) as usize);
            }
            rows.truncate(n as usize);
            let items: Vec<(BBox, u64)> = rows.iter().map(|&r| (rng.bbox(), r)).collect();
            let entries = build(&items, m).unwrap();
            assert_eq!(entries.len() as u64, total_entries(n, m).unwrap());
            let mut boxes = vec![None; nrows as usize];
            for (b, r) in &items {
                boxes[*r as usize] = Some(*b);
            }
            let findings = verify(&entries, n, m, nrows, 0.0, |r| Ok(boxes[r as usize])).unwrap();
            assert!(findings.is_empty(), "n={n} m={m}: {findings:?}");
            for _ in 0..40 {
                let q = rng.query();
                let got = search(&entries[..], n, m, nrows, &q).unwrap();
                let want: Vec<u64> = items
                    .iter()
                    .filter(|(b, _)| intersects(b, &q))
                    .map(|&(_, r)| r)
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                assert_eq!(got, want, "n={n} m={m} q={q:?}");
                // Without wrapping, the shared helper agrees with BBox::intersects_xy.
                if q.xmin <= q.xmax {
                    assert!(items
                        .iter()
                        .all(|(b, _)| intersects(b, &q) == b.intersects_xy(&q)));
                }
            }
        }
    }
}

#[test]
fn rtree_leaves_follow_hilbert_order() {
    let mut rng = Rng(0x5EED_0002);
    let items: Vec<(BBox, u64)> = (0..500).map(|r| (rng.bbox(), r)).collect();
    let entries = build(&items, 16).unwrap();
    let boxes: Vec<BBox> = items.iter().map(|i| i.0).collect();
    let order = crate::spatial::hilbert::hilbert_order(&boxes);
    let leaves: Vec<u64> = entries[entries.len() - 500..]
        .iter()
        .map(|e| e.index)
        .collect();
    // Rows equal positions here, so both tie-breaks agree.
    assert_eq!(leaves, order.iter().map(|&i| i as u64).collect::<Vec<_>>());
}

/// Corrupt trees at random: search must return Ok or Err, never panic, and Ok rows are < nrows.
#[test]
fn rtree_search_survives_corruption() {
    let mut rng = Rng(0x5EED_0003);
    for round in 0..400 {
        let n = rng.below(300);
        let m = [2u16, 3, 4, 16][rng.below(4) as usize];
        let items: Vec<(BBox, u64)> = (0..n).map(|r| (rng.bbox(), r)).collect();
        let mut e: Vec<Entry> = build(&items, m).unwrap();
        for _ in 0..rng.below(4) {
            if e.is_empty() {
                break;
            }
            let p = rng.below(e.len() as u64) as usize;
            match rng.below(5) {
                0 => e[p].index = rng.next(),
                1 => e[p].index = rng.below(e.len() as u64 + 2),
                2 => e[p].xmin = f64::NAN,
                3 => e[p].xmax = f64::NEG_INFINITY,
                _ => {
                    let len = rng.below(e.len() as u64 + 1) as usize;
                    e.truncate(len);
                }
            }
        }
        let claimed_n = match rng.below(4) {
            0 => rng.next(),
            1 => n.saturating_add(rng.below(3)),
            _ => n,
        };
        let claimed_m = match rng.below(6) {
            0 => rng.below(3) as u16,
            1 => rng.next() as u16,
            _ => m,
        };
        let nrows = match rng.below(4) {
            0 => rng.next(),
            1 => n.saturating_sub(rng.below(3)),
            _ => n,
        };
        let q = rng.query();
        if let Ok(rows) = search(&e[..], claimed_n, claimed_m, nrows, &q) {
            assert!(rows.iter().all(|&r| r < nrows), "round {round}");
            assert!(rows.windows(2).all(|w| w[0] < w[1]));
        }
        let _ = verify(&e, claimed_n, claimed_m, nrows.min(1000), 0.0, |_| Ok(None));
    }
}

fn random_rows(rng: &mut Rng, n: usize) -> Vec<RowSummary> {
    (0..n)
        .map(|_| match rng.below(10) {
            0 => RowSummary::Null,
            1 => RowSummary::Empty,
            2 => {
                // A wrapping geometry box.
                let x0 = rng.f(150.0, 180.0);
                let y = rng.f(-90.0, 80.0);
                RowSummary::Geometry(BBox::xy(x0, y, rng.f(-180.0, -150.0), y + 5.0))
            }
            _ => RowSummary::Geometry(rng.bbox()),
        })
        .collect()
}

#[test]
fn blocks_to_read_matches_brute_force() {
    let mut rng = Rng(0x5EED_0004);
    for &nrows in &[0usize, 1, 2, 7, 16, 64, 100, 1000] {
        for &bl in &[1u64, 2, 3, 7, 16, 64, 5000] {
            let rows = random_rows(&mut rng, nrows);
            let idx = build_blocks(rows.iter().copied(), bl).unwrap();
            assert_eq!(idx.len() as u64, (nrows as u64).div_ceil(bl));
            for _ in 0..30 {
                let q = rng.query();
                let ranges = blocks_to_read(&idx, bl, nrows as u64, &q);
                let mut selected = vec![false; nrows];
                for r in &ranges {
                    assert!(r.start < r.end && r.end <= nrows as u64);
                    for i in r.clone() {
                        assert!(!selected[i as usize]);
                        selected[i as usize] = true;
                    }
                }
                // Ranges are merged: no two touch.
                assert!(ranges.windows(2).all(|w| w[0].end < w[1].start));
                // Exactly the blocks whose box meets the query...
                for (j, e) in idx.iter().enumerate() {
                    let lo = j as u64 * bl;
                    let hi = (lo + bl).min(nrows as u64);
                    let want = intersects(&e.bbox, &q);
                    assert!((lo..hi).all(|i| selected[i as usize] == want), "block {j}");
                }
                // ...which include every row whose geometry meets it (soundness).
                for (i, r) in rows.iter().enumerate() {
                    if let RowSummary::Geometry(b) = r {
                        assert!(
                            selected[i] || !intersects(b, &q),
                            "row {i} skipped, q={q:?} b={b:?}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn extend_blocks_matches_build_random() {
    let mut rng = Rng(0x5EED_0005);
    for _ in 0..200 {
        let n = rng.below(200) as usize;
        let rows = random_rows(&mut rng, n);
        let bl = 1 + rng.below(40);
        let mut old = rng.below(n as u64 + 1) as usize;
        let mut idx = build_blocks(rows[..old].iter().copied(), bl).unwrap();
        // Several appends in a row.
        while old < n {
            let new = old + 1 + rng.below((n - old) as u64) as usize;
            let start = partial_block_start(old as u64, bl).unwrap() as usize;
            extend_blocks(&mut idx, old as u64, rows[start..new].iter().copied(), bl).unwrap();
            assert_eq!(idx, build_blocks(rows[..new].iter().copied(), bl).unwrap());
            old = new;
        }
    }
}

#[test]
fn block_groups_change_no_answer() {
    use crate::spatial::block_bbox::{blocks_classified, entry_groups, GROUP};
    let mut rng = Rng(0x5EED_0009);
    let mut skippable = 0;
    for round in 0..300 {
        let n = rng.below(3000) as usize;
        // Rows in x order, as a Hilbert-sorted table's are near each other: most groups
        // are narrow and miss a window.
        let mut rows = random_rows(&mut rng, n);
        let x0 = |r: &RowSummary| if let RowSummary::Geometry(b) = r { b.xmin } else { 0.0 };
        if round % 3 != 0 {
            rows.sort_by(|a, b| x0(a).total_cmp(&x0(b)));
        }
        let bl = 1 + rng.below(40);
        let mut idx = build_blocks(rows.iter().copied(), bl).unwrap();
        // Bounds no writer stores, which the groups must not hide: NaN, and entries
        // beyond the blocks.
        if !idx.is_empty() && rng.below(4) == 0 {
            let k = rng.below(idx.len() as u64) as usize;
            idx[k].bbox.xmax = f64::NAN;
        }
        if rng.below(4) == 0 {
            idx.push(crate::spatial::BlockEntry { bbox: rng.bbox(), ..crate::spatial::BlockEntry::EMPTY });
        }
        let groups = entry_groups(&idx);
        assert_eq!(groups.len(), idx.len().div_ceil(GROUP));
        let nrows = if rng.below(5) == 0 { (n as u64).saturating_sub(rng.below(bl + 1)) } else { n as u64 };
        for _ in 0..20 {
            let mut q = rng.query();
            if rng.below(20) == 0 {
                q.ymin = f64::NAN;
            }
            skippable += groups.iter().flatten().filter(|g| !g.intersects_xy(&q)).count();
            for by_box in [false, true] {
                let with = blocks_classified(&idx, &groups, bl, nrows, &q, by_box);
                let without = blocks_classified(&idx, &[], bl, nrows, &q, by_box);
                assert_eq!((&with.read, &with.whole, with.met), (&without.read, &without.whole, without.met), "round {round} q={q:?}");
            }
        }
    }
    assert!(skippable > 20_000, "the groups are narrow enough to skip: {skippable}");
}

//! Unit tests of the binary's modules that the tests, benches and examples share through
//! the workspace's dev crate (dev/lib.rs): the synthetic data generator
//! (`src/bin/marquet/synth.rs`) and the benchmark harness (`src/bin/marquet/bench.rs`).
//! They live here, not in the modules, so that they run once.

use marquet_dev::synth;
use marquet_dev::bench;

mod synth_tests {
    use crate::synth::*;


    #[test]
    fn reproducible_and_in_range() {
        let (x1, y1) = clustered_points(10_000, 42);
        let (x2, y2) = clustered_points(10_000, 42);
        assert_eq!(x1, x2);
        assert_eq!(y1, y2);
        assert!(x1.iter().all(|v| (-180.0..=180.0).contains(v)));
        assert!(y1.iter().all(|v| (-90.0..=90.0).contains(v)));
        let (x3, _) = clustered_points(10, 43);
        assert_ne!(x1[..10], x3[..]);
    }

    #[test]
    fn polygons_are_valid_closed_wkb_with_16_to_32_vertices() {
        for w in polygons(500, 9) {
            let g = marquet::wkb::decode(&w).expect("valid WKB");
            let wkt = g.to_wkt();
            assert!(wkt.starts_with("POLYGON (("), "{wkt}");
            let n = u32::from_le_bytes(w[9..13].try_into().unwrap()) as usize;
            assert!((17..=33).contains(&n), "ring of {n} points");
            assert_eq!(w.len(), 13 + 16 * n);
            assert_eq!(w[13..29], w[w.len() - 16..], "ring closed");
        }
    }

    #[test]
    fn windows_hit_clustered_data() {
        let (x, y) = clustered_points(100_000, 5);
        let ws = windows(50, 5, 0.5);
        let hits = ws.iter().filter(|w| x.iter().zip(&y).any(|(&a, &b)| a >= w.xmin && a <= w.xmax && b >= w.ymin && b <= w.ymax)).count();
        assert!(hits >= 40, "only {hits} of 50 windows found points");
    }
}

mod bench_tests {
    use crate::bench::*;
    use crate::synth;


    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn point_wkb_is_21_bytes_little_endian() {
        let w = point_wkb(&[1.5], &[-2.0]);
        let mut want = vec![1u8, 1, 0, 0, 0];
        want.extend_from_slice(&1.5f64.to_le_bytes());
        want.extend_from_slice(&(-2.0f64).to_le_bytes());
        assert_eq!(w, vec![want]);
    }

    #[test]
    fn windows_text_round_trips_exactly() {
        let ws = synth::windows(5, 3, 0.5);
        let t = windows_text(&ws);
        let back: Vec<Vec<f64>> = t.lines().map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
        assert_eq!(back.len(), 5);
        for (w, b) in ws.iter().zip(&back) {
            assert_eq!(b, &vec![w.xmin, w.ymin, w.xmax, w.ymax]);
        }
    }
}

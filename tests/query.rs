//! Property tests of the layered spatial query (HEP002 §10, §17): every query path — no
//! index, block index only, R-tree only, both, covering on/off — gives the brute-force answer
//! for every predicate, on random points and polygons in all three storage forms, before and
//! after appends that extend the block index and leave the R-tree stale, after rebuilds, and
//! after truncations.

use marquet_dev::synth;

use marquet::h5col::{Array, File};
use marquet::spatial::geom_box::intersects;
use marquet::marquet::spatial_index::{IndexState, RTreeOnAppend, SpatialIndexKind};
use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
use marquet::query::{Predicate, Query, QueryResult, Window, TableQuery};
use marquet::wkb::{self, ByteOrder, Coord, Geometry, LineString, MultiPolygon, Point, Polygon};
use marquet::{BBox, Dimensions};

/// The seeded generator shared with the benchmarks.
use crate::synth::SplitMix64 as Rng;

fn tmp(name: &str) -> String {
    let d = std::env::temp_dir().join(format!("marquet-query-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name).display().to_string()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Form {
    Point,
    Fixed,
    Var,
}

const QUAD_WKB_LEN: usize = 1 + 4 + 4 + 4 + 5 * 16;

fn enc(g: &Geometry) -> Vec<u8> {
    wkb::encode(g, ByteOrder::LittleEndian)
}

fn point(x: f64, y: f64) -> Vec<u8> {
    enc(&Geometry::Point(Point::new(Dimensions::Xy, Coord::xy(x, y))))
}

/// A quadrilateral around (cx, cy), counterclockwise, closed: always 93 bytes.
fn quad(r: &mut Rng, cx: f64, cy: f64) -> Vec<u8> {
    let (hx, hy) = (r.range(0.2, 3.0), r.range(0.2, 3.0));
    let j = |r: &mut Rng| r.range(-0.15, 0.15);
    let ring = vec![
        Coord::xy(cx - hx + j(r), cy - hy + j(r)),
        Coord::xy(cx + hx + j(r), cy - hy + j(r)),
        Coord::xy(cx + hx + j(r), cy + hy + j(r)),
        Coord::xy(cx - hx + j(r), cy + hy + j(r)),
    ];
    let mut ring = ring;
    ring.push(ring[0]);
    let w = enc(&Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring] }));
    assert_eq!(w.len(), QUAD_WKB_LEN);
    w
}

/// A star-shaped (so simple) polygon, counterclockwise, optionally with a square hole.
fn star(r: &mut Rng, cx: f64, cy: f64, hole: bool) -> Polygon {
    let k = 3 + (r.next_u64() % 6) as usize;
    let mut angles: Vec<f64> = (0..k).map(|_| r.range(0.0, std::f64::consts::TAU)).collect();
    angles.sort_by(f64::total_cmp);
    let mut ring: Vec<Coord> = angles
        .iter()
        .map(|a| {
            let rad = r.range(1.0, 4.0);
            Coord::xy(cx + rad * a.cos(), cy + rad * a.sin())
        })
        .collect();
    ring.push(ring[0]);
    let mut rings = vec![ring];
    if hole {
        let h = 0.3;
        rings.push(vec![
            Coord::xy(cx - h, cy - h),
            Coord::xy(cx - h, cy + h),
            Coord::xy(cx + h, cy + h),
            Coord::xy(cx + h, cy - h),
            Coord::xy(cx - h, cy - h),
        ]);
    }
    Polygon { dims: Dimensions::Xy, rings }
}

/// `n` random rows for a storage form (nulls and empties included where the form allows).
fn gen_rows(r: &mut Rng, form: Form, n: usize) -> Vec<Option<Vec<u8>>> {
    (0..n)
        .map(|_| {
            if r.chance(0.08) {
                return None;
            }
            let (cx, cy) = (r.range(0.0, 100.0), r.range(0.0, 100.0));
            Some(match form {
                Form::Point => {
                    if r.chance(0.04) {
                        point(f64::NAN, f64::NAN)
                    } else {
                        point(cx, cy)
                    }
                }
                Form::Fixed => quad(r, cx, cy),
                Form::Var => {
                    let u = r.f64();
                    if u < 0.2 {
                        point(cx, cy)
                    } else if u < 0.4 {
                        let k = 2 + (r.next_u64() % 5) as usize;
                        let coords = (0..k).map(|_| Coord::xy(cx + r.range(-4.0, 4.0), cy + r.range(-4.0, 4.0))).collect();
                        enc(&Geometry::LineString(LineString { dims: Dimensions::Xy, coords }))
                    } else if u < 0.75 {
                        let hole = r.chance(0.2);
                        enc(&Geometry::Polygon(star(r, cx, cy, hole)))
                    } else if u < 0.92 {
                        let a = star(r, cx, cy, false);
                        let (dx, dy) = (r.range(5.0, 15.0), r.range(-8.0, 8.0));
                        let b = star(r, cx + dx, cy + dy, false);
                        enc(&Geometry::MultiPolygon(MultiPolygon { dims: Dimensions::Xy, polygons: vec![a, b] }))
                    } else {
                        enc(&Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![] }))
                    }
                }
            })
        })
        .collect()
}

fn batch(rows: Vec<Option<Vec<u8>>>, first_id: u64) -> GeoBatch {
    let ids: Vec<u64> = (first_id..first_id + rows.len() as u64).collect();
    GeoBatch::new().with_array("id", Array::from_u64(&ids)).with_geometry("geom", GeometryValues::Wkb(rows))
}

fn create(path: &str, form: Form) -> (File, MarquetTable) {
    let f = File::create(path).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_column("id", &marquet::h5col::ColumnSpec::new(marquet::h5::Dtype::U64).with_chunk_rows(64)).unwrap();
    let spec = GeometryColumnSpec::default().with_chunk_rows(64);
    let spec = match form {
        Form::Point => spec.with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }),
        Form::Fixed => spec.with_form(StorageForm::FixedWkb { size: QUAD_WKB_LEN }).with_covering("geom_bbox"),
        Form::Var => spec.with_form(StorageForm::VarWkb).with_covering("geom_bbox"),
    };
    t.add_geometry_column("geom", &spec).unwrap();
    (f, t)
}

/// Every row's WKB, scanned box and decoded geometry.
type Truth = Vec<Option<(BBox, bool, geo::Geometry<f64>)>>;

fn truth(t: &MarquetTable) -> Truth {
    let n = t.nrows().unwrap();
    let b = t.read_wkb("geom", 0, n).unwrap();
    (0..b.len())
        .map(|i| {
            b.get(i).map(|w| {
                let s = wkb::scan(w).unwrap();
                (s.bbox, s.is_empty, wkb::decode(w).unwrap().into())
            })
        })
        .collect()
}

/// The reference answer: the rows whose geometry satisfies `p` against `window`, found by
/// testing every row of `truth` with `geo` (no index, no covering column).
pub fn brute(truth: &Truth, window: &Window, p: Predicate) -> Vec<u64> {
    let wbox = window.bbox();
    let wg = window.to_geo();
    truth
        .iter()
        .enumerate()
        .filter_map(|(i, r)| {
            let (b, empty, g) = r.as_ref()?;
            if *empty || wbox.is_empty() {
                return None;
            }
            let hit = match p {
                Predicate::BBoxOnly => intersects(b, &wbox),
                _ => p.evaluate(g, &wg),
            };
            hit.then_some(i as u64)
        })
        .collect()
}

fn random_window(r: &mut Rng) -> Window {
    let (cx, cy) = (r.range(-10.0, 110.0), r.range(-10.0, 110.0));
    if r.chance(0.3) {
        // A triangle.
        let s = r.range(2.0, 25.0);
        let ring = vec![
            Coord::xy(cx - s, cy - s),
            Coord::xy(cx + s, cy - s * 0.5),
            Coord::xy(cx, cy + s),
            Coord::xy(cx - s, cy - s),
        ];
        return Window::Geometry(Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring] }));
    }
    let (w, h) = (r.range(0.5, 30.0), r.range(0.5, 30.0));
    Window::BBox(BBox::xy(cx - w, cy - h, cx + w, cy + h))
}

const PREDICATES: [Predicate; 4] = [Predicate::Intersects, Predicate::Within, Predicate::Contains, Predicate::BBoxOnly];

#[derive(Debug, Clone, Copy)]
struct Expect {
    block: bool,
    rtree: bool,
    covering: bool,
}

type Config = (&'static str, fn(Query) -> Query);

fn configs() -> Vec<Config> {
    vec![
        ("none", |q| q.with_indexes(false)),
        ("block", |q| q.with_rtree(false).with_covering(false)),
        ("rtree", |q| q.with_block_index(false).with_covering(false)),
        ("both", |q| q.with_covering(false)),
        ("covering", |q| q.with_block_index(false).with_rtree(false)),
        ("all", |q| q),
    ]
}

/// Run every path for `windows` random windows and compare with brute force.
fn check_all(t: &MarquetTable, r: &mut Rng, windows: usize, exp: Expect, label: &str) -> u64 {
    let tr = truth(t);
    let mut matched = 0;
    for _ in 0..windows {
        let w = random_window(r);
        for p in PREDICATES {
            let want = brute(&tr, &w, p);
            matched += want.len() as u64;
            for (name, cfg) in configs() {
                let q = cfg(Query::new(w.clone(), p)).with_wkb(true);
                let QueryResult { rows, stats, wkb } = t.query("geom", &q).unwrap();
                assert_eq!(rows, want, "{label}: config {name}, {p:?}, window {w:?}");
                // Without WKB, the rows an R-tree leaf box places inside the window are not
                // read at all (issue #33): the same answer.
                let plain = t.query("geom", &cfg(Query::new(w.clone(), p))).unwrap();
                assert_eq!(plain.rows, want, "{label}: config {name}, {p:?}, window {w:?}, no WKB");
                assert_eq!(plain.stats.rows_by_box, stats.rows_by_box, "{label}: config {name}, {p:?}");
                assert!(stats.rows_by_box == 0 || ((stats.used_rtree || stats.used_block_index) && matches!(p, Predicate::Intersects | Predicate::BBoxOnly)));
                assert_eq!(stats.exact_tested + stats.rows_by_box, plain.stats.exact_tested + plain.stats.rows_by_box);
                BY_BOX.with(|c| c.set(c.get() + stats.rows_by_box));
                // The WKB returned with the answer is what reading those rows returns.
                assert_eq!(wkb.unwrap(), t.take_wkb("geom", &rows).unwrap(), "{label}: config {name}, {p:?}");
                assert!(stats.ignored_indexes.is_empty(), "{label}: {:?}", stats.ignored_indexes);
                assert_eq!(stats.rows_matched, want.len() as u64);
                let on = q.use_indexes;
                // A layer is used when it is available and asked for; a later layer is not
                // consulted when an earlier one left no rows. A valid R-tree answers first
                // and then the block boxes and the covering column are not read.
                let rtree = on && q.use_rtree && exp.rtree;
                let layers = [
                    (stats.used_block_index, on && q.use_block_index && exp.block && !rtree),
                    (stats.used_rtree, rtree),
                    (stats.used_covering, on && q.use_covering && exp.covering && !rtree),
                ];
                for (k, (used, expected)) in layers.into_iter().enumerate() {
                    assert!(!used || expected, "{label} {name}: layer {k} used unexpectedly");
                    assert!(used || !expected || want.is_empty(), "{label} {name}: layer {k} not used");
                }
                if !on {
                    assert_eq!(stats.exact_tested + nulls(&tr), stats.rows_total, "{label}: full scan tests every row");
                }
            }
        }
    }
    matched
}

thread_local! {
    /// Rows answered by their R-tree leaf box in this test's queries.
    static BY_BOX: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

fn nulls(tr: &Truth) -> u64 {
    tr.iter().filter(|r| r.is_none()).count() as u64
}

fn block_entries(t: &MarquetTable) -> Vec<marquet::spatial::BlockEntry> {
    match t.open_block_index("geom").unwrap() {
        IndexState::Usable(b) => b.entries,
        other => panic!("block index not usable: {other:?}"),
    }
}

fn valid_kinds(t: &MarquetTable) -> (bool, bool) {
    let idx = t.spatial_indexes("geom").unwrap();
    let v = |k| idx.iter().any(|i| i.kind == k && i.valid);
    (v(SpatialIndexKind::BlockBBox), v(SpatialIndexKind::PackedRTree))
}

fn run_form(form: Form, seed: u64) {
    let mut r = Rng::new(seed);
    let path = tmp(&format!("prop-{form:?}.h5"));
    let (f, mut t) = create(&path, form);
    let cov = form != Form::Point;
    let mut next_id = 0;
    let rows = gen_rows(&mut r, form, 300);
    next_id += rows.len() as u64;
    t.append(&batch(rows, 0)).unwrap();
    // No index yet: every path works, none is used.
    let none = Expect { block: false, rtree: false, covering: cov };
    check_all(&t, &mut r, 2, none, "no indexes");

    t.build_block_bbox("geom", Some(16)).unwrap();
    t.build_rtree("geom", Some(4)).unwrap();
    let all = Expect { block: true, rtree: true, covering: cov };
    let m = check_all(&t, &mut r, 6, all, "built");
    assert!(m > 0, "the random windows should match something");

    // An append that leaves the R-tree stale and extends the block index (sorted rows).
    t.set_rtree_on_append(RTreeOnAppend::LeaveStale);
    let rows = gen_rows(&mut r, form, 150);
    t.write(&batch(rows, next_id), marquet::marquet::WriteOptions::in_order().with_spatial_order(true).with_rtree(t.rtree_on_append())).unwrap();
    next_id += 150;
    assert_eq!(valid_kinds(&t), (true, false));
    let incremental = block_entries(&t);
    let stale = Expect { block: true, rtree: false, covering: cov };
    check_all(&t, &mut r, 4, stale, "after append, stale r-tree");
    let q = t.query("geom", &Query::bbox(BBox::xy(0.0, 0.0, 10.0, 10.0))).unwrap();
    assert_eq!(q.stats.stale_indexes.len(), 1, "{:?}", q.stats);
    // The incremental block index equals a rebuild.
    t.build_block_bbox("geom", Some(16)).unwrap();
    assert_eq!(block_entries(&t), incremental);

    // Another append with a per-call rebuild policy: a stale R-tree is not maintained.
    let rows = gen_rows(&mut r, form, 77);
    t.write(&batch(rows, next_id), marquet::marquet::WriteOptions::in_order().with_rtree(RTreeOnAppend::Rebuild)).unwrap();
    next_id += 77;
    assert_eq!(valid_kinds(&t), (true, false));
    assert_eq!(t.rebuild_indexes("geom").unwrap().len(), 2);
    assert_eq!(valid_kinds(&t), (true, true));
    check_all(&t, &mut r, 3, all, "after rebuild_indexes");

    // An append that rebuilds the valid R-tree in place.
    t.set_rtree_on_append(RTreeOnAppend::Rebuild);
    let rows = gen_rows(&mut r, form, 40);
    t.append(&batch(rows, next_id)).unwrap();
    assert_eq!(valid_kinds(&t), (true, true));
    check_all(&t, &mut r, 3, all, "after append with r-tree rebuild");

    // Truncations: block index maintained, R-tree stale or rebuilt.
    let n = t.nrows().unwrap();
    t.truncate_with_options(n - 51, RTreeOnAppend::LeaveStale).unwrap();
    assert_eq!(valid_kinds(&t), (true, false));
    check_all(&t, &mut r, 3, stale, "after truncation, stale r-tree");
    let inc = block_entries(&t);
    t.rebuild_indexes("geom").unwrap();
    assert_eq!(block_entries(&t), inc);
    t.truncate_with_options(n - 100, RTreeOnAppend::Rebuild).unwrap();
    assert_eq!(valid_kinds(&t), (true, true));
    check_all(&t, &mut r, 3, all, "after truncation with rebuild");
    // The validator agrees that every index written and maintained here is correct
    // (HEP002 §12 requirement 16).
    f.flush().unwrap();
    let report = marquet::validate::validate_file(&path, &marquet::validate::Options::default()).unwrap();
    let errors: Vec<String> = report.errors().map(|e| format!("{e:?}")).collect();
    assert!(errors.is_empty(), "{errors:?}");

    // Dropping the indexes: back to plain scans.
    assert_eq!(t.drop_index("geom", SpatialIndexKind::PackedRTree).unwrap(), 1);
    assert_eq!(t.drop_index("geom", SpatialIndexKind::BlockBBox).unwrap(), 1);
    assert!(t.spatial_indexes("geom").unwrap().is_empty());
    check_all(&t, &mut r, 1, none, "after drop_index");
    // Box windows of 1 to 60 units over features of up to 6: some R-tree candidates lie
    // inside their window and were answered by their box.
    assert!(BY_BOX.with(|c| c.get()) > 0, "no row was answered by its box");
}

/// Issue #33: a block whose rows are all non-null and non-empty and whose box lies inside
/// a box window answers an intersects (or box) query by its entry: its rows are neither
/// tested nor, without WKB, read. Blocks of 16 points on a 4 × 4 grid each (block b at
/// x in [10b, 10b + 3]); block 3 holds a null and block 5 an empty point, so they are
/// tested. Every answer equals the brute force, with and without WKB, and the rows
/// answered by box are exactly those of the whole blocks inside the window.
#[test]
fn blocks_inside_the_window_answer_without_their_geometry() {
    for form in [Form::Point, Form::Var] {
        let path = tmp(&format!("blocks-inside-{form:?}.h5"));
        let (_f, t) = create(&path, form);
        let rows: Vec<Option<Vec<u8>>> = (0..160u64)
            .map(|i| {
                let (b, k) = (i / 16, i % 16);
                match (b, k) {
                    (3, 7) => None,
                    (5, 2) => Some(point(f64::NAN, f64::NAN)),
                    _ => Some(point(10.0 * b as f64 + (k % 4) as f64, (k / 4) as f64)),
                }
            })
            .collect();
        t.append(&batch(rows, 0)).unwrap();
        t.build_block_bbox("geom", Some(16)).unwrap();
        let tr = truth(&t);
        // (window, blocks wholly inside it and answerable by box)
        let cases: [(BBox, &[u64]); 5] = [
            (BBox::xy(-1.0, -1.0, 100.0, 4.0), &[0, 1, 2, 4, 6, 7, 8, 9]),
            (BBox::xy(9.0, 0.0, 33.0, 3.0), &[1, 2]),
            (BBox::xy(10.0, 0.0, 13.0, 3.0), &[1]),
            (BBox::xy(10.5, 0.0, 13.0, 3.0), &[]),
            (BBox::xy(28.0, -5.0, 62.0, 9.0), &[4]),
        ];
        for (w, whole) in cases {
            let win = Window::BBox(w);
            for p in PREDICATES {
                let want = brute(&tr, &win, p);
                let base = Query::new(win.clone(), p).with_rtree(false).with_covering(false);
                let plain = t.query("geom", &base).unwrap();
                let with = t.query("geom", &base.clone().with_wkb(true)).unwrap();
                assert_eq!(plain.rows, want, "{form:?} {w:?} {p:?}");
                assert_eq!(with.rows, want, "{form:?} {w:?} {p:?} with WKB");
                assert_eq!(with.wkb.unwrap(), t.take_wkb("geom", &want).unwrap(), "{form:?} {w:?} {p:?}");
                assert!(plain.stats.used_block_index);
                let by_box = if matches!(p, Predicate::Intersects | Predicate::BBoxOnly) { whole.len() as u64 * 16 } else { 0 };
                assert_eq!(plain.stats.rows_by_box, by_box, "{form:?} {w:?} {p:?}");
                assert_eq!(with.stats.rows_by_box, by_box, "{form:?} {w:?} {p:?} with WKB");
                assert_eq!(plain.stats.exact_tested + by_box, with.stats.exact_tested + by_box);
                // Nearby runs are read as one group, so an inside block between blocks to
                // test may be read anyway; when every match is by box nothing is read.
                assert!(plain.stats.bytes_read <= with.stats.bytes_read, "{form:?} {w:?}");
                if by_box > 0 && by_box == want.len() as u64 {
                    assert!(plain.stats.bytes_read < with.stats.bytes_read, "{form:?} {w:?}: the inside blocks were read");
                }
            }
        }
        let _ = std::fs::remove_file(&path);
    }
}

/// Point columns of f64 and of f32 coordinates, with null rows (stored as the fill value,
/// 9.97e36, which some windows below contain) and empty (NaN) points: a query without WKB (the
/// points tested in place, issue #33) answers and counts exactly as the query with WKB (the
/// general loop) and as brute force, on windows whose edges pass through points (closed
/// for intersects, open for within) and on zero-area windows; the WKB returned equals
/// `take_wkb` of the answer.
#[test]
fn point_columns_answer_alike_with_and_without_wkb() {
    for f32 in [false, true] {
        let path = tmp(&format!("points-box-{f32}.h5"));
        let f = File::create(&path).unwrap();
        let mut t = MarquetTable::create(&f, "/t").unwrap();
        t.add_column("id", &marquet::h5col::ColumnSpec::new(marquet::h5::Dtype::U64).with_chunk_rows(64)).unwrap();
        let spec = GeometryColumnSpec::default().with_chunk_rows(64).with_form(StorageForm::Point { dims: Dimensions::Xy, f32 });
        t.add_geometry_column("geom", &spec).unwrap();
        let rows: Vec<Option<Vec<u8>>> = (0..300u64)
            .map(|i| match i % 37 {
                5 => None,
                11 => Some(point(f64::NAN, f64::NAN)),
                _ => Some(point((i % 20) as f64 * 0.5, (i / 20) as f64 * 0.5)),
            })
            .collect();
        t.append(&batch(rows, 0)).unwrap();
        t.build_block_bbox("geom", Some(16)).unwrap();
        let tr = truth(&t);
        assert_eq!(tr.iter().filter(|r| r.is_none()).count(), 8, "the null rows read back as null");
        for w in [
            BBox::xy(1.0, 1.0, 3.5, 2.0),
            BBox::xy(-1e38, -1e38, 1e38, 1e38),
            BBox::xy(0.25, 0.25, 0.75, 7.0),
            BBox::xy(2.0, 0.0, 2.0, 5.0),
            BBox::xy(1.5, 1.5, 1.5, 1.5),
        ] {
            let win = Window::BBox(w);
            for p in PREDICATES {
                let want = brute(&tr, &win, p);
                for indexed in [true, false] {
                    let base = Query::new(win.clone(), p).with_indexes(indexed);
                    let plain = t.query("geom", &base).unwrap();
                    let with = t.query("geom", &base.clone().with_wkb(true)).unwrap();
                    assert_eq!(plain.rows, want, "f32 {f32} {w:?} {p:?} indexed {indexed}");
                    assert_eq!(with.rows, want, "f32 {f32} {w:?} {p:?} indexed {indexed}, with WKB");
                    assert_eq!(plain.stats.exact_tested, with.stats.exact_tested, "f32 {f32} {w:?} {p:?} indexed {indexed}");
                    assert_eq!(with.wkb.unwrap(), t.take_wkb("geom", &want).unwrap(), "f32 {f32} {w:?} {p:?} indexed {indexed}: the WKB");
                    if !indexed {
                        assert_eq!(plain.stats.exact_tested + plain.stats.rows_by_box, 292, "every non-null row tested");
                    }
                }
            }
        }
        drop(t);
        drop(f);
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn every_path_equals_brute_force_points() {
    run_form(Form::Point, 1);
}

#[test]
fn every_path_equals_brute_force_fixed_wkb() {
    run_form(Form::Fixed, 2);
}

#[test]
fn every_path_equals_brute_force_var_wkb() {
    run_form(Form::Var, 3);
}

#[test]
fn null_and_empty_rows_never_match_and_empty_windows_match_nothing() {
    let (_f, t) = create(&tmp("nulls.h5"), Form::Var);
    let rows = vec![None, Some(point(f64::NAN, f64::NAN)), Some(point(1.0, 1.0)), None];
    t.append(&batch(rows, 0)).unwrap();
    t.build_block_bbox("geom", Some(2)).unwrap();
    t.build_rtree("geom", None).unwrap();
    let everything = BBox::xy(-1e300, -1e300, 1e300, 1e300);
    for p in PREDICATES {
        let res = t.query("geom", &Query::new(Window::BBox(everything), p)).unwrap();
        let want: Vec<u64> = if p == Predicate::Contains { vec![] } else { vec![2] };
        assert_eq!(res.rows, want, "{p:?}");
    }
    let empty = Window::Geometry(Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![] }));
    let res = t.query("geom", &Query::new(empty, Predicate::Intersects)).unwrap();
    assert!(res.rows.is_empty());
    assert_eq!(res.stats.bytes_read, 0);
    // The block of rows 0-1 holds no geometry: its box is empty and it is always skipped.
    let res = t.query("geom", &Query::bbox(everything).with_rtree(false)).unwrap();
    assert_eq!((res.stats.blocks_total, res.stats.blocks_skipped), (2, 1));
}

#[test]
fn window_from_wkb_and_wrapping_windows() {
    let (_f, t) = create(&tmp("wrap.h5"), Form::Point);
    let rows = vec![Some(point(179.5, 0.0)), Some(point(-179.5, 0.0)), Some(point(0.0, 0.0))];
    t.append(&batch(rows, 0)).unwrap();
    t.build_block_bbox("geom", Some(1)).unwrap();
    t.build_rtree("geom", None).unwrap();
    // OGC:CRS84 (the default) is geographic: a window may wrap around the antimeridian.
    let w = Window::BBox(BBox::xy(179.0, -1.0, -179.0, 1.0));
    for cfg in configs() {
        let res = t.query("geom", &(cfg.1)(Query::new(w.clone(), Predicate::Intersects))).unwrap();
        assert_eq!(res.rows, vec![0, 1], "{}", cfg.0);
    }
    let tri = point(0.0, 0.0);
    let res = t.query("geom", &Query::new(Window::from_wkb(&tri).unwrap(), Predicate::Intersects)).unwrap();
    assert_eq!(res.rows, vec![2]);
    assert!(Window::from_wkb(&[1, 2, 3]).is_err());
}


/// Box windows decide points and boxes inside them without the exact test: a point on the
/// window's edge intersects it but is not within it; a polygon touching the edge from
/// inside is within it (OGC), which the exact test decides.
#[test]
fn box_window_boundaries_follow_ogc() {
    let p = tmp("boundaries.h5");
    let (_f, t) = create(&p, Form::Point);
    let pts = [(0.0, 0.0), (1.0, 0.5), (0.5, 0.5), (2.0, 2.0), (0.5, 1.0)];
    t.append(&batch(pts.iter().map(|&(x, y)| Some(point(x, y))).collect(), 0)).unwrap();
    let w = BBox::xy(0.0, 0.0, 1.0, 1.0);
    for idx in [true, false] {
        let q = |p| Query::bbox(w).with_predicate(p).with_indexes(idx);
        assert_eq!(t.query("geom", &q(Predicate::Intersects)).unwrap().rows, vec![0, 1, 2, 4]);
        assert_eq!(t.query("geom", &q(Predicate::Within)).unwrap().rows, vec![2]);
    }
    let p = tmp("boundaries_var.h5");
    let (_f, t) = create(&p, Form::Var);
    let square = |x0: f64, y0: f64, x1: f64, y1: f64| {
        let ring = vec![Coord::xy(x0, y0), Coord::xy(x1, y0), Coord::xy(x1, y1), Coord::xy(x0, y1), Coord::xy(x0, y0)];
        enc(&Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring] }))
    };
    let rows = vec![
        Some(square(0.0, 0.0, 0.5, 0.5)),   // touches the window's corner from inside
        Some(square(0.25, 0.25, 0.75, 0.75)), // strictly inside
        Some(square(0.5, 0.5, 1.5, 1.5)),   // crosses the edge
        Some(square(1.0, 0.0, 2.0, 1.0)),   // shares the edge x = 1 from outside
    ];
    t.append(&batch(rows, 0)).unwrap();
    for idx in [true, false] {
        let q = |p| Query::bbox(w).with_predicate(p).with_indexes(idx).with_wkb(true);
        let r = t.query("geom", &q(Predicate::Intersects)).unwrap();
        assert_eq!(r.rows, vec![0, 1, 2, 3]);
        assert_eq!(r.wkb.unwrap().get(1).unwrap(), &square(0.25, 0.25, 0.75, 0.75)[..]);
        assert_eq!(t.query("geom", &q(Predicate::Within)).unwrap().rows, vec![0, 1]);
    }
}

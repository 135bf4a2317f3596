//! Property tests: every index-backed column filter (HEP001 §11.4–§11.7) returns exactly
//! the rows a brute-force evaluation of an in-memory model returns — on random data, for
//! random predicates, with fresh indexes, with indexes left stale by appends, after
//! rebuilds, truncations and in-place updates. Plus categoricals, row labels, and
//! malformed index datasets that must yield typed errors.


mod common;

use common::synth;

use std::cmp::Ordering;
use std::ops::Bound;

use marquet::h5::{self, Dtype};
use marquet::h5col::categorical::{self, add_categorical_column, create_categories};
use marquet::h5col::predicate::{filter_rows, filter_rows_with, rows_with_labels, ColumnFilter, IndexChoice, Scalar};
use marquet::h5col::search_index::{build_bitmap, build_chunk_bloom, build_sorted_rows, BloomParams, DEFAULT_BITMAP_MAX_VALUES};
use marquet::h5col::{search_index as index, Array, Batch, ColumnSpec, ColumnValues, File, Table};
use marquet::spec::names;
use crate::synth::SplitMix64;
use marquet::Error as MarquetError;

const KINDS: [&str; 4] = [names::KIND_CHUNK_MINMAX, names::KIND_SORTED_ROWS, names::KIND_BITMAP, names::KIND_CHUNK_BLOOM];
const FLOATS: [f64; 9] = [-0.0, 0.0, 1.5, -2.25, 3.0, 1e300, f64::NEG_INFINITY, f64::INFINITY, f64::NAN];
const STRINGS: [&str; 6] = ["", "a", "ab", "b", "ba", "zz"];
const LABELS: [&str; 3] = ["low", "mid", "high"];
const STR: Dtype = Dtype::FixedString { size: 4, utf8: true, nullterm: true, spacepad: false };

/// One row of the model; `None` = missing.
#[derive(Clone, Debug)]
struct Row {
    i: Option<i64>,
    f: Option<f64>,
    s: Option<&'static str>,
    c: Option<i8>,
}

fn random_rows(r: &mut SplitMix64, n: usize) -> Vec<Row> {
    (0..n)
        .map(|_| Row {
            i: (r.f64() > 0.1).then(|| r.int(0, 40) as i64 - 20),
            f: (r.f64() > 0.1).then(|| {
                if r.f64() < 0.5 {
                    FLOATS[r.int(0, 8) as usize]
                } else {
                    (r.range(-5.0, 5.0) * 4.0).round() / 4.0
                }
            }),
            // "" stands for a missing row (written with a missing flag, so as the column's
            // fill 0xFF, local ruling L17).
            s: Some(STRINGS[r.int(0, 5) as usize]).filter(|s| !s.is_empty()),
            c: (r.f64() > 0.1).then(|| r.int(0, 2) as i8),
        })
        .collect()
}

fn batch(rows: &[Row]) -> Batch {
    let miss = |f: &dyn Fn(&Row) -> bool| Some(rows.iter().map(f).collect::<Vec<bool>>());
    let strs: Vec<&str> = rows.iter().map(|r| r.s.unwrap_or("")).collect();
    Batch::new()
        .with(
            "i",
            ColumnValues::Array { values: Array::from_i64(&rows.iter().map(|r| r.i.unwrap_or(0)).collect::<Vec<_>>()), missing: miss(&|r| r.i.is_none()) },
        )
        .with(
            "f",
            ColumnValues::Array { values: Array::from_f64(&rows.iter().map(|r| r.f.unwrap_or(0.0)).collect::<Vec<_>>()), missing: miss(&|r| r.f.is_none()) },
        )
        .with("s", ColumnValues::Array { values: Array::from_strings_sized(&strs, true, 4).unwrap(), missing: miss(&|r| r.s.is_none()) })
        .with(
            "c",
            ColumnValues::Array { values: Array::from_i8(&rows.iter().map(|r| r.c.unwrap_or(0)).collect::<Vec<_>>()), missing: miss(&|r| r.c.is_none()) },
        )
}

fn create(f: &File, chunk: u64) -> Table {
    let t = f.create_table("/t").unwrap();
    let spec = |d: Dtype| ColumnSpec::new(d).with_chunk_rows(chunk);
    t.add_column("i", &spec(Dtype::I64)).unwrap();
    t.add_column("f", &spec(Dtype::F64)).unwrap();
    t.add_column("s", &spec(STR)).unwrap();
    let cats = create_categories(&t, "levels", &LABELS, true).unwrap();
    add_categorical_column(&t, "c", &spec(Dtype::I8), &cats).unwrap();
    t
}

fn build_all(t: &Table) {
    for c in ["i", "f", "c"] {
        index::build_chunk_minmax(t, c).unwrap();
    }
    for c in ["i", "f", "s", "c"] {
        build_sorted_rows(t, c).unwrap();
        build_bitmap(t, c, DEFAULT_BITMAP_MAX_VALUES).unwrap();
        build_chunk_bloom(t, c, None).unwrap();
    }
}

/// A model value as something comparable with a scalar.
#[derive(Clone, Copy)]
enum V {
    I(i64),
    F(f64),
    S(&'static str),
}

fn cmp(v: V, s: &Scalar) -> Option<Ordering> {
    match (v, s) {
        (V::I(a), Scalar::Int(b)) => Some((a as i128).cmp(b)),
        (V::I(a), Scalar::Float(b)) => (a as f64).partial_cmp(b),
        (V::F(a), Scalar::Int(b)) => a.partial_cmp(&(*b as f64)),
        (V::F(a), Scalar::Float(b)) => a.partial_cmp(b),
        (V::S(a), Scalar::Text(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
        // Categorical codes against labels.
        (V::I(a), Scalar::Text(l)) => LABELS.iter().position(|x| x == l).map(|p| (a as i128).cmp(&(p as i128))),
        _ => None,
    }
}

fn brute(v: Option<V>, f: &ColumnFilter) -> bool {
    let Some(v) = v else { return false };
    if matches!(v, V::F(x) if x.is_nan()) {
        return false;
    }
    let eq = |s: &Scalar| cmp(v, s) == Some(Ordering::Equal);
    match f {
        ColumnFilter::Eq(s) => eq(s),
        ColumnFilter::In(list) => list.iter().any(eq),
        ColumnFilter::Range { lo, hi } => {
            let lo_ok = match lo {
                Bound::Unbounded => true,
                Bound::Included(s) => matches!(cmp(v, s), Some(Ordering::Greater | Ordering::Equal)),
                Bound::Excluded(s) => cmp(v, s) == Some(Ordering::Greater),
            };
            let hi_ok = match hi {
                Bound::Unbounded => true,
                Bound::Included(s) => matches!(cmp(v, s), Some(Ordering::Less | Ordering::Equal)),
                Bound::Excluded(s) => cmp(v, s) == Some(Ordering::Less),
            };
            lo_ok && hi_ok
        }
    }
}

fn value(row: &Row, col: &str) -> Option<V> {
    match col {
        "i" => row.i.map(V::I),
        "f" => row.f.map(V::F),
        "s" => row.s.map(V::S),
        _ => row.c.map(|c| V::I(c as i64)),
    }
}

fn random_scalar(r: &mut SplitMix64, col: &str) -> Scalar {
    match col {
        "i" if r.f64() < 0.7 => Scalar::Int(r.int(0, 50) as i128 - 25),
        "i" => Scalar::Float((r.range(-25.0, 25.0) * 2.0).round() / 2.0),
        "f" if r.f64() < 0.1 => Scalar::Int(r.int(0, 6) as i128 - 3),
        "f" if r.f64() < 0.5 => Scalar::Float(FLOATS[r.int(0, 7) as usize]),
        "f" => Scalar::Float((r.range(-5.0, 5.0) * 4.0).round() / 4.0),
        "s" => Scalar::Text(["a", "ab", "b", "c", "", "zzz", "aa"][r.int(0, 6) as usize].to_string()),
        _ => Scalar::Text(LABELS[r.int(0, 2) as usize].to_string()),
    }
}

fn random_filter(r: &mut SplitMix64, col: &str) -> ColumnFilter {
    let bound = |r: &mut SplitMix64| match r.int(0, 2) {
        0 => Bound::Unbounded,
        1 => Bound::Included(random_scalar(r, col)),
        _ => Bound::Excluded(random_scalar(r, col)),
    };
    match r.int(0, 2) {
        0 => ColumnFilter::Eq(random_scalar(r, col)),
        1 => ColumnFilter::In((0..r.int(0, 4)).map(|_| random_scalar(r, col)).collect()),
        _ => ColumnFilter::Range { lo: bound(r), hi: bound(r) },
    }
}

/// Check every predicate on every column through every index choice; `fresh` lists the
/// kinds whose indexes must be valid (and must answer when they can).
fn check_all(t: &Table, model: &[Row], r: &mut SplitMix64, fresh: &[&str], trials: usize, ctx: &str) {
    for col in ["i", "f", "s", "c"] {
        for _ in 0..trials {
            let f = random_filter(r, col);
            let want: Vec<u64> = (0..model.len() as u64).filter(|&i| brute(value(&model[i as usize], col), &f)).collect();
            let scan = filter_rows_with(t, col, &f, IndexChoice::Scan).unwrap();
            assert_eq!(scan.rows, want, "{ctx}: scan {col} {f:?}");
            assert_eq!(scan.stats.index_used, None);
            assert_eq!(scan.stats.rows_examined, model.len() as u64);
            let auto = filter_rows(t, col, &f).unwrap();
            assert_eq!(auto.rows, want, "{ctx}: auto {col} {f:?} via {:?}", auto.stats.index_used);
            for kind in KINDS {
                let out = filter_rows_with(t, col, &f, IndexChoice::Kind(kind)).unwrap();
                assert_eq!(out.rows, want, "{ctx}: {kind} on {col} {f:?} (used {:?})", out.stats.index_used);
                let has = !(kind == names::KIND_CHUNK_MINMAX && col == "s");
                let can_answer = kind != names::KIND_CHUNK_BLOOM || !matches!(f, ColumnFilter::Range { .. });
                let expect_used = has && can_answer && fresh.contains(&kind);
                // A Bloom filter may also answer a range that holds no value or one value.
                if can_answer || out.stats.index_used.is_none() || !fresh.contains(&kind) {
                    assert_eq!(out.stats.index_used.is_some(), expect_used, "{ctx}: {kind} on {col} {f:?} used? {:?}", out.stats);
                }
            }
        }
    }
}

#[test]
fn index_backed_filters_equal_brute_force_fresh_stale_and_rebuilt() {
    let _serial = common::serial();
    let dir = common::TempDir::new("h5col-filters-prop");
    let trials: u64 = std::env::var("MARQUET_FILTER_TRIALS").ok().and_then(|s| s.parse().ok()).unwrap_or(6);
    for seed in 0..trials {
        let mut r = SplitMix64::new(0xF117E5 + seed);
        let chunk = r.int(1, 40);
        let p = dir.join(&format!("t{seed}.h5"));
        let f = File::create(&p).unwrap();
        let t = create(&f, chunk);
        let n0 = r.int(0, 250) as usize;
        let mut model = random_rows(&mut r, n0);
        t.append(&batch(&model)).unwrap();
        build_all(&t);
        let ctx = format!("seed {seed} chunk {chunk} rows {}", model.len());
        check_all(&t, &model, &mut r, &KINDS, 8, &ctx);

        // Appends: CHUNK_MINMAX and CHUNK_BLOOM are maintained; SORTED_ROWS and BITMAP go stale.
        for _ in 0..r.int(1, 3) {
            let k = r.int(1, 60) as usize;
            let more = random_rows(&mut r, k);
            t.append(&batch(&more)).unwrap();
            model.extend(more);
        }
        let maintained = [names::KIND_CHUNK_MINMAX, names::KIND_CHUNK_BLOOM];
        let out = filter_rows(&t, "i", &ColumnFilter::Eq(Scalar::Int(0))).unwrap();
        assert_eq!(out.stats.stale_indexes, 2, "{ctx}: SORTED_ROWS and BITMAP on i are stale");
        check_all(&t, &model, &mut r, &maintained, 6, &format!("{ctx} after appends"));

        // Rebuilding in place makes them valid again.
        for c in ["i", "f", "s", "c"] {
            build_sorted_rows(&t, c).unwrap();
            build_bitmap(&t, c, DEFAULT_BITMAP_MAX_VALUES).unwrap();
        }
        assert_eq!(filter_rows(&t, "i", &ColumnFilter::Eq(Scalar::Int(0))).unwrap().stats.stale_indexes, 0);
        check_all(&t, &model, &mut r, &KINDS, 6, &format!("{ctx} rebuilt"));

        // Truncation: maintained kinds follow, the others go stale again.
        let keep = r.int(0, model.len() as u64);
        t.truncate(keep).unwrap();
        model.truncate(keep as usize);
        check_all(&t, &model, &mut r, &maintained, 4, &format!("{ctx} truncated to {keep}"));

        // In-place update of `i`: its CHUNK_MINMAX and CHUNK_BLOOM are rebuilt.
        if !model.is_empty() {
            let start = r.int(0, model.len() as u64 - 1);
            let n = r.int(1, model.len() as u64 - start);
            let vals: Vec<i64> = (0..n).map(|_| r.int(0, 60) as i64 - 30).collect();
            t.update("i", start, &ColumnValues::array(Array::from_i64(&vals))).unwrap();
            for (k, v) in vals.iter().enumerate() {
                model[start as usize + k].i = Some(*v);
            }
            check_all(&t, &model, &mut r, &maintained, 4, &format!("{ctx} updated"));
        }
    }
}

#[test]
fn categoricals_and_row_labels() {
    let _serial = common::serial();
    let dir = common::TempDir::new("h5col-categorical");
    let p = dir.join("c.h5");
    {
        let f = File::create(&p).unwrap();
        let t = f.create_table("/t").unwrap();
        t.add_column("id", &ColumnSpec::new(STR).with_chunk_rows(2)).unwrap();
        t.add_column("n", &ColumnSpec::new(Dtype::I64).with_chunk_rows(2)).unwrap();
        let cats = create_categories(&t, "size", &["S", "M", "L"], true).unwrap();
        assert_eq!(cats, "/t/CATEGORIES/size");
        // Shared by two columns; the second call reuses the dataset.
        assert_eq!(create_categories(&t, "size", &["S", "M", "L"], true).unwrap(), cats);
        assert!(create_categories(&t, "size", &["S", "L"], true).is_err());
        add_categorical_column(&t, "shirt", &ColumnSpec::new(Dtype::I8).with_chunk_rows(2), &cats).unwrap();
        add_categorical_column(&t, "hat", &ColumnSpec::new(Dtype::I8).with_chunk_rows(2), &cats).unwrap();
        // A fill that is a valid code is refused (HEP001 §13 req 8).
        let e = add_categorical_column(&t, "bad", &ColumnSpec::new(Dtype::I8).with_fill(vec![1]), &cats).err().unwrap();
        assert!(e.to_string().contains("fill value 1 is a valid category code"), "{e}");
        t.set_index_columns(&["id", "n"]).unwrap();
        t.append(
            &Batch::new()
                .with_array("id", Array::from_strings_sized(&["x", "y", "x", "z", "y"], true, 4).unwrap())
                .with_array("n", Array::from_i64(&[1, 1, 2, 1, 1]))
                .with("shirt", ColumnValues::Array { values: Array::from_i8(&[0, 2, 1, 0, 2]), missing: Some(vec![false, false, false, true, false]) })
                .with_array("hat", Array::from_i8(&[1, 1, 0, 2, 2])),
        )
        .unwrap();
    }
    let f = File::open(&p).unwrap();
    let t = f.table("/t").unwrap();
    let c = categorical::categories_of(&t, "shirt").unwrap().unwrap();
    assert_eq!((c.path.as_str(), c.labels.clone(), c.ordered), ("/t/CATEGORIES/size", vec!["S".to_string(), "M".into(), "L".into()], true));
    assert_eq!(categorical::categories_of(&t, "hat").unwrap().unwrap().path, "/t/CATEGORIES/size");
    assert_eq!(categorical::categories_of(&t, "n").unwrap(), None);
    assert_eq!(categorical::read_labels(&t, "shirt", 0, 5).unwrap(), vec![Some("S".into()), Some("L".into()), Some("M".into()), None, Some("L".into())]);
    assert_eq!(filter_rows(&t, "shirt", &ColumnFilter::Eq(Scalar::Text("L".into()))).unwrap().rows, vec![1, 4]);
    assert_eq!(filter_rows(&t, "shirt", &ColumnFilter::Eq(Scalar::Text("XL".into()))).unwrap().rows, Vec::<u64>::new());
    let ge_m = ColumnFilter::Range { lo: Bound::Included(Scalar::Text("M".into())), hi: Bound::Unbounded };
    assert_eq!(filter_rows(&t, "shirt", &ge_m).unwrap().rows, vec![1, 2, 4]);
    assert_eq!(filter_rows(&t, "hat", &ge_m).unwrap().rows, vec![0, 1, 3, 4]);
    // Row labels: INDEX_COLUMNS = [id, n].
    assert_eq!(rows_with_labels(&t, &[Scalar::Text("x".into())]).unwrap(), vec![0, 2]);
    assert_eq!(rows_with_labels(&t, &[Scalar::Text("y".into()), Scalar::Int(1)]).unwrap(), vec![1, 4]);
    assert_eq!(rows_with_labels(&t, &[Scalar::Text("x".into()), Scalar::Int(2)]).unwrap(), vec![2]);
    assert_eq!(rows_with_labels(&t, &[Scalar::Text("w".into())]).unwrap(), Vec::<u64>::new());
    let e = rows_with_labels(&t, &[Scalar::Int(1), Scalar::Int(1), Scalar::Int(1)]).unwrap_err();
    assert_eq!(e.to_string(), "invalid argument: 3 labels for 2 index levels");
}

/// Malformed index datasets with valid tokens are typed errors naming the index and the
/// rule; nothing panics.
#[test]
fn malformed_indexes_are_typed_errors() {
    let _serial = common::serial();
    let dir = common::TempDir::new("h5col-bad-index");
    let p = dir.join("bad.h5");
    let f = File::create(&p).unwrap();
    let t = f.create_table("/t").unwrap();
    t.add_column("v", &ColumnSpec::new(Dtype::I64).with_chunk_rows(4)).unwrap();
    t.append(&Batch::new().with_array("v", Array::from_i64(&[5, 3, 9, 1, 7, 3, 2, 8, 6, 4]))).unwrap();
    let eq3 = ColumnFilter::Eq(Scalar::Int(3));

    // CHUNK_BLOOM: m_bits not a multiple of 8.
    let bp = build_chunk_bloom(&t, "v", Some(BloomParams { k: 3, m_bits: 64, seed: 9 })).unwrap();
    assert_eq!(filter_rows_with(&t, "v", &eq3, IndexChoice::Kind(names::KIND_CHUNK_BLOOM)).unwrap().rows, vec![1, 5]);
    let ds = h5::dataset_open(t.id(), &bp).unwrap();
    h5::attr_write_u64(ds.id(), names::BLOOM_M_BITS, 60).unwrap();
    let e = filter_rows_with(&t, "v", &eq3, IndexChoice::Kind(names::KIND_CHUNK_BLOOM)).unwrap_err();
    assert_eq!(e.to_string(), "/t/SEARCH_INDEXES/v__chunk_bloom: HEP001 §11.7: m_bits 60 is not a non-zero multiple of 8");
    h5::attr_write_ascii(ds.id(), names::BLOOM_HASH_FAMILY, "xxhash").unwrap();
    let e = filter_rows_with(&t, "v", &eq3, IndexChoice::Kind(names::KIND_CHUNK_BLOOM)).unwrap_err();
    assert!(matches!(e, MarquetError::SpecViolation { rule: "HEP001 §11.7", .. }), "{e}");

    // SORTED_ROWS: a row number past NROWS, and tails longer than the table.
    let sp = build_sorted_rows(&t, "v").unwrap();
    let ds = h5::dataset_open(t.id(), &sp).unwrap();
    // Ranks 2 and 3 hold the rows of value 3 (values sorted: 1 2 3 3 4 ...).
    h5::dataset_write(ds.id(), 2, &Dtype::U64, &99u64.to_le_bytes(), &sp).unwrap();
    let e = filter_rows_with(&t, "v", &eq3, IndexChoice::Kind(names::KIND_SORTED_ROWS)).unwrap_err();
    assert_eq!(e.to_string(), "/t/SEARCH_INDEXES/v__sorted_rows: HEP001 §11.5: row 99 is not below NROWS 10");
    h5::attr_write_u64(ds.id(), names::NAN_TAIL_LENGTH, u64::MAX).unwrap();
    let e = filter_rows_with(&t, "v", &eq3, IndexChoice::Kind(names::KIND_SORTED_ROWS)).unwrap_err();
    assert!(e.to_string().contains("tails 18446744073709551615 + 0 exceed NROWS 10"), "{e}");

    // BITMAP: VALUES attribute removed.
    let bm = build_bitmap(&t, "v", 16).unwrap();
    let ds = h5::dataset_open(t.id(), &bm).unwrap();
    h5::attr_delete(ds.id(), names::VALUES).unwrap();
    let e = filter_rows_with(&t, "v", &eq3, IndexChoice::Kind(names::KIND_BITMAP)).unwrap_err();
    assert_eq!(e.to_string(), "/t/SEARCH_INDEXES/v__bitmap: HEP001 §11.6: VALUES reference is missing");

    // Declared sizes are untrusted: a huge K or m_bits is refused before anything is allocated.
    let bm = build_bitmap(&t, "v", 16).unwrap();
    let ds = h5::dataset_open(t.id(), &bm).unwrap();
    h5::dataset_set_extent_2d(ds.id(), [1 << 21, 2], &bm).unwrap();
    let e = filter_rows_with(&t, "v", &eq3, IndexChoice::Kind(names::KIND_BITMAP)).unwrap_err();
    assert_eq!(e.to_string(), "/t/SEARCH_INDEXES/v__bitmap: HEP001 §11.6: 2097152 values, more than this reader accepts (1048576)");
    let bp = build_chunk_bloom(&t, "v", None).unwrap();
    let ds = h5::dataset_open(t.id(), &bp).unwrap();
    h5::attr_write_u64(ds.id(), names::BLOOM_M_BITS, 1 << 40).unwrap();
    let e = filter_rows_with(&t, "v", &eq3, IndexChoice::Kind(names::KIND_CHUNK_BLOOM)).unwrap_err();
    assert_eq!(e.to_string(), "/t/SEARCH_INDEXES/v__chunk_bloom: HEP001 §11.7: m_bits 1099511627776 is more than this reader accepts (134217728)");

    // Too many distinct values for a BITMAP.
    let e = build_bitmap(&t, "v", 4).unwrap_err();
    assert_eq!(e.to_string(), "unsupported: /t/v: 9 distinct values, more than the BITMAP limit of 4");

    // A scan never depends on any of them.
    assert_eq!(filter_rows_with(&t, "v", &eq3, IndexChoice::Scan).unwrap().rows, vec![1, 5]);
}

/// The validator verifies SORTED_ROWS, BITMAP and CHUNK_BLOOM content (HEP001 §13 req 9):
/// a fresh table is conformant without findings; each corrupted index is one error.
#[test]
fn validator_checks_every_index_kind() {
    use marquet::validate::{validate_file, Options, Status};
    let _serial = common::serial();
    let dir = common::TempDir::new("h5col-validate-indexes");
    let p = dir.join("v.h5");
    let mut r = SplitMix64::new(77);
    let model = random_rows(&mut r, 90);
    {
        let f = File::create(&p).unwrap();
        let t = create(&f, 16);
        t.append(&batch(&model)).unwrap();
        build_all(&t);
    }
    let findings = |p: &std::path::Path| {
        let rep = validate_file(p, &Options::default()).unwrap();
        (rep.status, rep.findings().map(|f| f.to_string()).collect::<Vec<_>>())
    };
    let (status, all) = findings(&p);
    assert_eq!(status, Status::Conformant, "{all:#?}");
    assert!(all.is_empty(), "{all:#?}");

    {
        let f = File::open_rw(&p).unwrap();
        let t = f.table("/t").unwrap();
        // SORTED_ROWS of i: swap the first two ranks.
        let sp = "/t/SEARCH_INDEXES/i__sorted_rows";
        let ds = h5::dataset_open(t.id(), sp).unwrap();
        let b = h5::dataset_read(ds.id(), 0, 2, &Dtype::U64, sp).unwrap();
        let swapped: Vec<u8> = b[8..16].iter().chain(&b[0..8]).copied().collect();
        h5::dataset_write(ds.id(), 0, &Dtype::U64, &swapped, sp).unwrap();
        // BITMAP of s: set every bit of value row 0.
        let bp = "/t/SEARCH_INDEXES/s__bitmap";
        let ds = h5::dataset_open(t.id(), bp).unwrap();
        h5::dataset_write_rows_2d(ds.id(), 0, 12, &Dtype::U8, &[0xff; 12], bp).unwrap();
        // CHUNK_BLOOM of f: clear chunk 0's filter.
        let fp = "/t/SEARCH_INDEXES/f__chunk_bloom";
        let ds = h5::dataset_open(t.id(), fp).unwrap();
        let info = h5::dataset_info(ds.id(), fp).unwrap();
        h5::dataset_write_rows_2d(ds.id(), 0, info.dims[1], &Dtype::U8, &vec![0u8; info.dims[1] as usize], fp).unwrap();
    }
    let (status, all) = findings(&p);
    assert_eq!(status, Status::NonConformant, "{all:#?}");
    assert_eq!(all.len(), 3, "{all:#?}");
    assert!(all.iter().any(|m| m.contains("/t/SEARCH_INDEXES/i__sorted_rows") && m.contains("rank 0 holds row")), "{all:#?}");
    assert!(all.iter().any(|m| m.contains("/t/SEARCH_INDEXES/s__bitmap") && m.contains("bitmap row 0 (value a) is wrong at table row")), "{all:#?}");
    assert!(all.iter().any(|m| m.contains("/t/SEARCH_INDEXES/f__chunk_bloom") && m.contains("the filter of chunk 0 lacks the value of row")), "{all:#?}");
    assert!(all.iter().all(|m| m.contains("HEP001 §13 req 9")), "{all:#?}");
}

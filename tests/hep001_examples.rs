//! HEP001 §15 worked examples, written with the library and compared with golden h5dump
//! DDL (`testdata/golden/hep001_*.ddl`), plus the same facts checked through the library's
//! own reader so that a regression in either layer fails the test.
//!
//! h5dump: env `MARQUET_H5DUMP`, else the cache of `scripts/build-h5dump.sh`; without one
//! the DDL comparison is skipped (fails under `CI`). `MARQUET_BLESS=1` rewrites the goldens.

mod common;

use std::path::Path;

use marquet::h5::{self, Dtype};
use marquet::h5col::categorical;
use marquet::h5col::search_index::{self as index, range_filter, FilterStats};
use marquet::h5col::list::{LeafSpec, ListSpec};
use marquet::h5col::{Array, Batch, ColumnSpec, ColumnValues, File, ListArray, ListValues, Table};
use marquet::spec::names;

/// Rows of the example table (HEP001 §15.1 leaves N open).
const N: usize = 5;
/// Chunk length of every column: 2 rows, so 5 rows make 3 chunks (the last one partial).
const CHUNK: u64 = 2;

const ROW_ID: [u64; N] = [1001, 1002, 1003, 1004, 1005];
const TS: [i64; N] = [100, 160, 220, 280, 340];
/// Row 2 of `energy` is missing (written as the recommended float fill).
const ENERGY: [f32; N] = [1.5, 2.25, 0.0, 4.0, 0.5];
const ENERGY_MISSING: [bool; N] = [false, false, true, false, false];
const LABEL: [i8; N] = [0, 2, 1, 1, 0];
/// The categories of `label` (HEP001 §15.1 shows three without naming them).
const LABELS: [&str; 3] = ["electron", "muon", "pion"];

/// HEP001's recommended float32 fill, 9.9692099683868690e+36 (§8.5).
const F32_FILL_BITS: u32 = 0x7CF0_0000;

/// A column spec with the examples' small chunks and no filters (readable DDL).
fn spec(dtype: Dtype) -> ColumnSpec {
    ColumnSpec::new(dtype).with_chunk_rows(CHUNK).with_filters(vec![])
}

/// §15.1: the table group and its four columns, no rows yet.
fn create_minimal(f: &File) -> Table {
    let t = f.create_table("/my_table").unwrap();
    t.set_text_attr(names::TITLE, "Sample run").unwrap();
    t.add_column("row_id", &spec(Dtype::U64).with_description("Globally unique event identifier.")).unwrap();
    t.add_column(
        "ts",
        &spec(Dtype::I64).with_units("s").with_units_vocabulary("UDUNITS-2").with_description("Event timestamp."),
    )
    .unwrap();
    t.add_column("energy", &spec(Dtype::F32).with_units("MeV")).unwrap();
    // `label` is categorical: CATEGORIES -> CATEGORIES/label__CATEGORIES, three labels,
    // ordered = false (§8.7, §15.1). HEP001 does not give the labels; these are ours. The
    // listing shows a vlen UTF-8 categories dataset, the diagram a fixed UTF-8 one ("either
    // is allowed"); we write fixed-length UTF-8 (no vlen data anywhere).
    let cats = categorical::create_categories(&t, "label__CATEGORIES", &LABELS, false).unwrap();
    categorical::add_categorical_column(&t, "label", &spec(Dtype::I8).with_description("Class label."), &cats).unwrap();
    t.set_index_columns(&["row_id"]).unwrap();
    t
}

/// The four minimal columns for rows `[a, b)`.
fn minimal_batch(a: usize, b: usize) -> Batch {
    Batch::new()
        .with_array("row_id", Array::from_u64(&ROW_ID[a..b]))
        .with_array("ts", Array::from_i64(&TS[a..b]))
        .with(
            "energy",
            ColumnValues::Array {
                values: Array::from_f32(&ENERGY[a..b]),
                missing: Some(ENERGY_MISSING[a..b].to_vec()),
            },
        )
        .with_array("label", Array::from_i8(&LABEL[a..b]))
}

/// `readings` (§15.2): list<float32>, row 1 null, row 2 empty.
fn readings() -> ListArray {
    ListArray {
        offsets: vec![0, 2, 2, 2, 3, 6],
        mask: Some(vec![true, false, true, true, true]),
        values: ListValues::Leaf(Array::from_f32(&[0.5, 0.75, 1.25, 2.0, 2.5, 3.0])),
    }
}

/// `tags` (§15.2): list<utf8>, no null lists (so no MASK), rows 1 and 3 empty.
fn tags() -> ListArray {
    ListArray::from_string_rows(&[
        Some(vec!["muon", "trigger"]),
        Some(vec![]),
        Some(vec!["e"]),
        Some(vec![]),
        Some(vec!["pion", "", "jet"]),
    ])
}

fn text_attr(id: hdf5_sys::h5i::hid_t, name: &str) -> Option<String> {
    h5::attr_read(id, name).unwrap().and_then(|a| a.as_str().map(str::to_string))
}

fn column_text_attr(t: &Table, path: &str, name: &str) -> Option<String> {
    let o = h5::object_open(t.id(), path).unwrap();
    text_attr(o.id(), name)
}

/// Checks shared by all three examples: the §15.1 part of the table, read back.
fn check_minimal(t: &Table, expected_order: &[&str]) {
    assert_eq!(t.nrows().unwrap(), N as u64);
    assert_eq!(t.column_names().unwrap(), expected_order);
    assert_eq!(t.index_columns().unwrap(), vec!["row_id"]);
    assert_eq!(t.text_attr(names::INDEX_NAME).unwrap().as_deref(), Some("row_id"));
    assert_eq!(t.text_attr(names::TITLE).unwrap().as_deref(), Some("Sample run"));
    assert_eq!(t.text_attr(names::CLASS).unwrap().as_deref(), Some(names::COLUMN_TABLE));
    assert_eq!(t.text_attr(names::VERSION).unwrap().as_deref(), Some("1.0"));
    assert_eq!(t.extent().unwrap(), Some(N as u64));

    let row_id = t.read("row_id", 0, N as u64).unwrap();
    assert_eq!((0..N).map(|i| row_id.get_i128(i).unwrap() as u64).collect::<Vec<_>>(), ROW_ID);
    let ts = t.read("ts", 0, N as u64).unwrap();
    assert_eq!((0..N).map(|i| ts.get_i128(i).unwrap() as i64).collect::<Vec<_>>(), TS);
    let label = t.read("label", 0, N as u64).unwrap();
    assert_eq!((0..N).map(|i| label.get_i128(i).unwrap() as i8).collect::<Vec<_>>(), LABEL);

    let energy_col = t.column("energy").unwrap();
    assert_eq!(energy_col.fill(), Some(&F32_FILL_BITS.to_le_bytes()[..]));
    assert_eq!(energy_col.chunk_rows(), Some(CHUNK));
    let energy = t.read("energy", 0, N as u64).unwrap();
    assert_eq!(energy.missing(energy_col.fill()), ENERGY_MISSING);
    for i in (0..N).filter(|&i| !ENERGY_MISSING[i]) {
        assert_eq!(energy.get_f64(i), Some(ENERGY[i] as f64), "energy row {i}");
    }

    assert_eq!(column_text_attr(t, "row_id", names::DESCRIPTION).as_deref(), Some("Globally unique event identifier."));
    assert_eq!(column_text_attr(t, "ts", names::UNITS).as_deref(), Some("s"));
    assert_eq!(column_text_attr(t, "ts", names::UNITS_VOCABULARY).as_deref(), Some("UDUNITS-2"));
    assert_eq!(column_text_attr(t, "energy", names::UNITS).as_deref(), Some("MeV"));
    assert_eq!(column_text_attr(t, "label", names::DESCRIPTION).as_deref(), Some("Class label."));
    let cats = categorical::categories_of(t, "label").unwrap().unwrap();
    assert_eq!(cats.path, "/my_table/CATEGORIES/label__CATEGORIES");
    assert_eq!((cats.labels.iter().map(String::as_str).collect::<Vec<_>>(), cats.ordered), (LABELS.to_vec(), false));
    assert_eq!(
        categorical::read_labels(t, "label", 0, N as u64).unwrap(),
        LABEL.iter().map(|&c| Some(LABELS[c as usize].to_string())).collect::<Vec<_>>()
    );
}

/// Dump `file` with `h5dump -p` (properties: chunking, filters, fill values) and compare
/// it with `testdata/golden/<name>.ddl`.
fn compare_with_golden(name: &str, file: &Path) {
    let Some(h5dump) = common::h5dump_or_skip(name) else { return };
    let ddl = common::run_h5dump(&h5dump, &["-p"], file);
    common::check_golden(name, &common::normalize_ddl(&ddl, file));
}

#[test]
fn hep001_15_1_minimal_table() {
    let _serial = common::serial();
    let dir = common::TempDir::new("hep001-15-1");
    let p = dir.join("minimal.h5");
    {
        let f = File::create(&p).unwrap();
        let t = create_minimal(&f);
        assert_eq!(t.append(&minimal_batch(0, N)).unwrap(), N as u64);
    }
    {
        let f = File::open(&p).unwrap();
        assert_eq!(f.tables().unwrap(), vec!["/my_table".to_string()]);
        let t = f.table("/my_table").unwrap();
        check_minimal(&t, &["row_id", "ts", "energy", "label"]);
        // No search indexes, so no GENERATION (HEP001 §12.2).
        assert_eq!(t.generation().unwrap(), None);
        assert!(!t.member_names().unwrap().iter().any(|m| m == names::SEARCH_INDEXES));
    }
    compare_with_golden("hep001_15_1_minimal", &p);
}

#[test]
fn hep001_15_2_list_columns() {
    let _serial = common::serial();
    let dir = common::TempDir::new("hep001-15-2");
    let p = dir.join("lists.h5");
    {
        let f = File::create(&p).unwrap();
        let t = create_minimal(&f);
        let mut r = ListSpec::of(Dtype::F32).with_mask().with_description("Per-event auxiliary sensor readings.");
        r.leaf = LeafSpec::Dataset { dtype: Dtype::F32, fill: None, chunk: 4, filters: vec![] };
        r.offsets_chunk = 4;
        t.add_list_column("readings", &r).unwrap();
        // HEP001 puts `units="V"` on readings/VALUES; ListSpec can only put units on the
        // list-column group (also allowed, §9.6), so write it on VALUES directly.
        let values = h5::object_open(t.id(), "readings/VALUES").unwrap();
        h5::attr_write_utf8(values.id(), names::UNITS, "V").unwrap();
        drop(values);
        let mut s = ListSpec::strings();
        s.offsets_chunk = 4;
        t.add_list_column("tags", &s).unwrap();
        let batch = minimal_batch(0, N)
            .with("readings", ColumnValues::List(readings()))
            .with("tags", ColumnValues::List(tags()));
        assert_eq!(t.append(&batch).unwrap(), N as u64);
    }
    {
        let f = File::open(&p).unwrap();
        let t = f.table("/my_table").unwrap();
        check_minimal(&t, &["row_id", "ts", "energy", "label", "readings", "tags"]);

        let rc = t.list_column("readings").unwrap();
        assert!(rc.has_mask());
        assert_eq!(rc.leaf_dtype().unwrap(), Dtype::F32);
        assert_eq!(rc.offsets(0, N as u64).unwrap(), vec![0, 2, 2, 2, 3, 6]);
        assert_eq!(rc.mask(0, N as u64).unwrap(), Some(vec![true, false, true, true, true]));
        assert_eq!(rc.values_info().unwrap().dims, vec![6]);
        assert_eq!(t.read_list("readings", 0, N as u64).unwrap(), readings());
        assert_eq!(column_text_attr(&t, "readings/VALUES", names::UNITS).as_deref(), Some("V"));
        assert_eq!(
            column_text_attr(&t, "readings", names::DESCRIPTION).as_deref(),
            Some("Per-event auxiliary sensor readings.")
        );
        // Rows 3..5 re-based to offset 0.
        let tail = t.read_list("readings", 3, 5).unwrap();
        assert_eq!(tail.offsets, vec![0, 1, 4]);
        assert_eq!(tail.values, ListValues::Leaf(Array::from_f32(&[1.25, 2.0, 2.5, 3.0])));

        let tc = t.list_column("tags").unwrap();
        assert!(!tc.has_mask(), "tags has no null lists, so no MASK");
        assert_eq!(tc.offsets(0, N as u64).unwrap(), vec![0, 2, 2, 3, 3, 6]);
        let tg = t.read_list("tags", 0, N as u64).unwrap();
        assert_eq!(tg, tags());
        let ListValues::Strings { offsets, chars, mask } = &tg.values else { panic!("tags are STRING_VALUES") };
        assert_eq!(mask, &None);
        let strings: Vec<&str> =
            offsets.windows(2).map(|w| std::str::from_utf8(&chars[w[0] as usize..w[1] as usize]).unwrap()).collect();
        assert_eq!(strings, ["muon", "trigger", "e", "pion", "", "jet"]);
    }
    compare_with_golden("hep001_15_2_list_columns", &p);
}

#[test]
fn hep001_15_3_chunk_minmax() {
    let _serial = common::serial();
    let dir = common::TempDir::new("hep001-15-3");
    let p = dir.join("minmax.h5");
    let index_path;
    {
        let f = File::create(&p).unwrap();
        let t = create_minimal(&f);
        // Build the index on 3 rows, then append 2 more: the append maintains the index
        // (tokens first, then content) and bumps GENERATION 0 -> 1 (HEP001 §12.3).
        t.append(&minimal_batch(0, 3)).unwrap();
        index_path = index::build_chunk_minmax(&t, "ts").unwrap();
        assert_eq!(t.generation().unwrap(), Some(0));
        assert_eq!(t.append(&minimal_batch(3, N)).unwrap(), N as u64);
    }
    assert_eq!(index_path, "/my_table/SEARCH_INDEXES/ts__chunk_minmax");
    {
        let f = File::open(&p).unwrap();
        let t = f.table("/my_table").unwrap();
        check_minimal(&t, &["row_id", "ts", "energy", "label"]);
        assert_eq!(t.generation().unwrap(), Some(1));
        let idx = index::indexes_of(&t, "ts").unwrap();
        assert_eq!(idx.len(), 1);
        assert_eq!(idx[0].path, index_path);
        assert_eq!(idx[0].kind.as_deref(), Some(names::KIND_CHUNK_MINMAX));
        assert_eq!((idx[0].source_generation, idx[0].source_nrows), (Some(1), Some(N as u64)));
        assert!(idx[0].is_valid(Some(1), N as u64));

        // ts = [100, 160 | 220, 280 | 340]: [200, 300] only needs the middle chunk.
        let (rows, st) = range_filter(&t, "ts", 200.0, 300.0).unwrap();
        assert_eq!(rows, vec![2, 3]);
        assert_eq!(st, FilterStats { chunks_total: 3, chunks_skipped: 2, used_index: true });
        let (rows, st) = range_filter(&t, "ts", 1000.0, 2000.0).unwrap();
        assert!(rows.is_empty());
        assert_eq!(st, FilterStats { chunks_total: 3, chunks_skipped: 3, used_index: true });
        // Every query agrees with brute force.
        for (lo, hi) in [(0.0, 1e9), (160.0, 160.0), (150.0, 230.0), (340.0, 340.0), (101.0, 159.0)] {
            let (rows, st) = range_filter(&t, "ts", lo, hi).unwrap();
            let brute: Vec<u64> = (0..N as u64).filter(|&i| (lo..=hi).contains(&(TS[i as usize] as f64))).collect();
            assert_eq!(rows, brute, "range [{lo}, {hi}]");
            assert!(st.used_index);
        }
        // energy has no index: no chunk is skipped, the missing row never matches.
        let (rows, st) = range_filter(&t, "energy", -1e30, 1e30).unwrap();
        assert_eq!(rows, vec![0, 1, 3, 4]);
        assert_eq!(st, FilterStats { chunks_total: 3, chunks_skipped: 0, used_index: false });
    }
    compare_with_golden("hep001_15_3_chunk_minmax", &p);
}

/// §15.4 "complete layout": the §15.1 table with one index of every HEP001 kind, named as
/// in the HEP's diagram — `ts__chunk_minmax`, `ts__chunk_bloom`, `energy__sorted_rows`,
/// `label__bitmap` with its accompanying `label__bitmap__VALUES` (the diagram's list
/// columns are left out: §15.2 covers them).
#[test]
fn hep001_15_4_every_index_kind() {
    use marquet::h5col::predicate::{filter_rows_with, ColumnFilter, IndexChoice, Scalar};
    use marquet::h5col::search_index::{self as search, BloomParams};
    let _serial = common::serial();
    let dir = common::TempDir::new("hep001-15-4");
    let p = dir.join("complete.h5");
    {
        let f = File::create(&p).unwrap();
        let t = create_minimal(&f);
        t.append(&minimal_batch(0, N)).unwrap();
        index::build_chunk_minmax(&t, "ts").unwrap();
        // Small filters keep the DDL readable: 64 bits, 3 hashes, seed 0.
        search::build_chunk_bloom(&t, "ts", Some(BloomParams { k: 3, m_bits: 64, seed: 0 })).unwrap();
        search::build_sorted_rows(&t, "energy").unwrap();
        search::build_bitmap(&t, "label", search::DEFAULT_BITMAP_MAX_VALUES).unwrap();
    }
    {
        let f = File::open(&p).unwrap();
        let t = f.table("/my_table").unwrap();
        check_minimal(&t, &["row_id", "ts", "energy", "label"]);
        let ix = index::all_indexes(&t).unwrap();
        let mut kinds: Vec<(String, String)> = ix.iter().map(|i| (i.path.clone(), i.kind.clone().unwrap())).collect();
        kinds.sort();
        assert_eq!(
            kinds,
            [
                ("/my_table/SEARCH_INDEXES/energy__sorted_rows", "SORTED_ROWS"),
                ("/my_table/SEARCH_INDEXES/label__bitmap", "BITMAP"),
                ("/my_table/SEARCH_INDEXES/ts__chunk_bloom", "CHUNK_BLOOM"),
                ("/my_table/SEARCH_INDEXES/ts__chunk_minmax", "CHUNK_MINMAX"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        assert!(ix.iter().all(|i| i.is_valid(Some(0), N as u64)));
        // energy = [1.5, 2.25, missing, 4.0, 0.5]: ranks 0.5, 1.5, 2.25, 4.0, then the fill tail.
        let sr = h5::dataset_open(t.id(), "SEARCH_INDEXES/energy__sorted_rows").unwrap();
        let perm = h5::dataset_read(sr.id(), 0, N as u64, &Dtype::U64, "sorted_rows").unwrap();
        assert_eq!(perm.chunks_exact(8).map(|b| u64::from_le_bytes(b.try_into().unwrap())).collect::<Vec<_>>(), [4, 0, 1, 3, 2]);
        // label = [0, 2, 1, 1, 0]: values 0, 1, 2 -> rows {0, 4}, {2, 3}, {1}.
        let bm = h5::dataset_open(t.id(), "SEARCH_INDEXES/label__bitmap").unwrap();
        assert_eq!(h5::dataset_read_rows_2d(bm.id(), 0, 3, 1, &Dtype::U8, "bitmap").unwrap(), [0x11, 0x0c, 0x02]);
        let kind = |k: &'static str| IndexChoice::Kind(k);
        let out = filter_rows_with(&t, "ts", &ColumnFilter::Eq(Scalar::Int(220)), kind(names::KIND_CHUNK_BLOOM)).unwrap();
        assert_eq!((out.rows, out.stats.index_used.as_deref(), out.stats.chunks_skipped), (vec![2], Some("CHUNK_BLOOM"), 2));
        let ge2 = ColumnFilter::Range { lo: std::ops::Bound::Included(Scalar::Float(2.0)), hi: std::ops::Bound::Unbounded };
        let out = filter_rows_with(&t, "energy", &ge2, kind(names::KIND_SORTED_ROWS)).unwrap();
        assert_eq!((out.rows, out.stats.index_used.as_deref()), (vec![1, 3], Some("SORTED_ROWS")));
        let out = filter_rows_with(&t, "label", &ColumnFilter::Eq(Scalar::Text("muon".into())), kind(names::KIND_BITMAP)).unwrap();
        assert_eq!((out.rows, out.stats.index_used.as_deref()), (vec![2, 3], Some("BITMAP"))); // muon = code 1
    }
    compare_with_golden("hep001_15_4_every_index_kind", &p);
}

//! H5Col table layer: create, append, read, list columns, truncate, update, indexes.

use marquet::h5::Dtype;
use marquet::h5col::search_index::{self as index, range_filter};
use marquet::h5col::list::ListSpec;
use marquet::h5col::{Array, Batch, ColumnSpec, ColumnValues, File, ListArray, ListValues};
use marquet::Error as MarquetError;

fn tmp(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("marquet-test-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name)
}

#[test]
fn create_append_read_round_trip() {
    let p = tmp("basic.h5");
    let f = File::create(&p).unwrap();
    let t = f.create_table("/group/my_table").unwrap();
    t.add_column("row_id", &ColumnSpec::new(Dtype::U64)).unwrap();
    t.add_column("energy", &ColumnSpec::new(Dtype::F32).with_units("MeV")).unwrap();
    t.add_column("label", &ColumnSpec::new(Dtype::FixedString { size: 8, utf8: true, nullterm: true, spacepad: false }))
        .unwrap();
    t.add_column("flag", &ColumnSpec::new(Dtype::hep001_bool())).unwrap();
    t.add_list_column("readings", &ListSpec::of(Dtype::F32)).unwrap();
    t.add_list_column("tags", &ListSpec::strings()).unwrap();
    t.set_index_columns(&["row_id"]).unwrap();

    let readings = ListArray {
        offsets: vec![0, 2, 2, 5],
        mask: Some(vec![true, false, true]),
        values: ListValues::Leaf(Array::from_f32(&[1.0, 2.0, 3.0, 4.0, 5.0])),
    };
    let batch = Batch::new()
        .with_array("row_id", Array::from_u64(&[10, 11, 12]))
        .with("energy", ColumnValues::Array { values: Array::from_f32(&[1.5, 0.0, 3.5]), missing: Some(vec![false, true, false]) })
        .with_array("label", Array::from_strings(&["a", "bb", "ccc"], true))
        .with_array("flag", Array::from_bools(&[true, false, true]))
        .with("readings", ColumnValues::List(readings.clone()))
        .with("tags", ColumnValues::List(ListArray::from_string_rows(&[Some(vec!["x", "yy"]), Some(vec![]), None])));
    assert_eq!(t.append(&batch).unwrap(), 3);
    drop(t);
    drop(f);

    let f = File::open(&p).unwrap();
    assert_eq!(f.tables().unwrap(), vec!["/group/my_table".to_string()]);
    let t = f.table("/group/my_table").unwrap();
    assert_eq!(t.nrows().unwrap(), 3);
    assert_eq!(t.column_names().unwrap(), vec!["row_id", "energy", "label", "flag", "readings", "tags"]);
    assert_eq!(t.index_columns().unwrap(), vec!["row_id"]);
    let e = t.read("energy", 0, 3).unwrap();
    let col = t.column("energy").unwrap();
    assert_eq!(e.missing(col.fill()), vec![false, true, false]);
    assert_eq!(e.get_f64(2), Some(3.5));
    assert_eq!(t.read("label", 0, 3).unwrap().to_string_vec().unwrap(), vec!["a", "bb", "ccc"]);
    assert_eq!(t.read_list("readings", 0, 3).unwrap(), readings);
    let tags = t.read_list("tags", 1, 3).unwrap();
    assert_eq!(tags.offsets, vec![0, 0, 0]);
    assert_eq!(tags.mask, Some(vec![true, false]));
    // Reads never expose rows at or past NROWS.
    assert!(matches!(t.read("energy", 0, 4), Err(MarquetError::InvalidArgument(_))));
}

#[test]
fn truncate_and_update_keep_indexes_honest() {
    let p = tmp("minmax.h5");
    let f = File::create(&p).unwrap();
    let t = f.create_table("/t").unwrap();
    t.add_column("ts", &ColumnSpec::new(Dtype::I64).with_chunk_rows(4)).unwrap();
    let v: Vec<i64> = (0..10).map(|i| i * 10).collect();
    t.append(&Batch::new().with_array("ts", Array::from_i64(&v))).unwrap();
    let ip = index::build_chunk_minmax(&t, "ts").unwrap();
    let (rows, st) = range_filter(&t, "ts", 35.0, 52.0).unwrap();
    assert_eq!(rows, vec![4, 5]);
    assert_eq!(st, index::FilterStats { chunks_total: 3, chunks_skipped: 2, used_index: true });
    // Append maintains the index (tokens first, then content).
    t.append(&Batch::new().with_array("ts", Array::from_i64(&[1000, 5]))).unwrap();
    let (rows, st) = range_filter(&t, "ts", 0.0, 6.0).unwrap();
    assert_eq!(rows, vec![0, 11]);
    assert!(st.used_index);
    assert_eq!(st.chunks_total, 3);
    // Update in place.
    t.update("ts", 1, &ColumnValues::array(Array::from_i64(&[3]))).unwrap();
    let (rows, st) = range_filter(&t, "ts", 0.0, 6.0).unwrap();
    assert_eq!(rows, vec![0, 1, 11]);
    assert!(st.used_index);
    // Truncate.
    t.truncate(5).unwrap();
    let (rows, st) = range_filter(&t, "ts", 0.0, 2000.0).unwrap();
    assert_eq!(rows, vec![0, 1, 2, 3, 4]);
    assert_eq!((st.chunks_total, st.used_index), (2, true));
    let info = index::indexes_of(&t, "ts").unwrap();
    assert_eq!(info.len(), 1);
    assert_eq!(info[0].path, ip);
    assert!(info[0].is_valid(t.generation().unwrap(), 5));
    assert_eq!(t.generation().unwrap(), Some(3));
}

#[test]
fn bad_input_is_a_typed_error() {
    let p = tmp("bad.h5");
    let f = File::create(&p).unwrap();
    let t = f.create_table("/t").unwrap();
    t.add_column("x", &ColumnSpec::new(Dtype::F64)).unwrap();
    assert!(matches!(f.table("/nope"), Err(MarquetError::NotATable { .. })));
    assert!(t.add_column("NROWS", &ColumnSpec::new(Dtype::F64)).is_err());
    let e = t.append(&Batch::new().with_array("x", Array::from_strings(&["a"], false))).unwrap_err();
    assert!(e.to_string().contains("cannot be written"), "{e}");
    assert_eq!(t.nrows().unwrap(), 0);
    assert!(t.add_column("b", &ColumnSpec::new(Dtype::hep001_bool()).with_fill(vec![0])).is_err());
}

#[test]
fn nested_lists_round_trip_and_bad_offsets_are_typed_errors() {
    let p = tmp("nested.h5");
    let f = File::create(&p).unwrap();
    let t = f.create_table("/t").unwrap();
    t.add_list_column("ll", &ListSpec::nested(ListSpec::of(Dtype::I64))).unwrap();
    // [[1, 2], []], null, [[3]]
    let inner = ListArray { offsets: vec![0, 2, 2, 3], mask: None, values: ListValues::Leaf(Array::from_i64(&[1, 2, 3])) };
    let outer = ListArray { offsets: vec![0, 2, 2, 3], mask: Some(vec![true, false, true]), values: ListValues::List(Box::new(inner)) };
    t.append(&Batch::new().with("ll", ColumnValues::List(outer.clone()))).unwrap();
    assert_eq!(t.read_list("ll", 0, 3).unwrap(), outer);
    let tail = t.read_list("ll", 2, 3).unwrap();
    let ListValues::List(inner) = &tail.values else { panic!("nesting lost") };
    assert_eq!(inner.values, ListValues::Leaf(Array::from_i64(&[3])));
    // Corrupt OFFSETS so they decrease: a typed error naming the path and rule.
    let ds = marquet::h5::dataset_open(t.id(), "ll/OFFSETS").unwrap();
    marquet::h5::dataset_write(ds.id(), 1, &Dtype::U64, &5u64.to_le_bytes(), "ll/OFFSETS").unwrap();
    let e = t.read_list("ll", 0, 3).unwrap_err();
    assert!(matches!(e, MarquetError::SpecViolation { rule: "HEP001 §9.2", .. }), "{e}");
    assert!(e.to_string().contains("/t/ll/OFFSETS"), "{e}");
}

#[test]
fn caller_ids_of_the_same_hdf5_open_the_same_file() {
    use marquet::marquet::MarquetTable;
    let p = tmp("caller_id.h5");
    let f = File::create(&p).unwrap();
    let g = marquet::h5::group_create(f.id(), "/vector").unwrap();

    // A file id: the root group; the wrapper holds its own reference.
    let (ff, base) = File::from_caller_id(f.id()).unwrap();
    assert_eq!(base, "/");
    assert_eq!(ff.filename(), p.display().to_string());
    MarquetTable::create(&ff, "/stations").unwrap();
    // A group id: its path.
    let (fg, base) = File::from_caller_id(g.id()).unwrap();
    assert_eq!(base, "/vector");
    MarquetTable::create(&fg, "/vector/roads").unwrap();
    drop((g, f));
    // The caller's ids are gone; the wrappers still see one file with both tables.
    let mut tables = ff.tables().unwrap();
    tables.sort();
    assert_eq!(tables, ["/stations", "/vector/roads"]);
    drop((ff, fg));

    // Ids that are not files or groups, and numbers that are no id, are typed errors.
    match File::from_caller_id(-1) {
        Err(MarquetError::InvalidArgument(m)) => assert_eq!(m, "hid_t -1 is not a live HDF5 identifier"),
        other => panic!("{:?}", other.err()),
    }
    let space = hdf5::Dataspace::try_new(3).unwrap();
    match File::from_caller_id(space.id()) {
        Err(MarquetError::InvalidArgument(m)) => {
            assert_eq!(m, format!("hid_t {} is a H5I_DATASPACE identifier, not a file or group", space.id()))
        }
        other => panic!("{:?}", other.err()),
    }
}

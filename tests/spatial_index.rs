//! Marquet's index datasets on HDF5 (HEP002 §10.2–10.6, §17): layouts and attributes,
//! exact pruning counts on hand-made layouts, the I/O a query costs, corrupted and stale
//! indexes, geodesic boxes, spatial ordering, and the §15.2 level sizes.

mod common;
use marquet::h5::{self, Dtype, Space};
use marquet::h5col::{Array, File};
use marquet::spatial::{packed_rtree, Layout};
use marquet::marquet::spatial_index::{block_bbox_dtype, rtree_dtype, IndexState, RTreeOnAppend, SpatialIndexKind};
use marquet::marquet::{Crs, Edges, GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm, WriteOptions};
use marquet::query::{Predicate, Query, Window, TableQuery};
use marquet::spec::names;
use marquet::wkb::{self, ByteOrder, Coord, Geometry, LineString, Polygon};
use marquet::{BBox, Dimensions};

fn tmp(name: &str) -> String {
    let d = std::env::temp_dir().join(format!("marquet-spatial-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d.join(name).display().to_string()
}

fn points(xs: &[f64], ys: &[f64]) -> GeometryValues {
    GeometryValues::Points { dims: Dimensions::Xy, x: xs.to_vec(), y: ys.to_vec(), z: None, m: None, valid: None }
}

/// 100 points in 10 blocks of 10: block j lies in the cell x ∈ [10j, 10j+1], y ∈ [0, 1].
fn ten_blocks(path: &str) -> (File, MarquetTable) {
    let f = File::create(path).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column(
        "pt",
        &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }).with_chunk_rows(10),
    )
    .unwrap();
    let xs: Vec<f64> = (0..100).map(|i| (i / 10) as f64 * 10.0 + (i % 10) as f64 * 0.1).collect();
    let ys: Vec<f64> = (0..100).map(|i| (i % 10) as f64 * 0.1).collect();
    t.append(&GeoBatch::new().with_geometry("pt", points(&xs, &ys))).unwrap();
    (f, t)
}

#[test]
fn block_index_layout_and_attributes() {
    let (f, t) = ten_blocks(&tmp("layout.h5"));
    // Default block length aligned with the chunks (10 rows).
    assert_eq!(t.default_block_length().unwrap(), 10);
    let path = t.build_block_bbox("pt", None).unwrap();
    assert_eq!(path, "/t/SEARCH_INDEXES/pt__block_bbox");
    let ds = h5::dataset_open(f.id(), &path).unwrap();
    let info = h5::dataset_info(ds.id(), &path).unwrap();
    assert_eq!(info.dtype, block_bbox_dtype(false, false));
    assert_eq!(info.dtype.field_names(), vec!["xmin", "ymin", "xmax", "ymax", "n", "null_count", "empty_count"]);
    assert_eq!(info.dims, vec![10]);
    assert!(info.chunk.is_some() && info.maxdims[0] == u64::MAX, "chunked and unlimited");
    let bl = h5::attr_read(ds.id(), names::BLOCK_LENGTH).unwrap().unwrap();
    assert_eq!((bl.as_u64(), bl.dtype, bl.space), (Some(10), Dtype::U64, Space::Scalar));
    let kind = h5::attr_read(ds.id(), names::KIND).unwrap().unwrap();
    assert_eq!(kind.as_str(), Some("BLOCK_BBOX"));
    let g = t.table().generation().unwrap().unwrap();
    assert_eq!(h5::attr_read(ds.id(), names::SOURCE_GENERATION).unwrap().unwrap().as_u64(), Some(g));
    assert_eq!(h5::attr_read(ds.id(), names::SOURCE_NROWS).unwrap().unwrap().as_u64(), Some(100));
    // Linked from the column's SEARCH_INDEX_LIST.
    let col = h5::object_open(f.id(), "/t/pt").unwrap();
    let (refs, _, _) = h5::attr_read_refs(col.id(), names::SEARCH_INDEX_LIST).unwrap().unwrap();
    assert_eq!(refs, vec![Some(path.clone())]);
    let IndexState::Usable(bi) = t.open_block_index("pt").unwrap() else { panic!() };
    assert_eq!(bi.entries[3].bbox, BBox::xy(30.0, 0.0, 30.9, 0.9));
    assert_eq!((bi.entries[3].n, bi.entries[3].null_count, bi.entries[3].empty_count), (10, 0, 0));

    // The R-tree: fields, attributes, upper levels in the first chunk.
    let rpath = t.build_rtree("pt", None).unwrap();
    assert_eq!(rpath, "/t/SEARCH_INDEXES/pt__rtree");
    let rds = h5::dataset_open(f.id(), &rpath).unwrap();
    let rinfo = h5::dataset_info(rds.id(), &rpath).unwrap();
    assert_eq!(rinfo.dtype, rtree_dtype());
    assert_eq!(rinfo.dtype.field_names(), vec!["xmin", "ymin", "xmax", "ymax", "index"]);
    let layout = Layout::try_new(100, 16).unwrap();
    assert_eq!(rinfo.dims, vec![layout.total]);
    assert!(rinfo.chunk.as_ref().unwrap()[0] >= layout.leaf_start());
    let ns = h5::attr_read(rds.id(), names::NODE_SIZE).unwrap().unwrap();
    assert_eq!((ns.as_u64(), ns.dtype, ns.space), (Some(16), Dtype::U16, Space::Scalar));
    assert_eq!(h5::attr_read(rds.id(), names::NUM_ITEMS).unwrap().unwrap().as_u64(), Some(100));
    let (refs, _, _) = h5::attr_read_refs(col.id(), names::SEARCH_INDEX_LIST).unwrap().unwrap();
    assert_eq!(refs, vec![Some(path.clone()), Some(rpath.clone())]);
    // Rebuilding in place keeps the same dataset and links.
    t.build_block_bbox("pt", Some(20)).unwrap();
    t.build_rtree("pt", Some(4)).unwrap();
    let (refs, _, _) = h5::attr_read_refs(col.id(), names::SEARCH_INDEX_LIST).unwrap().unwrap();
    assert_eq!(refs, vec![Some(path.clone()), Some(rpath.clone())]);
    let info = h5::dataset_info(h5::dataset_open(f.id(), &path).unwrap().id(), &path).unwrap();
    assert_eq!(info.dims, vec![5]);
    assert_eq!(t.spatial_indexes("pt").unwrap().iter().filter(|i| i.valid).count(), 2);
    assert!(t.build_block_bbox("pt", Some(0)).is_err());
    assert!(t.build_rtree("pt", Some(1)).is_err());
}

#[test]
fn ten_blocks_window_hitting_two_skips_eight_and_reads_only_their_rows() {
    let (_f, t) = ten_blocks(&tmp("ten.h5"));
    // Blocks 3 and 4: the second half of block 3 and the first half of block 4.
    let q = Query::bbox(BBox::xy(30.45, -1.0, 40.45, 2.0));
    let full = t.query("pt", &q.clone().with_indexes(false)).unwrap();
    t.build_block_bbox("pt", Some(10)).unwrap();
    let res = t.query("pt", &q).unwrap();
    assert_eq!(res.rows, full.rows);
    assert_eq!(res.rows, (35..45).collect::<Vec<u64>>());
    let s = &res.stats;
    assert_eq!((s.blocks_total, s.blocks_skipped), (10, 8));
    assert_eq!((s.rows_total, s.exact_tested, s.rows_matched), (100, 20, 10));
    // 10 index entries of 56 bytes, then the 20 rows of blocks 3 and 4 (16 bytes each).
    assert_eq!(s.bytes_read, 10 * 56 + 20 * 16);
    // Without the index every row is read.
    assert_eq!(full.stats.bytes_read, 100 * 16);
    assert_eq!((full.stats.blocks_total, full.stats.blocks_skipped, full.stats.exact_tested), (0, 0, 100));
    // A window between the blocks: all ten skipped, no row read.
    let res = t.query("pt", &Query::bbox(BBox::xy(1.5, 0.0, 9.5, 1.0))).unwrap();
    assert_eq!((res.stats.blocks_skipped, res.stats.exact_tested, res.stats.bytes_read), (10, 0, 560));
    // The R-tree narrows to the rows of the window: the five matches. It answers alone (the
    // block boxes could only repeat it), and they are the fallback when it is not used.
    t.build_rtree("pt", None).unwrap();
    let res = t.query("pt", &q).unwrap();
    // Each candidate's leaf box lies inside the window: answered by the box, no point read
    // (issue #33); with WKB wanted, the points are read but not tested.
    let rtree_bytes = res.stats.bytes_read;
    assert_eq!((res.stats.blocks_total, res.stats.rtree_candidates, res.stats.rows_by_box, res.stats.exact_tested), (0, 10, 10, 0));
    assert!(res.stats.used_rtree && !res.stats.used_block_index);
    let with_wkb = t.query("pt", &q.clone().with_wkb(true)).unwrap();
    assert_eq!((with_wkb.rows.clone(), with_wkb.stats.exact_tested, with_wkb.stats.rows_by_box), (res.rows.clone(), 0, 10));
    assert_eq!(with_wkb.stats.bytes_read, rtree_bytes + 10 * 16, "the ten points read for their WKB");
    let res2 = t.query("pt", &q.clone().with_rtree(false)).unwrap();
    assert_eq!((res2.stats.blocks_skipped, res2.rows.clone()), (8, res.rows.clone()));
    assert_eq!(res.rows, (35..45).collect::<Vec<u64>>());
}

fn square(x: f64, y: f64, s: f64) -> Vec<u8> {
    let ring = vec![Coord::xy(x, y), Coord::xy(x + s, y), Coord::xy(x + s, y + s), Coord::xy(x, y + s), Coord::xy(x, y)];
    wkb::encode(&Geometry::Polygon(Polygon { dims: Dimensions::Xy, rings: vec![ring] }), ByteOrder::LittleEndian)
}

/// Issue #33: a query reads the WKB of the rows it tests, not of every row between two
/// candidates that one read covers (rows within `TAKE_GAP` of each other are read as one
/// run of OFFSETS): 400 squares in row order (37,200 bytes of WKB, three 16 KiB chunks, so
/// rows 176 and 352 straddle two), rows 10 and 50 lifted out of the line, a window over
/// those two, the covering column as the only index. The bytes read are the covering
/// rows, the run's 42 offsets and the two squares' WKB — before, the 41 rows of the run
/// (and the chunks holding them) were read. A full scan with WKB returns every row as
/// written, the straddling ones too.
#[test]
fn a_query_reads_the_wkb_of_the_rows_it_tests_only() {
    let f = File::create(tmp("sparse.h5")).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_chunk_rows(8).with_covering("g_bbox")).unwrap();
    let vals: Vec<Option<Vec<u8>>> = (0..400).map(|i| Some(square(i as f64 * 10.0, if i == 10 || i == 50 { 100.0 } else { 0.0 }, 0.5))).collect();
    let wkb_len = vals[0].as_ref().unwrap().len() as u64;
    assert_eq!(wkb_len, 93);
    let batch = GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vals.clone()));
    t.write(&batch, WriteOptions::default().with_layout(None).with_spatial_order(false)).unwrap();
    let q = Query::bbox(BBox::xy(95.0, 99.0, 510.0, 101.0)).with_block_index(false).with_rtree(false);
    let res = t.query("g", &q).unwrap();
    assert_eq!(res.rows, vec![10, 50]);
    let s = &res.stats;
    assert!(s.used_covering && !s.used_rtree && !s.used_block_index);
    assert_eq!((s.covering_rejected, s.exact_tested), (398, 2));
    assert_eq!(s.bytes_read, 400 * 32 + 42 * 8 + 2 * wkb_len);
    // With their WKB, the same rows and bytes; the WKB as written.
    let with_wkb = t.query("g", &q.clone().with_wkb(true)).unwrap();
    assert_eq!((with_wkb.rows.clone(), with_wkb.stats.bytes_read), (res.rows.clone(), s.bytes_read));
    let w = with_wkb.wkb.unwrap();
    assert_eq!((w.get(0), w.get(1)), (vals[10].as_deref(), vals[50].as_deref()));
    // Every row, with its WKB: rows 176 and 352 span two chunks.
    let all = t.query("g", &Query::bbox(BBox::xy(-1.0, -1.0, 4000.0, 101.0)).with_indexes(false).with_wkb(true)).unwrap();
    assert_eq!(all.rows, (0..400).collect::<Vec<u64>>());
    assert_eq!(all.stats.bytes_read, 401 * 8 + 400 * wkb_len);
    let w = all.wkb.unwrap();
    for (i, v) in vals.iter().enumerate() {
        assert_eq!(w.get(i), v.as_deref(), "row {i}");
    }
}

#[test]
fn skipped_blocks_cost_nothing_io_pattern() {
    // 4096 polygons on a 64 × 64 grid, written in random order and sorted spatially on
    // write; blocks of 64 rows.
    let f = File::create(tmp("io.h5")).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_chunk_rows(64)).unwrap();
    let mut cells: Vec<(u64, u64)> = (0..64).flat_map(|i| (0..64).map(move |j| (i, j))).collect();
    let mut s = 12345u64;
    for i in (1..cells.len()).rev() {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        cells.swap(i, (s >> 33) as usize % (i + 1));
    }
    let vals: Vec<Option<Vec<u8>>> = cells.iter().map(|&(i, j)| Some(square(i as f64, j as f64, 0.5))).collect();
    let wkb_len = vals[0].as_ref().unwrap().len() as u64;
    t.write(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vals)), WriteOptions::default().with_layout(None)).unwrap();
    t.build_block_bbox("g", None).unwrap();
    let IndexState::Usable(bi) = t.open_block_index("g").unwrap() else { panic!() };
    assert_eq!(bi.block_length, 64);
    let window = BBox::xy(10.1, 10.1, 13.9, 13.9);
    let full = t.query("g", &Query::bbox(window).with_indexes(false)).unwrap();
    let res = t.query("g", &Query::bbox(window)).unwrap();
    assert_eq!(res.rows, full.rows);
    assert_eq!(res.rows.len(), 16);
    let s = &res.stats;
    let kept = s.blocks_total - s.blocks_skipped;
    assert!(kept <= 8, "spatial order keeps a small window in few blocks: {kept}");
    // Bytes read: the index, and for each kept block at most its rows' OFFSETS (+1 per
    // run), and WKB bytes. Skipped blocks contribute nothing.
    let index_bytes = s.blocks_total * 56;
    let bound = index_bytes + kept * 64 * (8 + wkb_len) + kept * 8;
    assert!(s.bytes_read <= bound, "{} > {bound}", s.bytes_read);
    assert!(s.exact_tested <= kept * 64);
    let full_bytes = 4096 * (8 + wkb_len) + 8;
    assert_eq!(full.stats.bytes_read, full_bytes);
    assert!(s.bytes_read * 10 < full_bytes, "{} vs {full_bytes}", s.bytes_read);
    // Unsorted, the same blocks span everything: almost nothing is skipped.
    let f2 = File::create(tmp("io-unsorted.h5")).unwrap();
    let mut t2 = MarquetTable::create(&f2, "/t").unwrap();
    t2.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_chunk_rows(64)).unwrap();
    let vals: Vec<Option<Vec<u8>>> = cells.iter().map(|&(i, j)| Some(square(i as f64, j as f64, 0.5))).collect();
    t2.write(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vals)), WriteOptions::default().with_spatial_order(false)).unwrap();
    t2.build_block_bbox("g", None).unwrap();
    let res2 = t2.query("g", &Query::bbox(window)).unwrap();
    assert_eq!(res2.rows.len(), 16);
    assert!(res2.stats.blocks_skipped < res.stats.blocks_skipped);
}

fn write_u64_field(f: &File, path: &str, pos: u64, dtype: &Dtype, field: &str, v: u64) {
    let ds = h5::dataset_open(f.id(), path).unwrap();
    let mut e = h5::dataset_read(ds.id(), pos, 1, dtype, path).unwrap();
    let Dtype::Compound { fields, .. } = dtype else { panic!() };
    let off = fields.iter().find(|x| x.name == field).unwrap().offset;
    e[off..off + 8].copy_from_slice(&v.to_le_bytes());
    h5::dataset_write(ds.id(), pos, dtype, &e, path).unwrap();
}

fn write_f64_field(f: &File, path: &str, pos: u64, dtype: &Dtype, field: &str, v: f64) {
    write_u64_field(f, path, pos, dtype, field, v.to_bits());
}

#[test]
fn corrupted_indexes_are_ignored_never_wrong() {
    let path = tmp("corrupt.h5");
    let (f, t) = ten_blocks(&path);
    let bpath = t.build_block_bbox("pt", Some(10)).unwrap();
    let rpath = t.build_rtree("pt", Some(4)).unwrap();
    let everything = Query::bbox(BBox::xy(-1.0, -1.0, 200.0, 2.0));
    let some = Query::bbox(BBox::xy(35.0, -1.0, 45.0, 2.0));
    let want_all: Vec<u64> = (0..100).collect();
    let want_some: Vec<u64> = (40..50).collect();
    let check = |label: &str, ignored: usize| {
        for (q, want) in [(&everything, &want_all), (&some, &want_some)] {
            let r = t.query("pt", q).unwrap();
            assert_eq!(&r.rows, want, "{label}");
            assert!(r.stats.ignored_indexes.len() >= ignored.min(1), "{label}: {:?}", r.stats);
        }
    };
    check("intact", 0);
    let rdt = rtree_dtype();
    let layout = Layout::try_new(100, 4).unwrap();

    // Wrong internal index (the root's first child position).
    write_u64_field(&f, &rpath, 0, &rdt, "index", 7);
    check("wrong internal index", 1);
    let r = t.query("pt", &everything).unwrap();
    assert!(r.stats.ignored_indexes[0].contains("internal entry 0 index 7"), "{:?}", r.stats.ignored_indexes);
    assert!(!r.stats.used_rtree && r.stats.used_block_index);
    t.build_rtree("pt", Some(4)).unwrap();
    check("rebuilt", 0);

    // A leaf index ≥ NROWS.
    write_u64_field(&f, &rpath, layout.leaf_start() + 3, &rdt, "index", 100);
    let r = t.query("pt", &everything).unwrap();
    assert_eq!(r.rows, want_all);
    assert!(r.stats.ignored_indexes[0].contains(">= nrows 100"), "{:?}", r.stats.ignored_indexes);
    t.build_rtree("pt", Some(4)).unwrap();

    // num_items > NROWS, node_size < 2, and a missing attribute.
    let rds = h5::dataset_open(f.id(), &rpath).unwrap();
    h5::attr_write_u64(rds.id(), names::NUM_ITEMS, 1000).unwrap();
    check("num_items > nrows", 1);
    h5::attr_write_u64(rds.id(), names::NUM_ITEMS, 100).unwrap();
    h5::attr_write(rds.id(), names::NODE_SIZE, &Dtype::U16, &Space::Scalar, &1u16.to_le_bytes()).unwrap();
    check("node_size 1", 1);
    h5::attr_delete(rds.id(), names::NODE_SIZE).unwrap();
    check("node_size missing", 1);
    // A dataset too short for the layout.
    t.build_rtree("pt", Some(4)).unwrap();
    h5::dataset_set_len(rds.id(), layout.total - 1, &rpath).unwrap();
    check("too short", 1);
    t.build_rtree("pt", Some(4)).unwrap();
    check("rebuilt again", 0);
    // A valid R-tree answers alone; the block index is read when there is none.
    assert_eq!(t.drop_index("pt", marquet::marquet::SpatialIndexKind::PackedRTree).unwrap(), 1);

    // Block index: wrong n, counts exceeding n, an empty box over geometries, no block_length.
    let bdt = block_bbox_dtype(false, false);
    write_u64_field(&f, &bpath, 4, &bdt, "n", 9);
    check("wrong n", 1);
    write_u64_field(&f, &bpath, 4, &bdt, "n", 10);
    write_u64_field(&f, &bpath, 4, &bdt, "null_count", 11);
    check("null_count > n", 1);
    write_u64_field(&f, &bpath, 4, &bdt, "null_count", 0);
    for (field, v) in [("xmin", f64::INFINITY), ("ymin", f64::INFINITY), ("xmax", f64::NEG_INFINITY), ("ymax", f64::NEG_INFINITY)] {
        write_f64_field(&f, &bpath, 4, &bdt, field, v);
    }
    check("empty box over geometries", 1);
    t.build_block_bbox("pt", Some(10)).unwrap();
    check("block index rebuilt", 0);
    let bds = h5::dataset_open(f.id(), &bpath).unwrap();
    h5::attr_delete(bds.id(), names::BLOCK_LENGTH).unwrap();
    check("block_length missing", 1);
    t.build_block_bbox("pt", Some(10)).unwrap();
    assert_eq!(t.build_rtree("pt", Some(4)).unwrap(), rpath);
    let rds = h5::dataset_open(f.id(), &rpath).unwrap();

    // Wrong tokens: stale, ignored silently.
    h5::attr_write_u64(bds.id(), names::SOURCE_GENERATION, 999).unwrap();
    h5::attr_write_u64(rds.id(), names::SOURCE_NROWS, 99).unwrap();
    let r = t.query("pt", &some).unwrap();
    assert_eq!(r.rows, want_some);
    assert_eq!(r.stats.stale_indexes.len(), 2);
    assert!(r.stats.ignored_indexes.is_empty() && !r.stats.used_block_index && !r.stats.used_rtree);
    assert_eq!(r.stats.exact_tested, 100);

    // A tampered box that passes every structural check hides rows (HEP002 §17); the
    // verify-nothing mode still finds them.
    t.rebuild_indexes("pt").unwrap();
    t.drop_index("pt", SpatialIndexKind::PackedRTree).unwrap();
    write_f64_field(&f, &bpath, 4, &bdt, "xmin", 100.0);
    write_f64_field(&f, &bpath, 4, &bdt, "xmax", 101.0);
    assert!(t.query("pt", &some).unwrap().rows.is_empty());
    assert_eq!(t.query("pt", &some.clone().with_indexes(false)).unwrap().rows, want_some);
}

#[test]
fn foreign_and_dangling_indexes_are_ignored() {
    // An index dataset of another layout is ignored, not trusted.
    let (f, t) = ten_blocks(&tmp("layout-corrupt.h5"));
    let rpath = t.build_rtree("pt", None).unwrap();
    let g = t.table().generation().unwrap().unwrap();
    t.drop_index("pt", SpatialIndexKind::PackedRTree).unwrap();
    let spec = h5::DatasetSpec { dtype: Dtype::U64, len: 200, chunk: Some(64), filters: vec![], fill: None };
    let ds = marquet::h5col::search_index::create_index_dataset(t.table(), "pt", "pt__rtree", &spec, "PACKED_RTREE").unwrap();
    h5::attr_write_u64(ds.id(), names::SOURCE_GENERATION, g).unwrap();
    h5::attr_write_u64(ds.id(), names::SOURCE_NROWS, 100).unwrap();
    drop(ds);
    let q = Query::bbox(BBox::xy(35.0, -1.0, 45.0, 2.0));
    let r = t.query("pt", &q).unwrap();
    assert_eq!(r.rows, (40..50).collect::<Vec<u64>>());
    assert!(r.stats.ignored_indexes[0].contains("HEP002 §10.4"), "{:?}", r.stats.ignored_indexes);
    // Rebuilding replaces the foreign dataset.
    t.build_rtree("pt", None).unwrap();
    let r = t.query("pt", &q).unwrap();
    assert!(r.stats.used_rtree && r.stats.ignored_indexes.is_empty());
    // An index unlinked behind the library's back leaves a dangling SEARCH_INDEX_LIST
    // reference: queries still answer.
    h5::link_delete(f.id(), &rpath).unwrap();
    let r = t.query("pt", &q).unwrap();
    assert_eq!(r.rows, (40..50).collect::<Vec<u64>>());
    assert!(!r.stats.used_rtree);
}

#[test]
fn hep002_15_2_level_sizes_for_ten_thousand_items() {
    // Through the pure layout.
    let l = Layout::try_new(10_000, 16).unwrap();
    assert_eq!(l.sizes, vec![10_000, 625, 40, 3, 1]);
    assert_eq!(l.total, 10_669);
    assert_eq!(l.starts, vec![669, 44, 4, 1, 0]);
    // An actual tree over 10,000 boxes: the root at 0, the next level at 1..=3, leaves at
    // 669..=10668.
    let items: Vec<(BBox, u64)> =
        (0..10_000u64).map(|i| (BBox::xy((i % 100) as f64, (i / 100) as f64, (i % 100) as f64 + 0.5, (i / 100) as f64 + 0.5), i)).collect();
    let tree = packed_rtree::build(&items, 16).unwrap();
    assert_eq!(tree.len(), 10_669);
    assert_eq!(tree[0].index, 1);
    assert_eq!((tree[1].index, tree[2].index, tree[3].index), (4, 20, 36));
    assert!(tree[669..].iter().all(|e| e.index < 10_000));
    // And through a table: B = 4096 gives three block entries.
    let f = File::create(tmp("tenk.h5")).unwrap();
    let mut t = MarquetTable::create(&f, "/lakes").unwrap();
    t.add_geometry_column("c", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    let xs: Vec<f64> = (0..10_000).map(|i| (i % 100) as f64).collect();
    let ys: Vec<f64> = (0..10_000).map(|i| (i / 100) as f64).collect();
    t.append(&GeoBatch::new().with_geometry("c", points(&xs, &ys))).unwrap();
    let rpath = t.build_rtree("c", Some(16)).unwrap();
    let bpath = t.build_block_bbox("c", Some(4096)).unwrap();
    let rds = h5::dataset_open(f.id(), &rpath).unwrap();
    assert_eq!(h5::dataset_info(rds.id(), &rpath).unwrap().dims, vec![10_669]);
    assert_eq!(h5::attr_read(rds.id(), names::NUM_ITEMS).unwrap().unwrap().as_u64(), Some(10_000));
    let root = h5::dataset_read(rds.id(), 0, 4, &rtree_dtype(), &rpath).unwrap();
    let idx = |k: usize| u64::from_le_bytes(root[40 * k + 32..40 * k + 40].try_into().unwrap());
    assert_eq!((idx(0), idx(1), idx(2), idx(3)), (1, 4, 20, 36));
    let bds = h5::dataset_open(f.id(), &bpath).unwrap();
    assert_eq!(h5::dataset_info(bds.id(), &bpath).unwrap().dims, vec![3]);
}

#[test]
fn spherical_edges_grow_bbox_covering_and_index_boxes() {
    let f = File::create(tmp("geodesic.h5")).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_geometry_column(
        "g",
        &GeometryColumnSpec::default()
            .with_form(StorageForm::VarWkb)
            .with_edges(Edges::Spherical)
            .with_orientation_ccw()
            .with_covering("g_bbox"),
    )
    .unwrap();
    let line = |a: (f64, f64), b: (f64, f64)| {
        wkb::encode(
            &Geometry::LineString(LineString { dims: Dimensions::Xy, coords: vec![Coord::xy(a.0, a.1), Coord::xy(b.0, b.1)] }),
            ByteOrder::LittleEndian,
        )
    };
    let rows = vec![Some(line((0.0, 60.0), (90.0, 60.0))), Some(line((170.0, -10.0), (-170.0, -12.0)))];
    t.append(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(rows))).unwrap();
    let info = t.geometry_column("g").unwrap();
    let (b, _, _) = info.bbox.unwrap();
    assert!(b.ymax > 67.79 && b.ymax < 67.80, "the edge bulges to 67.79°: {b:?}");
    assert_eq!((b.xmin, b.xmax), (-180.0, 180.0), "an edge across ±180 spans every longitude");
    assert!(b.ymin < -12.0);
    let cov = t.table().read("g_bbox", 0, 1).unwrap();
    let ymax = f64::from_le_bytes(cov.bytes[24..32].try_into().unwrap());
    assert!(ymax > 67.79);
    t.build_rtree("g", None).unwrap();
    t.build_block_bbox("g", Some(1)).unwrap();
    // A window above the vertices but under the bulge finds the row through every layer;
    // non-planar edges are answered on boxes (approximate).
    let q = Query::new(Window::BBox(BBox::xy(40.0, 65.0, 50.0, 66.0)), Predicate::Intersects);
    let r = t.query("g", &q).unwrap();
    assert_eq!(r.rows, vec![0]);
    assert!(r.stats.approximate && r.stats.used_rtree && !r.stats.used_block_index && !r.stats.used_covering);
    let r = t.query("g", &q.clone().with_rtree(false)).unwrap();
    assert_eq!(r.rows, vec![0]);
    assert!(r.stats.approximate && r.stats.used_block_index && r.stats.used_covering);
    assert_eq!(t.query("g", &q.clone().with_indexes(false)).unwrap().rows, vec![0]);
    // Planar edges would keep the vertex box and miss it.
    let f2 = File::create(tmp("planar.h5")).unwrap();
    let mut t2 = MarquetTable::create(&f2, "/t").unwrap();
    t2.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::VarWkb).with_crs(Crs::Default)).unwrap();
    t2.append(&GeoBatch::new().with_geometry("g", GeometryValues::Wkb(vec![Some(line((0.0, 60.0), (90.0, 60.0)))]))).unwrap();
    assert_eq!(t2.geometry_column("g").unwrap().bbox.unwrap().0.ymax, 60.0);
    assert!(t2.query("g", &q).unwrap().rows.is_empty());
}

#[test]
fn spatial_order_on_write_permutes_every_column() {
    let f = File::create(tmp("order.h5")).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    t.add_column("id", &marquet::h5col::ColumnSpec::new(Dtype::U64)).unwrap();
    t.add_geometry_column("g", &GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    let xs = [90.0, 0.0, 50.0, 1.0, 89.0];
    let ys = [90.0, 0.0, 50.0, 1.0, 90.0];
    let batch = GeoBatch::new().with_array("id", Array::from_u64(&[0, 1, 2, 3, 4])).with_geometry("g", points(&xs, &ys));
    t.write(&batch, WriteOptions::in_order().with_spatial_order(true).with_rtree(t.rtree_on_append())).unwrap();
    let ids = t.table().read("id", 0, 5).unwrap();
    let ids: Vec<u64> = (0..5).map(|i| ids.get_i128(i).unwrap() as u64).collect();
    let p = t.read_points("g", 0, 5).unwrap();
    for (k, &id) in ids.iter().enumerate() {
        assert_eq!((p.x[k], p.y[k]), (xs[id as usize], ys[id as usize]), "rows stay aligned");
    }
    // Hilbert order from the origin: the two near (0,0) first, the two near (90,90) together.
    assert_eq!(&ids[..2], &[1, 3]);
    let pos = |id: u64| ids.iter().position(|&x| x == id).unwrap();
    assert_eq!((pos(0) as i64 - pos(4) as i64).abs(), 1);
    // Switched off: the input order.
    t.write(&batch, WriteOptions::default().with_spatial_order(false).with_rtree(RTreeOnAppend::LeaveStale)).unwrap();
    let ids = t.table().read("id", 5, 10).unwrap();
    assert_eq!((0..5).map(|i| ids.get_i128(i).unwrap() as u64).collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
}

use marquet_dev::lakes;

#[test]
fn hep002_15_2_lakes_layout() {
    let p = tmp("lakes.h5");
    lakes::write_lakes(&p, lakes::N_LAKES).unwrap();
    let f = File::open(&p).unwrap();
    let t = MarquetTable::open(&f, "/lakes").unwrap();
    let n = lakes::N_LAKES as u64;
    let tb = t.table();
    assert_eq!(t.nrows().unwrap(), n);
    assert_eq!(tb.column_names().unwrap(), vec!["lake_id", "name", "area", "shoreline", "shoreline_bbox", "centroid"]);
    assert_eq!(t.geometry_column_names().unwrap(), vec!["shoreline", "centroid"]);
    assert_eq!(tb.index_columns().unwrap(), vec!["lake_id"]);
    assert_eq!(h5::attr_read(tb.id(), names::INDEX_NAME).unwrap().unwrap().as_str(), Some("lake_id"));
    assert_eq!(h5::attr_read(tb.id(), names::MARQUET_VERSION).unwrap().unwrap().as_str(), Some("1.0"));
    let g = tb.generation().unwrap().unwrap();
    // Columns.
    let name = tb.column("name").unwrap();
    assert!(matches!(name.dtype(), Dtype::FixedString { utf8: true, .. }));
    let area = h5::object_open(tb.id(), "area").unwrap();
    assert_eq!(h5::attr_read(area.id(), names::UNITS).unwrap().unwrap().as_str(), Some("m2"));
    assert_eq!(h5::attr_read(area.id(), names::UNITS_VOCABULARY).unwrap().unwrap().as_str(), Some("UDUNITS-2"));
    // The shoreline column.
    let info = t.geometry_column("shoreline").unwrap();
    assert_eq!(info.form, StorageForm::VarWkb);
    let types: Vec<String> = info.types.unwrap().iter().map(|t| t.name()).collect();
    assert_eq!(types, vec!["Polygon Z", "MultiPolygon Z"]);
    assert_eq!(info.crs.id(), Some(("EPSG".into(), "2961".into())));
    assert!(!info.crs.is_geographic() && info.orientation_ccw);
    let (bb, z, m) = info.bbox.unwrap();
    assert!(z && !m);
    assert!(bb.xmin >= 237_100.0 && bb.xmax <= 776_800.0 && bb.ymin >= 4_810_400.0 && bb.ymax <= 5_235_700.0);
    assert!(bb.zmin >= 0.0 && bb.zmax <= 520.0);
    assert_eq!(info.covering.as_deref(), Some("shoreline_bbox"));
    assert!(!tb.list_column("shoreline").unwrap().has_mask(), "no shoreline is null: no MASK");
    let cov = tb.column("shoreline_bbox").unwrap();
    assert_eq!(cov.dtype().field_names(), vec!["xmin", "ymin", "zmin", "xmax", "ymax", "zmax"]);
    assert_eq!(cov.fill().unwrap(), &names::FILL_F64.to_le_bytes().repeat(6)[..]);
    // The centroid column.
    let c = t.geometry_column("centroid").unwrap();
    assert_eq!(c.form, StorageForm::Point { dims: Dimensions::Xy, f32: false });
    assert_eq!(c.crs, info.crs);
    assert_eq!(tb.column("centroid").unwrap().fill().unwrap(), &names::FILL_F64.to_le_bytes().repeat(2)[..]);
    // The two indexes, in SEARCH_INDEX_LIST order, with the names of §15.2.
    let col = h5::object_open(tb.id(), "shoreline").unwrap();
    let (refs, _, _) = h5::attr_read_refs(col.id(), names::SEARCH_INDEX_LIST).unwrap().unwrap();
    assert_eq!(refs, vec![Some("/lakes/SEARCH_INDEXES/shoreline__block_bbox".into()), Some("/lakes/SEARCH_INDEXES/shoreline__rtree".into())]);
    let b = h5::dataset_open(f.id(), "/lakes/SEARCH_INDEXES/shoreline__block_bbox").unwrap();
    let bi = h5::dataset_info(b.id(), "b").unwrap();
    assert_eq!(
        bi.dtype.field_names(),
        vec!["xmin", "ymin", "zmin", "xmax", "ymax", "zmax", "n", "null_count", "empty_count"]
    );
    assert_eq!(bi.dims, vec![n.div_ceil(lakes::CHUNK_ROWS)]);
    assert_eq!(h5::attr_read(b.id(), names::BLOCK_LENGTH).unwrap().unwrap().as_u64(), Some(lakes::CHUNK_ROWS));
    let r = h5::dataset_open(f.id(), "/lakes/SEARCH_INDEXES/shoreline__rtree").unwrap();
    let ri = h5::dataset_info(r.id(), "r").unwrap();
    assert_eq!(ri.dims, vec![Layout::try_new(n, 16).unwrap().total]);
    assert_eq!(h5::attr_read(r.id(), names::NODE_SIZE).unwrap().unwrap().as_u64(), Some(16));
    assert_eq!(h5::attr_read(r.id(), names::NUM_ITEMS).unwrap().unwrap().as_u64(), Some(n));
    for ds in [&b, &r] {
        assert_eq!(h5::attr_read(ds.id(), names::SOURCE_GENERATION).unwrap().unwrap().as_u64(), Some(g));
        assert_eq!(h5::attr_read(ds.id(), names::SOURCE_NROWS).unwrap().unwrap().as_u64(), Some(n));
    }
    assert!(t.spatial_indexes("shoreline").unwrap().iter().all(|i| i.valid));
    // Queries through both indexes agree with a full scan.
    let w = Query::bbox(BBox::xy(400_000.0, 4_900_000.0, 520_000.0, 5_050_000.0));
    let a = t.query("shoreline", &w).unwrap();
    let s = t.query("shoreline", &w.clone().with_indexes(false)).unwrap();
    assert_eq!(a.rows, s.rows);
    assert!(a.stats.used_rtree && !a.stats.used_block_index && !a.stats.used_covering);
    let b = t.query("shoreline", &w.clone().with_rtree(false)).unwrap();
    assert_eq!(b.rows, s.rows);
    assert!(b.stats.used_block_index && b.stats.used_covering);
}

/// HEP002 §15.2 with the spec's own numbers (N = 10,000 lakes, B = 4,096, node size 16),
/// checked against a real h5dump ≥ 1.12: header and properties (`-H -p`) and then the
/// values of the attributes §15.2 shows (`-a`); golden DDL in testdata/golden/hep002_15_2_lakes.ddl.
#[test]
fn hep002_15_2_lakes_h5dump_matches_golden_ddl() {
    let _serial = common::serial(); // h5dump children inherit HDF5 file locks
    let dir = common::TempDir::new("hep002-15-2");
    let file = dir.join("lakes.h5");
    lakes::write_lakes(&file.display().to_string(), 10_000).unwrap();
    let Some(h5dump) = common::h5dump_or_skip("hep002_15_2_lakes") else { return };
    let ddl = common::run_h5dump(&h5dump, &["-H", "-p"], &file);
    // The spec's figures, checked independently of the golden file: three BLOCK_BBOX
    // entries, T = 10,669 R-tree entries (levels 10,000 + 625 + 40 + 3 + 1).
    let section = |name: &str| -> String {
        let start = ddl.find(&format!("DATASET \"{name}\" {{")).unwrap_or_else(|| panic!("no dataset {name}:\n{ddl}"));
        ddl[start..].lines().take(100).collect::<Vec<_>>().join("\n")
    };
    let bb = section("shoreline__block_bbox");
    assert!(bb.contains("DATASPACE  SIMPLE { ( 3 ) / ( H5S_UNLIMITED ) }"), "{bb}");
    let rt = section("shoreline__rtree");
    assert!(rt.contains("DATASPACE  SIMPLE { ( 10669 ) /"), "{rt}");
    for attr in ["MARQUET_VERSION", "GEOMETRY_COLUMNS", "INDEX_COLUMNS", "COVERING", "SEARCH_INDEX_LIST", "ORIENTATION", "BBOX"] {
        assert!(ddl.contains(&format!("ATTRIBUTE \"{attr}\"")), "attribute {attr} missing");
    }
    assert!(ddl.contains("DATATYPE  H5T_REFERENCE { H5T_STD_REF }"), "new-style references");
    // Attribute values that do not dereference object references (h5dump prints the
    // whole referenced dataset for a reference attribute, 10,000 rows here).
    let mut args: Vec<&str> = Vec::new();
    for a in [
        "/lakes/CLASS",
        "/lakes/NROWS",
        "/lakes/MARQUET_VERSION",
        "/lakes/_index",
        "/lakes/column-order",
        "/lakes/area/units",
        "/lakes/shoreline/KIND",
        "/lakes/shoreline/GEOMETRY_ENCODING",
        "/lakes/shoreline/GEOMETRY_TYPES",
        "/lakes/shoreline/ORIENTATION",
        "/lakes/shoreline/BBOX",
        "/lakes/centroid/GEOMETRY_ENCODING",
        "/lakes/centroid/GEOMETRY_TYPES",
        "/lakes/SEARCH_INDEXES/shoreline__block_bbox/KIND",
        "/lakes/SEARCH_INDEXES/shoreline__block_bbox/block_length",
        "/lakes/SEARCH_INDEXES/shoreline__block_bbox/SOURCE_NROWS",
        "/lakes/SEARCH_INDEXES/shoreline__rtree/KIND",
        "/lakes/SEARCH_INDEXES/shoreline__rtree/node_size",
        "/lakes/SEARCH_INDEXES/shoreline__rtree/num_items",
        "/lakes/SEARCH_INDEXES/shoreline__rtree/SOURCE_NROWS",
    ] {
        args.extend(["-a", a]);
    }
    let values = common::run_h5dump(&h5dump, &args, &file);
    assert!(values.contains("(0): Polygon Z, MultiPolygon Z"), "{values}");
    assert!(values.contains("(0): COUNTERCLOCKWISE"), "{values}");
    assert!(values.contains("(0): \"BLOCK_BBOX\"") && values.contains("(0): \"PACKED_RTREE\""), "{values}");
    let all = format!("{}\n{}", common::normalize_ddl(&ddl, &file), common::normalize_ddl(&values, &file));
    common::check_golden("hep002_15_2_lakes", &all);
}

/// Issue #31: an append extends a valid block index from its stored last, partial entry
/// (HEP002 §10.3's recomputation of that entry, as the union of its box with the new rows'
/// boxes) instead of decoding the old rows of that block. The test changes the stored
/// coordinates of the partial block's rows behind the index's back: the extended entry
/// still holds the stored box, so those rows were not read. An entry whose counts do not
/// match the rows is recomputed from them.
#[test]
fn an_append_extends_the_partial_block_from_its_stored_entry() {
    for trust in [true, false] {
        let path = tmp(&format!("partial-{trust}.h5"));
        let f = File::create(&path).unwrap();
        let mut t = MarquetTable::create(&f, "/t").unwrap();
        let spec = GeometryColumnSpec::default().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false }).with_chunk_rows(10);
        t.add_geometry_column("pt", &spec).unwrap();
        // 95 rows: nine full blocks of 10 and rows 90..95 in the partial block 9.
        let xs: Vec<f64> = (0..95).map(|i| i as f64).collect();
        let ys = vec![0.5; 95];
        t.append(&GeoBatch::new().with_geometry("pt", points(&xs, &ys))).unwrap();
        let bpath = t.build_block_bbox("pt", Some(10)).unwrap();
        let bdt = block_bbox_dtype(false, false);
        // Rows 90..95 now lie at x = 500, which the stored entry of block 9 does not know.
        let cpath = "/t/pt";
        let cds = h5::dataset_open(f.id(), cpath).unwrap();
        let cdt = h5::dataset_info(cds.id(), cpath).unwrap().dtype;
        let far: Vec<u8> = (0..5).flat_map(|_| 500f64.to_le_bytes().into_iter().chain(0.5f64.to_le_bytes())).collect();
        h5::dataset_write(cds.id(), 90, &cdt, &far, cpath).unwrap();
        if !trust {
            // A stored count that does not match the rows: the entry is recomputed.
            write_u64_field(&f, &bpath, 9, &bdt, "n", 4);
        }
        t.append(&GeoBatch::new().with_geometry("pt", points(&[95.0, 96.0], &[0.5, 0.5]))).unwrap();
        let ds = h5::dataset_open(f.id(), &bpath).unwrap();
        let e = h5::dataset_read(ds.id(), 9, 1, &bdt, &bpath).unwrap();
        let f64_at = |i: usize| f64::from_le_bytes(e[8 * i..8 * i + 8].try_into().unwrap());
        let u64_at = |i: usize| u64::from_le_bytes(e[8 * i..8 * i + 8].try_into().unwrap());
        let want_xmax = if trust { 96.0 } else { 500.0 };
        assert_eq!((f64_at(0), f64_at(2), u64_at(4), u64_at(5), u64_at(6)), (if trust { 90.0 } else { 95.0 }, want_xmax, 7, 0, 0), "trust stored entry: {trust}");
        assert!(t.spatial_indexes("pt").unwrap().iter().all(|i| i.valid), "the extended index is valid");
    }
}

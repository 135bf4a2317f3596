//! Direct chunk I/O (src/h5/direct.rs) against HDF5's own filter pipeline, and the
//! registered Zstandard filter 32015 (src/h5/codec.rs).
//!
//! Every case writes the same elements into two datasets of one file, one through
//! `h5::dataset_write` (whole chunks compressed in parallel, stored with H5Dwrite_chunk)
//! and one through `h5::dataset_write_pipeline` (HDF5 alone), then compares the stored
//! chunks with H5Dread_chunk — byte for byte for shuffle and zstd; for deflate, whose
//! direct chunks are libdeflate's zlib streams rather than zlib's, that they are exactly
//! our codec's output — and reads both back both ways: HDF5's pipeline (zlib's `inflate`)
//! must decode every direct chunk to the written data. tests/plain_hdf5.rs does the same
//! with h5py without hdf5plugin and with h5dump.


mod common;

use common::synth;

use marquet::h5::{self, codec, direct, DatasetSpec, Dtype, Filter};
use marquet::h5col::File;

const CHUNK: u64 = 1000;

/// The tests of this file run on threads of one process, and every write through `h5`
/// (any thread's) invalidates the chunk tables the reads keep (`h5::chunk`'s cache is
/// keyed by a global write generation, on purpose). The test that counts chunk-index
/// walks therefore runs alone (`alone`); the others share (`shared`). It failed once with
/// 3+ walks when another test wrote during its reads.
static ORDER: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    ORDER.read().unwrap_or_else(|p| p.into_inner())
}

fn alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    ORDER.write().unwrap_or_else(|p| p.into_inner())
}

/// Values that compress like real data: clustered coordinates as doubles.
fn doubles(n: usize, seed: u64) -> Vec<u8> {
    let (x, y) = crate::synth::clustered_points(n, seed);
    x.iter().zip(&y).flat_map(|(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes())).collect()
}

fn stored_chunks(ds: hdf5_sys::h5i::hid_t, len: u64) -> Vec<Option<(u32, Vec<u8>)>> {
    (0..len.div_ceil(CHUNK))
        .map(|k| {
            h5::chunk_info(ds, k * CHUNK, "t")
                .unwrap()
                .map(|(_, size)| h5::chunk_read_raw(ds, k * CHUNK, size, "t").unwrap())
        })
        .collect()
}

/// Write `data` at row `start` both ways into a dataset of `len` rows; return the
/// chunks moved directly by the fast write.
#[allow(clippy::too_many_arguments)]
fn compare(f: &File, name: &str, dtype: Dtype, filters: Vec<Filter>, fill: Option<Vec<u8>>, len: u64, start: u64, data: &[u8]) -> u64 {
    let deflate = filters.iter().any(|f| matches!(f, Filter::Deflate(_)));
    let stages = codec::stages(&filters, dtype.size()).unwrap();
    let spec = DatasetSpec { dtype: dtype.clone(), len, chunk: Some(CHUNK), filters, fill };
    let fast = h5::dataset_create(f.id(), &format!("{name}_direct"), &spec).unwrap();
    let slow = h5::dataset_create(f.id(), &format!("{name}_pipeline"), &spec).unwrap();
    let before = direct::chunks_moved();
    h5::dataset_write(fast.id(), start, &dtype, data, name).unwrap();
    let written = direct::chunks_moved().0 - before.0;
    h5::dataset_write_pipeline(slow.id(), start, &dtype, data, name).unwrap();
    h5::flush(f.id()).unwrap();
    let a = stored_chunks(fast.id(), len);
    let b = stored_chunks(slow.id(), len);
    assert_eq!(a.len(), b.len());
    let es = dtype.size() as u64;
    let mut libdeflate_chunks = 0;
    for (k, (x, y)) in a.iter().zip(&b).enumerate() {
        let (lo, hi) = (k as u64 * CHUNK, (k as u64 + 1) * CHUNK);
        if deflate && lo >= start && hi <= start + data.len() as u64 / es {
            // A whole chunk written directly: exactly libdeflate's zlib stream of it.
            let raw = &data[((lo - start) * es) as usize..((hi - start) * es) as usize];
            let (mask, bytes) = x.as_ref().unwrap_or_else(|| panic!("{name}: chunk {k} not stored"));
            assert_eq!((*mask, bytes), (0, &codec::encode(&stages, raw).unwrap()), "{name}: chunk {k}");
            assert!(y.is_some(), "{name}: chunk {k} not stored by the pipeline");
            libdeflate_chunks += 1;
        } else {
            // Shuffle, zstd and unfiltered chunks, and partial chunks that went through the
            // pipeline, are HDF5's own bytes.
            assert!(x == y, "{name}: chunk {k} differs: direct {:?} bytes, pipeline {:?} bytes", x.as_ref().map(|c| c.1.len()), y.as_ref().map(|c| c.1.len()));
        }
    }
    assert!(!deflate || libdeflate_chunks > 0, "{name}: no whole chunk");
    // Both read back to the data, through the parallel path and through HDF5.
    let count = data.len() as u64 / dtype.size() as u64;
    for ds in [&fast, &slow] {
        let before = direct::chunks_moved().1;
        let got = h5::dataset_read(ds.id(), start, count, &dtype, name).unwrap();
        assert!(got == data, "{name}: direct read differs");
        assert_eq!(direct::chunks_moved().1 - before, (start + count).div_ceil(CHUNK) - start / CHUNK, "{name}: chunks read directly");
        let mut buf = vec![0u8; data.len()];
        h5::dataset_read_pipeline(ds.id(), start, count, &dtype, name, &mut buf).unwrap();
        assert!(buf == data, "{name}: pipeline read differs");
    }
    written
}

#[test]
fn direct_chunks_decode_through_the_pipeline() {
    let _order = shared();
    // Serial: the decoded-chunk cache of the test below is invalidated by any write in
    // the process, so no test here writes while another counts decodes.
    let _s = common::serial();
    let dir = common::TempDir::new("direct");
    let f = File::create(dir.join("d.h5")).unwrap();
    let pt = Dtype::f64_compound(&["x", "y"]);
    let fill = marquet::h5col::recommended_fill(&pt).unwrap();
    let pts = doubles(10_500, 3);
    // Rows 250..10750 of 11000: partial head chunk, 9 whole chunks, partial tail chunk.
    for (name, filters) in [
        ("shuffle_deflate4", vec![Filter::Shuffle, Filter::Deflate(4)]),
        ("shuffle_deflate9", vec![Filter::Shuffle, Filter::Deflate(9)]),
        ("deflate1", vec![Filter::Deflate(1)]),
        ("shuffle_zstd3", vec![Filter::Shuffle, Filter::Zstd(3)]),
        ("zstd19", vec![Filter::Zstd(19)]),
        ("zstd_no_cd", vec![Filter::Other(codec::FILTER_ZSTD, vec![])]),
        ("none", vec![]),
        ("shuffle_only", vec![Filter::Shuffle]),
    ] {
        let moved = compare(&f, name, pt.clone(), filters, fill.clone(), 11_000, 250, &pts);
        assert_eq!(moved, 9, "{name}: whole chunks written directly");
    }
    // WKB bytes (uint8, shuffle is a no-op), written at a chunk boundary to the end.
    let wkb: Vec<u8> = crate::synth::polygons(40, 1).concat();
    let n = wkb.len() as u64;
    for (name, filters) in [("u8_zstd", vec![Filter::Zstd(3)]), ("u8_deflate", vec![Filter::Deflate(4)])] {
        let moved = compare(&f, name, Dtype::U8, filters, None, n, 0, &wkb);
        assert_eq!(moved, n / CHUNK, "{name}");
    }
    // u64 offsets with shuffle + deflate, as list OFFSETS store them.
    let offs: Vec<u8> = (0..5000u64).flat_map(|i| (i * 413 + i % 7).to_le_bytes()).collect();
    assert_eq!(compare(&f, "u64_offsets", Dtype::U64, vec![Filter::Shuffle, Filter::Deflate(4)], None, 5000, 0, &offs), 5);
}

#[test]
fn appends_across_chunk_boundaries_read_back() {
    let _order = shared();
    // Serial: the decoded-chunk cache of the test below is invalidated by any write in
    // the process, so no test here writes while another counts decodes.
    let _s = common::serial();
    // Appends of odd sizes: every chunk is first written partly through the pipeline and
    // then completed, or written whole directly; the result must be the same bytes as one
    // pipeline write of everything.
    let dir = common::TempDir::new("direct-append");
    let f = File::create(dir.join("a.h5")).unwrap();
    let pt = Dtype::f64_compound(&["x", "y"]);
    let fill = marquet::h5col::recommended_fill(&pt).unwrap();
    let all = doubles(7_300, 9);
    let spec = DatasetSpec { dtype: pt.clone(), len: 0, chunk: Some(CHUNK), filters: vec![Filter::Shuffle, Filter::Zstd(3)], fill };
    let fast = h5::dataset_create(f.id(), "fast", &spec).unwrap();
    let slow = h5::dataset_create(f.id(), "slow", &spec).unwrap();
    let mut at = 0u64;
    for k in [10u64, 2_990, 1, 2_000, 2_299] {
        h5::dataset_set_len(fast.id(), at + k, "fast").unwrap();
        h5::dataset_write(fast.id(), at, &pt, &all[(at * 16) as usize..((at + k) * 16) as usize], "fast").unwrap();
        at += k;
    }
    h5::dataset_set_len(slow.id(), at, "slow").unwrap();
    h5::dataset_write_pipeline(slow.id(), 0, &pt, &all, "slow").unwrap();
    h5::flush(f.id()).unwrap();
    assert_eq!(stored_chunks(fast.id(), at), stored_chunks(slow.id(), at));
    assert_eq!(h5::dataset_read(fast.id(), 0, at, &pt, "fast").unwrap(), all);
}

#[test]
fn zstd_filter_is_registered_as_32015_with_the_level_in_cd_values() {
    let _order = shared();
    // Serial: the decoded-chunk cache of the test below is invalidated by any write in
    // the process, so no test here writes while another counts decodes.
    let _s = common::serial();
    let dir = common::TempDir::new("zstd");
    let path = dir.join("z.h5");
    {
        let f = File::create(&path).unwrap();
        assert!(h5::filter_available(32015));
        let spec = DatasetSpec { dtype: Dtype::U8, len: 3000, chunk: Some(1024), filters: vec![Filter::Zstd(7)], fill: None };
        let ds = h5::dataset_create(f.id(), "bytes", &spec).unwrap();
        let data: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
        // HDF5's pipeline calls our callback for every chunk here.
        h5::dataset_write_pipeline(ds.id(), 0, &Dtype::U8, &data, "bytes").unwrap();
    }
    let f = File::open(&path).unwrap();
    let ds = h5::dataset_open(f.id(), "bytes").unwrap();
    let info = h5::dataset_info(ds.id(), "/bytes").unwrap();
    assert_eq!(info.filters, vec![Filter::Zstd(7)]);
    // The stored chunk is one zstd frame with its content size, level 7.
    let (mask, size) = h5::chunk_info(ds.id(), 0, "bytes").unwrap().unwrap();
    assert_eq!(mask, 0);
    let (_, raw) = h5::chunk_read_raw(ds.id(), 0, size, "bytes").unwrap();
    assert_eq!(&raw[..4], &[0x28, 0xb5, 0x2f, 0xfd], "zstd frame magic");
    let want: Vec<u8> = (0..1024u32).map(|i| (i * 7 % 251) as u8).collect();
    assert_eq!(raw, codec::zstd_compress(&want, 7).unwrap());
    assert_eq!(codec::zstd_decompress(&raw, 1024).unwrap(), want);
    let mut buf = vec![0u8; 3000];
    h5::dataset_read_pipeline(ds.id(), 0, 3000, &Dtype::U8, "bytes", &mut buf).unwrap();
    assert_eq!(buf, (0..3000u32).map(|i| (i * 7 % 251) as u8).collect::<Vec<_>>());
}

/// `testdata/h5py_zstd.h5`: written by h5py 3.16 + hdf5plugin 7.1 (HDF5 2.0) with
/// `testdata/make_h5py_zstd.py`; read here through HDF5 (our registered filter) and
/// through the direct path.
#[test]
fn reads_a_file_written_by_h5py_and_hdf5plugin() {
    let _order = shared();
    // Serial: the decoded-chunk cache of the test below is invalidated by any write in
    // the process, so no test here writes while another counts decodes.
    let _s = common::serial();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/h5py_zstd.h5");
    let f = File::open(&path).unwrap();
    let ds = h5::dataset_open(f.id(), "f64_shuffle_zstd").unwrap();
    let info = h5::dataset_info(ds.id(), "/f64_shuffle_zstd").unwrap();
    assert_eq!(info.filters, vec![Filter::Shuffle, Filter::Zstd(5)]);
    let want: Vec<u8> = (0..5000)
        .flat_map(|i| {
            let v = ((i as f64 * 0.001).sin() * 100.0 * 1000.0).round() / 1000.0;
            v.to_le_bytes()
        })
        .collect();
    let before = direct::chunks_moved().1;
    let got = h5::dataset_read(ds.id(), 0, 5000, &Dtype::F64, "f64").unwrap();
    assert_eq!(direct::chunks_moved().1 - before, 5);
    // numpy's round and ours may differ in the last bit for a few values: compare as f64.
    for (k, (a, b)) in got.chunks(8).zip(want.chunks(8)).enumerate() {
        let (a, b) = (f64::from_le_bytes(a.try_into().unwrap()), f64::from_le_bytes(b.try_into().unwrap()));
        assert!((a - b).abs() < 1e-9, "element {k}: {a} vs {b}");
    }
    let mut buf = vec![0u8; 5000 * 8];
    h5::dataset_read_pipeline(ds.id(), 0, 5000, &Dtype::F64, "f64", &mut buf).unwrap();
    assert_eq!(buf, got);
    let ds = h5::dataset_open(f.id(), "u8_zstd").unwrap();
    assert_eq!(h5::dataset_info(ds.id(), "/u8_zstd").unwrap().filters, vec![Filter::Zstd(3)]);
    let want: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
    assert_eq!(h5::dataset_read(ds.id(), 0, 3000, &Dtype::U8, "u8").unwrap(), want);
}

#[test]
fn corrupt_chunks_are_errors_naming_the_dataset() {
    let _order = shared();
    // Serial: the decoded-chunk cache of the test below is invalidated by any write in
    // the process, so no test here writes while another counts decodes.
    let _s = common::serial();
    let dir = common::TempDir::new("zstd-bad");
    let f = File::create(dir.join("b.h5")).unwrap();
    let spec = DatasetSpec { dtype: Dtype::U8, len: 2000, chunk: Some(1000), filters: vec![Filter::Zstd(3)], fill: None };
    let ds = h5::dataset_create(f.id(), "bad", &spec).unwrap();
    // A chunk that decodes to 10 bytes instead of 1000, and one that is not zstd at all.
    h5::chunk_write_raw(ds.id(), 0, &codec::zstd_compress(&[1u8; 10], 3).unwrap(), "/bad").unwrap();
    h5::chunk_write_raw(ds.id(), 1000, b"not a zstd frame", "/bad").unwrap();
    let e = h5::dataset_read(ds.id(), 0, 2000, &Dtype::U8, "/bad").unwrap_err().to_string();
    assert!(e.contains("/bad") && e.contains("chunk at element"), "{e}");
    // HDF5's pipeline reports the filter failure as an HDF5 error, no panic.
    let mut buf = vec![0u8; 1000];
    assert!(h5::dataset_read_pipeline(ds.id(), 1000, 1000, &Dtype::U8, "/bad", &mut buf).is_err());
    // Deflate (libdeflate) chunks: too short, too long, not a zlib stream, and a stream
    // whose Adler-32 does not match; each read alone so that each error is seen.
    let spec = DatasetSpec { dtype: Dtype::U8, len: 4000, chunk: Some(1000), filters: vec![Filter::Shuffle, Filter::Deflate(4)], fill: None };
    let ds = h5::dataset_create(f.id(), "bad_deflate", &spec).unwrap();
    let mut bad_sum = codec::deflate(&[7u8; 1000], 4).unwrap();
    let last = bad_sum.len() - 1;
    bad_sum[last] ^= 1;
    let chunks = [codec::deflate(&[1u8; 10], 4).unwrap(), codec::deflate(&[1u8; 1001], 4).unwrap(), b"not a zlib stream".to_vec(), bad_sum];
    let want = ["decodes to 10 bytes", "decodes to more than 1000 bytes", "corrupt deflate data", "corrupt deflate data"];
    for (k, (c, w)) in chunks.iter().zip(want).enumerate() {
        h5::chunk_write_raw(ds.id(), k as u64 * 1000, c, "/bad_deflate").unwrap();
        let e = h5::dataset_read(ds.id(), k as u64 * 1000, 1000, &Dtype::U8, "/bad_deflate").unwrap_err().to_string();
        assert!(e.contains("/bad_deflate") && e.contains(&format!("chunk at element {}", k * 1000)) && e.contains(w), "chunk {k}: {e}");
    }
}

#[test]
fn marquet_defaults_use_deflate_and_move_whole_chunks_directly() {
    let _order = shared();
    // Serial: the decoded-chunk cache of the test below is invalidated by any write in
    // the process, so no test here writes while another counts decodes.
    let _s = common::serial();
    let level = marquet::marquet::compression::DEFAULT_DEFLATE_LEVEL;
    marquet_columns_move_whole_chunks_directly(None, Filter::Deflate(level));
}

#[test]
fn marquet_zstd_option_moves_whole_chunks_directly() {
    let _order = shared();
    // Serial: the decoded-chunk cache of the test below is invalidated by any write in
    // the process, so no test here writes while another counts decodes.
    let _s = common::serial();
    let c = marquet::marquet::Compression::zstd();
    marquet_columns_move_whole_chunks_directly(Some(c), Filter::Zstd(marquet::marquet::GEOMETRY_ZSTD_LEVEL));
}

/// Geometry columns of compression `c` (`None`: the default) store `compressor` (after
/// shuffle for points and OFFSETS), and an append moves their whole chunks directly.
fn marquet_columns_move_whole_chunks_directly(c: Option<marquet::marquet::Compression>, compressor: Filter) {
    use marquet::marquet::{GeoBatch, GeometryColumnSpec, GeometryValues, MarquetTable, StorageForm};
    use marquet::Dimensions;
    let dir = common::TempDir::new("direct-marquet");
    let f = File::create(dir.join("m.h5")).unwrap();
    let mut t = MarquetTable::create(&f, "/t").unwrap();
    let spec = match c {
        Some(c) => GeometryColumnSpec::default().with_compression(c),
        None => GeometryColumnSpec::default(),
    };
    t.add_geometry_column("pt", &spec.clone().with_form(StorageForm::Point { dims: Dimensions::Xy, f32: false })).unwrap();
    t.add_geometry_column("poly", &spec.with_form(StorageForm::VarWkb)).unwrap();
    let n = 200_000usize;
    let (mut x, y) = crate::synth::clustered_points(n, 11);
    let polys: Vec<Option<Vec<u8>>> = crate::synth::polygons(n, 11).into_iter().map(Some).collect();
    // Two bad rows in different parallel blocks: the lowest one is reported.
    let (keep_a, keep_b) = (x[150_000], x[70_000]);
    x[150_000] = f64::NAN;
    x[70_000] = f64::NAN;
    let batch = |x: &[f64]| {
        GeoBatch::new()
            .with_geometry("pt", GeometryValues::Points { dims: Dimensions::Xy, x: x.to_vec(), y: y.clone(), z: None, m: None, valid: None })
            .with_geometry("poly", GeometryValues::Wkb(polys.clone()))
    };
    let e = t.append(&batch(&x)).unwrap_err().to_string();
    assert!(e.contains("row 70000:"), "{e}");
    x[150_000] = keep_a;
    x[70_000] = keep_b;
    let before = direct::chunks_moved().0;
    t.append(&batch(&x)).unwrap();
    let moved = direct::chunks_moved().0 - before;
    let pt = h5::dataset_open(t.table().id(), "pt").unwrap();
    assert_eq!(h5::dataset_info(pt.id(), "/t/pt").unwrap().filters, vec![Filter::Shuffle, compressor.clone()]);
    let vals = h5::dataset_open(t.table().id(), "poly/VALUES").unwrap();
    let vinfo = h5::dataset_info(vals.id(), "/t/poly/VALUES").unwrap();
    assert_eq!(vinfo.filters, vec![compressor.clone()]);
    let offs = h5::dataset_open(t.table().id(), "poly/OFFSETS").unwrap();
    assert_eq!(h5::dataset_info(offs.id(), "/t/poly/OFFSETS").unwrap().filters, vec![Filter::Shuffle, compressor.clone()]);
    // Whole chunks: those of the point column, the VALUES chunks below its end, and the
    // OFFSETS chunks from 1 on that [1, n + 1) covers fully (chunk 0 already holds offset 0).
    use marquet::marquet::{GEOMETRY_CHUNK_ROWS as C, GEOMETRY_VALUES_CHUNK_BYTES as VC};
    let wkb_len = vinfo.dims[0];
    let n64 = n as u64;
    assert_eq!((n64 / C, (n64 + 1) / C - 1), (97, 96), "200,000 rows in 2,048-row chunks");
    assert_eq!(moved, n64 / C + wkb_len / VC + ((n64 + 1) / C - 1), "chunks written directly ({wkb_len} WKB bytes)");
    let p = t.read_points("pt", 0, n as u64).unwrap();
    assert_eq!((p.x, p.y), (x, y));
    let w = t.read_wkb("poly", 0, n as u64).unwrap();
    assert!((0..n).all(|i| w.get(i) == polys[i].as_deref()));
}

#[test]
fn small_deflate_reads_decode_through_a_cache_that_sees_writes() {
    let _order = shared();
    let _s = common::serial();
    let dir = common::TempDir::new("direct-cache");
    let spec = DatasetSpec { dtype: Dtype::U64, len: 3000, chunk: Some(1000), filters: vec![Filter::Shuffle, Filter::Deflate(4)], fill: None };
    let vals = |k: u64| -> Vec<u8> { (0..3000u64).flat_map(|i| (i * 7 + k).to_le_bytes()).collect() };
    let want = |k: u64, a: u64, n: u64| -> Vec<u8> { (a..a + n).flat_map(|i| (i * 7 + k).to_le_bytes()).collect() };
    // Two files of the same layout and different values, open at once: the cache must
    // never hand one file's chunk to the other.
    let fa = File::create(dir.join("a.h5")).unwrap();
    let fb = File::create(dir.join("b.h5")).unwrap();
    let a = h5::dataset_create(fa.id(), "v", &spec).unwrap();
    let b = h5::dataset_create(fb.id(), "v", &spec).unwrap();
    h5::dataset_write(a.id(), 0, &Dtype::U64, &vals(0), "a").unwrap();
    h5::dataset_write(b.id(), 0, &Dtype::U64, &vals(1), "b").unwrap();
    let moved = || direct::chunks_moved().1;
    let m0 = moved();
    assert_eq!(h5::dataset_read(a.id(), 1500, 10, &Dtype::U64, "a").unwrap(), want(0, 1500, 10));
    assert_eq!(moved() - m0, 1, "first small read decodes its chunk");
    assert_eq!(h5::dataset_read(a.id(), 1600, 10, &Dtype::U64, "a").unwrap(), want(0, 1600, 10));
    assert_eq!(moved() - m0, 1, "second read of the same chunk is a cache hit");
    assert_eq!(h5::dataset_read(b.id(), 1600, 10, &Dtype::U64, "b").unwrap(), want(1, 1600, 10));
    assert_eq!(moved() - m0, 2, "the other file's chunk is its own");
    // Across a chunk boundary: chunk 1 cached, chunk 2 decoded.
    assert_eq!(h5::dataset_read(a.id(), 1990, 20, &Dtype::U64, "a").unwrap(), want(0, 1990, 20));
    assert_eq!(moved() - m0, 3);
    // A write (partial chunk, through HDF5's pipeline) invalidates the cached chunk.
    let new: Vec<u8> = (0..10u64).flat_map(|i| (999_999 + i).to_le_bytes()).collect();
    h5::dataset_write(a.id(), 1600, &Dtype::U64, &new, "a").unwrap();
    assert_eq!(h5::dataset_read(a.id(), 1600, 10, &Dtype::U64, "a").unwrap(), new);
    assert_eq!(moved() - m0, 4);
    // The same through HDF5's own pipeline (zlib), for an independent check.
    let mut buf = vec![0u8; 80];
    h5::dataset_read_pipeline(a.id(), 1600, 10, &Dtype::U64, "a", &mut buf).unwrap();
    assert_eq!(buf, new);
    // Reopened files get new identities: nothing stale survives a close.
    drop((a, b, fa, fb));
    let fb = File::open(dir.join("b.h5")).unwrap();
    let b = h5::dataset_open(fb.id(), "v").unwrap();
    assert_eq!(h5::dataset_read(b.id(), 1600, 10, &Dtype::U64, "b").unwrap(), want(1, 1600, 10));
    // zstd small reads keep HDF5's pipeline and its chunk cache.
    let zspec = DatasetSpec { filters: vec![Filter::Shuffle, Filter::Zstd(1)], ..spec };
    let fz = File::create(dir.join("z.h5")).unwrap();
    let z = h5::dataset_create(fz.id(), "v", &zspec).unwrap();
    h5::dataset_write(z.id(), 0, &Dtype::U64, &vals(2), "z").unwrap();
    let m1 = moved();
    assert_eq!(h5::dataset_read(z.id(), 1500, 10, &Dtype::U64, "z").unwrap(), want(2, 1500, 10));
    assert_eq!(moved(), m1);
}

/// Issue #38: reading a dataset of many small chunks costs work proportional to its chunks.
/// HDF5's `H5Dget_chunk_info_by_coord` walks the whole chunk index on every call, so one
/// call per chunk was O(n²) (`--values-chunk-bytes 100`: `validate` of 43k rows took
/// minutes); with HDF5 >= 1.14 the index is walked once per dataset.
#[test]
fn reading_many_small_chunks_walks_the_chunk_index_once() {
    let _order = alone();
    let dir = common::TempDir::new("direct-walks");
    let f = File::create(dir.join("w.h5")).unwrap();
    let n: u64 = 20_000;
    let spec = DatasetSpec { dtype: Dtype::U64, len: n, chunk: Some(10), filters: vec![Filter::Shuffle, Filter::Deflate(4)], fill: None };
    let ds = h5::dataset_create(f.id(), "tiny_chunks", &spec).unwrap();
    let data: Vec<u8> = (0..n).flat_map(|v| (v * 7).to_le_bytes()).collect();
    h5::dataset_write(ds.id(), 0, &Dtype::U64, &data, "tiny_chunks").unwrap();
    h5::flush(f.id()).unwrap();
    let walks = h5::chunk_index_walks();
    let moved = direct::chunks_moved().1;
    // The whole dataset, then row by row in runs of 25 (what a scan of a column does).
    assert_eq!(h5::dataset_read(ds.id(), 0, n, &Dtype::U64, "tiny_chunks").unwrap(), data);
    for start in (0..n).step_by(25) {
        let got = h5::dataset_read(ds.id(), start, 25, &Dtype::U64, "tiny_chunks").unwrap();
        assert_eq!(got, data[(start * 8) as usize..((start + 25) * 8) as usize]);
    }
    assert!(direct::chunks_moved().1 - moved >= n / 10, "the reads went through direct chunk I/O");
    let w = h5::chunk_index_walks() - walks;
    // A shared HDF5 1.12 (no H5Dchunk_iter) still asks chunk by chunk.
    assert!(w <= 2 || !cfg!(hdf5_1_14), "{w} walks of the chunk index to read 2,000 chunks");
}

/// Datasets of `f`, one per filter pipeline, each `n` elements of `data` (16-byte points).
fn write_filtered(f: hdf5_sys::h5i::hid_t, data: &[u8], n: u64) -> Vec<&'static str> {
    let pt = Dtype::f64_compound(&["x", "y"]);
    let mut names = Vec::new();
    for (name, filters) in [
        ("shuffle_deflate4", vec![Filter::Shuffle, Filter::Deflate(4)]),
        ("deflate1", vec![Filter::Deflate(1)]),
        ("shuffle_zstd3", vec![Filter::Shuffle, Filter::Zstd(3)]),
        ("none", vec![]),
    ] {
        let spec = DatasetSpec { dtype: pt.clone(), len: n, chunk: Some(CHUNK), filters, fill: None };
        let ds = h5::dataset_create(f, name, &spec).unwrap();
        h5::dataset_write(ds.id(), 0, &pt, data, name).unwrap();
        names.push(name);
    }
    names
}

/// Read every dataset of `names` in `f` whole, in a middle range and in small pieces (the
/// decoded-chunk cache's path) and compare with `data`; returns the chunks read by file
/// offset meanwhile.
fn read_back(f: &File, names: &[&str], data: &[u8], n: u64) -> u64 {
    let pt = Dtype::f64_compound(&["x", "y"]);
    let before = h5::chunks_read_by_offset();
    for name in names {
        let ds = h5::dataset_open(f.id(), name).unwrap();
        assert!(h5::dataset_read(ds.id(), 0, n, &pt, name).unwrap() == data, "{name}: whole read");
        let (a, b) = (1_234u64, 7_777u64);
        assert!(h5::dataset_read(ds.id(), a, b - a, &pt, name).unwrap() == data[(a * 16) as usize..(b * 16) as usize], "{name}: range");
        for at in [0u64, 999, 1_000, 5_432, n - 3] {
            let got = h5::dataset_read(ds.id(), at, 3, &pt, name).unwrap();
            assert!(got == data[(at * 16) as usize..((at + 3) * 16) as usize], "{name}: 3 rows at {at}");
        }
    }
    h5::chunks_read_by_offset() - before
}

#[test]
fn chunks_of_a_read_only_file_are_read_by_offset() {
    let _order = shared();
    let _s = common::serial();
    let dir = common::TempDir::new("by-offset");
    let n = 10_500u64;
    let pts = doubles(n as usize, 5);
    // A plain file, and one with a 512-byte user block (HDF5 addresses are then relative
    // to the superblock, not file offsets: that file must keep HDF5's chunk reads).
    let plain = dir.join("plain.h5");
    let names = write_filtered(File::create(&plain).unwrap().id(), &pts, n);
    let ub = dir.join("userblock.h5");
    hdf5::File::with_options().with_fcpl(|p| p.userblock(512)).create(&ub).unwrap().close().unwrap();
    {
        let f = File::open_rw(&ub).unwrap();
        write_filtered(f.id(), &pts, n);
    }
    // Read-only: by offset, every chunk of the reads above (11 chunks a dataset whole, 7
    // for the range, and the small reads' 4 distinct chunks once each, the cache keeping
    // them) — at least the whole reads' chunks, 11 per dataset.
    let by_offset = read_back(&File::open(&plain).unwrap(), &names, &pts, n);
    assert!(by_offset >= 11 * names.len() as u64, "chunks read by offset: {by_offset}");
    // Open for writing, or with a user block: through HDF5 only, the same values.
    assert_eq!(read_back(&File::open_rw(&plain).unwrap(), &names, &pts, n), 0, "a file open for writing");
    assert_eq!(read_back(&File::open(&ub).unwrap(), &names, &pts, n), 0, "a file with a user block");
}

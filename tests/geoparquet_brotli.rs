//! GeoParquet inputs compressed with brotli are read like every other Parquet codec (the
//! `parquet` crate's `brotli` feature). testdata/brotli_geoparquet.parquet was written by
//! pyarrow (testdata/make_brotli_geoparquet.py; testdata/README.md).
#![cfg(feature = "geoparquet")]

use std::path::Path;

use marquet::convert::{import_geoparquet, ImportOptions};
use marquet::h5col::File;
use marquet::marquet::MarquetTable;
use marquet::validate::{validate_file, Options};

#[test]
fn brotli_geoparquet_imports() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/brotli_geoparquet.parquet");
    let out = std::env::temp_dir().join(format!("marquet-brotli-{}.h5", std::process::id()));
    {
        let f = File::create(&out).unwrap();
        // Rows kept in the source's order (the default layout would sort them).
        let opts = ImportOptions { layout: marquet::marquet::WriteLayout::plain(), ..ImportOptions::new("/t") };
        let rep = import_geoparquet(&src, &f, &opts).unwrap();
        assert_eq!(rep.rows, 5);
        let t = MarquetTable::open(&f, "/t").unwrap();
        let w = t.read_wkb("geometry", 0, 5).unwrap();
        let wkt: Vec<Option<String>> = (0..5).map(|i| w.get(i).map(|b| marquet::wkb::to_wkt(b).unwrap())).collect();
        assert_eq!(
            wkt,
            [
                Some("POINT (1 2)".to_string()),
                Some("LINESTRING (0 0, 10 5, 20 0)".into()),
                Some("POLYGON ((0 0, 4 0, 4 3, 0 3, 0 0), (1 1, 1 2, 2 2, 2 1, 1 1))".into()),
                None,
                Some("MULTIPOINT ((-120 35), (-121 36))".into()),
            ]
        );
        let names = t.table().column("name").unwrap().read(0, 5).unwrap();
        assert_eq!((0..5).map(|i| names.display(i)).collect::<Vec<_>>(), ["a", "b", "c", "d", "e"]);
    }
    let r = validate_file(&out, &Options::default()).unwrap();
    assert_eq!(r.errors().count(), 0, "{:#?}", r.errors().collect::<Vec<_>>());
}

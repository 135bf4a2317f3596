//! Fuzz the WKB codec (HEP002 §7.1, §17): scan, decode and to_wkt must never panic, must
//! accept exactly the same inputs, and an accepted value must re-encode consistently.
#![no_main]

use libfuzzer_sys::fuzz_target;
use marquet::wkb::{self, ByteOrder};

fuzz_target!(|data: &[u8]| {
    let scanned = wkb::scan(data);
    let decoded = wkb::decode(data);
    let wkt = wkb::to_wkt(data);
    assert_eq!(scanned.is_ok(), decoded.is_ok());
    assert_eq!(scanned.is_ok(), wkt.is_ok());
    match (scanned, decoded) {
        (Ok(info), Ok(g)) => {
            assert_eq!(info.geometry_type, g.geometry_type());
            assert_eq!(info.is_empty, g.is_empty());
            let le = wkb::encode(&g, ByteOrder::LittleEndian);
            assert_eq!(le.len(), data.len());
            // Uniformly little-endian input round-trips byte for byte; any input is stable
            // after one re-encoding.
            let g2 = wkb::decode(&le).expect("re-encoded value decodes");
            assert_eq!(wkb::encode(&g2, ByteOrder::LittleEndian), le);
            let info2 = wkb::scan(&le).expect("re-encoded value scans");
            assert_eq!(info2.num_coords, info.num_coords);
            assert_eq!(info2.is_empty, info.is_empty);
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        _ => unreachable!(),
    }
});

//! The `marquet` command's own modules and the HEP002 §15 examples as a library for the
//! workspace's tests, benches and examples (not published). Each module is the file the
//! binary or the example compiles; nothing here is a second copy.
#![allow(missing_docs)]

/// Seeded synthetic data: clustered points, star polygons, query windows.
#[path = "../src/bin/marquet/synth.rs"]
pub mod synth;

/// `marquet bench`: the Marquet side of the cross-format comparison.
#[path = "../src/bin/marquet/bench.rs"]
pub mod bench;

/// The command's output sink (stdout, stopping quietly on a closed pipe).
#[path = "../src/bin/marquet/out.rs"]
#[allow(clippy::new_without_default)]
pub mod out;

/// `marquet info`.
#[path = "../src/bin/marquet/info.rs"]
pub mod info;

/// `marquet dump`.
#[cfg(feature = "geoparquet")]
#[path = "../src/bin/marquet/dump.rs"]
pub mod dump;

/// A test HTTP server with byte ranges, counters and fault injection (issue #34).
#[path = "../src/bin/marquet/range_server.rs"]
pub mod range_server;

/// An S3 endpoint for tests: moto in server mode from the test venv (issue #34).
pub mod moto;

/// HEP002 §15.1: the stations example.
#[path = "../examples/stations.rs"]
#[allow(dead_code)]
pub mod stations;

/// HEP002 §15.2: the lakes example.
#[path = "../examples/lakes.rs"]
#[allow(dead_code)]
pub mod lakes;

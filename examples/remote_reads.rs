//! Run a command against files served over HTTP with Range support and a chosen latency, and
//! print the requests, bytes and time it took (issue #34: what a read by URL costs).
//!
//! ```sh
//! cargo run --release --example remote_reads -- DIR LATENCY_MS RUNS -- marquet info {url:polygons.h5}
//! ```
//!
//! Every file directly in DIR is served by its name; `{url:NAME}` in the command becomes
//! its URL. Each run is a new process; the output is the median of RUNS runs.

use std::process::Command;
use std::time::Instant;

use marquet_dev::range_server::RangeServer;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(sep) = args.iter().position(|a| a == "--") else {
        eprintln!("usage: remote_reads DIR LATENCY_MS RUNS -- COMMAND ARGS… ({{url:NAME}} for a served file)");
        std::process::exit(2);
    };
    let (dir, latency, runs): (&str, u64, usize) = (&args[0], args[1].parse().expect("LATENCY_MS"), args[2].parse().expect("RUNS"));
    let server = RangeServer::serve_dir(std::path::Path::new(dir)).expect("serve");
    server.handle().set_latency_ms(latency);
    let cmd: Vec<String> = args[sep + 1..]
        .iter()
        .map(|a| match a.strip_prefix("{url:").and_then(|r| r.strip_suffix('}')) {
            Some(name) => server.url(name),
            None => a.clone(),
        })
        .collect();
    let (mut reqs, mut bytes, mut secs) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        server.handle().reset_stats();
        let t = Instant::now();
        let o = Command::new(&cmd[0]).args(&cmd[1..]).output().expect("run");
        secs.push(t.elapsed().as_secs_f64());
        assert!(o.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&o.stderr));
        let s = server.handle().stats();
        reqs.push(s.requests);
        bytes.push(s.body_bytes);
    }
    let mid = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.total_cmp(b));
        v[v.len() / 2]
    };
    reqs.sort_unstable();
    bytes.sort_unstable();
    println!("{} runs, latency {latency} ms: requests {}, bytes {}, seconds {:.3} (medians)", runs, reqs[runs / 2], bytes[runs / 2], mid(&mut secs));
}

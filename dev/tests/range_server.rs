//! The test HTTP server of issue #34 (src/bin/marquet/range_server.rs) checked with a raw
//! TcpStream client (exact status lines, headers and bytes) and, where installed, curl as
//! an independent client.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use marquet_dev::range_server::{RangeServer, Stats};

/// Bytes 0..n with a pattern that makes every offset's value distinct modulo 251.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

/// One response read off a connection: status, headers (lower-case names), body.
#[derive(Debug)]
struct Resp {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Resp {
    fn h(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

struct Client {
    r: BufReader<TcpStream>,
    w: TcpStream,
}

impl Client {
    fn connect(s: &RangeServer) -> Client {
        let c = TcpStream::connect(s.addr()).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        Client { w: c.try_clone().unwrap(), r: BufReader::new(c) }
    }
    fn send(&mut self, method: &str, path: &str, headers: &[(&str, &str)]) {
        let mut req = format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n");
        for (k, v) in headers {
            req += &format!("{k}: {v}\r\n");
        }
        req += "\r\n";
        self.w.write_all(req.as_bytes()).unwrap();
    }
    fn read(&mut self, head_only: bool) -> Resp {
        let mut line = String::new();
        self.r.read_line(&mut line).unwrap();
        assert!(line.starts_with("HTTP/1.1 "), "status line {line:?}");
        let status: u16 = line[9..12].parse().unwrap();
        let mut headers = Vec::new();
        loop {
            let mut l = String::new();
            self.r.read_line(&mut l).unwrap();
            let l = l.trim_end();
            if l.is_empty() {
                break;
            }
            let (k, v) = l.split_once(':').unwrap();
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let len: usize = headers.iter().find(|(k, _)| k == "content-length").map(|(_, v)| v.parse().unwrap()).unwrap();
        let mut body = vec![0; if head_only { 0 } else { len }];
        self.r.read_exact(&mut body).unwrap();
        Resp { status, headers, body }
    }
    fn get(&mut self, path: &str, headers: &[(&str, &str)]) -> Resp {
        self.send("GET", path, headers);
        self.read(false)
    }
}

#[test]
fn ranges_head_keep_alive_and_counters() {
    let data = pattern(10_000);
    let s = RangeServer::start().unwrap();
    s.add("a.bin", data.clone());
    let etag = s.etag("a.bin").unwrap();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "strong ETag {etag}");
    // Every request below goes over this one connection (keep-alive).
    let mut c = Client::connect(&s);

    let r = c.get("/a.bin", &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.body, data);
    assert_eq!(r.h("etag"), Some(etag.as_str()));
    assert_eq!(r.h("accept-ranges"), Some("bytes"));
    assert!(r.h("last-modified").unwrap().ends_with(" GMT"));

    let r = c.get("/a.bin", &[("Range", "bytes=100-199")]);
    assert_eq!((r.status, r.h("content-range")), (206, Some("bytes 100-199/10000")));
    assert_eq!(r.body, &data[100..200]);

    let r = c.get("/a.bin", &[("Range", "bytes=9990-")]);
    assert_eq!((r.status, r.h("content-range")), (206, Some("bytes 9990-9999/10000")));
    assert_eq!(r.body, &data[9990..]);

    let r = c.get("/a.bin", &[("Range", "bytes=-7")]);
    assert_eq!((r.status, r.h("content-range")), (206, Some("bytes 9993-9999/10000")));
    assert_eq!(r.body, &data[9993..]);

    // An end past the last byte is cut to it.
    let r = c.get("/a.bin", &[("Range", "bytes=9999-20000")]);
    assert_eq!((r.status, r.body.as_slice()), (206, &data[9999..]));

    let r = c.get("/a.bin", &[("Range", "bytes=10000-10010")]);
    assert_eq!((r.status, r.h("content-range")), (416, Some("bytes */10000")));

    // If-Match: the current tag (or *) serves, another tag fails with 412.
    let r = c.get("/a.bin", &[("Range", "bytes=0-3"), ("If-Match", &etag)]);
    assert_eq!((r.status, r.body.as_slice()), (206, &data[..4]));
    let r = c.get("/a.bin", &[("Range", "bytes=0-3"), ("If-Match", "*")]);
    assert_eq!(r.status, 206);
    let r = c.get("/a.bin", &[("Range", "bytes=0-3"), ("If-Match", "\"other\"")]);
    assert_eq!(r.status, 412);

    // HEAD: the headers of the GET, no body.
    c.send("HEAD", "/a.bin", &[]);
    let r = c.read(true);
    assert_eq!((r.status, r.h("content-length"), r.h("etag")), (200, Some("10000"), Some(etag.as_str())));
    c.send("HEAD", "/a.bin", &[("Range", "bytes=10-19")]);
    let r = c.read(true);
    assert_eq!((r.status, r.h("content-length")), (206, Some("10")));

    let r = c.get("/missing.bin", &[]);
    assert_eq!(r.status, 404);

    c.send("PUT", "/a.bin", &[("Content-Length", "0")]);
    let r = c.read(false);
    assert_eq!((r.status, r.h("allow")), (405, Some("GET, HEAD")));

    let st = s.stats();
    assert_eq!(st.requests, 13);
    let a = s.path_stats("a.bin");
    assert_eq!(a.requests, 12);
    // Bodies: 10,000 + 100 + 10 + 7 + 1 + 4 + 4 of data, plus the short text bodies of
    // the 416, 412 and 405 answers (HEAD writes none).
    let text = |code: &str| format!("{code}\n").len() as u64;
    assert_eq!(a.body_bytes, 10_126 + text("416 Range Not Satisfiable") + text("412 Precondition Failed") + text("405 Method Not Allowed"));
    assert_eq!(s.path_stats("missing.bin").requests, 1);
    assert_eq!(st.body_bytes, a.body_bytes + text("404 Not Found"));
    assert_eq!(s.log().len(), 13);
    assert_eq!(s.log()[1].range.as_deref(), Some("bytes=100-199"));
    s.reset_stats();
    assert_eq!(s.stats(), Stats::default());
    assert!(s.log().is_empty());
}

#[test]
fn faults() {
    let data = pattern(5_000);
    let s = RangeServer::start().unwrap();
    s.add("f.bin", data.clone());
    let mut c = Client::connect(&s);

    // No range support: 200 with everything.
    s.set_no_range(true);
    let r = c.get("/f.bin", &[("Range", "bytes=0-9")]);
    assert_eq!((r.status, r.body.len(), r.h("accept-ranges")), (200, 5_000, None));
    s.set_no_range(false);

    // A status for one path.
    s.set_status_for("f.bin", Some(403));
    assert_eq!(c.get("/f.bin", &[("Range", "bytes=0-9")]).status, 403);
    s.set_status_for("f.bin", None);
    assert_eq!(c.get("/f.bin", &[("Range", "bytes=0-9")]).status, 206);

    // The next two requests fail with 503, the third is served.
    s.fail_next(2);
    assert_eq!(c.get("/f.bin", &[]).status, 503);
    assert_eq!(c.get("/f.bin", &[]).status, 503);
    assert_eq!(c.get("/f.bin", &[("Range", "bytes=1-2")]).body, &data[1..3]);

    // The content changes after two more requests: new bytes, new ETag, If-Match on the
    // old tag fails.
    let old = s.etag("f.bin").unwrap();
    s.replace_after("f.bin", 2, b"new content".to_vec());
    assert_eq!(c.get("/f.bin", &[("Range", "bytes=0-3"), ("If-Match", &old)]).body, &data[..4]);
    assert_eq!(c.get("/f.bin", &[("Range", "bytes=0-3"), ("If-Match", &old)]).body, &data[..4]);
    assert_eq!(c.get("/f.bin", &[("Range", "bytes=0-3"), ("If-Match", &old)]).status, 412);
    let r = c.get("/f.bin", &[("Range", "bytes=0-3")]);
    assert_eq!((r.status, r.body.as_slice(), r.h("content-range")), (206, &b"new "[..], Some("bytes 0-3/11")));
    assert_ne!(r.h("etag"), Some(old.as_str()));
    assert_eq!(r.h("etag").map(str::to_string), s.etag("f.bin"));

    // Latency per request.
    s.set_latency_ms(60);
    let t = Instant::now();
    c.get("/f.bin", &[("Range", "bytes=0-0")]);
    c.get("/f.bin", &[("Range", "bytes=0-0")]);
    assert!(t.elapsed() >= Duration::from_millis(120), "{:?}", t.elapsed());
    s.set_latency_ms(0);

    // Hang: the request is read and never answered; a client with a timeout gets one.
    s.set_hang(true);
    let h = TcpStream::connect(s.addr()).unwrap();
    h.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
    (&h).write_all(b"GET /f.bin HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut buf = [0u8; 16];
    let e = (&h).read(&mut buf).unwrap_err();
    assert!(matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut), "{e:?}");
    s.set_hang(false);
    // Dropping the server closes the hanging connection.
    drop(s);
    h.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    assert_eq!((&h).read(&mut buf).unwrap_or(0), 0);
}

#[test]
fn files_from_a_directory_with_curl() {
    let dir = std::env::temp_dir().join(format!("marquet-range-server-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let data = pattern(700_000); // more than one block of the file writer
    std::fs::write(dir.join("big.bin"), &data).unwrap();
    let s = RangeServer::serve_dir(&dir).unwrap();
    let mut c = Client::connect(&s);
    let r = c.get("/big.bin", &[("Range", "bytes=262000-600000")]);
    assert_eq!(r.body, &data[262_000..600_001]);
    assert_eq!(c.get("/big.bin", &[]).body, data);
    if Command::new("curl").arg("--version").output().is_err() {
        println!("NOTICE: no curl: skipping the independent client");
    } else {
        // Two ranged transfers in one curl process reuse the connection ("Re-using").
        let out = Command::new("curl")
            .args(["-sS", "-v", "-r", "5-14", &s.url("big.bin"), "--next", "-sS", "-v", "-r", "699990-", &s.url("big.bin")])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let mut want = data[5..15].to_vec();
        want.extend_from_slice(&data[699_990..]);
        assert_eq!(out.stdout, want);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("206 Partial Content"), "{err}");
        assert!(err.to_lowercase().contains("re-using") || err.to_lowercase().contains("reusing"), "keep-alive: {err}");
        let out = Command::new("curl").args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-r", "700000-", &s.url("big.bin")]).output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout), "416");
    }
    drop(s);
    std::fs::remove_dir_all(&dir).unwrap();
}

//! An S3 endpoint on 127.0.0.1 for the tests of issue #34: `moto` in server mode (PyPI
//! `moto[server]`, installed in the test venv by scripts/pyvenv.sh), started from that venv's
//! Python on a free port, with one bucket and the objects a test uploads; killed on drop.
//!
//! A client reaches it with the environment of [`MotoServer::env`]: `AWS_ENDPOINT_URL` and
//! `AWS_ENDPOINT` (the endpoint, `http://127.0.0.1:PORT`; `object_store` reads either, the
//! AWS SDKs and boto3 the first), `AWS_ALLOW_HTTP=true` (object_store refuses plain HTTP
//! otherwise), `AWS_ACCESS_KEY_ID` / `AWS_SECRET_ACCESS_KEY` (any value: moto checks no
//! signature, but clients sign and need some), `AWS_REGION=us-east-1`, and no
//! `AWS_VIRTUAL_HOSTED_STYLE_REQUEST` (path-style URLs, `http://127.0.0.1:PORT/BUCKET/KEY`,
//! object_store's default). Objects are private: an unsigned GET answers 403, which tests of
//! the missing-credentials error can use.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Seconds to wait for the server to answer after it was started.
pub const START_TIMEOUT: Duration = Duration::from_secs(60);

/// Access key id handed to clients (moto accepts any).
pub const ACCESS_KEY_ID: &str = "marquet-test";
/// Secret access key handed to clients (moto accepts any).
pub const SECRET_ACCESS_KEY: &str = "marquet-test-secret";
/// Region handed to clients.
pub const REGION: &str = "us-east-1";

/// A running moto S3 server with one bucket.
#[derive(Debug)]
pub struct MotoServer {
    child: Child,
    addr: SocketAddr,
    bucket: String,
}

/// An HTTP answer: status, headers (names lower-case), body.
pub type Answer = (u16, Vec<(String, String)>, Vec<u8>);

/// One HTTP/1.1 exchange on a fresh connection (`Connection: close`): status, headers (names
/// lower-case) and body. For the tests' own uploads and checks; no TLS, no chunked bodies in
/// requests.
pub fn http(addr: SocketAddr, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> io::Result<Answer> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
    s.set_read_timeout(Some(Duration::from_secs(120)))?;
    let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    for (k, v) in headers {
        req += &format!("{k}: {v}\r\n");
    }
    req += "\r\n";
    s.write_all(req.as_bytes())?;
    s.write_all(body)?;
    let mut r = BufReader::new(s);
    let mut line = String::new();
    r.read_line(&mut line)?;
    let status = line.split_whitespace().nth(1).and_then(|c| c.parse().ok()).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, format!("status line {line:?}")))?;
    let mut hs = Vec::new();
    loop {
        let mut l = String::new();
        if r.read_line(&mut l)? == 0 {
            break;
        }
        let l = l.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            hs.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let chunked = hs.iter().any(|(k, v)| k == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let mut out = Vec::new();
    if chunked {
        loop {
            let mut l = String::new();
            r.read_line(&mut l)?;
            let n = usize::from_str_radix(l.trim().split(';').next().unwrap_or(""), 16).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            if n == 0 {
                break;
            }
            let at = out.len();
            out.resize(at + n, 0);
            r.read_exact(&mut out[at..])?;
            let mut crlf = [0u8; 2];
            r.read_exact(&mut crlf)?;
        }
    } else if let Some(n) = hs.iter().find(|(k, _)| k == "content-length").and_then(|(_, v)| v.parse::<usize>().ok()) {
        out.resize(n, 0);
        if method != "HEAD" {
            r.read_exact(&mut out)?;
        } else {
            out.clear();
        }
    } else {
        r.read_to_end(&mut out)?;
    }
    Ok((status, hs, out))
}

fn free_port() -> io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl MotoServer {
    /// Start `python -m moto.server -H 127.0.0.1 -p PORT` (PORT free now), wait until it
    /// answers (at most [`START_TIMEOUT`]) and create `bucket`.
    pub fn start(python: &Path, bucket: &str) -> io::Result<MotoServer> {
        let mut last = None;
        // The port is free when chosen; another process could take it before moto binds it,
        // so a server that exits at once is tried again on a new port.
        for _ in 0..3 {
            let port = free_port()?;
            let child = Command::new(python)
                .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()?;
            let mut m = MotoServer { child, addr: SocketAddr::from(([127, 0, 0, 1], port)), bucket: bucket.to_string() };
            match m.wait_ready() {
                Ok(()) => {
                    m.create_bucket()?;
                    return Ok(m);
                }
                Err(e) => last = Some(e),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("moto did not start")))
    }

    fn wait_ready(&mut self) -> io::Result<()> {
        let t = Instant::now();
        loop {
            if let Some(st) = self.child.try_wait()? {
                return Err(io::Error::other(format!("moto.server exited with {st} before answering")));
            }
            if let Ok((200, _, _)) = http(self.addr, "GET", "/", &[], &[]) {
                return Ok(());
            }
            if t.elapsed() > START_TIMEOUT {
                return Err(io::Error::new(io::ErrorKind::TimedOut, format!("moto.server on {} did not answer in {START_TIMEOUT:?}", self.addr)));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn create_bucket(&self) -> io::Result<()> {
        let (st, _, body) = http(self.addr, "PUT", &format!("/{}", self.bucket), &[], &[])?;
        if st != 200 {
            return Err(io::Error::other(format!("PUT bucket {}: {st} {}", self.bucket, String::from_utf8_lossy(&body))));
        }
        Ok(())
    }

    /// `http://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The server's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The bucket.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// `s3://BUCKET/KEY`.
    pub fn url(&self, key: &str) -> String {
        format!("s3://{}/{}", self.bucket, key.trim_start_matches('/'))
    }

    /// Path-style HTTP URL of an object, `http://127.0.0.1:PORT/BUCKET/KEY`.
    pub fn http_url(&self, key: &str) -> String {
        format!("{}/{}/{}", self.endpoint(), self.bucket, key.trim_start_matches('/'))
    }

    /// Upload `bytes` as `KEY` (one plain PUT; moto checks no signature).
    pub fn put(&self, key: &str, bytes: &[u8]) -> io::Result<()> {
        let (st, _, body) = http(self.addr, "PUT", &format!("/{}/{}", self.bucket, key.trim_start_matches('/')), &[("Content-Type", "application/octet-stream")], bytes)?;
        if st != 200 {
            return Err(io::Error::other(format!("PUT {key}: {st} {}", String::from_utf8_lossy(&body))));
        }
        Ok(())
    }

    /// Upload the file at `path` as `KEY`.
    pub fn upload_file(&self, key: &str, path: &Path) -> io::Result<()> {
        self.put(key, &std::fs::read(path)?)
    }

    /// The environment a client needs (see the module documentation).
    pub fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("AWS_ENDPOINT_URL", self.endpoint()),
            ("AWS_ENDPOINT", self.endpoint()),
            ("AWS_ALLOW_HTTP", "true".to_string()),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY_ID.to_string()),
            ("AWS_SECRET_ACCESS_KEY", SECRET_ACCESS_KEY.to_string()),
            ("AWS_REGION", REGION.to_string()),
            ("AWS_DEFAULT_REGION", REGION.to_string()),
        ]
    }

    /// Set [`MotoServer::env`] on `cmd` (and clear variables that would send it elsewhere).
    pub fn apply_env<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        for k in ["AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_VIRTUAL_HOSTED_STYLE_REQUEST", "AWS_ENDPOINT_URL_S3"] {
            cmd.env_remove(k);
        }
        for (k, v) in self.env() {
            cmd.env(k, v);
        }
        cmd
    }
}

impl Drop for MotoServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

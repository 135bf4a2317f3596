//! A small HTTP/1.1 file server with byte ranges and fault injection, for the tests and the
//! benchmark of issue #34 (Marquet files read over HTTP).
//!
//! Hand-written on `std` (a [`TcpListener`] and a thread per connection) rather than taken
//! from a server crate because the tests need faults that no server crate offers at run
//! time: latency per request, a server that ignores `Range`, a fixed status for one path,
//! "the next N requests fail with 503", "the file changes after N requests" and "accept and
//! never answer". It also counts requests and body bytes per path, which is what the
//! benchmark compares between readers. It is a test tool: it binds 127.0.0.1 only.
//!
//! What it speaks (RFC 9110 / 9112, the subset readers use):
//! * `GET` and `HEAD` of `/NAME` (NAME a key of its map, percent-decoded, query string
//!   ignored); 404 for an unknown name, 405 for other methods;
//! * persistent connections (HTTP/1.1 default; `Connection: close` honoured; HTTP/1.0 closes);
//! * one range per request: `Range: bytes=A-B`, `bytes=A-` and `bytes=-N` answer 206 with
//!   `Content-Range`; a range starting at or past the end answers 416 with
//!   `Content-Range: bytes */LEN`; a syntactically invalid or multi-range header is ignored
//!   (200 with the whole body, as RFC 9110 §14.2 allows);
//! * a strong `ETag` (changed by every replacement of the content), `Last-Modified`,
//!   `Accept-Ranges: bytes`, `Content-Length`; `If-Match` that matches none of the listed
//!   tags (nor `*`) answers 412.
//!
//! Faults ([`Faults`], changed at run time through [`RangeServer::handle`], which the
//! connection threads share): per-request latency, `no_range` (answer 200 with the whole body
//! whatever `Range` says), a status for one path (e.g. 403), fail the next N requests with
//! 503, replace a file's content after N more requests for it, and hang (read the request,
//! never answer, keep the connection open until the client or the server closes it).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Longest request head (request line and headers) accepted, in bytes; longer answers 431.
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// Bytes written per `write` of a body read from a file.
const FILE_BLOCK: usize = 256 * 1024;

/// Where an entry's bytes are.
#[derive(Debug, Clone)]
enum Body {
    Memory(Arc<Vec<u8>>),
    File(Arc<PathBuf>, u64),
}

impl Body {
    fn len(&self) -> u64 {
        match self {
            Body::Memory(b) => b.len() as u64,
            Body::File(_, n) => *n,
        }
    }
}

/// One served name: its bytes and validators.
#[derive(Debug, Clone)]
struct Entry {
    body: Body,
    etag: String,
    modified: SystemTime,
}

/// Fault knobs; every field may be changed while the server runs ([`ServerHandle::set_faults`]
/// or the single setters).
#[derive(Debug, Clone, Default)]
pub struct Faults {
    /// Sleep this long before answering each request.
    pub latency: Duration,
    /// Ignore `Range` (and `If-Match`): 200 with the whole body, as a server without range
    /// support answers.
    pub no_range: bool,
    /// Answer this status (with a short text body) for these names.
    pub status_for: HashMap<String, u16>,
    /// Answer 503 to this many more requests (any path), then serve normally.
    pub fail_next: u64,
    /// Read requests and never answer them.
    pub hang: bool,
}

/// Requests and body bytes of one path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PathStats {
    /// Requests received (every answer counts, faults included).
    pub requests: u64,
    /// Bytes of response bodies written.
    pub body_bytes: u64,
}

/// One answered request, for tests that check what a reader asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLine {
    /// `GET` or `HEAD` (or what the client sent).
    pub method: String,
    /// The name asked for (no leading `/`).
    pub path: String,
    /// The `Range` header as sent, if any.
    pub range: Option<String>,
    /// The status answered (0: never answered, the hang fault).
    pub status: u16,
    /// Bytes of body written.
    pub body_bytes: u64,
}

/// The counters since the start or the last [`ServerHandle::reset_stats`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Requests received.
    pub requests: u64,
    /// Bytes of response bodies written.
    pub body_bytes: u64,
    /// The same per name.
    pub per_path: BTreeMap<String, PathStats>,
}

#[derive(Debug, Default)]
struct Pending {
    /// name -> (requests left before the swap, the new content).
    replace: HashMap<String, (u64, Arc<Vec<u8>>)>,
}

#[derive(Debug)]
struct Shared {
    entries: Mutex<HashMap<String, Entry>>,
    faults: Mutex<Faults>,
    pending: Mutex<Pending>,
    stats: Mutex<Stats>,
    log: Mutex<Vec<LogLine>>,
    generation: AtomicU64,
    stop: AtomicBool,
    conns: Mutex<Vec<TcpStream>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking connection thread must not take the whole server down with it.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A handle on a running [`RangeServer`] to change its content and faults and read its
/// counters; cheap to clone and to send to other threads.
#[derive(Debug, Clone)]
pub struct ServerHandle {
    shared: Arc<Shared>,
    addr: SocketAddr,
}

/// The server: listening on 127.0.0.1 on a port the OS chose until dropped.
#[derive(Debug)]
pub struct RangeServer {
    handle: ServerHandle,
    accept: Option<JoinHandle<()>>,
}

impl RangeServer {
    /// Start an empty server on `127.0.0.1:0`.
    pub fn start() -> io::Result<RangeServer> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            entries: Mutex::new(HashMap::new()),
            faults: Mutex::new(Faults::default()),
            pending: Mutex::new(Pending::default()),
            stats: Mutex::new(Stats::default()),
            log: Mutex::new(Vec::new()),
            generation: AtomicU64::new(1),
            stop: AtomicBool::new(false),
            conns: Mutex::new(Vec::new()),
        });
        let s = Arc::clone(&shared);
        let accept = std::thread::Builder::new().name("range-server-accept".into()).spawn(move || accept_loop(listener, s))?;
        Ok(RangeServer { handle: ServerHandle { shared, addr }, accept: Some(accept) })
    }

    /// Start a server for the regular files directly in `dir` (each served by its file name,
    /// read from disk per request).
    pub fn serve_dir(dir: &Path) -> io::Result<RangeServer> {
        let s = RangeServer::start()?;
        for e in std::fs::read_dir(dir)? {
            let e = e?;
            if e.file_type()?.is_file() {
                if let Some(name) = e.file_name().to_str() {
                    s.handle.add_file(name, &e.path())?;
                }
            }
        }
        Ok(s)
    }

    /// The shared handle (content, faults, counters).
    pub fn handle(&self) -> &ServerHandle {
        &self.handle
    }

    /// `http://127.0.0.1:PORT/NAME`.
    pub fn url(&self, name: &str) -> String {
        self.handle.url(name)
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.handle.addr
    }
}

impl std::ops::Deref for RangeServer {
    type Target = ServerHandle;
    fn deref(&self) -> &ServerHandle {
        &self.handle
    }
}

impl Drop for RangeServer {
    /// Stop accepting, close every open connection (hanging ones too) and join the
    /// accepting thread; connection threads end on their closed sockets.
    fn drop(&mut self) {
        let sh = &self.handle.shared;
        sh.stop.store(true, Ordering::SeqCst);
        // Wake the blocking accept.
        let _ = TcpStream::connect_timeout(&self.handle.addr, Duration::from_secs(1));
        for c in lock(&sh.conns).drain(..) {
            let _ = c.shutdown(Shutdown::Both);
        }
        if let Some(j) = self.accept.take() {
            let _ = j.join();
        }
    }
}

impl ServerHandle {
    /// `http://127.0.0.1:PORT/NAME`.
    pub fn url(&self, name: &str) -> String {
        format!("http://{}/{}", self.addr, name.trim_start_matches('/'))
    }

    fn next_etag(&self, len: u64) -> String {
        let g = self.shared.generation.fetch_add(1, Ordering::SeqCst);
        format!("\"mq{g:x}-{len:x}\"")
    }

    /// Serve `bytes` as `name` (replacing what was there, with a new ETag).
    pub fn add(&self, name: &str, bytes: Vec<u8>) {
        let etag = self.next_etag(bytes.len() as u64);
        let e = Entry { body: Body::Memory(Arc::new(bytes)), etag, modified: SystemTime::now() };
        lock(&self.shared.entries).insert(name.trim_start_matches('/').to_string(), e);
    }

    /// Serve the file at `path` as `name`, read from disk per request (its length and
    /// modification time taken now).
    pub fn add_file(&self, name: &str, path: &Path) -> io::Result<()> {
        let m = std::fs::metadata(path)?;
        let etag = self.next_etag(m.len());
        let e = Entry { body: Body::File(Arc::new(path.to_path_buf()), m.len()), etag, modified: m.modified().unwrap_or_else(|_| SystemTime::now()) };
        lock(&self.shared.entries).insert(name.trim_start_matches('/').to_string(), e);
        Ok(())
    }

    /// The current strong ETag of `name` (with its quotes).
    pub fn etag(&self, name: &str) -> Option<String> {
        lock(&self.shared.entries).get(name.trim_start_matches('/')).map(|e| e.etag.clone())
    }

    /// The current content of `name` (read from disk for a file entry).
    pub fn content(&self, name: &str) -> io::Result<Vec<u8>> {
        let e = lock(&self.shared.entries).get(name.trim_start_matches('/')).cloned();
        match e.map(|e| e.body) {
            Some(Body::Memory(b)) => Ok(b.to_vec()),
            Some(Body::File(p, _)) => std::fs::read(&*p),
            None => Err(io::Error::new(io::ErrorKind::NotFound, name.to_string())),
        }
    }

    /// Replace every fault knob at once.
    pub fn set_faults(&self, f: Faults) {
        *lock(&self.shared.faults) = f;
    }

    /// The fault knobs now.
    pub fn faults(&self) -> Faults {
        lock(&self.shared.faults).clone()
    }

    /// Sleep `ms` milliseconds before answering each request.
    pub fn set_latency_ms(&self, ms: u64) {
        lock(&self.shared.faults).latency = Duration::from_millis(ms);
    }

    /// Ignore `Range` headers (200 with the whole body).
    pub fn set_no_range(&self, on: bool) {
        lock(&self.shared.faults).no_range = on;
    }

    /// Answer `status` for every request of `name` (`None`: serve it again).
    pub fn set_status_for(&self, name: &str, status: Option<u16>) {
        let mut f = lock(&self.shared.faults);
        let k = name.trim_start_matches('/').to_string();
        match status {
            Some(s) => f.status_for.insert(k, s),
            None => f.status_for.remove(&k),
        };
    }

    /// Answer 503 to the next `n` requests.
    pub fn fail_next(&self, n: u64) {
        lock(&self.shared.faults).fail_next = n;
    }

    /// Read requests and never answer (`false`: answer again; connections already hanging
    /// stay so until closed).
    pub fn set_hang(&self, on: bool) {
        lock(&self.shared.faults).hang = on;
    }

    /// After `n` more requests for `name` have been answered, replace its content with
    /// `bytes` (a new ETag and Last-Modified): a file changed while a reader reads it.
    pub fn replace_after(&self, name: &str, n: u64, bytes: Vec<u8>) {
        let k = name.trim_start_matches('/').to_string();
        if n == 0 {
            self.add(&k, bytes);
            return;
        }
        lock(&self.shared.pending).replace.insert(k, (n, Arc::new(bytes)));
    }

    /// The counters.
    pub fn stats(&self) -> Stats {
        lock(&self.shared.stats).clone()
    }

    /// The counters of one name (zero when never asked for).
    pub fn path_stats(&self, name: &str) -> PathStats {
        lock(&self.shared.stats).per_path.get(name.trim_start_matches('/')).copied().unwrap_or_default()
    }

    /// Every request answered since the start or the last reset, in order of answer.
    pub fn log(&self) -> Vec<LogLine> {
        lock(&self.shared.log).clone()
    }

    /// Zero the counters and clear the log.
    pub fn reset_stats(&self) {
        *lock(&self.shared.stats) = Stats::default();
        lock(&self.shared.log).clear();
    }
}

fn accept_loop(listener: TcpListener, sh: Arc<Shared>) {
    for conn in listener.incoming() {
        if sh.stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(conn) = conn else { continue };
        let _ = conn.set_nodelay(true);
        if let Ok(c) = conn.try_clone() {
            let mut all = lock(&sh.conns);
            // Forget connections that are gone (their peer address is no longer readable).
            all.retain(|c| c.peer_addr().is_ok());
            all.push(c);
        }
        let s = Arc::clone(&sh);
        let _ = std::thread::Builder::new().name("range-server-conn".into()).spawn(move || {
            let _ = serve_connection(conn, &s);
        });
    }
}

/// A parsed request head.
struct Request {
    method: String,
    target: String,
    http10: bool,
    headers: Vec<(String, String)>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    fn wants_close(&self) -> bool {
        match self.header("connection") {
            Some(v) if v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close")) => true,
            Some(v) if v.split(',').any(|t| t.trim().eq_ignore_ascii_case("keep-alive")) => false,
            _ => self.http10,
        }
    }
}

/// Read one request head; `Ok(None)` on a clean end of the connection.
fn read_head(r: &mut BufReader<TcpStream>) -> io::Result<Option<std::result::Result<Request, u16>>> {
    let mut head = Vec::new();
    loop {
        let mut line = Vec::new();
        let n = r.by_ref().take((MAX_HEAD_BYTES + 1 - head.len().min(MAX_HEAD_BYTES)) as u64).read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(if head.is_empty() { None } else { Some(Err(400)) });
        }
        if head.len() + line.len() > MAX_HEAD_BYTES {
            return Ok(Some(Err(431)));
        }
        let blank = line == b"\r\n" || line == b"\n";
        if blank && head.is_empty() {
            continue; // RFC 9112 §2.2: ignore empty lines before the request line.
        }
        head.extend_from_slice(&line);
        if blank {
            break;
        }
    }
    let Ok(text) = String::from_utf8(head) else { return Ok(Some(Err(400))) };
    let mut lines = text.lines();
    let Some(start) = lines.next() else { return Ok(Some(Err(400))) };
    let parts: Vec<&str> = start.split_whitespace().collect();
    let [method, target, version] = parts[..] else { return Ok(Some(Err(400))) };
    if !version.starts_with("HTTP/1.") {
        return Ok(Some(Err(505)));
    }
    let mut headers = Vec::new();
    for l in lines {
        if l.is_empty() {
            break;
        }
        let Some((k, v)) = l.split_once(':') else { return Ok(Some(Err(400))) };
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    Ok(Some(Ok(Request { method: method.to_string(), target: target.to_string(), http10: version == "HTTP/1.0", headers })))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The name a request target asks for: path only, no leading `/`, percent-decoded.
fn name_of(target: &str) -> String {
    let path = target.split(['?', '#']).next().unwrap_or("");
    // An absolute-form target (`http://host/path`) as proxies send it.
    let path = match path.find("://") {
        Some(i) => path[i + 3..].find('/').map_or("", |j| &path[i + 3 + j..]),
        None => path,
    };
    percent_decode(path.trim_start_matches('/'))
}

/// What a `Range` header asks of a body of `len` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeAnswer {
    /// No usable range (absent, invalid or several): the whole body, 200.
    Whole,
    /// Bytes `start..=end`, 206.
    Part(u64, u64),
    /// Not satisfiable, 416.
    Unsatisfiable,
}

/// Interpret `Range: bytes=…` for a body of `len` bytes (one range; see the module doc).
pub fn parse_range(h: &str, len: u64) -> RangeAnswer {
    let Some(spec) = h.trim().strip_prefix("bytes=") else { return RangeAnswer::Whole };
    if spec.contains(',') {
        return RangeAnswer::Whole;
    }
    let Some((a, b)) = spec.trim().split_once('-') else { return RangeAnswer::Whole };
    let (a, b) = (a.trim(), b.trim());
    let num = |s: &str| if !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()) { s.parse::<u64>().ok() } else { None };
    if a.is_empty() {
        // Suffix: the last N bytes.
        return match num(b) {
            None => RangeAnswer::Whole,
            Some(0) => RangeAnswer::Unsatisfiable,
            Some(_) if len == 0 => RangeAnswer::Unsatisfiable,
            Some(n) => RangeAnswer::Part(len.saturating_sub(n), len - 1),
        };
    }
    let Some(start) = num(a) else { return RangeAnswer::Whole };
    let end = if b.is_empty() {
        u64::MAX
    } else {
        match num(b) {
            Some(e) if e >= start => e,
            _ => return RangeAnswer::Whole,
        }
    };
    if start >= len {
        return RangeAnswer::Unsatisfiable;
    }
    RangeAnswer::Part(start, end.min(len - 1))
}

/// `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110 §5.6.7) of `t`.
pub fn http_date(t: SystemTime) -> String {
    let secs = t.duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    const WD: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MO: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    format!(
        "{}, {:02} {} {} {:02}:{:02}:{:02} GMT",
        WD[(days % 7) as usize],
        d,
        MO[(m - 1) as usize],
        y,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        206 => "Partial Content",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        412 => "Precondition Failed",
        416 => "Range Not Satisfiable",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "Status",
    }
}

/// Count a request and its body bytes, log it, and apply a pending replacement of `name`.
fn account(sh: &Shared, req: &Request, name: &str, status: u16, body_bytes: u64) {
    {
        let mut s = lock(&sh.stats);
        s.requests += 1;
        s.body_bytes += body_bytes;
        let p = s.per_path.entry(name.to_string()).or_default();
        p.requests += 1;
        p.body_bytes += body_bytes;
    }
    lock(&sh.log).push(LogLine { method: req.method.clone(), path: name.to_string(), range: req.header("range").map(str::to_string), status, body_bytes });
    let swap = {
        let mut p = lock(&sh.pending);
        match p.replace.get_mut(name) {
            Some((left, _)) if *left <= 1 => p.replace.remove(name).map(|(_, b)| b),
            Some((left, _)) => {
                *left -= 1;
                None
            }
            None => None,
        }
    };
    if let Some(bytes) = swap {
        let g = sh.generation.fetch_add(1, Ordering::SeqCst);
        let e = Entry { etag: format!("\"mq{g:x}-{:x}\"", bytes.len()), body: Body::Memory(bytes), modified: SystemTime::now() };
        lock(&sh.entries).insert(name.to_string(), e);
    }
}

/// A response ready to be written: counted before it is written, so that a client that has
/// read it finds it in the counters.
struct Prepared {
    status: u16,
    head: String,
    body: Option<(Body, u64, u64)>,
}

impl Prepared {
    fn body_len(&self) -> u64 {
        self.body.as_ref().map_or(0, |(_, a, b)| b - a)
    }
}

/// A status with a short text body (`STATUS REASON\n`).
fn simple(status: u16, extra: &str, close: bool, head_only: bool) -> Prepared {
    let text = format!("{status} {}\n", reason(status));
    let head = format!(
        "HTTP/1.1 {status} {}\r\nDate: {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n{extra}{}\r\n",
        reason(status),
        http_date(SystemTime::now()),
        text.len(),
        if close { "Connection: close\r\n" } else { "" }
    );
    let n = text.len() as u64;
    let body = (!head_only).then(|| (Body::Memory(Arc::new(text.into_bytes())), 0, n));
    Prepared { status, head, body }
}

fn write_prepared(w: &mut TcpStream, p: &Prepared) -> io::Result<()> {
    w.write_all(p.head.as_bytes())?;
    match &p.body {
        None => {}
        Some((Body::Memory(b), start, end)) => w.write_all(&b[*start as usize..*end as usize])?,
        Some((Body::File(path, _), start, end)) => {
            let f = File::open(&**path)?;
            let mut buf = vec![0u8; FILE_BLOCK];
            let mut at = *start;
            while at < *end {
                let n = ((end - at) as usize).min(FILE_BLOCK);
                f.read_exact_at(&mut buf[..n], at)?;
                w.write_all(&buf[..n])?;
                at += n as u64;
            }
        }
    }
    w.flush()
}

fn serve_connection(conn: TcpStream, sh: &Shared) -> io::Result<()> {
    let mut w = conn.try_clone()?;
    let mut r = BufReader::new(conn);
    loop {
        let req = match read_head(&mut r)? {
            None => return Ok(()),
            Some(Err(status)) => {
                write_prepared(&mut w, &simple(status, "", true, false))?;
                return Ok(());
            }
            Some(Ok(req)) => req,
        };
        if sh.stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        // A request body (not expected with GET/HEAD) is read and dropped.
        if let Some(n) = req.header("content-length").and_then(|v| v.parse::<u64>().ok()) {
            io::copy(&mut r.by_ref().take(n), &mut io::sink())?;
        }
        let name = name_of(&req.target);
        let faults = {
            let mut f = lock(&sh.faults);
            let snapshot = f.clone();
            if f.fail_next > 0 {
                f.fail_next -= 1;
            }
            snapshot
        };
        if faults.hang {
            account(sh, &req, &name, 0, 0);
            // Hold the connection until the client or the server closes it.
            let mut sink = [0u8; 1024];
            loop {
                match r.read(&mut sink) {
                    Ok(0) | Err(_) => return Ok(()),
                    Ok(_) => {}
                }
            }
        }
        if !faults.latency.is_zero() {
            std::thread::sleep(faults.latency);
        }
        let close = req.wants_close();
        let head_only = req.method == "HEAD";
        let status_fault = if faults.fail_next > 0 { Some(503) } else { faults.status_for.get(&name).copied() };
        let p = if req.method != "GET" && req.method != "HEAD" {
            simple(405, "Allow: GET, HEAD\r\n", close, false)
        } else if let Some(s) = status_fault {
            simple(s, "", close, head_only)
        } else {
            let entry = lock(&sh.entries).get(&name).cloned();
            match entry {
                None => simple(404, "", close, head_only),
                Some(e) => answer(&req, e, &faults, close, head_only),
            }
        };
        account(sh, &req, &name, p.status, p.body_len());
        write_prepared(&mut w, &p)?;
        if close {
            let _ = w.shutdown(Shutdown::Write);
            return Ok(());
        }
    }
}

/// The answer to GET/HEAD of an existing entry.
fn answer(req: &Request, e: Entry, faults: &Faults, close: bool, head_only: bool) -> Prepared {
    let len = e.body.len();
    let validators = format!("ETag: {}\r\nLast-Modified: {}\r\n", e.etag, http_date(e.modified));
    if !faults.no_range {
        if let Some(im) = req.header("if-match") {
            if !im.split(',').map(str::trim).any(|t| t == "*" || t == e.etag) {
                return simple(412, &validators, close, head_only);
            }
        }
    }
    let range = match req.header("range") {
        Some(h) if !faults.no_range => parse_range(h, len),
        _ => RangeAnswer::Whole,
    };
    let conn = if close { "Connection: close\r\n" } else { "" };
    let accept = if faults.no_range { "" } else { "Accept-Ranges: bytes\r\n" };
    let (status, start, end_excl, extra) = match range {
        RangeAnswer::Unsatisfiable => return simple(416, &format!("Content-Range: bytes */{len}\r\n{accept}{validators}"), close, head_only),
        RangeAnswer::Whole => (200, 0, len, String::new()),
        RangeAnswer::Part(a, b) => (206, a, b + 1, format!("Content-Range: bytes {a}-{b}/{len}\r\n")),
    };
    let head = format!(
        "HTTP/1.1 {status} {}\r\nDate: {}\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\n{extra}{accept}{validators}{conn}\r\n",
        reason(status),
        http_date(SystemTime::now()),
        end_excl - start
    );
    Prepared { status, head, body: (!head_only).then_some((e.body, start, end_excl)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-9", 100), RangeAnswer::Part(0, 9));
        assert_eq!(parse_range("bytes=90-200", 100), RangeAnswer::Part(90, 99));
        assert_eq!(parse_range("bytes=10-", 100), RangeAnswer::Part(10, 99));
        assert_eq!(parse_range("bytes=-10", 100), RangeAnswer::Part(90, 99));
        assert_eq!(parse_range("bytes=-1000", 100), RangeAnswer::Part(0, 99));
        assert_eq!(parse_range("bytes=100-", 100), RangeAnswer::Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 100), RangeAnswer::Unsatisfiable);
        assert_eq!(parse_range("bytes=0-0", 0), RangeAnswer::Unsatisfiable);
        assert_eq!(parse_range("bytes=5-1", 100), RangeAnswer::Whole);
        assert_eq!(parse_range("bytes=0-1,5-6", 100), RangeAnswer::Whole);
        assert_eq!(parse_range("items=0-1", 100), RangeAnswer::Whole);
        assert_eq!(parse_range("bytes=x-1", 100), RangeAnswer::Whole);
    }

    #[test]
    fn dates() {
        assert_eq!(http_date(UNIX_EPOCH + Duration::from_secs(784_111_777)), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(http_date(UNIX_EPOCH), "Thu, 01 Jan 1970 00:00:00 GMT");
        assert_eq!(http_date(UNIX_EPOCH + Duration::from_secs(951_782_400)), "Tue, 29 Feb 2000 00:00:00 GMT");
    }

    #[test]
    fn names() {
        assert_eq!(name_of("/a%20b.h5?x=1"), "a b.h5");
        assert_eq!(name_of("http://h:1/dir/f.h5"), "dir/f.h5");
        assert_eq!(name_of("/bad%zz"), "bad%zz");
        assert_eq!(name_of("/end%2"), "end%2");
    }
}

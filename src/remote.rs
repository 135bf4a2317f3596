//! Files on a web server or in object storage (issue #34): the byte source of the
//! byte-range read path (`src/h5/pure.rs`) for `http(s)://`, `s3://`, `gs://`, `az://`
//! and `file://` URLs.
//!
//! A [`RemoteFile`] is opened with one request (the first bytes, whose answer tells the
//! object's size and ETag) and then answers the HDF5 parser's reads from a block cache: a read is rounded out
//! to whole blocks ([`RemoteOptions::block_size`]), the blocks not held yet are fetched as
//! few range requests (missing blocks at most [`RemoteOptions::merge_gap`] apart coalesced,
//! each request at most [`RemoteOptions::max_request_bytes`]), independent requests are in flight together (up
//! to [`RemoteOptions::concurrency`]), and the first [`RemoteOptions::first_read`] bytes —
//! the superblock and the metadata HDF5 keeps at the front of the file — are fetched at
//! open. [`RemoteFile::prefetch`] lets a reader that knows which ranges it will need (the
//! chunks of a query's candidates) fetch them all at once.
//!
//! The clients are the `object_store` crate's: credentials and endpoints from the
//! environment as its users expect (`AWS_*`, `GOOGLE_*`, `AZURE_*`), retries with
//! exponential backoff on 5xx answers and timeouts, and a timeout per request
//! ([`RemoteOptions::timeout`]). What can go wrong is a typed [`MarquetError::Remote`]
//! ([`RemoteErrorKind`]): 404, 401/403, 416, a server that ignores `Range` (it answers
//! 200 with the whole object), an object that changed while it was read (its ETag or size
//! differs from what the open saw), a timeout after the retries. Never a hang (every
//! request has a timeout), never a wrong answer (every block is checked against the
//! ETag and size of the open).
#![forbid(unsafe_code)]

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryFutureExt, TryStreamExt};
use hdf5_reader::storage::{Storage, StorageBuffer};
use object_store::path::Path as ObjPath;
use object_store::{BackoffConfig, ClientOptions, GetOptions, GetRange, ObjectStore, RetryConfig};

use crate::error::{MarquetError, RemoteErrorKind, Result};

/// URL schemes read by [`RemoteFile`].
pub const SCHEMES: [&str; 10] = ["http", "https", "s3", "s3a", "gs", "az", "abfs", "abfss", "azure", "file"];

/// Whether `s` names a file by URL (`scheme://…` with a scheme of [`SCHEMES`]) rather than
/// a local path.
pub fn is_url(s: &str) -> bool {
    s.split_once("://").is_some_and(|(scheme, _)| SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()))
}

/// How a [`RemoteFile`] reads (see the module documentation). The defaults are chosen by
/// measurement (docs/PERFORMANCE.md, "Over HTTP").
#[derive(Debug, Clone)]
pub struct RemoteOptions {
    /// Longest wait for one request (connect and answer), then it is retried.
    pub timeout: Duration,
    /// Retries of a request that failed with a 5xx answer, a timeout or a broken connection.
    pub retries: usize,
    /// Reads are rounded out to blocks of this many bytes, the unit of the cache.
    pub block_size: u64,
    /// Bytes read from the start of the file at open (the superblock and front metadata).
    pub first_read: u64,
    /// Longest single range request; longer runs of missing blocks are split.
    pub max_request_bytes: u64,
    /// Missing blocks fetched in the same round are joined into one request when at most
    /// this many bytes lie between them (fetched too, and kept): fewer requests for a few
    /// more bytes, as FlatGeobuf's reader joins ranges (it allows 256 KiB).
    pub merge_gap: u64,
    /// Range requests in flight together.
    pub concurrency: usize,
    /// Bytes of blocks kept; the oldest are dropped past it.
    pub cache_bytes: u64,
    /// A file opened through libhdf5 (`File::open` of a URL: `info`, `dump`, `validate`,
    /// `convert`, attribute filters, Python) is read by range (`h5::range_driver`: each
    /// object and chunk libhdf5 asks for) when it is in the cloud layout (2 requests for
    /// `marquet info`, 5 for a dump of a few rows) or at least this many bytes; a smaller
    /// file of another layout is fetched whole into memory, in concurrent requests:
    /// libhdf5 reads chunk indexes one node at a time (258 requests for `marquet info` of a
    /// 413 MB polygon table of the default layout), so over a network the whole object is
    /// often as quick, until it is too large to hold in memory. Default 1 GiB, or the
    /// environment's `MARQUET_REMOTE_WHOLE_BELOW` (bytes).
    pub whole_below: u64,
    /// Settings of the store, over those of the environment: the names of the
    /// `object_store` crate's configuration keys or of the environment variables that set
    /// them, any case (`aws_endpoint`, `AWS_ACCESS_KEY_ID`, `google_service_account`,
    /// `azure_storage_account_name`, …; an unknown name is an error). HTTP(S) and `file://`
    /// take none.
    pub store_options: Vec<(String, String)>,
}

impl Default for RemoteOptions {
    fn default() -> Self {
        RemoteOptions {
            timeout: Duration::from_secs(30),
            retries: 4,
            block_size: 1 << 10,
            first_read: crate::marquet::cloud::FIRST_READ,
            max_request_bytes: 8 << 20,
            merge_gap: 64 << 10,
            concurrency: 16,
            cache_bytes: 256 << 20,
            whole_below: std::env::var("MARQUET_REMOTE_WHOLE_BELOW").ok().and_then(|v| v.trim().parse().ok()).unwrap_or(1 << 30),
            store_options: Vec::new(),
        }
    }
}

/// What a [`RemoteFile`] has fetched so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RemoteStats {
    /// Requests made (the metadata request of the open and every range request; retries
    /// inside the client not counted).
    pub requests: u64,
    /// Bytes of object data received.
    pub bytes_fetched: u64,
}

/// The blocks held, dropped oldest first past the budget.
#[derive(Default)]
struct Blocks {
    map: HashMap<u64, Bytes>,
    order: VecDeque<u64>,
    bytes: u64,
}

/// A file read by range from a web server or object store (see the module documentation).
pub struct RemoteFile {
    url: String,
    store: Arc<dyn ObjectStore>,
    path: ObjPath,
    rt: tokio::runtime::Runtime,
    len: u64,
    etag: Option<String>,
    opts: RemoteOptions,
    blocks: Mutex<Blocks>,
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl std::fmt::Debug for RemoteFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteFile").field("url", &self.url).field("len", &self.len).field("etag", &self.etag).finish()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn remote(url: &str, kind: RemoteErrorKind, message: impl Into<String>) -> MarquetError {
    MarquetError::Remote { url: url.to_string(), kind, message: message.into() }
}

/// Whether the store's message tells of a request that got no answer in time (the
/// client's own retry settings, `retry_timeout`, are named in every message: not that).
fn is_timeout(text: &str) -> bool {
    let t = text.to_ascii_lowercase().replace("retry_timeout", "");
    t.contains("timed out") || t.contains("timeout")
}

/// The store's error as a typed one: HTTP statuses and the client's own failures.
fn store_error(url: &str, e: object_store::Error) -> MarquetError {
    use object_store::Error as E;
    let text = e.to_string();
    // The causes too: a timeout is named only deep in the chain ("operation timed out").
    let mut chain = text.clone();
    let mut cause = std::error::Error::source(&e);
    while let Some(c) = cause {
        chain.push_str(": ");
        chain.push_str(&c.to_string());
        cause = c.source();
    }
    let kind = match &e {
        E::NotFound { .. } => RemoteErrorKind::NotFound,
        E::PermissionDenied { .. } | E::Unauthenticated { .. } => RemoteErrorKind::Forbidden,
        E::Precondition { .. } => RemoteErrorKind::Changed,
        _ if text.contains("non-partial response") || text.contains("Range request not supported") => RemoteErrorKind::NoRangeSupport,
        _ if text.contains("416") || text.contains("Range Not Satisfiable") => RemoteErrorKind::RangeNotSatisfiable,
        _ if is_timeout(&chain) => RemoteErrorKind::Timeout,
        _ => RemoteErrorKind::Other,
    };
    let message = match kind {
        RemoteErrorKind::NotFound => format!("no such object (404): {text}"),
        RemoteErrorKind::Forbidden => format!("access refused (401/403; credentials come from the environment): {text}"),
        RemoteErrorKind::NoRangeSupport => "the server does not serve byte ranges (it answered a range request with the whole object); reading part of a file needs them".to_string(),
        RemoteErrorKind::RangeNotSatisfiable => format!("a byte range past the end of the object (416): it is shorter than when it was opened: {text}"),
        RemoteErrorKind::Changed => format!("the object changed while it was read: {text}"),
        RemoteErrorKind::Timeout => format!("no answer in time, after the retries: {chain}"),
        _ => text,
    };
    remote(url, kind, message)
}

thread_local! {
    /// The typed error of the last failed read on this thread: the HDF5 parser sees only
    /// its own error type, so [`take_last_error`] hands the typed one back to the caller.
    static LAST_ERROR: std::cell::RefCell<Option<MarquetError>> = const { std::cell::RefCell::new(None) };
}

/// The typed error of the last read that failed on this thread, if any (taken).
pub(crate) fn take_last_error() -> Option<MarquetError> {
    LAST_ERROR.with(|e| e.borrow_mut().take())
}

/// `builder` with [`RemoteOptions::store_options`] set, each name parsed as the store's
/// configuration key (`object_store` names them as the environment does, in lower case).
fn configured<B, K: std::str::FromStr>(mut builder: B, opts: &RemoteOptions, url: &str, set: impl Fn(B, K, String) -> B) -> Result<B> {
    for (k, v) in &opts.store_options {
        let key = k.to_ascii_lowercase().parse::<K>().map_err(|_| MarquetError::InvalidArgument(format!("{url}: unknown store setting {k:?}")))?;
        builder = set(builder, key, v.clone());
    }
    Ok(builder)
}

/// Which store serves `url`, and the object's path in it.
fn store_for(url: &url::Url, opts: &RemoteOptions) -> Result<(Arc<dyn ObjectStore>, ObjPath)> {
    let s = url.as_str();
    let bad = |m: String| remote(s, RemoteErrorKind::InvalidUrl, m);
    let client = ClientOptions::new().with_timeout(opts.timeout).with_connect_timeout(opts.timeout).with_allow_http(true);
    let retry = RetryConfig {
        backoff: BackoffConfig { init_backoff: Duration::from_millis(50), max_backoff: Duration::from_secs(2), base: 2.0 },
        max_retries: opts.retries,
        retry_timeout: opts.timeout.saturating_mul(opts.retries as u32 + 1),
    };
    let obj_path = |p: &str| ObjPath::from_url_path(p).map_err(|e| bad(format!("object path: {e}")));
    let scheme = url.scheme().to_ascii_lowercase();
    let built: std::result::Result<Arc<dyn ObjectStore>, object_store::Error> = match scheme.as_str() {
        "http" | "https" => {
            let host = url.host_str().ok_or_else(|| bad("no host".into()))?;
            let base = match url.port() {
                Some(p) => format!("{scheme}://{host}:{p}"),
                None => format!("{scheme}://{host}"),
            };
            let path = obj_path(url.path())?;
            return object_store::http::HttpBuilder::new()
                .with_url(base)
                .with_client_options(client)
                .with_retry(retry)
                .build()
                .map(|st| (Arc::new(st) as Arc<dyn ObjectStore>, path))
                .map_err(|e| store_error(s, e));
        }
        "s3" | "s3a" => configured(object_store::aws::AmazonS3Builder::from_env(), opts, s, |b, k: object_store::aws::AmazonS3ConfigKey, v| b.with_config(k, v))?
            .with_url(s)
            .with_client_options(client)
            .with_retry(retry)
            .build()
            .map(|st| Arc::new(st) as Arc<dyn ObjectStore>),
        "gs" => configured(object_store::gcp::GoogleCloudStorageBuilder::from_env(), opts, s, |b, k: object_store::gcp::GoogleConfigKey, v| b.with_config(k, v))?
            .with_url(s)
            .with_client_options(client)
            .with_retry(retry)
            .build()
            .map(|st| Arc::new(st) as Arc<dyn ObjectStore>),
        "az" | "abfs" | "abfss" | "azure" => configured(object_store::azure::MicrosoftAzureBuilder::from_env(), opts, s, |b, k: object_store::azure::AzureConfigKey, v| b.with_config(k, v))?
            .with_url(s)
            .with_client_options(client)
            .with_retry(retry)
            .build()
            .map(|st| Arc::new(st) as Arc<dyn ObjectStore>),
        "file" => {
            let p = url.to_file_path().map_err(|_| bad("not a local file path".into()))?;
            let path = ObjPath::from_absolute_path(&p).map_err(|e| bad(format!("object path: {e}")))?;
            return Ok((Arc::new(object_store::local::LocalFileSystem::new()), path));
        }
        other => return Err(bad(format!("scheme {other}:// is not read (read: {})", SCHEMES.join(", ")))),
    };
    let store = built.map_err(|e| store_error(s, e))?;
    Ok((store, obj_path(url.path())?))
}

impl RemoteFile {
    /// Open the object at `url` with the default options.
    pub fn open(url: &str) -> Result<Arc<RemoteFile>> {
        RemoteFile::open_with(url, &RemoteOptions::default())
    }

    /// Open the object at `url`: one metadata request (size and ETag), then the first
    /// [`RemoteOptions::first_read`] bytes.
    pub fn open_with(url: &str, opts: &RemoteOptions) -> Result<Arc<RemoteFile>> {
        let parsed = url::Url::parse(url).map_err(|e| remote(url, RemoteErrorKind::InvalidUrl, format!("not a URL: {e}")))?;
        if opts.block_size == 0 || opts.concurrency == 0 {
            return Err(MarquetError::InvalidArgument("remote reads need a block size and a concurrency of at least 1".into()));
        }
        let (store, path) = store_for(&parsed, opts)?;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| MarquetError::Io { path: url.to_string(), source: e })?;
        // One request opens the file: the first bytes, whose answer also tells the object's
        // size (Content-Range) and ETag (no HEAD before it).
        let first = opts.first_read.max(1).div_ceil(opts.block_size) * opts.block_size;
        let get = GetOptions { range: Some(GetRange::Bounded(0..first)), ..Default::default() };
        let (meta, bytes) = rt
            .block_on(async {
                let r = store.get_opts(&path, get).await?;
                let meta = r.meta.clone();
                Ok::<_, object_store::Error>((meta, r.bytes().await?))
            })
            .map_err(|e| store_error(url, e))?;
        if bytes.len() as u64 != first.min(meta.size) {
            return Err(remote(url, RemoteErrorKind::Other, format!("{} bytes for the range 0..{first} of {} bytes", bytes.len(), meta.size)));
        }
        let f = RemoteFile {
            url: url.to_string(),
            store,
            path,
            rt,
            len: meta.size,
            etag: meta.e_tag,
            opts: opts.clone(),
            blocks: Mutex::default(),
            requests: AtomicU64::new(1),
            bytes: AtomicU64::new(bytes.len() as u64),
        };
        {
            let mut held = lock(&f.blocks);
            let bs = opts.block_size as usize;
            for (i, lo) in (0..bytes.len()).step_by(bs).enumerate() {
                f.keep(&mut held, i as u64, bytes.slice(lo..(lo + bs).min(bytes.len())));
            }
        }
        Ok(Arc::new(f))
    }

    /// The URL the file was opened with.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The options it reads with.
    pub fn options(&self) -> &RemoteOptions {
        &self.opts
    }

    /// The object's size in bytes when it was opened.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the object is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Requests and bytes so far.
    pub fn stats(&self) -> RemoteStats {
        RemoteStats { requests: self.requests.load(Ordering::Relaxed), bytes_fetched: self.bytes.load(Ordering::Relaxed) }
    }

    /// Fetch every block of the byte ranges `(offset, length)` not held yet, with as few
    /// requests as the blocks allow, in flight together.
    pub fn prefetch(&self, ranges: &[(u64, u64)]) -> Result<()> {
        let bs = self.opts.block_size;
        let mut want: Vec<u64> = Vec::new();
        {
            let held = lock(&self.blocks);
            for &(off, len) in ranges {
                if len == 0 {
                    continue;
                }
                let end = off.checked_add(len).filter(|&e| e <= self.len).ok_or_else(|| {
                    remote(&self.url, RemoteErrorKind::RangeNotSatisfiable, format!("bytes {off}+{len} past the end of the object ({} bytes)", self.len))
                })?;
                want.extend((off / bs..=(end - 1) / bs).filter(|b| !held.map.contains_key(b)));
            }
        }
        want.sort_unstable();
        want.dedup();
        if want.is_empty() {
            return Ok(());
        }
        // Runs of blocks no more than `merge_gap` apart (the blocks between fetched too),
        // each at most `max_request_bytes` long.
        let per_request = (self.opts.max_request_bytes / bs).max(1);
        let gap = self.opts.merge_gap / bs;
        let mut runs: Vec<(u64, u64)> = Vec::new();
        for b in want {
            match runs.last_mut() {
                Some((first, n)) if b - (*first + *n) <= gap && b + 1 - *first <= per_request => *n = b + 1 - *first,
                _ => runs.push((b, 1)),
            }
        }
        let fetched: Vec<(u64, u64, Bytes)> = self.rt.block_on(
            futures::stream::iter(runs.into_iter().map(|(first, n)| self.fetch(first * bs, ((first + n) * bs).min(self.len)).map_ok(move |b| (first, n, b))))
                .buffer_unordered(self.opts.concurrency)
                .try_collect(),
        )?;
        let mut held = lock(&self.blocks);
        for (first, n, bytes) in fetched {
            for i in 0..n {
                let lo = (i * bs) as usize;
                let hi = (((i + 1) * bs) as usize).min(bytes.len());
                self.keep(&mut held, first + i, bytes.slice(lo..hi));
            }
        }
        Ok(())
    }

    fn keep(&self, held: &mut Blocks, block: u64, bytes: Bytes) {
        held.bytes += bytes.len() as u64;
        // A block between two wanted ones (`merge_gap`) may be held already: replaced.
        match held.map.insert(block, bytes) {
            Some(old) => held.bytes -= old.len() as u64,
            None => held.order.push_back(block),
        }
        while held.bytes > self.opts.cache_bytes && held.order.len() > 1 {
            if let Some(old) = held.order.pop_front() {
                if let Some(b) = held.map.remove(&old) {
                    held.bytes -= b.len() as u64;
                }
            }
        }
    }

    /// One range request for bytes `lo..hi`, checked against the object the open saw.
    async fn fetch(&self, lo: u64, hi: u64) -> Result<Bytes> {
        let n = self.requests.fetch_add(1, Ordering::Relaxed);
        // MARQUET_REMOTE_TRACE=1: every request on stderr (what a window costs, and why).
        if std::env::var_os("MARQUET_REMOTE_TRACE").is_some_and(|v| v == "1") {
            eprintln!("marquet remote: request {} bytes {lo}..{hi} ({} bytes) of {}", n + 1, hi - lo, self.url);
        }
        let opts = GetOptions { range: Some(GetRange::Bounded(lo..hi)), ..Default::default() };
        let r = self.store.get_opts(&self.path, opts).await.map_err(|e| store_error(&self.url, e))?;
        let changed = |what: String| remote(&self.url, RemoteErrorKind::Changed, format!("the object changed while it was read ({what})"));
        if r.meta.size != self.len {
            return Err(changed(format!("{} bytes, {} at open", r.meta.size, self.len)));
        }
        if let (Some(now), Some(then)) = (&r.meta.e_tag, &self.etag) {
            if now != then {
                return Err(changed(format!("ETag {now}, {then} at open")));
            }
        }
        let b = r.bytes().await.map_err(|e| store_error(&self.url, e))?;
        if b.len() as u64 != hi - lo {
            return Err(remote(&self.url, RemoteErrorKind::Other, format!("{} bytes for the range {lo}..{hi}", b.len())));
        }
        self.bytes.fetch_add(b.len() as u64, Ordering::Relaxed);
        Ok(b)
    }

    /// Whether bytes `offset..offset + len` are held in the cache (a read of them makes no
    /// request).
    pub(crate) fn holds(&self, offset: u64, len: u64) -> bool {
        let bs = self.opts.block_size;
        let held = lock(&self.blocks);
        len == 0 || offset.checked_add(len).is_some_and(|e| e <= self.len && (offset / bs..=(e - 1) / bs).all(|b| held.map.contains_key(&b)))
    }

    /// Bytes `offset..offset + len`, fetched as needed.
    pub fn read(&self, offset: u64, len: usize) -> Result<Vec<u8>> {
        let mut out = Vec::with_capacity(len);
        self.read_into(offset, len, &mut out)?;
        Ok(out)
    }

    fn read_into(&self, offset: u64, len: usize, out: &mut Vec<u8>) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        self.prefetch(&[(offset, len as u64)])?;
        let bs = self.opts.block_size;
        let end = offset + len as u64;
        let held = lock(&self.blocks);
        for b in offset / bs..=(end - 1) / bs {
            let bytes = match held.map.get(&b) {
                Some(x) => x.clone(),
                // Dropped by the cache budget since the prefetch (a read larger than the
                // budget): the range is fetched once more, directly, past the cache.
                None => {
                    drop(held);
                    out.clear();
                    out.extend_from_slice(&self.rt.block_on(self.fetch(offset, end))?);
                    return Ok(());
                }
            };
            let lo = (offset.max(b * bs) - b * bs) as usize;
            let hi = (end.min(b * bs + bytes.len() as u64) - b * bs) as usize;
            out.extend_from_slice(&bytes[lo..hi]);
        }
        Ok(())
    }

    /// The whole object (for the commands that read every byte anyway: dump, validate,
    /// convert), fetched in concurrent requests of at most `max_request_bytes`.
    pub fn read_all(&self) -> Result<Vec<u8>> {
        let step = self.opts.max_request_bytes.max(1);
        let parts: Vec<(u64, Bytes)> = self.rt.block_on(
            futures::stream::iter((0..self.len).step_by(step as usize).map(|lo| self.fetch(lo, (lo + step).min(self.len)).map_ok(move |b| (lo, b))))
                .buffer_unordered(self.opts.concurrency)
                .try_collect(),
        )?;
        let mut out = vec![0u8; self.len as usize];
        for (lo, b) in parts {
            out[lo as usize..lo as usize + b.len()].copy_from_slice(&b);
        }
        Ok(out)
    }
}

#[cfg(hdf5_1_14)]
impl crate::h5::RangeSource for RemoteFile {
    fn size(&self) -> u64 {
        self.len
    }

    fn holds(&self, offset: u64, len: u64) -> bool {
        RemoteFile::holds(self, offset, len)
    }

    fn fetch(&self, offset: u64, len: u64) -> Result<()> {
        self.prefetch(&[(offset, len)])
    }

    fn read_into(&self, offset: u64, out: &mut [u8]) -> Result<()> {
        let v = self.read(offset, out.len())?;
        out.copy_from_slice(&v);
        Ok(())
    }

    fn keep_error(&self, e: MarquetError) {
        LAST_ERROR.with(|l| *l.borrow_mut() = Some(e));
    }

    fn name(&self) -> &str {
        &self.url
    }
}

impl Storage for RemoteFile {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_range(&self, offset: u64, len: usize) -> hdf5_reader::error::Result<StorageBuffer> {
        if offset.checked_add(len as u64).is_none_or(|e| e > self.len) {
            return Err(hdf5_reader::error::Error::OffsetOutOfBounds(offset));
        }
        match self.read(offset, len) {
            Ok(v) => Ok(StorageBuffer::from_vec(v)),
            Err(e) => {
                let msg = e.to_string();
                LAST_ERROR.with(|l| *l.borrow_mut() = Some(e));
                Err(hdf5_reader::error::Error::Io(std::io::Error::other(msg)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        assert!(is_url("https://example.org/a.h5"));
        assert!(is_url("S3://bucket/key.h5"));
        assert!(is_url("file:///tmp/a.h5"));
        assert!(!is_url("/tmp/a.h5"));
        assert!(!is_url("a://b"));
        assert!(!is_url("lakes.h5"));
    }

    #[test]
    fn a_local_file_reads_by_block_as_it_lies() {
        let dir = std::env::temp_dir().join(format!("marquet-remote-unit-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("bytes.bin");
        let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let url = url::Url::from_file_path(&p).unwrap().to_string();
        let opts = RemoteOptions { block_size: 1000, first_read: 0, max_request_bytes: 3000, ..RemoteOptions::default() };
        let f = RemoteFile::open_with(&url, &opts).unwrap();
        assert_eq!(f.len(), 100_000);
        for (off, len) in [(0u64, 1usize), (999, 2), (12_345, 20_000), (99_999, 1), (0, 100_000)] {
            assert_eq!(f.read(off, len).unwrap(), &data[off as usize..off as usize + len], "{off}+{len}");
        }
        // The open (block 0), then runs of missing blocks, at most 3 a request: 1 (block 1),
        // 7 (blocks 12..=32), 1, then 4 (2..=11) and 22 (33..=98).
        assert_eq!(f.stats(), RemoteStats { requests: 1 + 1 + 7 + 1 + 4 + 22, bytes_fetched: 100_000 });
        assert!(f.read(99_999, 2).is_err());
        // A read larger than the cache's budget: answered all the same, without looping.
        let small = RemoteFile::open_with(&url, &RemoteOptions { cache_bytes: 2_000, ..opts.clone() }).unwrap();
        assert_eq!(small.read(1_234, 50_000).unwrap(), &data[1_234..51_234]);
        assert_eq!(f.read_all().unwrap(), data);
        let e = RemoteFile::open(&format!("{url}.missing")).unwrap_err();
        assert!(matches!(e, MarquetError::Remote { kind: RemoteErrorKind::NotFound, .. }), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! `trawl._trawl`: the Python face of the engine (docs/python.md). A thin layer: the
//! options are `trawl crawl`'s flags (`trawl::options`), the crawl is the library's
//! `Crawler`, the controls its `CrawlHandle`; what is Python's own is here:
//!
//! - [`Bridge`], the crawl's `Handler`: it hands fetched pages and crawl-log records
//!   to Python over channels, asks `accept_link` once per page's links (one GIL
//!   acquisition), and holds the shards' scheduling while the consumer is behind
//!   (`Handler::is_backlogged`), so no shard's event loop ever blocks on Python.
//! - [`Crawl`], [`PageStream`], [`OutcomeStream`] and [`Page`], the classes the
//!   package re-exports (`python/trawl/__init__.py`, stubs in `__init__.pyi`).
//!
//! Every wait (the crawl's end, the next page, a checkpoint) releases the GIL and
//! wakes every 100 ms to let Python run its signal handlers, so Ctrl-C stops the crawl
//! cleanly (a stop, the final checkpoint, then `KeyboardInterrupt`).

use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime};

use crossbeam_channel::{unbounded, Receiver, RecvTimeoutError, Sender};
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};

use trawl::crawllog::LogRecord;
use trawl::engine::{CrawlHandle, Crawler, Stats};
use trawl::http::{ResponseHead, SharedBytes};
use trawl::options::crawl::{command, CrawlPlan};
use trawl::{Handler, Page as EnginePage};

/// The engine's allocator, as in the `trawl` binary: a crawl allocates and frees many
/// small strings per page from several threads, and mimalloc's thread-local free
/// lists cost about half of glibc's malloc there (src/main.rs). It serves the Rust
/// allocations of this module only; the interpreter keeps its own.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Pages waiting for the Python consumer past which the shards start no new fetch
/// (those in flight still finish and queue: at most this plus the crawl's
/// concurrency wait, each as large as the fetch buffer it came from).
const PAGE_BACKLOG: usize = 64;

/// Crawl-log records waiting for the Python consumer past which new fetches wait.
const OUTCOME_BACKLOG: usize = 4096;

/// How often a wait wakes to run Python's signal handlers.
const TICK: Duration = Duration::from_millis(100);

/// Keyword names that are not options: the constructor's own arguments, and the
/// flags it sets itself (`out` holding a crawl resumes it).
const NOT_OPTIONS: [&str; 5] = ["seeds", "seed", "out", "config", "resume"];

/// A fetched response, taken out of the engine for Python at the least cost on the
/// shard: the head shared (its raw bytes, parsed again only if Python asks for the
/// headers), the links in one string (a line each), the body copied.
struct PageData {
    url: String,
    status: u16,
    head: SharedBytes,
    body: Vec<u8>,
    links: String,
    fetched_at: SystemTime,
    ip: Option<IpAddr>,
}

impl PageData {
    /// The header fields in order; values as Latin-1 text (HTTP's bytes, one char a
    /// byte).
    fn headers(&self) -> Vec<(String, String)> {
        ResponseHead::parse(&self.head)
            .map(|h| {
                h.headers
                    .into_iter()
                    .map(|(n, v)| (n, v.iter().map(|&b| char::from(b)).collect()))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The crawl's handler on the Python side.
struct Bridge {
    accept_link: Option<Py<PyAny>>,
    pages_tx: Sender<PageData>,
    pages_rx: Receiver<PageData>,
    outcomes_tx: Sender<Vec<u8>>,
    outcomes_rx: Receiver<Vec<u8>>,
    /// `pages()` was asked for: pages are queued (and not otherwise).
    want_pages: AtomicBool,
    /// `outcomes()` was asked for.
    want_outcomes: AtomicBool,
    hook_errors: AtomicU64,
}

impl Bridge {
    fn new(accept_link: Option<Py<PyAny>>) -> Self {
        let (pages_tx, pages_rx) = unbounded();
        let (outcomes_tx, outcomes_rx) = unbounded();
        Self {
            accept_link,
            pages_tx,
            pages_rx,
            outcomes_tx,
            outcomes_rx,
            want_pages: AtomicBool::new(false),
            want_outcomes: AtomicBool::new(false),
            hook_errors: AtomicU64::new(0),
        }
    }

    /// A hook raised: counted, logged with its traceback on the `trawl` logger, and
    /// the link kept.
    fn hook_failed(&self, py: Python<'_>, err: &PyErr, from: &str, link: &str) {
        self.hook_errors.fetch_add(1, Ordering::Relaxed);
        let logged = (|| -> PyResult<()> {
            let logger = py
                .import("logging")?
                .call_method1("getLogger", ("trawl",))?;
            let exc_info = PyTuple::new(
                py,
                [
                    err.get_type(py).into_any(),
                    err.value(py).clone().into_any(),
                    err.traceback(py)
                        .map_or_else(|| py.None().into_bound(py), Bound::into_any),
                ],
            )?;
            let kwargs = PyDict::new(py);
            kwargs.set_item("exc_info", exc_info)?;
            logger.call_method(
                "error",
                ("accept_link(%r, %r) raised; the link is kept", from, link),
                Some(&kwargs),
            )?;
            Ok(())
        })();
        if logged.is_err() {
            err.print(py);
        }
    }
}

impl Handler for Bridge {
    fn on_response(&self, page: &EnginePage<'_>) {
        if !self.want_pages.load(Ordering::Acquire) {
            return;
        }
        let _ = self.pages_tx.send(PageData {
            url: page.url.to_string(),
            status: page.head.status,
            head: page.head.raw.clone(),
            body: page.body.to_vec(),
            links: page.links.join("\n"),
            fetched_at: page.fetched_at,
            ip: page.ip,
        });
    }

    fn on_outcome(&self, record: &LogRecord) {
        if self.want_outcomes.load(Ordering::Acquire) {
            let _ = self.outcomes_tx.send(record.to_line());
        }
    }

    fn accept_links(&self, from: &str, links: &[url::Url], keep: &mut [bool]) {
        let Some(hook) = &self.accept_link else {
            return;
        };
        Python::with_gil(|py| {
            for (link, keep) in links.iter().zip(keep.iter_mut()) {
                match hook
                    .call1(py, (from, link.as_str()))
                    .and_then(|v| v.is_truthy(py))
                {
                    Ok(answer) => *keep = answer,
                    Err(err) => self.hook_failed(py, &err, from, link.as_str()),
                }
            }
        });
    }

    fn is_backlogged(&self) -> bool {
        (self.want_pages.load(Ordering::Acquire) && self.pages_rx.len() >= PAGE_BACKLOG)
            || (self.want_outcomes.load(Ordering::Acquire)
                && self.outcomes_rx.len() >= OUTCOME_BACKLOG)
    }
}

/// The crawl's run: not started (the crawler), running (its thread), or ended.
enum Run {
    Ready(Box<Crawler>),
    Running(JoinHandle<Result<Stats, String>>),
    Ended(Box<Result<Stats, String>>),
    Taken,
}

/// A crawl of `seeds` into the directory `out`; the keyword options are `trawl
/// crawl`'s flags with Python names (`delay_ms=500`, `warc=False`, `from_=`), and an
/// `out` holding an earlier crawl resumes it. `accept_link(from_url, url)` may drop
/// new links. Every method may be called from another thread; `with` stops the
/// crawl on leaving the block. See docs/python.md.
#[pyclass(module = "trawl._trawl", frozen)]
pub struct Crawl {
    bridge: Arc<Bridge>,
    handle: CrawlHandle,
    stop: Arc<AtomicBool>,
    run: Mutex<Run>,
    out: PathBuf,
    resumed: bool,
}

/// The `trawl crawl` flags of Python keyword options.
///
/// # Errors
/// `TypeError` naming an option the table does not have, or a value of the wrong
/// kind (a bool for a valued flag, a non-bool for a switch).
fn flags_of(options: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<String>> {
    let mut flags = Vec::new();
    let Some(options) = options else {
        return Ok(flags);
    };
    let cmd = command();
    let find = |long: &str| {
        cmd.get_arguments()
            .find(|a| a.get_long() == Some(long) && !NOT_OPTIONS.contains(&a.get_id().as_str()))
    };
    let is_switch = |a: &clap::Arg| matches!(a.get_action(), clap::ArgAction::SetTrue);
    for (key, value) in options.iter() {
        let name: String = key.extract()?;
        // `from_=` for `--from` (a Python keyword); `_` for `-`.
        let long = name.trim_end_matches('_').replace('_', "-");
        let switch = |value: &Bound<'_, PyAny>| -> PyResult<bool> {
            value
                .extract::<bool>()
                .map_err(|_| PyTypeError::new_err(format!("option {name:?} takes True or False")))
        };
        match find(&long) {
            Some(arg) if is_switch(arg) => {
                if switch(&value)? {
                    flags.push(format!("--{long}"));
                }
            }
            Some(_) => {
                if value.is_none() {
                    continue;
                }
                let items: Vec<Bound<'_, PyAny>> =
                    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
                        value.try_iter()?.collect::<PyResult<_>>()?
                    } else {
                        vec![value]
                    };
                for item in items {
                    if item.is_instance_of::<pyo3::types::PyBool>() {
                        return Err(PyTypeError::new_err(format!(
                            "option {name:?} takes a value, not {}",
                            item.str()?
                        )));
                    }
                    let text = match item.extract::<PathBuf>() {
                        Ok(path) if !item.is_instance_of::<pyo3::types::PyString>() => {
                            path.display().to_string()
                        }
                        _ => item.str()?.to_string(),
                    };
                    flags.push(format!("--{long}={text}"));
                }
            }
            // `warc=False` is `--no-warc`.
            None => match find(&format!("no-{long}")).filter(|a| is_switch(a)) {
                Some(_) => {
                    if !switch(&value)? {
                        flags.push(format!("--no-{long}"));
                    }
                }
                None => {
                    return Err(PyTypeError::new_err(format!(
                        "Crawl() got an unexpected keyword argument '{name}' (not a trawl \
                         crawl option)"
                    )))
                }
            },
        }
    }
    Ok(flags)
}

/// Waits for `rx` without the GIL, waking every [`TICK`] for Python's signal
/// handlers; `Ok(None)` once `done()` holds and nothing is left.
fn recv_interruptible<T: Send>(
    py: Python<'_>,
    rx: &Receiver<T>,
    done: &dyn Fn() -> bool,
) -> PyResult<Option<T>> {
    loop {
        let ended = done();
        match py.allow_threads(|| rx.recv_timeout(TICK)) {
            Ok(item) => return Ok(Some(item)),
            Err(RecvTimeoutError::Disconnected) => return Ok(None),
            Err(RecvTimeoutError::Timeout) if ended && rx.is_empty() => return Ok(None),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
        }
    }
}

/// The crawls started and not yet waited for: stopped cleanly (final checkpoint) when
/// the interpreter exits ([`stop_all`], registered with `atexit`), rather than cut
/// off mid-write by the process's end.
static LIVE: Mutex<Vec<Py<Crawl>>> = Mutex::new(Vec::new());

/// Stops every crawl still running and waits for each to end (the `atexit` hook).
#[pyfunction]
fn stop_all(py: Python<'_>) {
    let live = LIVE
        .lock()
        .map(|mut l| std::mem::take(&mut *l))
        .unwrap_or_default();
    for crawl in live {
        let crawl = crawl.get();
        crawl.stop();
        crawl.drain();
        let _ = crawl.wait(py);
    }
}

impl Crawl {
    /// Starts the crawl's thread if it has not started (and counts it live).
    fn start_py(slf: &Py<Self>, py: Python<'_>) -> PyResult<()> {
        if slf.get().start()? {
            if let Ok(mut live) = LIVE.lock() {
                live.push(slf.clone_ref(py));
            }
        }
        Ok(())
    }

    /// Starts the crawl's thread if it has not started; true if it starts now.
    fn start(&self) -> PyResult<bool> {
        let mut run = self.lock_run()?;
        if let Run::Ready(_) = &*run {
            let Run::Ready(crawler) = std::mem::replace(&mut *run, Run::Taken) else {
                return Err(PyRuntimeError::new_err("crawl state lost"));
            };
            let thread = std::thread::Builder::new()
                .name("trawl-crawl".to_owned())
                .spawn(move || crawler.run().map_err(|e| e.to_string()))
                .map_err(|e| PyRuntimeError::new_err(format!("cannot start the crawl: {e}")))?;
            *run = Run::Running(thread);
            return Ok(true);
        }
        Ok(false)
    }

    fn lock_run(&self) -> PyResult<std::sync::MutexGuard<'_, Run>> {
        self.run
            .lock()
            .map_err(|_| PyRuntimeError::new_err("crawl state poisoned"))
    }

    fn is_finished(&self) -> bool {
        match self.run.lock() {
            Ok(run) => match &*run {
                Run::Running(t) => t.is_finished(),
                Run::Ended(_) => true,
                Run::Ready(_) | Run::Taken => false,
            },
            Err(_) => true,
        }
    }

    /// Waits for the crawl to end (starting it if needed); on Ctrl-C, stops it, waits
    /// for its final checkpoint and raises `KeyboardInterrupt`.
    fn wait(&self, py: Python<'_>) -> PyResult<Stats> {
        self.start()?;
        let _left = Unlisted(self);
        let mut interrupted: Option<PyErr> = None;
        loop {
            let done = py.allow_threads(|| {
                let deadline = std::time::Instant::now() + TICK;
                while std::time::Instant::now() < deadline {
                    if self.is_finished() {
                        return true;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                false
            });
            if done {
                break;
            }
            if interrupted.is_none() {
                if let Err(e) = py.check_signals() {
                    self.handle.stop();
                    self.stop.store(true, Ordering::Release);
                    interrupted = Some(e);
                }
            }
            // Pages nobody will read must not hold the crawl back.
            if interrupted.is_some() {
                self.drain();
            }
        }
        let result = {
            let mut run = self.lock_run()?;
            let ended = match std::mem::replace(&mut *run, Run::Taken) {
                Run::Running(t) => t
                    .join()
                    .unwrap_or_else(|_| Err("the crawl thread panicked".to_owned())),
                Run::Ended(r) => *r,
                Run::Ready(_) | Run::Taken => Err("the crawl did not run".to_owned()),
            };
            *run = Run::Ended(Box::new(ended.clone()));
            ended
        };
        if let Some(e) = interrupted {
            return Err(e);
        }
        result.map_err(PyRuntimeError::new_err)
    }

    /// Stops queueing pages and records for Python and drops those waiting.
    fn drain(&self) {
        self.bridge.want_pages.store(false, Ordering::Release);
        self.bridge.want_outcomes.store(false, Ordering::Release);
        while self.bridge.pages_rx.try_recv().is_ok() {}
        while self.bridge.outcomes_rx.try_recv().is_ok() {}
    }
}

/// Takes a crawl off [`LIVE`] once it has been waited for (on every way out of
/// [`Crawl::wait`]).
struct Unlisted<'a>(&'a Crawl);

impl Drop for Unlisted<'_> {
    fn drop(&mut self) {
        if !self.0.is_finished() {
            return;
        }
        if let Ok(mut live) = LIVE.lock() {
            live.retain(|c| !std::ptr::eq(c.get(), self.0));
        }
    }
}

/// `stats.json`'s content (and `hook_errors`) as a Python dict.
fn stats_dict<'py>(
    py: Python<'py>,
    stats: &Stats,
    hook_errors: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json_text(stats)?;
    let dict = py.import("json")?.call_method1("loads", (text,))?;
    dict.set_item("hook_errors", hook_errors)?;
    Ok(dict)
}

fn serde_json_text(stats: &Stats) -> PyResult<String> {
    serde_json::to_string(stats)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot serialize the stats: {e}")))
}

#[pymethods]
impl Crawl {
    #[new]
    #[pyo3(signature = (seeds = None, out = None, accept_link = None, **options))]
    fn new(
        seeds: Option<Vec<String>>,
        out: Option<PathBuf>,
        accept_link: Option<Py<PyAny>>,
        options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Self> {
        let out = out.ok_or_else(|| PyTypeError::new_err("Crawl() needs out= (a directory)"))?;
        let resumed = trawl::checkpoint::start::start_path(&out).is_file();
        let mut flags = vec![format!("--out={}", out.display())];
        for seed in seeds.unwrap_or_default() {
            flags.push(format!("--seed={seed}"));
        }
        flags.extend(flags_of(options)?);
        if resumed {
            flags.push("--resume".to_owned());
        }
        let plan =
            CrawlPlan::from_flags(&flags).map_err(|e| PyValueError::new_err(format!("{e:#}")))?;
        let bridge = Arc::new(Bridge::new(accept_link));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<dyn Handler> = bridge.clone();
        let crawler = plan
            .builder()
            .handler(handler)
            .stop_flag(Arc::clone(&stop))
            .build()
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Self {
            bridge,
            handle: crawler.handle(),
            stop,
            run: Mutex::new(Run::Ready(Box::new(crawler))),
            out,
            resumed,
        })
    }

    /// Runs the crawl to its end and returns the final stats.
    fn run<'py>(slf: Py<Self>, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Self::start_py(&slf, py)?;
        let crawl = slf.get();
        let stats = crawl.wait(py)?;
        stats_dict(py, &stats, crawl.bridge.hook_errors.load(Ordering::Relaxed))
    }

    /// The fetched pages as they finish; iterating drives the crawl.
    fn pages(slf: Py<Self>, py: Python<'_>) -> PyResult<PageStream> {
        slf.get().bridge.want_pages.store(true, Ordering::Release);
        Self::start_py(&slf, py)?;
        Ok(PageStream { crawl: slf })
    }

    /// The crawl-log records as dicts, as they are decided.
    fn outcomes(slf: Py<Self>, py: Python<'_>) -> PyResult<OutcomeStream> {
        slf.get()
            .bridge
            .want_outcomes
            .store(true, Ordering::Release);
        Self::start_py(&slf, py)?;
        Ok(OutcomeStream { crawl: slf })
    }

    /// The stats as of now (`stats.json`'s content).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let handle = self.handle.clone();
        let hook_errors = self.bridge.hook_errors.load(Ordering::Relaxed);
        match py.allow_threads(move || handle.stats()) {
            Some(stats) => stats_dict(py, &stats, hook_errors),
            None => {
                let dict = PyDict::new(py);
                dict.set_item("finish", "not-started")?;
                dict.set_item("hook_errors", hook_errors)?;
                Ok(dict.into_any())
            }
        }
    }

    /// Hands URLs to the running crawl; returns how many.
    fn add(&self, py: Python<'_>, urls: Vec<String>) -> PyResult<usize> {
        let handle = self.handle.clone();
        py.allow_threads(move || handle.add(&urls))
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Starts no new fetch until `resume()`.
    fn pause(&self) {
        self.handle.pause();
    }

    /// Ends a `pause()`.
    fn resume(&self) {
        self.handle.resume();
    }

    /// Writes a checkpoint now; its epoch, or None if none committed within 10 s.
    fn checkpoint(&self, py: Python<'_>) -> Option<u64> {
        let handle = self.handle.clone();
        py.allow_threads(move || handle.checkpoint())
    }

    /// Stops the crawl: no new fetches, a final checkpoint, then the end.
    fn stop(&self) {
        self.handle.stop();
        self.stop.store(true, Ordering::Release);
    }

    /// The output directory.
    #[getter]
    fn out(&self) -> PathBuf {
        self.out.clone()
    }

    /// Whether this crawl continues one found in `out`.
    #[getter]
    fn resumed(&self) -> bool {
        self.resumed
    }

    /// Exceptions raised by `accept_link` so far.
    #[getter]
    fn hook_errors(&self) -> u64 {
        self.bridge.hook_errors.load(Ordering::Relaxed)
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// Stops the crawl (unless it ended) and waits for its final checkpoint.
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        let started = !matches!(&*self.lock_run()?, Run::Ready(_));
        if started {
            self.stop();
            self.drain();
            match self.wait(py) {
                Ok(_) => {}
                // A failed crawl is said by the exception in flight, if any, or here.
                Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyboardInterrupt>(py) => {
                    return Err(e)
                }
                Err(e) if _exc.get_item(0).is_ok_and(|t| !t.is_none()) => drop(e),
                Err(e) => return Err(e),
            }
        }
        Ok(false)
    }
}

/// Pulls items for a stream: the next one, or the end of the crawl (joined, its
/// error raised); Ctrl-C stops the crawl cleanly and raises `KeyboardInterrupt`.
fn next_item<T: Send>(py: Python<'_>, crawl: &Crawl, rx: &Receiver<T>) -> PyResult<Option<T>> {
    match recv_interruptible(py, rx, &|| crawl.is_finished()) {
        Ok(Some(item)) => Ok(Some(item)),
        Ok(None) => {
            crawl.wait(py)?;
            Ok(None)
        }
        Err(e) => {
            crawl.stop();
            crawl.drain();
            let _ = crawl.wait(py);
            Err(e)
        }
    }
}

/// The pages of a crawl, as they finish (`Crawl.pages()`).
#[pyclass(module = "trawl._trawl")]
pub struct PageStream {
    crawl: Py<Crawl>,
}

#[pymethods]
impl PageStream {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Page>> {
        let crawl = self.crawl.get();
        Ok(next_item(py, crawl, &crawl.bridge.pages_rx)?.map(Page::from))
    }
}

/// The crawl-log records of a crawl, as dicts (`Crawl.outcomes()`).
#[pyclass(module = "trawl._trawl")]
pub struct OutcomeStream {
    crawl: Py<Crawl>,
}

#[pymethods]
impl OutcomeStream {
    fn __iter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let crawl = self.crawl.get();
        match next_item(py, crawl, &crawl.bridge.outcomes_rx)? {
            Some(line) => {
                let text = PyBytes::new(py, &line);
                Ok(Some(py.import("json")?.call_method1("loads", (text,))?))
            }
            None => Ok(None),
        }
    }
}

/// One fetched response (any status), as the crawl log records it `fetched`.
#[pyclass(module = "trawl._trawl", frozen)]
pub struct Page {
    data: PageData,
}

impl From<PageData> for Page {
    fn from(data: PageData) -> Self {
        Self { data }
    }
}

#[pymethods]
impl Page {
    /// The URL fetched.
    #[getter]
    fn url(&self) -> &str {
        &self.data.url
    }

    /// The HTTP status.
    #[getter]
    fn status(&self) -> u16 {
        self.data.status
    }

    /// The header fields in order, as (name, value) pairs (values decoded as
    /// Latin-1, as HTTP allows).
    #[getter]
    fn headers(&self) -> Vec<(String, String)> {
        self.data.headers()
    }

    /// The body, content-decoded (gzip, deflate, br) as the crawl decoded it.
    #[getter]
    fn body<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data.body)
    }

    /// The links found on the page (canonical URLs).
    #[getter]
    fn links(&self) -> Vec<&str> {
        self.data.links.lines().collect()
    }

    /// When the response was recorded (a UTC datetime).
    #[getter]
    fn fetched_at<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let secs = self
            .data
            .fetched_at
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let datetime = py.import("datetime")?;
        let utc = datetime.getattr("timezone")?.getattr("utc")?;
        datetime
            .getattr("datetime")?
            .call_method1("fromtimestamp", (secs, utc))
    }

    /// The server's address, when known.
    #[getter]
    fn ip(&self) -> Option<String> {
        self.data.ip.map(|ip| ip.to_string())
    }

    /// The `Content-Type` header, when there is one.
    #[getter]
    fn content_type(&self) -> Option<String> {
        self.data
            .headers()
            .into_iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .map(|(_, v)| v)
    }

    fn __repr__(&self) -> String {
        format!("<Page {} {}>", self.data.status, self.data.url)
    }
}

/// The native part of the `trawl` package.
#[pymodule]
fn _trawl(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Crawl>()?;
    m.add_class::<Page>()?;
    m.add_class::<PageStream>()?;
    m.add_class::<OutcomeStream>()?;
    m.add("VERSION", trawl::VERSION)?;
    let stop_all = wrap_pyfunction!(stop_all, m)?;
    m.py()
        .import("atexit")?
        .call_method1("register", (stop_all,))?;
    Ok(())
}

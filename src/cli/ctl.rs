//! `trawl ctl`: operate running crawls through their control API (`docs/control.md`).
//!
//! `trawl ctl --out DIR VERB [ARGS]` reads the listener's address and token from
//! `DIR/control.addr` and `DIR/control.token`; `--addr IP:PORT --token T` names them
//! directly. Both may be given several times: every node of a farm at once (each node
//! serves its own API). One JSON line per node; exit 0 when every node accepted.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;

use trawl::control::{ADDR_FILE, CONTROL_PREFIX, TOKEN_FILE};

/// Flags of `trawl ctl`.
#[derive(Debug, Args)]
pub struct CtlArgs {
    /// A running crawl's output directory (its `--out`); may be repeated (a farm's
    /// nodes).
    #[arg(long, value_name = "DIR")]
    pub out: Vec<PathBuf>,
    /// A listener's address (`--metrics-addr`), instead of or beside `--out`; may be
    /// repeated.
    #[arg(long, value_name = "IP:PORT")]
    pub addr: Vec<SocketAddr>,
    /// The token for the `--addr` listeners (each `--out` has its own file).
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// `pause`, `resume`, `checkpoint`, `stop`, `add URL...`, `block HOST|URL-PREFIX`,
    /// `delay HOST MS`, or `show` (the operator's state, `GET /api/control`).
    #[arg(value_name = "VERB")]
    pub verb: String,
    /// The verb's arguments.
    #[arg(value_name = "ARG")]
    pub args: Vec<String>,
}

/// How long one node has to answer (a `checkpoint` waits up to 10 s for its commit).
const TIMEOUT: Duration = Duration::from_secs(30);
/// Largest answer read.
const MAX_ANSWER_BYTES: u64 = 4 << 20;

pub fn run(args: CtlArgs) -> anyhow::Result<ExitCode> {
    let (method, path, body) = request_of(&args.verb, &args.args)?;
    let mut nodes: Vec<(SocketAddr, Option<String>)> = Vec::new();
    for dir in &args.out {
        let addr_text = std::fs::read_to_string(dir.join(ADDR_FILE)).with_context(|| {
            format!(
                "{} has no {ADDR_FILE}: is a crawl with --metrics-addr running there?",
                dir.display()
            )
        })?;
        let addr: SocketAddr = addr_text
            .trim()
            .parse()
            .with_context(|| format!("bad address in {}", dir.join(ADDR_FILE).display()))?;
        let token = std::fs::read_to_string(dir.join(TOKEN_FILE))
            .with_context(|| format!("reading {}", dir.join(TOKEN_FILE).display()))?;
        nodes.push((addr, Some(token.trim().to_owned())));
    }
    for a in &args.addr {
        nodes.push((*a, args.token.clone()));
    }
    if nodes.is_empty() {
        bail!("name a crawl: --out DIR or --addr IP:PORT (either may be repeated)");
    }
    let mut all_ok = true;
    let mut stdout = std::io::stdout().lock();
    for (addr, token) in nodes {
        let line = match call(addr, token.as_deref(), method, &path, &body) {
            Ok((status, answer)) => {
                all_ok &= status == 200;
                let answer = serde_json::from_str::<serde_json::Value>(&answer)
                    .unwrap_or(serde_json::Value::String(answer));
                serde_json::json!({ "node": addr.to_string(), "status": status, "answer": answer })
            }
            Err(e) => {
                all_ok = false;
                serde_json::json!({ "node": addr.to_string(), "error": format!("{e:#}") })
            }
        };
        writeln!(stdout, "{line}")?;
    }
    Ok(if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The method, path and JSON body of a verb with its arguments.
fn request_of(verb: &str, args: &[String]) -> anyhow::Result<(&'static str, String, String)> {
    let post =
        |body: serde_json::Value| ("POST", format!("{CONTROL_PREFIX}{verb}"), body.to_string());
    Ok(match (verb, args) {
        ("show", []) => ("GET", "/api/control".to_owned(), String::new()),
        ("pause" | "resume" | "checkpoint" | "stop", []) => post(serde_json::json!({})),
        ("add", urls) if !urls.is_empty() => post(serde_json::json!({ "urls": urls })),
        ("block", [what]) if what.contains("://") => post(serde_json::json!({ "prefix": what })),
        ("block", [what]) => post(serde_json::json!({ "host": what })),
        ("delay", [host, ms]) => {
            let ms: u64 = ms.parse().context("delay takes HOST MS (milliseconds)")?;
            post(serde_json::json!({ "host": host, "delay_ms": ms }))
        }
        _ => bail!(
            "usage: trawl ctl (--out DIR | --addr IP:PORT) VERB: pause, resume, checkpoint, \
             stop, show, add URL..., block HOST|URL-PREFIX, delay HOST MS"
        ),
    })
}

/// One request to one node: the status code and the body.
fn call(
    addr: SocketAddr,
    token: Option<&str>,
    method: &str,
    path: &str,
    body: &str,
) -> anyhow::Result<(u16, String)> {
    let mut s = TcpStream::connect_timeout(&addr, TIMEOUT)
        .with_context(|| format!("connecting to {addr}"))?;
    s.set_read_timeout(Some(TIMEOUT))?;
    s.set_write_timeout(Some(TIMEOUT))?;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{auth}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes())?;
    let mut raw = Vec::new();
    s.take(MAX_ANSWER_BYTES).read_to_end(&mut raw)?;
    let text = String::from_utf8_lossy(&raw);
    let (head, answer) = text.split_once("\r\n\r\n").context("incomplete answer")?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .context("no status code")?;
    Ok((status, answer.to_owned()))
}

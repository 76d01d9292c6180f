//! Baseline for `tools/bench_fetch.py`: N keep-alive connections, each a task looping
//! GET requests through hyper's HTTP/1.1 client connection, on a current-thread tokio
//! runtime (one thread, like trawl's one mio loop). Checks every response and prints
//! one JSON line.
//!
//! `hyperload --url http://HOST:PORT/path --connections N --secs S [--expect-bytes B]
//! [--connect ADDR:PORT] [--accept-encoding VALUE]`

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Some(url) = arg(&args, "--url") else {
        eprintln!("usage: hyperload --url URL --connections N --secs S [--expect-bytes B]");
        return ExitCode::from(2);
    };
    let connections: usize = arg(&args, "--connections").and_then(|v| v.parse().ok()).unwrap_or(64);
    let secs: f64 = arg(&args, "--secs").and_then(|v| v.parse().ok()).unwrap_or(5.0);
    let expect: Option<usize> = arg(&args, "--expect-bytes").and_then(|v| v.parse().ok());
    let rest = url.strip_prefix("http://").unwrap_or(&url);
    let (authority, path) = match rest.find('/') {
        Some(i) => (rest[..i].to_owned(), rest[i..].to_owned()),
        None => (rest.to_owned(), "/".to_owned()),
    };
    // Connect here instead of resolving the URL's host (like curl's --connect-to).
    let connect_to = arg(&args, "--connect");
    let accept_encoding = arg(&args, "--accept-encoding").unwrap_or_else(|| "identity".to_owned());
    let ok = Arc::new(AtomicU64::new(0));
    let errors = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (authority, path, ok, errors) =
            (authority.clone(), path.clone(), Arc::clone(&ok), Arc::clone(&errors));
        let connect = connect_to.clone().unwrap_or_else(|| authority.clone());
        let accept_encoding = accept_encoding.clone();
        tasks.push(tokio::spawn(async move {
            let stream = match TcpStream::connect(&connect).await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("hyperload: connect {connect}: {e}");
                    errors.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            };
            let _ = stream.set_nodelay(true);
            let Ok((mut sender, conn)) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
            else {
                errors.fetch_add(1, Ordering::Relaxed);
                return;
            };
            tokio::spawn(conn);
            while Instant::now() < end {
                let req = Request::get(path.as_str())
                    .header("host", authority.as_str())
                    .header("user-agent", "hyperload/1")
                    .header("accept-encoding", accept_encoding.as_str())
                    .body(Empty::<Bytes>::new());
                let Ok(req) = req else { return };
                let good = match sender.send_request(req).await.map_err(|e| eprintln!("hyperload: {e}")) {
                    Ok(res) => {
                        let status = res.status();
                        match res.into_body().collect().await {
                            Ok(body) => {
                                let len = body.to_bytes().len();
                                status == 200 && expect.is_none_or(|b| b == len)
                            }
                            Err(_) => false,
                        }
                    }
                    Err(_) => false,
                };
                if good {
                    ok.fetch_add(1, Ordering::Relaxed);
                } else {
                    errors.fetch_add(1, Ordering::Relaxed);
                    return;
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
    let elapsed = start.elapsed().as_secs_f64();
    let (ok, errors) = (ok.load(Ordering::Relaxed), errors.load(Ordering::Relaxed));
    println!(
        "{{\"client\":\"hyper\",\"connections\":{connections},\"requests\":{ok},\"errors\":{errors},\"secs\":{elapsed:.3},\"rps\":{:.1}}}",
        ok as f64 / elapsed
    );
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

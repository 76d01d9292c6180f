//! Load generator for the fetcher macro-benchmark (`tools/bench_fetch.py`): keeps N
//! requests in flight on one `Fetcher` (one thread, one mio loop) over keep-alive
//! connections for a fixed time, checks every response, prints one JSON line.
//!
//! `fetchload --url URL --connections N --secs S [--expect-bytes B] [--resolve H:P:A]
//! [--accept-encoding VALUE]`

use std::process::ExitCode;
use std::time::{Duration, Instant};

use trawl::fetch::FetchRequest;
use trawl::net::{Fetcher, FetcherConfig};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let Some(url) = arg(&args, "--url").and_then(|u| url::Url::parse(&u).ok()) else {
        eprintln!("usage: fetchload --url URL --connections N --secs S [--expect-bytes B]");
        return ExitCode::from(2);
    };
    let connections: usize = arg(&args, "--connections")
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let secs: f64 = arg(&args, "--secs")
        .and_then(|v| v.parse().ok())
        .unwrap_or(5.0);
    let expect: Option<u64> = arg(&args, "--expect-bytes").and_then(|v| v.parse().ok());

    let mut cfg = FetcherConfig {
        max_connections: connections,
        ..FetcherConfig::default()
    };
    cfg.pool.max_idle_per_host = connections;
    if let Some(r) = arg(&args, "--resolve") {
        match trawl::net::parse_resolve(&r) {
            Ok(o) => cfg.dns.overrides.push(o),
            Err(e) => {
                eprintln!("fetchload: {e}");
                return ExitCode::from(2);
            }
        }
    }
    cfg.pool.max_idle_total = connections;
    let mut fetcher = match Fetcher::new(cfg) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("fetchload: {e}");
            return ExitCode::from(1);
        }
    };
    let mut template = FetchRequest::get(0, url, "trawl-bench/1".into());
    // Identity by default so every client of the benchmark (wrk cannot decode) asks for
    // the same representation; `--accept-encoding "gzip, deflate, br"` measures decoding.
    template.head.accept_encoding =
        arg(&args, "--accept-encoding").unwrap_or_else(|| "identity".to_owned());
    for i in 0..connections {
        let mut r = template.clone();
        r.id = i as u64;
        fetcher.submit(r);
    }
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(secs);
    let (mut ok, mut errors, mut bytes) = (0u64, 0u64, 0u64);
    let mut out = Vec::with_capacity(1024);
    let mut first_error = None;
    while Instant::now() < end {
        if fetcher
            .poll(&mut out, Some(Duration::from_millis(50)))
            .is_err()
        {
            break;
        }
        for o in out.drain(..) {
            let good =
                o.is_ok() && o.status() == Some(200) && expect.is_none_or(|b| o.decoded_bytes == b);
            if good {
                ok += 1;
                bytes += o.wire_bytes;
            } else {
                errors += 1;
                if first_error.is_none() {
                    first_error = Some(format!(
                        "{:?} status {:?} bytes {}",
                        o.error,
                        o.status(),
                        o.decoded_bytes
                    ));
                }
            }
            let mut r = template.clone();
            r.id = ok + errors;
            fetcher.submit(r);
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let stats = fetcher.stats();
    println!(
        "{{\"client\":\"trawl\",\"connections\":{connections},\"requests\":{ok},\"errors\":{errors},\
         \"secs\":{elapsed:.3},\"rps\":{:.1},\"wire_bytes\":{bytes},\"connections_opened\":{}}}",
        ok as f64 / elapsed,
        stats.connections_opened
    );
    if let Some(e) = first_error {
        eprintln!("fetchload: first error: {e}");
    }
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

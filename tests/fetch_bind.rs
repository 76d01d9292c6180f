//! `--bind-address` (issue 29, "Source addresses"): outgoing connections leave from the
//! addresses given, each host always from the same one, and an address that is not this
//! machine's is refused at start. All of 127/8 binds on Linux, so no namespace is needed:
//! synthweb listens on 127.0.1.x and its request log's `peer` is the source address.
//!
//! The crawl test (a run stopped by its budget, then resumed: both runs bound alike)
//! needs `cargo test --workspace` (synthweb built).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod crawl_support;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use trawl::fetch::FetchOutcome;
use trawl::net::{BindAddrs, Fetcher, IpSlots};

use crawl_support::{crawl_args, crawl_log, fetched_urls, trawl_bin, Synthweb};
use support::{fast_config, named_request, read_head, run_requests, send, ScriptServer};

fn lo(last: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
}

/// The two source addresses of every test here.
fn two_sources() -> BindAddrs {
    BindAddrs::new(&[lo(2), lo(3)]).expect("127/8 binds")
}

/// Each host name (Host header, port dropped) and the source addresses its requests
/// came from, from synthweb's request log.
fn sources_by_host(req_log: &str) -> BTreeMap<String, BTreeSet<IpAddr>> {
    let mut by_host: BTreeMap<String, BTreeSet<IpAddr>> = BTreeMap::new();
    for line in req_log.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("log line");
        let host = v["host"].as_str().expect("host");
        let host = host.rsplit_once(':').map_or(host, |(h, _)| h);
        let peer: SocketAddr = v["peer"].as_str().expect("peer").parse().expect("addr");
        by_host
            .entry(host.to_owned())
            .or_default()
            .insert(peer.ip());
    }
    by_host
}

#[test]
fn a_crawl_and_its_resume_leave_from_both_addresses_each_host_from_one() {
    let tmp = tempfile::tempdir().unwrap();
    let budget = 60;
    // Eight hosts on two addresses: four share each, so connections are reused across
    // host names (under `--per-ip-connections 1`), which must not move a host to
    // another source address.
    let mut sw = Synthweb::start(
        &tmp.path().join("web"),
        &[
            "--hosts",
            "8",
            "--bind-range",
            "127.0.1.0/30",
            "--profile",
            "default",
            "--pages-per-host",
            "4-8",
            "--out-degree",
            "3-6",
            "--seed-stride",
            "1",
            "--manifest-max-pages-per-host",
            &budget.to_string(),
        ],
    );
    let out = tmp.path().join("crawl");
    let mut args = crawl_args(&out, budget, 0);
    args.extend(
        [
            "--shards",
            "2",
            "--per-ip-connections",
            "1",
            "--no-warc",
            "--bind-address",
            "127.0.0.2",
            "--bind-address",
            "127.0.0.3",
        ]
        .map(str::to_owned),
    );
    // Stopped after 20 pages, then resumed with a larger budget and no other flag:
    // the recorded flags bind the second run the same way (unbound, it would come from
    // 127.0.0.1).
    args.extend(["--max-pages".to_owned(), "20".to_owned()]);
    let resume = [
        "crawl",
        "--resume",
        &out.display().to_string(),
        "--max-pages",
        "100000",
    ]
    .map(str::to_owned)
    .to_vec();
    for (dir, args) in [(&sw.dir, args), (&tmp.path().to_path_buf(), resume)] {
        let o = Command::new(trawl_bin())
            .current_dir(dir)
            .args(&args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "trawl {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let log = crawl_log(&out);
        eprintln!("{} crawl-log lines after {args:?}", log.len());
    }
    sw.stop();

    let by_host = sources_by_host(&std::fs::read_to_string(sw.path("req.log")).unwrap());
    assert_eq!(by_host.len(), 8, "{by_host:?}");
    let bind = two_sources();
    for (host, sources) in &by_host {
        // One address per host, and the one the hash names (any IPv4 destination).
        let want = bind.source_for(host, lo(1)).expect("an IPv4 source");
        assert_eq!(sources, &BTreeSet::from([want]), "{host}");
    }
    let seen: BTreeSet<IpAddr> = by_host.values().flatten().copied().collect();
    assert_eq!(seen, BTreeSet::from([lo(2), lo(3)]), "{by_host:?}");

    // Nothing was lost to the binding: every M URL is in the crawl log.
    let (m, _) = sw.manifest();
    let fetched = fetched_urls(&crawl_log(&out));
    let missed: Vec<_> = m.difference(&fetched).take(5).collect();
    assert!(missed.is_empty(), "M URLs not fetched: {missed:?}");

    // start.json records the flags as given.
    let start = std::fs::read_to_string(out.join("start.json")).unwrap();
    for flag in ["--bind-address=127.0.0.2", "--bind-address=127.0.0.3"] {
        assert!(start.contains(flag), "{flag} not in {start}");
    }
}

#[test]
fn an_address_not_of_this_machine_is_refused_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("crawl").display().to_string();
    // TEST-NET-1 (RFC 5737): no machine has it.
    let want = "--bind-address 192.0.2.1: not an address of this machine";
    for args in [
        vec![
            "crawl",
            "--seed",
            "http://a.test/",
            "--out",
            &out,
            "--bind-address",
            "127.0.0.2",
            "--bind-address",
            "192.0.2.1",
        ],
        vec![
            "fetch",
            "--bind-address",
            "192.0.2.1",
            "http://127.0.0.1:9/",
        ],
    ] {
        let o = Command::new(trawl_bin())
            .current_dir(tmp.path())
            .args(&args)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(want), "{args:?}: {stderr}");
    }
}

/// Keep-alive server recording the source address of each request with its Host.
fn recording_server(seen: Arc<Mutex<Vec<(IpAddr, String)>>>) -> ScriptServer {
    ScriptServer::start(move |mut s: TcpStream, _| {
        let from = s.peer_addr().expect("peer").ip();
        while let Some(head) = read_head(&mut s) {
            let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
            let host = head
                .lines()
                .find_map(|l| l.strip_prefix("host: "))
                .map(|h| h.split(':').next().unwrap_or(h).to_owned())
                .unwrap_or_default();
            seen.lock().unwrap().push((from, host));
            if !send(&mut s, b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") {
                return;
            }
        }
    })
}

#[test]
fn an_idle_connection_serves_another_host_only_from_its_source_address() {
    // a.test and b.test leave from 127.0.0.2, d.test from 127.0.0.3 (the hash's
    // values). One slot for the address: b.test may ride on a.test's idle
    // connection; d.test may not, so that connection yields and d.test gets its own.
    let bind = two_sources();
    let [a, b, d] = ["a.test", "b.test", "d.test"].map(|h| bind.source_for(h, lo(1)));
    assert_eq!((a, b, d), (Some(lo(2)), Some(lo(2)), Some(lo(3))));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = recording_server(Arc::clone(&seen));
    let mut cfg = fast_config();
    cfg.ip_slots = Some(IpSlots::new(1));
    cfg.bind = bind;
    let mut fetcher = Fetcher::new(cfg).expect("fetcher");
    let mut reused = Vec::new();
    for (id, host) in [(1, "a.test"), (2, "b.test"), (3, "d.test")] {
        let o = run_requests(
            &mut fetcher,
            vec![named_request(id, host, server.addr, "/")],
            1,
            Duration::from_secs(10),
        );
        assert!(o[0].is_ok(), "{o:?}");
        reused.push(o[0].reused_connection);
    }
    assert_eq!(reused, [false, true, false]);
    let s = fetcher.stats();
    assert_eq!((s.shared_host_reuses, s.ip_yielded), (1, 1), "{s:?}");
    assert_eq!(server.accepts(), 2);
    let seen = seen.lock().unwrap().clone();
    let want: Vec<(IpAddr, String)> = [(lo(2), "a.test"), (lo(2), "b.test"), (lo(3), "d.test")]
        .map(|(ip, h)| (ip, h.to_owned()))
        .to_vec();
    assert_eq!(seen, want);
}

#[test]
fn many_names_sharing_connections_keep_their_source_addresses() {
    // 40 names on one address, a cap of 3, 12 requests in flight: connections are
    // shared across names, but only among names of the same source address.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = recording_server(Arc::clone(&seen));
    let mut cfg = fast_config();
    cfg.ip_slots = Some(IpSlots::new(3));
    cfg.bind = two_sources();
    let mut fetcher = Fetcher::new(cfg).expect("fetcher");
    let reqs = (0..160u64)
        .map(|i| named_request(i, &format!("site{}.test", i % 40), server.addr, "/"))
        .collect();
    let outcomes = run_requests(&mut fetcher, reqs, 12, Duration::from_secs(20));
    assert!(outcomes.iter().all(FetchOutcome::is_ok), "{outcomes:?}");
    assert!(
        fetcher.stats().shared_host_reuses > 0,
        "{:?}",
        fetcher.stats()
    );
    let bind = two_sources();
    let mut by_host: BTreeMap<String, BTreeSet<IpAddr>> = BTreeMap::new();
    for (ip, host) in seen.lock().unwrap().iter() {
        by_host.entry(host.clone()).or_default().insert(*ip);
    }
    assert_eq!(by_host.len(), 40);
    for (host, sources) in &by_host {
        let want = bind.source_for(host, lo(1)).expect("source");
        assert_eq!(sources, &BTreeSet::from([want]), "{host}");
    }
    let all: BTreeSet<IpAddr> = by_host.values().flatten().copied().collect();
    assert_eq!(all, BTreeSet::from([lo(2), lo(3)]));
}

//! The proxy environment table (`tests/data/proxy_env/table.json`, notes §10) against
//! its oracle: each row is replayed through `/usr/bin/curl` (`env -i`, a proxy on
//! 127.0.0.1:9 or 127.0.0.2:9 where nothing listens, `curl -v --max-time 2`), and the
//! address curl tried says which route it took. The same rows run through
//! `trawl::net::egress` here and in its unit tests, so trawl reads the environment as
//! the curl on this machine does. Without curl the test says so and passes, unless
//! `CI=true`.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use trawl::net::egress::rules::{RouteSpec, Routes};

const P: &str = "http://127.0.0.1:9";
const Q: &str = "http://127.0.0.2:9";
const CURL: &str = "/usr/bin/curl";

#[derive(serde::Deserialize)]
struct Row {
    row: String,
    env: BTreeMap<String, String>,
    url: String,
    route: String,
    #[serde(default)]
    no_proxy_env: bool,
}

fn rows() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/proxy_env/table.json");
    let text = std::fs::read_to_string(path).expect("table");
    serde_json::from_str(&text).expect("table parses")
}

fn env_of(row: &Row) -> BTreeMap<String, String> {
    let expand = |v: &str| match v {
        "P" => P.to_owned(),
        "Q" => Q.to_owned(),
        _ => v.to_owned(),
    };
    row.env
        .iter()
        .map(|(k, v)| (k.clone(), expand(v)))
        .collect()
}

/// "P", "Q" or "direct" from an address `host:port`, or none.
fn route_name(authority: Option<&str>) -> &'static str {
    match authority {
        Some("127.0.0.1:9") => "P",
        Some("127.0.0.2:9") => "Q",
        _ => "direct",
    }
}

/// Which route curl takes: the first address it tries (`*   Trying 127.0.0.1:9...`).
fn curl_route(row: &Row) -> &'static str {
    let out = Command::new("env")
        .arg("-i")
        .args(env_of(row).iter().map(|(k, v)| format!("{k}={v}")))
        .args([CURL, "-sv", "--max-time", "2", &row.url])
        .output()
        .expect("run curl");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tried = stderr.lines().find_map(|l| {
        let rest = l.split_once("Trying ")?.1;
        Some(rest.trim_end().trim_end_matches("..."))
    });
    route_name(tried)
}

fn trawl_route(row: &Row) -> &'static str {
    let env = env_of(row);
    let get = |name: &str| env.get(name).cloned();
    let routes = Routes::build(RouteSpec {
        env: if row.no_proxy_env { None } else { Some(&get) },
        ..RouteSpec::default()
    })
    .unwrap_or_else(|e| panic!("row {}: {e}", row.row));
    let url = url::Url::parse(&row.url).expect("row URL");
    let id = routes.pick(url.scheme() == "https", url.host_str().unwrap_or(""));
    let authority = routes.route(id).proxy.as_ref().map(|p| p.authority());
    route_name(authority.as_deref())
}

#[test]
fn trawl_reads_the_environment_as_the_table_says() {
    let rows = rows();
    assert!(rows.len() >= 12, "the acceptance asks for 12 cases or more");
    for row in &rows {
        assert_eq!(trawl_route(row), row.route, "row {}", row.row);
    }
}

#[test]
fn curl_agrees_with_the_table() {
    if !Path::new(CURL).exists() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{CURL} is missing under CI=true"
        );
        eprintln!("skipped: {CURL} is not installed");
        return;
    }
    let mut wrong = Vec::new();
    for row in rows().iter().filter(|r| !r.no_proxy_env) {
        let got = curl_route(row);
        if got != row.route {
            wrong.push(format!("row {}: table {}, curl {got}", row.row, row.route));
        }
    }
    assert!(wrong.is_empty(), "curl disagrees:\n{}", wrong.join("\n"));
}

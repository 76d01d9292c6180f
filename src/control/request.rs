//! A control request, from its parts to a [`Command`] or an [`ApiError`]: the verb
//! (the path), the method, the JSON body, and the credentials (token, `Origin`).
//!
//! Sans-IO: the listener (`engine/observe/metrics/server.rs`) reads the bytes and passes the
//! pieces; nothing here reads a socket, a file or the clock, and nothing panics on
//! what a client sends.

#![deny(clippy::indexing_slicing)]

use serde::Deserialize;

use super::error::ApiError;
use super::rules::Block;

/// Path prefix of the control verbs: `POST /api/control/<verb>`.
pub const CONTROL_PREFIX: &str = "/api/control/";
/// Largest request body read, in bytes (an `add` of a few thousand URLs).
pub const MAX_BODY_BYTES: usize = 256 * 1024;
/// Most URLs one `add` takes (the rest: `trawl add --file`).
pub const MAX_ADD_URLS: usize = 10_000;
/// Longest host delay an operator may set: one day.
pub const MAX_DELAY_MS: u64 = 24 * 3600 * 1000;

/// What an operator asks of the crawl.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    /// No new fetches until `Resume` (fetches in flight finish).
    Pause,
    Resume,
    /// A checkpoint now.
    Checkpoint,
    /// A final checkpoint and a clean exit (like SIGINT).
    Stop,
    /// URLs to crawl, through the drop directory of `trawl add`.
    Add(Vec<String>),
    /// Refuse a host's or a prefix's URLs for the rest of the crawl.
    Block(Block),
    /// Wait at least `delay_ms` between two requests to `host`.
    Delay {
        host: String,
        delay_ms: u64,
    },
}

/// The verbs, as they appear in paths and in `trawl ctl`.
pub const VERBS: [&str; 7] = [
    "pause",
    "resume",
    "checkpoint",
    "stop",
    "add",
    "block",
    "delay",
];

/// Whether `path` (query included) is a control verb's.
pub fn is_control_path(path: &str) -> bool {
    path.starts_with(CONTROL_PREFIX)
}

/// The command of `METHOD path` with `body`. Only `POST` is accepted; an empty body
/// stands for `{}`.
///
/// # Errors
/// `404` unknown verb, `405` not `POST`, `400` malformed JSON or arguments, `413` a
/// body or an add over its cap.
pub fn parse_command(method: &str, path: &str, body: &[u8]) -> Result<Command, ApiError> {
    let verb = path
        .strip_prefix(CONTROL_PREFIX)
        .unwrap_or(path)
        .split(['?', '#'])
        .next()
        .unwrap_or("");
    if !VERBS.contains(&verb) {
        return Err(ApiError::new(
            404,
            "unknown-verb",
            format!("unknown control verb {verb:?}; verbs: {}", VERBS.join(", ")),
        ));
    }
    if method != "POST" {
        return Err(ApiError::new(
            405,
            "method-not-allowed",
            format!("control verbs take POST, not {method}"),
        ));
    }
    if body.len() > MAX_BODY_BYTES {
        return Err(ApiError::new(
            413,
            "body-too-large",
            format!("body over {MAX_BODY_BYTES} bytes"),
        ));
    }
    let body = if body.trim_ascii().is_empty() {
        b"{}".as_slice()
    } else {
        body
    };
    let args: Args = serde_json::from_slice(body)
        .map_err(|e| ApiError::bad(format!("body is not the JSON object expected: {e}")))?;
    match verb {
        "pause" => args.none(Command::Pause),
        "resume" => args.none(Command::Resume),
        "checkpoint" => args.none(Command::Checkpoint),
        "stop" => args.none(Command::Stop),
        "add" => add(args),
        "block" => block(args),
        _ => delay(args),
    }
}

/// Every argument any verb takes; each verb refuses those it does not.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Args {
    urls: Option<Vec<String>>,
    host: Option<String>,
    prefix: Option<String>,
    delay_ms: Option<u64>,
}

impl Args {
    fn is_empty(&self) -> bool {
        self.urls.is_none()
            && self.host.is_none()
            && self.prefix.is_none()
            && self.delay_ms.is_none()
    }

    fn none(self, c: Command) -> Result<Command, ApiError> {
        if self.is_empty() {
            Ok(c)
        } else {
            Err(ApiError::bad("this verb takes no arguments"))
        }
    }
}

fn add(args: Args) -> Result<Command, ApiError> {
    let Args {
        urls: Some(urls),
        host: None,
        prefix: None,
        delay_ms: None,
    } = args
    else {
        return Err(ApiError::bad("add takes {\"urls\": [\"http://...\", ...]}"));
    };
    if urls.is_empty() {
        return Err(ApiError::bad("no URLs to add"));
    }
    if urls.len() > MAX_ADD_URLS {
        return Err(ApiError::new(
            413,
            "too-many-urls",
            format!("{} URLs; at most {MAX_ADD_URLS} per request", urls.len()),
        ));
    }
    let urls: Vec<String> = urls.into_iter().map(|u| u.trim().to_owned()).collect();
    for u in &urls {
        if let Err(reason) = crate::add::check_url(u) {
            return Err(ApiError::bad(format!("{reason}: {u:?}")));
        }
    }
    Ok(Command::Add(urls))
}

fn block(args: Args) -> Result<Command, ApiError> {
    match args {
        Args {
            host: Some(h),
            prefix: None,
            urls: None,
            delay_ms: None,
        } => Ok(Command::Block(Block::host(&h).map_err(ApiError::bad)?)),
        Args {
            prefix: Some(p),
            host: None,
            urls: None,
            delay_ms: None,
        } => Ok(Command::Block(Block::prefix(&p).map_err(ApiError::bad)?)),
        _ => Err(ApiError::bad(
            "block takes {\"host\": \"example.com\"} or {\"prefix\": \"http://example.com/a/\"}",
        )),
    }
}

fn delay(args: Args) -> Result<Command, ApiError> {
    let Args {
        host: Some(h),
        delay_ms: Some(delay_ms),
        urls: None,
        prefix: None,
    } = args
    else {
        return Err(ApiError::bad(
            "delay takes {\"host\": \"example.com\", \"delay_ms\": 5000}",
        ));
    };
    if delay_ms > MAX_DELAY_MS {
        return Err(ApiError::new(
            422,
            "delay-too-long",
            format!("delay_ms {delay_ms} over one day ({MAX_DELAY_MS}); block the host instead"),
        ));
    }
    let host = super::rules::normalize_host(&h).map_err(ApiError::bad)?;
    Ok(Command::Delay { host, delay_ms })
}

/// The credentials of a request, as its fields carry them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Credentials<'a> {
    /// `Authorization` (`Bearer TOKEN`).
    pub authorization: Option<&'a [u8]>,
    /// `X-Trawl-Token`.
    pub token: Option<&'a [u8]>,
    /// `Origin`.
    pub origin: Option<&'a [u8]>,
    /// `Host` (already checked to name the listener).
    pub host: Option<&'a [u8]>,
}

/// Checks a control request: the token (either field; compared in constant time)
/// and `Origin` (absent, as from curl and `trawl ctl`, or the listener's own origin
/// `http://HOST`, as from the status page).
///
/// # Errors
/// `401` no or a wrong token, `403` a cross-origin request.
pub fn authorize(c: &Credentials<'_>, expected: &str) -> Result<(), ApiError> {
    if let Some(origin) = c.origin {
        let same = c.host.is_some_and(|h| {
            origin
                .strip_prefix(b"http://")
                .is_some_and(|o| o.eq_ignore_ascii_case(h.trim_ascii()))
        });
        if !same {
            return Err(ApiError::new(
                403,
                "cross-origin",
                "requests from another origin are refused",
            ));
        }
    }
    has_token(c, expected)
}

/// Checks only the token (read-only views off loopback).
///
/// # Errors
/// `401` no or a wrong token.
pub fn has_token(c: &Credentials<'_>, expected: &str) -> Result<(), ApiError> {
    let given = c
        .token
        .map(<[u8]>::trim_ascii)
        .or_else(|| {
            c.authorization.and_then(|a| {
                let a = a.trim_ascii();
                let (scheme, rest) = a.split_at_checked(7)?;
                scheme
                    .eq_ignore_ascii_case(b"bearer ")
                    .then(|| rest.trim_ascii())
            })
        })
        .ok_or_else(|| {
            ApiError::new(
                401,
                "no-token",
                "a token is required: Authorization: Bearer TOKEN (OUT/control.token)",
            )
        })?;
    if constant_time_eq(given, expected.as_bytes()) && !expected.is_empty() {
        Ok(())
    } else {
        Err(ApiError::new(401, "bad-token", "wrong token"))
    }
}

/// Equality whose time depends on the lengths only.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn post(path: &str, body: &str) -> Result<Command, ApiError> {
        parse_command("POST", &format!("{CONTROL_PREFIX}{path}"), body.as_bytes())
    }

    #[test]
    fn every_verb_parses() {
        assert_eq!(post("pause", ""), Ok(Command::Pause));
        assert_eq!(post("resume", "{}"), Ok(Command::Resume));
        assert_eq!(post("checkpoint", " \n"), Ok(Command::Checkpoint));
        assert_eq!(post("stop?now=1", ""), Ok(Command::Stop));
        assert_eq!(
            post("add", r#"{"urls":[" http://a.test/x "]}"#),
            Ok(Command::Add(vec!["http://a.test/x".to_owned()]))
        );
        assert_eq!(
            post("block", r#"{"host":"A.test:8080"}"#),
            Ok(Command::Block(Block::Host("a.test:8080".to_owned())))
        );
        assert_eq!(
            post("block", r#"{"prefix":"http://A.test/p/"}"#),
            Ok(Command::Block(Block::Prefix("http://a.test/p/".to_owned())))
        );
        assert_eq!(
            post("delay", r#"{"host":"a.test","delay_ms":2500}"#),
            Ok(Command::Delay {
                host: "a.test".to_owned(),
                delay_ms: 2500
            })
        );
    }

    #[test]
    fn bad_requests_get_clear_errors() {
        let status = |r: Result<Command, ApiError>| r.map_err(|e| (e.status, e.code));
        assert_eq!(status(post("explode", "")), Err((404, "unknown-verb")));
        assert_eq!(
            status(parse_command("GET", "/api/control/pause", b"")),
            Err((405, "method-not-allowed"))
        );
        assert_eq!(status(post("pause", "{")), Err((400, "bad-request")));
        assert_eq!(status(post("pause", "[1]")), Err((400, "bad-request")));
        assert_eq!(
            status(post("pause", "\u{0}\u{ff}")),
            Err((400, "bad-request"))
        );
        assert_eq!(
            status(post("pause", r#"{"host":"a"}"#)),
            Err((400, "bad-request"))
        );
        assert_eq!(
            status(post("pause", r#"{"bogus":1}"#)),
            Err((400, "bad-request"))
        );
        assert_eq!(status(post("add", "{}")), Err((400, "bad-request")));
        assert_eq!(
            status(post("add", r#"{"urls":[]}"#)),
            Err((400, "bad-request"))
        );
        assert_eq!(
            status(post("add", r#"{"urls":["ftp://x/"]}"#)),
            Err((400, "bad-request"))
        );
        assert_eq!(
            status(post("add", r#"{"urls":"http://a/"}"#)),
            Err((400, "bad-request"))
        );
        let many: Vec<String> = (0..=MAX_ADD_URLS)
            .map(|i| format!("http://a.test/{i}"))
            .collect();
        let body = serde_json::json!({ "urls": many }).to_string();
        assert_eq!(status(post("add", &body)), Err((413, "too-many-urls")));
        let huge = "x".repeat(MAX_BODY_BYTES + 1);
        assert_eq!(status(post("add", &huge)), Err((413, "body-too-large")));
        assert_eq!(
            status(post("block", r#"{"host":"a","prefix":"http://a/"}"#)),
            Err((400, "bad-request"))
        );
        assert_eq!(
            status(post("block", r#"{"host":"a/b"}"#)),
            Err((400, "bad-request"))
        );
        assert_eq!(
            status(post("block", r#"{"host":""}"#)),
            Err((400, "bad-request"))
        );
        assert_eq!(
            status(post("block", r#"{"prefix":"a.test/"}"#)),
            Err((400, "bad-request"))
        );
        assert_eq!(
            status(post("delay", r#"{"host":"a"}"#)),
            Err((400, "bad-request"))
        );
        assert_eq!(
            status(post("delay", r#"{"host":"a","delay_ms":-1}"#)),
            Err((400, "bad-request"))
        );
        assert_eq!(
            status(post("delay", r#"{"host":"a","delay_ms":99999999999}"#)),
            Err((422, "delay-too-long"))
        );
        let e = post("explode", "").unwrap_err();
        let json: serde_json::Value = serde_json::from_str(&e.json()).unwrap();
        assert_eq!(json["ok"], false);
        assert_eq!(json["error"], "unknown-verb");
        assert_eq!(e.status_line(), "404 Not Found");
    }

    proptest::proptest! {
        /// Whatever a client sends, the parser answers a command or a 4xx; it never
        /// panics.
        #[test]
        fn any_request_is_a_command_or_a_4xx(
            method in "[A-Z]{0,8}",
            verb in proptest::sample::select(vec![
                "pause", "resume", "checkpoint", "stop", "add", "block", "delay", "x", "",
            ]),
            body in proptest::collection::vec(proptest::num::u8::ANY, 0..256),
            json_body in "\\{(\"(urls|host|prefix|delay_ms)\":(\"[a-z:/.]{0,20}\"|[0-9]{1,12}|\\[\"http://a/\"\\]),?){0,3}\\}",
        ) {
            for b in [body.as_slice(), json_body.as_bytes()] {
                match parse_command(&method, &format!("{CONTROL_PREFIX}{verb}"), b) {
                    Ok(_) => proptest::prop_assert_eq!(method.as_str(), "POST"),
                    Err(e) => proptest::prop_assert!((400..500).contains(&e.status)),
                }
            }
        }

        #[test]
        fn any_credentials_are_checked_without_panic(
            auth in proptest::collection::vec(proptest::num::u8::ANY, 0..80),
            origin in proptest::collection::vec(proptest::num::u8::ANY, 0..40),
        ) {
            let c = Credentials {
                authorization: Some(&auth),
                token: None,
                origin: Some(&origin),
                host: Some(b"127.0.0.1:1"),
            };
            proptest::prop_assert!(authorize(&c, &"ab".repeat(32)).is_err());
        }
    }

    #[test]
    fn tokens_and_origins_are_checked() {
        let token = "ab".repeat(32);
        let host = Some(b"127.0.0.1:9898".as_slice());
        let ok = |c: Credentials<'_>| authorize(&c, &token).map_err(|e| (e.status, e.code));
        let bearer = format!("Bearer {token}");
        let good = Credentials {
            authorization: Some(bearer.as_bytes()),
            host,
            ..Default::default()
        };
        assert_eq!(ok(good), Ok(()));
        let header = Credentials {
            token: Some(token.as_bytes()),
            host,
            origin: Some(b"http://127.0.0.1:9898"),
            ..Default::default()
        };
        assert_eq!(ok(header), Ok(()));
        assert_eq!(
            ok(Credentials {
                host,
                ..Default::default()
            }),
            Err((401, "no-token"))
        );
        assert_eq!(
            ok(Credentials {
                token: Some(b"abab"),
                host,
                ..Default::default()
            }),
            Err((401, "bad-token"))
        );
        assert_eq!(
            ok(Credentials {
                authorization: Some(b"Basic abc"),
                host,
                ..Default::default()
            }),
            Err((401, "no-token"))
        );
        // Another origin is refused even with the right token.
        assert_eq!(
            ok(Credentials {
                token: Some(token.as_bytes()),
                host,
                origin: Some(b"http://evil.example"),
                ..Default::default()
            }),
            Err((403, "cross-origin"))
        );
        assert_eq!(
            ok(Credentials {
                origin: Some(b"null"),
                host,
                ..Default::default()
            }),
            Err((403, "cross-origin"))
        );
        // An empty expected token never matches.
        assert!(has_token(
            &Credentials {
                token: Some(b""),
                ..Default::default()
            },
            ""
        )
        .is_err());
    }
}

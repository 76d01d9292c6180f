//! `POST /api/control/<verb>` on the metrics listener (`docs/control.md`):
//! the body read (bounded in bytes and time), the token and `Origin` checked, the
//! command parsed (`crate::control`) and carried out ([`Operator::apply`]). Every
//! answer is JSON; every refusal a 4xx with a code and a sentence.

use std::io::{self, Read};
use std::net::TcpStream;
use std::time::Instant;

use crate::control::{self, ApiError, Credentials};
use crate::engine::control::Operator;
use crate::http::IncomingRequest;

/// The answer to a control request whose head is `head`: `early` holds the bytes read
/// after the head (the start of the body); the rest is read from `stream` until
/// `deadline`. Returns the status line and the JSON body.
pub(super) fn answer(
    head: &IncomingRequest,
    early: &[u8],
    stream: &mut TcpStream,
    operator: Option<&Operator>,
    deadline: Instant,
) -> (&'static str, String) {
    let result = handle(head, early, stream, operator, deadline);
    match result {
        Ok(v) => ("200 OK", v.to_string()),
        Err(e) => (e.status_line(), e.json()),
    }
}

fn handle(
    head: &IncomingRequest,
    early: &[u8],
    stream: &mut TcpStream,
    operator: Option<&Operator>,
    deadline: Instant,
) -> Result<serde_json::Value, ApiError> {
    let Some(operator) = operator else {
        return Err(ApiError::new(
            404,
            "no-control",
            "this listener serves no control API",
        ));
    };
    // Credentials before the body: a stranger's request is not read further.
    control::authorize(&credentials(head), operator.token())?;
    let body = read_body(head, early, stream, deadline)?;
    let command = control::parse_command(&head.method, &head.target, &body)?;
    operator.apply(command)
}

/// The credential fields of `head`.
pub(super) fn credentials(head: &IncomingRequest) -> Credentials<'_> {
    Credentials {
        authorization: head.header("authorization"),
        token: head.header("x-trawl-token"),
        origin: head.header("origin"),
        host: head.header("host"),
    }
}

/// The body by `Content-Length` (none: empty), at most [`control::MAX_BODY_BYTES`].
fn read_body(
    head: &IncomingRequest,
    early: &[u8],
    stream: &mut TcpStream,
    deadline: Instant,
) -> Result<Vec<u8>, ApiError> {
    if head.header("transfer-encoding").is_some() {
        return Err(ApiError::new(
            411,
            "length-required",
            "send the body with Content-Length, not chunked",
        ));
    }
    let len = match head.header("content-length") {
        None => 0,
        Some(v) => std::str::from_utf8(v)
            .ok()
            .and_then(|t| t.trim().parse::<usize>().ok())
            .ok_or_else(|| ApiError::new(400, "bad-request", "bad Content-Length"))?,
    };
    if len > control::MAX_BODY_BYTES {
        return Err(ApiError::new(
            413,
            "body-too-large",
            format!("body over {} bytes", control::MAX_BODY_BYTES),
        ));
    }
    let mut body = Vec::with_capacity(len);
    body.extend_from_slice(early.get(..len.min(early.len())).unwrap_or_default());
    let mut chunk = [0u8; 8192];
    while body.len() < len {
        if Instant::now() >= deadline {
            return Err(timeout());
        }
        let want = (len - body.len()).min(chunk.len());
        let Some(space) = chunk.get_mut(..want) else {
            break;
        };
        match stream.read(space) {
            Ok(0) => return Err(timeout()),
            Ok(n) => body.extend_from_slice(space.get(..n).unwrap_or_default()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Err(timeout()),
        }
    }
    Ok(body)
}

fn timeout() -> ApiError {
    ApiError::new(400, "incomplete-body", "the body did not arrive in time")
}

//! A refused control request ([`ApiError`]): its HTTP status, a stable code and a
//! sentence, shared by the request parser and the rules, which refuse on their own
//! grounds (a delay under its floor, a full rule set).

use std::fmt;

/// A refused control request: its HTTP status, a stable code and a sentence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    pub code: &'static str,
    pub message: String,
}

impl ApiError {
    pub fn new(status: u16, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    pub(super) fn bad(message: impl Into<String>) -> Self {
        Self::new(400, "bad-request", message)
    }

    /// The status line text (`"400 Bad Request"`).
    pub fn status_line(&self) -> &'static str {
        status_line(self.status)
    }

    /// The JSON body: `{"ok":false,"error":CODE,"message":TEXT}`.
    pub fn json(&self) -> String {
        serde_json::json!({ "ok": false, "error": self.code, "message": self.message }).to_string()
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.status, self.code, self.message)
    }
}

impl std::error::Error for ApiError {}

/// The reason phrase of the statuses the control API answers with.
pub fn status_line(status: u16) -> &'static str {
    match status {
        200 => "200 OK",
        400 => "400 Bad Request",
        401 => "401 Unauthorized",
        403 => "403 Forbidden",
        404 => "404 Not Found",
        405 => "405 Method Not Allowed",
        409 => "409 Conflict",
        411 => "411 Length Required",
        413 => "413 Content Too Large",
        415 => "415 Unsupported Media Type",
        422 => "422 Unprocessable Content",
        503 => "503 Service Unavailable",
        _ => "500 Internal Server Error",
    }
}

//! How failures become [`After::Failed`]: mapping socket, HTTP and decoding errors to
//! the [`FailReason`] an outcome reports.

use std::io;

use super::exchange::{Exchange, ResponseProgress};
use super::After;
use crate::fetch::FailReason;
use crate::http::{DecodeError, HttpError};

/// A failed `connect()` (at once or reported later by the socket).
pub(crate) fn connect_reason(e: &io::Error) -> FailReason {
    match e.kind() {
        io::ErrorKind::ConnectionRefused => FailReason::Refused,
        io::ErrorKind::ConnectionReset => FailReason::Reset,
        _ => FailReason::Connect(e.to_string()),
    }
}

pub(super) fn io_reason(e: &io::Error) -> FailReason {
    match e.kind() {
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => FailReason::Reset,
        io::ErrorKind::UnexpectedEof => FailReason::ClosedEarly,
        _ => FailReason::Io(e.to_string()),
    }
}

pub(super) fn http_reason(e: HttpError) -> FailReason {
    match e {
        HttpError::BodyTooLarge => FailReason::TooLarge,
        HttpError::ClosedBeforeResponse => FailReason::ClosedEarly,
        e => FailReason::Protocol(e),
    }
}

pub(super) fn decode_reason(e: DecodeError) -> FailReason {
    match e {
        DecodeError::TooLarge | DecodeError::RatioExceeded => FailReason::TooLarge,
        e => FailReason::Decode(e),
    }
}

/// A failure that is neither retried nor sent to another address.
pub(super) fn failed(
    ex: Exchange,
    reading: Option<Box<ResponseProgress>>,
    reason: FailReason,
) -> After {
    After::Failed {
        ex,
        reading,
        reason,
        retryable: false,
        next_addr: false,
    }
}

/// A connect failure: the loop may try the host's next address.
pub(super) fn connect_failed(ex: Exchange, e: &io::Error) -> After {
    After::Failed {
        ex,
        reading: None,
        reason: connect_reason(e),
        retryable: false,
        next_addr: true,
    }
}

//! The hostile behaviours (profile `hostile`), each a scripted misbehaviour on the raw
//! stream. Every one is bounded in time and bytes and ends at server shutdown.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::watch;

use super::conn::{write_response, Stream};
use crate::bomb;
use crate::hash::{hash_bytes, Rng};
use crate::hosts::HostileKind;
use crate::site::{Framing, Response};

/// What happened.
#[derive(Debug, Clone, Copy)]
pub struct Outcome {
    /// Status sent (0 if no status line was sent).
    pub status: u16,
    /// Body bytes sent.
    pub body_bytes: u64,
    /// Whether the connection may serve another request.
    pub keep_open: bool,
}

/// Longest a slow or silent behaviour lasts.
pub const MAX_HOSTILE_SECS: u64 = 600;
/// Most bytes an endless body sends.
pub const MAX_ENDLESS_BYTES: u64 = 8 << 30;

async fn sleep_or_shutdown(d: Duration, shutdown: &mut watch::Receiver<bool>) -> bool {
    tokio::select! {
        () = tokio::time::sleep(d) => true,
        _ = shutdown.changed() => false,
    }
}

fn head(status: u16, lines: &[String]) -> Vec<u8> {
    let mut h = format!("HTTP/1.1 {status} {}\r\n", super::conn::reason(status)).into_bytes();
    for l in lines {
        h.extend_from_slice(l.as_bytes());
        h.extend_from_slice(b"\r\n");
    }
    h.extend_from_slice(b"\r\n");
    h
}

/// Run the behaviour of `resp.hostile` (a response with `hostile == None` is written
/// normally).
pub async fn run<S: Stream>(
    stream: &mut S,
    resp: &Response,
    target: &str,
    head_only: bool,
    shutdown: &mut watch::Receiver<bool>,
) -> Outcome {
    let fail = Outcome {
        status: 0,
        body_bytes: 0,
        keep_open: false,
    };
    let Some(kind) = resp.hostile else {
        let mut out = Vec::new();
        let n = write_response(
            &mut out,
            resp,
            Framing::ContentLength,
            head_only,
            false,
            "\r\n",
        );
        let ok = stream.write_all(&out).await.is_ok();
        return Outcome {
            status: resp.status,
            body_bytes: n,
            keep_open: ok,
        };
    };
    let ctype = resp
        .header("Content-Type")
        .unwrap_or("text/html")
        .to_owned();
    let body = &resp.body;
    match kind {
        HostileKind::SlowHeaders => {
            let mut out = Vec::new();
            let n = write_response(
                &mut out,
                resp,
                Framing::ContentLength,
                head_only,
                true,
                "\r\n",
            );
            let head_len = out.len() - n as usize;
            for i in 0..head_len.min(MAX_HOSTILE_SECS as usize) {
                if stream
                    .write_all(out.get(i..=i).unwrap_or(&[]))
                    .await
                    .is_err()
                {
                    return Outcome {
                        status: resp.status,
                        ..fail
                    };
                }
                let _ = stream.flush().await;
                if !sleep_or_shutdown(Duration::from_secs(1), shutdown).await {
                    return Outcome {
                        status: resp.status,
                        ..fail
                    };
                }
            }
            let ok = stream
                .write_all(out.get(head_len..).unwrap_or(&[]))
                .await
                .is_ok();
            Outcome {
                status: resp.status,
                body_bytes: if ok { n } else { 0 },
                keep_open: false,
            }
        }
        HostileKind::EndlessBody => {
            let h = head(
                200,
                &[
                    format!("Content-Type: {ctype}"),
                    "Transfer-Encoding: chunked".to_owned(),
                ],
            );
            if stream.write_all(&h).await.is_err() {
                return Outcome {
                    status: 200,
                    ..fail
                };
            }
            let mut chunk = format!("{:x}\r\n", 16_384).into_bytes();
            chunk.extend(std::iter::repeat_n(b'a', 16_384));
            chunk.extend_from_slice(b"\r\n");
            let mut sent = 0u64;
            let started = std::time::Instant::now();
            while sent < MAX_ENDLESS_BYTES && started.elapsed().as_secs() < MAX_HOSTILE_SECS {
                if stream.write_all(&chunk).await.is_err() {
                    break;
                }
                sent += 16_384;
                if !sleep_or_shutdown(Duration::from_millis(5), shutdown).await {
                    break;
                }
            }
            Outcome {
                status: 200,
                body_bytes: sent,
                keep_open: false,
            }
        }
        HostileKind::LengthTooLong => {
            let h = head(
                200,
                &[
                    format!("Content-Type: {ctype}"),
                    format!("Content-Length: {}", body.len() * 2),
                ],
            );
            let _ = stream.write_all(&h).await;
            let ok = stream.write_all(body).await.is_ok();
            let _ = stream.shutdown().await;
            Outcome {
                status: 200,
                body_bytes: if ok { body.len() as u64 } else { 0 },
                keep_open: false,
            }
        }
        HostileKind::LengthTooShort => {
            let h = head(
                200,
                &[
                    format!("Content-Type: {ctype}"),
                    format!("Content-Length: {}", body.len() / 2),
                ],
            );
            let _ = stream.write_all(&h).await;
            let ok = stream.write_all(body).await.is_ok();
            let _ = stream
                .write_all(b"HTTP/1.1 999 SURPLUS\r\n\r\ngarbage after the declared length")
                .await;
            let _ = stream.shutdown().await;
            Outcome {
                status: 200,
                body_bytes: if ok { body.len() as u64 } else { 0 },
                keep_open: false,
            }
        }
        HostileKind::BadChunks => {
            let h = head(
                200,
                &[
                    format!("Content-Type: {ctype}"),
                    "Transfer-Encoding: chunked".to_owned(),
                ],
            );
            let variants: [&[u8]; 5] = [
                b"zz\r\nhello\r\n0\r\n\r\n",
                b"-5\r\nhello\r\n0\r\n\r\n",
                b"FFFFFFFFFFFFFFFFFFFFFFFF\r\nhello\r\n0\r\n\r\n",
                b"4\r\nhello world, longer than four\r\n0\r\n\r\n",
                b"5\x00\r\nhello\r\n0\r\n\r\n",
            ];
            let v = variants[(hash_bytes(5, target.as_bytes()) % 5) as usize];
            let mut out = h;
            out.extend_from_slice(b"10\r\n<html><body>ok!!\r\n");
            out.extend_from_slice(v);
            let _ = stream.write_all(&out).await;
            let _ = stream.shutdown().await;
            Outcome {
                status: 200,
                body_bytes: 16,
                keep_open: false,
            }
        }
        HostileKind::HugeHeaderBlock => {
            let filler = "a".repeat(64 * 1024);
            let mut lines: Vec<String> =
                (0..16).map(|i| format!("X-Filler-{i}: {filler}")).collect();
            lines.push(format!("Content-Type: {ctype}"));
            lines.push(format!("Content-Length: {}", body.len()));
            lines.push("Connection: close".to_owned());
            let mut out = head(200, &lines);
            if !head_only {
                out.extend_from_slice(body);
            }
            let ok = stream.write_all(&out).await.is_ok();
            let _ = stream.shutdown().await;
            Outcome {
                status: 200,
                body_bytes: if ok && !head_only {
                    body.len() as u64
                } else {
                    0
                },
                keep_open: false,
            }
        }
        HostileKind::ManyHeaders => {
            let mut lines: Vec<String> = (0..10_000).map(|i| format!("X-H-{i}: {i}")).collect();
            lines.push(format!("Content-Type: {ctype}"));
            lines.push(format!("Content-Length: {}", body.len()));
            lines.push("Connection: close".to_owned());
            let mut out = head(200, &lines);
            if !head_only {
                out.extend_from_slice(body);
            }
            let ok = stream.write_all(&out).await.is_ok();
            let _ = stream.shutdown().await;
            Outcome {
                status: 200,
                body_bytes: if ok && !head_only {
                    body.len() as u64
                } else {
                    0
                },
                keep_open: false,
            }
        }
        HostileKind::BareLf => {
            let mut out = Vec::new();
            let mut plain = resp.clone();
            plain.hostile = None;
            let n = write_response(
                &mut out,
                &plain,
                Framing::ContentLength,
                head_only,
                false,
                "\n",
            );
            let ok = stream.write_all(&out).await.is_ok();
            Outcome {
                status: resp.status,
                body_bytes: if ok { n } else { 0 },
                keep_open: ok,
            }
        }
        HostileKind::GzipBomb => {
            let (payload, enc) = if target.starts_with("/single/") {
                (bomb::single(), "gzip")
            } else {
                (bomb::double(), "gzip, gzip")
            };
            let h = head(
                200,
                &[
                    "Content-Type: text/html; charset=utf-8".to_owned(),
                    format!("Content-Encoding: {enc}"),
                    format!("Content-Length: {}", payload.len()),
                ],
            );
            let mut ok = stream.write_all(&h).await.is_ok();
            if ok && !head_only {
                ok = stream.write_all(payload).await.is_ok();
            }
            Outcome {
                status: 200,
                body_bytes: if ok && !head_only {
                    payload.len() as u64
                } else {
                    0
                },
                keep_open: ok,
            }
        }
        HostileKind::ResetMidBody => {
            let h = head(
                200,
                &[
                    format!("Content-Type: {ctype}"),
                    format!("Content-Length: {}", body.len()),
                ],
            );
            let half = body.get(..body.len() / 2).unwrap_or(&[]);
            let _ = stream.write_all(&h).await;
            let ok = stream.write_all(half).await.is_ok();
            let _ = stream.flush().await;
            // Give the bytes a moment to leave, then RST.
            let _ = sleep_or_shutdown(Duration::from_millis(50), shutdown).await;
            stream.set_reset();
            Outcome {
                status: 200,
                body_bytes: if ok { half.len() as u64 } else { 0 },
                keep_open: false,
            }
        }
        HostileKind::CloseBeforeResponse => {
            let _ = stream.shutdown().await;
            fail
        }
        HostileKind::NeverAnswer => {
            let mut sink = [0u8; 4096];
            let deadline = tokio::time::sleep(Duration::from_secs(MAX_HOSTILE_SECS));
            tokio::pin!(deadline);
            loop {
                tokio::select! {
                    r = stream.read(&mut sink) => match r {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    },
                    () = &mut deadline => break,
                    _ = shutdown.changed() => break,
                }
            }
            fail
        }
        HostileKind::Http09 => {
            let ok = stream.write_all(body).await.is_ok();
            let _ = stream.shutdown().await;
            Outcome {
                status: 0,
                body_bytes: if ok { body.len() as u64 } else { 0 },
                keep_open: false,
            }
        }
        HostileKind::Garbage => {
            let mut rng = Rng::new(hash_bytes(21, target.as_bytes()));
            let junk: Vec<u8> = (0..4096).map(|_| rng.next_u64() as u8).collect();
            let ok = stream.write_all(&junk).await.is_ok();
            let _ = stream.shutdown().await;
            Outcome {
                status: 0,
                body_bytes: if ok { junk.len() as u64 } else { 0 },
                keep_open: false,
            }
        }
        HostileKind::TlsHandshakeFailure | HostileKind::TlsExpiredCert => {
            // Reached only by a client that ignored the certificate: answer normally.
            let mut out = Vec::new();
            let mut plain = resp.clone();
            plain.hostile = None;
            let n = write_response(
                &mut out,
                &plain,
                Framing::ContentLength,
                head_only,
                false,
                "\r\n",
            );
            let ok = stream.write_all(&out).await.is_ok();
            Outcome {
                status: resp.status,
                body_bytes: if ok { n } else { 0 },
                keep_open: ok,
            }
        }
    }
}

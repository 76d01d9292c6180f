//! The SOCKS5 handshake (RFC 1928), with username/password authentication (RFC 1929),
//! sans-IO: [`Socks5Client`] queues each message to write and reads each reply; the
//! connection phase (`net/conn/`) moves the bytes.
//!
//! Greeting → (Auth) → Request → Reply. The greeting offers "no authentication" and,
//! with credentials, "username/password", as curl does. `socks5` sends the origin's
//! address (ATYP 1 or 4); `socks5h` sends its name (ATYP 3) for the proxy to resolve. A
//! proxy that speaks before its turn, or past its last reply, is a protocol error: the
//! surplus after the final reply is returned for the caller to refuse. A failure reply
//! is reported once its first two bytes are in (some servers close without the rest).

#![deny(clippy::indexing_slicing)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use super::secret::{Credentials, Secret};
use super::status::{OriginFailure, ProxyErrorKind, ProxyVerdict};

/// SOCKS protocol version 5.
pub const VERSION: u8 = 5;
/// Method: no authentication.
pub const METHOD_NONE: u8 = 0x00;
/// Method: username/password (RFC 1929).
pub const METHOD_USER_PASS: u8 = 0x02;
/// Method reply: none of the offered methods is acceptable.
pub const METHOD_NO_ACCEPTABLE: u8 = 0xff;
/// Address type: IPv4.
pub const ATYP_V4: u8 = 1;
/// Address type: a domain name.
pub const ATYP_NAME: u8 = 3;
/// Address type: IPv6.
pub const ATYP_V6: u8 = 4;
/// The longest name, user or password a message can carry (one length byte).
pub const MAX_FIELD_BYTES: usize = 255;
/// The longest server message: a reply with a 255-byte name.
pub const MAX_REPLY_BYTES: usize = 4 + 1 + MAX_FIELD_BYTES + 2;

/// Where the proxy should connect.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target<'a> {
    /// An address trawl resolved (`socks5`).
    Addr(SocketAddr),
    /// A name and port for the proxy to resolve (`socks5h`).
    Name(&'a str, u16),
}

/// Why a SOCKS5 handshake failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Socks5Error {
    /// The target name is empty or over 255 bytes.
    #[error("host name too long for SOCKS5")]
    Name,
    /// The user name is empty or over 255 bytes, or the password over 255 bytes.
    #[error("SOCKS5 user name and password must be 1-255 and 0-255 bytes")]
    CredLength,
    /// A reply with another version than 5 (1 for the auth reply).
    #[error("SOCKS version {0} in proxy reply")]
    Version(u8),
    /// The proxy accepted none of our methods (`0xFF`).
    #[error("SOCKS5 proxy accepted no offered method")]
    NoAcceptableMethod {
        /// Whether we offered username/password (then it is an authentication failure).
        offered_auth: bool,
    },
    /// The proxy chose a method we did not offer.
    #[error("SOCKS5 proxy chose method {0:#04x}, not offered")]
    Method(u8),
    /// RFC 1929 status other than 0.
    #[error("SOCKS5 proxy refused the user name and password (status {0})")]
    AuthFailed(u8),
    /// A failure reply (REP other than 0).
    #[error("SOCKS5 proxy reply {0:#04x}: {msg}", msg = rep_message(*.0))]
    Reply(u8),
    /// An address type other than 1, 3 or 4.
    #[error("SOCKS5 reply address type {0}")]
    AddressType(u8),
    /// The proxy sent bytes before its turn.
    #[error("SOCKS5 proxy sent bytes out of turn")]
    OutOfTurn,
}

impl Socks5Error {
    /// Whose failure this is: see [`rep_verdict`] for replies; a refused method or
    /// password is [`ProxyErrorKind::Auth`]; a malformed exchange is
    /// [`ProxyErrorKind::Protocol`].
    pub fn verdict(self) -> ProxyVerdict {
        match self {
            Self::Reply(rep) => rep_verdict(rep),
            Self::NoAcceptableMethod { offered_auth: true } | Self::AuthFailed(_) => {
                ProxyVerdict::Own(ProxyErrorKind::Auth)
            }
            // The proxy wants credentials we were not given (microsocks with -u/-P
            // answers 0xFF to a greeting without user/password): missing credentials,
            // as a 407 without Proxy-Authorization.
            Self::NoAcceptableMethod {
                offered_auth: false,
            } => ProxyVerdict::Own(ProxyErrorKind::Auth),
            Self::Name | Self::CredLength => ProxyVerdict::Own(ProxyErrorKind::Error),
            Self::Version(_) | Self::Method(_) | Self::AddressType(_) | Self::OutOfTurn => {
                ProxyVerdict::Own(ProxyErrorKind::Protocol)
            }
        }
    }
}

/// The verdict for a REP code (notes §4): the destination's failures (3 network
/// unreachable, 4 host unreachable, 5 refused, 6 TTL expired) are the origin's; so is
/// 1, "general failure", the reply to a request the proxy took: microsocks 1.0.3 sends it
/// when the name does not resolve or the connect fails for another reason (measured,
/// docs/network.md "What the real servers send"), and counting it toward the origin
/// lets a dead name end like one trawl resolved. The rest (2 not allowed by ruleset, 7
/// command and 8 address type not supported, unassigned codes) are the proxy's.
pub fn rep_verdict(rep: u8) -> ProxyVerdict {
    match rep {
        0x01 | 0x03 | 0x04 => ProxyVerdict::Origin(OriginFailure::Unreachable),
        0x05 => ProxyVerdict::Origin(OriginFailure::Refused),
        0x06 => ProxyVerdict::Origin(OriginFailure::ConnectTimeout),
        0x02 | 0x07 | 0x08 => ProxyVerdict::Own(ProxyErrorKind::Error),
        _ => ProxyVerdict::Own(ProxyErrorKind::Protocol),
    }
}

/// RFC 1928 §6's text for a REP code.
pub fn rep_message(rep: u8) -> &'static str {
    match rep {
        0x00 => "succeeded",
        0x01 => "general SOCKS server failure",
        0x02 => "connection not allowed by ruleset",
        0x03 => "network unreachable",
        0x04 => "host unreachable",
        0x05 => "connection refused",
        0x06 => "TTL expired",
        0x07 => "command not supported",
        0x08 => "address type not supported",
        _ => "unassigned",
    }
}

/// The address the proxy bound for the connection (often all zeros).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bound {
    /// An address.
    Addr(SocketAddr),
    /// A name and port.
    Name(String, u16),
}

/// Parses a method selection reply: `Ok(None)` while incomplete, else the method and
/// the bytes used.
///
/// # Errors
/// [`Socks5Error::Version`] for a version other than 5.
pub fn parse_method_reply(buf: &[u8]) -> Result<Option<(u8, usize)>, Socks5Error> {
    match *buf {
        [VERSION, method, ..] => Ok(Some((method, 2))),
        [v, ..] if v != VERSION => Err(Socks5Error::Version(v)),
        _ => Ok(None),
    }
}

/// Parses an RFC 1929 status reply: `Ok(None)` while incomplete, else the status and
/// the bytes used. Version 1 is the RFC's; 5 is accepted too, as curl does.
///
/// # Errors
/// [`Socks5Error::Version`] for another version.
pub fn parse_auth_reply(buf: &[u8]) -> Result<Option<(u8, usize)>, Socks5Error> {
    match *buf {
        [1 | VERSION, status, ..] => Ok(Some((status, 2))),
        [] | [1 | VERSION] => Ok(None),
        [v, ..] => Err(Socks5Error::Version(v)),
    }
}

/// Parses a connect reply: `Ok(None)` while incomplete, else the bound address and the
/// bytes used.
///
/// # Errors
/// [`Socks5Error::Reply`] as soon as a failure code is in, [`Socks5Error::Version`] or
/// [`Socks5Error::AddressType`] for a malformed reply.
pub fn parse_reply(buf: &[u8]) -> Result<Option<(Bound, usize)>, Socks5Error> {
    let (rep, atyp) = match *buf {
        [v, ..] if v != VERSION => return Err(Socks5Error::Version(v)),
        [_, rep, ..] if rep != 0 => return Err(Socks5Error::Reply(rep)),
        [_, _, _, atyp, ..] => (0, atyp),
        _ => return Ok(None),
    };
    debug_assert_eq!(rep, 0);
    let (len, addr_at) = match atyp {
        ATYP_V4 => (4 + 4 + 2, 4),
        ATYP_V6 => (4 + 16 + 2, 4),
        ATYP_NAME => match buf.get(4) {
            Some(&n) => (4 + 1 + usize::from(n) + 2, 5),
            None => return Ok(None),
        },
        other => return Err(Socks5Error::AddressType(other)),
    };
    let Some(msg) = buf.get(..len) else {
        return Ok(None);
    };
    let addr = msg.get(addr_at..len - 2).unwrap_or(&[]);
    let port = match *msg.get(len - 2..).unwrap_or(&[]) {
        [hi, lo] => u16::from_be_bytes([hi, lo]),
        _ => return Ok(None),
    };
    let bound = match atyp {
        ATYP_V4 => {
            let octets: [u8; 4] = addr
                .try_into()
                .map_err(|_| Socks5Error::AddressType(atyp))?;
            Bound::Addr(SocketAddr::new(IpAddr::V4(Ipv4Addr::from(octets)), port))
        }
        ATYP_V6 => {
            let octets: [u8; 16] = addr
                .try_into()
                .map_err(|_| Socks5Error::AddressType(atyp))?;
            Bound::Addr(SocketAddr::new(IpAddr::V6(Ipv6Addr::from(octets)), port))
        }
        _ => Bound::Name(String::from_utf8_lossy(addr).into_owned(), port),
    };
    Ok(Some((bound, len)))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Method,
    Auth,
    Reply,
    Done,
}

/// The tunnel is open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Socks5Done {
    /// The address the proxy bound.
    pub bound: Bound,
    /// Bytes read past the last reply (any is a protocol error).
    pub surplus: usize,
}

/// One SOCKS5 handshake.
pub struct Socks5Client {
    /// The message being written (it may hold the password).
    out: Secret,
    written: usize,
    /// The RFC 1929 message, sent if the proxy picks username/password.
    auth: Option<Secret>,
    /// The connect request, sent after the method (and auth).
    request: Vec<u8>,
    /// The server message read so far.
    input: Vec<u8>,
    stage: Stage,
}

impl std::fmt::Debug for Socks5Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Socks5Client")
            .field("stage", &self.stage)
            .field("written", &self.written)
            .field("auth", &self.auth.is_some())
            .finish()
    }
}

impl Socks5Client {
    /// A handshake to `target`, offering username/password when `creds` is given.
    ///
    /// # Errors
    /// [`Socks5Error::Name`] or [`Socks5Error::CredLength`] when a field cannot fit its
    /// one length byte.
    pub fn new(target: Target<'_>, creds: Option<&Credentials>) -> Result<Self, Socks5Error> {
        let mut request = vec![VERSION, 0x01, 0x00];
        match target {
            Target::Addr(SocketAddr::V4(a)) => {
                request.push(ATYP_V4);
                request.extend_from_slice(&a.ip().octets());
                request.extend_from_slice(&a.port().to_be_bytes());
            }
            Target::Addr(SocketAddr::V6(a)) => {
                request.push(ATYP_V6);
                request.extend_from_slice(&a.ip().octets());
                request.extend_from_slice(&a.port().to_be_bytes());
            }
            Target::Name(name, port) => {
                let len = u8::try_from(name.len()).map_err(|_| Socks5Error::Name)?;
                if len == 0 {
                    return Err(Socks5Error::Name);
                }
                request.extend_from_slice(&[ATYP_NAME, len]);
                request.extend_from_slice(name.as_bytes());
                request.extend_from_slice(&port.to_be_bytes());
            }
        }
        let auth = creds.map(auth_message).transpose()?;
        let greeting = if auth.is_some() {
            vec![VERSION, 2, METHOD_NONE, METHOD_USER_PASS]
        } else {
            vec![VERSION, 1, METHOD_NONE]
        };
        Ok(Self {
            out: Secret::new(greeting),
            written: 0,
            auth,
            request,
            input: Vec::new(),
            stage: Stage::Method,
        })
    }

    /// The bytes of the current message not written yet.
    pub fn pending(&self) -> &[u8] {
        self.out.expose().get(self.written..).unwrap_or(&[])
    }

    /// Records that `n` more bytes were written.
    pub fn wrote(&mut self, n: usize) {
        self.written = self.written.saturating_add(n).min(self.out.len());
    }

    /// Whether a reply is awaited (the current message is out).
    pub fn wants_read(&self) -> bool {
        self.stage != Stage::Done && self.pending().is_empty()
    }

    /// Whether the connect request is out and its reply awaited: the proxy is dialling
    /// the origin (a timeout now is the origin's, not the proxy's).
    pub fn is_dialling(&self) -> bool {
        self.stage == Stage::Reply && self.pending().is_empty()
    }

    /// Reads server bytes: `Ok(None)` while the handshake goes on (check
    /// [`Socks5Client::pending`] for the next message), the result once the connect
    /// reply is in.
    ///
    /// # Errors
    /// [`Socks5Error`] for a refusal or a malformed exchange.
    pub fn feed(&mut self, input: &[u8]) -> Result<Option<Socks5Done>, Socks5Error> {
        if input.is_empty() {
            return Ok(None);
        }
        if !self.wants_read() {
            return Err(Socks5Error::OutOfTurn);
        }
        let room = MAX_REPLY_BYTES.saturating_sub(self.input.len());
        let (now, later) = input.split_at(input.len().min(room));
        self.input.extend_from_slice(now);
        let (used, done) = match self.stage {
            Stage::Method => match parse_method_reply(&self.input)? {
                None => return Ok(None),
                Some((method, used)) => {
                    let next = self.after_method(method)?;
                    self.send(next);
                    (used, None)
                }
            },
            Stage::Auth => match parse_auth_reply(&self.input)? {
                None => return Ok(None),
                Some((0, used)) => {
                    let request = std::mem::take(&mut self.request);
                    self.send(request);
                    self.stage = Stage::Reply;
                    (used, None)
                }
                Some((status, _)) => return Err(Socks5Error::AuthFailed(status)),
            },
            Stage::Reply => match parse_reply(&self.input)? {
                None => return Ok(None),
                Some((bound, used)) => (used, Some(bound)),
            },
            Stage::Done => return Err(Socks5Error::OutOfTurn),
        };
        let surplus = self.input.len() - used + later.len();
        self.input.clear();
        match done {
            Some(bound) => {
                self.stage = Stage::Done;
                Ok(Some(Socks5Done { bound, surplus }))
            }
            None if surplus > 0 => Err(Socks5Error::OutOfTurn),
            None => Ok(None),
        }
    }

    fn after_method(&mut self, method: u8) -> Result<Vec<u8>, Socks5Error> {
        match (method, self.auth.take()) {
            (METHOD_NONE, _) => {
                self.stage = Stage::Reply;
                Ok(std::mem::take(&mut self.request))
            }
            (METHOD_USER_PASS, Some(auth)) => {
                self.stage = Stage::Auth;
                Ok(auth.expose().to_vec())
            }
            (METHOD_NO_ACCEPTABLE, auth) => Err(Socks5Error::NoAcceptableMethod {
                offered_auth: auth.is_some(),
            }),
            (other, _) => Err(Socks5Error::Method(other)),
        }
    }

    fn send(&mut self, message: Vec<u8>) {
        self.out = Secret::new(message);
        self.written = 0;
    }
}

/// RFC 1929's request: version 1, user, password.
fn auth_message(creds: &Credentials) -> Result<Secret, Socks5Error> {
    let user = creds.user.as_bytes();
    let pass = creds.pass.expose();
    let ulen = u8::try_from(user.len()).map_err(|_| Socks5Error::CredLength)?;
    let plen = u8::try_from(pass.len()).map_err(|_| Socks5Error::CredLength)?;
    if ulen == 0 {
        return Err(Socks5Error::CredLength);
    }
    let mut m = Vec::with_capacity(3 + user.len() + pass.len());
    m.extend_from_slice(&[1, ulen]);
    m.extend_from_slice(user);
    m.push(plen);
    m.extend_from_slice(pass);
    Ok(Secret::new(m))
}

#[cfg(test)]
mod tests {
    use super::super::secret::CredSource;
    use super::*;

    fn creds() -> Credentials {
        Credentials {
            user: "u".into(),
            pass: Secret::new(b"pw".to_vec()),
            source: CredSource::Url("--proxy".into()),
        }
    }

    const V4_OK: &[u8] = &[5, 0, 0, 1, 127, 0, 0, 1, 0x1f, 0x90];
    const NAME_OK: &[u8] = &[5, 0, 0, 3, 6, b'a', b'.', b't', b'e', b's', b't', 0, 80];

    fn v6_ok() -> Vec<u8> {
        let mut r = vec![5, 0, 0, 4];
        r.extend_from_slice(&Ipv6Addr::LOCALHOST.octets());
        r.extend_from_slice(&[1, 187]);
        r
    }

    #[test]
    fn messages_for_each_target() {
        let c = Socks5Client::new(Target::Addr("10.1.2.3:80".parse().expect("addr")), None)
            .expect("client");
        assert_eq!(c.pending(), [5, 1, 0]);
        assert_eq!(c.request, [5, 1, 0, 1, 10, 1, 2, 3, 0, 80]);
        let c = Socks5Client::new(Target::Addr("[::1]:443".parse().expect("addr")), None)
            .expect("client");
        assert_eq!(c.request.len(), 4 + 16 + 2);
        assert_eq!(c.request.get(3), Some(&ATYP_V6));
        let c = Socks5Client::new(Target::Name("a.test", 443), Some(&creds())).expect("client");
        assert_eq!(c.pending(), [5, 2, 0, 2]);
        assert_eq!(
            c.request,
            [5, 1, 0, 3, 6, b'a', b'.', b't', b'e', b's', b't', 1, 187]
        );
        assert_eq!(
            c.auth.as_ref().map(Secret::expose),
            Some(&[1, 1, b'u', 2, b'p', b'w'][..])
        );
        assert!(!format!("{c:?}").contains("pw"));
        let long = "a".repeat(256);
        assert_eq!(
            Socks5Client::new(Target::Name(&long, 1), None).map(|_| ()),
            Err(Socks5Error::Name)
        );
        assert_eq!(
            Socks5Client::new(Target::Name("", 1), None).map(|_| ()),
            Err(Socks5Error::Name)
        );
        let mut bad = creds();
        bad.user.clear();
        assert_eq!(
            Socks5Client::new(Target::Name("a", 1), Some(&bad)).map(|_| ()),
            Err(Socks5Error::CredLength)
        );
    }

    /// Every prefix of each valid reply (ATYP 1, 3, 4) is incomplete; the whole gives
    /// the bound address.
    #[test]
    fn every_prefix_of_valid_replies() {
        let v6 = v6_ok();
        let table: &[(&[u8], Bound)] = &[
            (V4_OK, Bound::Addr("127.0.0.1:8080".parse().expect("addr"))),
            (NAME_OK, Bound::Name("a.test".into(), 80)),
            (&v6, Bound::Addr("[::1]:443".parse().expect("addr"))),
        ];
        for (bytes, bound) in table {
            for cut in 0..bytes.len() {
                assert_eq!(parse_reply(&bytes[..cut]), Ok(None), "cut {cut}");
            }
            assert_eq!(parse_reply(bytes), Ok(Some((bound.clone(), bytes.len()))));
            let mut longer = bytes.to_vec();
            longer.push(0);
            assert_eq!(parse_reply(&longer), Ok(Some((bound.clone(), bytes.len()))));
        }
        for cut in 0..2 {
            assert_eq!(parse_method_reply(&[5, 2][..cut]), Ok(None));
        }
        assert_eq!(parse_method_reply(&[5, 2]), Ok(Some((2, 2))));
        assert_eq!(parse_method_reply(&[4]), Err(Socks5Error::Version(4)));
        assert_eq!(parse_auth_reply(&[]), Ok(None));
        assert_eq!(parse_auth_reply(&[1]), Ok(None));
        assert_eq!(parse_auth_reply(&[1, 0]), Ok(Some((0, 2))));
        assert_eq!(parse_auth_reply(&[5, 1]), Ok(Some((1, 2))));
        assert_eq!(parse_auth_reply(&[2, 0]), Err(Socks5Error::Version(2)));
        assert_eq!(parse_reply(&[5, 0, 0, 2]), Err(Socks5Error::AddressType(2)));
        assert_eq!(parse_reply(&[4, 0]), Err(Socks5Error::Version(4)));
    }

    #[test]
    fn every_rep_code() {
        use OriginFailure as O;
        use ProxyVerdict::{Origin, Own};
        let want = [
            (1, Origin(O::Unreachable)),
            (2, Own(ProxyErrorKind::Error)),
            (3, Origin(O::Unreachable)),
            (4, Origin(O::Unreachable)),
            (5, Origin(O::Refused)),
            (6, Origin(O::ConnectTimeout)),
            (7, Own(ProxyErrorKind::Error)),
            (8, Own(ProxyErrorKind::Error)),
            (9, Own(ProxyErrorKind::Protocol)),
            (0xff, Own(ProxyErrorKind::Protocol)),
        ];
        for (rep, verdict) in want {
            // Reported as soon as VER and REP are in, however short the rest.
            assert_eq!(parse_reply(&[5]), Ok(None));
            assert_eq!(parse_reply(&[5, rep]), Err(Socks5Error::Reply(rep)));
            assert_eq!(
                parse_reply(&[5, rep, 0, 1, 0, 0, 0, 0, 0, 0]),
                Err(Socks5Error::Reply(rep))
            );
            assert_eq!(Socks5Error::Reply(rep).verdict(), verdict, "rep {rep}");
            assert!(!Socks5Error::Reply(rep).to_string().is_empty());
        }
        assert_eq!(rep_message(5), "connection refused");
        assert_eq!(rep_message(0x42), "unassigned");
    }

    /// Drives a client through a scripted server, fed in chunks of `chunk` bytes.
    fn run(
        target: Target<'_>,
        creds: Option<&Credentials>,
        server: &[&[u8]],
        chunk: usize,
    ) -> (Vec<Vec<u8>>, Result<Option<Socks5Done>, Socks5Error>) {
        let mut c = Socks5Client::new(target, creds).expect("client");
        let mut sent = Vec::new();
        let mut last = Ok(None);
        for msg in server {
            sent.push(c.pending().to_vec());
            c.wrote(c.pending().len());
            assert!(c.wants_read());
            for piece in msg.chunks(chunk.max(1)) {
                last = c.feed(piece);
                if !matches!(last, Ok(None)) {
                    break;
                }
            }
            if last.is_err() {
                break;
            }
        }
        (sent, last)
    }

    #[test]
    fn handshakes() {
        let name = Target::Name("a.test", 443);
        for chunk in [1, 2, 3, 100] {
            // No authentication.
            let (sent, end) = run(name, None, &[&[5, 0], V4_OK], chunk);
            assert_eq!(sent.len(), 2);
            assert!(
                matches!(end, Ok(Some(Socks5Done { surplus: 0, .. }))),
                "{end:?}"
            );
            // Username/password, accepted (RFC 1929 status 0).
            let (sent, end) = run(name, Some(&creds()), &[&[5, 2], &[1, 0], NAME_OK], chunk);
            assert_eq!(
                sent.get(1).map(Vec::as_slice),
                Some(&[1, 1, b'u', 2, b'p', b'w'][..])
            );
            assert!(matches!(end, Ok(Some(_))), "{end:?}");
            // Offered, but the proxy needs none.
            let (sent, end) = run(name, Some(&creds()), &[&[5, 0], V4_OK], chunk);
            assert_eq!(sent.get(1).and_then(|m| m.get(3)), Some(&ATYP_NAME));
            assert!(matches!(end, Ok(Some(_))), "{end:?}");
            // Refused password, every non-zero status.
            for status in [1, 0xff] {
                let (_, end) = run(name, Some(&creds()), &[&[5, 2], &[1, status]], chunk);
                assert_eq!(end, Err(Socks5Error::AuthFailed(status)));
                assert_eq!(
                    Socks5Error::AuthFailed(status).verdict(),
                    ProxyVerdict::Own(ProxyErrorKind::Auth)
                );
            }
        }
        // 0xFF: an authentication failure if we offered credentials, else the proxy's.
        let (_, end) = run(name, Some(&creds()), &[&[5, 0xff]], 2);
        assert_eq!(
            end,
            Err(Socks5Error::NoAcceptableMethod { offered_auth: true })
        );
        assert_eq!(
            end.map(|_| ()).map_err(Socks5Error::verdict),
            Err(ProxyVerdict::Own(ProxyErrorKind::Auth))
        );
        // A proxy that wants credentials we were not given: missing credentials.
        let (_, end) = run(name, None, &[&[5, 0xff]], 2);
        assert_eq!(
            end.map(|_| ()).map_err(Socks5Error::verdict),
            Err(ProxyVerdict::Own(ProxyErrorKind::Auth))
        );
        // Username/password chosen though not offered.
        let (_, end) = run(name, None, &[&[5, 2]], 2);
        assert_eq!(end, Err(Socks5Error::Method(2)));
        // Bytes past the method reply, before our request went out.
        let (_, end) = run(name, None, &[&[5, 0, 5]], 3);
        assert_eq!(end, Err(Socks5Error::OutOfTurn));
        // Surplus after the final reply is counted for the caller.
        let mut v4_more = V4_OK.to_vec();
        v4_more.extend_from_slice(b"HTTP");
        let (_, end) = run(name, None, &[&[5, 0], &v4_more], 100);
        assert!(
            matches!(end, Ok(Some(Socks5Done { surplus: 4, .. }))),
            "{end:?}"
        );
        // Bytes before the greeting is out.
        let mut c = Socks5Client::new(name, None).expect("client");
        assert_eq!(c.feed(&[5, 0]), Err(Socks5Error::OutOfTurn));
    }
}

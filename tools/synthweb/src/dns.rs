//! A DNS answerer that computes each answer from the name (`--dns`): a million-line
//! hosts file takes dnsmasq minutes to load, while `h0123456.synth.test` already says
//! which host it is and the host number says its address.
//!
//! Sans-IO: [`answer`] takes a query datagram and a lookup and writes the reply; the UDP
//! loop is in `server/dns.rs`. Wire format by hand (RFC 1035 4.1), parsed defensively:
//! anything short, compressed, oversized or not a standard query is answered FORMERR or
//! NOTIMP when the header can be read, and dropped when it cannot. Authoritative for
//! `synth.test` only: A for a known host (the computed address), NODATA (NOERROR, no
//! answer) for its other types, NXDOMAIN for an unknown name under `synth.test`,
//! REFUSED for names elsewhere. No EDNS, no TCP: every answer fits 512 bytes.

use std::net::Ipv4Addr;

/// Response codes (RFC 1035 4.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Rcode {
    /// No error.
    NoError = 0,
    /// The query could not be read.
    FormErr = 1,
    /// The name does not exist.
    NxDomain = 3,
    /// Not a standard query.
    NotImp = 4,
    /// Not our zone.
    Refused = 5,
}

/// Query type A.
pub const TYPE_A: u16 = 1;
/// Query type AAAA.
pub const TYPE_AAAA: u16 = 28;
const CLASS_IN: u16 = 1;
const CLASS_ANY: u16 = 255;
const HEADER_BYTES: usize = 12;
const MAX_NAME_BYTES: usize = 255;

/// What one query was answered, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answered {
    /// The response code sent.
    pub rcode: Rcode,
    /// Whether an address record was in the answer.
    pub address: bool,
}

/// Writes into `out` (cleared first) the reply to the query `query`, looking names up
/// with `lookup` (a lower-case name without the trailing dot, under `zone`, to an
/// address, `None` when no such host). Returns `None`, with `out` empty, when the
/// datagram is not worth a reply (shorter than a header, or itself a response).
pub fn answer(
    query: &[u8],
    zone: &str,
    ttl_secs: u32,
    lookup: impl Fn(&str) -> Option<Ipv4Addr>,
    out: &mut Vec<u8>,
) -> Option<Answered> {
    out.clear();
    let header = query.get(..HEADER_BYTES)?;
    let (id, flags) = (be16(header, 0)?, be16(header, 2)?);
    if flags & 0x8000 != 0 {
        return None; // a response: never answer one (no loops between two servers)
    }
    let opcode = (flags >> 11) & 0xF;
    let rd = flags & 0x0100;
    let qdcount = be16(header, 4)?;
    let reply = |out: &mut Vec<u8>, rcode: Rcode, question: Option<&[u8]>, ancount: u16| {
        out.extend_from_slice(&id.to_be_bytes());
        // QR, opcode echoed, AA, RD echoed, RA clear (not recursive), the rcode.
        let f = 0x8000 | (opcode << 11) | 0x0400 | rd | rcode as u16;
        out.extend_from_slice(&f.to_be_bytes());
        out.extend_from_slice(&u16::from(question.is_some()).to_be_bytes());
        out.extend_from_slice(&ancount.to_be_bytes());
        out.extend_from_slice(&[0, 0, 0, 0]);
        if let Some(q) = question {
            out.extend_from_slice(q);
        }
    };
    if opcode != 0 {
        reply(out, Rcode::NotImp, None, 0);
        return Some(Answered {
            rcode: Rcode::NotImp,
            address: false,
        });
    }
    let parsed = if qdcount == 1 {
        parse_question(query.get(HEADER_BYTES..)?)
    } else {
        None
    };
    let Some(q) = parsed else {
        reply(out, Rcode::FormErr, None, 0);
        return Some(Answered {
            rcode: Rcode::FormErr,
            address: false,
        });
    };
    let question = query.get(HEADER_BYTES..HEADER_BYTES + q.wire_len)?;
    let in_zone = q.name == zone || q.name.strip_suffix(zone).is_some_and(|s| s.ends_with('.'));
    let class_ok = q.qclass == CLASS_IN || q.qclass == CLASS_ANY;
    let (rcode, addr) = if !in_zone || !class_ok {
        (Rcode::Refused, None)
    } else if q.name == zone {
        (Rcode::NoError, None)
    } else {
        match lookup(&q.name) {
            None => (Rcode::NxDomain, None),
            Some(a) if q.qtype == TYPE_A => (Rcode::NoError, Some(a)),
            Some(_) => (Rcode::NoError, None),
        }
    };
    reply(out, rcode, Some(question), u16::from(addr.is_some()));
    if let Some(a) = addr {
        out.extend_from_slice(&[0xC0, HEADER_BYTES as u8]); // the question's name
        out.extend_from_slice(&TYPE_A.to_be_bytes());
        out.extend_from_slice(&CLASS_IN.to_be_bytes());
        out.extend_from_slice(&ttl_secs.to_be_bytes());
        out.extend_from_slice(&4u16.to_be_bytes());
        out.extend_from_slice(&a.octets());
    }
    Some(Answered {
        rcode,
        address: addr.is_some(),
    })
}

/// The question of a query: name in lower case without the trailing dot.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Question {
    name: String,
    qtype: u16,
    qclass: u16,
    /// Bytes of the question on the wire (name, type, class).
    wire_len: usize,
}

/// Reads the question at the start of `bytes`; `None` for a truncated question, a
/// compression pointer (a query has nothing to point at), a label over 63 bytes or a
/// name over 255, or a label byte that is not printable ASCII.
fn parse_question(bytes: &[u8]) -> Option<Question> {
    let mut name = String::new();
    let mut i = 0usize;
    loop {
        let len = usize::from(*bytes.get(i)?);
        if len == 0 {
            i += 1;
            break;
        }
        if len > 63 {
            return None;
        }
        let label = bytes.get(i + 1..i + 1 + len)?;
        if !label.iter().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        if !name.is_empty() {
            name.push('.');
        }
        name.extend(label.iter().map(|b| char::from(b.to_ascii_lowercase())));
        i += 1 + len;
        if i > MAX_NAME_BYTES {
            return None;
        }
    }
    let qtype = be16(bytes, i)?;
    let qclass = be16(bytes, i + 2)?;
    Some(Question {
        name,
        qtype,
        qclass,
        wire_len: i + 4,
    })
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    let two = b.get(at..at + 2)?;
    Some(u16::from_be_bytes([*two.first()?, *two.get(1)?]))
}

/// A query for `name` and `qtype` with id `id` and RD set, as a stub resolver sends it
/// (for tests and tools).
#[must_use]
pub fn query(id: u16, name: &str, qtype: u16) -> Vec<u8> {
    let mut q = Vec::with_capacity(HEADER_BYTES + name.len() + 6);
    q.extend_from_slice(&id.to_be_bytes());
    q.extend_from_slice(&0x0100u16.to_be_bytes());
    q.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.trim_end_matches('.').split('.') {
        q.push(label.len().min(63) as u8);
        q.extend_from_slice(
            label
                .as_bytes()
                .get(..label.len().min(63))
                .unwrap_or_default(),
        );
    }
    q.push(0);
    q.extend_from_slice(&qtype.to_be_bytes());
    q.extend_from_slice(&CLASS_IN.to_be_bytes());
    q
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(name: &str) -> Option<Ipv4Addr> {
        (name == "h000007.synth.test").then_some(Ipv4Addr::new(127, 1, 0, 8))
    }

    fn ask(q: &[u8]) -> (Option<Answered>, Vec<u8>) {
        let mut out = Vec::new();
        let a = answer(q, "synth.test", 300, look, &mut out);
        (a, out)
    }

    #[test]
    fn answers_a_with_the_computed_address() {
        let q = query(0xBEEF, "H000007.Synth.Test", TYPE_A);
        let (a, out) = ask(&q);
        assert_eq!(
            a,
            Some(Answered {
                rcode: Rcode::NoError,
                address: true
            })
        );
        assert_eq!(&out[..2], &[0xBE, 0xEF]);
        assert_eq!(out[2] & 0x80, 0x80, "QR");
        assert_eq!(out[2] & 0x04, 0x04, "AA");
        assert_eq!(out[2] & 0x01, 0x01, "RD echoed");
        assert_eq!(&out[4..8], &[0, 1, 0, 1]);
        // The question echoed byte for byte (case kept), then the answer.
        assert_eq!(&out[12..q.len()], &q[12..]);
        let rr = &out[q.len()..];
        assert_eq!(rr, &[0xC0, 12, 0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 127, 1, 0, 8]);
    }

    #[test]
    fn nodata_nxdomain_refused() {
        let (a, out) = ask(&query(1, "h000007.synth.test", TYPE_AAAA));
        assert_eq!(
            a,
            Some(Answered {
                rcode: Rcode::NoError,
                address: false
            })
        );
        assert_eq!(&out[6..8], &[0, 0]);
        let (a, out) = ask(&query(2, "h000008.synth.test", TYPE_A));
        assert_eq!(a.map(|a| a.rcode), Some(Rcode::NxDomain));
        assert_eq!(out[3] & 0xF, 3);
        let (a, _) = ask(&query(3, "example.org", TYPE_A));
        assert_eq!(a.map(|a| a.rcode), Some(Rcode::Refused));
        let (a, _) = ask(&query(4, "xsynth.test", TYPE_A));
        assert_eq!(a.map(|a| a.rcode), Some(Rcode::Refused));
        let (a, _) = ask(&query(5, "synth.test", TYPE_A));
        assert_eq!(a.map(|a| a.rcode), Some(Rcode::NoError));
    }

    #[test]
    fn malformed_queries_get_formerr_or_nothing() {
        let q = query(9, "h000007.synth.test", TYPE_A);
        // Every prefix: no panic; shorter than a header gets no reply at all.
        for n in 0..q.len() {
            let (a, out) = ask(&q[..n]);
            if n < 12 {
                assert!(a.is_none() && out.is_empty());
            } else {
                assert_eq!(a.map(|a| a.rcode), Some(Rcode::FormErr), "prefix {n}");
                assert_eq!(out.len(), 12);
            }
        }
        let mut ptr = q[..12].to_vec();
        ptr.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1]);
        assert_eq!(ask(&ptr).0.map(|a| a.rcode), Some(Rcode::FormErr));
        let mut two = q.clone();
        two[5] = 2;
        assert_eq!(ask(&two).0.map(|a| a.rcode), Some(Rcode::FormErr));
        let mut resp = q.clone();
        resp[2] |= 0x80;
        assert!(ask(&resp).0.is_none());
        let mut notify = q.clone();
        notify[2] |= 4 << 3;
        assert_eq!(ask(&notify).0.map(|a| a.rcode), Some(Rcode::NotImp));
        // A long name of 63-byte labels is refused past 255 bytes.
        let long = vec!["a".repeat(63); 5].join(".");
        assert_eq!(
            ask(&query(1, &long, TYPE_A)).0.map(|a| a.rcode),
            Some(Rcode::FormErr)
        );
        // Bytes after the question (an EDNS OPT record) are ignored.
        let mut edns = q.clone();
        edns[11] = 1;
        edns.extend_from_slice(&[0, 0, 41, 4, 0, 0, 0, 0, 0, 0, 0]);
        let (a, out) = ask(&edns);
        assert_eq!(
            a,
            Some(Answered {
                rcode: Rcode::NoError,
                address: true
            })
        );
        assert_eq!(out.len(), q.len() + 16);
    }
}

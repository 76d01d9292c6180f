//! The DNS wire format (RFC 1035), sans-IO: build a query, parse an answer.
//!
//! Everything here takes bytes and returns values; nothing touches a socket or the
//! clock, so the parser is a fuzz target ([`crate::net::dns::fuzz_answer`]). Every read
//! is bounds-checked, compression pointers may only point backwards and are followed at
//! most [`MAX_POINTER_HOPS`] times, names are at most 255 bytes, and a malformed message
//! is a [`WireError`], never a panic.

#![deny(clippy::indexing_slicing)]

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Record type A (an IPv4 address).
pub const TYPE_A: u16 = 1;
/// Record type CNAME (an alias).
pub const TYPE_CNAME: u16 = 5;
/// Record type SOA (start of authority; its minimum bounds negative caching).
pub const TYPE_SOA: u16 = 6;
/// Record type AAAA (an IPv6 address).
pub const TYPE_AAAA: u16 = 28;
/// Class IN.
pub const CLASS_IN: u16 = 1;

/// Compression pointers followed per name at most (a name has at most 127 labels).
pub const MAX_POINTER_HOPS: usize = 128;
/// CNAME links followed inside one answer at most.
pub const MAX_CNAME_HOPS: usize = 8;
/// A name's encoded length at most (RFC 1035 §2.3.4).
pub const MAX_NAME_BYTES: usize = 255;
/// Resource records read per message at most (a UDP answer holds far fewer).
pub const MAX_RECORDS: usize = 512;

const FLAG_QR: u16 = 0x8000;
const FLAG_TC: u16 = 0x0200;
const FLAG_RD: u16 = 0x0100;

/// What can be asked: the two address types.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QType {
    /// IPv4.
    A,
    /// IPv6.
    Aaaa,
}

impl QType {
    /// The record type number.
    pub fn code(self) -> u16 {
        match self {
            Self::A => TYPE_A,
            Self::Aaaa => TYPE_AAAA,
        }
    }
}

/// Why bytes are not a usable DNS message (or a name cannot be asked).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireError {
    /// The message ends inside a field.
    Truncated,
    /// A compression pointer points forwards or at itself, or too many were followed.
    PointerLoop,
    /// A name is longer than 255 bytes, or a label longer than 63.
    NameTooLong,
    /// A label type this parser does not know (the reserved 0x40 and 0x80 forms).
    BadLabel,
    /// An empty label inside a name we were asked to encode.
    EmptyLabel,
    /// The message is a query, not a response.
    NotResponse,
    /// The question is absent or is not the one asked.
    QuestionMismatch,
    /// An A or AAAA record has the wrong data length.
    BadAddress,
    /// More records than [`MAX_RECORDS`].
    TooManyRecords,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Truncated => "message truncated",
            Self::PointerLoop => "compression pointer loop",
            Self::NameTooLong => "name too long",
            Self::BadLabel => "unknown label type",
            Self::EmptyLabel => "empty label",
            Self::NotResponse => "not a response",
            Self::QuestionMismatch => "question does not match",
            Self::BadAddress => "bad address record",
            Self::TooManyRecords => "too many records",
        })
    }
}

impl std::error::Error for WireError {}

/// The response code (RFC 1035 §4.1.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rcode {
    /// No error (an answer, or NODATA when it holds no address).
    NoError,
    /// The server could not read our query.
    FormatError,
    /// The server failed (SERVFAIL).
    ServerFailure,
    /// The name does not exist (NXDOMAIN).
    NameError,
    /// The server does not do this kind of query.
    NotImplemented,
    /// The server refuses to answer us.
    Refused,
    /// Any other code.
    Other(u8),
}

impl Rcode {
    fn from_flags(flags: u16) -> Self {
        match flags & 0x000f {
            0 => Self::NoError,
            1 => Self::FormatError,
            2 => Self::ServerFailure,
            3 => Self::NameError,
            4 => Self::NotImplemented,
            5 => Self::Refused,
            n => Self::Other(n as u8),
        }
    }
}

/// Encodes a standard recursive query for `name` (no trailing dot) into `out`
/// (cleared first).
///
/// # Errors
/// An empty label (`a..b`), a label over 63 bytes or a name over 255.
pub fn build_query(id: u16, name: &str, qtype: QType, out: &mut Vec<u8>) -> Result<(), WireError> {
    out.clear();
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&FLAG_RD.to_be_bytes());
    out.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]);
    encode_name(name, out)?;
    out.extend_from_slice(&qtype.code().to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    Ok(())
}

fn encode_name(name: &str, out: &mut Vec<u8>) -> Result<(), WireError> {
    let start = out.len();
    if !name.is_empty() && name != "." {
        for label in name.trim_end_matches('.').split('.') {
            let len = u8::try_from(label.len()).map_err(|_| WireError::NameTooLong)?;
            if len == 0 {
                return Err(WireError::EmptyLabel);
            }
            if len > 63 {
                return Err(WireError::NameTooLong);
            }
            out.push(len);
            out.extend_from_slice(label.as_bytes());
        }
    }
    out.push(0);
    if out.len() - start > MAX_NAME_BYTES {
        return Err(WireError::NameTooLong);
    }
    Ok(())
}

/// The fixed 12-byte header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    /// Transaction id.
    pub id: u16,
    /// Flags word (QR, opcode, AA, TC, RD, RA, rcode).
    pub flags: u16,
    /// Question count.
    pub questions: u16,
    /// Answer record count.
    pub answers: u16,
    /// Authority record count.
    pub authority: u16,
    /// Additional record count.
    pub additional: u16,
}

impl Header {
    /// Reads the header.
    ///
    /// # Errors
    /// Fewer than 12 bytes.
    pub fn parse(msg: &[u8]) -> Result<Self, WireError> {
        let mut r = Reader { msg, pos: 0 };
        Ok(Self {
            id: r.u16()?,
            flags: r.u16()?,
            questions: r.u16()?,
            answers: r.u16()?,
            authority: r.u16()?,
            additional: r.u16()?,
        })
    }

    /// The answer was cut to fit a UDP datagram (TC): ask again over TCP.
    pub fn is_truncated(&self) -> bool {
        self.flags & FLAG_TC != 0
    }

    /// The response code.
    pub fn rcode(&self) -> Rcode {
        Rcode::from_flags(self.flags)
    }
}

/// A resource record, owner name decoded; `data` is the record data's range in the
/// message (its names may be compressed, so they are decoded on demand).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// Owner name, dotted, no trailing dot.
    pub name: Vec<u8>,
    /// Record type.
    pub rtype: u16,
    /// Record class.
    pub class: u16,
    /// Time to live, seconds.
    pub ttl: u32,
    /// Start of the record data in the message.
    pub data_start: usize,
    /// Length of the record data.
    pub data_len: usize,
}

/// A whole message, parsed: header, the question, answer and authority records (the
/// additional section is not read).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The header.
    pub header: Header,
    /// The first question: name, type, class (`None` when the count is 0).
    pub question: Option<(Vec<u8>, u16, u16)>,
    /// Answer section.
    pub answers: Vec<Record>,
    /// Authority section.
    pub authority: Vec<Record>,
}

impl Message {
    /// Parses a message.
    ///
    /// # Errors
    /// Any malformation (see [`WireError`]).
    pub fn parse(msg: &[u8]) -> Result<Self, WireError> {
        let header = Header::parse(msg)?;
        let mut r = Reader { msg, pos: 12 };
        let mut question = None;
        for i in 0..header.questions {
            let name = r.name()?;
            let qtype = r.u16()?;
            let class = r.u16()?;
            if i == 0 {
                question = Some((name, qtype, class));
            }
        }
        if usize::from(header.answers) + usize::from(header.authority) > MAX_RECORDS {
            return Err(WireError::TooManyRecords);
        }
        let mut answers = Vec::with_capacity(usize::from(header.answers).min(64));
        for _ in 0..header.answers {
            answers.push(r.record()?);
        }
        let mut authority = Vec::with_capacity(usize::from(header.authority).min(16));
        for _ in 0..header.authority {
            authority.push(r.record()?);
        }
        Ok(Self {
            header,
            question,
            answers,
            authority,
        })
    }
}

/// What an answer says about the name asked, after CNAMEs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// Transaction id.
    pub id: u16,
    /// Response code.
    pub rcode: Rcode,
    /// TC was set: the answer is incomplete, ask over TCP.
    pub truncated: bool,
    /// Addresses of the asked type, for the name at the end of the CNAME chain.
    pub addrs: Vec<IpAddr>,
    /// The smallest TTL over the records used (CNAMEs and addresses), seconds.
    pub ttl_secs: Option<u32>,
    /// For a negative answer: min(SOA TTL, SOA minimum) from the authority section
    /// (RFC 2308 §5), seconds.
    pub negative_ttl_secs: Option<u32>,
}

/// Parses `msg` as the answer to `qname`/`qtype` (`qname` without trailing dot; case
/// does not matter). Checks the QR bit and the question; the caller checks the id.
///
/// # Errors
/// A malformed message, a query, or a question other than the one asked.
pub fn parse_answer(msg: &[u8], qname: &str, qtype: QType) -> Result<Answer, WireError> {
    let m = Message::parse(msg)?;
    if m.header.flags & FLAG_QR == 0 {
        return Err(WireError::NotResponse);
    }
    let qname = qname.trim_end_matches('.').as_bytes();
    match &m.question {
        Some((name, t, c))
            if name.eq_ignore_ascii_case(qname) && *t == qtype.code() && *c == CLASS_IN => {}
        _ => return Err(WireError::QuestionMismatch),
    }
    let mut ttl: Option<u32> = None;
    let mut current: Vec<u8> = qname.to_vec();
    for _ in 0..MAX_CNAME_HOPS {
        let Some(cname) = m.answers.iter().find(|rr| {
            rr.rtype == TYPE_CNAME && rr.class == CLASS_IN && rr.name.eq_ignore_ascii_case(&current)
        }) else {
            break;
        };
        ttl = Some(ttl.map_or(cname.ttl, |t| t.min(cname.ttl)));
        current = Reader {
            msg,
            pos: cname.data_start,
        }
        .name()?;
    }
    let mut addrs = Vec::new();
    for rr in &m.answers {
        if rr.rtype != qtype.code()
            || rr.class != CLASS_IN
            || !rr.name.eq_ignore_ascii_case(&current)
        {
            continue;
        }
        let data = msg
            .get(rr.data_start..rr.data_start + rr.data_len)
            .ok_or(WireError::Truncated)?;
        let ip = match qtype {
            QType::A => IpAddr::V4(Ipv4Addr::from(
                <[u8; 4]>::try_from(data).map_err(|_| WireError::BadAddress)?,
            )),
            QType::Aaaa => IpAddr::V6(Ipv6Addr::from(
                <[u8; 16]>::try_from(data).map_err(|_| WireError::BadAddress)?,
            )),
        };
        if !addrs.contains(&ip) {
            addrs.push(ip);
        }
        ttl = Some(ttl.map_or(rr.ttl, |t| t.min(rr.ttl)));
    }
    if addrs.is_empty() {
        ttl = None;
    }
    let mut negative_ttl_secs = None;
    for rr in &m.authority {
        if rr.rtype != TYPE_SOA {
            continue;
        }
        // SOA data: mname, rname, serial, refresh, retry, expire, minimum.
        let mut r = Reader {
            msg,
            pos: rr.data_start,
        };
        r.name()?;
        r.name()?;
        r.skip(16)?;
        let minimum = r.u32()?;
        negative_ttl_secs = Some(minimum.min(rr.ttl));
        break;
    }
    Ok(Answer {
        id: m.header.id,
        rcode: m.header.rcode(),
        truncated: m.header.is_truncated(),
        addrs,
        ttl_secs: ttl,
        negative_ttl_secs,
    })
}

struct Reader<'a> {
    msg: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn u8(&mut self) -> Result<u8, WireError> {
        let b = *self.msg.get(self.pos).ok_or(WireError::Truncated)?;
        self.pos += 1;
        Ok(b)
    }

    fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_be_bytes([self.u8()?, self.u8()?]))
    }

    fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from(self.u16()?) << 16 | u32::from(self.u16()?))
    }

    fn skip(&mut self, n: usize) -> Result<(), WireError> {
        let end = self.pos.checked_add(n).ok_or(WireError::Truncated)?;
        if end > self.msg.len() {
            return Err(WireError::Truncated);
        }
        self.pos = end;
        Ok(())
    }

    /// Reads a possibly compressed name at the cursor; the cursor ends after its
    /// in-place part.
    fn name(&mut self) -> Result<Vec<u8>, WireError> {
        let mut out = Vec::new();
        let mut wire_len = 1usize; // the root's zero byte
        let mut pos = self.pos;
        let mut resume: Option<usize> = None;
        let mut hops = 0usize;
        // Where the bytes of the current run of labels start: a pointer must point
        // before it, so every hop goes strictly backwards and the walk ends.
        let mut floor = self.pos;
        loop {
            let len = *self.msg.get(pos).ok_or(WireError::Truncated)?;
            match len & 0xc0 {
                0x00 if len == 0 => {
                    pos += 1;
                    break;
                }
                0x00 => {
                    let label = self
                        .msg
                        .get(pos + 1..pos + 1 + usize::from(len))
                        .ok_or(WireError::Truncated)?;
                    wire_len += 1 + usize::from(len);
                    if wire_len > MAX_NAME_BYTES {
                        return Err(WireError::NameTooLong);
                    }
                    if !out.is_empty() {
                        out.push(b'.');
                    }
                    out.extend(label.iter().map(u8::to_ascii_lowercase));
                    pos += 1 + usize::from(len);
                }
                0xc0 => {
                    let low = *self.msg.get(pos + 1).ok_or(WireError::Truncated)?;
                    let target = usize::from(len & 0x3f) << 8 | usize::from(low);
                    hops += 1;
                    if target >= floor || hops > MAX_POINTER_HOPS {
                        return Err(WireError::PointerLoop);
                    }
                    resume.get_or_insert(pos + 2);
                    floor = target;
                    pos = target;
                }
                _ => return Err(WireError::BadLabel),
            }
        }
        self.pos = resume.unwrap_or(pos);
        Ok(out)
    }

    fn record(&mut self) -> Result<Record, WireError> {
        let name = self.name()?;
        let rtype = self.u16()?;
        let class = self.u16()?;
        let ttl = self.u32()?;
        let data_len = usize::from(self.u16()?);
        let data_start = self.pos;
        self.skip(data_len)?;
        Ok(Record {
            name,
            rtype,
            class,
            // RFC 2181 §8: a TTL with the top bit set is treated as zero.
            ttl: if ttl > i32::MAX as u32 { 0 } else { ttl },
            data_start,
            data_len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers captured from dnsmasq 2.90 (`--addn-hosts` with www.synth.test at
    /// 127.0.0.1, 127.0.0.2 and ::1; `--cname=alias.synth.test,www.synth.test`;
    /// v4only.synth.test at 10.1.2.3), 2026-11-28.
    fn captured(name: &str) -> &'static [u8] {
        match name {
            "www_a" => include_bytes!("../../../tests/data/dns/www_a.bin"),
            "www_aaaa" => include_bytes!("../../../tests/data/dns/www_aaaa.bin"),
            "cname_a" => include_bytes!("../../../tests/data/dns/cname_a.bin"),
            "cname_aaaa" => include_bytes!("../../../tests/data/dns/cname_aaaa.bin"),
            "nxdomain_a" => include_bytes!("../../../tests/data/dns/nxdomain_a.bin"),
            "nodata_aaaa" => include_bytes!("../../../tests/data/dns/nodata_aaaa.bin"),
            _ => include_bytes!("../../../tests/data/dns/v4only_a.bin"),
        }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    /// A response to `name`/`qtype` with the given flags word and these sections
    /// appended raw after the question (counts given).
    fn reply(
        id: u16,
        flags: u16,
        name: &str,
        qtype: u16,
        counts: [u16; 2],
        rest: &[u8],
    ) -> Vec<u8> {
        let mut m = id.to_be_bytes().to_vec();
        m.extend_from_slice(&flags.to_be_bytes());
        m.extend_from_slice(&1u16.to_be_bytes());
        m.extend_from_slice(&counts[0].to_be_bytes());
        m.extend_from_slice(&counts[1].to_be_bytes());
        m.extend_from_slice(&0u16.to_be_bytes());
        encode_name(name, &mut m).unwrap();
        m.extend_from_slice(&qtype.to_be_bytes());
        m.extend_from_slice(&CLASS_IN.to_be_bytes());
        m.extend_from_slice(rest);
        m
    }

    fn rr(owner: &[u8], rtype: u16, ttl: u32, data: &[u8]) -> Vec<u8> {
        let mut v = owner.to_vec();
        v.extend_from_slice(&rtype.to_be_bytes());
        v.extend_from_slice(&CLASS_IN.to_be_bytes());
        v.extend_from_slice(&ttl.to_be_bytes());
        v.extend_from_slice(&(data.len() as u16).to_be_bytes());
        v.extend_from_slice(data);
        v
    }

    #[test]
    fn a_query_is_what_the_rfc_says() {
        let mut q = Vec::new();
        build_query(0xbeef, "www.Example.org.", QType::Aaaa, &mut q).unwrap();
        assert_eq!(
            q,
            b"\xbe\xef\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\
              \x03www\x07Example\x03org\x00\x00\x1c\x00\x01"
        );
        assert_eq!(
            build_query(1, "a..b", QType::A, &mut q),
            Err(WireError::EmptyLabel)
        );
        let long_label = "x".repeat(64);
        assert_eq!(
            build_query(1, &long_label, QType::A, &mut q),
            Err(WireError::NameTooLong)
        );
        let long_name = vec!["x".repeat(63); 4].join(".");
        assert_eq!(
            build_query(1, &long_name, QType::A, &mut q),
            Err(WireError::NameTooLong)
        );
    }

    #[test]
    fn captured_dnsmasq_answers() {
        let a = parse_answer(captured("www_a"), "www.synth.test", QType::A).unwrap();
        assert_eq!(
            (a.id, a.rcode, a.truncated),
            (0x1000, Rcode::NoError, false)
        );
        assert_eq!(a.addrs, vec![ip("127.0.0.1"), ip("127.0.0.2")]);
        assert_eq!(a.ttl_secs, Some(0), "dnsmasq's local-ttl is 0");
        let aaaa = parse_answer(captured("www_aaaa"), "WWW.synth.test", QType::Aaaa).unwrap();
        assert_eq!(aaaa.addrs, vec![ip("::1")]);
        let c = parse_answer(captured("cname_a"), "alias.synth.test", QType::A).unwrap();
        assert_eq!(
            c.addrs,
            vec![ip("127.0.0.2"), ip("127.0.0.1")],
            "through the CNAME"
        );
        let c6 = parse_answer(captured("cname_aaaa"), "alias.synth.test", QType::Aaaa).unwrap();
        assert_eq!(c6.addrs, vec![ip("::1")]);
        let nx = parse_answer(captured("nxdomain_a"), "nope.synth.test", QType::A).unwrap();
        assert_eq!(
            (nx.rcode, nx.addrs.len(), nx.negative_ttl_secs),
            (Rcode::NameError, 0, None)
        );
        let nodata =
            parse_answer(captured("nodata_aaaa"), "v4only.synth.test", QType::Aaaa).unwrap();
        assert_eq!((nodata.rcode, nodata.addrs.len()), (Rcode::NoError, 0));
        let v4 = parse_answer(captured("v4only_a"), "v4only.synth.test", QType::A).unwrap();
        assert_eq!(v4.addrs, vec![ip("10.1.2.3")]);
        // The same bytes answer no other question.
        assert_eq!(
            parse_answer(captured("www_a"), "www.synth.test", QType::Aaaa),
            Err(WireError::QuestionMismatch)
        );
        assert_eq!(
            parse_answer(captured("www_a"), "other.synth.test", QType::A),
            Err(WireError::QuestionMismatch)
        );
    }

    #[test]
    fn every_prefix_of_a_captured_answer_is_an_error_not_a_panic() {
        for name in ["www_a", "cname_a", "cname_aaaa", "nodata_aaaa"] {
            let msg = captured(name);
            for len in 0..msg.len() {
                assert!(Message::parse(&msg[..len]).is_err(), "{name} cut at {len}");
            }
        }
    }

    #[test]
    fn soa_minimum_bounds_the_negative_ttl_and_ttl_is_the_minimum() {
        let mut soa = Vec::new();
        encode_name("ns.test", &mut soa).unwrap();
        encode_name("admin.test", &mut soa).unwrap();
        for v in [1u32, 2, 3, 4, 90] {
            soa.extend_from_slice(&v.to_be_bytes());
        }
        let m = reply(
            7,
            0x8183,
            "gone.test",
            TYPE_A,
            [0, 1],
            &rr(b"\x04test\x00", TYPE_SOA, 300, &soa),
        );
        let a = parse_answer(&m, "gone.test", QType::A).unwrap();
        assert_eq!((a.rcode, a.negative_ttl_secs), (Rcode::NameError, Some(90)));
        let m = reply(
            7,
            0x8183,
            "gone.test",
            TYPE_A,
            [0, 1],
            &rr(b"\x04test\x00", TYPE_SOA, 30, &soa),
        );
        assert_eq!(
            parse_answer(&m, "gone.test", QType::A)
                .unwrap()
                .negative_ttl_secs,
            Some(30)
        );
        let mut two = rr(&[0xc0, 12], TYPE_A, 600, &[10, 0, 0, 1]);
        two.extend(rr(&[0xc0, 12], TYPE_A, 0x8000_0001, &[10, 0, 0, 2]));
        let m = reply(7, 0x8180, "h.test", TYPE_A, [2, 0], &two);
        let a = parse_answer(&m, "h.test", QType::A).unwrap();
        assert_eq!(
            a.ttl_secs,
            Some(0),
            "a TTL with the top bit set counts as 0"
        );
    }

    #[test]
    fn cname_chains_are_followed_and_bounded() {
        // a -> b -> c, c has the address; and a chain a -> a (loop) ends.
        let mut rest = rr(&[0xc0, 12], TYPE_CNAME, 100, b"\x01b\x04test\x00");
        rest.extend(rr(
            b"\x01b\x04test\x00",
            TYPE_CNAME,
            50,
            b"\x01c\x04test\x00",
        ));
        rest.extend(rr(b"\x01c\x04test\x00", TYPE_A, 200, &[10, 0, 0, 9]));
        rest.extend(rr(&[0xc0, 12], TYPE_A, 200, &[10, 0, 0, 66]));
        let m = reply(1, 0x8180, "a.test", TYPE_A, [4, 0], &rest);
        let a = parse_answer(&m, "a.test", QType::A).unwrap();
        assert_eq!(
            a.addrs,
            vec![ip("10.0.0.9")],
            "the chain's end, not the alias's own record"
        );
        assert_eq!(a.ttl_secs, Some(50));
        let looped = rr(&[0xc0, 12], TYPE_CNAME, 100, &[0xc0, 12]);
        let m = reply(1, 0x8180, "a.test", TYPE_A, [1, 0], &looped);
        assert!(parse_answer(&m, "a.test", QType::A)
            .unwrap()
            .addrs
            .is_empty());
    }

    #[test]
    fn hostile_names_are_errors() {
        // A pointer to itself, a forward pointer, and a reserved label type.
        let mut m = reply(1, 0x8180, "a.test", TYPE_A, [1, 0], &[]);
        let here = m.len() as u8;
        m.extend_from_slice(&[0xc0, here]);
        assert_eq!(Message::parse(&m), Err(WireError::PointerLoop));
        let mut m = reply(1, 0x8180, "a.test", TYPE_A, [1, 0], &[]);
        let ahead = m.len() as u8 + 2;
        m.extend_from_slice(&[0xc0, ahead, 0]);
        assert_eq!(Message::parse(&m), Err(WireError::PointerLoop));
        let mut m = reply(1, 0x8180, "a.test", TYPE_A, [1, 0], &[]);
        m.extend_from_slice(&[0x40, 0]);
        assert_eq!(Message::parse(&m), Err(WireError::BadLabel));
        // Five 63-byte labels: 321 bytes, over the 255 a name may have.
        let mut m = reply(1, 0x8180, "a.test", TYPE_A, [1, 0], &[]);
        for _ in 0..5 {
            m.push(63);
            m.extend_from_slice(&[b'x'; 63]);
        }
        m.push(0);
        m.extend_from_slice(&[0, 1, 0, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(Message::parse(&m), Err(WireError::NameTooLong));
        // A query is not an answer; an address of the wrong size is refused.
        let mut q = Vec::new();
        build_query(1, "a.test", QType::A, &mut q).unwrap();
        assert_eq!(
            parse_answer(&q, "a.test", QType::A),
            Err(WireError::NotResponse)
        );
        let m = reply(
            1,
            0x8180,
            "a.test",
            TYPE_A,
            [1, 0],
            &rr(&[0xc0, 12], TYPE_A, 1, &[1, 2, 3]),
        );
        assert_eq!(
            parse_answer(&m, "a.test", QType::A),
            Err(WireError::BadAddress)
        );
        let m = reply(1, 0x8180, "a.test", TYPE_A, [600, 0], &[]);
        assert_eq!(Message::parse(&m), Err(WireError::TooManyRecords));
    }

    #[test]
    fn the_truncation_bit_is_reported() {
        let m = reply(1, 0x8380, "big.test", TYPE_A, [0, 0], &[]);
        let a = parse_answer(&m, "big.test", QType::A).unwrap();
        assert!(a.truncated);
    }
}

//! Source addresses (`--bind-address`, issue 29): the local addresses outgoing
//! connections leave from, for a server that owns several.
//!
//! Each address is checked once, at start ([`BindAddrs::new`]): one that is not an
//! address of this machine is refused there, not at the first connect. Then a host
//! always leaves from the same address: the address is picked by a stable hash of the
//! host name (FNV-1a, 64 bits, then murmur3's 64-bit finalizer) modulo the addresses of
//! the destination's family. The hash needs no shared table, costs no memory per host,
//! and gives the same answer in every shard, after a resume and on every farm node; the
//! spread over the addresses is even in expectation, not exactly.
//!
//! The finalizer matters: FNV-1a's low bits depend only on the low bits of each byte
//! (the multiplier is odd), and its high bits barely on the last byte, so without it
//! `h000000` and `h000002` always left from the same one of two addresses.
//!
//! With no address given (the default) nothing here runs: a connect is mio's own
//! `TcpStream::connect`, with the same system calls as before the flag existed
//! (`socket`, `connect`). With addresses, two more: `setsockopt(IP_BIND_ADDRESS_NO_PORT)`
//! and `bind`. The option leaves the choice of the port to `connect`, which shares a
//! port between destinations: a plain `bind` to port 0 would reserve one port per
//! connection, TIME_WAIT included, and a source address would run out of ports at
//! about 28,000 connections a minute.

use std::error::Error;
use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use mio::net::TcpStream;
use socket2::{Domain, Protocol, SockAddr, Socket, Type};

use crate::sys::socket::set_bind_address_no_port;

/// Why a connection could not leave from a chosen address: the destination's family
/// has none (only IPv4 addresses given and an IPv6 destination, say). The fetcher
/// tries the host's next address, and reports this on the last one.
pub(crate) const NO_SOURCE: &str = "no --bind-address of this family";

/// Whether `e` is [`BindAddrs::connect`]'s [`NO_SOURCE`] error.
pub(crate) fn is_no_source(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::Other && e.to_string() == NO_SOURCE
}

/// The source addresses outgoing connections are bound to; empty: the system chooses
/// (the default). Cheap to clone (the lists are shared).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BindAddrs {
    /// The IPv4 addresses given, in order, without repeats.
    v4: Arc<[IpAddr]>,
    /// The IPv6 addresses given, in order, without repeats.
    v6: Arc<[IpAddr]>,
}

impl BindAddrs {
    /// Checks that each address can be bound here (a socket bound to it, port 0, then
    /// closed) and keeps them, repeats dropped, in the order given. IPv4-mapped IPv6
    /// addresses count as IPv4.
    ///
    /// # Errors
    /// The first address that cannot be bound: [`BindError::is_not_local`] when it is
    /// not an address of this machine (`EADDRNOTAVAIL`).
    pub fn new(addrs: &[IpAddr]) -> Result<Self, BindError> {
        let (mut v4, mut v6) = (Vec::new(), Vec::new());
        for &addr in addrs {
            let addr = addr.to_canonical();
            let list = if addr.is_ipv4() { &mut v4 } else { &mut v6 };
            if list.contains(&addr) {
                continue;
            }
            check_local(addr)?;
            list.push(addr);
        }
        Ok(Self {
            v4: v4.into(),
            v6: v6.into(),
        })
    }

    /// No address given: connections are not bound.
    pub fn is_empty(&self) -> bool {
        self.v4.is_empty() && self.v6.is_empty()
    }

    /// The addresses, IPv4 first, each family in the order given.
    pub fn iter(&self) -> impl Iterator<Item = IpAddr> + '_ {
        self.v4.iter().chain(self.v6.iter()).copied()
    }

    /// The address a connection for `host` to `dest` leaves from: the host's hash
    /// modulo the addresses of `dest`'s family. `None`: that family has none.
    pub fn source_for(&self, host: &str, dest: IpAddr) -> Option<IpAddr> {
        let list = if dest.is_ipv4() { &self.v4 } else { &self.v6 };
        let n = u64::try_from(list.len()).ok().filter(|&n| n > 0)?;
        let i = usize::try_from(host_hash(host) % n).ok()?;
        list.get(i).copied()
    }

    /// Whether a connection that left from `src` to `peer` may carry a request for
    /// `host` (keep-alive reuse across host names on one address): only if `host`
    /// would have left from the same address, so a host always leaves from one.
    /// Always true when no address is given.
    pub(crate) fn leaves_alike(&self, src: Option<IpAddr>, peer: SocketAddr, host: &str) -> bool {
        self.is_empty() || src == self.source_for(host, peer.ip())
    }

    /// Opens a non-blocking connection to `addr` for `host`, bound to the host's
    /// source address when addresses are given; returns the stream and the address it
    /// left from (`None`: not bound, the system chose). The connect is in progress
    /// when this returns, as with mio's `TcpStream::connect`.
    ///
    /// # Errors
    /// The socket calls' errors, as mio's connect gives them; [`NO_SOURCE`] (an
    /// [`io::ErrorKind::Other`]) when `addr`'s family has no address.
    pub(crate) fn connect(
        &self,
        host: &str,
        addr: SocketAddr,
    ) -> io::Result<(TcpStream, Option<IpAddr>)> {
        if self.is_empty() {
            return TcpStream::connect(addr).map(|s| (s, None));
        }
        let src = self
            .source_for(host, addr.ip())
            .ok_or_else(|| io::Error::other(NO_SOURCE))?;
        let socket = Socket::new(
            Domain::for_address(addr),
            Type::STREAM.nonblocking(),
            Some(Protocol::TCP),
        )?;
        // The port is then chosen at connect, per destination, as for an unbound
        // connect: a source address does not run out of ports at ~28,000 a minute.
        set_bind_address_no_port(&socket)?;
        socket.bind(&SockAddr::from(SocketAddr::new(src, 0)))?;
        match socket.connect(&SockAddr::from(addr)) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINPROGRESS) => {}
            Err(e) => return Err(e),
        }
        Ok((TcpStream::from_std(socket.into()), Some(src)))
    }
}

/// Binds a socket to `addr` (port 0) and closes it.
fn check_local(addr: IpAddr) -> Result<(), BindError> {
    let fail = |e: io::Error| BindError { addr, io: e };
    let at = SocketAddr::new(addr, 0);
    let socket =
        Socket::new(Domain::for_address(at), Type::STREAM, Some(Protocol::TCP)).map_err(fail)?;
    socket.bind(&SockAddr::from(at)).map_err(fail)
}

/// A host name's hash: FNV-1a 64 with murmur3's finalizer, fixed functions (no
/// per-process key), so a host's choice is the same in every process that ever crawls
/// it.
fn host_hash(host: &str) -> u64 {
    fmix64(fnv1a64(host.as_bytes()))
}

/// FNV-1a, 64 bits.
fn fnv1a64(bytes: &[u8]) -> u64 {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    bytes
        .iter()
        .fold(OFFSET, |h, &b| (h ^ u64::from(b)).wrapping_mul(PRIME))
}

/// murmur3's 64-bit finalizer (`fmix64`): every input bit reaches every output bit.
fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// A source address that cannot be used.
#[derive(Debug)]
pub struct BindError {
    addr: IpAddr,
    io: io::Error,
}

impl BindError {
    /// The address refused.
    pub fn addr(&self) -> IpAddr {
        self.addr
    }

    /// It is not an address of this machine (`EADDRNOTAVAIL`).
    pub fn is_not_local(&self) -> bool {
        self.io.raw_os_error() == Some(libc::EADDRNOTAVAIL)
    }
}

impl fmt::Display for BindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_not_local() {
            write!(f, "{}: not an address of this machine", self.addr)
        } else {
            write!(f, "{}: cannot bind a socket to it", self.addr)
        }
    }
}

impl Error for BindError {
    fn source(&self) -> Option<&(dyn Error + 'static)> {
        // The message says all for an address that is not local.
        (!self.is_not_local()).then_some(&self.io as &(dyn Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::net::{Ipv4Addr, Ipv6Addr, TcpListener};
    use std::time::{Duration, Instant};

    use super::*;

    fn v4(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(127, 0, 0, last))
    }

    fn addrs(list: &[IpAddr]) -> BindAddrs {
        BindAddrs::new(list).expect("loopback addresses bind")
    }

    #[test]
    fn the_host_hash_never_changes() {
        // The FNV test vectors (draft-eastlake-fnv), then the finalized value (checked
        // against an independent Python version): the hash must never change, or
        // hosts would move to another address between a crawl and its resume.
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
        assert_eq!(host_hash("a"), 0x82a2_a958_a9be_ce5b);
    }

    #[test]
    fn a_host_always_gets_the_same_address() {
        let two = addrs(&[v4(2), v4(3)]);
        let dest = v4(1);
        // Golden values (checked against an independent FNV-1a in Python): the choice
        // is part of the crawl's behaviour across resumes and farm nodes.
        let golden = [
            ("h000000.synth.test", v4(2)),
            ("h000002.synth.test", v4(3)),
            ("h000007.synth.test", v4(3)),
            ("example.org", v4(3)),
            ("www.example.org", v4(2)),
        ];
        for (host, want) in golden {
            assert_eq!(two.source_for(host, dest), Some(want), "{host}");
            // Asked again, and of another destination of the family: the same.
            assert_eq!(two.source_for(host, v4(9)), Some(want), "{host}");
        }
        // Given in another order, the list is another list: order is part of the flag.
        let swapped = addrs(&[v4(3), v4(2)]);
        assert_eq!(swapped.source_for("example.org", dest), Some(v4(2)));
        // Three addresses: the hash modulo 3.
        let three = addrs(&[v4(2), v4(3), v4(4)]);
        for (host, want) in [("example.org", v4(2)), ("www.example.org", v4(3))] {
            assert_eq!(three.source_for(host, dest), Some(want), "{host}");
        }
    }

    #[test]
    fn hosts_spread_over_every_address() {
        let three = addrs(&[v4(2), v4(3), v4(4)]);
        let mut counts = [0usize; 3];
        for i in 0..300 {
            let host = format!("h{i:06}.synth.test");
            let src = three.source_for(&host, v4(1));
            let at = [v4(2), v4(3), v4(4)].iter().position(|a| Some(*a) == src);
            counts[at.expect("one of the three")] += 1;
        }
        assert!(counts.iter().all(|&c| c > 60), "{counts:?}");
        // Two addresses, names that differ in one digit (FNV-1a alone put every
        // even-numbered host on one address).
        let two = addrs(&[v4(2), v4(3)]);
        let on_two = (0..100)
            .filter(|i| two.source_for(&format!("h{i:06}.synth.test"), v4(1)) == Some(v4(2)))
            .count();
        assert!((30..=70).contains(&on_two), "{on_two} of 100 on the first");
    }

    #[test]
    fn each_family_picks_among_its_own_addresses() {
        let mixed = addrs(&[v4(2), IpAddr::V6(Ipv6Addr::LOCALHOST), v4(3)]);
        let src = mixed.source_for("a.test", IpAddr::V6(Ipv6Addr::LOCALHOST));
        assert_eq!(src, Some(IpAddr::V6(Ipv6Addr::LOCALHOST)));
        let src = mixed.source_for("a.test", v4(1));
        assert!(
            matches!(src, Some(a) if a == v4(2) || a == v4(3)),
            "{src:?}"
        );
        let only_v4 = addrs(&[v4(2)]);
        assert_eq!(
            only_v4.source_for("a.test", IpAddr::V6(Ipv6Addr::LOCALHOST)),
            None
        );
        assert_eq!(BindAddrs::default().source_for("a.test", v4(1)), None);
    }

    #[test]
    fn repeats_are_dropped_and_mapped_addresses_are_ipv4() {
        let mapped = IpAddr::V6(Ipv4Addr::new(127, 0, 0, 2).to_ipv6_mapped());
        let list = addrs(&[v4(2), mapped, v4(3), v4(2)]);
        assert_eq!(list.iter().collect::<Vec<_>>(), vec![v4(2), v4(3)]);
        assert!(!list.is_empty());
        assert!(BindAddrs::default().is_empty());
    }

    #[test]
    fn an_address_not_of_this_machine_is_refused() {
        // TEST-NET-1 (RFC 5737): never assigned to a machine.
        let stranger = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
        let err = BindAddrs::new(&[v4(2), stranger]).expect_err("not local");
        assert!(err.is_not_local());
        assert_eq!(err.addr(), stranger);
        assert_eq!(err.to_string(), "192.0.2.1: not an address of this machine");
        assert!(err.source().is_none());
    }

    #[test]
    fn sharing_a_connection_needs_the_same_source() {
        let two = addrs(&[v4(2), v4(3)]);
        let peer = SocketAddr::new(v4(1), 80);
        // h000000 leaves from .2, h000002 from .3 (the golden values above).
        assert!(two.leaves_alike(Some(v4(2)), peer, "h000000.synth.test"));
        assert!(!two.leaves_alike(Some(v4(3)), peer, "h000000.synth.test"));
        assert!(two.leaves_alike(Some(v4(3)), peer, "h000002.synth.test"));
        // Without addresses every connection may be shared, as before.
        assert!(BindAddrs::default().leaves_alike(None, peer, "h000000.synth.test"));
    }

    #[test]
    fn a_bound_connection_leaves_from_its_hosts_address() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("listen");
        let to = listener.local_addr().expect("addr");
        let two = addrs(&[v4(2), v4(3)]);
        for (host, want) in [("h000000.synth.test", v4(2)), ("h000002.synth.test", v4(3))] {
            let (mut stream, src) = two.connect(host, to).expect("connect");
            assert_eq!(src, Some(want));
            let (mut accepted, from) = listener.accept().expect("accept");
            assert_eq!(from.ip(), want, "{host}");
            // The connect completes: the stream is usable once writable.
            let deadline = Instant::now() + Duration::from_secs(5);
            while stream.peer_addr().is_err() {
                assert!(Instant::now() < deadline, "connect did not complete");
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(stream.local_addr().expect("local").ip(), want);
            std::io::Write::write_all(&mut stream, b"x").expect("write");
            let mut one = [0u8; 1];
            accepted.read_exact(&mut one).expect("read");
            assert_eq!(&one, b"x");
        }
    }

    #[test]
    fn a_destination_of_a_family_without_addresses_fails_to_connect() {
        let only_v4 = addrs(&[v4(2)]);
        let to = SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), 9);
        let err = only_v4.connect("a.test", to).expect_err("no v6 source");
        assert_eq!(err.kind(), io::ErrorKind::Other);
        assert_eq!(err.to_string(), NO_SOURCE);
    }

    #[test]
    fn without_addresses_the_connect_is_unbound() {
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("listen");
        let to = listener.local_addr().expect("addr");
        let (_stream, src) = BindAddrs::default().connect("a.test", to).expect("connect");
        assert_eq!(src, None);
        let (_accepted, from) = listener.accept().expect("accept");
        assert_eq!(from.ip(), v4(1));
    }
}

//! `--dns ADDR:PORT`: a UDP name server for the web's host names, answers computed by
//! [`crate::dns::answer`] from the name (host index, then its address), on one thread of
//! its own with a blocking socket: tens of thousands of queries a second on one core
//! with no runtime in the way, and no per-host state.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crate::dns::{self, Rcode};
use crate::hosts::DOMAIN;
use crate::site::Site;

use super::ServeError;

/// What the name server answered, reported when it stops.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct DnsCounts {
    /// Datagrams answered.
    pub dns_queries: u64,
    /// Answers that carried an address.
    pub dns_addresses: u64,
    /// NXDOMAIN answers.
    pub dns_nxdomain: u64,
    /// FORMERR, NOTIMP and REFUSED answers.
    pub dns_refused: u64,
}

/// The running name server.
pub struct DnsServer {
    /// The address bound (the port chosen when 0 was asked).
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: JoinHandle<DnsCounts>,
}

/// Binds `addr` (loopback only) and answers there until [`DnsServer::stop`].
///
/// # Errors
/// [`ServeError::Bind`] when the socket cannot be bound or the address is not loopback.
pub fn start(site: Site, addr: SocketAddr, ttl_secs: u32) -> Result<DnsServer, ServeError> {
    let err = |source| ServeError::Bind { addr, source };
    if !addr.ip().is_loopback() {
        return Err(err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "the name server binds loopback addresses only",
        )));
    }
    let socket = UdpSocket::bind(addr).map_err(err)?;
    let bound = socket.local_addr().map_err(err)?;
    // Woken this often to notice the stop flag.
    socket
        .set_read_timeout(Some(Duration::from_millis(100)))
        .map_err(err)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("synthweb-dns".to_owned())
        .spawn(move || serve(&socket, &site, ttl_secs, &flag))
        .map_err(err)?;
    Ok(DnsServer {
        addr: bound,
        stop,
        thread,
    })
}

impl DnsServer {
    /// Stops answering and returns the counts.
    #[must_use]
    pub fn stop(self) -> DnsCounts {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

fn serve(socket: &UdpSocket, site: &Site, ttl_secs: u32, stop: &AtomicBool) -> DnsCounts {
    let mut counts = DnsCounts::default();
    let mut buf = [0u8; 1_500];
    let mut out = Vec::with_capacity(512);
    let lookup = |name: &str| site.host_index(name).map(|i| site.host_addr(i));
    while !stop.load(Ordering::Relaxed) {
        let (n, peer) = match socket.recv_from(&mut buf) {
            Ok(x) => x,
            Err(_) => continue, // timeout (the stop check), or a peer's ICMP error
        };
        let Some(query) = buf.get(..n) else { continue };
        let Some(a) = dns::answer(query, DOMAIN, ttl_secs, lookup, &mut out) else {
            continue;
        };
        counts.dns_queries += 1;
        counts.dns_addresses += u64::from(a.address);
        match a.rcode {
            Rcode::NoError => {}
            Rcode::NxDomain => counts.dns_nxdomain += 1,
            Rcode::FormErr | Rcode::NotImp | Rcode::Refused => counts.dns_refused += 1,
        }
        let _ = socket.send_to(&out, peer);
    }
    counts
}

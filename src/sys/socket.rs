//! Socket options std and socket2 lack: `IP_BIND_ADDRESS_NO_PORT` for the bound
//! connects of `--bind-address` (`net::bind`).
#![allow(
    unsafe_code,
    reason = "setsockopt through libc; the OS seam (src/sys), see docs/safety.md"
)]

use std::io;
use std::os::fd::{AsFd, AsRawFd};

/// Asks the kernel not to reserve an ephemeral port when `socket` is bound to port 0
/// (`IP_BIND_ADDRESS_NO_PORT`, Linux 4.2): the port is chosen at `connect`, shared by
/// connections to different destinations as an unbound connect's is. Without it each
/// bound connection holds a port of its source address for itself, TIME_WAIT
/// included, and a source address runs out after about 28,000 connections a minute
/// (the default `ip_local_port_range`), whatever their destinations. Set on IPv4 and
/// IPv6 sockets alike. Elsewhere than Linux, nothing is done.
///
/// # Errors
/// `setsockopt` failed (a kernel older than 4.2 says `ENOPROTOOPT`).
#[cfg(target_os = "linux")]
pub(crate) fn set_bind_address_no_port(socket: &impl AsFd) -> io::Result<()> {
    let fd = socket.as_fd().as_raw_fd();
    let on: libc::c_int = 1;
    let len =
        libc::socklen_t::try_from(std::mem::size_of::<libc::c_int>()).map_err(io::Error::other)?;
    // SAFETY: `fd` is an open socket borrowed from `socket` for the call; `on` is a
    // live `c_int` and `len` its size, which is what the option reads.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_IP,
            libc::IP_BIND_ADDRESS_NO_PORT,
            std::ptr::from_ref(&on).cast::<libc::c_void>(),
            len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Not Linux: the kernel reserves the port at `bind`, as it always did.
///
/// # Errors
/// Never.
#[cfg(not(target_os = "linux"))]
pub(crate) fn set_bind_address_no_port(_socket: &impl AsFd) -> io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

    use socket2::{Domain, Socket, Type};

    use super::*;

    /// Covers the `setsockopt` call: bound to port 0 with the option, a socket has no
    /// port until it connects; without it, it has one at once.
    #[test]
    #[cfg(target_os = "linux")]
    fn a_socket_bound_without_a_port_gets_one_at_connect() {
        let at = SocketAddr::from((Ipv4Addr::new(127, 0, 0, 2), 0));
        let port_after_bind = |no_port: bool| {
            let s = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
            if no_port {
                set_bind_address_no_port(&s).unwrap();
            }
            s.bind(&at.into()).unwrap();
            let local = s.local_addr().unwrap().as_socket().unwrap();
            (s, local.port())
        };
        assert_ne!(port_after_bind(false).1, 0);
        let (s, port) = port_after_bind(true);
        assert_eq!(port, 0);
        let listener = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).unwrap();
        s.connect(&listener.local_addr().unwrap().into()).unwrap();
        let local = s.local_addr().unwrap().as_socket().unwrap();
        assert_eq!(local.ip(), at.ip());
        assert_ne!(local.port(), 0);
        // IPv6 sockets take the option too (where the host has IPv6 at all).
        if let Ok(s6) = Socket::new(Domain::IPV6, Type::STREAM, None) {
            set_bind_address_no_port(&s6).unwrap();
            if s6
                .bind(&SocketAddr::from((Ipv6Addr::LOCALHOST, 0)).into())
                .is_ok()
            {
                let local = s6.local_addr().unwrap().as_socket().unwrap();
                assert_eq!(local.port(), 0);
            }
        }
    }
}

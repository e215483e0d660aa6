//! The network card a machine's load goes over, for the disclosure: which interface holds
//! the local address of a route to a peer (the kernel's choice, found by connecting a UDP
//! socket, which sends nothing), and what the kernel says of it: its driver, link speed,
//! MTU and whether it is up. A lab over `[hosts]` records it on every host, so that "a
//! 1 Gbit/s card on the server, 100 Mbit/s on a client" is in the results, not guessed.
//!
//! Read with the interface ioctls `ethtool` and `ip` use (SIOCGIFMTU, SIOCETHTOOL), not
//! from /sys/class/net: sysfs shows the namespace of whoever mounted it, so a helper that
//! entered a network namespace without remounting it would read another machine's cards.
//! Written by hand over libc: the crates that speak ethtool do it over netlink with an
//! async runtime, a large dependency for three numbers read once per lab run.

use std::fmt;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

/// One interface, as the disclosure records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nic {
    pub name: String,
    /// The address it holds that the route uses.
    pub address: IpAddr,
    /// Its kernel driver (`virtio_net`, `ixgbe`, `veth`, `bridge`); None where it has none
    /// to say (loopback).
    pub driver: Option<String>,
    /// Link speed in Mbit/s, where the driver reports one.
    pub speed_mbit: Option<u32>,
    pub mtu: Option<u32>,
    /// Up and running (IFF_UP and IFF_RUNNING).
    pub up: bool,
}

impl fmt::Display for Nic {
    /// `eth0 (198.18.3.2): driver virtio_net, 10000 Mbit/s, MTU 1500, up`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): ", self.name, self.address)?;
        match &self.driver {
            Some(d) => write!(f, "driver {d}")?,
            None => f.write_str("no driver")?,
        }
        match self.speed_mbit {
            Some(s) => write!(f, ", {s} Mbit/s")?,
            None => f.write_str(", speed unknown")?,
        }
        if let Some(m) = self.mtu {
            write!(f, ", MTU {m}")?;
        }
        f.write_str(if self.up { ", up" } else { ", down" })
    }
}

/// The interface this machine sends to `peer` from (for a local address: the interface
/// that holds it), with its facts; why not, in words.
pub fn toward(peer: IpAddr) -> Result<Nic, String> {
    let any: SocketAddr = match peer {
        IpAddr::V4(_) => SocketAddr::from(([0, 0, 0, 0], 0)),
        IpAddr::V6(_) => SocketAddr::from(([0u16; 8], 0)),
    };
    let sock = UdpSocket::bind(any).map_err(|e| format!("cannot open a UDP socket: {e}"))?;
    sock.connect(SocketAddr::new(peer, 9)).map_err(|e| format!("no route to {peer}: {e}"))?;
    let local = sock.local_addr().map_err(|e| format!("cannot read the local address: {e}"))?;
    let (name, up) = holder(local.ip())?.ok_or_else(|| format!("no interface holds {local}"))?;
    let fd = sock.as_raw_fd();
    Ok(Nic {
        address: local.ip(),
        driver: driver(fd, &name),
        speed_mbit: speed(fd, &name),
        mtu: mtu(fd, &name),
        up,
        name,
    })
}

/// The name of the interface holding `address`, and whether it is up and running.
fn holder(address: IpAddr) -> Result<Option<(String, bool)>, String> {
    use nix::net::if_::InterfaceFlags as F;
    let all = nix::ifaddrs::getifaddrs().map_err(|e| format!("getifaddrs: {e}"))?;
    for a in all {
        let ip = a.address.as_ref().and_then(|s| {
            s.as_sockaddr_in()
                .map(|v4| IpAddr::V4(v4.ip()))
                .or_else(|| s.as_sockaddr_in6().map(|v6| IpAddr::V6(v6.ip())))
        });
        if ip == Some(address) {
            let up = a.flags.contains(F::IFF_UP | F::IFF_RUNNING);
            return Ok(Some((a.interface_name, up)));
        }
    }
    Ok(None)
}

/// `struct ifreq` with its name set: 16 bytes of name, then the union (24 bytes on 64-bit
/// Linux; its first member is what SIOCGIFMTU fills, or the pointer SIOCETHTOOL reads).
#[repr(C)]
struct IfReq {
    name: [libc::c_char; libc::IFNAMSIZ],
    data: IfReqData,
}

#[repr(C)]
union IfReqData {
    mtu: libc::c_int,
    ptr: *mut libc::c_void,
    _size: [u8; 24],
}

fn ifreq(name: &str, data: IfReqData) -> Option<IfReq> {
    let bytes = name.as_bytes();
    // The kernel's names are at most 15 bytes and a NUL.
    if bytes.len() >= libc::IFNAMSIZ {
        return None;
    }
    let mut req = IfReq { name: [0; libc::IFNAMSIZ], data };
    for (to, &b) in req.name.iter_mut().zip(bytes) {
        *to = b as libc::c_char;
    }
    Some(req)
}

fn mtu(fd: libc::c_int, name: &str) -> Option<u32> {
    let mut req = ifreq(name, IfReqData { mtu: 0 })?;
    // SAFETY: `req` is a valid, initialised ifreq that outlives the call; SIOCGIFMTU writes
    // an int into its union.
    let rc = unsafe { libc::ioctl(fd, libc::SIOCGIFMTU, &mut req) };
    if rc != 0 {
        return None;
    }
    // SAFETY: after a successful SIOCGIFMTU the union holds the int it wrote.
    u32::try_from(unsafe { req.data.mtu }).ok()
}

/// One SIOCETHTOOL call: `buf` starts with the command, the kernel fills the rest.
fn ethtool(fd: libc::c_int, name: &str, buf: &mut [u8]) -> bool {
    let Some(mut req) = ifreq(name, IfReqData { ptr: buf.as_mut_ptr().cast() }) else {
        return false;
    };
    // SAFETY: the ifreq points at `buf`, sized for the command's struct, alive for the
    // call; the kernel writes within that struct.
    unsafe { libc::ioctl(fd, libc::SIOCETHTOOL, &mut req) == 0 }
}

/// ETHTOOL_GDRVINFO: `struct ethtool_drvinfo` (196 bytes), `driver` at bytes 4..36.
fn driver(fd: libc::c_int, name: &str) -> Option<String> {
    const GDRVINFO: u32 = 0x0000_0003;
    let mut buf = [0u8; 196];
    buf[..4].copy_from_slice(&GDRVINFO.to_ne_bytes());
    if !ethtool(fd, name, &mut buf) {
        return None;
    }
    let field = &buf[4..36];
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let driver = String::from_utf8_lossy(&field[..end]).into_owned();
    (!driver.is_empty()).then_some(driver)
}

/// ETHTOOL_GSET: `struct ethtool_cmd` (44 bytes), `speed` at 8..10 and `speed_hi` at
/// 28..30; 0xffffffff (SPEED_UNKNOWN) or 0 when the link has none.
fn speed(fd: libc::c_int, name: &str) -> Option<u32> {
    const GSET: u32 = 0x0000_0001;
    let mut buf = [0u8; 44];
    buf[..4].copy_from_slice(&GSET.to_ne_bytes());
    if !ethtool(fd, name, &mut buf) {
        return None;
    }
    let low = u16::from_ne_bytes([buf[8], buf[9]]);
    let high = u16::from_ne_bytes([buf[28], buf[29]]);
    let mbit = u32::from(high) << 16 | u32::from(low);
    (mbit != 0 && mbit != u32::MAX).then_some(mbit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_found_with_its_mtu_and_no_driver() {
        let nic = toward(IpAddr::from([127, 0, 0, 1])).unwrap();
        assert_eq!(nic.name, "lo");
        assert_eq!(nic.address, IpAddr::from([127, 0, 0, 1]));
        assert_eq!((nic.driver.as_deref(), nic.speed_mbit), (None, None));
        assert!(nic.mtu.is_some_and(|m| m >= 1500), "{nic:?}");
        assert!(nic.up);
        let said = nic.to_string();
        assert!(said.starts_with("lo (127.0.0.1): no driver, speed unknown, MTU "), "{said}");
        assert!(said.ends_with(", up"), "{said}");
    }

    #[test]
    fn a_name_too_long_for_the_kernel_is_no_request() {
        assert!(ifreq(&"x".repeat(16), IfReqData { mtu: 0 }).is_none());
        assert!(ifreq(&"x".repeat(15), IfReqData { mtu: 0 }).is_some());
    }
}

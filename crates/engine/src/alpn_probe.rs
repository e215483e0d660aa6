//! One TLS handshake before a run, to learn which protocol the server chooses by ALPN
//! (`herd run --alpn h2,http/1.1`, and `--h2`, to say "the server does not speak HTTP/2"
//! once instead of failing every connection). Blocking, bounded by a timeout, not counted
//! in the run.

use std::io;
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::time::Duration;

use thiserror::Error;

use crate::Target;

#[derive(Debug, Error)]
pub enum ProbeError {
    #[error("the target is not https: there is no ALPN to ask")]
    NotTls,
    #[error("the target has no address to connect to")]
    NoAddress,
    #[error("cannot connect to {addr}")]
    Connect {
        addr: String,
        #[source]
        source: io::Error,
    },
    #[error("the TLS handshake with {addr} failed")]
    Handshake {
        addr: String,
        #[source]
        source: io::Error,
    },
}

/// Connects to `target`'s first address, completes a TLS handshake offering the target's
/// ALPN list, and returns the protocol id the server chose (None: it chose none, or refused
/// the handshake for want of a common protocol).
pub fn negotiate_alpn(target: &Target, timeout: Duration) -> Result<Option<Vec<u8>>, ProbeError> {
    let tls = target.tls.as_ref().ok_or(ProbeError::NotTls)?;
    let mut session = tls.connect().map_err(|e| ProbeError::Handshake {
        addr: target.host.clone(),
        source: io::Error::other(e),
    })?;
    let (addr, handshake) = match &target.unix {
        Some(path) => {
            let addr = path.display().to_string();
            let connect = |source| ProbeError::Connect { addr: addr.clone(), source };
            let mut sock = UnixStream::connect(path).map_err(connect)?;
            sock.set_read_timeout(Some(timeout)).map_err(connect)?;
            sock.set_write_timeout(Some(timeout)).map_err(connect)?;
            (addr.clone(), complete(&mut session, &mut sock))
        }
        None => {
            let first = target.addrs.first().ok_or(ProbeError::NoAddress)?;
            let addr = first.to_string();
            let connect = |source| ProbeError::Connect { addr: addr.clone(), source };
            let mut sock = TcpStream::connect_timeout(first, timeout).map_err(connect)?;
            // As every socket of a run (socket.rs): no Nagle wait between the handshake's
            // flights.
            sock.set_nodelay(true).map_err(connect)?;
            sock.set_read_timeout(Some(timeout)).map_err(connect)?;
            sock.set_write_timeout(Some(timeout)).map_err(connect)?;
            (addr.clone(), complete(&mut session, &mut sock))
        }
    };
    match handshake {
        Ok(()) => Ok(session.alpn_protocol().map(<[u8]>::to_vec)),
        // The server's way of saying it speaks none of the protocols offered (RFC 7301 §3.2).
        Err(e) if refused_alpn(&e) => Ok(None),
        Err(source) => Err(ProbeError::Handshake { addr, source }),
    }
}

fn refused_alpn(e: &io::Error) -> bool {
    let alert = rustls::Error::AlertReceived(rustls::AlertDescription::NoApplicationProtocol);
    e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) == Some(&alert)
}

fn complete(
    session: &mut rustls::ClientConnection,
    sock: &mut (impl io::Read + io::Write),
) -> io::Result<()> {
    while session.is_handshaking() {
        session.complete_io(sock)?;
    }
    // Say goodbye politely; the server may log the connection either way.
    session.send_close_notify();
    let _ = session.complete_io(sock);
    Ok(())
}

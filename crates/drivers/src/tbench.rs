//! dbench's `tbench_srv` (Debian's `dbench` 4.0): the calibration server of a netbench cell.
//! The `tbench` client replays the same NetBench trace (client.txt) as smbtorture's NBENCH,
//! but sends each operation over a plain TCP connection to tbench_srv, which answers with
//! the bytes a file server would have sent, touching no file system and speaking no SMB:
//! the network-only ceiling of the trace, as Andrew Tridgell made it for seed 004's dispute.
//! Started as
//!
//! ```text
//! tbench_srv
//! ```
//!
//! with no config and no option the lab needs: it listens on port 7003 of every address
//! ([`PORT`], built in; `-t` only sets socket options) and forks a process per connection,
//! which stays in the process group the lab made for it. So the lab runs it only in a server
//! namespace of its own (a network path), where every address is herd's and the port free.
//! Ready when that port accepts a TCP connection ([`Probe::Tcp`]).

use std::net::SocketAddr;

use crate::error::DriverError;
use crate::launch::{Launch, Probe};
use crate::programs::TBENCH_SRV;
use crate::run_dir::Places;
use crate::spec::ServerSpec;
use crate::version::{word_after, VersionProbe};

/// The port tbench_srv listens on and tbench connects to: dbench 4.0's `TCP_PORT`.
pub const PORT: u16 = 7003;

pub(crate) fn render(spec: &ServerSpec, places: &Places) -> Result<Launch, DriverError> {
    if let Some(n) = spec.workers {
        return Err(DriverError::WorkersNotSupported {
            server: spec.kind.name().to_owned(),
            workers: n.get(),
            why: "tbench_srv forks one process per client connection",
        });
    }
    if spec.listen.port() != PORT {
        return Err(DriverError::FixedPort {
            server: TBENCH_SRV.name.to_owned(),
            port: PORT,
            addr: spec.listen,
        });
    }
    let exe = spec.programs.path(&TBENCH_SRV, spec.kind)?;
    // tbench_srv prints no version; the tbench beside it prints the package's
    // (`dbench version 4.00 - …`), and Debian ships the two together.
    let tbench = exe.with_file_name("tbench");
    // Asked on every address it listens on: the first of the host's, given by the lab.
    let ready = Probe::Tcp(SocketAddr::new(spec.listen.ip(), PORT));
    let process = places.process("tbench_srv", vec![exe.into()]);
    Ok(Launch {
        dirs: places.dirs(&["logs"]),
        versions: vec![VersionProbe::new(TBENCH_SRV.name, tbench, "--help", parse_version)],
        ..Launch::new(process, ready)
    })
}

/// `dbench version 4.00 - Copyright Andrew Tridgell 1999-2004` → `dbench 4.00`.
fn parse_version(output: &str) -> Option<String> {
    word_after(output, "dbench version").map(|v| format!("dbench {v}"))
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::testing::spec;
    use crate::ServerKind;

    #[test]
    fn starts_bare_on_its_built_in_port() {
        let mut s = spec(ServerKind::Tbench, None);
        s.listen = "198.18.3.2:7003".parse().unwrap();
        let l = crate::render(&s).unwrap();
        assert_eq!(l.processes.len(), 1);
        assert_eq!(l.processes[0].argv, [OsString::from("/usr/bin/tbench_srv")]);
        assert_eq!(l.ready, Probe::Tcp("198.18.3.2:7003".parse().unwrap()));
        assert!(l.files.is_empty() && l.validate.is_empty());
    }

    #[test]
    fn another_port_is_refused_with_the_way_out() {
        let mut s = spec(ServerKind::Tbench, None);
        s.listen = "198.18.3.2:80".parse().unwrap();
        let e = crate::render(&s).unwrap_err();
        assert_eq!(
            e.to_string(),
            "tbench_srv listens on port 7003 of every address, built in; 198.18.3.2:80 was \
             asked: give it port 7003 in a namespace of its own"
        );
    }

    #[test]
    fn version_is_dbenchs() {
        let out = "dbench version 4.00 - Copyright Andrew Tridgell 1999-2004\n\nUsage: [OPTION...]";
        assert_eq!(parse_version(out).as_deref(), Some("dbench 4.00"));
        assert_eq!(parse_version("usage: tbench_srv [OPTIONS]"), None);
    }
}

//! `[runner] placement`: where the servers and the client run on this machine's CPUs when the
//! experiment does not pin them itself. `apart` gives the servers the first half of the CPUs
//! herd may use and the client the rest, so that neither takes CPU time from the other and
//! the client's verdicts judge the client, not the sharing; on one CPU both share it, and the
//! caller says that the verdicts will warn for that reason.
//!
//! Resolved when a run starts ([`Experiment::place`]), not when the file is read: the CPUs
//! are this machine's, and the file must mean the same on another.

use herd_topo::CpuSet;

use super::Experiment;

/// How the lab places servers and client when the experiment names no CPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Placement {
    /// As written: `[client] cpus` and the `server_cpus` axis, else unpinned.
    #[default]
    AsWritten,
    /// Servers and client on CPUs apart, when herd may use two or more.
    Apart,
}

/// What [`Experiment::place`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placed {
    /// Nothing: the experiment places its programs itself, or leaves them unpinned.
    AsWritten,
    /// The servers on `servers`, the client on `client`.
    Apart { servers: CpuSet, client: CpuSet },
    /// `apart` was asked, but herd may use one CPU: client and servers share it.
    Shared,
}

impl Experiment {
    /// Applies `[runner] placement` to `usable`, the CPUs herd may use (its affinity,
    /// ascending): with `apart` and two or more of them, the servers get the first half
    /// (rounded up) and the client the rest.
    pub fn place(&mut self, usable: &[usize]) -> Placed {
        // With a `[hosts]` server the servers have a machine of their own already.
        let server_host = self.hosts.as_ref().is_some_and(|h| h.server.is_some());
        if self.runner.placement != Placement::Apart || server_host {
            return Placed::AsWritten;
        }
        if usable.len() < 2 {
            return Placed::Shared;
        }
        let (servers, client) = usable.split_at(usable.len().div_ceil(2));
        let (servers, client) = (CpuSet::Only(servers.to_vec()), CpuSet::Only(client.to_vec()));
        self.server_cpus = servers.clone();
        self.client_cpus = client.clone();
        Placed::Apart { servers, client }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quickstart() -> Experiment {
        let b = crate::bundled::find("quickstart").unwrap();
        super::super::parse(b.text, "bundled:quickstart").unwrap()
    }

    #[test]
    fn the_quick_start_asks_for_servers_and_client_apart() {
        assert_eq!(quickstart().runner.placement, Placement::Apart);
    }

    #[test]
    fn apart_splits_the_usable_cpus_servers_first() {
        for (usable, servers, client) in [
            (vec![0, 1], "0", "1"),
            (vec![0, 1, 2], "0-1", "2"),
            (vec![2, 3, 4, 5], "2-3", "4-5"),
            (vec![0, 3], "0", "3"),
        ] {
            let mut e = quickstart();
            let placed = e.place(&usable);
            let want = Placed::Apart {
                servers: CpuSet::parse(servers).unwrap(),
                client: CpuSet::parse(client).unwrap(),
            };
            assert_eq!(placed, want, "{usable:?}");
            assert_eq!(
                (e.server_cpus.to_string(), e.client_cpus.to_string()),
                (servers.into(), client.into())
            );
            for cell in crate::matrix::cells(&e) {
                assert_eq!(cell.server_cpus.to_string(), servers, "{}", cell.key);
            }
        }
    }

    #[test]
    fn one_cpu_is_shared_and_as_written_is_left_alone() {
        let mut e = quickstart();
        assert_eq!(e.place(&[0]), Placed::Shared);
        assert_eq!((e.server_cpus.clone(), e.client_cpus.clone()), (CpuSet::All, CpuSet::All));
        let text =
            crate::bundled::find("quickstart").unwrap().text.replace("placement = \"apart\"", "");
        let mut e = super::super::parse(&text, "q.toml").unwrap();
        assert_eq!(e.place(&[0, 1]), Placed::AsWritten);
        assert_eq!(e.client_cpus, CpuSet::All);
    }
}

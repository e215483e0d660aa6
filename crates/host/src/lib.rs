//! herd's helper on each lab host, and herd's typed link to it.
//!
//! When the lab runs a role on a real host, herd starts `ssh HOST herd host` and talks to the
//! helper over that channel's stdin and stdout: no port is opened on any host. The helper
//! starts and stops the cell's programs there, probes their readiness, reads their CPU time
//! (from a cgroup of their own where the host allows one) and their logs, and prints the
//! host's disclosure. Whatever ends it in order — the channel closing (herd killed, the link
//! dropped), a signal, `bye` — it stops everything it started and removes what it made;
//! what a SIGKILL leaves, the next helper's `clean` removes.
//!
//! - [`protocol`]: the messages, one JSON object per line (`herd.host.v1`).
//! - [`serve`]: the helper's loop and its ending; [`host`]: what it does per request, through
//!   herd-topo's `Supervisor`; [`rundir`]: its run directory and what crashed helpers left.
//! - [`client`]: [`HostLink`], herd's side, over any pipe.
//! - [`lines`]: lines read with a bound; [`facts`]: the host's name, kernel and CPUs.
//!
//! This crate knows nothing of SSH, experiments or the lab: the binary (`herd host`) runs
//! the loop, the lab drives the link.

pub mod client;
pub mod facts;
pub mod host;
pub mod keeper;
pub mod lines;
pub mod protocol;
pub mod rundir;
pub mod serve;

pub use client::{HostLink, LinkError};
pub use host::{Host, Options};
pub use keeper::Keeper;
pub use protocol::{Answer, Probe, Readiness, Reply, Request, StartSpec, PROTOCOL};
pub use serve::{run_stdio, Loop, Why};

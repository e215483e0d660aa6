//! herd's hosts: where the lab's programs run and how they are started and stopped.
//!
//! Brief overview:
//! - [`proc`] is the one place herd starts other programs (servers, clients, validators):
//!   each in its own process group, pinned to a [`CpuSet`] when asked, logged, recorded in a
//!   [`Registry`] on disk, and stopped by the PID it was given, never by name.
//! - [`cpuset`] parses and applies CPU lists (`0`, `0-1`, `0,2`, `all`).
//! - [`cgroup`] reads the servers' CPU time from cgroups made for them, where herd can make
//!   them ([`CpuAccounting`] says how it was read).
//! - [`nic`] names the network card toward an address, with its driver, speed and MTU.
//! - [`registry`] is the on-disk record of what a lab run started, so that `herd lab clean`
//!   can stop what a crashed run left behind, and only that.
//!
//! - [`net`] is the network path between client and server: a plan of namespaces and
//!   commands, pure, and the plan applied and torn down again (`net::topology`).

pub mod cgroup;
pub mod cpuset;
pub mod net;
pub mod nic;
pub mod proc;
pub mod registry;
pub mod timewait;
pub mod user;

pub use cgroup::{Cgroups, CpuAccounting};
pub use cpuset::{CpuSet, CpuSetError};
pub use proc::{Captured, Piped, PipedSpawn, ProcError, Running, Spawn, Supervisor};
pub use registry::Registry;

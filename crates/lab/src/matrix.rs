//! The matrix: every combination of the axes' values, minus the excluded ones, as cells
//! with a stable key. The key (`server=nginx workload=page load=c100`) names a cell in the
//! store across repetitions and across runs of the same experiment. A cell whose protocol
//! its server, client or path cannot carry stays in the matrix, refused with the reason
//! (`crate::refusal`); [`runnable`] leaves those out. An experiment with an A/A control
//! (`[runner] controls`) adds one cell after them, [`control_twin`]: its control cell again,
//! under a key of its own, so that the store and the report keep its runs apart.

use herd_drivers::{ProxyKind, ServerKind};
use herd_stats::Protocol;
use herd_store::CALIBRATION_SERVER;
use herd_topo::net::{Path as NetPath, Shaping};
use herd_topo::CpuSet;

use crate::client::Tool;
use std::path::Path;

use crate::docroot;
use crate::experiment::{
    AxisName, Experiment, ServerDef, WorkloadDef, WorkloadKind, DEFAULT_CLIENT, DEFAULT_PROTOCOL,
    UNSHAPED,
};
use crate::load::{Load, Method, Request};

/// One point of the matrix (all repetitions of it).
#[derive(Debug, Clone)]
pub struct Cell {
    /// Position in matrix order, from 0.
    pub index: usize,
    /// `axis=value` pairs joined by spaces, in axis order.
    pub key: String,
    /// The value of every axis, in axis order.
    pub values: Vec<(AxisName, String)>,
    pub server: ServerDef,
    /// What client and server speak ([`DEFAULT_PROTOCOL`] without a `protocol` axis).
    pub protocol: Protocol,
    pub workload: WorkloadDef,
    pub load_name: String,
    pub load: Load,
    pub client: Tool,
    pub server_cpus: CpuSet,
    /// The network path between client and server; None: loopback in herd's own namespace.
    pub path: Option<NetPath>,
    /// The rate the path's links are shaped to; None: unshaped.
    pub link: Option<Shaping>,
    /// Why this cell cannot run at all (its protocol is one its server, client or path
    /// cannot carry: [`crate::refusal`]); None: it runs. A refused cell starts nothing.
    pub refused: Option<String>,
    /// The key of the cell this one is the A/A twin of ([`control_twin`]); None for the
    /// matrix's own cells.
    pub control_of: Option<String>,
}

impl Cell {
    /// Its value on `axis`, if the matrix has that axis.
    pub fn axis(&self, axis: AxisName) -> Option<&str> {
        self.values.iter().find(|(a, _)| *a == axis).map(|(_, v)| v.as_str())
    }

    /// Its axis values as the store keeps them (`("server", "nginx")` …), which published
    /// figures are matched against.
    pub fn axis_values(&self) -> Vec<(String, String)> {
        self.values.iter().map(|(a, v)| (a.as_str().to_owned(), v.clone())).collect()
    }

    /// The program its path runs on the router (HAProxy, nginx, sslh), if any.
    pub fn proxy(&self) -> Option<ProxyKind> {
        self.path.and_then(proxy_of)
    }

    /// The request this cell sends, with the files under `docroot` it uses (a POST's body,
    /// a SPECweb99 set), or None when its server cannot serve its workload. The dry run, the
    /// file check and the runner all build it here.
    pub fn request(&self, docroot: &Path, expect_body_bytes: Option<u64>) -> Option<Request> {
        let path = self.workload.path_on(&self.server)?;
        let (method, specweb_dir, expect_body_bytes) = match self.workload.kind {
            WorkloadKind::Post { size } => (
                Method::Post {
                    body_file: docroot::body_file(docroot, size),
                    content_type: "application/octet-stream".into(),
                },
                None,
                expect_body_bytes,
            ),
            // A mix has no single length; herd run checks each file's.
            WorkloadKind::Specweb { dirs } => {
                (Method::Get, Some(docroot::specweb_dir(docroot, dirs)), None)
            }
            _ => (Method::Get, None, expect_body_bytes),
        };
        Some(Request { path, method, specweb_dir, expect_status: 200, expect_body_bytes })
    }
}

/// The router program of `path`: the proxy of the same name (the path names are the
/// programs' names, and a test holds them together).
pub fn proxy_of(path: NetPath) -> Option<ProxyKind> {
    ProxyKind::ALL.into_iter().find(|k| k.name() == path.name())
}

/// The cells of `e`, in matrix order (first axis slowest).
pub fn cells(e: &Experiment) -> Vec<Cell> {
    let mut combos: Vec<Vec<(AxisName, String)>> = vec![Vec::new()];
    for axis in &e.axes {
        combos = combos
            .into_iter()
            .flat_map(|prefix| {
                axis.values.iter().map(move |v| {
                    let mut c = prefix.clone();
                    c.push((axis.name, v.clone()));
                    c
                })
            })
            .collect();
    }
    let excluded = |combo: &[(AxisName, String)]| {
        e.exclude.iter().any(|rule| {
            rule.iter().all(|(axis, value)| {
                combo.iter().any(|(a, v)| a == axis && herd_store::names_value(value, v))
            })
        })
    };
    let mut out = Vec::new();
    for mut combo in combos.into_iter().filter(|c| !excluded(c)) {
        let netbench_calibration =
            e.workloads.get(value_of(&combo, AxisName::Workload)).is_some_and(|w| w.is_netbench())
                && value_of(&combo, AxisName::Server) == CALIBRATION_SERVER;
        if netbench_calibration {
            // A NetBench cell's calibration runs tbench, whatever the client axis says: its
            // key and values say so too, as its record does.
            if let Some((_, client)) = combo.iter_mut().find(|(a, _)| *a == AxisName::Client) {
                *client = Tool::Tbench.name().to_owned();
            }
        }
        let get = |axis: AxisName| combo.iter().find(|(a, _)| *a == axis).map(|(_, v)| v.as_str());
        let (Some(server), Some(workload), Some(load_name)) =
            (get(AxisName::Server), get(AxisName::Workload), get(AxisName::Load))
        else {
            continue; // the three are required by the file format
        };
        let (Some(server), Some(workload), Some(load)) =
            (e.servers.get(server), e.workloads.get(workload), e.loads.get(load_name))
        else {
            continue; // names were resolved by experiment::parse
        };
        let netbench = workload.is_netbench();
        // A NetBench cell's calibration is tbench_srv, the same trace over plain TCP, where
        // an HTTP cell's is herd serve.
        let tbench;
        let server = if server.name == CALIBRATION_SERVER && netbench {
            tbench = ServerDef { kind: ServerKind::Tbench, ..server.clone() };
            &tbench
        } else {
            server
        };
        let client = if server.kind == ServerKind::Tbench {
            Tool::Tbench
        } else {
            get(AxisName::Client).and_then(|c| c.parse().ok()).unwrap_or(DEFAULT_CLIENT)
        };
        // experiment::parse checked every protocol: one that does not parse leaves its cell
        // out rather than run it as another.
        let protocol = match get(AxisName::Protocol).map(str::parse::<Protocol>) {
            None => DEFAULT_PROTOCOL,
            Some(Ok(p)) => p,
            Some(Err(_)) => continue,
        };
        let server_cpus = get(AxisName::ServerCpus)
            .and_then(|c| CpuSet::parse(c).ok())
            .unwrap_or_else(|| e.server_cpus.clone());
        // experiment::parse checked every path and link value: one that does not parse here
        // leaves its cell out rather than run it over loopback or unshaped.
        let path = match get(AxisName::Path).map(str::parse::<NetPath>) {
            None => None,
            Some(Ok(p)) => Some(p),
            Some(Err(_)) => continue,
        };
        let link = match get(AxisName::Link) {
            None | Some(UNSHAPED) => None,
            Some(l) => match Shaping::parse(l) {
                Ok(s) => Some(s),
                Err(_) => continue,
            },
        };
        let key =
            combo.iter().map(|(a, v)| format!("{}={v}", a.as_str())).collect::<Vec<_>>().join(" ");
        let refused = crate::refusal::refusal(
            server.kind,
            server.keepalive_requests,
            protocol,
            client,
            load,
            path,
            netbench,
        );
        out.push(Cell {
            index: out.len(),
            key,
            values: combo.clone(),
            server: server.clone(),
            protocol,
            workload: workload.clone(),
            load_name: load_name.to_string(),
            load: load.clone(),
            client,
            server_cpus,
            path,
            link,
            refused,
            control_of: None,
        });
    }
    out
}

/// What an A/A twin's key adds to its cell's: `server=herd load=c8 control=twin`.
pub const TWIN_KEY: &str = "control=twin";

/// The A/A twin of `e`'s control cell (`[runner] controls`, resolved by experiment::parse to
/// one of `cells`): that cell again, keyed `<its key> control=twin`, with an index after
/// every one of `cells` (its run directories are its own). None without controls, or when
/// the control cell is not among `cells`.
pub fn control_twin(e: &Experiment, cells: &[Cell]) -> Option<Cell> {
    let of = &e.runner.controls.as_ref()?.of;
    let cell = cells.iter().find(|c| c.key == *of)?;
    Some(Cell {
        index: cells.iter().map(|c| c.index + 1).max().unwrap_or(0),
        key: format!("{} {TWIN_KEY}", cell.key),
        control_of: Some(cell.key.clone()),
        ..cell.clone()
    })
}

/// The value `combo` gives `axis` ("" when it has none).
fn value_of(combo: &[(AxisName, String)], axis: AxisName) -> &str {
    combo.iter().find(|(a, _)| *a == axis).map_or("", |(_, v)| v.as_str())
}

/// The cells of `e` that run: [`cells`] without the refused ones.
pub fn runnable(e: &Experiment) -> Vec<Cell> {
    cells(e).into_iter().filter(|c| c.refused.is_none()).collect()
}

/// The programs `def` needs located, its own `binary` (where the file names one) in place of
/// the driver's server program, which then need not be installed at all.
pub(crate) fn server_programs(
    def: &ServerDef,
    needed: &[&'static herd_drivers::Program],
    herd_exe: &std::path::Path,
) -> Result<herd_drivers::Programs, herd_drivers::DriverError> {
    server_programs_with(def, needed, herd_exe, &|p| {
        use std::os::unix::fs::PermissionsExt as _;
        p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    })
}

/// [`server_programs`] on a machine where `executable` says which files are executable (a
/// `[hosts]` server host); herd is at `herd_exe` there.
pub(crate) fn server_programs_with(
    def: &ServerDef,
    needed: &[&'static herd_drivers::Program],
    herd_exe: &std::path::Path,
    executable: &dyn Fn(&std::path::Path) -> bool,
) -> Result<herd_drivers::Programs, herd_drivers::DriverError> {
    use herd_drivers::Programs;
    let Some(binary) = &def.binary else {
        return Programs::locate_with(needed, herd_exe, executable);
    };
    let Some(&main) = herd_drivers::programs_needed(def.kind, None).first() else {
        return Programs::locate_with(needed, herd_exe, executable);
    };
    let rest: Vec<&'static herd_drivers::Program> =
        needed.iter().copied().filter(|p| !std::ptr::eq(*p, main)).collect();
    Ok(Programs::locate_with(&rest, herd_exe, executable)?.with(main.name, binary.clone()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_netbench_calibration_cell_says_it_runs_tbench() {
        let b = crate::bundled::find("seed004-netbench").unwrap();
        let e = crate::experiment::parse(b.text, b.name).unwrap();
        let all = cells(&e);
        let calibration: Vec<&Cell> =
            all.iter().filter(|c| c.server.kind == ServerKind::Tbench).collect();
        assert!(!calibration.is_empty());
        for c in calibration {
            assert_eq!(c.client, Tool::Tbench);
            assert!(c.key.contains("client=tbench") && !c.key.contains("smbtorture"), "{}", c.key);
            assert!(c.values.contains(&(AxisName::Client, "tbench".to_owned())), "{:?}", c.values);
        }
        // Samba's cells keep the axis' client.
        assert!(all
            .iter()
            .filter(|c| c.server.kind == ServerKind::Samba)
            .all(|c| c.key.contains("client=smbtorture")));
    }

    #[test]
    fn every_proxy_has_its_path_and_both_agree_on_balancing() {
        for kind in ProxyKind::ALL {
            let path: NetPath = kind.name().parse().unwrap();
            assert_eq!(proxy_of(path), Some(kind));
            // The plan gives the server host two addresses exactly where the proxy balances,
            // so the lab hands every address to the proxy as its backends.
            assert_eq!(path.balanced(), kind.balances(), "{kind}");
        }
        assert_eq!(proxy_of(NetPath::NftDnat), None);
    }
}

//! Workloads: what a cell asks its server for. A static file of a size (one, or a sweep on a
//! log axis, expanded into one workload per size), a SPECweb99-like file set, the 9×9 page,
//! the include page, a POST. Which URL that is depends on the server: herd serve has the
//! pages built in, PHP servers run `9x9.php`, and a server without PHP cannot serve them.

use herd_drivers::{page_path, Page, Php};

use super::ServerDef;

/// A workload after expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkloadDef {
    /// The axis value: the table's name, or `NAME:SIZE` for each size of a sweep.
    pub name: String,
    pub kind: WorkloadKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorkloadKind {
    /// `GET /sizes/SIZE.html`, a generated file of exactly SIZE bytes.
    Static { size: u64 },
    /// A SPECweb99-like set of `dirs` directories, requested by its access mix (herd only).
    Specweb { dirs: u32 },
    /// Seed 003's 9×9 multiplication table, computed per request.
    NineByNine,
    /// Seed 003's page that includes four text files, read per request.
    Include,
    /// `POST` of SIZE bytes, echoed back.
    Post { size: u64 },
    /// Seed 004's file-serving half: dbench's NetBench trace replayed over SMB1 by
    /// smbtorture against Samba, one client process per step's client.
    Netbench,
}

impl WorkloadDef {
    /// Whether it is NetBench's file serving (SMB), not an HTTP request.
    pub fn is_netbench(&self) -> bool {
        self.kind == WorkloadKind::Netbench
    }

    /// The path this workload requests on `server`, or None when that server cannot serve it
    /// (and for NetBench, which requests no URL).
    pub fn path_on(&self, server: &ServerDef) -> Option<String> {
        let page = |p| page_path(server.kind, server.php, p).map(str::to_string);
        match self.kind {
            WorkloadKind::Static { size } => Some(static_path(size)),
            WorkloadKind::Specweb { dirs } => Some(specweb_path(dirs)),
            WorkloadKind::NineByNine => page(Page::NineByNine),
            WorkloadKind::Include => page(Page::Include),
            WorkloadKind::Post { .. } => page(Page::Echo),
            WorkloadKind::Netbench => None,
        }
    }

    /// Why `server` cannot serve it, with what would.
    pub fn unsupported_reason(&self, server: &ServerDef) -> String {
        if self.is_netbench() {
            return format!(
                "server `{}` cannot serve workload `{}` (NetBench's file serving over SMB): use \
                 server samba",
                server.name, self.name
            );
        }
        let what = match self.kind {
            WorkloadKind::NineByNine | WorkloadKind::Include => "a dynamic page",
            WorkloadKind::Post { .. } => "a POST that needs a page to echo it",
            _ => "this workload",
        };
        // The driver's own PHP choices: the setting that would make this server serve it.
        let choices: Vec<String> = herd_drivers::php_choices(server.kind)
            .iter()
            .map(|p| format!("php = \"{}\"", if *p == Php::Fpm { "fpm" } else { "cgi" }))
            .collect();
        const WITH_PHP: &str =
            "a built-in server with PHP (nginx-fpm, apache-fpm, apache-cgi, lighttpd-cgi) or herd";
        let instead = if choices.is_empty() {
            WITH_PHP.to_owned()
        } else {
            format!("{} in [servers.{}], or {WITH_PHP}", choices.join(" or "), server.name)
        };
        format!(
            "server `{}` cannot serve workload `{}` ({what}): use {instead}",
            server.name, self.name
        )
    }

    /// A few words for tables and the dry run.
    pub fn describe(&self) -> String {
        match self.kind {
            WorkloadKind::Static { size } => format!("static file, {size} bytes"),
            WorkloadKind::Specweb { dirs } => {
                format!("SPECweb99-like file set, {dirs} directories")
            }
            WorkloadKind::NineByNine => "9x9 multiplication table (dynamic)".to_string(),
            WorkloadKind::Include => "page including four text files (dynamic)".to_string(),
            WorkloadKind::Post { size } => format!("POST of {size} bytes, echoed"),
            WorkloadKind::Netbench => {
                "NetBench trace over SMB1 (dbench's client.txt, replayed by smbtorture)".to_string()
            }
        }
    }
}

/// Where a static file of `size` bytes lives in the docroot (herd serve --generate's layout).
pub fn static_path(size: u64) -> String {
    format!("/sizes/{size}.html")
}

/// Where a SPECweb99-like set of `dirs` directories is served from: its own subdirectory, so
/// that sets of several sizes can sit side by side.
pub fn specweb_path(dirs: u32) -> String {
    format!("/sw{dirs}/")
}

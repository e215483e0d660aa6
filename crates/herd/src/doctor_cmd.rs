//! `herd doctor`: prints herd-lab's machine checks, one line each, and exits 0 when nothing
//! is missing, 1 otherwise (warnings alone do not fail).

use std::process::ExitCode;

use herd_lab::doctor::{self, Status};

pub(crate) fn main() -> ExitCode {
    let herd_exe = std::env::current_exe().unwrap_or_else(|_| "herd".into());
    let scratch = std::env::temp_dir().join(format!("herd-doctor-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&scratch) {
        eprintln!("herd doctor: cannot create {}: {e}", scratch.display());
        return ExitCode::FAILURE;
    }
    let checks = doctor::checks(&herd_exe, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    let mut n_missing = 0;
    for c in &checks {
        let tag = match c.status {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Missing => {
                n_missing += 1;
                "MISS"
            }
        };
        println!("{tag}  {}: {}", c.what, c.detail);
    }
    if n_missing > 0 {
        println!(
            "\n{n_missing} missing: experiments that need them cannot run (herd lab refuses them before they start); install what each line names"
        );
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

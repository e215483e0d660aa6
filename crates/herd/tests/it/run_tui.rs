//! `herd run --tui`, tested as a person uses it: in tmux, the screen captured while the run
//! goes (the run, its rate and latency charts, the failures), `q` pressed to stop it, and the
//! terminal given back with the summary of what was measured (interrupted, exit 130). And
//! without a terminal it is refused before any load.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::disallowed_methods)] // the test drives tmux, and starts herd serve

use std::process::Command;
use std::time::{Duration, Instant};

use crate::util::{herd, text, wait_for, Serve};

/// A tmux session of its own (its own socket, so nothing of the user's is touched), killed
/// when dropped.
struct Tmux {
    socket: String,
    session: &'static str,
}

impl Tmux {
    fn start(command: &str) -> Tmux {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let t = Tmux { socket: format!("herd-tui-{}-{n}", std::process::id()), session: "run" };
        let ok = Command::new("tmux")
            .args(["-L", &t.socket, "new-session", "-d", "-s", t.session, "-x", "110", "-y", "36"])
            .arg(command)
            .status()
            .expect("tmux is missing: apt-get install tmux");
        assert!(ok.success(), "tmux new-session failed");
        t
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-t", self.session])
            .output()
            .unwrap();
        text(&out.stdout)
    }

    fn keys(&self, keys: &str) {
        Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", self.session, keys])
            .status()
            .unwrap();
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).status();
    }
}

#[test]
fn the_view_shows_the_run_and_q_stops_it_with_its_summary() {
    view_then_q("run --tui -c 2 -t 1 -d 60s", "tui");
}

/// `herd cluster run --local 2`: the view shows the agents' merged seconds, and `q` stops
/// the coordinator, which stops its agents.
#[test]
fn a_spread_runs_view_shows_the_merged_run_and_q_stops_it() {
    view_then_q("cluster run --local 2 -- --tui -c 2 -t 1 -d 60s", "tui-cluster");
}

/// herd (`herd ARGS URL`, stdout into a file) in tmux: the view with two seconds drawn,
/// then `q`; it ends at once with 130 and the summary of what was measured.
fn view_then_q(args: &str, tag: &str) {
    let serve = Serve::start(&["-t", "1"]);
    let url = serve.url("/bytes/100");
    let dir = crate::util::tempdir(tag);
    let done = dir.join("exit");
    let herd_bin = env!("CARGO_BIN_EXE_herd");
    // Bounded: 60 s at most if the key never came. The view on stderr, tmux's terminal; the
    // summary on stdout, kept in a file, and the exit code.
    let command = format!(
        "{herd_bin} {args} {url} > {out}; echo $? > {done}; sleep 30",
        out = dir.join("out").display(),
        done = done.display()
    );
    let tmux = Tmux::start(&command);
    let mut screen = String::new();
    wait_for("the view with two seconds drawn", Duration::from_secs(30), || {
        screen = tmux.screen();
        screen.contains("2 s ·") || screen.contains("3 s ·")
    });
    for want in [
        &format!("herd run {url}")[..],
        "requests/s",
        "latency, each second (ms)",
        "failures by kind",
        "none so far",
        "req/s · p50",
        "herd's CPU",
        "q or Ctrl-C: stop the run",
    ] {
        assert!(screen.contains(want), "no `{want}` on the screen:\n{screen}");
    }
    let t = Instant::now();
    tmux.keys("q");
    wait_for("herd to end after q", Duration::from_secs(20), || done.exists());
    assert!(t.elapsed() < Duration::from_secs(20));
    let code = std::fs::read_to_string(&done).unwrap();
    assert_eq!(code.trim(), "130", "stopped early, as Ctrl-C does");
    // The view drew on stderr (the terminal); the summary went to stdout (a file here).
    let out = std::fs::read_to_string(dir.join("out")).unwrap();
    assert!(out.contains("requests in") && out.contains("interrupted"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_terminal_the_view_is_refused_before_any_load() {
    let out = herd().args(["run", "--tui", "-d", "1s", "http://127.0.0.1:9/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("--tui draws on the terminal, and stderr is not one"), "{err}");
    assert!(!err.contains("requests in"), "{err}");
}

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

    /// Waits until the screen is as `ready` wants it, or panics showing the last one. A
    /// capture can land mid-frame (a frame reaches tmux in pieces), so a screen is judged
    /// whole or looked at again, never asserted on as first seen.
    fn wait_for_screen(
        &self,
        what: &str,
        timeout: Duration,
        ready: impl Fn(&str) -> bool,
    ) -> String {
        let t = Instant::now();
        loop {
            let screen = self.screen();
            if ready(&screen) {
                return screen;
            }
            assert!(t.elapsed() < timeout, "no {what} after {timeout:?}:\n{screen}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn keys(&self, keys: &str) {
        Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", self.session, keys])
            .status()
            .unwrap();
    }
}

/// The shell's words that write the exit code to `done` whole (moved into place, so that a
/// test seeing the file reads the code), then keep the pane up for its screen to be read.
fn exit_code_into(done: &std::path::Path) -> String {
    let d = done.display();
    format!("echo $? > {d}.part && mv {d}.part {d}; sleep 30")
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux").args(["-L", &self.socket, "kill-server"]).status();
    }
}

#[test]
fn the_view_shows_the_run_and_q_stops_it_with_its_summary() {
    // An open loop: the client line says whether it keeps its schedule.
    view_then_q(
        "run --tui -c 2 -t 1 -d 60s --rate 2000",
        "tui",
        Ending { also: &["sends 1 ms+ late: "], ..Ending::RUN },
    );
}

/// `herd cluster run --local 2`: the view shows the agents' merged seconds, and `q` stops
/// the coordinator, which stops its agents.
#[test]
fn a_spread_runs_view_shows_the_merged_run_and_q_stops_it() {
    view_then_q(
        "cluster run --local 2 -- --tui -c 2 -t 1 -d 60s",
        "tui-cluster",
        Ending {
            title: "herd cluster run",
            also: &[
                "each agent's last second came late by: agent 0 ",
                " · agent 1 ",
                "(a closed loop: the verdict",
            ],
            ..Ending::RUN
        },
    );
}

/// `herd ab --tui`: the same view of ab's run; `q` ends it as ab's Ctrl-C does (exit 1,
/// ab's report of what was measured).
#[test]
fn abs_view_shows_the_run_and_q_stops_it_with_abs_report() {
    view_then_q(
        "ab --tui -t 60 -n 100000000 -c 2",
        "tui-ab",
        Ending {
            title: "herd ab",
            code: "1",
            summary: ["Complete requests:", "Time taken"],
            also: &[],
        },
    );
}

/// How a run viewed and stopped with `q` ends: its view's title (before the URL), what else
/// its view shows, its exit code, and what its summary on stdout says.
struct Ending {
    title: &'static str,
    also: &'static [&'static str],
    code: &'static str,
    summary: [&'static str; 2],
}

impl Ending {
    const RUN: Ending = Ending {
        title: "herd run",
        also: &[],
        code: "130",
        summary: ["requests in", "interrupted"],
    };
}

/// herd (`herd ARGS URL`, stdout into a file) in tmux: the view with two seconds drawn,
/// then `q`; it ends at once with its code and the summary of what was measured.
fn view_then_q(args: &str, tag: &str, ending: Ending) {
    let serve = Serve::start(&["-t", "1"]);
    let url = serve.url("/bytes/100");
    let dir = crate::util::tempdir(tag);
    let done = dir.join("exit");
    let herd_bin = env!("CARGO_BIN_EXE_herd");
    // Bounded: 60 s at most if the key never came. The view on stderr, tmux's terminal; the
    // summary on stdout, kept in a file, and the exit code.
    let command = format!(
        "{herd_bin} {args} {url} > {out}; {end}",
        out = dir.join("out").display(),
        end = exit_code_into(&done)
    );
    let tmux = Tmux::start(&command);
    let title = format!("{} {url}", ending.title);
    let mut wants = vec![
        &title[..],
        "requests/s",
        "latency, each second (ms)",
        "failures by kind",
        "none so far",
        "req/s · p50",
        "client: CPU ",
        "q or Ctrl-C: stop the run",
    ];
    wants.extend(ending.also);
    tmux.wait_for_screen("the view with two seconds drawn", Duration::from_secs(30), |screen| {
        wants.iter().all(|w| screen.contains(w))
            && (screen.contains("2 s ·") || screen.contains("3 s ·"))
    });
    let t = Instant::now();
    tmux.keys("q");
    wait_for("herd to end after q", Duration::from_secs(20), || done.exists());
    assert!(t.elapsed() < Duration::from_secs(20));
    let code = std::fs::read_to_string(&done).unwrap();
    assert_eq!(code.trim(), ending.code, "stopped early, as Ctrl-C does");
    // The view drew on stderr (the terminal); the summary went to stdout (a file here).
    let out = std::fs::read_to_string(dir.join("out")).unwrap();
    assert!(ending.summary.iter().all(|s| out.contains(s)), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A `herd ab --tui` run that ends by itself: once the view has closed, the terminal shows
/// ab's progress lines as ab prints them (held while the view had the terminal), and stdout
/// has ab's report, exit 0.
#[test]
fn abs_view_closes_at_the_end_and_abs_progress_lines_follow() {
    let serve = Serve::start(&["-t", "1"]);
    let url = serve.url("/bytes/100");
    let dir = crate::util::tempdir("tui-ab-end");
    let done = dir.join("exit");
    let command = format!(
        "{herd} ab --tui -n 3000 -c 2 {url} > {out}; {end}",
        herd = env!("CARGO_BIN_EXE_herd"),
        out = dir.join("out").display(),
        end = exit_code_into(&done)
    );
    let tmux = Tmux::start(&command);
    wait_for("herd ab to end", Duration::from_secs(30), || done.exists());
    assert_eq!(std::fs::read_to_string(&done).unwrap().trim(), "0");
    let wants = ["Completed 300 requests", "Completed 3000 requests", "Finished 3000 requests"];
    let screen = tmux.wait_for_screen("ab's progress lines", Duration::from_secs(5), |s| {
        wants.iter().all(|w| s.contains(w))
    });
    assert!(!screen.contains("requests/s"), "the view is gone:\n{screen}");
    let out = std::fs::read_to_string(dir.join("out")).unwrap();
    assert!(out.contains("Complete requests:      3000"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_terminal_the_view_is_refused_before_any_load() {
    let out = herd().args(["run", "--tui", "-d", "1s", "http://127.0.0.1:9/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("--tui draws on the terminal, and stderr is not one"), "{err}");
    assert!(!err.contains("requests in"), "{err}");
    // herd ab: refused before ab's banner.
    let out = herd().args(["ab", "--tui", "-n", "10", "http://127.0.0.1:9/"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("--tui draws on the terminal, and stderr is not one"), "{err}");
    assert!(err.contains("--json FILE"), "{err}");
    assert!(text(&out.stdout).is_empty(), "no banner: {}", text(&out.stdout));
}

/// `herd lab run --tui`: the matrix fills in (the first repetition's figure, the second
/// running), the run in flight is drawn second by second from herd's client, and `q` stops
/// the experiment as Ctrl-C does: the finished run kept, the interruption said once the
/// terminal is back, exit 130.
#[test]
fn the_labs_view_fills_the_matrix_follows_the_run_and_q_stops_it() {
    let dir = crate::util::tempdir("tui-lab");
    let file = dir.join("view.toml");
    std::fs::write(
        &file,
        "name = \"view\"\n[matrix]\nserver = [\"herd\"]\nworkload = [\"page\"]\nload = [\"d\"]\n\
         [workloads.page]\nkind = \"static\"\nsize = 100\n[loads.d]\nduration = \"4s\"\n\
         concurrency = 2\nwarmup = \"100ms\"\n[repetitions]\nmin = 2\nmax = 2\n[runner]\n\
         time_wait_below = 1000000\n[client]\nthreads = 1\n",
    )
    .unwrap();
    let done = dir.join("exit");
    // Bounded: two runs of 4 s if the key never came.
    let command = format!(
        "TMPDIR={tmp} {herd} lab run --tui --store {store} {file} > {out}; {end}",
        tmp = dir.display(),
        herd = env!("CARGO_BIN_EXE_herd"),
        store = dir.join("r.db").display(),
        file = file.display(),
        out = dir.join("out").display(),
        end = exit_code_into(&done)
    );
    let tmux = Tmux::start(&command);
    // The cell's row: its first repetition's figure, its second running, its median so far.
    let row_of = |screen: &str| -> Vec<String> {
        let row = screen.lines().find(|l| l.starts_with("│server=herd workload=page load=d "));
        row.map(|r| r.trim_matches(['│', ' ']).split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
    };
    let wants = [
        "herd lab run view",
        "1 of 2 runs stored",
        "now: run 2 · server=herd workload=page load=d · repetition 2",
        "1 cells · the figure of each repetition",
        "median req/s",
        "run in flight: ",
        "req/s · 0 failed",
        "latency (ms, from the intended send)",
        "q or Ctrl-C: stop the experiment",
    ];
    let screen = tmux.wait_for_screen(
        "the first run's figure and the second's seconds",
        Duration::from_secs(40),
        |screen| wants.iter().all(|w| screen.contains(w)) && row_of(screen).len() == 6,
    );
    let words = row_of(&screen);
    let row = words.join(" ");
    let figure: f64 = words[3].parse().unwrap_or_else(|_| panic!("no figure in {row}"));
    assert!(figure > 0.0 && words[4] == "running", "{row}");
    assert_eq!(words[5], words[3], "the median of one repetition is its figure: {row}");
    tmux.keys("q");
    wait_for("herd lab to end after q", Duration::from_secs(30), || done.exists());
    assert_eq!(std::fs::read_to_string(&done).unwrap().trim(), "130");
    let screen = tmux.wait_for_screen("the interruption said", Duration::from_secs(5), |s| {
        s.contains("herd: interrupted after 1 of 2 runs")
    });
    assert!(!screen.contains("run in flight"), "the view is gone:\n{screen}");
    // The stored command line is the run's, without the file the view followed.
    let store = herd_store::Store::open_existing(&dir.join("r.db")).unwrap();
    let exp = store.load_experiment(store.experiments().unwrap()[0].id).unwrap();
    let argv = &exp.cells[0].repetitions[0].record.client.argv;
    assert!(argv.iter().any(|a| a == "run"), "{argv:?}");
    assert!(!argv.iter().any(|a| a == "--series"), "the view's file is recorded: {argv:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The terminal hangs up mid-run (its window closed; here tmux killed): the run stops as on
/// Ctrl-C and writes what it measured, instead of the view spinning on a terminal that is gone
/// (crossterm's poll never returns then) and the run never ending.
#[test]
fn a_terminal_that_hangs_up_stops_the_run_with_its_results() {
    let serve = Serve::start(&["-t", "1"]);
    let url = serve.url("/bytes/100");
    let dir = crate::util::tempdir("tui-hangup");
    let (out, json) = (dir.join("out"), dir.join("run.json"));
    let command = format!(
        "{herd} run --tui -c 2 -t 1 -d 60s --json {json} {url} > {out}; {end}",
        herd = env!("CARGO_BIN_EXE_herd"),
        json = json.display(),
        out = out.display(),
        end = exit_code_into(&dir.join("exit"))
    );
    let tmux = Tmux::start(&command);
    tmux.wait_for_screen("the view", Duration::from_secs(30), |s| s.contains("2 s ·"));
    drop(tmux);
    wait_for("the run's results after the hangup", Duration::from_secs(15), || {
        std::fs::read_to_string(&json).is_ok_and(|j| j.ends_with("}\n") || j.ends_with('}'))
    });
    let summary = std::fs::read_to_string(&out).unwrap();
    assert!(summary.contains("(interrupted)"), "{summary}");
    let _ = std::fs::remove_dir_all(&dir);
}

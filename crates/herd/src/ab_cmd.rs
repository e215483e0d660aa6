//! `herd ab`: runs ab's command line on herd's engine and prints ab's report.
//!
//! The order of output is ab's: banner, "Benchmarking ...", progress on stderr, then the
//! report on stdout. Fatal network errors end the run as ab ends it (message, "Total of N
//! requests completed", ab's exit status); see docs/ab-compat.md.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use anyhow::Context as _;
use herd_ab::account::{self, AbAccounting, AbFatal, AbRecorder};
use herd_ab::args::{self, Parsed};
use herd_ab::{report, AbConfig};
use herd_run::Outputs;

use crate::single_run::{self, SingleRun};
use crate::tui::Tui;
use herd_engine::{Control, Target, TargetError, TlsClient, TlsSettings, TlsVersions};

pub(crate) fn main(raw: &[OsString]) -> ExitCode {
    let cfg = match args::parse(raw) {
        Ok(Parsed::Run(cfg)) => cfg,
        Ok(Parsed::Version) => {
            let mut out = io::stdout().lock();
            let _ = report::write_banner(&mut out, false);
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Help) => {
            eprint!("{}", args::usage());
            return exit(args::HELP_EXIT_CODE);
        }
        Err(e) if e.is_abs_own() => {
            // ab's err(): fprintf(stderr, "%s\n", "Invalid number of requests\n"); exit(1).
            eprint!("{e}\n\n");
            return exit(e.exit_code());
        }
        Err(e) => {
            let code = e.exit_code();
            // With its cause (an unreadable -p file's OS error), which is not in the message.
            eprintln!("herd ab: {:#}", anyhow::Error::from(e));
            return exit(code);
        }
    };
    match run(&cfg) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("herd ab: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cfg: &AbConfig) -> anyhow::Result<ExitCode> {
    // Bad input is reported before anything is printed.
    let bind = match &cfg.bind {
        Some(b) => Some(b.parse().map_err(|_| {
            anyhow::anyhow!(
                "-B {b:?} is not an IP address: give the local address to bind, e.g. -B 127.0.0.2"
            )
        })?),
        None => None,
    };
    if let Some(path) = &cfg.html_page {
        crate::report_cmd::check_page_path(path)?;
    }
    // `--io uring` where it cannot run, refused before the banner (herd ab speaks HTTP/1
    // alone; the engine settles it again, from the same probe, when it runs).
    herd_engine::io_choice::resolve(cfg.io, &herd_engine::Wire::Http1)?;
    // `--tui` where stderr is no terminal, refused before the banner too.
    let title = format!("herd ab {}", cfg.url.full);
    let mut tui = Tui::new(cfg.tui, title, None, false, "--json FILE")?;
    let _ = herd_engine::raise_nofile_limit();
    let started_at = herd_lab::runner::now_rfc3339();
    // Recorded before the load, as the lab does: the load average of the machine at rest.
    let environment =
        cfg.html_page.as_ref().map(|_| herd_lab::environment::record(env!("HERD_VERSION")));
    let html = cfg.html.is_some();
    let mut out = io::stdout().lock();
    report::write_banner(&mut out, html)?;
    let heartbeat = report::heartbeat_interval(cfg.requests, !cfg.show_progress);
    let progress = heartbeat > 0;
    if !html {
        let proxy = cfg.proxy.as_ref().map(|(h, p)| (h.as_str(), *p));
        report::write_benchmarking(&mut out, &cfg.url.hostname, proxy, progress)?;
    }
    if cfg.verbosity >= 2 {
        // ab: printf("INFO: %s header == \n---\n%s\n---\n", method, request head).
        let head = String::from_utf8_lossy(&cfg.request[..cfg.request_head_len]);
        write!(out, "INFO: {} header == \n---\n{head}\n---\n", cfg.method)?;
    }
    out.flush()?;

    let target = match resolve(cfg) {
        Ok(t) => t,
        Err(Resolution::Fatal(f)) => {
            no_page(cfg);
            return Ok(fatal(&mut out, &f, 0));
        }
        Err(Resolution::Other(e)) => return Err(e),
    };
    let spec = herd_ab::run_spec(cfg, target, bind)?;

    let control = Arc::new(Control::new());
    let interrupted = Arc::new(AtomicBool::new(false));
    {
        let control = control.clone();
        let interrupted = interrupted.clone();
        // A second handler cannot be installed in the same process; that only happens in
        // tests that call this twice, where Ctrl-C is not used.
        let _ = ctrlc::set_handler(move || {
            interrupted.store(true, Ordering::SeqCst);
            control.stop();
        });
    }

    let acc = AbAccounting::new(cfg);
    let workers = spec.worker_count();
    let done_flag = Arc::new(AtomicBool::new(false));
    // While the view has the terminal, ab's "Completed N requests" lines wait for it to
    // close (they are all printed then, as ab prints them).
    let reporter = (heartbeat > 0 && tui.is_none()).then(|| {
        let control = control.clone();
        let done_flag = done_flag.clone();
        std::thread::spawn(move || progress_lines(&control, heartbeat, &done_flag))
    });
    // The view's seconds: the workers cut them, the writer thread merges them for the view.
    let outputs = match &tui {
        Some(t) => Outputs::start(None, None, Some(t.observer()))?,
        None => None,
    };
    if let Some(t) = &mut tui {
        t.show(control.clone())?;
    }
    let seconds = OnceLock::new();
    let run = herd_engine::run(&spec, &control, |i, start| {
        let (_, share) = spec.share(i as u32, workers);
        let recorder = AbRecorder::new(acc.clone(), share.unwrap_or(0));
        match &outputs {
            Some(o) => recorder.with_seconds(
                seconds.get_or_init(|| o.begin_run(workers as usize, start)).for_worker(i, share),
            ),
            None => recorder,
        }
    });
    done_flag.store(true, Ordering::SeqCst);
    let printed = reporter.and_then(|h| h.join().ok()).unwrap_or(0);
    let mut run = run?;
    if let Some(o) = outputs {
        for r in &mut run.recorders {
            r.finish_seconds(run.ended);
        }
        o.end_step();
        // The writer ends when the last way to it is gone: this one's too.
        drop(seconds);
        o.finish()?;
    }
    let quit = tui.as_ref().is_some_and(Tui::quit_pressed);
    if let Some(t) = tui {
        t.finish();
    }
    let interrupted = interrupted.load(Ordering::SeqCst) || quit;
    let merged = account::merge(cfg, run);
    let done = merged.results.done;

    if let Some(f) = &merged.fatal {
        no_page(cfg);
        return Ok(fatal(&mut out, f, done));
    }
    {
        // ab prints these as each refusal happens; herd ab's workers do not print, so they
        // come together here, before the last progress lines (docs/ab-compat.md).
        let mut err = io::stderr().lock();
        for _ in 0..merged.ssl_read_failed {
            writeln!(err, "SSL read failed (5) - closing connection")?;
        }
    }
    if !interrupted {
        if heartbeat > 0 {
            let mut err = io::stderr().lock();
            let mut k = printed + heartbeat;
            while k <= done {
                report::write_completed(&mut err, k)?;
                k += heartbeat;
            }
            report::write_finished(&mut err, done)?;
        } else {
            report::write_done(&mut out)?;
        }
    }
    let write = |r: io::Result<()>| -> anyhow::Result<()> {
        match r {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => Ok(other?),
        }
    };
    write(report::write_report(&merged.results, &mut out))?;
    write(out.flush())?;
    let side_files = report::writes_side_files(&merged.results);
    if let Some(path) = &cfg.csv {
        if side_files {
            let mut f = BufWriter::new(File::create(path).map_err(|e| {
                anyhow::anyhow!("Cannot open CSV output file {}: {e}", path.display())
            })?);
            report::write_csv(&merged.results, &mut f)?;
            f.flush()?;
        }
    }
    if let Some(path) = &cfg.gnuplot {
        if side_files {
            let mut f = BufWriter::new(File::create(path).map_err(|e| {
                anyhow::anyhow!("Cannot open gnuplot output file {}: {e}", path.display())
            })?);
            report::write_gnuplot(&merged.results, &mut f)?;
            f.flush()?;
        }
    }
    if let Some(path) = &cfg.json {
        let written = File::create(path).and_then(|file| {
            let mut out = BufWriter::new(file);
            herd_ab::json::write_json(&mut out, &merged.results, &merged.stats, cfg, &merged.io)?;
            out.flush()
        });
        written.with_context(|| format!("cannot write --json {}", path.display()))?;
    }
    if let Some(path) = &cfg.html_page {
        let run = SingleRun {
            trace_id: None,
            tool: "herd ab",
            url: cfg.url.full.clone(),
            started_at,
            finished_at: herd_lab::runner::now_rfc3339(),
            interrupted,
            measurements: vec![single_run::ab_measurement(&merged.results)],
            judgement: None,
            health: None,
            io: Some(herd_store::ClientIo {
                backend: merged.io.backend.as_str().to_owned(),
                fallback: merged.io.why.clone(),
            }),
            environment: environment.unwrap_or_default(),
            protocol: Vec::new(),
        };
        single_run::write(path, run).with_context(|| format!("--html {}", path.display()))?;
    }
    // ab exits 1 after printing the results of an interrupted run.
    Ok(if interrupted { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// Says that --html wrote nothing: a run that ended in a fatal error has no figures.
fn no_page(cfg: &AbConfig) {
    if let Some(path) = &cfg.html_page {
        eprintln!(
            "herd ab: no page written to {}: the run ended with a fatal error",
            path.display()
        );
    }
}

enum Resolution {
    Fatal(AbFatal),
    Other(anyhow::Error),
}

/// Resolves where to connect (the proxy with -X), as ab's apr_sockaddr_info_get.
fn resolve(cfg: &AbConfig) -> Result<Target, Resolution> {
    let (host, port) = match &cfg.proxy {
        Some((h, p)) => (h.as_str(), *p),
        None => (cfg.url.hostname.as_str(), cfg.url.port),
    };
    let tls = if cfg.url.tls {
        let settings = TlsSettings {
            versions: match cfg.tls.protocol {
                herd_ab::config::TlsProtocol::All => TlsVersions::All,
                herd_ab::config::TlsProtocol::Tls12 => TlsVersions::Tls12,
                herd_ab::config::TlsProtocol::Tls13 => TlsVersions::Tls13,
            },
            cipher_suites: cfg.tls.cipher_suites.clone(),
            client_cert: cfg.tls.client_cert.clone(),
            ca_file: None,
            // ab sends SNI unless -I, never for an IP address, and takes the name from a
            // `-H Host:` override when there is one. A port in that header cannot be part
            // of a server name: it is dropped.
            sni: cfg.tls.server_name.as_deref().map(strip_port),
            alpn: Vec::new(),
            // ab makes a full handshake on every connection (it keeps no session).
            resume: false,
        };
        Some(
            TlsClient::new(&settings, &cfg.url.hostname)
                .map_err(|e| Resolution::Other(e.into()))?,
        )
    } else {
        None
    };
    Target::resolve(host, port, tls).map_err(|e| match e {
        // ab: "apr_sockaddr_info_get() for HOST: Name or service not known (670002)",
        // exit status 670002 % 256 = 50.
        TargetError::Resolve { host, message, .. } => Resolution::Fatal(AbFatal {
            preface: None,
            message: format!("apr_sockaddr_info_get() for {host}: {message} (670002)"),
            exit_code: 670002 & 0xff,
        }),
        other => Resolution::Other(other.into()),
    })
}

/// Ends the run as ab's apr_err() does.
fn fatal(out: &mut dyn Write, f: &AbFatal, done: u64) -> ExitCode {
    let _ = out.flush();
    if let Some(p) = f.preface {
        eprint!("{p}");
    }
    eprintln!("{}", f.message);
    if done > 0 {
        let _ = writeln!(out, "Total of {done} requests completed");
        let _ = out.flush();
    }
    exit(f.exit_code)
}

/// Prints "Completed N requests" as the run crosses each multiple of `heartbeat`;
/// returns the last multiple printed.
fn progress_lines(control: &Control, heartbeat: u64, stop: &AtomicBool) -> u64 {
    let mut printed = 0;
    loop {
        let finished = control.finished();
        let mut err = io::stderr().lock();
        while printed + heartbeat <= finished {
            printed += heartbeat;
            let _ = report::write_completed(&mut err, printed);
        }
        drop(err);
        if stop.load(Ordering::SeqCst) {
            return printed;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `example.com:8443` → `example.com`; `[::1]:8443` → `::1`.
fn strip_port(name: &str) -> String {
    if let Some(rest) = name.strip_prefix('[') {
        return rest.split(']').next().unwrap_or(rest).to_string();
    }
    match name.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host.to_string(),
        _ => name.to_string(),
    }
}

fn exit(code: i32) -> ExitCode {
    ExitCode::from((code & 0xff) as u8)
}

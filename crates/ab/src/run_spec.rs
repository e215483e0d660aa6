//! herd ab's run on the engine: ab's flags as a [`RunSpec`]. A closed loop over `-c`
//! connections, kept alive with `-k`, stopping after `-n` requests or at `-t`, whichever
//! comes first; `-s`, `-b` and `-B` become the timeout and socket options.

use std::net::IpAddr;
use std::num::{NonZeroU32, NonZeroU64};
use std::time::Duration;

use herd_engine::{
    Prepared, Reuse, RunSpec, Schedule, SocketOptions, SpecError, StopAt, Target, Wire, Workload,
};

use crate::AbConfig;

/// The run `cfg` describes, against `target`, from `bind` (`-B`, parsed by the caller).
pub fn run_spec(
    cfg: &AbConfig,
    target: Target,
    bind: Option<IpAddr>,
) -> Result<RunSpec, SpecError> {
    let reuse =
        if cfg.keepalive { Reuse::KeepAlive { per_connection: None } } else { Reuse::Close };
    Ok(RunSpec {
        target,
        workload: Workload::single(Prepared::new(cfg.request.clone(), cfg.head)),
        connections: NonZeroU32::new(cfg.concurrency).ok_or(SpecError::NoConnections)?,
        threads: cfg.threads.and_then(NonZeroU32::new).unwrap_or_else(default_threads),
        stop: StopAt::new(NonZeroU64::new(cfg.requests), cfg.time_limit)?,
        // ab's -s 0 would time out every request at once; the engine needs some time.
        timeout: cfg.timeout.max(Duration::from_millis(1)),
        limits: herd_proto::Limits::default(),
        socket: SocketOptions { bind: bind.into_iter().collect(), buffer_size: cfg.window_size },
        schedule: Schedule::Closed { reuse, think: None },
        receive_rate: None,
        seed: 0,
        // ab speaks HTTP/1 only, and so does herd ab.
        wire: Wire::Http1,
        slice: herd_engine::Slice::WHOLE,
        start: herd_engine::Start::Now,
        // ab tries every request it was asked for (and stops at the first failed connect
        // unless -r: herd_ab's recorder decides that).
        unreachable: herd_engine::Unreachable::KeepTrying,
        io: cfg.io,
    })
}

/// One worker per core (the engine never starts more than `-c`).
fn default_threads() -> NonZeroU32 {
    std::thread::available_parallelism()
        .ok()
        .and_then(|n| NonZeroU32::new(u32::try_from(n.get()).unwrap_or(u32::MAX)))
        .unwrap_or(NonZeroU32::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::{self, Parsed};

    fn config(argv: &[&str]) -> AbConfig {
        let raw: Vec<std::ffi::OsString> = argv.iter().map(Into::into).collect();
        match args::parse(&raw) {
            Ok(Parsed::Run(cfg)) => *cfg,
            other => panic!("{argv:?}: {other:?}"),
        }
    }

    fn target() -> Target {
        Target::resolve("127.0.0.1", 8080, None).unwrap()
    }

    #[test]
    fn ab_flags_become_the_engine_run() {
        let cfg = config(&[
            "-n",
            "200",
            "-c",
            "8",
            "-k",
            "-s",
            "7",
            "--threads",
            "3",
            "http://127.0.0.1:8080/x",
        ]);
        let spec = run_spec(&cfg, target(), "127.0.0.2".parse().ok()).unwrap();
        assert_eq!(spec.connections.get(), 8);
        assert_eq!(spec.threads.get(), 3);
        assert_eq!(spec.stop, StopAt::Requests(NonZeroU64::new(200).unwrap()));
        assert_eq!(spec.timeout, Duration::from_secs(7));
        assert!(spec.keep_alive());
        assert_eq!(spec.socket.bind, vec!["127.0.0.2".parse::<IpAddr>().unwrap()]);
        assert_eq!(spec.workload.requests()[0].bytes, cfg.request);
    }

    #[test]
    fn a_time_limit_stops_at_whichever_comes_first() {
        let cfg = config(&["-t", "2", "-c", "2", "http://127.0.0.1:8080/"]);
        let spec = run_spec(&cfg, target(), None).unwrap();
        // ab's -t alone still caps the count at 50000.
        assert_eq!(spec.stop.deadline(), Some(Duration::from_secs(2)));
        assert_eq!(spec.stop.requests().map(NonZeroU64::get), Some(50_000));
        assert!(!spec.keep_alive());
    }
}

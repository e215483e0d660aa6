//! The verdict's thresholds, one edge at a time, and its sentences word for word.

use super::*;
use crate::timer_probe::TimerLateness;

/// A healthy open-loop run: 2 workers 20 % busy, small send lag, rate kept.
fn healthy() -> Inputs {
    Inputs {
        workers: 2,
        busy: 0.20,
        run_queue_wait: Some(0.02),
        throttled: Some(0.0),
        send_lag_p50_us: Some(30),
        send_lag_p99_us: Some(150),
        rate: Some(RateKept { asked: 5000.0, achieved: 4998.0 }),
        attempted: 50_000,
        completed: 50_000,
        errors: ClientErrors::default(),
        cpus: None,
        timers: None,
        steal: None,
        waiting: None,
    }
}

/// The same in a closed loop: no rate, no send lag by construction.
fn closed() -> Inputs {
    Inputs { rate: None, send_lag_p50_us: Some(0), send_lag_p99_us: Some(0), ..healthy() }
}

fn check(i: Inputs, level: Level, sentence: &str) {
    let h = judge(&i);
    assert_eq!(h.level, level, "{i:?}: {h:?}");
    match h.cause {
        None => assert_eq!(sentence, "", "{i:?}"),
        Some(c) => assert_eq!(c.to_string(), sentence, "{i:?}"),
    }
}

fn level(i: Inputs) -> Level {
    judge(&i).level
}

#[test]
fn healthy_runs_are_ok() {
    check(healthy(), Level::Ok, "");
    check(closed(), Level::Ok, "");
    // Unknown run-queue wait and throttling: judged on what is known.
    check(Inputs { run_queue_wait: None, throttled: None, ..healthy() }, Level::Ok, "");
    // No request completed (nothing to lag), nothing failed either.
    let empty = Inputs { send_lag_p50_us: None, send_lag_p99_us: None, attempted: 0, ..healthy() };
    check(empty, Level::Ok, "");
}

#[test]
fn a_slow_server_is_never_the_clients_fault() {
    // /sleep?ms=5, 2 connections, 1,000 req/s asked: 388 achieved, the client idle and its
    // requests waiting for connections, not for herd (measured).
    let slow = Inputs {
        busy: 0.01,
        run_queue_wait: Some(0.01),
        send_lag_p50_us: Some(5),
        send_lag_p99_us: Some(22),
        rate: Some(RateKept { asked: 1000.0, achieved: 388.0 }),
        ..healthy()
    };
    check(slow, Level::Ok, "");
    check(Inputs { busy: 0.003, ..closed() }, Level::Ok, "");
    // Steal under 5 % does not change that; nor does steal too small to explain the
    // shortfall (56 % missed, 7 % stolen: measured beside two busy loops).
    check(Inputs { steal: Some(0.049), ..slow }, Level::Ok, "");
    check(Inputs { steal: Some(0.07), ..slow }, Level::Ok, "");
}

/// A shortfall that is not the client's, on a machine whose hypervisor took 30 % of the CPUs:
/// the server may only have been as slow as the machine. Not vouched for (CI's guest,
/// measured: 4,938 of 5,000 req/s, herd busy 46 %, once said ok).
#[test]
fn a_shortfall_under_steal_is_not_pinned_on_the_server() {
    let stolen = Inputs {
        workers: 1,
        busy: 0.46,
        send_lag_p50_us: Some(40),
        send_lag_p99_us: Some(920),
        rate: Some(RateKept { asked: 5000.0, achieved: 4938.0 }),
        steal: Some(0.30),
        ..healthy()
    };
    check(
        stolen,
        Level::Suspect,
        "the schedule fell behind: asked 5,000 req/s, achieved 4,938 (98 %) while herd's \
         threads had headroom (busy 46 %) and the hypervisor took 30 % of the CPUs' time \
         (steal, /proc/stat) — the machine, not surely the server, was slow: run on CPUs of \
         their own (a dedicated host or instance)",
    );
    // A shortfall up to the steal (29.8 % under 30 %) is still the machine's; beyond, not.
    let edge = Inputs { rate: Some(RateKept { asked: 5000.0, achieved: 3510.0 }), ..stolen };
    assert_eq!(level(edge), Level::Suspect);
    let beyond = Inputs { rate: Some(RateKept { asked: 5000.0, achieved: 3490.0 }), ..stolen };
    assert_eq!(level(beyond), Level::Ok);
    // The rate kept: the steal alone is no finding.
    let kept = Inputs { rate: Some(RateKept { asked: 5000.0, achieved: 4999.0 }), ..stolen };
    check(kept, Level::Ok, "");
    // The client's own shortfall still wins, as client-bound.
    let lagging = Inputs { send_lag_p50_us: Some(1_500), send_lag_p99_us: Some(3_000), ..stolen };
    assert_eq!(level(lagging), Level::ClientBound);
}

#[test]
fn closed_loop_cpu_thresholds() {
    let cpu = |busy, wait| Inputs { busy, run_queue_wait: Some(wait), ..closed() };
    check(cpu(0.84, 0.0), Level::Ok, "");
    check(
        cpu(0.85, 0.0),
        Level::Suspect,
        "herd's 2 worker threads were busy 85 % of the run; the server may be faster than this \
         shows — give herd more cores (-t) or pin it apart from the server",
    );
    assert_eq!(level(cpu(0.94, 0.0)), Level::Suspect);
    check(
        cpu(0.98, 0.0),
        Level::ClientBound,
        "herd's 2 worker threads were busy 98 % of the run; the server may be faster than this \
         shows — give herd more cores (-t) or pin it apart from the server",
    );
    // Busy and waiting add up: the thread wanted a CPU all the time (measured: 0.74 + 0.21).
    check(
        cpu(0.74, 0.21),
        Level::ClientBound,
        "herd's 2 worker threads were on a CPU 74 % and waiting for one 21 % of the run; the \
         server may be faster than this shows — give herd more cores (-t) or pin it apart from \
         the server",
    );
    let one = Inputs { workers: 1, ..cpu(0.96, 0.0) };
    let sentence = judge(&one).cause.unwrap().to_string();
    assert!(sentence.starts_with("herd's worker thread was busy 96 % of the run"), "{sentence}");
}

#[test]
fn a_client_held_to_some_cpus_is_not_told_to_pin_itself() {
    let pinned = Some(Cpus { allowed: 1, online: 2 });
    check(
        Inputs { busy: 0.98, run_queue_wait: Some(0.0), cpus: pinned, ..closed() },
        Level::ClientBound,
        "herd's 2 worker threads were busy 98 % of the run; the server may be faster than this \
         shows — herd may use 1 of the 2 CPUs: give it more, and threads (-t)",
    );
    check(
        Inputs { busy: 0.02, run_queue_wait: Some(0.30), cpus: pinned, ..healthy() },
        Level::Suspect,
        "herd's 2 worker threads were on a CPU 2 % and waiting for one 30 % of the run; other \
         processes had its CPUs — keep other load off the 1 of 2 CPUs herd is pinned to",
    );
    // Every CPU of the machine is not pinned: the advice to pin stands.
    let all = Some(Cpus { allowed: 2, online: 2 });
    let sentence = judge(&Inputs { busy: 0.98, cpus: all, ..closed() }).cause.unwrap().to_string();
    assert!(sentence.ends_with("or pin it apart from the server"), "{sentence}");
}

#[test]
fn this_process_knows_its_cpus() {
    let c = Cpus::now().expect("sched_getaffinity and sysconf work here");
    assert!(c.allowed >= 1 && c.allowed <= c.online, "{c:?}");
}

#[test]
fn open_loop_cpu_alone_is_only_suspect() {
    // 80,000 req/s on one worker: 99 % busy, rate and send lag fine (measured).
    let busy = Inputs {
        workers: 1,
        busy: 0.99,
        run_queue_wait: Some(0.0),
        rate: Some(RateKept { asked: 80_000.0, achieved: 79_998.0 }),
        ..healthy()
    };
    check(
        busy,
        Level::Suspect,
        "herd's worker thread was busy 99 % of the run; the rate held, with no headroom left — \
         give herd more cores (-t) before asking for more",
    );
    assert_eq!(level(Inputs { busy: 0.84, ..busy }), Level::Ok);
}

#[test]
fn run_queue_wait_thresholds() {
    let wait = |w| Inputs { busy: 0.02, run_queue_wait: Some(w), ..healthy() };
    check(wait(0.19), Level::Ok, "");
    check(
        wait(0.20),
        Level::Suspect,
        "herd's 2 worker threads were on a CPU 2 % and waiting for one 20 % of the run; other \
         processes had the CPUs — pin herd apart from the server and other load",
    );
    assert_eq!(level(wait(0.49)), Level::Suspect);
    assert_eq!(level(wait(0.50)), Level::ClientBound);
    // The same in a closed loop.
    assert_eq!(
        level(Inputs { busy: 0.02, run_queue_wait: Some(0.36), ..closed() }),
        Level::Suspect
    );
}

#[test]
fn throttling_thresholds() {
    let t = |share| Inputs { throttled: Some(share), ..healthy() };
    check(t(0.009), Level::Ok, "");
    assert_eq!(level(t(0.01)), Level::Suspect);
    assert_eq!(level(t(0.099)), Level::Suspect);
    check(
        t(0.93),
        Level::ClientBound,
        "a CPU quota on herd's cgroup held its worker threads back 93 % of the run; the figures \
         show the quota, not the server — lift the quota or run herd outside it",
    );
    // The quota is named before the CPU figures it causes (measured under a 5 % quota).
    let both = Inputs { busy: 0.05, run_queue_wait: Some(0.73), ..t(0.69) };
    assert!(matches!(judge(&both).cause, Some(Cause::Throttled { .. })));
}

#[test]
fn schedule_falls_behind_only_by_the_clients_doing() {
    // herd's threads wanted the CPU 62 % of the run: the lag is herd's own.
    let behind = |achieved, p50| Inputs {
        rate: Some(RateKept { asked: 50_000.0, achieved }),
        send_lag_p50_us: Some(p50),
        send_lag_p99_us: Some(p50 * 3),
        busy: 0.60,
        ..healthy()
    };
    check(
        behind(41_200.0, 250_000),
        Level::ClientBound,
        "the schedule fell behind: asked 50,000 req/s, achieved 41,200 (82 %) while connections \
         were free — give herd more threads (-t) and cores, or ask a lower rate",
    );
    // Within 1 %: kept, whatever the lag (which is then its own, milder finding).
    assert_eq!(level(behind(49_600.0, 5_000)), Level::Suspect);
    // Short of the rate, no client lag, client not busy: the server held the connections.
    check(behind(41_200.0, 200), Level::Ok, "");
    // The edges.
    assert_eq!(level(behind(49_499.0, 1_000)), Level::ClientBound);
    assert_eq!(level(behind(49_499.0, 999)), Level::Suspect);
    assert_eq!(level(behind(49_501.0, 1_000)), Level::Suspect);
}

#[test]
fn a_saturated_client_falls_behind_without_send_lag() {
    // 400,000 req/s asked of one worker: 253,935 achieved, send lag p50 1 µs, demand 0.97
    // (measured): its connections looked busy because it had not read their responses yet.
    let saturated = Inputs {
        workers: 1,
        busy: 0.93,
        run_queue_wait: Some(0.04),
        send_lag_p50_us: Some(1),
        send_lag_p99_us: Some(5),
        rate: Some(RateKept { asked: 400_000.0, achieved: 253_935.4 }),
        ..healthy()
    };
    check(
        saturated,
        Level::ClientBound,
        "the schedule fell behind: asked 400,000 req/s, achieved 253,935 (63 %) with herd's \
         worker thread on a CPU or waiting for one 97 % of the run — give herd more threads \
         (-t) and cores, or ask a lower rate",
    );
    // Less demand: the server may be the limit; the rest of the verdict stands alone.
    assert_eq!(level(Inputs { busy: 0.90, ..saturated }), Level::Suspect);
}

#[test]
fn send_lag_alone_is_suspect_in_an_open_loop_only() {
    let lag = |p99| Inputs { send_lag_p99_us: Some(p99), busy: 0.60, ..healthy() };
    check(lag(999), Level::Ok, "");
    check(
        lag(2300),
        Level::Suspect,
        "1 % of requests were sent 2.300ms or more late while connections were free, so \
         latencies include the client's own delay — give herd more cores or a lower rate",
    );
    check(Inputs { rate: None, ..lag(2300) }, Level::Ok, "");
}

#[test]
fn port_and_fd_errors() {
    let errs = |addr_not_avail, process_fds, attempted| Inputs {
        errors: ClientErrors { addr_not_avail, process_fds, ..ClientErrors::default() },
        attempted,
        ..healthy()
    };
    check(
        errs(1234, 0, 10_000),
        Level::ClientBound,
        "1,234 connections failed with EADDRNOTAVAIL (no free local port) — connect from several \
         source addresses (--bind 127.0.0.2-127.0.0.50), use keep-alive, or widen \
         net.ipv4.ip_local_port_range",
    );
    check(
        errs(0, 60, 100),
        Level::ClientBound,
        "60 connections failed with EMFILE (herd's open-file limit) — raise it (ulimit -n) or \
         use fewer connections (-c)",
    );
    // Under 1 % of requests: suspect.
    assert_eq!(level(errs(0, 99, 10_000)), Level::Suspect);
    assert_eq!(level(errs(0, 100, 10_000)), Level::ClientBound);
    // Every request failed, none measured otherwise: still judged.
    assert_eq!(level(errs(0, 7, 7)), Level::ClientBound);
    let only = |e: ClientErrors| Inputs { errors: e, attempted: 5, ..healthy() };
    let system = judge(&only(ClientErrors { system_fds: 5, ..ClientErrors::default() }));
    assert_eq!(
        system.cause.unwrap().to_string(),
        "5 connections failed with ENFILE (the system's open-file limit) — raise fs.file-max or \
         use fewer connections (-c)"
    );
    let in_use = judge(&only(ClientErrors { addr_in_use: 5, ..ClientErrors::default() }));
    assert!(in_use.cause.unwrap().to_string().contains("EADDRINUSE (local address already"));
    // Errors come first among client-bound causes.
    let both = Inputs { busy: 0.99, throttled: Some(0.5), ..errs(0, 60, 100) };
    assert!(matches!(judge(&both).cause, Some(Cause::Fds { .. })));
}

#[test]
fn the_worst_level_wins_over_an_earlier_milder_one() {
    // A few fd errors (suspect) and a saturated closed loop (client-bound).
    let i = Inputs {
        busy: 0.99,
        errors: ClientErrors { process_fds: 1, ..ClientErrors::default() },
        ..closed()
    };
    let h = judge(&i);
    assert_eq!(h.level, Level::ClientBound);
    assert!(matches!(h.cause, Some(Cause::Cpu { kind: CpuKind::Saturated, .. })), "{h:?}");
}

#[test]
fn number_formats() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1000), "1,000");
    assert_eq!(thousands(1_234_567), "1,234,567");
    assert_eq!(percent(0.234), "23 %");
}

#[test]
fn nothing_to_judge_says_what_ended() {
    let none = Inputs { attempted: 0, completed: 0, ..healthy() };
    assert_eq!(nothing_to_judge(&none), "no request ended: nothing to judge the client on");
    let refused = Inputs { attempted: 12_000, completed: 0, ..healthy() };
    assert_eq!(
        nothing_to_judge(&refused),
        "no request got a response (12,000 failed): nothing to judge the client on"
    );
}

/// Late sends while herd's threads were mostly idle are not herd's: the machine's steal time
/// or its timers are named with their figures, or "outside herd" where neither explains them;
/// never "give herd more cores". Nor while they were busy but had headroom and the machine
/// stole: then the hypervisor is named beside herd's slow catching up.
#[test]
fn late_sends_of_an_idle_herd_are_blamed_on_the_machine() {
    let idle = |p99| Inputs { send_lag_p99_us: Some(p99), busy: 0.05, ..healthy() };
    check(
        Inputs { steal: Some(0.12), ..idle(2300) },
        Level::Suspect,
        "1 % of requests were sent 2.300ms or more late while connections were free, so \
         latencies include that delay, while herd's threads were mostly idle (busy 5 %) and the \
         hypervisor took 12 % of the CPUs' time (steal, /proc/stat) — the machine, not herd, was \
         late: run on CPUs of its own (a dedicated host or instance)",
    );
    let timers = TimerLateness { p50_us: 300, p99_us: 1_400 };
    check(
        Inputs { timers: Some(timers), steal: Some(0.0), ..idle(2300) },
        Level::Suspect,
        "1 % of requests were sent 2.300ms or more late while connections were free, so \
         latencies include that delay, while herd's threads were mostly idle (busy 5 %): this \
         machine's timers wake late (a 0.5 ms sleep overslept by 1.400ms at p99, 300µs at p50, \
         probed before the run) — the machine, not herd, was late: a host with steadier timers \
         (no virtual machine, no deep CPU idle states), or a lower rate",
    );
    // Timers that explain under half of the lag are not named.
    let prompt = TimerLateness { p50_us: 50, p99_us: 1_000 };
    check(
        Inputs { timers: Some(prompt), ..idle(2300) },
        Level::Suspect,
        "1 % of requests were sent 2.300ms or more late while connections were free, so \
         latencies include that delay, while herd's threads were mostly idle (busy 5 %) — \
         something outside herd held them back (other processes, the timers now and then): a \
         quieter machine, or a lower rate",
    );
    // The edges: steal from 5 %, timers from half the lag, herd from half a CPU's demand.
    let why = |i: Inputs| match judge(&i).cause {
        Some(Cause::SendLag { why, .. }) => why,
        other => panic!("{other:?}"),
    };
    assert!(matches!(why(Inputs { steal: Some(0.05), ..idle(2300) }), Late::Steal { .. }));
    assert!(matches!(why(Inputs { steal: Some(0.049), ..idle(2300) }), Late::Elsewhere { .. }));
    let half = TimerLateness { p50_us: 10, p99_us: 1_150 };
    assert!(matches!(why(Inputs { timers: Some(half), ..idle(2300) }), Late::Timers { .. }));
    let under = TimerLateness { p50_us: 10, p99_us: 1_149 };
    assert!(matches!(why(Inputs { timers: Some(under), ..idle(2300) }), Late::Elsewhere { .. }));
    // Herd's own where its threads wanted the CPU and the machine took nothing, or where they
    // had no headroom left; with headroom and steal, the machine held them back.
    let cause = |demand: f64, steal| {
        let i = Inputs { busy: demand - 0.05, run_queue_wait: Some(0.05), steal, ..idle(2300) };
        late(&i, demand, 2300)
    };
    assert_eq!(cause(0.5, Some(0.0)), Late::Herd);
    assert_eq!(cause(0.85, Some(0.5)), Late::Herd);
    assert!(matches!(cause(0.84, Some(0.05)), Late::Steal { .. }));
    assert!(matches!(cause(0.5, Some(0.05)), Late::Steal { .. }));
    assert_eq!(cause(0.5, Some(0.049)), Late::Herd);
    assert!(matches!(cause(0.49, Some(0.049)), Late::Elsewhere { .. }));
    // Measured (quick start, 15,000 req/s, one worker 64 % busy, steal 13 %).
    check(
        Inputs { steal: Some(0.132), busy: 0.64, ..idle(1254) },
        Level::Suspect,
        "1 % of requests were sent 1.254ms or more late while connections were free, so \
         latencies include that delay, while the hypervisor took 13 % of the CPUs' time (steal, \
         /proc/stat) and herd's threads, busy 64 %, caught up slowly — the machine held herd \
         back: run on CPUs of its own (a dedicated host or instance), or a lower rate",
    );
    // A schedule that fell behind by send lag, herd idle, the hypervisor stealing.
    let behind = Inputs {
        rate: Some(RateKept { asked: 50_000.0, achieved: 41_200.0 }),
        send_lag_p50_us: Some(5_000),
        steal: Some(0.3),
        ..idle(9_000)
    };
    check(
        behind,
        Level::ClientBound,
        "the schedule fell behind: asked 50,000 req/s, achieved 41,200 (82 %) while connections \
         were free, while herd's threads were mostly idle (busy 5 %) and the hypervisor took 30 % \
         of the CPUs' time (steal, /proc/stat) — the machine, not herd, was late: run on CPUs of \
         its own (a dedicated host or instance)",
    );
}

/// A closed loop whose time went to waiting is not vouched for: suspect, with the waiting
/// judgement's sentence; any other finding of the same level comes first.
#[test]
fn a_closed_loop_that_waited_is_suspect() {
    let w = herd_stats::waiting::Waiting {
        latency_mean_us: 44_000.0,
        explained_us: 3_147.0,
        client_cpus: 0.11,
        server_cpus: 0.05,
    };
    let waited = Inputs { waiting: Some(w), ..closed() };
    check(waited, Level::Suspect, &w.to_string());
    let contended = Inputs { run_queue_wait: Some(0.3), ..waited };
    assert!(matches!(judge(&contended).cause, Some(Cause::Cpu { .. })));
}

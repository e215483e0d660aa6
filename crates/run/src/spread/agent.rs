//! One agent of a spread run: `herd agent`. Configured from its environment alone, as a pod
//! of a Kubernetes Indexed Job sees it ([`AgentEnv`]); it tells the coordinator who it is and
//! what it will run, measures the clock between them, prepares its part, says it is armed,
//! starts at the one instant the coordinator gives, and streams its seconds and each step's
//! whole recorder back. It writes no files: the coordinator does, from what the agents sent.

use std::io::{BufReader, BufWriter};
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use herd_engine::{Control, Slice, StartGate};
use serde::Serialize;

use super::clock::{self, Exchange, Offset};
use super::stream::{Address, Stream};
use super::wire::{self, FromAgent, FromCoordinator, SecondFrame};
use super::SpreadError;
use crate::error::RunError;
use crate::execute::{execute_parts, prepare, Spread};
use crate::merge::RunSecond;
use crate::metrics::{MetricsFeed, SharedFigures};
use crate::outputs::{Outputs, SecondObserver};
use crate::plan::RunPlan;
use crate::report::StepReport;
use crate::run_info::RunInfo;
use herd_record::RunRecorder;

/// The environment variable with the agent's index: Kubernetes' Indexed Job sets it.
pub const INDEX_VAR: &str = "JOB_COMPLETION_INDEX";
/// How many agents run together.
pub const COUNT_VAR: &str = "HERD_AGENTS";
/// The one target outside the safety rule's ranges the user allowed agents on a real cluster
/// to load (`herd cluster run --allow-target HOST`): the URL's host, exactly.
pub const ALLOW_TARGET_VAR: &str = "HERD_ALLOW_TARGET";
/// Where the coordinator listens: `host:port`, or `unix:/path` on one machine.
pub const COORDINATOR_VAR: &str = "HERD_COORDINATOR";
/// The run's name, the same for every agent (a Kubernetes Job's): its agents' metrics carry
/// it as their `run` label.
pub const RUN_NAME_VAR: &str = "HERD_RUN";

/// Who this agent is, and where its coordinator is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentEnv {
    pub slice: Slice,
    pub coordinator: String,
}

impl AgentEnv {
    /// From [`INDEX_VAR`], [`COUNT_VAR`] and [`COORDINATOR_VAR`], through `var`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<AgentEnv, SpreadError> {
        let get = |name: &'static str| {
            var(name)
                .filter(|v| !v.is_empty())
                .ok_or(SpreadError::Env { name, problem: "is not set".into() })
        };
        let number = |name: &'static str| -> Result<u32, SpreadError> {
            let text = get(name)?;
            text.trim().parse::<u32>().map_err(|_| SpreadError::Env {
                name,
                problem: format!("is `{text}`, not a whole number"),
            })
        };
        let index = number(INDEX_VAR)?;
        let count = NonZeroU32::new(number(COUNT_VAR)?).ok_or(SpreadError::Env {
            name: COUNT_VAR,
            problem: "is 0; a run needs at least one agent".into(),
        })?;
        let slice = Slice::new(index, count).map_err(|_| SpreadError::Env {
            name: INDEX_VAR,
            problem: format!(
                "is {index}, but there are only {count} agents (0 to {})",
                count.get() - 1
            ),
        })?;
        Ok(AgentEnv { slice, coordinator: get(COORDINATOR_VAR)? })
    }

    /// From the process's environment.
    pub fn from_env() -> Result<AgentEnv, SpreadError> {
        AgentEnv::from_vars(|name| std::env::var(name).ok())
    }
}

/// How long an agent keeps trying to reach its coordinator: a pod may start before the one
/// that coordinates, and a barrier that never forms is the coordinator's to time out.
const CONNECT_FOR: Duration = Duration::from_secs(120);

/// The agent's connection: frames out under a lock (the main thread sends steps, the writer
/// thread seconds), frames in on one reader.
struct Link {
    out: Arc<Mutex<BufWriter<Stream>>>,
    input: BufReader<Stream>,
    line: Vec<u8>,
}

impl Link {
    fn send<T: Serialize>(&self, frame: &T) -> Result<(), SpreadError> {
        send_on(&self.out, frame)
    }

    fn receive(&mut self) -> Result<FromCoordinator, SpreadError> {
        wire::receive(&mut self.input, &mut self.line).map_err(|e| SpreadError::Lost(e.to_string()))
    }
}

/// Runs this agent's part of `plan` (outputs and thresholds are the coordinator's). Returns
/// when the run is over, it was aborted, or the coordinator is gone; `control` stops it
/// early too (Ctrl-C). With `metrics`, this agent's own seconds are added there as they go
/// (`herd agent --metrics-listen` in a pod: each agent serves its part, Prometheus sums).
pub fn run_agent(
    plan: &RunPlan,
    env: &AgentEnv,
    control: &Arc<Control>,
    metrics: Option<SharedFigures>,
) -> Result<(), SpreadError> {
    let mut link = connect(&env.coordinator, control)?;
    link.send(&FromAgent::Hello {
        protocol: wire::PROTOCOL,
        herd: env!("CARGO_PKG_VERSION").to_owned(),
        index: env.slice.index(),
        count: env.slice.count(),
        config: super::config_of(plan),
        histogram: wire::HISTOGRAM.to_owned(),
    })?;
    match link.receive()? {
        FromCoordinator::Welcome => {}
        FromCoordinator::Refused { reason } | FromCoordinator::Abort { reason } => {
            return Err(SpreadError::Refused(reason));
        }
        other => return Err(unexpected(&other)),
    }
    let offset = measure_clock(&mut link)?;
    // Prepared after the clock: whatever fails here (a refused address, an unreadable body
    // file) goes to the coordinator, which stops every agent and says which failed and why.
    let mut prepared = match prepare(plan) {
        Ok(p) => p,
        Err(e) => {
            let error = herd_stats::with_causes(&e);
            let _ = link.send(&FromAgent::Failed { error: error.clone() });
            return Err(SpreadError::Run(error));
        }
    };
    // The engine opens this agent's connections and waits at the gate; this thread says
    // armed (with what was opened), hears the start and opens the gate at that instant.
    let gate = StartGate::new();
    prepared.spread(Spread { slice: env.slice, gate: gate.clone() });
    let out = link.out.clone();
    let forward: Box<dyn SecondObserver> =
        Box::new(Forward { out: out.clone(), held: None, step: None });
    let observer = match metrics {
        Some(figures) => Box::new(MetricsFeed::new(figures, Some(forward))),
        None => forward,
    };
    let outputs = Outputs::start(None, None, Some(observer))?;
    let aborted = Arc::new(Mutex::new(None));
    let (armed, result, sent) = std::thread::scope(|s| {
        let runner = s.spawn(|| {
            let mut sent = Ok(());
            let result =
                execute_parts(&prepared, control, outputs.as_ref(), |k, info, recorder, report| {
                    if sent.is_ok() {
                        sent = send_step(&out, k, info, recorder, report);
                        if sent.is_err() {
                            control.stop();
                        }
                    }
                });
            // A run that never reached its gate (an error first) must not keep the arming
            // waiting.
            gate.close();
            (result, sent)
        });
        let armed = arm(link, offset, &gate, control, &aborted);
        if armed.is_err() {
            // No start: the workers close their connections and the run ends unsent.
            gate.close();
            control.stop();
        }
        let (result, sent) = match runner.join() {
            Ok(r) => r,
            Err(_) => (Err(RunError::Connect("the run's thread panicked".into())), Ok(())),
        };
        (armed, result, sent)
    });
    if let Some(o) = outputs {
        o.finish()?;
    }
    if let Err(e) = armed {
        // What stopped the run before its start: the run's own error, or the arming's (a
        // coordinator that aborted or is gone needs no word).
        let error = match (&result, e) {
            (Err(run), _) => herd_stats::with_causes(run),
            (Ok(_), SpreadError::Run(why)) => why,
            (Ok(_), e) => return Err(e),
        };
        let _ = send_on(&out, &FromAgent::Failed { error: error.clone() });
        return Err(SpreadError::Run(error));
    }
    // Read before `done`: once the coordinator has every agent's, it may close at once,
    // which is no abort.
    let abort = aborted.lock().ok().and_then(|mut a| a.take());
    match result {
        Ok(_) => {
            sent?;
            send_on(&out, &FromAgent::Done)?;
        }
        Err(e) => {
            let error = herd_stats::with_causes(&e);
            let _ = send_on(&out, &FromAgent::Failed { error: error.clone() });
            return Err(SpreadError::Run(error));
        }
    }
    match abort {
        Some(reason) => Err(SpreadError::Aborted(reason)),
        None => Ok(()),
    }
}

/// Waits for the engine to open this agent's connections, says armed with what it opened
/// and the clock as measured, and opens `gate` at the start the coordinator gives. From then
/// on the coordinator only ever aborts: a listener stops the run when it does or is gone.
fn arm(
    mut link: Link,
    offset: Offset,
    gate: &StartGate,
    control: &Arc<Control>,
    aborted: &Arc<Mutex<Option<String>>>,
) -> Result<(), SpreadError> {
    let Some(opened) = gate.wait_warm(control) else {
        let why = if control.is_stopped() {
            "interrupted before the start"
        } else {
            "the run ended before its start"
        };
        return Err(SpreadError::Run(why.into()));
    };
    link.send(&FromAgent::Armed {
        offset_ns: offset.offset_ns,
        rtt_ns: offset.rtt_ns,
        opened: opened.connections,
        not_opened: opened.failed,
        opening_ns: u64::try_from(opened.took.as_nanos()).unwrap_or(u64::MAX),
    })?;
    match link.receive()? {
        FromCoordinator::Start { at } => gate.open(clock::local_instant(at, offset)),
        FromCoordinator::Abort { reason } => return Err(SpreadError::Aborted(reason)),
        other => return Err(unexpected(&other)),
    }
    listen_for_abort(link.input, control.clone(), aborted.clone());
    Ok(())
}

/// Sends one frame on the shared writer.
fn send_on<T: Serialize>(out: &Mutex<BufWriter<Stream>>, frame: &T) -> Result<(), SpreadError> {
    let mut out = out.lock().map_err(|_| SpreadError::Lost("a writer panicked".into()))?;
    wire::send(&mut *out, frame).map_err(|e| SpreadError::Lost(e.to_string()))
}

/// Connects to the coordinator, trying again while it is not there yet.
fn connect(address: &str, control: &Control) -> Result<Link, SpreadError> {
    let deadline = Instant::now() + CONNECT_FOR;
    let parsed = Address::parse(address);
    let mut last = String::new();
    while Instant::now() < deadline && !control.is_stopped() {
        match Stream::connect(&parsed) {
            Ok(stream) => {
                let reader = stream.try_clone().map_err(|e| SpreadError::Lost(e.to_string()))?;
                return Ok(Link {
                    out: Arc::new(Mutex::new(BufWriter::new(stream))),
                    input: BufReader::new(reader),
                    line: Vec::new(),
                });
            }
            // Not there yet (a pod starts before the coordinator's, a Service name resolves
            // later): again in a moment.
            Err(e) => last = e,
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Err(SpreadError::Unreachable { address: address.to_owned(), last, waited: CONNECT_FOR })
}

/// [`clock::EXCHANGES`] pings; the estimate of the quickest.
fn measure_clock(link: &mut Link) -> Result<Offset, SpreadError> {
    let mut exchanges = Vec::with_capacity(clock::EXCHANGES);
    for _ in 0..clock::EXCHANGES {
        let t1 = clock::wall_ns();
        link.send(&FromAgent::Ping { t1 })?;
        match link.receive()? {
            FromCoordinator::Pong { t1: back, t2, t3 } if back == t1 => {
                exchanges.push(Exchange { t1, t2, t3, t4: clock::wall_ns() });
            }
            FromCoordinator::Abort { reason } => return Err(SpreadError::Aborted(reason)),
            other => return Err(unexpected(&other)),
        }
    }
    clock::best(&exchanges).ok_or_else(|| SpreadError::Lost("no clock exchange".into()))
}

/// Stops the run when the coordinator aborts it or goes away (keeping the reason).
fn listen_for_abort(
    mut input: BufReader<Stream>,
    control: Arc<Control>,
    aborted: Arc<Mutex<Option<String>>>,
) {
    let spawned = std::thread::Builder::new().name("herd-agent-listen".into()).spawn(move || {
        let mut line = Vec::new();
        let reason = match wire::receive::<FromCoordinator, _>(&mut input, &mut line) {
            Ok(FromCoordinator::Abort { reason }) => reason,
            Ok(other) => format!("the coordinator sent {other:?} mid-run"),
            Err(e) => format!("the coordinator is gone ({e})"),
        };
        if let Ok(mut a) = aborted.lock() {
            *a = Some(reason);
        }
        control.stop();
    });
    // Without the listener the run still ends on its own; only an abort would go unheard.
    drop(spawned);
}

/// One step's end, as its frame (`FromAgent::Step` on the wire): borrowed, not copied (a
/// recorder may hold a rate per connection of tens of thousands).
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum StepOutFrame<'a> {
    Step(StepOut<'a>),
}

#[derive(Serialize)]
struct StepOut<'a> {
    step: usize,
    recorder: &'a RunRecorder,
    info: &'a RunInfo,
    report: &'a StepReport,
}

fn send_step(
    out: &Arc<Mutex<BufWriter<Stream>>>,
    step: usize,
    info: &RunInfo,
    recorder: &RunRecorder,
    report: &StepReport,
) -> Result<(), SpreadError> {
    send_on(out, &StepOutFrame::Step(StepOut { step, recorder, info, report }))
}

/// The agent's seconds, sent on as its run merges them. Each is held until the next comes
/// (or the step ends), so that the step's last second goes out marked as such, with where
/// the agent's step ended: what the coordinator's merge needs to end the step.
struct Forward {
    out: Arc<Mutex<BufWriter<Stream>>>,
    held: Option<SecondFrame>,
    step: Option<usize>,
}

impl Forward {
    fn flush(&mut self, last: bool) {
        let Some(mut frame) = self.held.take() else { return };
        frame.last = last;
        let sent = self
            .out
            .lock()
            .ok()
            .map(|mut out| wire::send(&mut *out, &FromAgent::Second(Box::new(frame))));
        // A lost coordinator is noticed by the listener, which stops the run.
        drop(sent);
    }
}

impl SecondObserver for Forward {
    fn second(&mut self, step: Option<usize>, s: &RunSecond) {
        self.flush(false);
        self.step = step;
        let end = Duration::from_secs(s.second) + s.length;
        self.held = Some(SecondFrame {
            step,
            second: s.second,
            last: false,
            end_ns: u64::try_from(end.as_nanos()).unwrap_or(u64::MAX),
            completed: s.interval.completed,
            failed: s.interval.failed,
            failures: herd_stats::FailureKind::ALL
                .iter()
                .map(|k| s.interval.failures.get(*k))
                .collect(),
            bytes_read: s.interval.bytes_read,
            latency: s.interval.latency.clone(),
            late_sends: s.interval.late_sends,
            open_connections: s.interval.open_connections,
        });
    }

    fn end_step(&mut self) {
        if self.held.is_none() {
            // A step with no second at all (it ended at its start): the end still goes out.
            self.held = Some(SecondFrame {
                step: self.step,
                second: 0,
                last: true,
                end_ns: 0,
                completed: 0,
                failed: 0,
                failures: Vec::new(),
                bytes_read: 0,
                latency: herd_stats::LatencyHistogram::growing(),
                late_sends: 0,
                open_connections: 0,
            });
        }
        self.flush(true);
    }
}

fn unexpected(frame: &FromCoordinator) -> SpreadError {
    SpreadError::Lost(format!("the coordinator sent {frame:?} out of turn"))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(vars: &[(&str, &str)]) -> Result<AgentEnv, SpreadError> {
        let map: HashMap<String, String> =
            vars.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        AgentEnv::from_vars(|name| map.get(name).cloned())
    }

    #[test]
    fn the_environment_says_who_the_agent_is() {
        let e = env(&[(INDEX_VAR, "2"), (COUNT_VAR, "3"), (COORDINATOR_VAR, "herd-0.herd:7070")])
            .unwrap();
        assert_eq!((e.slice.index(), e.slice.count()), (2, 3));
        assert_eq!(e.coordinator, "herd-0.herd:7070");
    }

    #[test]
    fn a_bad_environment_is_named() {
        for (vars, want) in [
            (vec![(COUNT_VAR, "3"), (COORDINATOR_VAR, "x:1")], "JOB_COMPLETION_INDEX is not set"),
            (
                vec![(INDEX_VAR, "two"), (COUNT_VAR, "3"), (COORDINATOR_VAR, "x:1")],
                "JOB_COMPLETION_INDEX is `two`, not a whole number",
            ),
            (
                vec![(INDEX_VAR, "3"), (COUNT_VAR, "3"), (COORDINATOR_VAR, "x:1")],
                "JOB_COMPLETION_INDEX is 3, but there are only 3 agents (0 to 2)",
            ),
            (
                vec![(INDEX_VAR, "0"), (COUNT_VAR, "0"), (COORDINATOR_VAR, "x:1")],
                "HERD_AGENTS is 0; a run needs at least one agent",
            ),
            (vec![(INDEX_VAR, "0"), (COUNT_VAR, "1")], "HERD_COORDINATOR is not set"),
        ] {
            let e = env(&vars).unwrap_err().to_string();
            assert!(e.contains(want), "{vars:?}: {e}");
        }
    }
}

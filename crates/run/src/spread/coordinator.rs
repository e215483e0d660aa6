//! The coordinator of a spread run: it waits for all N agents (each says who it is and what
//! it runs; a mismatch stops everything), answers their clock pings, and when all are armed
//! gives one start instant. Then it merges: each agent's seconds go into the run's seconds by
//! index (the outputs' own merge, as one process's workers do: `--series`, `--hlog`, the
//! live line), each agent's seconds also into its own `--hlog`, and each step's recorders
//! into the step's report. An agent that fails or goes away voids the run, and the error says
//! which; an agent that never comes is waited for only so long.
//!
//! One thread per agent connection reads its frames (and answers pings at once, so a busy
//! main loop never adds to a measured round trip); the main loop takes them in order.

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufReader, BufWriter};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use herd_engine::{Control, Warmed};
use serde::Serialize;

use super::clock::{self, Offset};
use super::combine::combine;
use super::stream::{Address, Listener, Stream};
use super::wire::{self, FromAgent, FromCoordinator, SecondFrame, StepFrame};
use super::SpreadError;
use crate::error::RunError;
use crate::execute::RunSetup;
use crate::hlog::Hlog;
use crate::merge::RunSecond;
use crate::outputs::{Feed, Outputs, StepStart};
use crate::plan::RunPlan;
use crate::report::{RunReport, StepReport};
use herd_record::Report;

/// How long the coordinator waits for every agent to be armed, unless told otherwise.
pub const DEFAULT_ARM_TIMEOUT: Duration = Duration::from_secs(120);

/// An agent that sends nothing this long mid-run is taken for gone: a running agent sends a
/// second every second.
const SILENCE: Duration = Duration::from_secs(15);

/// After an abort, how long the agents have to send what they measured.
const GRACE: Duration = Duration::from_secs(15);

/// A listening coordinator, before the run.
#[derive(Debug)]
pub struct Coordinator {
    listener: Listener,
    agents: NonZeroU32,
    arm_timeout: Duration,
}

/// What one agent did: its clock, its start, and its own report of each step.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct AgentFigures {
    pub index: u32,
    /// Its wall clock's offset from the coordinator's (coordinator − agent), and the round
    /// trip of the exchange that measured it.
    pub clock_offset_us: f64,
    pub clock_rtt_us: f64,
    /// How long after the start instant its engine started.
    pub start_late_us: f64,
    /// Its connections opened before the start (the kept-alive HTTP/1 and HTTP/2 ones), those that
    /// could not be (each opened with its first request instead), and how long it took.
    pub opened_ahead: u64,
    pub not_opened_ahead: u64,
    pub opening_ms: f64,
    pub steps: Vec<StepReport>,
}

/// The merged result of a spread run, and each agent's figures.
#[derive(Debug)]
pub struct SpreadReport {
    pub report: RunReport,
    /// What was asked of the run, as the summary says it.
    pub setup: RunSetup,
    pub agents: Vec<AgentFigures>,
    /// An agent's own `--hlog` that could not be written (the first error; the run and the
    /// merged outputs went on): the caller says it after the result, as `herd run` does a
    /// full disk.
    pub hlog_error: Option<RunError>,
}

impl SpreadReport {
    /// herd.run.v1 with the per-agent figures beside it (`agents`: v1 only ever adds
    /// fields), pretty-printed.
    pub fn to_json_pretty(&self) -> String {
        let mut value = serde_json::to_value(&self.report).unwrap_or_default();
        if let Some(map) = value.as_object_mut() {
            map.insert("agents".into(), serde_json::to_value(&self.agents).unwrap_or_default());
        }
        let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
        text.push('\n');
        text
    }

    /// A result as [`SpreadReport::to_json_pretty`] wrote it (agent 0's log on Kubernetes),
    /// with `setup` (`setup_for` of its plan) for the summary.
    pub fn from_json(text: &str, setup: RunSetup) -> Result<SpreadReport, SpreadError> {
        let report = RunReport::from_json(text)
            .map_err(|e| SpreadError::Result(format!("agent 0's result {e}")))?;
        #[derive(serde::Deserialize)]
        struct Agents {
            agents: Vec<AgentFigures>,
        }
        let agents = serde_json::from_str::<Agents>(text)
            .map_err(|e| SpreadError::Result(format!("agent 0's result has bad `agents`: {e}")))?
            .agents;
        Ok(SpreadReport { report, setup, agents, hlog_error: None })
    }
}

impl Coordinator {
    /// Listens on `address` for `agents` agents (a TCP port 0 picks a free one).
    pub fn bind(address: &Address, agents: NonZeroU32) -> Result<Coordinator, SpreadError> {
        let listener = Listener::bind(address)
            .map_err(|source| SpreadError::Listen { address: address.to_string(), source })?;
        Ok(Coordinator { listener, agents, arm_timeout: DEFAULT_ARM_TIMEOUT })
    }

    /// Gives up when not every agent is armed this long after [`Coordinator::run`] begins.
    pub fn arm_timeout(mut self, within: Duration) -> Coordinator {
        self.arm_timeout = within;
        self
    }

    /// Where agents reach it, as `HERD_COORDINATOR` says it.
    pub fn address(&self) -> Option<Address> {
        self.listener.address()
    }

    /// Runs `plan` over the agents: the merged seconds go to `outputs`, each agent's to its
    /// own hlog beside `plan.outputs.hlog`; `on_step` sees each merged step as it ends;
    /// `control` stopped (Ctrl-C) stops every agent and keeps what they measured.
    pub fn run(
        self,
        plan: &RunPlan,
        outputs: Option<&Outputs>,
        control: &Control,
        mut on_step: impl FnMut(usize, &RunSetup, &StepReport),
    ) -> Result<SpreadReport, SpreadError> {
        let setup = crate::execute::spread_setup(plan)?;
        let n = self.agents.get() as usize;
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        self.listener.set_nonblocking().map_err(|source| SpreadError::Listen {
            address: self.listener.address().map_or_else(String::new, |a| a.to_string()),
            source,
        })?;
        let accept = spawn_accept(self.listener, tx, stop.clone());
        let mut board = Board::new(n, plan, setup);
        let result = board
            .gather(&rx, control, self.arm_timeout)
            .and_then(|()| board.measure(&rx, control, outputs, &mut on_step));
        if let Err(e) = &result {
            board.abort(&e.to_string());
        }
        stop.store(true, Ordering::Relaxed);
        // Joined (it sees the flag within 20 ms): the listener goes with it, and a Unix
        // socket's file with the listener, before this returns.
        if let Some(accept) = accept {
            let _ = accept.join();
        }
        board.close();
        result
    }
}

/// What the connection threads tell the main loop.
enum Event {
    Joined { conn: usize, writer: Writer },
    Frame { conn: usize, frame: FromAgent },
    Gone { conn: usize, why: String },
}

type Writer = Arc<Mutex<BufWriter<Stream>>>;

fn send(writer: &Writer, frame: &FromCoordinator) -> bool {
    writer.lock().is_ok_and(|mut w| wire::send(&mut *w, frame).is_ok())
}

/// Accepts agents until told to stop; a reader thread for each.
fn spawn_accept(
    listener: Listener,
    tx: Sender<Event>,
    stop: Arc<AtomicBool>,
) -> Option<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("herd-coord-accept".into())
        .spawn(move || {
            let mut next = 0;
            while !stop.load(Ordering::Relaxed) {
                match listener.accept() {
                    Ok(stream) => {
                        let conn = next;
                        next += 1;
                        if !spawn_reader(conn, stream, tx.clone()) {
                            return;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                    // A failed accept (a connection reset while queued) concerns no agent
                    // that got in.
                    Err(_) => std::thread::sleep(Duration::from_millis(20)),
                }
            }
        })
        .ok()
}

/// Reads one agent's frames; answers pings itself, at once.
fn spawn_reader(conn: usize, stream: Stream, tx: Sender<Event>) -> bool {
    let Ok(read_half) = stream.try_clone() else { return true };
    let writer: Writer = Arc::new(Mutex::new(BufWriter::new(stream)));
    if tx.send(Event::Joined { conn, writer: writer.clone() }).is_err() {
        return false;
    }
    let spawned = std::thread::Builder::new().name(format!("herd-coord-{conn}")).spawn(move || {
        let mut input = BufReader::new(read_half);
        let mut line = Vec::new();
        loop {
            match wire::receive::<FromAgent, _>(&mut input, &mut line) {
                Ok(FromAgent::Ping { t1 }) => {
                    let t2 = clock::wall_ns();
                    let ok = writer.lock().is_ok_and(|mut w| {
                        let t3 = clock::wall_ns();
                        wire::send(&mut *w, &FromCoordinator::Pong { t1, t2, t3 }).is_ok()
                    });
                    if !ok {
                        let _ = tx.send(Event::Gone { conn, why: "cannot answer its ping".into() });
                        return;
                    }
                }
                Ok(frame) => {
                    if tx.send(Event::Frame { conn, frame }).is_err() {
                        return;
                    }
                }
                Err(e) => {
                    let _ = tx.send(Event::Gone { conn, why: e.to_string() });
                    return;
                }
            }
        }
    });
    spawned.is_ok()
}

/// One agent, as the coordinator knows it.
struct Agent {
    writer: Writer,
    offset: Option<Offset>,
    /// What it opened before the start.
    opened: Warmed,
    armed: bool,
    done: bool,
    last_heard: Instant,
    late: Duration,
    steps: Vec<StepReport>,
    hlog: Option<Hlog>,
}

/// The coordinator's state over the run.
struct Board<'p> {
    n: usize,
    plan: &'p RunPlan,
    /// The plan's config hash (`config_of`), each file it reads hashed once, not at each
    /// hello.
    config: String,
    setup: RunSetup,
    /// Connections not yet known as an agent (no hello yet).
    joined: BTreeMap<usize, Writer>,
    /// Agent of each connection that said hello.
    index_of: BTreeMap<usize, usize>,
    agents: Vec<Option<Agent>>,
    start: Option<(Instant, SystemTime)>,
    aborted: bool,
    /// The first error writing an agent's own hlog.
    hlog_error: Option<RunError>,
}

/// The step being merged.
struct Step {
    /// From 1.
    k: usize,
    feed: Option<Feed>,
    /// Each agent's end-of-step frame, once sent.
    parts: Vec<Option<StepFrame>>,
    /// Frames of later steps, sent by agents already past this one.
    later: VecDeque<(usize, FromAgent)>,
    /// Where this step's second 0 starts, on this machine's clock.
    origin: Instant,
}

impl<'p> Board<'p> {
    fn new(n: usize, plan: &'p RunPlan, setup: RunSetup) -> Board<'p> {
        Board {
            n,
            plan,
            config: super::config_of(plan),
            setup,
            joined: BTreeMap::new(),
            index_of: BTreeMap::new(),
            agents: (0..n).map(|_| None).collect(),
            start: None,
            aborted: false,
            hlog_error: None,
        }
    }

    /// Until every agent has said hello, measured its clock and armed; then the start.
    fn gather(
        &mut self,
        rx: &Receiver<Event>,
        control: &Control,
        within: Duration,
    ) -> Result<(), SpreadError> {
        let deadline = Instant::now() + within;
        while !self.agents.iter().all(|a| a.as_ref().is_some_and(|a| a.armed)) {
            if control.is_stopped() {
                return Err(SpreadError::Aborted("interrupted before the start".into()));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let agents = (0..self.n)
                    .filter(|&i| !self.agents[i].as_ref().is_some_and(|a| a.armed))
                    .map(|i| i as u32)
                    .collect();
                return Err(SpreadError::Barrier { within, missing: self.missing(), agents });
            }
            match rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(event) => self.before_start(event)?,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(SpreadError::Broken("cannot accept agents any more".into()));
                }
            }
        }
        // Far enough ahead for the slowest agent to hear it: four of its round trips, and a
        // quarter second for its thread to be scheduled.
        let rtt = self.agents.iter().flatten().filter_map(|a| a.offset).map(|o| o.rtt_ns).max();
        let ahead =
            Duration::from_nanos(rtt.unwrap_or(0).unsigned_abs()) * 4 + Duration::from_millis(250);
        let at_ns = clock::wall_ns().saturating_add(i64::try_from(ahead.as_nanos()).unwrap_or(0));
        let at = clock::local_instant(at_ns, Offset { offset_ns: 0, rtt_ns: 0 });
        let wall = SystemTime::UNIX_EPOCH + Duration::from_nanos(at_ns.unsigned_abs());
        self.start = Some((at, wall));
        for (i, a) in self.agents.iter().enumerate() {
            if let Some(a) = a {
                if !send(&a.writer, &FromCoordinator::Start { at: at_ns }) {
                    return Err(SpreadError::AgentLost {
                        index: i as u32,
                        why: "cannot send it the start".into(),
                    });
                }
            }
        }
        Ok(())
    }

    fn before_start(&mut self, event: Event) -> Result<(), SpreadError> {
        match event {
            Event::Joined { conn, writer } => {
                self.joined.insert(conn, writer);
            }
            Event::Frame {
                conn,
                frame: FromAgent::Hello { protocol, herd, index, count, config, histogram },
            } => {
                let writer = self.joined.remove(&conn).ok_or_else(|| {
                    SpreadError::Mismatch(format!("connection {conn} said hello twice"))
                })?;
                let reason = self.refusal(protocol, &herd, index, count, &config, &histogram);
                if let Some(reason) = reason {
                    send(&writer, &FromCoordinator::Refused { reason: reason.clone() });
                    return Err(SpreadError::Mismatch(format!("agent {index}: {reason}")));
                }
                send(&writer, &FromCoordinator::Welcome);
                let i = index as usize;
                self.index_of.insert(conn, i);
                self.agents[i] = Some(Agent {
                    writer,
                    offset: None,
                    opened: Warmed::default(),
                    armed: false,
                    done: false,
                    last_heard: Instant::now(),
                    late: Duration::ZERO,
                    steps: Vec::new(),
                    hlog: self.agent_hlog(i)?,
                });
            }
            Event::Frame {
                conn,
                frame: FromAgent::Armed { offset_ns, rtt_ns, opened, not_opened, opening_ns },
            } => {
                let a = self.agent_of(conn)?;
                a.offset = Some(Offset { offset_ns, rtt_ns });
                let took = Duration::from_nanos(opening_ns);
                a.opened = Warmed { connections: opened, failed: not_opened, took };
                a.armed = true;
            }
            Event::Frame { conn, frame: FromAgent::Failed { error } } => {
                let index = self.index(conn)?;
                return Err(SpreadError::AgentFailed { index, error });
            }
            Event::Frame { conn, frame } => {
                let index = self.index(conn)?;
                return Err(SpreadError::Broken(format!(
                    "agent {index} sent {} before the start",
                    frame_name(&frame)
                )));
            }
            Event::Gone { conn, why } => {
                if let Some(&i) = self.index_of.get(&conn) {
                    return Err(SpreadError::AgentLost { index: i as u32, why });
                }
                // Something that connected and left without a hello was no agent.
                self.joined.remove(&conn);
            }
        }
        Ok(())
    }

    /// Why an agent's hello cannot be accepted, if it cannot.
    fn refusal(
        &self,
        protocol: u32,
        herd: &str,
        index: u32,
        count: u32,
        config: &str,
        histogram: &str,
    ) -> Option<String> {
        let ours = env!("CARGO_PKG_VERSION");
        if protocol != wire::PROTOCOL || herd != ours {
            return Some(format!(
                "it is herd {herd} (protocol {protocol}), the coordinator herd {ours} (protocol \
                 {}): run one build everywhere",
                wire::PROTOCOL
            ));
        }
        if count as usize != self.n {
            return Some(format!("it is one of {count} agents, the run has {}", self.n));
        }
        if index as usize >= self.n {
            return Some(format!("index {index} is not below {}", self.n));
        }
        if self.agents[index as usize].is_some() {
            return Some(format!("index {index} is taken: two agents were given one index"));
        }
        let want = &self.config;
        if config != *want {
            return Some(format!(
                "it runs other settings (hash {config}, the coordinator's {want}): give every agent \
                 the same herd run arguments, and the same bytes in the files they name"
            ));
        }
        if histogram != wire::HISTOGRAM {
            return Some(format!("it records histograms as {histogram}, not {}", wire::HISTOGRAM));
        }
        None
    }

    /// Every step, merged, until each agent is done.
    fn measure(
        &mut self,
        rx: &Receiver<Event>,
        control: &Control,
        outputs: Option<&Outputs>,
        on_step: &mut impl FnMut(usize, &RunSetup, &StepReport),
    ) -> Result<SpreadReport, SpreadError> {
        let Some((start_at, _)) = self.start else {
            return Err(SpreadError::Broken("no start".into()));
        };
        // Agents send nothing before the measured part begins (the warm-up's outcomes are in
        // no second): silence counts from there.
        let warmup = self.plan.warmup.map_or(Duration::ZERO, |w| w.get());
        let quiet_until = (start_at + warmup).max(Instant::now());
        for a in self.agents.iter_mut().flatten() {
            a.last_heard = quiet_until;
        }
        let mut steps = Vec::new();
        let mut step = self.begin(1, outputs);
        let mut abort_deadline: Option<Instant> = None;
        // Frames of a step that had not begun when they came, taken again once it has.
        let mut replay: VecDeque<(usize, FromAgent)> = VecDeque::new();
        let mut checked = Instant::now();
        while !self.agents.iter().flatten().all(|a| a.done) {
            // Once a second whatever else comes: a steady stream from the other agents
            // must not hide one that fell silent.
            if checked.elapsed() >= Duration::from_secs(1) && abort_deadline.is_none() {
                self.check_silence()?;
                checked = Instant::now();
            }
            if control.is_stopped() && !self.aborted {
                self.abort("the coordinator was interrupted (Ctrl-C)");
                abort_deadline = Some(Instant::now() + GRACE);
            }
            if abort_deadline.is_some_and(|d| Instant::now() >= d) {
                break;
            }
            let event = match replay.pop_front() {
                Some((conn, frame)) => Event::Frame { conn, frame },
                None => match rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(e) => e,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break,
                },
            };
            let (conn, frame) = match event {
                Event::Frame { conn, frame } => (conn, frame),
                Event::Gone { conn, why } => {
                    // A connection that never said hello was no agent: its going is nothing.
                    let Some(&i) = self.index_of.get(&conn) else { continue };
                    if self.agents[i].as_ref().is_some_and(|a| a.done) {
                        continue;
                    }
                    return Err(SpreadError::AgentLost { index: i as u32, why });
                }
                // Something connecting now is no agent of this run; it is not listened to.
                Event::Joined { writer, .. } => {
                    if let Ok(w) = writer.lock() {
                        w.get_ref().shutdown();
                    }
                    continue;
                }
            };
            let Some(&i) = self.index_of.get(&conn) else { continue };
            if let Some(a) = self.agents[i].as_mut() {
                a.last_heard = Instant::now();
            }
            match frame {
                FromAgent::Second(s) => {
                    if s.step.unwrap_or(1) > step.k {
                        step.later.push_back((conn, FromAgent::Second(s)));
                    } else {
                        self.second(i, &step, *s);
                    }
                }
                FromAgent::Step(part) => {
                    if part.step > step.k {
                        step.later.push_back((conn, FromAgent::Step(part)));
                        continue;
                    }
                    if let Some(a) = self.agents[i].as_mut() {
                        if part.step == 1 {
                            a.late = part.info.late;
                        }
                        a.steps.push(part.report.clone());
                    }
                    step.parts[i] = Some(*part);
                    if step.parts.iter().all(Option::is_some) {
                        let parts: Vec<&StepFrame> = step.parts.iter().flatten().collect();
                        let report = combine(&self.setup, &parts);
                        if let Some(o) = outputs {
                            o.end_step();
                        }
                        on_step(step.k, &self.setup, &report);
                        let more = !report.interrupted && step.k < self.plan.steps().len();
                        steps.push(report);
                        if more {
                            replay.extend(std::mem::take(&mut step.later));
                            step = self.begin(step.k + 1, outputs);
                        }
                    }
                }
                FromAgent::Done => {
                    if let Some(a) = self.agents[i].as_mut() {
                        a.done = true;
                    }
                }
                FromAgent::Failed { error } => {
                    return Err(SpreadError::AgentFailed { index: i as u32, error });
                }
                other => {
                    return Err(SpreadError::Broken(format!(
                        "agent {i} sent {} mid-run",
                        frame_name(&other)
                    )));
                }
            }
        }
        let incomplete: Vec<u32> = self
            .agents
            .iter()
            .enumerate()
            .filter(|(_, a)| a.as_ref().is_some_and(|a| !a.done))
            .map(|(i, _)| i as u32)
            .collect();
        if let Some(&first) = incomplete.first() {
            let list: Vec<String> = incomplete.iter().map(u32::to_string).collect();
            return Err(SpreadError::AgentLost {
                index: first,
                why: format!(
                    "agents {} sent no result within {} s of the abort",
                    list.join(", "),
                    GRACE.as_secs()
                ),
            });
        }
        for a in self.agents.iter_mut().flatten() {
            if let Some(h) = a.hlog.take() {
                if let Err(e) = h.close() {
                    self.hlog_error.get_or_insert(e);
                }
            }
        }
        let report = if self.plan.is_stepped() {
            RunReport::Stepped { url: self.plan.url.text.clone(), steps }
        } else {
            match steps.pop() {
                Some(s) => RunReport::Single(Box::new(s)),
                None => {
                    return Err(SpreadError::Broken("the agents sent no step".into()));
                }
            }
        };
        let agents = self
            .agents
            .iter()
            .enumerate()
            .filter_map(|(i, a)| a.as_ref().map(|a| (i, a)))
            .map(|(i, a)| AgentFigures {
                index: i as u32,
                clock_offset_us: a.offset.map_or(0.0, |o| o.offset_ns as f64 / 1e3),
                clock_rtt_us: a.offset.map_or(0.0, |o| o.rtt_ns as f64 / 1e3),
                start_late_us: a.late.as_secs_f64() * 1e6,
                opened_ahead: a.opened.connections,
                not_opened_ahead: a.opened.failed,
                opening_ms: a.opened.took.as_secs_f64() * 1e3,
                steps: a.steps.clone(),
            })
            .collect();
        let hlog_error = self.hlog_error.take();
        Ok(SpreadReport { report, setup: self.setup.clone(), agents, hlog_error })
    }

    /// Step `k` begins: its seconds count from its shared start.
    fn begin(&mut self, k: usize, outputs: Option<&Outputs>) -> Step {
        let (start_at, start_wall) = self.start.unwrap_or((Instant::now(), SystemTime::now()));
        // Where every agent's second 0 of this step is (`RunPlan::measured_offset`).
        let origin_offset = self.plan.measured_offset(k - 1);
        let origin = start_at + origin_offset;
        let origin_wall = start_wall + origin_offset;
        let stepped = self.plan.is_stepped().then_some(k);
        let start = StepStart { step: stepped, workers: self.n, origin, origin_wall };
        for a in self.agents.iter_mut().flatten() {
            if let Some(h) = &mut a.hlog {
                if let Err(e) = h.begin_step(&start) {
                    // Said after the result; the merged log and the run go on.
                    self.hlog_error.get_or_insert(e);
                    a.hlog = None;
                }
            }
        }
        let feed = outputs.map(|o| {
            o.begin_step(StepStart { step: stepped, workers: self.n, origin, origin_wall })
        });
        let parts = (0..self.n).map(|_| None).collect();
        Step { k, feed, parts, later: VecDeque::new(), origin }
    }

    /// One agent's second: into its own hlog, then into the run's merge.
    fn second(&mut self, i: usize, step: &Step, s: SecondFrame) {
        let (second, last, end) = (s.second, s.last, Duration::from_nanos(s.end_ns));
        let start = Duration::from_secs(second);
        let length = if last {
            end.saturating_sub(start).min(Duration::from_secs(1))
        } else {
            Duration::from_secs(1)
        };
        let run_second = RunSecond { second, length, interval: s.interval() };
        if let Some(a) = self.agents[i].as_mut() {
            if let Some(h) = &mut a.hlog {
                if let Err(e) = h.write(step.k_tag(self.plan), &run_second) {
                    self.hlog_error.get_or_insert(e);
                    a.hlog = None;
                }
            }
        }
        let interval = Box::new(run_second.interval);
        if let Some(feed) = &step.feed {
            // How long after its end (on the shared clock) the agent's second came: what
            // holds the merged second back, and a sign of an agent falling behind.
            let ended = step.origin + start + length;
            feed.agent_behind(i, Instant::now().saturating_duration_since(ended));
            feed.send(if last {
                Report::Ended { worker: i, second, interval, at: end }
            } else {
                Report::Second { worker: i, second, interval }
            });
        }
    }

    /// An agent silent too long mid-run is gone.
    fn check_silence(&self) -> Result<(), SpreadError> {
        for (i, a) in self.agents.iter().enumerate() {
            if let Some(a) = a {
                if !a.done && a.last_heard.elapsed() > SILENCE {
                    return Err(SpreadError::AgentLost {
                        index: i as u32,
                        why: format!("nothing from it for {} s", SILENCE.as_secs()),
                    });
                }
            }
        }
        Ok(())
    }

    /// Tells every agent to stop, once.
    fn abort(&mut self, reason: &str) {
        if self.aborted {
            return;
        }
        self.aborted = true;
        let frame = FromCoordinator::Abort { reason: reason.to_owned() };
        for a in self.agents.iter().flatten() {
            send(&a.writer, &frame);
        }
        for w in self.joined.values() {
            send(w, &frame);
        }
    }

    /// Closes every connection: each reader thread ends, and an agent still there learns
    /// that the coordinator is gone.
    fn close(&mut self) {
        let writers = self.agents.iter().flatten().map(|a| &a.writer).chain(self.joined.values());
        for w in writers {
            if let Ok(w) = w.lock() {
                w.get_ref().shutdown();
            }
        }
    }

    /// Which agents have not armed, and how far each got.
    fn missing(&self) -> String {
        let parts: Vec<String> = self
            .agents
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a {
                None => Some(format!("agent {i} never connected")),
                Some(a) if !a.armed => Some(format!("agent {i} connected but is not armed")),
                Some(_) => None,
            })
            .collect();
        parts.join(", ")
    }

    fn index(&self, conn: usize) -> Result<u32, SpreadError> {
        self.index_of.get(&conn).map(|&i| i as u32).ok_or_else(|| {
            SpreadError::Broken(format!("connection {conn} sent frames before its hello"))
        })
    }

    fn agent_of(&mut self, conn: usize) -> Result<&mut Agent, SpreadError> {
        let i = self.index(conn)? as usize;
        self.agents[i].as_mut().ok_or_else(|| SpreadError::Broken(format!("agent {i} is unknown")))
    }

    /// Agent `i`'s own hlog, beside the run's: `run.hlog` → `run.agent-1.hlog`.
    fn agent_hlog(&self, i: usize) -> Result<Option<Hlog>, SpreadError> {
        let Some(path) = &self.plan.outputs.hlog else { return Ok(None) };
        let path = agent_path(path, i);
        Ok(Some(Hlog::create(&path, &self.plan.url.text)?))
    }
}

impl Step {
    /// The hlog tag of this step: `step-K` in a stepped run.
    fn k_tag(&self, plan: &RunPlan) -> Option<usize> {
        plan.is_stepped().then_some(self.k)
    }
}

/// `dir/run.hlog` → `dir/run.agent-I.hlog` (the extension kept, if any).
pub fn agent_path(path: &Path, i: usize) -> PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.agent-{i}.{}", ext.to_string_lossy()),
        None => format!("{stem}.agent-{i}"),
    };
    path.with_file_name(name)
}

fn frame_name(frame: &FromAgent) -> &'static str {
    match frame {
        FromAgent::Hello { .. } => "hello",
        FromAgent::Ping { .. } => "ping",
        FromAgent::Armed { .. } => "armed",
        FromAgent::Second(_) => "a second",
        FromAgent::Step(_) => "a step",
        FromAgent::Done => "done",
        FromAgent::Failed { .. } => "failed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_hlogs_sit_beside_the_run_s() {
        assert_eq!(
            agent_path(Path::new("/tmp/x/run.hlog"), 2),
            Path::new("/tmp/x/run.agent-2.hlog")
        );
        assert_eq!(agent_path(Path::new("lat"), 0), Path::new("lat.agent-0"));
    }
}

//! The helper's loop: requests in from stdin, one reply each out on stdout, nothing else on
//! stdout (diagnostics go to stderr, the programs' output to their logs).
//!
//! The safety property lives here: **whatever ends the helper in order stops everything it
//! started and removes its run directory** — its stdin reaching end of file (the SSH channel
//! closed: herd killed, the link dropped, Ctrl-C at herd's end), stdout closing, SIGTERM,
//! SIGHUP or SIGINT, and `bye`. So that a signal or a closed channel is seen while a request
//! is being handled or while nothing is, stdin is read on a thread of its own and signals
//! come from ctrlc's thread: both are events on one channel, which the loop alone turns into
//! actions, and both raise a flag that a long request (`ready`) checks. A link lost without
//! a close (a host's network down: sshd may not notice for hours) is silence: with an idle
//! time, no request within it ends the helper the same way (herd pings meanwhile,
//! `keeper.rs`). Only SIGKILL escapes this; what it leaves, a later helper's `clean` stops
//! (`rundir.rs`).

use std::io::{self, BufReader, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;

use crate::host::{Ended, Host, Options};
use crate::lines::{read_line, Line};
use crate::protocol::{Answer, Reply, Request, MAX_REQUEST_LINE};

/// Why the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Why {
    /// `bye`.
    Bye,
    /// stdin reached its end: the channel closed.
    InputClosed,
    /// stdin could not be read, or stdout written.
    LinkFailed,
    /// SIGTERM, SIGHUP or SIGINT.
    Signal,
    /// No request within the idle time: the link is taken for lost.
    Silent,
}

impl Why {
    pub fn says(self) -> &'static str {
        match self {
            Why::Bye => "asked to end (bye)",
            Why::InputClosed => "its channel closed",
            Why::LinkFailed => "its channel failed",
            Why::Signal => "a signal ended it",
            Why::Silent => "no request within its idle time: its link taken for lost",
        }
    }
}

/// What reaches the loop.
#[derive(Debug)]
enum Event {
    Line(io::Result<Line>),
    Signal,
}

/// The loop's inputs before it runs: the signal side can be handed out first.
#[derive(Debug)]
pub struct Loop {
    tx: Sender<Event>,
    rx: Receiver<Event>,
    stopping: Arc<AtomicBool>,
}

/// Raises the end of a [`Loop`] from another thread (a signal handler).
#[derive(Debug, Clone)]
pub struct Stopper {
    tx: Sender<Event>,
    stopping: Arc<AtomicBool>,
}

impl Stopper {
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        let _ = self.tx.send(Event::Signal);
    }
}

impl Default for Loop {
    fn default() -> Self {
        Loop::new()
    }
}

impl Loop {
    pub fn new() -> Loop {
        let (tx, rx) = mpsc::channel();
        Loop { tx, rx, stopping: Arc::new(AtomicBool::new(false)) }
    }

    pub fn stopper(&self) -> Stopper {
        Stopper { tx: self.tx.clone(), stopping: self.stopping.clone() }
    }

    /// The flag a [`Host`] checks during long requests.
    pub fn stopping(&self) -> Arc<AtomicBool> {
        self.stopping.clone()
    }

    /// Serves `input` and `output` until something ends it, then ends `host` (its programs
    /// stopped, its run directory removed).
    pub fn run(
        self,
        input: impl Read + Send + 'static,
        output: &mut impl Write,
        mut host: Host,
    ) -> (Why, Ended) {
        let tx = self.tx.clone();
        let stopping = self.stopping.clone();
        std::thread::spawn(move || {
            let mut input = BufReader::new(input);
            loop {
                let line = read_line(&mut input, MAX_REQUEST_LINE);
                let last =
                    !matches!(line, Ok(Line::Text(_) | Line::NotUtf8 | Line::TooLong { .. }));
                if last {
                    // The channel is gone: a request still waiting gives up now.
                    stopping.store(true, Ordering::Relaxed);
                }
                if tx.send(Event::Line(line)).is_err() || last {
                    return;
                }
            }
        });
        drop(self.tx);
        let idle = host.idle();
        let why = loop {
            let event = match idle {
                Some(idle) => match self.rx.recv_timeout(idle) {
                    Err(mpsc::RecvTimeoutError::Timeout) => break Why::Silent,
                    other => other.map_err(|_| mpsc::RecvError),
                },
                None => self.rx.recv(),
            };
            let request = match event {
                Err(_) => break Why::LinkFailed,
                Ok(Event::Signal) => break Why::Signal,
                Ok(Event::Line(Ok(Line::End))) => break Why::InputClosed,
                Ok(Event::Line(Err(e))) => {
                    // Not eprintln!, which panics when stderr is gone too (a closed SSH
                    // channel): the programs must still be stopped below.
                    let _ = writeln!(io::stderr(), "herd host: reading requests: {e}");
                    break Why::LinkFailed;
                }
                Ok(Event::Line(Ok(line))) => request(line),
            };
            let reply = match request {
                Ok(Request::Bye) => break Why::Bye,
                Ok(request) => host.handle(request),
                Err(message) => Reply::Error { message },
            };
            if write_reply(output, &reply).is_err() {
                break Why::LinkFailed;
            }
        };
        let ended = host.end();
        if why == Why::Bye {
            // Said once everything is stopped and removed: herd may rely on it.
            let bye = Answer::Bye { stopped: ended.stopped, removed: ended.removed.is_ok() };
            let _ = write_reply(output, &Reply::Ok(bye));
        }
        (why, ended)
    }
}

fn write_reply(output: &mut impl Write, reply: &Reply) -> io::Result<()> {
    writeln!(output, "{}", reply.to_line())?;
    output.flush()
}

/// The request one line read holds, or the error reply's message.
fn request(line: Line) -> Result<Request, String> {
    match line {
        Line::Text(text) if text.trim().is_empty() => {
            Err("an empty line is not a request: one JSON object per line".to_owned())
        }
        Line::Text(text) => Request::parse(&text),
        Line::NotUtf8 => Err("a request line that is not UTF-8: refused".to_owned()),
        Line::TooLong { len } => Err(format!(
            "a request line of {len} bytes is over the most, {MAX_REQUEST_LINE}: refused unread"
        )),
        Line::End => Err("the input ended".to_owned()),
    }
}

/// `herd host`: the helper on stdin and stdout, its run directory under `options.parent`,
/// SIGTERM, SIGHUP and SIGINT ending it in order. Errors only when it cannot start.
pub fn run_stdio(options: Options) -> io::Result<(Why, Ended)> {
    let lp = Loop::new();
    let host = Host::new(options, lp.stopping())?;
    let stopper = lp.stopper();
    if let Err(e) = ctrlc::set_handler(move || stopper.stop()) {
        let _ = host.end();
        return Err(io::Error::other(format!("cannot handle SIGTERM, SIGHUP and SIGINT: {e}")));
    }
    let mut out = io::stdout().lock();
    Ok(lp.run(io::stdin(), &mut out, host))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use std::path::PathBuf;

    fn options(tag: &str) -> Options {
        let parent =
            std::env::temp_dir().join(format!("herd-hosttest-serve-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&parent);
        std::fs::create_dir_all(&parent).unwrap();
        Options { herd: "herd test".into(), doctor: None, parent, idle: None }
    }

    /// Runs a helper over `input` to its end: the replies, why it ended, what ending did.
    fn serve(tag: &str, input: Vec<u8>) -> (Vec<Reply>, Why, Ended, PathBuf) {
        let options = options(tag);
        let parent = options.parent.clone();
        let lp = Loop::new();
        let host = Host::new(options, lp.stopping()).unwrap();
        let mut out = Vec::new();
        let (why, ended) = lp.run(Cursor::new(input), &mut out, host);
        let replies = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
            .collect();
        (replies, why, ended, parent)
    }

    fn message(r: &Reply) -> &str {
        match r {
            Reply::Error { message } => message,
            Reply::Ok(a) => panic!("{a:?} where an error was due"),
        }
    }

    /// Hostile lines get an error reply each and the helper goes on: a hello after them
    /// is still answered.
    #[test]
    fn every_bad_line_gets_an_error_and_the_helper_serves_on() {
        let mut input = Vec::new();
        input.extend_from_slice(b"\n");
        input.extend_from_slice(b"{\"kind\":\n");
        input.extend_from_slice(b"\xff\xfe\x00\n");
        input.extend(std::iter::repeat_n(b'{', MAX_REQUEST_LINE + 1));
        input.extend_from_slice(b"\n{\"kind\":\"format_disk\"}\n");
        input.extend_from_slice(
            b"{\"kind\":\"read_file\",\"path\":\"../../etc/passwd\",\"max_bytes\":9}\n",
        );
        input.extend_from_slice(
            b"{\"kind\":\"read_file\",\"path\":\"/etc/passwd\",\"max_bytes\":9}\n",
        );
        input.extend_from_slice(b"{\"kind\":\"stop\",\"id\":\"nothing\"}\n");
        input.extend_from_slice(
            b"{\"kind\":\"start\",\"id\":\"a b\",\"argv\":[\"true\"],\"log\":\"l\"}\n",
        );
        input.extend_from_slice(
            b"{\"kind\":\"start\",\"id\":\"s\",\"argv\":[\"true\"],\"log\":\"../l\"}\n",
        );
        input.extend_from_slice(
            br#"{"kind":"start","id":"s","argv":["true"],"log":"l","cpus":"1000"}"#,
        );
        input.push(b'\n');
        input.extend_from_slice(
            b"{\"kind\":\"start\",\"id\":\"s\",\"argv\":[\"/nonexistent/x\"],\"log\":\"l\"}\n",
        );
        input.extend_from_slice(b"{\"kind\":\"doctor\"}\n");
        input.extend_from_slice(b"{\"kind\":\"hello\"}");
        let (replies, why, ended, parent) = serve("hostile", input);
        let says = [
            "an empty line is not a request",
            "not a herd.host.v1 request: EOF",
            "not UTF-8",
            &format!("a request line of {} bytes is over the most", MAX_REQUEST_LINE + 1),
            "unknown variant `format_disk`",
            "only files inside the helper's run directory",
            "only files inside the helper's run directory",
            "no program started as \"nothing\" runs on this host",
            "id \"a b\" is not",
            "log \"../l\" is not a plain file name",
            "CPU 1000 is not online here",
            "cannot start s (/nonexistent/x)",
            "this helper has no doctor",
        ];
        assert_eq!(replies.len(), says.len() + 1, "{replies:?}");
        for (r, says) in replies.iter().zip(says) {
            assert!(message(r).contains(says), "{:?} does not say {says:?}", message(r));
        }
        let Some(Reply::Ok(Answer::Hello(h))) = replies.last() else { panic!("{replies:?}") };
        assert_eq!((h.protocol.as_str(), h.herd.as_str()), (crate::PROTOCOL, "herd test"));
        assert_eq!(why, Why::InputClosed);
        assert!(ended.removed.is_ok() && !ended.run_dir.exists(), "{ended:?}");
        std::fs::remove_dir_all(parent).unwrap();
    }

    /// The channel closes with a program running: it is stopped, the run directory goes.
    #[test]
    fn the_end_of_input_stops_what_runs_and_removes_the_run_dir() {
        let input = concat!(
            r#"{"kind":"start","id":"s","argv":["sh","-c","sleep 30 & sleep 30"],"log":"s.log"}"#,
            "\n"
        )
        .as_bytes();
        let (replies, why, ended, parent) = serve("eof", input.to_vec());
        let Some(Reply::Ok(Answer::Started { pid, .. })) = replies.first() else {
            panic!("{replies:?}")
        };
        assert_eq!(why, Why::InputClosed);
        assert_eq!(ended.stopped, 1);
        assert_eq!(herd_topo::proc::group_members(*pid), Vec::<u32>::new());
        assert!(ended.removed.is_ok() && !ended.run_dir.exists(), "{ended:?}");
        std::fs::remove_dir_all(parent).unwrap();
    }

    /// A signal while a `ready` waits: the wait gives up at once and the loop ends.
    #[test]
    fn a_stop_ends_a_waiting_ready_and_the_loop() {
        let options = options("signal");
        let parent = options.parent.clone();
        let lp = Loop::new();
        let stopper = lp.stopper();
        let host = Host::new(options, lp.stopping()).unwrap();
        let (mut keep, far) = std::os::unix::net::UnixStream::pair().unwrap();
        use std::io::Write as _;
        let requests = concat!(
            r#"{"kind":"start","id":"s","argv":["sleep","30"],"log":"s"}"#,
            "\n",
            r#"{"kind":"ready","id":"s","probe":{"unix_socket":"/nonexistent"},"#,
            r#""timeout_ms":60000}"#,
            "\n"
        );
        keep.write_all(requests.as_bytes()).unwrap();
        let started = std::time::Instant::now();
        let t = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            stopper.stop();
        });
        let mut out = Vec::new();
        let (why, ended) = lp.run(far, &mut out, host);
        t.join().unwrap();
        assert_eq!(why, Why::Signal);
        assert!(started.elapsed() < std::time::Duration::from_secs(10));
        let text = String::from_utf8(out).unwrap();
        assert!(text.lines().nth(1).unwrap().contains("the helper is stopping"), "{text}");
        assert_eq!(ended.stopped, 1);
        assert!(!ended.run_dir.exists());
        drop(keep);
        std::fs::remove_dir_all(parent).unwrap();
    }
}

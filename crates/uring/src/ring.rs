//! The ring a completion-backend worker turns: one io_uring per worker thread, the
//! operations the worker queues by token (its connection index), and one `io_uring_enter`
//! a loop turn that submits them all and waits for a batch of completions. Safe to use: the
//! ring owns every byte the kernel reads or writes (send buffers, connect addresses, the
//! receive buffers) until the operation's last completion, so no caller buffer has to
//! outlive a call.
//!
//! Why it is made this way (bench/results/2026-12-03-uring-floor/summary.md, BENCHMARKS.md's
//! io_uring floor): io_uring beat the epoll floor here only with batched waits (a turn waits
//! for `batch` completions, or `min_wait` once one is there: IORING_FEAT_MIN_TIMEOUT, 6.12)
//! and with SINGLE_ISSUER | DEFER_TASKRUN (without deferred task running the same waits ran
//! at ×0.76-0.84 of the floor). So: one enter a turn, never more unless the submission queue
//! fills; DEFER_TASKRUN where the kernel has it, else COOP_TASKRUN, and [`Ring::setup`] says
//! which; a small provided-buffer ring (64 × 8 KiB measured best for 100 connections), a
//! multishot receive on each connection that the ring re-arms itself when the buffers ran
//! out (`ENOBUFS`: the bytes wait in the socket, none is lost). Fixed files, bundles and
//! one-shot receives measured no different, so they are not here.
//!
//! Not here: what the bytes mean, timers (the caller caps each turn's wait by its next
//! timer), sockets' creation. A token's fd is the caller's until [`Ops::close`] takes it;
//! an fd closed elsewhere while the ring still has operations on it makes those operations
//! fail or hit whatever reuses the number — the caller's bug, not unsound.

use std::io;
use std::net::SocketAddr;
use std::os::fd::{IntoRawFd, OwnedFd, RawFd};
use std::time::Duration;

use io_uring::{cqueue, opcode, squeue, types, IoUring};
use socket2::SockAddr;

use super::completion::{decode, user_data, Op, GEN_MASK};
pub use super::completion::{Completion, Event};
use super::send_queue::{SendQueue, Step};
use super::BufRing;

/// How a worker's ring is made.
#[derive(Debug, Clone, Copy)]
pub struct RingConfig {
    /// Submission queue entries (a power of two; the kernel rounds up).
    pub entries: u32,
    /// Completion queue entries: room for a turn's completions (multishot receives post many
    /// per entry). At least `entries`.
    pub cq_entries: u32,
    /// Receive buffers: how many (a power of two) and how large, in bytes.
    pub buffers: (u16, u32),
    /// Completions a turn with a `min_wait` waits for before that wait ends.
    pub batch: u32,
    /// Tokens expected (a worker's connections): their state is made at once, not grown (and
    /// copied) a token at a time as connections open.
    pub tokens: u32,
}

impl Default for RingConfig {
    /// The floor study's best: 64 × 8 KiB buffers, batches of 32.
    fn default() -> RingConfig {
        RingConfig { entries: 256, cq_entries: 1024, buffers: (64, 8192), batch: 32, tokens: 0 }
    }
}

/// How completions' task work runs, as the kernel allowed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskRun {
    /// IORING_SETUP_DEFER_TASKRUN (6.1): only when the worker enters to wait, so a batched
    /// wait wakes it once for the batch.
    Deferred,
    /// IORING_SETUP_COOP_TASKRUN (5.19): the kernel refused deferred task running; each
    /// completion's task work runs at the worker's next transition to the kernel.
    Cooperative,
}

/// The flags the ring was made with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setup {
    /// Always with IORING_SETUP_SINGLE_ISSUER and IORING_SETUP_SUBMIT_ALL.
    pub task_run: TaskRun,
    /// The kernel has IORING_FEAT_MIN_TIMEOUT (6.12): a turn's `min_wait` is honoured.
    pub min_wait: bool,
}

/// What the ring did, for the worker's own figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// `io_uring_enter` calls: one a turn, plus `early_submits`.
    pub enters: u64,
    /// Enters made between turns because the submission queue was full.
    pub early_submits: u64,
    /// Completion queue entries read.
    pub completions: u64,
    /// Multishot receives re-armed after they ran out of buffers (`ENOBUFS`).
    pub enobufs_rearms: u64,
    /// Multishot receives re-armed for any reason, `ENOBUFS` included.
    pub rearms: u64,
    /// Sends the kernel took only part of, continued with the rest.
    pub short_sends: u64,
    /// Completions of closed connections, dropped.
    pub stale: u64,
    /// Closes that failed (the fd was not open: the caller closed it elsewhere).
    pub close_errors: u64,
}

/// One worker's io_uring. Made and turned on one thread (SINGLE_ISSUER: another thread's
/// enter fails), which is why it is not `Send`. Operations are queued through its
/// [`Ops`]: `ring.ops().send(..)` between turns, `ops.send(..)` in a turn's callback.
pub struct Ring {
    // Declared before `core` (which holds the io_uring): dropped after `Drop::drop`
    // unregisters it, or leaked if that could not be done (see BufRing).
    bufs: BufRing,
    core: Core,
    /// Reused each turn for the completions read.
    cqes: Vec<cqueue::Entry>,
}

/// What a caller queues by token, between turns or from inside a turn's callback (a
/// response read, the next request sent). Tokens are dense indexes (a worker's
/// connections): the ring keeps a slot for every token up to the largest used.
///
/// A handle, not the ring's state itself: a `&mut` to the state could be swapped with
/// another ring's, pairing a ring with receive buffers registered in another.
pub struct Ops<'a>(&'a mut Core);

/// Everything of the ring but its receive buffers, which the callback's
/// [`Event::Received`] borrows while the callback queues operations here.
struct Core {
    ring: IoUring,
    setup: Setup,
    batch: u32,
    /// The size of each receive buffer: the most one read brings.
    buf_len: u32,
    slots: Vec<Slot>,
    /// Tokens with bytes to send and no send in flight, with the generation that gave them.
    dirty: Vec<(u32, u32)>,
    /// Memory of closed connections' operations still in flight, by their `user_data`:
    /// freed at their last completion.
    orphans: Vec<(u64, Orphan)>,
    /// Every address a connect named, each once, kept for the ring's life (boxed: the
    /// kernel holds a pointer, and the list may grow). A worker connects its thousands of
    /// connections to the few addresses of its run: one copy each, not one a connection
    /// (10,000 connects at the start held 1.3 MiB of 136-byte boxes).
    #[allow(clippy::vec_box, reason = "the kernel holds a pointer into each: they must not move")]
    addrs: Vec<Box<SockAddr>>,
    /// Entries that found the submission queue full even after an early submit (it
    /// failed): submitted, in order, before anything newer.
    backlog: Vec<squeue::Entry>,
    /// Entries pushed whose last completion has not arrived.
    in_flight: usize,
    counters: Counters,
}

/// One token's state in its current generation.
#[derive(Debug, Default)]
///
/// Kept small (80 B): a worker holds one a connection, 10,000 idle ones included (issue 35's
/// bound on their memory); a test holds the size.
struct Slot {
    generation: u32,
    /// Its socket: sends go on it, its receive and polls are re-armed on it.
    fd: RawFd,
    /// The receive armed is one read of at most this many bytes ([`Ops::recv_up_to`]), not
    /// a multishot one; 0: it is multishot (a read is of at least one byte).
    once: u32,
    /// A receive is armed on `fd`.
    recv: bool,
    /// In `dirty` for this generation.
    dirty: bool,
    /// Polls armed ([`POLL_IN`], [`POLL_OUT`]), for a link that reads and writes its socket
    /// itself (QUIC's UDP socket) and only learns from the ring when it is ready.
    polls: u8,
    /// A connect is in flight; its address is in [`Core::addrs`].
    connecting: bool,
    send: SendQueue,
}

/// Memory held, never read: kept only so that the kernel's reads of it stay valid.
#[derive(Debug)]
#[allow(dead_code, reason = "held for the kernel, which reads it; never read here")]
enum Orphan {
    Send(Vec<u8>),
}

/// [`Slot::polls`]: a poll for reading is armed; a poll for writing is.
const POLL_IN: u8 = 1;
const POLL_OUT: u8 = 2;

/// The buffer group the ring's receive buffers are.
const BGID: u16 = 0;

/// How long dropping a ring waits for its cancelled operations to end, in turns of 100 ms.
const DROP_TURNS: u32 = 50;

impl Ring {
    /// A ring with DEFER_TASKRUN, or COOP_TASKRUN if the kernel refuses it, and its receive
    /// buffers registered.
    pub fn new(config: RingConfig) -> io::Result<Ring> {
        let (ring, task_run) = build_with(|t| build(&config, t))?;
        Ring::with(ring, task_run, &config)
    }

    fn with(ring: IoUring, task_run: TaskRun, config: &RingConfig) -> io::Result<Ring> {
        let mut bufs = BufRing::new(config.buffers.0, config.buffers.1, BGID)?;
        // SAFETY: `bufs` is this ring's field from here on and is unregistered in Drop
        // before it is dropped, once no receive can complete; if that cannot be done it is
        // leaked (BufRing's drop), never freed under the kernel. On the error return below
        // nothing was registered.
        unsafe { bufs.register(&ring.submitter())? };
        let setup = Setup { task_run, min_wait: ring.params().is_feature_min_timeout() };
        let core = Core {
            ring,
            setup,
            batch: config.batch.max(1),
            buf_len: config.buffers.1,
            slots: std::iter::repeat_with(Slot::default).take(config.tokens as usize).collect(),
            dirty: Vec::new(),
            orphans: Vec::new(),
            addrs: Vec::new(),
            backlog: Vec::new(),
            in_flight: 0,
            counters: Counters::default(),
        };
        Ok(Ring { bufs, core, cqes: Vec::new() })
    }

    /// Where operations are queued between turns.
    pub fn ops(&mut self) -> Ops<'_> {
        Ops(&mut self.core)
    }

    pub fn setup(&self) -> Setup {
        self.core.setup
    }

    pub fn counters(&self) -> Counters {
        self.core.counters
    }

    /// One loop turn: submits everything queued and waits, in one `io_uring_enter`, for a
    /// completion (at most `wait`; forever if None), or, with `min_wait` where the kernel has
    /// it ([`Setup::min_wait`]), for a batch of completions until `min_wait` has passed and
    /// then for the first one. Then hands each completion to `f`, with the ring's [`Ops`] to
    /// queue more (sent at the next turn), gives the receive buffers back, and returns how
    /// many completions `f` saw.
    ///
    /// The caller passes its next timer (or deadline) as `wait`, and `min_wait` only when
    /// nothing is due sooner: a batched wait adds up to `min_wait` of latency.
    pub fn turn(
        &mut self,
        wait: Option<Duration>,
        min_wait: Option<Duration>,
        mut f: impl FnMut(&mut Ops<'_>, Completion<'_>),
    ) -> io::Result<usize> {
        let ops = &mut self.core;
        ops.flush_backlog();
        ops.start_sends();
        let min_wait = min_wait.filter(|_| ops.setup.min_wait);
        let want = if min_wait.is_some() { ops.batch } else { 1 };
        let min_wait_usec =
            min_wait.map_or(0, |m| u32::try_from(m.as_micros()).unwrap_or(u32::MAX));
        let ts = wait.map(types::Timespec::from);
        let args = types::SubmitArgs::new().min_wait_usec(min_wait_usec);
        ops.counters.enters += 1;
        let entered = match &ts {
            Some(ts) => ops.ring.submitter().submit_with_args(want as usize, &args.timespec(ts)),
            None => ops.ring.submitter().submit_with_args(want as usize, &args),
        };
        match entered {
            Ok(_) => {}
            // The wait timed out, a signal came, or the kernel asks to reap before more:
            // whatever completions there are get read all the same.
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME | libc::EINTR | libc::EAGAIN | libc::EBUSY)
                ) => {}
            Err(e) => return Err(e),
        }
        let mut cqes = std::mem::take(&mut self.cqes);
        cqes.extend(ops.ring.completion());
        let mut seen = 0;
        for cqe in &cqes {
            seen += usize::from(ops.complete(cqe, &mut self.bufs, &mut f));
        }
        cqes.clear();
        self.cqes = cqes;
        self.bufs.publish();
        Ok(seen)
    }
}

impl Ops<'_> {
    /// Arms a multishot receive on `fd` for `token`: every read it makes is a
    /// [`Event::Received`], until [`Event::RecvEnded`]. Nothing if one is armed already.
    pub fn recv_multishot(&mut self, token: u32, fd: RawFd) {
        self.0.recv_multishot(token, fd);
    }

    /// Arms one receive of at most `max` bytes (at most a buffer) on `fd` for `token` (a
    /// paced reader's allowance, or a server that reads only what it has room for): one
    /// [`Event::Received`], or [`Event::RecvEnded`]; the caller arms the next. Nothing if a
    /// receive is armed already.
    pub fn recv_up_to(&mut self, token: u32, fd: RawFd, max: u32) {
        self.0.recv_up_to(token, fd, max);
    }

    /// Sends `bytes` on `fd` (copied: the caller's slice is free when this returns). Sent
    /// with the token's other bytes of this turn in one entry, after the send in flight if
    /// there is one; [`Event::Sent`] once all of it went out.
    pub fn send(&mut self, token: u32, fd: RawFd, bytes: &[u8]) {
        self.0.send_buffer(token, fd).extend_from_slice(bytes);
    }

    /// Sends `bytes` on `fd`, taking them (left empty): moved, not copied, when nothing of
    /// the token's waits to be sent; as [`Ops::send`] for the rest. After [`Event::Sent`],
    /// [`Ops::give_back`] returns the buffer's room.
    pub fn hand(&mut self, token: u32, fd: RawFd, bytes: &mut Vec<u8>) {
        let index = self.0.mark_dirty(token, fd);
        self.0.slots[index].send.give(bytes);
    }

    /// After [`Event::Sent`]: the token's sent buffer, emptied, into the caller's empty
    /// `into` (so that a connection and the ring share one buffer).
    pub fn give_back(&mut self, token: u32, into: &mut Vec<u8>) {
        if let Some(slot) = self.0.slots.get_mut(token as usize) {
            slot.send.give_back(into);
        }
    }

    /// Connects `fd` to `addr` ([`Event::Connected`]). `EALREADY` if the token has a
    /// connect in flight (close it first).
    pub fn connect(&mut self, token: u32, fd: RawFd, addr: &SocketAddr) -> io::Result<()> {
        self.0.connect(token, fd, addr)
    }

    /// Closes the token's connection: its operations in flight are cancelled, then `fd` is
    /// closed, both through the ring. The token is free for a new connection at once:
    /// nothing of the old one reaches the caller after this (its completions carry the old
    /// generation and are dropped); bytes not yet sent are dropped.
    pub fn close(&mut self, token: u32, fd: OwnedFd) {
        self.0.close(token, fd);
    }

    /// Wakes the ring's wait once `fd` is readable (one poll, not re-armed): the worker's
    /// epoll descriptor, whose only live member on the ring is the run's waker, makes
    /// `Control::stop` (Ctrl-C) end a turn's wait at once. Nothing reaches the callback.
    pub fn watch(&mut self, fd: RawFd) {
        let entry = opcode::PollAdd::new(types::Fd(fd), libc::POLLIN as u32)
            .build()
            .user_data(user_data(Op::Wake, 0, 0));
        self.0.push(&[entry]);
    }

    pub fn counters(&self) -> Counters {
        self.0.counters
    }

    /// Polls `fd` once for reading: an [`Event::Polled`] when data is there (at once if it
    /// is already), after which the caller reads it all and polls again. Once, not
    /// multishot: a multishot poll posts a completion at every datagram's arrival, however
    /// many the caller then reads in one call (the two measured alike for QUIC: BENCHMARKS
    /// row 35y). Nothing if one is armed already.
    pub fn poll_in(&mut self, token: u32, fd: RawFd) {
        self.0.poll(token, fd, POLL_IN);
    }

    /// Polls `fd` once for writing ([`Event::Polled`] when it is writable): for a caller
    /// whose own send found the socket full. Nothing if one is armed already.
    pub fn poll_out(&mut self, token: u32, fd: RawFd) {
        self.0.poll(token, fd, POLL_OUT);
    }

    /// The token's connection is gone and its caller closes its socket itself: its polls are
    /// cancelled (a poll holds the socket open in the kernel until then), and the token is
    /// free for a new connection at once, as after [`Ops::close`].
    pub fn forget(&mut self, token: u32) {
        self.0.forget(token);
    }
}

impl Core {
    fn recv_up_to(&mut self, token: u32, fd: RawFd, max: u32) {
        // No more than a buffer holds (a larger length is refused with ENOBUFS by some
        // kernels), and never 0 (which would mean "a whole buffer").
        let max = max.clamp(1, self.buf_len);
        let slot = self.slot(token);
        if slot.recv {
            return;
        }
        slot.recv = true;
        slot.fd = fd;
        slot.once = max;
        let generation = slot.generation;
        self.push(&[recv_once_entry(fd, max, generation, token)]);
    }

    fn recv_multishot(&mut self, token: u32, fd: RawFd) {
        let slot = self.slot(token);
        if slot.recv {
            return;
        }
        slot.recv = true;
        slot.fd = fd;
        let generation = slot.generation;
        self.push(&[recv_entry(fd, generation, token)]);
    }

    /// The token's send buffer, the token marked to send at the next turn.
    fn send_buffer(&mut self, token: u32, fd: RawFd) -> &mut Vec<u8> {
        let index = self.mark_dirty(token, fd);
        self.slots[index].send.buffer()
    }

    /// The token's slot index, marked to send on `fd` at the next turn.
    fn mark_dirty(&mut self, token: u32, fd: RawFd) -> usize {
        let index = self.slot_index(token);
        let slot = &mut self.slots[index];
        slot.fd = fd;
        if !slot.send.in_flight() && !slot.dirty {
            slot.dirty = true;
            self.dirty.push((token, slot.generation));
        }
        index
    }

    fn poll(&mut self, token: u32, fd: RawFd, which: u8) {
        let slot = self.slot(token);
        if slot.polls & which != 0 {
            return;
        }
        slot.polls |= which;
        slot.fd = fd;
        let generation = slot.generation;
        self.push(&[poll_entry(fd, which, generation, token)]);
    }

    fn forget(&mut self, token: u32) {
        let index = self.slot_index(token);
        let polls = self.slots[index].polls;
        let old = self.retire(index);
        for (which, op) in [(POLL_IN, Op::PollIn), (POLL_OUT, Op::PollOut)] {
            if polls & which != 0 {
                let cancel = opcode::AsyncCancel::new(user_data(op, old, token))
                    .build()
                    .user_data(user_data(Op::Cancel, old, token));
                self.push(&[cancel]);
            }
        }
    }

    /// A poll's completion: the caller told what is ready (each poll is once: the caller
    /// polls again).
    fn polled(
        &mut self,
        (op, token): (Op, u32),
        res: i32,
        f: &mut impl FnMut(&mut Ops<'_>, Completion<'_>),
    ) -> bool {
        let which = if op == Op::PollIn { POLL_IN } else { POLL_OUT };
        self.slots[token as usize].polls &= !which;
        // ECANCELED: cancelled by the caller (its token was closed: stale, dropped before).
        let mask = match u32::try_from(res) {
            Ok(mask) => mask,
            Err(_) if res == -libc::ECANCELED => return false,
            Err(_) => libc::POLLERR as u32,
        };
        f(&mut Ops(self), Completion { token, event: Event::Polled(mask) });
        true
    }

    fn connect(&mut self, token: u32, fd: RawFd, addr: &SocketAddr) -> io::Result<()> {
        let index = self.slot_index(token);
        if self.slots[index].connecting {
            return Err(io::Error::from_raw_os_error(libc::EALREADY));
        }
        let addr = SockAddr::from(*addr);
        let kept = match self.addrs.iter().find(|a| ***a == addr) {
            Some(kept) => kept,
            None => {
                self.addrs.push(Box::new(addr));
                &self.addrs[self.addrs.len() - 1]
            }
        };
        let slot = &mut self.slots[index];
        let entry = opcode::Connect::new(types::Fd(fd), kept.as_ptr(), kept.len())
            .build()
            .user_data(user_data(Op::Connect, slot.generation, token));
        slot.connecting = true;
        self.push(&[entry]);
        Ok(())
    }

    /// Retires the token's generation, then cancels what is in flight on `fd` and closes it.
    fn close(&mut self, token: u32, fd: OwnedFd) {
        let index = self.slot_index(token);
        let old = self.retire(index);
        let fd = fd.into_raw_fd();
        // Hard-linked: the close runs after the cancel whatever it found (ENOENT when nothing
        // was in flight), so no operation keeps the socket open past the close.
        let cancel = opcode::AsyncCancel2::new(types::CancelBuilder::fd(types::Fd(fd)).all())
            .build()
            .flags(squeue::Flags::IO_HARDLINK)
            .user_data(user_data(Op::Cancel, old, token));
        let close =
            opcode::Close::new(types::Fd(fd)).build().user_data(user_data(Op::Close, old, token));
        self.push(&[cancel, close]);
    }

    /// One completion: its state updated, `f` called if it is the caller's; true if it was.
    fn complete(
        &mut self,
        cqe: &cqueue::Entry,
        bufs: &mut BufRing,
        f: &mut impl FnMut(&mut Ops<'_>, Completion<'_>),
    ) -> bool {
        self.counters.completions += 1;
        let (res, flags) = (cqe.result(), cqe.flags());
        let more = cqueue::more(flags);
        if !more {
            self.in_flight = self.in_flight.saturating_sub(1);
        }
        let Some((op, generation, token)) = decode(cqe.user_data()) else {
            return false;
        };
        let current = self.slots.get(token as usize).is_some_and(|s| s.generation == generation);
        match op {
            Op::Cancel | Op::Wake => false,
            Op::Close => {
                self.counters.close_errors += u64::from(res < 0);
                false
            }
            _ if !current => {
                self.counters.stale += 1;
                if let Some(bid) = cqueue::buffer_select(flags) {
                    bufs.give_back(bid);
                }
                if !more {
                    let ud = cqe.user_data();
                    if let Some(i) = self.orphans.iter().position(|(u, _)| *u == ud) {
                        self.orphans.swap_remove(i);
                    }
                }
                false
            }
            Op::Recv => self.received(token, generation, (res, flags), bufs, f),
            Op::Send => self.sent(token, generation, res, f),
            Op::PollIn | Op::PollOut => self.polled((op, token), res, f),
            Op::Connect => {
                let index = token as usize;
                self.slots[index].connecting = false;
                let result = if res < 0 { Err(errno(res)) } else { Ok(()) };
                f(&mut Ops(self), Completion { token, event: Event::Connected(result) });
                true
            }
        }
    }

    fn received(
        &mut self,
        token: u32,
        generation: u32,
        (res, flags): (i32, u32),
        bufs: &mut BufRing,
        f: &mut impl FnMut(&mut Ops<'_>, Completion<'_>),
    ) -> bool {
        let more = cqueue::more(flags);
        let mut seen = false;
        // One read of a paced reader that brought bytes is over: disarmed before the callback,
        // which arms the next with the reader's next allowance; nothing more to do after it.
        let mut read_once = false;
        if res > 0 && !more {
            if let Some(slot) = self.slots.get_mut(token as usize) {
                if slot.generation == generation && std::mem::take(&mut slot.once) > 0 {
                    slot.recv = false;
                    read_once = true;
                }
            }
        }
        if let (Ok(len @ 1..), Some(bid)) = (usize::try_from(res), cqueue::buffer_select(flags)) {
            if let Some(data) = bufs.buffer(bid, len) {
                f(&mut Ops(self), Completion { token, event: Event::Received(data) });
                seen = true;
            }
            bufs.give_back(bid);
        }
        let index = token as usize;
        // The callback may have closed the token: then this receive is the old connection's.
        if more || read_once || self.slots[index].generation != generation {
            return seen;
        }
        // A paced reader's read that brought nothing (one that did was disarmed above).
        let Slot { once: max, recv, fd, .. } = self.slots[index];
        if max > 0 && recv {
            if res == -libc::ENOBUFS {
                // No buffer free: the same read again, next turn.
                self.counters.rearms += 1;
                self.counters.enobufs_rearms += 1;
                self.push(&[recv_once_entry(fd, max, generation, token)]);
                return seen;
            }
            // The peer's close or an error: ends it as a multishot receive's end does, below.
            self.slots[index].once = 0;
        }
        match (res, recv) {
            // Ended for want of buffers (the bytes wait in the socket), or after data for a
            // reason of the kernel's own (a full completion queue): armed again, to be
            // submitted next turn, once this turn's buffers are back.
            (r, true) if r > 0 || r == -libc::ENOBUFS => {
                self.counters.rearms += 1;
                self.counters.enobufs_rearms += u64::from(r == -libc::ENOBUFS);
                self.push(&[recv_entry(fd, generation, token)]);
                seen
            }
            // Bytes of a receive the caller never armed: none can come (no receive is in
            // flight without `recv`), and none is taken for an end.
            (1.., false) => seen,
            (r, _) => {
                self.slots[index].recv = false;
                let end = if r < 0 { Some(errno(r)) } else { None };
                f(&mut Ops(self), Completion { token, event: Event::RecvEnded(end) });
                true
            }
        }
    }

    fn sent(
        &mut self,
        token: u32,
        generation: u32,
        res: i32,
        f: &mut impl FnMut(&mut Ops<'_>, Completion<'_>),
    ) -> bool {
        let index = token as usize;
        let slot = &mut self.slots[index];
        let step = match usize::try_from(res) {
            Ok(0) => Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => Ok(slot.send.sent(n)),
            Err(_) => Err(errno(res)),
        };
        match step {
            Ok(Step::More { chunk, short }) => {
                self.counters.short_sends += u64::from(short);
                let fd = slot.fd;
                self.push(&[send_entry(fd, chunk, generation, token)]);
                false
            }
            Ok(Step::Done) => {
                f(&mut Ops(self), Completion { token, event: Event::Sent });
                true
            }
            Err(e) => {
                slot.send.failed();
                f(&mut Ops(self), Completion { token, event: Event::SendFailed(e) });
                true
            }
        }
    }

    /// A send entry for each token given bytes since its last send.
    fn start_sends(&mut self) {
        let dirty = std::mem::take(&mut self.dirty);
        for &(token, generation) in &dirty {
            let Some(slot) = self.slots.get_mut(token as usize) else { continue };
            if slot.generation != generation || !slot.dirty {
                continue;
            }
            slot.dirty = false;
            if let Some(chunk) = slot.send.start() {
                let fd = slot.fd;
                self.push(&[send_entry(fd, chunk, generation, token)]);
            }
        }
        self.dirty = dirty;
        self.dirty.clear();
    }

    /// Queues `entries` (kept adjacent: a link holds), submitting early if the submission
    /// queue is full. Never drops one: if even that fails they wait in the backlog.
    fn push(&mut self, entries: &[squeue::Entry]) {
        self.in_flight += entries.len();
        if self.backlog.is_empty()
            && (self.sq_push(entries) || self.submit_early() && self.sq_push(entries))
        {
            return;
        }
        self.backlog.extend_from_slice(entries);
    }

    /// Moves the backlog into the submission queue, submitting early as it fills.
    fn flush_backlog(&mut self) {
        let backlog = std::mem::take(&mut self.backlog);
        let mut rest = &backlog[..];
        while !rest.is_empty() {
            let room = {
                let sq = self.ring.submission();
                sq.capacity() - sq.len()
            };
            let n = room.min(rest.len());
            if n > 0 && self.sq_push(&rest[..n]) {
                rest = &rest[n..];
            } else if !self.submit_early() {
                break;
            }
        }
        self.backlog.extend_from_slice(rest);
    }

    fn sq_push(&mut self, entries: &[squeue::Entry]) -> bool {
        // SAFETY: every entry this ring makes names only memory the ring owns and keeps
        // unmoved until the entry's last completion: a send names its token's `SendQueue`
        // buffer (not written while in flight, moved into `orphans` on close), a connect its
        // boxed address in `addrs` (kept for the ring's life), a receive (multishot or one read) the
        // registered buffer group, never an address of ours;
        // cancel, close and a watch's poll name no memory. Drop frees none of it before every entry ended.
        unsafe { self.ring.submission().push_multiple(entries).is_ok() }
    }

    /// Submits what is queued without waiting; false if the kernel refused.
    fn submit_early(&mut self) -> bool {
        self.counters.enters += 1;
        self.counters.early_submits += 1;
        self.ring.submit().is_ok()
    }

    /// Starts the token's next generation: the current one's completions become stale, and
    /// the memory its operations in flight name is kept in `orphans` until they end.
    /// Returns the old generation.
    fn retire(&mut self, index: usize) -> u32 {
        let slot = &mut self.slots[index];
        let old = slot.generation;
        slot.generation = (old + 1) & GEN_MASK;
        slot.recv = false;
        slot.once = 0;
        slot.dirty = false;
        // A connect in flight names one of `addrs`, which outlive every operation.
        slot.connecting = false;
        slot.polls = 0;
        // Tokens are u32 (the slots grow only to a u32 token), so the cast is exact.
        let token = index as u32;
        if let Some(buf) = slot.send.close() {
            self.orphans.push((user_data(Op::Send, old, token), Orphan::Send(buf)));
        }
        old
    }

    fn slot_index(&mut self, token: u32) -> usize {
        let index = token as usize;
        if index >= self.slots.len() {
            self.slots.resize_with(index + 1, Slot::default);
        }
        index
    }

    fn slot(&mut self, token: u32) -> &mut Slot {
        let index = self.slot_index(token);
        &mut self.slots[index]
    }
}

impl Drop for Ring {
    /// Cancels every operation and waits (at most five seconds) for all of them to end, then
    /// unregisters the receive buffers; the ring's memory is freed only then. If they do not
    /// all end, the memory they name is leaked instead of freed under the kernel.
    fn drop(&mut self) {
        if self.wind_down() && self.bufs.unregister(&self.core.ring.submitter()).is_ok() {
            return;
        }
        std::mem::forget(std::mem::take(&mut self.core.slots));
        std::mem::forget(std::mem::take(&mut self.core.orphans));
        std::mem::forget(std::mem::take(&mut self.core.addrs));
    }
}

impl Ring {
    /// Cancels every operation and turns until all of them ended (true) or five seconds
    /// passed (false).
    fn wind_down(&mut self) -> bool {
        // Every token retired first: what completes from now on is stale, so nothing is
        // re-armed or continued, and each buffer is freed at its operation's end.
        let core = &mut self.core;
        for index in 0..core.slots.len() {
            core.retire(index);
        }
        core.dirty.clear();
        let any = opcode::AsyncCancel2::new(types::CancelBuilder::any())
            .build()
            .user_data(user_data(Op::Cancel, 0, 0));
        core.push(&[any]);
        let mut turns = 0;
        while self.core.in_flight > 0 && turns < DROP_TURNS {
            turns += 1;
            if self.turn(Some(Duration::from_millis(100)), None, |_, _| {}).is_err() {
                break;
            }
        }
        self.core.in_flight == 0
    }
}

/// The kernel's negative result as an error.
fn errno(res: i32) -> io::Error {
    io::Error::from_raw_os_error(res.saturating_neg())
}

fn poll_entry(fd: RawFd, which: u8, generation: u32, token: u32) -> squeue::Entry {
    let (events, op) =
        if which == POLL_IN { (libc::POLLIN, Op::PollIn) } else { (libc::POLLOUT, Op::PollOut) };
    opcode::PollAdd::new(types::Fd(fd), events as u32)
        .build()
        .user_data(user_data(op, generation, token))
}

fn recv_entry(fd: RawFd, generation: u32, token: u32) -> squeue::Entry {
    opcode::RecvMulti::new(types::Fd(fd), BGID).build().user_data(user_data(
        Op::Recv,
        generation,
        token,
    ))
}

fn recv_once_entry(fd: RawFd, max: u32, generation: u32, token: u32) -> squeue::Entry {
    // Into one of the ring's buffers (buffer select: no address of ours), at most `max`.
    opcode::Recv::new(types::Fd(fd), std::ptr::null_mut(), max)
        .buf_group(BGID)
        .build()
        .flags(squeue::Flags::BUFFER_SELECT)
        .user_data(user_data(Op::Recv, generation, token))
}

fn send_entry(fd: RawFd, chunk: (*const u8, u32), generation: u32, token: u32) -> squeue::Entry {
    // MSG_NOSIGNAL: a peer gone is an EPIPE completion, not a SIGPIPE that ends the process.
    opcode::Send::new(types::Fd(fd), chunk.0, chunk.1)
        .flags(libc::MSG_NOSIGNAL)
        .build()
        .user_data(user_data(Op::Send, generation, token))
}

/// Makes a ring with DEFER_TASKRUN and, if the kernel refuses it (`EINVAL`: older than 6.1),
/// with COOP_TASKRUN; any other refusal is the caller's to report.
fn build_with<T>(mut make: impl FnMut(TaskRun) -> io::Result<T>) -> io::Result<(T, TaskRun)> {
    match make(TaskRun::Deferred) {
        Ok(ring) => Ok((ring, TaskRun::Deferred)),
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            make(TaskRun::Cooperative).map(|ring| (ring, TaskRun::Cooperative))
        }
        Err(e) => Err(e),
    }
}

fn build(config: &RingConfig, task_run: TaskRun) -> io::Result<IoUring> {
    let mut builder = IoUring::builder();
    builder
        .setup_single_issuer()
        .setup_submit_all()
        .setup_cqsize(config.cq_entries.max(config.entries));
    match task_run {
        TaskRun::Deferred => builder.setup_defer_taskrun(),
        TaskRun::Cooperative => builder.setup_coop_taskrun(),
    };
    builder.build(config.entries)
}

#[cfg(test)]
mod tests;

/*
 * floor-uring: the io_uring counterpart of bench/floor.c (issue 35), to learn what io_uring can
 * give a one-thread HTTP/1.1 client on this kernel, and which of its features matter.
 *
 * Same command line, output line and HTTP handling as floor.c: one thread, N connections, one
 * request in flight per connection, a request built once, responses framed by Content-Length
 * (only the header block is scanned), any protocol or socket error fatal (exit 1), 10 s without a
 * completed request fatal (exit 2), -l for p50/p90/p99. The output line starts "floor: " so that
 * bench/lib.sh parses it as floor's.
 *
 * The I/O is one ring. Per keep-alive request the steady state is one SEND SQE and one receive
 * completion; per loop turn, one io_uring_enter that submits the turn's SQEs and waits for
 * completions (io_uring_submit_and_wait_timeout). The design, each part switchable with -o so
 * that what each buys can be measured (bench/results/2026-12-03-uring-floor/):
 *
 *   multi      multishot receive into a provided buffer ring (default), re-armed on a CQE
 *              without IORING_CQE_F_MORE (ENOBUFS included); buffers go back to the ring after
 *              parsing, published once per turn
 *   once       one-shot receive (buffer selected from the same ring), re-armed after each CQE
 *   bundle     multishot receive with IORING_RECVSEND_BUNDLE: one CQE for several buffers
 *   inc        incrementally consumed buffers (IOU_PBUF_RING_INC): receives pack into big buffers
 *   buf=N      buffer size in bytes (default 8192); bufs=N buffer count (power of 2; default 64;
 *              bufs=0: the next power of 2 >= 2 x connections). A small ring stays in the cache:
 *              the ring is FIFO, so each receive copies into its least recently used buffer
 *   fixed      registered files (IOSQE_FIXED_FILE; default on; nofixed)
 *   defer      IORING_SETUP_SINGLE_ISSUER | DEFER_TASKRUN (default on; nodefer turns it off)
 *   coop       IORING_SETUP_COOP_TASKRUN (with nodefer); taskrun: IORING_SETUP_TASKRUN_FLAG
 *   submitall  IORING_SETUP_SUBMIT_ALL (default on; nosubmitall)
 *   regring    io_uring_register_ring_fd (the enter skips the ring's fd lookup)
 *   skipsend   sends with MSG_WAITALL and IOSQE_CQE_SKIP_SUCCESS: no CQE for a whole send
 *              (a short or failed send still posts one, and is fatal or finished as usual)
 *   wait=N     wait for N completions per enter (default 32; a turn's sends count too); minwait=US:
 *              return after US microseconds with whatever there is (IORING_FEAT_MIN_TIMEOUT;
 *              default 100, minwait=0: off). Batched wake-ups are what beats the floor (+20-28 %),
 *              at the price of up to US µs of added latency: use wait=1,minwait=0 with -l
 *   ringconnect  connect through the ring at start (IORING_OP_CONNECT linked to the first SEND);
 *              default: a plain connect() and poll() per connection before the loop. -k 0
 *              always connects through the ring.
 *
 * Start-up counts in the measured time as floor.c's does (both connect 100 sockets before their
 * first response; it is well under 1 % of a run).
 *
 * usage: floor-uring -c conns -n requests [-k 0|1] [-d max_seconds] [-l] [-v] [-o opt,opt...]
 *        host port path
 * build: gcc -O2 -Wall -Wextra -I$URING/include -o floor-uring floor_uring.c $URING/lib/liburing.a
 *        (liburing 2.15, bench/lib.sh builds it from the shared vendored copy)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <liburing.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FLOOR_NAME "floor-uring"
#include "floor_common.h"

#define HDR_CAP (16 * 1024)
#define STALL_NS (10ULL * 1000000000ULL)
#define BGID 7

enum state { ST_FREE, ST_CONNECTING, ST_HDR, ST_BODY };
enum op { OP_SEND = 1, OP_RECV = 2, OP_CONNECT = 3 };
enum rmode { R_MULTI, R_ONCE, R_BUNDLE };

struct conn {
    int fd;
    enum state st;
    uint32_t gen;        /* bumped whenever the slot gets a new socket */
    size_t woff;         /* bytes of the current request's send confirmed so far */
    uint64_t remaining;  /* body bytes still expected */
    size_t hlen;         /* bytes held in hdr (only when headers span receives) */
    char *hdr;           /* lazily allocated, HDR_CAP bytes */
    uint64_t start_ns;   /* -l: when the current request started */
    uint8_t send_busy;   /* a SEND is in flight (its CQE not seen yet) */
    uint8_t start_held;  /* the response ended while the send was in flight: start on its CQE */
    uint8_t recv_armed;  /* a receive is armed (for multishot: until a CQE without F_MORE) */
};

/* options (-o) */
static enum rmode rmode = R_MULTI;
/* Defaults: the best measured on 2026-12-03 (bench/results/2026-12-03-uring-floor/summary.md). */
static int o_fixed = 1, o_defer = 1, o_coop, o_taskrun, o_submitall = 1, o_regring, o_skipsend;
static int o_inc, o_ringconnect;
static unsigned o_buf = 8192, o_bufs = 64, o_wait = 32, o_minwait = 100;

static struct io_uring ring;
static struct io_uring_buf_ring *br;
static char *bufmem;
static unsigned buf_mask;
static uint16_t *ring_bid;   /* bid put at each ring position (bundle: which buffers follow) */
static uint32_t *inc_off;    /* inc: bytes of each buffer already consumed by the kernel */
static uint16_t cons;        /* bundle: ring position of the next buffer the kernel hands out */
static unsigned nadd;        /* buffers added since the last publish of the tail */

static struct conn *conns;
static size_t conns_n;
static struct sockaddr_in addr;
static char *req;
static size_t req_len;
static int keepalive = 1;
static uint64_t n_target, n_started, n_done, n_non2xx, n_reconnects;
static uint64_t n_enter, n_cqe, n_enobufs, n_rearm, n_short_send, n_early_submit, n_bufs_used;
static uint64_t *lat_ns;

static uint64_t ud(enum op op, const struct conn *c)
{
    return ((uint64_t)op << 56) | ((uint64_t)(c->gen & 0xffffff) << 32) | (uint64_t)(c - conns);
}

/* An SQE; when the SQ is full (more connections than entries), submit what is there first. */
static struct io_uring_sqe *sqe_get(void)
{
    struct io_uring_sqe *s = io_uring_get_sqe(&ring);
    if (!s) {
        n_early_submit++;
        int r = io_uring_submit(&ring);
        if (r < 0)
            die("io_uring_submit: %s", strerror(-r));
        s = io_uring_get_sqe(&ring);
        if (!s)
            die("no SQE free after a submit");
    }
    return s;
}

/* The fd an SQE names for c: its registered slot with fixed files, else the fd. */
static void sqe_fd(struct io_uring_sqe *s, struct conn *c)
{
    if (o_fixed) {
        s->fd = (int)(c - conns);
        s->flags |= IOSQE_FIXED_FILE;
    }
}

static void push_send(struct conn *c)
{
    struct io_uring_sqe *s = sqe_get();
    io_uring_prep_send(s, c->fd, req + c->woff, req_len - c->woff,
                       MSG_NOSIGNAL | (o_skipsend ? MSG_WAITALL : 0));
    sqe_fd(s, c);
    if (o_skipsend)
        s->flags |= IOSQE_CQE_SKIP_SUCCESS;
    io_uring_sqe_set_data64(s, ud(OP_SEND, c));
    c->send_busy = !o_skipsend;
}

static void arm_recv(struct conn *c)
{
    struct io_uring_sqe *s = sqe_get();
    if (rmode == R_ONCE)
        io_uring_prep_recv(s, c->fd, NULL, 0, 0);
    else
        io_uring_prep_recv_multishot(s, c->fd, NULL, 0, 0);
    if (rmode == R_BUNDLE)
        s->ioprio |= IORING_RECVSEND_BUNDLE;
    sqe_fd(s, c);
    s->flags |= IOSQE_BUFFER_SELECT;
    s->buf_group = BGID;
    io_uring_sqe_set_data64(s, ud(OP_RECV, c));
    c->recv_armed = 1;
}

static void return_buf(uint16_t bid)
{
    io_uring_buf_ring_add(br, bufmem + (size_t)bid * o_buf, o_buf, bid, (int)buf_mask, (int)nadd);
    ring_bid[(uint16_t)(br->tail + nadd) & buf_mask] = bid;
    nadd++;
}

static void start_request(struct conn *c)
{
    if (lat_ns)
        c->start_ns = now_ns();
    n_started++;
    c->woff = 0;
    c->st = ST_HDR;
    c->hlen = 0;
    push_send(c);
    if (rmode == R_ONCE && !c->recv_armed)
        arm_recv(c);
}

static void set_fixed(struct conn *c, int fd)
{
    if (!o_fixed)
        return;
    int r = io_uring_register_files_update(&ring, (unsigned)(c - conns), &fd, 1);
    if (r != 1)
        die("io_uring_register_files_update: %s", strerror(r < 0 ? -r : EIO));
}

static int new_socket(void)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket: %s", strerror(errno));
    if (keepalive) {
        int one = 1;
        if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
            die("setsockopt: %s", strerror(errno));
    }
    return fd;
}

/* A new socket for slot c and its first request. Through the ring: CONNECT linked to the SEND,
 * the receive armed on the CONNECT's CQE. Else connect() and poll() here (start-up only). */
static void open_conn(struct conn *c, int through_ring)
{
    if (lat_ns)
        c->start_ns = now_ns();
    int fd = new_socket();
    c->fd = fd;
    c->gen++;
    c->woff = 0;
    c->hlen = 0;
    c->recv_armed = 0;
    c->send_busy = 0;
    c->start_held = 0;
    set_fixed(c, fd);
    n_started++;
    if (through_ring) {
        struct io_uring_sqe *s = sqe_get();
        io_uring_prep_connect(s, fd, (struct sockaddr *)&addr, sizeof addr);
        sqe_fd(s, c);
        s->flags |= IOSQE_IO_LINK;
        io_uring_sqe_set_data64(s, ud(OP_CONNECT, c));
        c->st = ST_CONNECTING;
        push_send(c);
        return;
    }
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) {
        if (errno != EINPROGRESS)
            die("connect: %s", strerror(errno));
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int r = poll(&p, 1, 10000);
        if (r < 0)
            die("poll: %s", strerror(errno));
        if (r == 0)
            die("connect: no answer in 10 s");
        int err = 0;
        socklen_t len = sizeof err;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
            die("getsockopt: %s", strerror(errno));
        if (err)
            die("connect: %s", strerror(err));
    }
    c->st = ST_HDR;
    push_send(c);
    arm_recv(c);
}

static void close_conn(struct conn *c)
{
    /* An armed multishot receive holds its own reference to the socket: the socket really
     * closes when that receive ends (the server's FIN, or the ring's exit). Its late CQEs
     * carry the old generation and are dropped. */
    close(c->fd);
    c->fd = -1;
    c->st = ST_FREE;
    c->hlen = 0;
}

/* The header block p[0..n) (floor_common.h's strict framing) sets the body length. */
static void parse_headers(struct conn *c, const char *p, size_t n)
{
    c->remaining = parse_head(p, n, &n_non2xx);
}

static void response_done(struct conn *c)
{
    if (lat_ns && n_done < n_target)
        lat_ns[n_done] = now_ns() - c->start_ns;
    n_done++;
    if (keepalive) {
        if (n_started >= n_target)
            close_conn(c);
        else if (c->send_busy)
            c->start_held = 1; /* the server answered before our send's CQE: wait for it */
        else
            start_request(c);
    } else {
        close_conn(c);
        if (n_started < n_target)
            open_conn(c, 1);
    }
}

/* Feed received bytes to c (as floor.c's on_data). Returns 0 once c has no use for more bytes
 * (closed or reopened): the rest of this completion is the old socket's and must be empty. */
static int on_data(struct conn *c, const char *p, size_t n)
{
    uint32_t gen = c->gen;
    while (n > 0) {
        if (c->st == ST_FREE || c->gen != gen)
            die("%zu bytes after the response on a connection that was done", n);
        if (c->st == ST_HDR) {
            size_t e;
            if (c->hlen == 0 && (e = find_hdr_end(p, n, 0)) != 0) {
                parse_headers(c, p, e);
                p += e;
                n -= e;
            } else {
                if (!c->hdr && !(c->hdr = malloc(HDR_CAP)))
                    die("out of memory");
                size_t old = c->hlen;
                size_t take = n < HDR_CAP - old ? n : HDR_CAP - old;
                memcpy(c->hdr + old, p, take);
                c->hlen = old + take;
                e = find_hdr_end(c->hdr, c->hlen, old >= 3 ? old - 3 : 0);
                if (!e) {
                    if (c->hlen == HDR_CAP)
                        die("response header block over %d bytes", HDR_CAP);
                    return 1;
                }
                parse_headers(c, c->hdr, e);
                p += e - old;
                n -= e - old;
                c->hlen = 0;
            }
            c->st = ST_BODY;
        }
        if (n > c->remaining)
            die("more bytes than Content-Length (%zu > %llu)", n,
                (unsigned long long)c->remaining);
        c->remaining -= n;
        n = 0;
        if (c->remaining == 0) {
            response_done(c);
            return c->st != ST_FREE && c->gen == gen;
        }
    }
    return 1;
}

/* The server closed (res 0) or reset the connection. As floor.c: before any byte of a response
 * on a keep-alive connection, reconnect and send the request again; otherwise fatal. */
static void on_eof(struct conn *c, int res)
{
    if (c->st == ST_HDR && c->hlen == 0 && keepalive) {
        n_reconnects++;
        close_conn(c);
        n_started--;
        open_conn(c, 1);
        return;
    }
    die("connection %s by the server in the middle of a response", res == 0 ? "closed" : "reset");
}

static void on_recv(struct conn *c, int live, int res, uint32_t flags)
{
    int more = (flags & IORING_CQE_F_MORE) != 0;
    uint32_t gen = c->gen;
    if (live && !more)
        c->recv_armed = 0;
    if (res > 0) {
        if (!(flags & IORING_CQE_F_BUFFER))
            die("receive completion without a buffer");
        uint16_t bid = (uint16_t)(flags >> IORING_CQE_BUFFER_SHIFT);
        if (rmode == R_BUNDLE) {
            /* the CQE's buffers are the ring's next ones from bid on, each full but the last */
            if (ring_bid[cons & buf_mask] != bid)
                die("bundle: buffer %u where the ring holds %u", bid, ring_bid[cons & buf_mask]);
            size_t left = (size_t)res;
            int use = live;
            while (left > 0) {
                uint16_t b = ring_bid[cons & buf_mask];
                size_t k = left < o_buf ? left : o_buf;
                if (use)
                    use = on_data(c, bufmem + (size_t)b * o_buf, k);
                else if (live)
                    die("%zu bytes after the response on a connection that was done", left);
                cons++;
                n_bufs_used++;
                return_buf(b);
                left -= k;
            }
        } else if (o_inc) {
            char *p = bufmem + (size_t)bid * o_buf + inc_off[bid];
            if (live)
                on_data(c, p, (size_t)res);
            n_bufs_used++;
            if (flags & IORING_CQE_F_BUF_MORE) {
                inc_off[bid] += (uint32_t)res;
            } else {
                inc_off[bid] = 0;
                return_buf(bid);
            }
        } else {
            if (live)
                on_data(c, bufmem + (size_t)bid * o_buf, (size_t)res);
            n_bufs_used++;
            return_buf(bid);
        }
        /* still the same socket, still open, and its receive ended: arm it again */
        if (live && c->gen == gen && c->st != ST_FREE && !c->recv_armed) {
            n_rearm += rmode != R_ONCE;
            arm_recv(c);
        }
        return;
    }
    if (!live)
        return;
    if (res == -ENOBUFS) {
        /* the ring ran dry: the data waits in the socket; re-arm after this turn's returns */
        n_enobufs++;
        if (!more)
            arm_recv(c);
        return;
    }
    if (res == 0 || res == -ECONNRESET) {
        if (more)
            die("end of stream with IORING_CQE_F_MORE");
        on_eof(c, res);
        return;
    }
    die("recv: %s", strerror(-res));
}

static void on_cqe(const struct io_uring_cqe *cqe)
{
    uint64_t u = io_uring_cqe_get_data64(cqe);
    enum op op = (enum op)(u >> 56);
    uint32_t gen = (uint32_t)(u >> 32) & 0xffffff, idx = (uint32_t)u;
    if (idx >= conns_n)
        die("completion for no connection (%llx)", (unsigned long long)u);
    struct conn *c = &conns[idx];
    int live = c->st != ST_FREE && (c->gen & 0xffffff) == gen;
    switch (op) {
    case OP_RECV:
        on_recv(c, live, cqe->res, cqe->flags);
        break;
    case OP_CONNECT:
        if (!live)
            return;
        if (cqe->res < 0)
            die("connect: %s", strerror(-cqe->res));
        c->st = ST_HDR;
        arm_recv(c);
        break;
    case OP_SEND:
        if (!live)
            return;
        if (cqe->res < 0)
            die("send: %s", strerror(-cqe->res));
        c->send_busy = 0;
        c->woff += (size_t)cqe->res;
        if (c->woff < req_len) {
            n_short_send++;
            push_send(c);
        } else if (c->start_held) {
            c->start_held = 0;
            start_request(c);
        }
        break;
    default:
        die("completion with unknown tag %llx", (unsigned long long)u);
    }
}

/* Index of the nearest-rank quantile q among the n_done sorted latencies. */
static size_t rank(double q)
{
    return rank_of(q, n_done);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: floor-uring -c conns -n requests [-k 0|1] [-d max_seconds] [-l] [-v] "
            "[-o opt,...] host port path\n"
            "  host must be 127.0.0.1 (or localhost); -k 0 opens a new connection per request\n"
            "  opts: multi|once|bundle inc buf=N bufs=N fixed|nofixed defer|nodefer coop taskrun\n"
            "        submitall|nosubmitall regring skipsend wait=N minwait=US ringconnect\n");
    exit(64);
}

static void parse_opts(char *s)
{
    for (char *t = strtok(s, ","); t; t = strtok(NULL, ",")) {
        if (!strcmp(t, "multi")) rmode = R_MULTI;
        else if (!strcmp(t, "once")) rmode = R_ONCE;
        else if (!strcmp(t, "bundle")) rmode = R_BUNDLE;
        else if (!strcmp(t, "inc")) o_inc = 1;
        else if (!strcmp(t, "fixed")) o_fixed = 1;
        else if (!strcmp(t, "nofixed")) o_fixed = 0;
        else if (!strcmp(t, "defer")) o_defer = 1;
        else if (!strcmp(t, "nodefer")) o_defer = 0;
        else if (!strcmp(t, "coop")) o_coop = 1;
        else if (!strcmp(t, "taskrun")) o_taskrun = 1;
        else if (!strcmp(t, "submitall")) o_submitall = 1;
        else if (!strcmp(t, "nosubmitall")) o_submitall = 0;
        else if (!strcmp(t, "regring")) o_regring = 1;
        else if (!strcmp(t, "skipsend")) o_skipsend = 1;
        else if (!strcmp(t, "ringconnect")) o_ringconnect = 1;
        else if (!strncmp(t, "buf=", 4)) o_buf = (unsigned)parse_num(t + 4, "buf=");
        else if (!strncmp(t, "bufs=", 5)) o_bufs = (unsigned)parse_num(t + 5, "bufs=");
        else if (!strncmp(t, "wait=", 5)) o_wait = (unsigned)parse_num(t + 5, "wait=");
        else if (!strncmp(t, "minwait=", 8)) o_minwait = (unsigned)parse_num(t + 8, "minwait=");
        else die("unknown -o option %s", t);
    }
    if (o_buf < 512 || o_buf > (1u << 20))
        die("buf= must be 512 .. 1 MiB");
    if (o_bufs && (o_bufs & (o_bufs - 1) || o_bufs > 32768))
        die("bufs= must be a power of 2, at most 32768");
    if (o_inc && rmode == R_BUNDLE)
        die("inc and bundle together are not supported here");
    if (o_wait < 1)
        die("wait= must be at least 1");
}

static void setup_ring(void)
{
    unsigned entries = 64;
    while (entries < 2 * conns_n + 16 && entries < 32768)
        entries *= 2;
    struct io_uring_params p;
    memset(&p, 0, sizeof p);
    if (o_defer)
        p.flags |= IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
    if (o_coop)
        p.flags |= IORING_SETUP_COOP_TASKRUN;
    if (o_taskrun)
        p.flags |= IORING_SETUP_TASKRUN_FLAG;
    if (o_submitall)
        p.flags |= IORING_SETUP_SUBMIT_ALL;
    p.flags |= IORING_SETUP_CQSIZE;
    p.cq_entries = entries * 4;
    int r = io_uring_queue_init_params(entries, &ring, &p);
    if (r < 0)
        die("io_uring_queue_init_params (flags %#x): %s", p.flags, strerror(-r));
    if (rmode == R_BUNDLE && !(p.features & IORING_FEAT_RECVSEND_BUNDLE))
        die("this kernel has no receive bundles (IORING_FEAT_RECVSEND_BUNDLE)");
    if (o_minwait && !(p.features & IORING_FEAT_MIN_TIMEOUT)) {
        fprintf(stderr, "floor-uring: this kernel has no min-wait (IORING_FEAT_MIN_TIMEOUT): "
                        "running with wait=1,minwait=0\n");
        o_minwait = 0;
        o_wait = 1;
    }
    if (!(p.features & IORING_FEAT_EXT_ARG))
        die("this kernel has no IORING_FEAT_EXT_ARG (a wait with a timeout in one enter)");
    if (o_regring && (r = io_uring_register_ring_fd(&ring)) != 1)
        die("io_uring_register_ring_fd: %s", strerror(r < 0 ? -r : EIO));
    if (o_fixed && (r = io_uring_register_files_sparse(&ring, (unsigned)conns_n)) < 0)
        die("io_uring_register_files_sparse: %s", strerror(-r));

    unsigned nb = o_bufs;
    if (!nb) {
        nb = 64;
        while (nb < 2 * conns_n && nb < 32768)
            nb *= 2;
    }
    buf_mask = nb - 1;
    br = io_uring_setup_buf_ring(&ring, nb, BGID, o_inc ? IOU_PBUF_RING_INC : 0, &r);
    if (!br)
        die("io_uring_setup_buf_ring (%u x %u B%s): %s", nb, o_buf, o_inc ? ", inc" : "",
            strerror(-r));
    bufmem = aligned_alloc(4096, (size_t)nb * o_buf);
    ring_bid = calloc(nb, sizeof *ring_bid);
    inc_off = calloc(nb, sizeof *inc_off);
    if (!bufmem || !ring_bid || !inc_off)
        die("out of memory");
    for (unsigned i = 0; i < nb; i++)
        return_buf((uint16_t)i);
    io_uring_buf_ring_advance(br, (int)nadd);
    nadd = 0;
}

int main(int argc, char **argv)
{
    unsigned long long cn = 0, max_s = 0;
    int verbose = 0, latency = 0, opt;
    signal(SIGPIPE, SIG_IGN);
    while ((opt = getopt(argc, argv, "c:n:k:d:lvo:h")) != -1) {
        switch (opt) {
        case 'c': cn = parse_num(optarg, "-c"); break;
        case 'n': n_target = parse_num(optarg, "-n"); break;
        case 'k': keepalive = (int)parse_num(optarg, "-k") != 0; break;
        case 'd': max_s = parse_num(optarg, "-d"); break;
        case 'l': latency = 1; break;
        case 'v': verbose = 1; break;
        case 'o': parse_opts(optarg); break;
        default: usage();
        }
    }
    if (argc - optind != 3 || cn == 0 || n_target == 0 || cn > 100000)
        usage();
    const char *host = argv[optind], *path = argv[optind + 2];
    unsigned long long port = parse_num(argv[optind + 1], "port");
    if (strcmp(host, "127.0.0.1") != 0 && strcmp(host, "localhost") != 0)
        die("refusing host %s: the floor client only connects to 127.0.0.1", host);
    if (port == 0 || port > 65535)
        die("invalid port");
    if (path[0] != '/' || strpbrk(path, " \r\n"))
        die("path must start with / and contain no spaces or line breaks");
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);

    int rl = snprintf(NULL, 0, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%llu\r\n%s\r\n", path, port,
                      keepalive ? "" : "Connection: close\r\n");
    req = malloc((size_t)rl + 1);
    if (!req)
        die("out of memory");
    snprintf(req, (size_t)rl + 1, "GET %s HTTP/1.1\r\nHost: 127.0.0.1:%llu\r\n%s\r\n", path, port,
             keepalive ? "" : "Connection: close\r\n");
    req_len = (size_t)rl;

    if (cn > n_target)
        cn = n_target;
    conns_n = (size_t)cn;
    if (latency && !(lat_ns = calloc(n_target, sizeof *lat_ns)))
        die("out of memory");
    conns = calloc(conns_n, sizeof *conns);
    if (!conns)
        die("out of memory");
    setup_ring();

    uint64_t t0 = now_ns(), last_progress = t0, last_done = 0;
    uint64_t deadline = max_s ? t0 + max_s * 1000000000ULL : UINT64_MAX;
    for (size_t i = 0; i < conns_n; i++)
        open_conn(&conns[i], o_ringconnect || !keepalive);

    struct __kernel_timespec ts = {.tv_sec = 1, .tv_nsec = 0};
    while (n_done < n_target) {
        if (nadd) {
            io_uring_buf_ring_advance(br, (int)nadd); /* publish this turn's returned buffers */
            nadd = 0;
        }
        struct io_uring_cqe *cqe;
        int r;
        /* never wait for more completions than requests are in flight (the run's end) */
        uint64_t inflight = n_started - n_done;
        unsigned w = inflight < o_wait ? (unsigned)(inflight ? inflight : 1) : o_wait;
        n_enter++;
        if (o_minwait)
            r = io_uring_submit_and_wait_min_timeout(&ring, &cqe, w, &ts, o_minwait, NULL);
        else
            r = io_uring_submit_and_wait_timeout(&ring, &cqe, w, &ts, NULL);
        if (r < 0 && r != -ETIME && r != -EINTR && r != -EAGAIN)
            die("io_uring_submit_and_wait: %s", strerror(-r));
        unsigned head, k = 0;
        io_uring_for_each_cqe(&ring, head, cqe)
        {
            on_cqe(cqe);
            k++;
            /* a CQE's handling never needs the CQ, so the batch is walked and then released */
        }
        io_uring_cq_advance(&ring, k);
        n_cqe += k;
        if (n_done != last_done || k == 0) {
            uint64_t t = now_ns();
            if (n_done != last_done) {
                last_done = n_done;
                last_progress = t;
            } else if (t - last_progress > STALL_NS) {
                fprintf(stderr, "floor-uring: no response for 10 s, giving up after %llu requests\n",
                        (unsigned long long)n_done);
                return 2;
            }
            if (t > deadline)
                break;
        }
    }
    uint64_t t1 = now_ns();
    double secs = (double)(t1 - t0) / 1e9;
    printf("floor: requests=%llu seconds=%.3f rps=%.0f non2xx=%llu reconnects=%llu conns=%zu "
           "keepalive=%d io=uring\n",
           (unsigned long long)n_done, secs, secs > 0 ? (double)n_done / secs : 0.0,
           (unsigned long long)n_non2xx, (unsigned long long)n_reconnects, conns_n, keepalive);
    if (verbose)
        fprintf(stderr,
                "floor-uring: turns %llu, cqes %llu (%.2f/turn), buffers %llu, enobufs %llu, "
                "re-arms %llu, short sends %llu, early submits %llu\n",
                (unsigned long long)n_enter, (unsigned long long)n_cqe,
                n_enter ? (double)n_cqe / (double)n_enter : 0.0, (unsigned long long)n_bufs_used,
                (unsigned long long)n_enobufs, (unsigned long long)n_rearm,
                (unsigned long long)n_short_send, (unsigned long long)n_early_submit);
    if (lat_ns && n_done > 0) {
        qsort(lat_ns, n_done, sizeof *lat_ns, cmp_u64);
        printf("floor: latency_us p50=%.1f p90=%.1f p99=%.1f\n", lat_ns[rank(0.50)] / 1e3,
               lat_ns[rank(0.90)] / 1e3, lat_ns[rank(0.99)] / 1e3);
    }
    return n_done == n_target || max_s ? 0 : 1;
}

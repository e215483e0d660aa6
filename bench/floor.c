/*
 * floor: the syscall-floor HTTP/1.1 load client used by bench/run.sh.
 *
 * One thread, level-triggered epoll, N connections, one request in flight per
 * connection, a request built once. Responses are framed by Content-Length;
 * only the header block is scanned. Per keep-alive request the steady state is
 * one write(), normally one read() into a 256 KiB buffer, and a share of
 * epoll_wait(). With -k 0 every request gets a fresh connection: socket,
 * connect, epoll_ctl(ADD), write, read, close (close also drops the epoll
 * registration, so no epoll_ctl(DEL) is needed).
 *
 * It is a reference for "the cheapest conventional readiness-based client",
 * not a general tool: GET only, Content-Length framing only (no chunked, no
 * close-delimited bodies), no pipelining, and it only ever connects to
 * 127.0.0.1. Any protocol or socket error is fatal (exit 1); so is 10 s
 * without a single completed request (exit 2).
 *
 * With -l it also times every request (from the moment it starts, as herd does:
 * the previous response's end on a kept-alive connection, before connect() on a new
 * one, to the end of its response) and prints p50, p90 and p99 in microseconds: the
 * reference for herd's latency accuracy. Without -l no clock is read per request.
 *
 * usage: floor -c conns -n requests [-k 0|1] [-d max_seconds] [-l] [-v] host port path
 * build: gcc -O2 -Wall -Wextra -o floor floor.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define FLOOR_NAME "floor"
#include "floor_common.h"

#define RBUF_SIZE (256 * 1024)
#define HDR_CAP (16 * 1024)
#define MAX_EVENTS 1024
#define STALL_NS (10ULL * 1000000000ULL)

enum state { ST_FREE, ST_CONNECTING, ST_WRITING, ST_HDR, ST_BODY };

struct conn {
    int fd;
    enum state st;
    uint32_t gen;        /* bumped whenever the slot gets a new socket */
    size_t woff;         /* bytes of the request written so far */
    uint64_t remaining;  /* body bytes still expected */
    size_t hlen;         /* bytes held in hdr (only when headers span reads) */
    char *hdr;           /* lazily allocated, HDR_CAP bytes */
    uint64_t start_ns;   /* -l: when the current request started */
};

static int ep = -1;
static struct sockaddr_in addr;
static char *req;
static size_t req_len;
static int keepalive = 1;
static uint64_t n_target, n_started, n_done, n_non2xx, n_reconnects, n_write_deferred;
static char rbuf[RBUF_SIZE];
static uint64_t *lat_ns; /* -l: one latency per completed request */

static uint64_t ev_data(const struct conn *conns, const struct conn *c)
{
    return ((uint64_t)c->gen << 32) | (uint64_t)(c - conns);
}

static void set_events(struct conn *conns, struct conn *c, int op, uint32_t events)
{
    struct epoll_event ev;
    memset(&ev, 0, sizeof ev);
    ev.events = events;
    ev.data.u64 = ev_data(conns, c);
    if (epoll_ctl(ep, op, c->fd, &ev) < 0)
        die("epoll_ctl: %s", strerror(errno));
}

/* Try to (finish) writing the request. Returns 1 when fully written. */
static int try_write(struct conn *conns, struct conn *c)
{
    for (;;) {
        ssize_t w = write(c->fd, req + c->woff, req_len - c->woff);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN) {
                if (c->st != ST_WRITING && c->st != ST_CONNECTING) {
                    c->st = ST_WRITING;
                    set_events(conns, c, EPOLL_CTL_MOD, EPOLLOUT);
                }
                n_write_deferred++;
                return 0;
            }
            die("%s: %s", errno == ECONNREFUSED ? "connect" : "write", strerror(errno));
        }
        c->woff += (size_t)w;
        if (c->woff == req_len)
            break;
    }
    if (c->st == ST_WRITING || c->st == ST_CONNECTING)
        set_events(conns, c, EPOLL_CTL_MOD, EPOLLIN);
    c->st = ST_HDR;
    c->hlen = 0;
    return 1;
}

static void start_request(struct conn *conns, struct conn *c)
{
    if (lat_ns)
        c->start_ns = now_ns();
    n_started++;
    c->woff = 0;
    c->st = ST_HDR; /* optimistic: write() usually succeeds at once */
    try_write(conns, c);
}

/* Open a socket for slot c and send its first request (ADD with EPOLLIN, then
 * write at once; if the handshake is not done yet, wait for EPOLLOUT). */
static void open_conn(struct conn *conns, struct conn *c)
{
    if (lat_ns)
        c->start_ns = now_ns();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        die("socket: %s", strerror(errno));
    if (keepalive) {
        /* once per connection, outside the per-request path */
        int one = 1;
        if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
            die("setsockopt: %s", strerror(errno));
    }
    if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0 && errno != EINPROGRESS)
        die("connect: %s", strerror(errno));
    c->fd = fd;
    c->gen++;
    c->st = ST_HDR;
    set_events(conns, c, EPOLL_CTL_ADD, EPOLLIN);
    n_started++;
    c->woff = 0;
    if (!try_write(conns, c))
        c->st = ST_CONNECTING;
}

static void close_conn(struct conn *c)
{
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

static void response_done(struct conn *conns, struct conn *c)
{
    if (lat_ns && n_done < n_target)
        lat_ns[n_done] = now_ns() - c->start_ns;
    n_done++;
    if (keepalive) {
        if (n_started < n_target)
            start_request(conns, c);
        else {
            close_conn(c);
        }
    } else {
        close_conn(c);
        if (n_started < n_target)
            open_conn(conns, c);
    }
}

/* Feed bytes read from c. */
static void on_data(struct conn *conns, struct conn *c, const char *p, size_t n)
{
    if (c->st == ST_HDR) {
        size_t e;
        if (c->hlen == 0 && (e = find_hdr_end(p, n, 0)) != 0) {
            parse_headers(c, p, e); /* fast path: whole header block in this read */
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
                return;
            }
            parse_headers(c, c->hdr, e);
            p += e - old;
            n -= e - old;
            c->hlen = 0;
        }
        c->st = ST_BODY;
    }
    if (n > c->remaining)
        die("more bytes than Content-Length (%zu > %llu)", n, (unsigned long long)c->remaining);
    c->remaining -= n;
    if (c->remaining == 0)
        response_done(conns, c);
}

static void on_event(struct conn *conns, struct conn *c, uint32_t events)
{
    if (c->st == ST_CONNECTING || c->st == ST_WRITING) {
        if (c->st == ST_CONNECTING) {
            int err = 0;
            socklen_t len = sizeof err;
            if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                die("getsockopt: %s", strerror(errno));
            if (err)
                die("connect: %s", strerror(err));
            if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
                return;
        }
        try_write(conns, c);
        return;
    }
    if (c->st != ST_HDR && c->st != ST_BODY)
        return;
    ssize_t r = read(c->fd, rbuf, sizeof rbuf);
    if (r < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
            return;
        if (errno != ECONNRESET)
            die("read: %s", strerror(errno));
    }
    if (r <= 0) {
        if (c->st == ST_HDR && c->hlen == 0 && keepalive) {
            /* keep-alive connection closed by the server before any byte of
             * the response: reopen it and send the request again */
            n_reconnects++;
            close_conn(c);
            n_started--;
            open_conn(conns, c);
            return;
        }
        die("connection %s by the server in the middle of a response", r == 0 ? "closed" : "reset");
    }
    on_data(conns, c, rbuf, (size_t)r);
}

/* Index of the nearest-rank quantile q among the n_done sorted latencies. */
static size_t rank(double q)
{
    return rank_of(q, n_done);
}

static void usage(void)
{
    fprintf(stderr, "usage: floor -c conns -n requests [-k 0|1] [-d max_seconds] [-l] [-v] host port path\n"
                    "  host must be 127.0.0.1 (or localhost); -k 0 opens a new connection per request\n");
    exit(64);
}

int main(int argc, char **argv)
{
    unsigned long long conns_n = 0, max_s = 0;
    int verbose = 0, latency = 0, opt;
    n_target = 0;
    signal(SIGPIPE, SIG_IGN); /* a write to a reset connection must report EPIPE, not kill us */
    while ((opt = getopt(argc, argv, "c:n:k:d:lvh")) != -1) {
        switch (opt) {
        case 'c': conns_n = parse_num(optarg, "-c"); break;
        case 'n': n_target = parse_num(optarg, "-n"); break;
        case 'k': keepalive = (int)parse_num(optarg, "-k") != 0; break;
        case 'd': max_s = parse_num(optarg, "-d"); break;
        case 'l': latency = 1; break;
        case 'v': verbose = 1; break;
        default: usage();
        }
    }
    if (argc - optind != 3 || conns_n == 0 || n_target == 0 || conns_n > 100000)
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

    if (conns_n > n_target)
        conns_n = n_target;
    if (latency && !(lat_ns = calloc(n_target, sizeof *lat_ns)))
        die("out of memory");
    struct conn *conns = calloc(conns_n, sizeof *conns);
    if (!conns)
        die("out of memory");
    ep = epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        die("epoll_create1: %s", strerror(errno));

    uint64_t t0 = now_ns(), last_progress = t0, last_done = 0;
    uint64_t deadline = max_s ? t0 + max_s * 1000000000ULL : UINT64_MAX;
    for (size_t i = 0; i < conns_n; i++)
        open_conn(conns, &conns[i]);

    static struct epoll_event evs[MAX_EVENTS];
    while (n_done < n_target) {
        int k = epoll_wait(ep, evs, MAX_EVENTS, 1000);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait: %s", strerror(errno));
        }
        for (int i = 0; i < k; i++) {
            uint32_t idx = (uint32_t)evs[i].data.u64, gen = (uint32_t)(evs[i].data.u64 >> 32);
            struct conn *c = &conns[idx];
            if (c->st == ST_FREE || c->gen != gen)
                continue; /* stale event for a socket closed earlier in this batch */
            on_event(conns, c, evs[i].events);
        }
        if (n_done != last_done || k == 0) {
            uint64_t t = now_ns();
            if (n_done != last_done) {
                last_done = n_done;
                last_progress = t;
            } else if (t - last_progress > STALL_NS) {
                fprintf(stderr, "floor: no response for 10 s, giving up after %llu requests\n",
                        (unsigned long long)n_done);
                return 2;
            }
            if (t > deadline)
                break;
        }
    }
    uint64_t t1 = now_ns();
    double secs = (double)(t1 - t0) / 1e9;
    printf("floor: requests=%llu seconds=%.3f rps=%.0f non2xx=%llu reconnects=%llu conns=%llu keepalive=%d\n",
           (unsigned long long)n_done, secs, secs > 0 ? (double)n_done / secs : 0.0,
           (unsigned long long)n_non2xx, (unsigned long long)n_reconnects, conns_n, keepalive);
    if (verbose)
        fprintf(stderr, "floor: deferred writes (EAGAIN/ENOTCONN) %llu\n", (unsigned long long)n_write_deferred);
    if (lat_ns && n_done > 0) {
        qsort(lat_ns, n_done, sizeof *lat_ns, cmp_u64);
        /* nearest rank, as HdrHistogram reports it */
        printf("floor: latency_us p50=%.1f p90=%.1f p99=%.1f\n", lat_ns[rank(0.50)] / 1e3,
               lat_ns[rank(0.90)] / 1e3, lat_ns[rank(0.99)] / 1e3);
    }
    return n_done == n_target || max_s ? 0 : 1;
}

/* What bench/floor.c and bench/floor_uring.c share: the same strict HTTP/1.x response framing,
 * the same clock, the same latency ranks and the same errors, so that the two floors differ in
 * their I/O alone. Include after defining FLOOR_NAME (the program's name in its errors). */
#ifndef FLOOR_COMMON_H
#define FLOOR_COMMON_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(FLOOR_NAME ": ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Find the end of the header block (index just past "\r\n\r\n"), or 0. */
static size_t find_hdr_end(const char *p, size_t n, size_t from)
{
    for (size_t i = from; i + 3 < n; i++) {
        if (p[i + 3] == '\n') {
            if (p[i] == '\r' && p[i + 1] == '\n' && p[i + 2] == '\r')
                return i + 4;
        } else if (p[i + 3] != '\r' && p[i + 3] != '\n') {
            i += 3; /* no terminator can start before i+4 */
        }
    }
    return 0;
}

/* Parse a complete header block p[0..n) (ends with CRLFCRLF). Returns the body
 * length; counts a status other than 2xx in *non2xx. Strict: one HTTP/1.x status line, exactly one Content-Length value,
 * no Transfer-Encoding. */
static uint64_t parse_head(const char *p, size_t n, uint64_t *non2xx)
{
    if (n < 16 || memcmp(p, "HTTP/1.", 7) != 0 || (p[7] != '0' && p[7] != '1') || p[8] != ' ' ||
        p[9] < '1' || p[9] > '5' || p[10] < '0' || p[10] > '9' || p[11] < '0' || p[11] > '9')
        die("malformed status line");
    if (p[9] != '2')
        (*non2xx)++;
    const char *end = p + n - 2; /* the final empty line */
    const char *line = memchr(p, '\n', n);
    int have_cl = 0;
    uint64_t cl = 0;
    if (!line)
        die("malformed header block");
    line++;
    while (line < end) {
        const char *eol = memchr(line, '\n', (size_t)(end - line) + 1);
        if (!eol || eol == line || eol[-1] != '\r')
            die("malformed header line");
        size_t len = (size_t)(eol - 1 - line);
        if (len >= 15 && strncasecmp(line, "content-length:", 15) == 0) {
            const char *q = line + 15, *qe = line + len;
            uint64_t v = 0;
            int digits = 0;
            while (q < qe && (*q == ' ' || *q == '\t'))
                q++;
            while (q < qe && *q >= '0' && *q <= '9') {
                if (v > (UINT64_MAX - 9) / 10 || ++digits > 18)
                    die("Content-Length too large");
                v = v * 10 + (uint64_t)(*q - '0');
                q++;
            }
            while (q < qe && (*q == ' ' || *q == '\t'))
                q++;
            if (!digits || q != qe)
                die("invalid Content-Length");
            if (have_cl && v != cl)
                die("conflicting Content-Length headers");
            have_cl = 1;
            cl = v;
        } else if (len >= 18 && strncasecmp(line, "transfer-encoding:", 18) == 0) {
            die("Transfer-Encoding is not supported by the floor client");
        }
        line = eol + 1;
    }
    if (!have_cl)
        die("response without Content-Length");
    return cl;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Index of the nearest-rank quantile q among n sorted latencies. */
static size_t rank_of(double q, uint64_t n)
{
    size_t r = (size_t)(q * (double)n + 0.999999);
    return (r < 1 ? 1 : r > n ? n : r) - 1;
}

static unsigned long long parse_num(const char *s, const char *what)
{
    char *e;
    errno = 0;
    unsigned long long v = strtoull(s, &e, 10);
    if (errno || e == s || *e || s[0] == '-')
        die("invalid %s: %s", what, s);
    return v;
}

#endif

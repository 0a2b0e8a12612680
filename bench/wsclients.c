/* The websocket load generator of bench/edge_bench.py in C: the behaviour of its Python
 * run_clients/WsClient with less CPU (see below), so that on a 2-core machine the measurement
 * measures the server and not the clients (the Python clients took ~55 % of a core at 10k).
 *
 *   wsclients [-r] [-n NAP_US] [-p PATH] [-k TABLES] [-o FILE [-s]] [-q FILE] [-a PER_ADDRESS]
 *             KIND HOST:PORT N STALLED TOPIC
 *
 * One process, one epoll loop, N non-blocking websocket clients (RFC 6455 client handshake,
 * masked client frames, no extensions), connected at most 200 at a time with 5 attempts each.
 * KIND edge: subscribe to TOPIC once open, subscribed on a frame containing "snapshot";
 * socketio: engine.io v4 ("0" -> "40", "2" -> "3"), subscribed on "40"; any other kind:
 * subscribed on open. The first STALLED clients stop reading once subscribed, so that their
 * kernel buffers fill. Prints "connected" once all are subscribed, then reads "start NS" (reset
 * the counters, count from publish time NS) and "stop" (or EOF) on stdin while serving the
 * sockets, prints the result as one JSON line (the keys of run_clients) and exits.
 *
 * Every reading client parses every frame for its publish time "t0" (CLOCK_MONOTONIC ns, the
 * bench's now_ns()) with memmem, no JSON parsing, and records its latency: to the time the
 * kernel received the bytes (SO_TIMESTAMPNS, CLOCK_REALTIME moved to CLOCK_MONOTONIC by an
 * offset taken at "start"), or with -r to the time this process read them (the Python client's
 * measure). With receive times, the latency no longer depends on when this process runs, so
 * after a batch of fewer than 512 events the loop pauses NAP_US (default 1000 µs, -n 0: none)
 * and the next epoll_wait returns many sockets at once: at 1k clients x 10 Hz that cut this
 * process's CPU per frame by about a quarter (wakeups per frame 0.3 -> 0.01). What remains is
 * the kernel's TCP receive path (recv, and the ACK it sends, whose processing on the server's
 * socket is charged here), ~4-5 µs per frame on the 2-core box.
 *
 * bench/e2e_latency.py's options: -p PATH is the request path (default /ws; e.g.
 * "/ws?token=..."); -k TABLES makes TOPIC a format with one %d, client i subscribing to
 * table (i mod TABLES) + 1; -o FILE is marker mode: instead of "t0", each action row that a
 * delta frame of a topic "table:T" adds ("/actions/-", {"i":N, ...}) is recorded as (T, N,
 * receive time ns), and the records are written to FILE at "stop" as native int64 triples
 * ("frames" counts the frames that added rows; the JSON line's latency figures are then -1).
 * -s (with -o, for the program feed, whose rows also come whole in a snapshot when a held deal
 * is released): the rows of a "table:T" snapshot's "actions" are recorded too, and every record
 * is a quadruple (client index, T, N, receive time ns), so that a row a client got twice counts
 * once.
 *
 * bench/site_phones.py's phones (issue #34.6): TOPIC may be a comma-separated list, each item
 * with at most one %d (formatted as with -k), all subscribed in one op; a client is subscribed
 * once it has had as many "snapshot" frames as it has topics (an "error" frame before that, a
 * subscription refused: the process prints it and exits 1). -q FILE is the frame log: every
 * data frame a subscribed client receives at or after the start is recorded by its head, no
 * JSON parsing: the "topic" and "seq" of its first 256 bytes, as (client index, topic id, seq,
 * receive time ns) native int64 quadruples written to FILE at "stop", and the topic names to
 * FILE.topics, one a line (topic id = line number from 0). With -q alone (no -o) "frames"
 * counts the logged frames. -a PER_ADDRESS: client i connects from the loopback source
 * address 127.0.(1 + i / (250 PER_ADDRESS)).(1 + (i / PER_ADDRESS) mod 250) (nginx caps the
 * connections of one spectator address: 256 in deploy/nginx.conf). The JSON line's "pings"
 * counts the server's pings answered since the start (the edges' keepalive).
 * Build: cc -O2 -o wsclients wsclients.c (edge_bench.py does it on demand). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { KIND_EDGE, KIND_SOCKETIO, KIND_PLAIN };
enum { ST_WAITING, ST_CONNECTING, ST_HANDSHAKE, ST_OPEN, ST_READY, ST_STALLED, ST_DEAD };

#define CONCURRENCY 200   /* connections being set up at once (run_clients' semaphore) */
#define ATTEMPTS 5
#define READY_TIMEOUT_NS (30LL * 1000000000LL)
#define SCRATCH (256 * 1024)
#define STDIN_TAG UINT64_MAX

typedef struct {
    int fd;
    int state;
    int attempt;
    int stall;
    int64_t deadline;      /* setting up: give this attempt up at this time */
    int64_t retry_at;      /* ST_WAITING after a failed attempt: next attempt at this time */
    unsigned char *buf;    /* an incomplete frame (or handshake) kept between reads */
    size_t len, cap;
    unsigned char *out;    /* bytes the socket would not take yet */
    size_t out_len, out_cap;
    int want_out;
    int snapshots;         /* "snapshot" frames had while subscribing (one per topic) */
} Conn;

static int kind;
static const char *topic;
static const char *path = "/ws"; /* -p */
static int topic_tables;         /* -k: TOPIC is a format, client i takes table i % k + 1 */
static const char *marker_file;  /* -o: marker mode */
static int snapshot_rows;        /* -s: snapshots' rows too, records with the client index */
static const char *frame_file;   /* -q: the frame log */
static int per_address;          /* -a: clients per loopback source address (0: the kernel's) */
static int n_topics = 1;         /* items of TOPIC */
static int64_t *flog;            /* (client, topic id, seq, receive ns) per logged frame */
static size_t n_flog, cap_flog;
#define MAX_NAMES 65536
static char *names[MAX_NAMES];   /* topic id -> name (frame log) */
static size_t name_lens[MAX_NAMES];
static int n_names;
static int64_t *marks;           /* (table, action index, receive ns) per recorded frame */
static size_t n_marks, cap_marks;
static struct sockaddr_storage addr;
static socklen_t addr_len;
static char host_header[300];
static int epfd;
static Conn *conns;
static int n_clients, n_stalled;

/* results (reset by "start") */
static int64_t window_start = INT64_C(1) << 62;
static int64_t frames, sampled_bytes;
static int64_t *latencies; /* µs, as the Python client */
static size_t n_lat, cap_lat;
typedef struct { int64_t sent, worst; } Worst;
static Worst *worst;        /* open addressing on publish time; sent == 0 is empty */
static size_t worst_cap, worst_used;
static struct { int code; int64_t count; } closes[64];
static int n_closes;
static int64_t lost;
static int64_t pings; /* the server's pings answered since the start */

static uint64_t rng_state;
static int use_rx_stamp;        /* -r turns it off: latency to the read, as the Python client */
static int64_t real_minus_mono; /* CLOCK_REALTIME - CLOCK_MONOTONIC, for the receive stamps */
static long nap_us;             /* -n: pause between small batches of events */

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void *xrealloc(void *p, size_t n) {
    p = realloc(p, n);
    if (!p) die("realloc");
    return p;
}

static uint32_t rnd32(void) { /* xorshift64*: masks need not be secret here */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 0x2545F4914F6CDD1DULL) >> 32);
}

static void raise_nofile(void) {
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
        r.rlim_cur = r.rlim_max;
        setrlimit(RLIMIT_NOFILE, &r);
    }
}

/* -- results -------------------------------------------------------------------------------- */

static void worst_put(int64_t sent, int64_t late);

static void worst_grow(void) {
    Worst *old = worst;
    size_t old_cap = worst_cap;
    worst_cap = worst_cap ? worst_cap * 2 : 4096;
    worst = calloc(worst_cap, sizeof *worst);
    if (!worst) die("calloc");
    worst_used = 0;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i].sent) worst_put(old[i].sent, old[i].worst);
    free(old);
}

static void worst_put(int64_t sent, int64_t late) {
    if ((worst_used + 1) * 2 > worst_cap) worst_grow();
    size_t mask = worst_cap - 1;
    size_t i = (size_t)((uint64_t)sent * 0x9E3779B97F4A7C15ULL >> 20) & mask;
    while (worst[i].sent && worst[i].sent != sent) i = (i + 1) & mask;
    if (!worst[i].sent) {
        worst[i].sent = sent;
        worst[i].worst = late;
        worst_used++;
    } else if (late > worst[i].worst) {
        worst[i].worst = late;
    }
}

static void measure_clock_offset(void) {
    struct timespec r, m;
    clock_gettime(CLOCK_REALTIME, &r);
    clock_gettime(CLOCK_MONOTONIC, &m);
    real_minus_mono = ((int64_t)r.tv_sec - m.tv_sec) * 1000000000LL + (r.tv_nsec - m.tv_nsec);
}

static void reset_results(int64_t start) {
    measure_clock_offset();
    window_start = start;
    frames = sampled_bytes = 0;
    n_lat = n_marks = n_flog = 0;
    pings = 0;
    if (worst) memset(worst, 0, worst_cap * sizeof *worst);
    worst_used = 0;
}

static void record(int64_t sent, int64_t now, size_t size) {
    frames++;
    sampled_bytes += (int64_t)size;
    if (n_lat == cap_lat) {
        cap_lat = cap_lat ? cap_lat * 2 : (1u << 20);
        latencies = xrealloc(latencies, cap_lat * sizeof *latencies);
    }
    latencies[n_lat++] = (now - sent) / 1000;
    worst_put(sent, now - sent);
}

static void record_close(int code) {
    for (int i = 0; i < n_closes; i++)
        if (closes[i].code == code) {
            closes[i].count++;
            return;
        }
    if (n_closes < 64) {
        closes[n_closes].code = code;
        closes[n_closes++].count = 1;
    }
}

/* -- sockets -------------------------------------------------------------------------------- */

static void set_events(Conn *c, int op) {
    struct epoll_event ev = {.events = EPOLLIN | (c->want_out ? EPOLLOUT : 0),
                             .data.u64 = (uint64_t)(c - conns)};
    if (epoll_ctl(epfd, op, c->fd, &ev) < 0) die("epoll_ctl");
}

static void drop(Conn *c) {
    if (c->fd >= 0) close(c->fd); /* also leaves the epoll set */
    c->fd = -1;
    free(c->buf);
    free(c->out);
    c->buf = c->out = NULL;
    c->len = c->cap = c->out_len = c->out_cap = 0;
    c->want_out = 0;
}

/* Write now, keep what the socket would not take for EPOLLOUT. */
static void send_bytes(Conn *c, const unsigned char *p, size_t n) {
    if (c->fd < 0) return;
    if (c->out_len == 0) {
        ssize_t k = send(c->fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return; /* the read sees it */
        if (k > 0) {
            p += k;
            n -= (size_t)k;
        }
        if (n == 0) return;
    }
    if (c->out_len + n > c->out_cap) {
        c->out_cap = (c->out_len + n) * 2;
        c->out = xrealloc(c->out, c->out_cap);
    }
    memcpy(c->out + c->out_len, p, n);
    c->out_len += n;
    if (!c->want_out && c->state != ST_STALLED) {
        c->want_out = 1;
        set_events(c, EPOLL_CTL_MOD);
    }
}

static void flush_out(Conn *c) {
    ssize_t k = send(c->fd, c->out, c->out_len, MSG_NOSIGNAL);
    if (k > 0) {
        memmove(c->out, c->out + k, c->out_len - (size_t)k);
        c->out_len -= (size_t)k;
    }
    if (c->out_len == 0 && c->want_out) {
        c->want_out = 0;
        set_events(c, EPOLL_CTL_MOD);
    }
}

/* A masked client frame (text or pong). */
static void send_frame(Conn *c, int opcode, const unsigned char *payload, size_t n) {
    unsigned char frame[14 + 512];
    if (n > 512) return; /* the clients only send short control and op messages */
    size_t h = 0;
    frame[h++] = (unsigned char)(0x80 | opcode);
    if (n < 126) {
        frame[h++] = (unsigned char)(0x80 | n);
    } else {
        frame[h++] = 0x80 | 126;
        frame[h++] = (unsigned char)(n >> 8);
        frame[h++] = (unsigned char)n;
    }
    uint32_t m = rnd32();
    unsigned char mask[4] = {(unsigned char)m, (unsigned char)(m >> 8), (unsigned char)(m >> 16),
                             (unsigned char)(m >> 24)};
    memcpy(frame + h, mask, 4);
    h += 4;
    for (size_t i = 0; i < n; i++) frame[h + i] = payload[i] ^ mask[i & 3];
    send_bytes(c, frame, h + n);
}

static void send_text(Conn *c, const char *text) {
    send_frame(c, 0x1, (const unsigned char *)text, strlen(text));
}

static int active; /* connections being set up (at most CONCURRENCY) */
static int ready_count;

static void fail_attempt(Conn *c, int64_t now) {
    drop(c);
    c->state = ST_WAITING;
    if (++c->attempt >= ATTEMPTS) {
        fprintf(stderr, "wsclients: client %d could not connect\n", (int)(c - conns));
        exit(1);
    }
    c->retry_at = now + 200000000LL * c->attempt; /* 0.2 s x attempt, holding its slot */
}

static void start_attempt(Conn *c, int64_t now) {
    int fd = socket(addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        fail_attempt(c, now);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one); /* as asyncio's transports */
    if (use_rx_stamp) setsockopt(fd, SOL_SOCKET, SO_TIMESTAMPNS, &one, sizeof one);
    if (per_address && addr.ss_family == AF_INET) {
        int i = (int)(c - conns) / per_address;
        struct sockaddr_in src = {.sin_family = AF_INET, .sin_port = 0};
        src.sin_addr.s_addr = htonl(0x7F000000u | (uint32_t)(1 + i / 250) << 8 |
                                    (uint32_t)(1 + i % 250));
        setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
        if (bind(fd, (struct sockaddr *)&src, sizeof src) < 0) {
            close(fd);
            fail_attempt(c, now);
            return;
        }
    }
    c->fd = fd;
    c->snapshots = 0;
    c->deadline = now + READY_TIMEOUT_NS;
    c->state = ST_CONNECTING;
    c->want_out = 1;
    if (connect(fd, (struct sockaddr *)&addr, addr_len) < 0 && errno != EINPROGRESS) {
        close(fd);
        c->fd = -1;
        fail_attempt(c, now);
        return;
    }
    set_events(c, EPOLL_CTL_ADD);
}

static void send_handshake(Conn *c) {
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    unsigned char raw[18] = {0};
    char key[25];
    if (getrandom(raw, 16, 0) != 16)
        for (int i = 0; i < 16; i++) raw[i] = (unsigned char)rnd32();
    for (int i = 0, o = 0; i < 18; i += 3, o += 4) {
        uint32_t v = (uint32_t)raw[i] << 16 | (uint32_t)raw[i + 1] << 8 | raw[i + 2];
        key[o] = b64[v >> 18 & 63];
        key[o + 1] = b64[v >> 12 & 63];
        key[o + 2] = b64[v >> 6 & 63];
        key[o + 3] = b64[v & 63];
    }
    key[22] = key[23] = '=';
    key[24] = 0;
    char req[1200];
    int n = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n",
                     kind == KIND_SOCKETIO ? "/socket.io/?EIO=4&transport=websocket" : path,
                     host_header, key);
    c->state = ST_HANDSHAKE;
    send_bytes(c, (const unsigned char *)req, (size_t)n);
}

static void subscribed(Conn *c) {
    if (c->state != ST_OPEN) return;
    active--;
    ready_count++;
    if (c->stall) {
        /* Stop reading (pause_reading): out of the epoll set, the kernel buffers fill up. */
        c->state = ST_STALLED;
        epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    } else {
        c->state = ST_READY;
    }
}

/* The publish time after t0\?",\?"value\?": (the Python client's regex), or -1. */
static int64_t find_t0(const unsigned char *p, size_t n) {
    const unsigned char *end = p + n;
    while ((p = memmem(p, (size_t)(end - p), "t0", 2)) != NULL) {
        const unsigned char *q = p + 2;
        p++;
        static const char *const parts[] = {"\",", "\"value", "\":"};
        int ok = 1;
        for (int k = 0; k < 3 && ok; k++) {
            if (q < end && *q == '\\') q++;
            size_t len = strlen(parts[k]);
            if ((size_t)(end - q) < len || memcmp(q, parts[k], len) != 0) ok = 0;
            q += len;
        }
        if (!ok || q >= end || *q < '0' || *q > '9') continue;
        int64_t v = 0;
        while (q < end && *q >= '0' && *q <= '9') v = v * 10 + (*q++ - '0');
        return v;
    }
    return -1;
}

/* The digits after p (at most 18), or -1. */
static int64_t digits_at(const unsigned char *p, const unsigned char *end) {
    if (p >= end || *p < '0' || *p > '9') return -1;
    int64_t v = 0;
    for (int k = 0; p < end && *p >= '0' && *p <= '9' && k < 18; k++) v = v * 10 + (*p++ - '0');
    return v;
}

/* Marker mode: a delta of "table:T" adding action rows -> (T, "i", now) for each row; with -s
 * also the rows of a snapshot's "actions" (flat objects {"i":N,...}, so the array ends at the
 * first ']'), and each record is led by the client's index. */
static void record_marker(int client, const unsigned char *p, size_t n, int64_t now) {
    const unsigned char *end = p + n;
    static const char delta[] = "\"type\":\"delta\"", table_topic[] = "\"topic\":\"table:",
                      snapshot[] = "\"type\":\"snapshot\"", array[] = "\"actions\":[",
                      row[] = "\"/actions/-\",\"value\":{\"i\":", item[] = "{\"i\":";
    const char *pattern = row;
    size_t pattern_len = sizeof row - 1;
    const unsigned char *q = p;
    if (!memmem(p, n, delta, sizeof delta - 1)) {
        if (!snapshot_rows || !memmem(p, n, snapshot, sizeof snapshot - 1)) return;
        const unsigned char *a = memmem(p, n, array, sizeof array - 1);
        if (!a) return;
        q = a + sizeof array - 1;
        const unsigned char *close = memchr(q, ']', (size_t)(end - q));
        if (!close) return;
        pattern = item;
        pattern_len = sizeof item - 1;
        end = close;
    }
    const unsigned char *t = memmem(p, n, table_topic, sizeof table_topic - 1);
    if (!t) return;
    int64_t table = digits_at(t + sizeof table_topic - 1, p + n);
    if (table < 0) return;
    int rows = 0;
    while (q < end && (q = memmem(q, (size_t)(end - q), pattern, pattern_len)) != NULL) {
        q += pattern_len;
        int64_t i = digits_at(q, end);
        if (i < 0) continue;
        rows++;
        if (n_marks + 4 > cap_marks) {
            cap_marks = cap_marks ? cap_marks * 2 : (3u << 16);
            marks = xrealloc(marks, cap_marks * sizeof *marks);
        }
        if (snapshot_rows) marks[n_marks++] = client;
        marks[n_marks++] = table;
        marks[n_marks++] = i;
        marks[n_marks++] = now;
    }
    if (rows) frames++;
}

/* The id of topic name p[0:n] in the frame log (interned: a few hundred names at most). */
static int64_t topic_id(const unsigned char *p, size_t n) {
    for (int i = n_names - 1; i >= 0; i--)
        if (name_lens[i] == n && memcmp(names[i], p, n) == 0) return i;
    if (n_names == MAX_NAMES) return -1;
    names[n_names] = malloc(n + 1);
    if (!names[n_names]) die("malloc");
    memcpy(names[n_names], p, n);
    names[n_names][n] = 0;
    name_lens[n_names] = n;
    return n_names++;
}

/* Frame log: (client, topic id, seq, now) from the frame's head ("topic" then "seq", as the
 * hub encodes every client message); a frame without them is not logged. */
static void log_frame(int client, const unsigned char *p, size_t n, int64_t now) {
    static const char topic_key[] = "\"topic\":\"", seq_key[] = "\"seq\":";
    size_t head = n < 256 ? n : 256;
    const unsigned char *t = memmem(p, head, topic_key, sizeof topic_key - 1);
    if (!t) return;
    t += sizeof topic_key - 1;
    const unsigned char *t_end = memchr(t, '"', (size_t)(p + head - t));
    if (!t_end) return;
    const unsigned char *s = memmem(t_end, (size_t)(p + head - t_end), seq_key, sizeof seq_key - 1);
    if (!s) return;
    int64_t seq = digits_at(s + sizeof seq_key - 1, p + n);
    int64_t id = topic_id(t, (size_t)(t_end - t));
    if (seq < 0 || id < 0) return;
    if (n_flog + 4 > cap_flog) {
        cap_flog = cap_flog ? cap_flog * 2 : (1u << 18);
        flog = xrealloc(flog, cap_flog * sizeof *flog);
    }
    flog[n_flog++] = client;
    flog[n_flog++] = id;
    flog[n_flog++] = seq;
    flog[n_flog++] = now;
    if (!marker_file) frames++;
}

static void on_message(Conn *c, const unsigned char *payload, size_t n, int64_t now,
                       size_t size) {
    if (frame_file && c->state == ST_READY) {
        if (now >= window_start) log_frame((int)(c - conns), payload, n, now);
        if (!marker_file) return;
    }
    if (marker_file && c->state == ST_READY) {
        if (now >= window_start) record_marker((int)(c - conns), payload, n, now);
        return;
    }
    int64_t sent = find_t0(payload, n);
    if (sent >= 0) {
        if (sent >= window_start) record(sent, now, size);
        return;
    }
    if (kind == KIND_SOCKETIO) {
        if (n >= 1 && payload[0] == '0')
            send_text(c, "40");
        else if (n == 1 && payload[0] == '2')
            send_text(c, "3");
        else if (n >= 2 && payload[0] == '4' && payload[1] == '0')
            subscribed(c);
    } else if (memmem(payload, n, "\"snapshot\"", 10) != NULL) {
        if (++c->snapshots >= n_topics) subscribed(c);
    } else if (c->state == ST_OPEN && memmem(payload, n, "\"type\":\"error\"", 14) != NULL) {
        /* a subscription refused (unknown_topic, forbidden, ...): it never comes, say so now */
        fprintf(stderr, "wsclients: client %d: %.*s\n", (int)(c - conns), (int)(n < 300 ? n : 300),
                (const char *)payload);
        exit(1);
    }
}

/* Parse the frames in p[0:n]; returns how many bytes were consumed (whole frames). */
static size_t parse_frames(Conn *c, unsigned char *p, size_t n, int64_t now) {
    size_t i = 0;
    while (n - i >= 2 && c->fd >= 0) {
        size_t start = i;
        int op = p[i] & 0x0F;
        int masked = p[i + 1] & 0x80;
        uint64_t len = p[i + 1] & 0x7F;
        size_t j = i + 2;
        if (len == 126) {
            if (n - i < 4) break;
            len = (uint64_t)p[j] << 8 | p[j + 1];
            j += 2;
        } else if (len == 127) {
            if (n - i < 10) break;
            len = 0;
            for (int k = 0; k < 8; k++) len = len << 8 | p[j + k];
            j += 8;
        }
        unsigned char *key = NULL;
        if (masked) { /* servers do not mask; read it right if one does */
            if (n - j < 4) break;
            key = p + j;
            j += 4;
        }
        if ((uint64_t)(n - j) < len) break;
        unsigned char *payload = p + j;
        if (key)
            for (uint64_t k = 0; k < len; k++) payload[k] ^= key[k & 3];
        i = j + (size_t)len;
        if (op == 0x8) {
            record_close(len >= 2 ? (payload[0] << 8 | payload[1]) : 1005);
        } else if (op == 0x9) {
            pings++;
            send_frame(c, 0xA, payload, (size_t)len);
        } else {
            on_message(c, payload, (size_t)len, now, i - start);
        }
    }
    return i;
}

static void keep(Conn *c, const unsigned char *p, size_t n) {
    if (n > c->cap) {
        c->cap = n < 4096 ? 4096 : n * 2;
        unsigned char *b = malloc(c->cap);
        if (!b) die("malloc");
        memcpy(b, p, n);
        free(c->buf);
        c->buf = b;
    } else {
        memmove(c->buf, p, n);
    }
    c->len = n;
}

static void connection_lost(Conn *c, int64_t now) {
    lost++;
    if (c->state == ST_HANDSHAKE || c->state == ST_OPEN || c->state == ST_CONNECTING) {
        fail_attempt(c, now);
        return;
    }
    drop(c);
    c->state = ST_DEAD;
}

static unsigned char scratch[SCRATCH];

/* {"op":"subscribe","topics":[...]}: TOPIC's items, each %d client i's table (or deal). */
static void subscribe_message(char *msg, size_t size, int client) {
    size_t k = (size_t)snprintf(msg, size, "{\"op\":\"subscribe\",\"topics\":[");
    const char *item = topic;
    for (int j = 0; j < n_topics && k < size; j++) {
        const char *comma = strchr(item, ',');
        size_t len = comma ? (size_t)(comma - item) : strlen(item);
        char format[200], name[220];
        snprintf(format, sizeof format, "%.*s", (int)(len < 199 ? len : 199), item);
        if (topic_tables && strstr(format, "%d"))
            snprintf(name, sizeof name, format, client % topic_tables + 1);
        else
            snprintf(name, sizeof name, "%s", format);
        k += (size_t)snprintf(msg + k, size - k, "%s\"%s\"", j ? "," : "", name);
        item = comma ? comma + 1 : item + len;
    }
    if (k < size) snprintf(msg + k, size - k, "]}");
}

static void on_readable(Conn *c) {
    /* Read into the connection's own buffer when it holds a partial frame, else into the
     * shared scratch buffer (most reads end on a frame boundary: no copy, no memory per
     * connection). */
    unsigned char *base;
    size_t have, room;
    if (c->len) {
        if (c->cap - c->len < SCRATCH / 4) {
            c->cap = c->cap * 2 > c->len + SCRATCH ? c->cap * 2 : c->len + SCRATCH;
            c->buf = xrealloc(c->buf, c->cap);
        }
        base = c->buf;
        have = c->len;
        room = c->cap - c->len;
    } else {
        base = scratch;
        have = 0;
        room = SCRATCH;
    }
    ssize_t k;
    int64_t now;
    if (use_rx_stamp) {
        struct iovec iov = {base + have, room};
        union { char buf[CMSG_SPACE(sizeof(struct timespec))]; struct cmsghdr align; } ctl;
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
                             .msg_controllen = sizeof ctl.buf};
        k = recvmsg(c->fd, &msg, 0);
        now = 0;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
            if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_TIMESTAMPNS) {
                struct timespec ts;
                memcpy(&ts, CMSG_DATA(cm), sizeof ts);
                now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec - real_minus_mono;
            }
        if (!now) now = now_ns();
    } else {
        k = recv(c->fd, base + have, room, 0);
        now = now_ns();
    }
    if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        connection_lost(c, now);
        return;
    }
    if (k < 0) return;
    size_t n = have + (size_t)k;
    size_t i = 0;
    if (c->state == ST_HANDSHAKE) {
        unsigned char *end = memmem(base, n, "\r\n\r\n", 4);
        if (!end) {
            if (base == scratch) keep(c, base, n);
            else c->len = n;
            return;
        }
        if (n < 12 || memcmp(base, "HTTP/1.1 101", 12) != 0) {
            fprintf(stderr, "wsclients: handshake refused: %.*s\n", (int)(n < 200 ? n : 200),
                    (const char *)base);
            fail_attempt(c, now);
            return;
        }
        i = (size_t)(end - base) + 4;
        c->state = ST_OPEN;
        if (kind == KIND_EDGE) {
            char msg[512];
            subscribe_message(msg, sizeof msg, (int)(c - conns));
            send_text(c, msg);
        } else if (kind == KIND_PLAIN) {
            subscribed(c); /* the peers send every client everything */
        }
    }
    i += parse_frames(c, base + i, n - i, now);
    if (c->fd < 0) return;
    if (i == n) {
        c->len = 0;
        if (c->cap > 4 * SCRATCH) { /* a large frame is done: give its memory back */
            free(c->buf);
            c->buf = NULL;
            c->cap = 0;
        }
    } else if (base == scratch || i > 0) {
        keep(c, base + i, n - i);
    } else {
        c->len = n;
    }
}

static void on_event(Conn *c, uint32_t events) {
    int64_t now = now_ns();
    if (c->state == ST_CONNECTING) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err || (events & (EPOLLERR | EPOLLHUP))) {
            fail_attempt(c, now);
            return;
        }
        c->want_out = 0;
        set_events(c, EPOLL_CTL_MOD);
        send_handshake(c);
        return;
    }
    if ((events & EPOLLOUT) && c->out_len) flush_out(c);
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP)) on_readable(c);
}

/* -- commands ------------------------------------------------------------------------------- */

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_worst(const void *a, const void *b) {
    int64_t x = ((const Worst *)a)->worst, y = ((const Worst *)b)->worst;
    return (x < y) - (x > y);
}

static double pct(double p) {
    if (!n_lat) return -1.0;
    size_t k = (size_t)(p * (double)n_lat);
    if (k > n_lat - 1) k = n_lat - 1;
    return (double)latencies[k] / 1000.0;
}

static void print_results(void) {
    qsort(latencies, n_lat, sizeof *latencies, cmp_i64);
    Worst *list = malloc((worst_used + 1) * sizeof *list);
    if (!list) die("malloc");
    size_t m = 0;
    for (size_t i = 0; i < worst_cap; i++)
        if (worst[i].sent) list[m++] = worst[i];
    qsort(list, m, sizeof *list, cmp_worst);
    printf("{\"frames\": %lld, \"sampled_frames\": %lld, \"p50_ms\": %.2f, \"p99_ms\": %.2f, "
           "\"p999_ms\": %.2f, \"max_ms\": %.2f, \"slowest_updates\": [",
           (long long)frames, (long long)frames, pct(0.50), pct(0.99), pct(0.999),
           n_lat ? (double)latencies[n_lat - 1] / 1000.0 : -1.0);
    for (size_t i = 0; i < m && i < 5; i++)
        printf("%s{\"at_s\": %.2f, \"ms\": %.1f}", i ? ", " : "",
               (double)(list[i].sent - window_start) / 1e9, (double)list[i].worst / 1e6);
    printf("], \"closes\": {");
    for (int i = 0; i < n_closes; i++)
        printf("%s\"%d\": %lld", i ? ", " : "", closes[i].code, (long long)closes[i].count);
    printf("}, \"lost\": %lld, \"pings\": %lld}\n", (long long)lost, (long long)pings);
    fflush(stdout);
    free(list);
}

static char line[4096];
static size_t line_len;

/* Reads what stdin has; returns 1 once "stop" or EOF came. */
static int on_stdin(void) {
    ssize_t k = read(0, line + line_len, sizeof line - 1 - line_len);
    if (k < 0) return errno == EAGAIN || errno == EINTR ? 0 : 1;
    if (k == 0) return 1;
    line_len += (size_t)k;
    char *nl;
    while ((nl = memchr(line, '\n', line_len)) != NULL) {
        *nl = 0;
        char word[16] = {0};
        long long arg = 0;
        int got = sscanf(line, "%15s %lld", word, &arg);
        if (got >= 1 && strcmp(word, "stop") == 0) return 1;
        if (got == 2 && strcmp(word, "start") == 0) reset_results(arg);
        size_t used = (size_t)(nl - line) + 1;
        memmove(line, nl + 1, line_len - used);
        line_len -= used;
    }
    if (line_len == sizeof line - 1) line_len = 0; /* a line too long to be a command */
    return 0;
}

/* -- main ----------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
    use_rx_stamp = 1;
    nap_us = 1000;
    for (int opt; (opt = getopt(argc, argv, "rn:p:k:o:sq:a:")) != -1;) {
        if (opt == 'r') use_rx_stamp = 0;
        else if (opt == 'n') nap_us = atol(optarg);
        else if (opt == 'p') path = optarg;
        else if (opt == 'k') topic_tables = atoi(optarg);
        else if (opt == 'o') marker_file = optarg;
        else if (opt == 's') snapshot_rows = 1;
        else if (opt == 'q') frame_file = optarg;
        else if (opt == 'a') per_address = atoi(optarg);
        else return 2;
    }
    argc -= optind - 1;
    argv += optind - 1;
    if (argc != 6 || nap_us < 0 || nap_us >= 1000000) {
        fprintf(stderr,
                "usage: %s [-r] [-n NAP_US] [-p PATH] [-k TABLES] [-o FILE [-s]] [-q FILE] "
                "[-a PER_ADDRESS] KIND HOST:PORT N STALLED TOPIC\n",
                argv[0]);
        return 2;
    }
    kind = strcmp(argv[1], "edge") == 0       ? KIND_EDGE
           : strcmp(argv[1], "socketio") == 0 ? KIND_SOCKETIO
                                              : KIND_PLAIN;
    char host[256];
    const char *colon = strrchr(argv[2], ':');
    if (!colon || (size_t)(colon - argv[2]) >= sizeof host) {
        fprintf(stderr, "wsclients: HOST:PORT expected\n");
        return 2;
    }
    memcpy(host, argv[2], (size_t)(colon - argv[2]));
    host[colon - argv[2]] = 0;
    snprintf(host_header, sizeof host_header, "%s", argv[2]);
    n_clients = atoi(argv[3]);
    n_stalled = atoi(argv[4]);
    topic = argv[5];
    for (const char *p = topic; (p = strchr(p, ',')) != NULL; p++) n_topics++;
    if (per_address < 0 || (per_address && n_clients > per_address * 250 * 254)) {
        fprintf(stderr, "wsclients: -a: too many clients for 127.0.x.y\n");
        return 2;
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0) {
        fprintf(stderr, "wsclients: cannot resolve %s\n", argv[2]);
        return 2;
    }
    memcpy(&addr, ai->ai_addr, ai->ai_addrlen);
    addr_len = ai->ai_addrlen;
    freeaddrinfo(ai);
    if (getrandom(&rng_state, sizeof rng_state, 0) != sizeof rng_state || !rng_state)
        rng_state = (uint64_t)now_ns() | 1;
    raise_nofile();
    measure_clock_offset();
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) die("epoll_create1");
    conns = calloc((size_t)(n_clients > 0 ? n_clients : 1), sizeof *conns);
    if (!conns) die("calloc");
    for (int i = 0; i < n_clients; i++) {
        conns[i].fd = -1;
        conns[i].stall = i < n_stalled;
    }
    cap_lat = 1u << 20;
    latencies = xrealloc(NULL, cap_lat * sizeof *latencies);
    worst_grow();

    enum { MAX_EVENTS = 512 };
    struct epoll_event events[MAX_EVENTS];

    /* Connect and subscribe, at most CONCURRENCY at a time; a slot is held across retries. */
    int next = 0;
    while (ready_count < n_clients) {
        int64_t now = now_ns();
        while (active < CONCURRENCY && next < n_clients) {
            active++;
            start_attempt(&conns[next++], now);
        }
        int n = epoll_wait(epfd, events, MAX_EVENTS, 20);
        if (n < 0 && errno != EINTR) die("epoll_wait");
        for (int e = 0; e < n; e++) on_event(&conns[events[e].data.u64], events[e].events);
        now = now_ns();
        for (int i = 0; i < next; i++) {
            Conn *c = &conns[i];
            if (c->state == ST_WAITING && now >= c->retry_at)
                start_attempt(c, now);
            else if ((c->state == ST_CONNECTING || c->state == ST_HANDSHAKE ||
                      c->state == ST_OPEN) && now >= c->deadline)
                fail_attempt(c, now);
        }
    }
    printf("connected\n");
    fflush(stdout);

    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = STDIN_TAG};
    int stdin_polled = epoll_ctl(epfd, EPOLL_CTL_ADD, 0, &ev) == 0;
    if (stdin_polled) fcntl(0, F_SETFL, fcntl(0, F_GETFL) | O_NONBLOCK);
    int done = 0;
    while (!done) {
        if (!stdin_polled) { /* a regular file or /dev/null: its commands are all there */
            done = on_stdin();
            continue;
        }
        int n = epoll_wait(epfd, events, MAX_EVENTS, -1);
        if (n < 0 && errno != EINTR) die("epoll_wait");
        for (int e = 0; e < n; e++) {
            if (events[e].data.u64 == STDIN_TAG) {
                if (on_stdin()) done = 1;
            } else {
                Conn *c = &conns[events[e].data.u64];
                if (c->fd >= 0) on_event(c, events[e].events);
            }
        }
        if (nap_us && n < MAX_EVENTS) { /* let a pass of the server land: fewer wakeups */
            struct timespec nap = {0, nap_us * 1000};
            nanosleep(&nap, NULL);
        }
    }
    if (marker_file) {
        FILE *f = fopen(marker_file, "wb");
        if (!f || fwrite(marks, sizeof *marks, n_marks, f) != n_marks || fclose(f) != 0)
            die(marker_file);
    }
    if (frame_file) {
        char topics_file[4096];
        snprintf(topics_file, sizeof topics_file, "%s.topics", frame_file);
        FILE *f = fopen(frame_file, "wb");
        if (!f || fwrite(flog, sizeof *flog, n_flog, f) != n_flog || fclose(f) != 0)
            die(frame_file);
        f = fopen(topics_file, "w");
        if (!f) die(topics_file);
        for (int i = 0; i < n_names; i++) fprintf(f, "%s\n", names[i]);
        if (fclose(f) != 0) die(topics_file);
    }
    print_results();
    return 0;
}

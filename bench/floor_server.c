/* The floor of a fan-out on this machine: a websocket "edge" with no hub behind it (issue #34.6).
 *
 *   floor_server PORT
 *
 * bench/fanout_floor.py runs it behind the SHIPPED deploy/nginx.conf in place of the two edges,
 * with bench/wsclients.c as the overlays and the phones, to measure what writing one frame to
 * N sockets through nginx costs here when the edge's own work is nothing: one epoll loop, every
 * frame built once per command and written with one send() per client, no parsing of anything
 * the clients send, no Python. What it cannot go below, the hub's edges cannot either.
 *
 * A connection is an overlay when its request line carries "token=" (the broadcast's clients
 * use a token; nginx passes the URI through), else a phone. Its handshake is answered with a
 * fixed 101 (wsclients does not check Sec-WebSocket-Accept); after that, what a client sends
 * (nothing, in plain mode) is read and dropped.
 *
 * Commands on stdin, one a line; each answered on stdout with one line once it is done:
 *   count               -> "overlays N phones M"
 *   event G K NS SIZE   -> to every overlay i with i mod G == K (one table's overlays), one
 *                          text frame of SIZE bytes stamped NS ("t0" as wsclients reads it);
 *                          -> "sent N"
 *   burst NS SIZE       -> the same frame to every phone -> "sent N"
 * A send that would block is dropped (counted in "dropped" of the answer): a floor, not a
 * server. Build: cc -O2 -o floor_server floor_server.c (fanout_floor.py does it on demand). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAXC 40000
#define HEAD 4096

typedef struct {
    int fd;
    int open;     /* handshake answered */
    int overlay;  /* 1: overlay, 0: phone */
    size_t len;
    char buf[HEAD];
} Conn;

static Conn *conns[65536];
static int overlays[MAXC], phones[MAXC];
static int n_overlays, n_phones;

static void nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

static size_t frame(unsigned char *out, const char *payload, size_t n) {
    size_t h = 0;
    out[h++] = 0x81;
    if (n < 126) {
        out[h++] = (unsigned char)n;
    } else {
        out[h++] = 126;
        out[h++] = (unsigned char)(n >> 8);
        out[h++] = (unsigned char)n;
    }
    memcpy(out + h, payload, n);
    return h + n;
}

static size_t payload(char *out, long long ns, int size) {
    int n = snprintf(out, 256, "{\"type\":\"delta\",\"ops\":[{\"op\":\"replace\",\"path\":\"/t0\","
                                "\"value\":%lld}],\"pad\":\"",
                     ns);
    while (n < size - 2) out[n++] = 'x';
    out[n++] = '"';
    out[n++] = '}';
    return (size_t)n;
}

static void send_all(const int *fds, int count, int groups, int group, long long ns, int size) {
    static char body[65536];
    static unsigned char wire[65600];
    if (size < 96) size = 96;
    if (size > 60000) size = 60000;
    size_t n = frame(wire, body, payload(body, ns, size));
    int sent = 0, dropped = 0;
    for (int i = 0; i < count; i++) {
        if (groups > 0 && i % groups != group) continue;
        ssize_t w = send(fds[i], wire, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w == (ssize_t)n) sent++;
        else dropped++;
    }
    printf("sent %d dropped %d\n", sent, dropped);
    fflush(stdout);
}

static void command(char *line) {
    long long ns;
    int g, k, size;
    if (strncmp(line, "count", 5) == 0) {
        printf("overlays %d phones %d\n", n_overlays, n_phones);
        fflush(stdout);
    } else if (sscanf(line, "event %d %d %lld %d", &g, &k, &ns, &size) == 4) {
        send_all(overlays, n_overlays, g, k, ns, size);
    } else if (sscanf(line, "burst %lld %d", &ns, &size) == 2) {
        send_all(phones, n_phones, 0, 0, ns, size);
    } else {
        printf("? %s\n", line);
        fflush(stdout);
    }
}

static void on_data(Conn *c) {
    char drop[4096];
    if (c->open) {
        while (recv(c->fd, drop, sizeof drop, MSG_DONTWAIT) > 0) {
        }
        return;
    }
    ssize_t r = recv(c->fd, c->buf + c->len, HEAD - 1 - c->len, MSG_DONTWAIT);
    if (r <= 0) return;
    c->len += (size_t)r;
    c->buf[c->len] = 0;
    if (!strstr(c->buf, "\r\n\r\n")) return;
    char *eol = strstr(c->buf, "\r\n");
    *eol = 0;
    c->overlay = strstr(c->buf, "token=") != NULL;
    static const char ok[] =
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        "Sec-WebSocket-Accept: floor\r\n\r\n";
    if (send(c->fd, ok, sizeof ok - 1, MSG_NOSIGNAL) != (ssize_t)(sizeof ok - 1)) return;
    c->open = 1;
    if (c->overlay && n_overlays < MAXC) overlays[n_overlays++] = c->fd;
    if (!c->overlay && n_phones < MAXC) phones[n_phones++] = c->fd;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: floor_server PORT\n");
        return 2;
    }
    int lfd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    a.sin_addr.s_addr = htonl(0x7f000001);
    if (bind(lfd, (struct sockaddr *)&a, sizeof a) || listen(lfd, 4096)) {
        perror("floor_server");
        return 1;
    }
    nonblock(lfd);
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
    epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev);
    ev.data.fd = 0;
    epoll_ctl(ep, EPOLL_CTL_ADD, 0, &ev);
    printf("ready\n");
    fflush(stdout);
    static char line[512];
    size_t ll = 0;
    struct epoll_event got[512];
    for (;;) {
        int n = epoll_wait(ep, got, 512, -1);
        for (int i = 0; i < n; i++) {
            int fd = got[i].data.fd;
            if (fd == lfd) {
                int c;
                while ((c = accept(lfd, NULL, NULL)) >= 0) {
                    if (c >= 65536) {
                        close(c);
                        continue;
                    }
                    nonblock(c);
                    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    conns[c] = calloc(1, sizeof(Conn));
                    conns[c]->fd = c;
                    struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, c, &ce);
                }
            } else if (fd == 0) {
                ssize_t r = read(0, line + ll, sizeof line - 1 - ll);
                if (r <= 0) return 0;
                ll += (size_t)r;
                char *nl;
                while ((nl = memchr(line, '\n', ll)) != NULL) {
                    *nl = 0;
                    command(line);
                    size_t rest = ll - (size_t)(nl + 1 - line);
                    memmove(line, nl + 1, rest);
                    ll = rest;
                }
            } else if (conns[fd]) {
                on_data(conns[fd]);
            }
        }
    }
}

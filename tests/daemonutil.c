/* SPDX-License-Identifier: MIT */
/*
 * A real perflibd for tests and benches: see daemonutil.h.  Kept free of
 * cmocka so the benches can link it.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include "daemonutil.h"

#define RETRY_US        10000   /* between two tries while waiting for perflibd */

static int path_in(char *buf, size_t size, const char *dir, const char *name)
{
        if ((size_t) snprintf(buf, size, "%s/%s", dir, name) >= size)
                return -ENAMETOOLONG;
        return 0;
}

int du_init(struct du_daemon *d, const char *run)
{
        int r;

        if ((r = path_in(d->sock, sizeof(d->sock), run, "perflibd.sock")) < 0 ||
            (r = path_in(d->registry, sizeof(d->registry), run, "registry")) < 0 ||
            (r = path_in(d->plugins, sizeof(d->plugins), run, "plugins")) < 0)
                return r;
        if ((mkdir(d->registry, 0755) < 0 && errno != EEXIST) ||
            (mkdir(d->plugins, 0755) < 0 && errno != EEXIST))
                return -errno;
        d->pid = 0;
        return 0;
}

int du_mkdtemp(struct du_daemon *d, char *dir, size_t size, const char *prefix)
{
        const char *tmp = getenv("TMPDIR");

        if ((size_t) snprintf(dir, size, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
                              prefix) >= size)
                return -ENAMETOOLONG;
        /* A root perflibd runs plugins as nobody, whose hosts must reach it. */
        if (!mkdtemp(dir) || chmod(dir, 0755) < 0 || setenv("PERFLIB_RUNTIME_DIR", dir, 1) < 0)
                return -errno;
        return du_init(d, dir);
}

/* stderr into path; not the journal, even under systemd, so that the lines can be counted. */
static int log_to(const char *path)
{
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        unsetenv("JOURNAL_STREAM");
        if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
                return -1;
        close(fd);
        return 0;
}

static void exec_server(const struct du_daemon *d, const char *bin,
                        const char *const *launcher)
{
        const char *argv[32];
        size_t n = 0;

        for (; launcher && launcher[n] && n < 10; n++)
                argv[n] = launcher[n];
        argv[n++] = bin;
        argv[n++] = "--registry-dir";
        argv[n++] = d->registry;
        argv[n++] = "--plugin-dir";
        argv[n++] = d->plugins;
        for (size_t i = 0; d->args && d->args[i] && i < 16; i++)
                argv[n++] = d->args[i];
        argv[n] = NULL;
        if (d->log && log_to(d->log) < 0)
                _exit(126);
        if (d->in_child && d->in_child() != 0)
                _exit(126);
        execvp(argv[0], (char **) argv);
        _exit(127);
}

int du_start(struct du_daemon *d, const char *bin, const char *const *launcher)
{
        char *def = NULL;
        pid_t pid;

        if (!bin && asprintf(&def, "%s/server-glue/perflibd", getenv("top_builddir")) < 0)
                return -ENOMEM;
        pid = fork();
        if (pid == 0)
                exec_server(d, bin ? bin : def, launcher);
        free(def);
        if (pid < 0)
                return -errno;
        d->pid = pid;
        return 0;
}

int du_connect(const struct du_daemon *d, int timeout_ms, struct pv2_client **ret)
{
        struct pv2_client *c;

        for (int i = 0; i < 10 * 1000000 / RETRY_US; i++) {
                if (pv2_client_connect_unix(d->sock, timeout_ms, &c) == 0) {
                        *ret = c;
                        return 0;
                }
                usleep(RETRY_US);
        }
        return -ETIMEDOUT;
}

int du_stop(struct du_daemon *d)
{
        int status;

        if (d->pid <= 0)
                return -ESRCH;
        if (kill(d->pid, SIGTERM) < 0 || waitpid(d->pid, &status, 0) != d->pid)
                return -errno;
        d->pid = 0;
        return status;
}

int du_listed(struct pv2_client *c, const GUID *g)
{
        struct pv2_out o = { 0 };
        int found = 0;

        if (pv2_enumerate_counterset(c, NULL, 256, &o) != ERROR_SUCCESS)
                return -EIO;
        /* A short buffer would hide countersets: 256 must hold them all. */
        if (o.rtn_size != o.out_size)
                found = -EIO;
        for (uint32_t i = 0; i < o.out_size && found == 0; i++)
                found = memcmp(o.data + 16 * i, g, 16) == 0;
        pv2_out_done(&o);
        return found;
}

int du_wait_listed(struct pv2_client *c, const GUID *g, bool listed, int timeout_ms)
{
        for (long i = 0; i <= (long) timeout_ms * 1000 / RETRY_US; i++) {
                int r = du_listed(c, g);

                if (r < 0)
                        return r;
                if ((r == 1) == listed)
                        return 0;
                usleep(RETRY_US);
        }
        return -ETIMEDOUT;
}

int du_run(const char *fmt, ...)
{
        va_list ap;
        char *cmd;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&cmd, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        r = system(cmd);
        free(cmd);
        return r;
}

pid_t du_spawn_provider(void (*fn)(int ready_fd, int cmd_fd, void *arg), void *arg,
                        int *ret_wfd)
{
        int p[2], ready[2] = { -1, -1 };
        pid_t pid;
        char c;

        if (pipe(p) < 0)
                return -errno;
        if (pipe(ready) < 0 || (pid = fork()) < 0) {
                int r = -errno;

                close(p[0]);
                close(p[1]);
                if (ready[0] >= 0) {
                        close(ready[0]);
                        close(ready[1]);
                }
                return r;
        }
        if (pid == 0) {
                close(p[1]);
                close(ready[0]);
                fn(ready[1], p[0], arg);
                _exit(0);
        }
        close(p[0]);
        close(ready[1]);
        if (read(ready[0], &c, 1) != 1) {
                close(ready[0]);
                close(p[1]);
                waitpid(pid, NULL, 0);
                return -ECHILD;
        }
        close(ready[0]);
        *ret_wfd = p[1];
        return pid;
}

/* impacket's bind: max frags 4280, one context, PerflibV2 over NDR. */
static const uint8_t bind_pdu[72] = {
        5, 0, 11, 3, 0x10, 0, 0, 0, 72, 0, 0, 0, 1, 0, 0, 0,
        0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0,
        0, 0, 1, 0,
        0xc5, 0x86, 0x5a, 0xda, 0xc2, 0x12, 0x43, 0x49,
        0xab, 0x30, 0x7f, 0x74, 0xa8, 0x13, 0xd8, 0x53, 1, 0, 0, 0,
        0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11,
        0x9f, 0xe8, 0x08, 0x00, 0x2b, 0x10, 0x48, 0x60, 2, 0, 0, 0,
};

int du_raw_connect(const struct du_daemon *d)
{
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        struct timeval tv = { .tv_sec = 10 };
        int fd;

        if (strlen(d->sock) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, d->sock);
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* No send may hang the caller: a server that stops reading fails it. */
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0) {
                int e = -errno;

                close(fd);
                return e;
        }
        return fd;
}

int du_raw_bind(int fd)
{
        uint8_t ack[256];

        if (send(fd, bind_pdu, sizeof(bind_pdu), MSG_NOSIGNAL) != (ssize_t) sizeof(bind_pdu))
                return -EIO;
        if (recv(fd, ack, sizeof(ack), 0) < 24 || ack[2] != 12)        /* bind_ack */
                return -EPROTO;
        return 0;
}

void du_request_header(uint8_t h[24], uint8_t flags, uint16_t frag_len, uint32_t hint)
{
        memset(h, 0, 24);
        h[0] = 5;
        h[3] = flags;
        h[4] = 0x10;
        h[8] = (uint8_t) frag_len;
        h[9] = (uint8_t) (frag_len >> 8);
        h[12] = 2;                                      /* call_id */
        for (int i = 0; i < 4; i++)
                h[16 + i] = (uint8_t) (hint >> (8 * i));
        h[22] = 7;
}

int du_closed(int fd, int timeout_ms)
{
        uint8_t buf[4096];
        struct pollfd p = { .fd = fd, .events = POLLIN };
        ssize_t n;

        if (poll(&p, 1, timeout_ms) <= 0)
                return 0;
        n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        return n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
}

long du_status_kib(pid_t pid, const char *field)
{
        char path[64], line[256];
        size_t len = strlen(field);
        long kib = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (strncmp(line, field, len) == 0 && line[len] == ':') {
                        kib = strtol(line + len + 1, NULL, 10);
                        break;
                }
        fclose(f);
        return kib;
}

int du_count_lines(const char *path, const char *needle)
{
        FILE *f = fopen(path, "re");
        char line[1024];
        int n = 0;

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                n += strstr(line, needle) != NULL;
        fclose(f);
        return n;
}

int du_flood_fragment(int fd, unsigned i, uint8_t *pdu)
{
        du_request_header(pdu, i == 0 ? 1 : 0, 24 + DU_FLOOD_STUB, 63u << 20);
        if (send(fd, pdu, 24 + DU_FLOOD_STUB, MSG_NOSIGNAL) != 24 + DU_FLOOD_STUB)
                return -1;
        return du_closed(fd, 0) ? -1 : 0;
}

int du_value_of(struct pv2_client *c, const GUID *g, const char *inst, uint32_t counter,
                uint64_t *ret_value)
{
        size_t n = strlen(inst) + 1, size = (40 + 2 * n + 7) & ~(size_t) 7;
        struct pv2_out o = { 0 };
        uint64_t v = UINT64_MAX;
        uint8_t ids[128] = { 0 };
        struct pv2_handle h;
        int r = -EIO;

        if (size > sizeof(ids))
                return -EINVAL;
        memcpy(ids, g, 16);
        ids[20] = (uint8_t) size;
        memcpy(ids + 24, &counter, 4);
        memset(ids + 28, 0xFF, 4);                              /* InstanceId: any */
        for (size_t i = 0; i < n; i++)
                ids[40 + 2 * i] = (uint8_t) inst[i];
        if (pv2_open_query(c, NULL, &h) != ERROR_SUCCESS)
                return -EIO;
        if (pv2_validate_counters(c, &h, ids, (uint32_t) size, 1) == ERROR_SUCCESS &&
            pv2_query_counter_data(c, &h, 1 << 16, &o) == ERROR_SUCCESS) {
                if (o.out_size >= 80 && du_le32(o.data + 48) == ERROR_SUCCESS)
                        v = du_le64(o.data + 72);
                r = 0;
        }
        pv2_out_done(&o);
        if (pv2_close_query(c, &h) != ERROR_SUCCESS)
                r = -EIO;
        if (r == 0)
                *ret_value = v;
        return r;
}

int du_count_countersets(struct pv2_client *c)
{
        struct pv2_out o = { 0 };
        int n = -EIO;

        if (pv2_enumerate_counterset(c, NULL, 65536, &o) == ERROR_SUCCESS &&
            o.rtn_size == o.out_size)
                n = (int) o.out_size;
        pv2_out_done(&o);
        return n;
}

int du_drop_to(uid_t uid)
{
        gid_t gid = (gid_t) uid;

        if (uid == 0)
                return 0;
        if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
            setresuid(uid, uid, uid) < 0)
                return -errno;
        /* Changing credentials cleared it: never outlive the test. */
        return prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ? -errno : 0;
}

int du_free_port(void)
{
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(a);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), r = 0;

        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *) &a, sizeof(a)) < 0 ||
            getsockname(fd, (struct sockaddr *) &a, &len) < 0)
                r = -errno;
        close(fd);
        return r < 0 ? r : ntohs(a.sin_port);
}

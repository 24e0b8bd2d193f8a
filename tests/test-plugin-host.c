/* SPDX-License-Identifier: MIT */
/*
 * perflib-plugin-host started directly, as perflibd's supervisor starts it
 * (host-proto.h): a private copy of a test plugin on descriptor 3, a
 * SOCK_SEQPACKET socket on 4.  What it says on the socket and how it ends,
 * for a good plugin, the bad ones, one whose start fails, ones that crash
 * or run out of memory, a parent that dies, and --user.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <cmocka.h>

#include "host-proto.h"
#include "plugin-image.h"
#include "test-plugin.h"
#include "testutil.h"

#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif

extern char **environ;

/* Long enough for a loaded machine and a sanitizer build; never reached when all is well. */
#define WAIT_MS 20000

/* One host, as its supervisor sees it. */
struct host {
        pid_t pid;
        int sock;                       /* our end of its status socket */
        char msgs[64][PLUGIN_HOST_MSG_MAX + 1];
        size_t n;
};

/* A private copy of the built module, as the supervisor makes it; fd > 4. */
static int module_image(const char *module)
{
        char path[PATH_MAX], name[NAME_MAX];
        struct plugin_image img;
        struct file_id id;
        struct stat st;
        int fd;

        snprintf(path, sizeof(path), "%s/%s.so", TEST_PLUGIN_BUILD_DIR, module);
        snprintf(name, sizeof(name), "%s.so", module);
        assert_int_equal(stat(path, &st), 0);
        file_id_from_stat(&st, &id);
        assert_int_equal(plugin_image_copy(path, name, &id, &img), 0);
        fd = fcntl(img.fd, F_DUPFD_CLOEXEC, 10);
        assert_true(fd > 4);
        plugin_image_close(&img);
        return fd;
}

/* A memfd holding text: no shared object, whatever its name says. */
static int text_image(const char *text)
{
        int fd = memfd_create("x.so", MFD_CLOEXEC);

        assert_true(fd >= 0);
        assert_int_equal(write(fd, text, strlen(text)), (ssize_t) strlen(text));
        return fd;
}

/*
 * Starts the host on image (closed here) as file, with the extra
 * arguments; its status socket is h->sock.  image -1: no descriptors 3
 * and 4.  No cmocka here: parent_dies calls it in a child.
 */
static int host_spawn(struct host *h, int image, const char *file, pid_t parent,
                      const char *const *extra)
{
        posix_spawn_file_actions_t fa;
        char file_arg[PATH_MAX], parent_arg[32];
        const char *argv[16] = { PLUGIN_HOST_PATH, file_arg, parent_arg };
        size_t n = 3;
        int sv[2], r;

        snprintf(file_arg, sizeof(file_arg), "--file=%s", file);
        snprintf(parent_arg, sizeof(parent_arg), "--parent=%ld", (long) parent);
        for (size_t i = 0; extra && extra[i] && n < 15; i++)
                argv[n++] = extra[i];
        memset(h, 0, sizeof(*h));
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        r = posix_spawn_file_actions_init(&fa);
        if (r == 0 && image >= 0)
                r = posix_spawn_file_actions_adddup2(&fa, image, PLUGIN_HOST_IMAGE_FD);
        if (r == 0 && image >= 0)
                r = posix_spawn_file_actions_adddup2(&fa, sv[1], PLUGIN_HOST_STATUS_FD);
        if (r == 0)
                r = posix_spawn(&h->pid, PLUGIN_HOST_PATH, &fa, NULL, (char **) argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        close(sv[1]);
        if (image >= 0)
                close(image);
        if (r != 0) {
                close(sv[0]);
                return -r;
        }
        h->sock = sv[0];
        return 0;
}

static void host_start_as(struct host *h, int image, const char *file, pid_t parent,
                          const char *const *extra)
{
        assert_int_equal(host_spawn(h, image, file, parent, extra), 0);
}

static void host_start(struct host *h, const char *module, const char *const *extra)
{
        char file[NAME_MAX];

        snprintf(file, sizeof(file), "%s.so", module);
        host_start_as(h, module_image(module), file, getpid(), extra);
}

/* The next message into h->msgs, as a string; false at hang-up or after WAIT_MS. */
static bool host_next(struct host *h)
{
        struct pollfd p = { .fd = h->sock, .events = POLLIN };
        ssize_t n;

        if (h->n == sizeof(h->msgs) / sizeof(h->msgs[0]) || poll(&p, 1, WAIT_MS) != 1)
                return false;
        n = recv(h->sock, h->msgs[h->n], PLUGIN_HOST_MSG_MAX, MSG_DONTWAIT);
        if (n <= 0)
                return false;
        h->msgs[h->n++][n] = '\0';
        return true;
}

/* Reads up to the first message starting with prefix, which must come; returns it. */
static const char *host_until(struct host *h, const char *prefix)
{
        while (host_next(h))
                if (strncmp(h->msgs[h->n - 1], prefix, strlen(prefix)) == 0)
                        return h->msgs[h->n - 1];
        for (size_t i = 0; i < h->n; i++)
                fprintf(stderr, "host said: %s\n", h->msgs[i]);
        fail_msg("no message starting with \"%s\"", prefix);
        return NULL;
}

/* How many messages read so far are exactly text. */
static size_t host_said(const struct host *h, const char *text)
{
        size_t n = 0;

        for (size_t i = 0; i < h->n; i++)
                n += strcmp(h->msgs[i], text) == 0;
        return n;
}

/* The host's wait status once it ended, which must be within ms. */
static int host_end(struct host *h, int ms)
{
        int status;
        pid_t r;

        for (int i = 0; i < ms; i++) {
                r = waitpid(h->pid, &status, WNOHANG);
                assert_true(r >= 0);
                if (r == h->pid) {
                        close(h->sock);
                        h->pid = 0;
                        return status;
                }
                usleep(1000);
        }
        kill(h->pid, SIGKILL);
        fail_msg("host %ld still running after %d ms", (long) h->pid, ms);
        return -1;
}

static void assert_exited(int status, int code)
{
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), code);
}

static void assert_killed(int status, int signo)
{
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), signo);
}

/* ---- the provider the good plugin publishes in its host ---- */

struct found {
        pid_t pid;
        char path[PATH_MAX];
        struct pl_reader *reader;
};

static int find_host_provider(const char *socket_path, void *userdata)
{
        struct found *f = userdata;
        struct pl_reader *r = NULL;
        pid_t pid;

        assert_int_equal(pl_reader_open(socket_path, &r), 0);
        assert_int_equal(pl_reader_peer_pid(r, &pid), 0);
        if (pid != f->pid) {
                pl_reader_close(r);
                return 0;
        }
        snprintf(f->path, sizeof(f->path), "%s", socket_path);
        f->reader = r;
        return 1;
}

/*
 * The host's provider is announced below dir and reads as test-plugins
 * reads it in-process: the values the plugin set, its reference counter
 * dereferenced by the host's collect service.  Its socket path is kept.
 */
static void check_good_values(const char *dir, pid_t pid, char socket_path[PATH_MAX])
{
        struct found f = { .pid = pid };
        const GUID provider = TP_PROVIDER_GUID(1), cset = TP_CSET_GUID(1);
        const struct pl_counterset *cs = NULL;
        struct pl_snapshot *s = NULL;
        uint32_t header_pid;
        GUID guid;

        assert_int_equal(pl_scan(dir, find_host_provider, &f, NULL), 1);
        assert_int_equal(pl_reader_provider(f.reader, &guid, &header_pid), 0);
        assert_memory_equal(&guid, &provider, sizeof(guid));
        assert_int_equal(header_pid, (uint32_t) pid);
        assert_int_equal(pl_reader_find_counterset(f.reader, &cset, &cs), 0);
        assert_int_equal(pl_reader_snapshot(f.reader, cs->index, PL_SNAPSHOT_COLLECT, &s), 0);
        assert_int_equal(s->n_instances, 1);
        assert_false(s->refs_stale);
        assert_int_equal(s->instances[0].instance_id, TP_INSTANCE_ID);
        assert_int_equal(wcscmp(s->instances[0].name, TP_INSTANCE_NAME), 0);
        assert_int_equal(s->instances[0].num_values, 3);
        assert_int_equal(s->instances[0].values[0], TP_VALUE_1(1));
        assert_true(s->instances[0].values[1] == TP_VALUE_2);
        assert_true(s->instances[0].values[2] == TP_VALUE_REF);
        pl_snapshot_free(s);
        pl_reader_close(f.reader);
        memcpy(socket_path, f.path, PATH_MAX);
}

/*
 * NAME, then READY after what good publishes (and its LOG line: nothing
 * else), and its provider readable; *socket_path is where.
 */
static void good_ready(struct host *h, const char *dir, char socket_path[PATH_MAX])
{
        assert_string_equal(host_until(h, "READY "), "READY good");
        assert_int_equal(host_said(h, "NAME good"), 1);
        assert_int_equal(host_said(h, "PUB P " TP_PROVIDER_TEXT(1)), 1);
        assert_int_equal(host_said(h, "PUB C " TP_CSET_TEXT(1)), 1);
        assert_int_equal(h->n, 5);
        check_good_values(dir, h->pid, socket_path);
}

/* SIGTERM: STOPPED, exit 0, and the provider's socket gone. */
static void good_stop(struct host *h, const char *socket_path)
{
        assert_int_equal(kill(h->pid, SIGTERM), 0);
        assert_string_equal(host_until(h, "STOPPED"), "STOPPED");
        assert_exited(host_end(h, WAIT_MS), 0);
        assert_int_equal(access(socket_path, F_OK), -1);
        assert_int_equal(errno, ENOENT);
}

/* ---- the tests ---- */

static void good(void **state)
{
        char text[PLUGIN_HOST_MSG_MAX], socket_path[PATH_MAX];
        const char *dir = getenv("PERFLIB_RUNTIME_DIR");
        struct host h;

        (void) state;
        host_start(&h, "good", NULL);
        /* The plugin's own log line, LOG_NOTICE, with the runtime directory it was given. */
        snprintf(text, sizeof(text), "LOG 5 %s (runtime dir %s)", TP_HELLO, dir);
        assert_string_equal(host_until(&h, "LOG "), text);
        good_ready(&h, dir, socket_path);
        good_stop(&h, socket_path);
}

/* The supervisor hanging up its end stops the plugin as SIGTERM does. */
static void hang_up_stops(void **state)
{
        struct host h;
        int status;

        (void) state;
        host_start(&h, "good", NULL);
        host_until(&h, "READY ");
        assert_int_equal(shutdown(h.sock, SHUT_RDWR), 0);
        status = host_end(&h, WAIT_MS);
        assert_exited(status, 0);
        assert_int_equal(tu_count_providers(NULL), 0);
}

/* Each bad module and the reason the host gives, as plugins.c logs it. */
static const struct {
        const char *module;
        const char *reason;
} bad[] = {
        { "bad-abi", "descriptor has ABI 2, this server knows ABI 1" },
        { "bad-size", "descriptor size 8 is less than " },
        { "bad-no-entry", "no entry point perflib_plugin_entry_v1: undefined symbol: " },
        { "bad-null", "perflib_plugin_entry_v1 returned no descriptor" },
        { "bad-no-stop", "descriptor has no stop function" },
        { "bad-undefined", "cannot load: " },
};

static void assert_refused(struct host *h, const char *reason, const char *also)
{
        const char *msg = host_until(h, "REFUSED ");

        assert_memory_equal(msg + strlen("REFUSED "), reason, strlen(reason));
        if (also)
                assert_non_null(strstr(msg, also));
        /* The supervisor adds who and what now; the image's path means nothing to a reader. */
        assert_null(strstr(msg, "skipped"));
        assert_null(strstr(msg, "/proc/"));
        assert_int_equal(h->n, 1);
        assert_exited(host_end(h, WAIT_MS), PLUGIN_HOST_EXIT_REFUSED);
}

static void refused(void **state)
{
        struct host h;

        (void) state;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                host_start(&h, bad[i].module, NULL);
                assert_refused(&h, bad[i].reason,
                               strcmp(bad[i].module, "bad-undefined") == 0 ?
                               "undefined symbol: tp_no_such_function" : NULL);
        }
        host_start_as(&h, text_image("#!/bin/sh\n# not a shared object\n"), "x.so", getpid(),
                      NULL);
        assert_refused(&h, "cannot load: ", NULL);
}

/* bad-start logs at LOG_EMERG from start, which the host clamps, and fails. */
static void start_fails(void **state)
{
        struct host h;

        (void) state;
        host_start(&h, "bad-start", NULL);
        assert_string_equal(host_until(&h, "FAILED "), "FAILED 5");
        assert_int_equal(host_said(&h, "NAME bad"), 1);
        assert_int_equal(host_said(&h, "LOG 2 " TP_START_FAILS), 1);
        assert_int_equal(h.n, 3);
        assert_exited(host_end(&h, WAIT_MS), PLUGIN_HOST_EXIT_FAILED);
        assert_int_equal(tu_count_providers(NULL), 0);
}

/*
 * The host dies with the process that started it: a middle process starts
 * it, waits for READY and exits.  We are the subreaper, so the orphan
 * comes to us, and must come killed, at once.
 */
static void parent_dies(void **state)
{
        int image = module_image("good"), pids[2], status;
        struct host h;
        pid_t middle;
        double t;

        (void) state;
        assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
        assert_int_equal(pipe2(pids, O_CLOEXEC), 0);
        middle = fork();
        assert_true(middle >= 0);
        if (middle == 0) {
                bool ready = false;

                if (host_spawn(&h, image, "good.so", getpid(), NULL) < 0)
                        _exit(1);
                while (!ready && host_next(&h))
                        ready = strncmp(h.msgs[h.n - 1], "READY ", 6) == 0;
                _exit(ready && write(pids[1], &h.pid, sizeof(h.pid)) == sizeof(h.pid) ? 0 : 1);
        }
        close(image);
        close(pids[1]);
        memset(&h, 0, sizeof(h));
        h.sock = -1;
        assert_int_equal(read(pids[0], &h.pid, sizeof(h.pid)), sizeof(h.pid));
        close(pids[0]);
        assert_int_equal(waitpid(middle, &status, 0), middle);
        assert_exited(status, 0);
        t = tu_now();
        assert_killed(host_end(&h, 1000), SIGKILL);
        assert_true(tu_now() - t < 1.0);
        assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0), 0);
}

/* A segfault in start: FATAL 11, not memory (far from its cap), then death by SIGSEGV. */
static void segfault(void **state)
{
        static const char *const cap[] = { "--memory-max=67108864", NULL };
        struct host h;

        (void) state;
        host_start(&h, "crash-segv", cap);
        assert_string_equal(host_until(&h, "FATAL "), "FATAL 11 -");
        assert_killed(host_end(&h, WAIT_MS), SIGSEGV);
}

/* Allocating until malloc fails, under a 64 MiB cap: the abort that follows is memory's. */
static void out_of_memory(void **state)
{
        static const char *const cap[] = { "--memory-max=67108864", NULL };
        struct host h;

        (void) state;
#ifdef TEST_ASAN
        print_message("out_of_memory: skipped under AddressSanitizer, where the host sets no "
                      "RLIMIT_DATA (its shadow memory would not fit)\n");
        skip();
#endif
        host_start(&h, "crash-leak", cap);
        assert_string_equal(host_until(&h, "FATAL "), "FATAL 6 memory");
        assert_killed(host_end(&h, WAIT_MS), SIGABRT);
}

/* Wrong starts end at once, before any plugin code, with the usage status. */
static void usage(void **state)
{
        static const char *const nobody_here[] = { "--user=no-such-user-perflib", NULL };
        static const char *const stray[] = { "stray", NULL };
        struct host h;

        (void) state;
        host_start_as(&h, -1, "good.so", getpid(), NULL);
        assert_exited(host_end(&h, WAIT_MS), PLUGIN_HOST_EXIT_USAGE);
        host_start_as(&h, module_image("good"), "good", getpid(), NULL);
        assert_exited(host_end(&h, WAIT_MS), PLUGIN_HOST_EXIT_USAGE);
        host_start_as(&h, module_image("good"), "good.so", getppid(), NULL);
        assert_exited(host_end(&h, WAIT_MS), PLUGIN_HOST_EXIT_USAGE);
        host_start(&h, "good", nobody_here);
        assert_exited(host_end(&h, WAIT_MS), PLUGIN_HOST_EXIT_USAGE);
        host_start(&h, "good", stray);
        assert_exited(host_end(&h, WAIT_MS), PLUGIN_HOST_EXIT_USAGE);
        assert_int_equal(h.n, 0);
}

/*
 * Root starting the host as nobody: the provider's socket is nobody's, in
 * nobody's own directory below the server's, and reads as any other.  The
 * server's directory is /tmp's here, which nobody can walk into.
 */
static void as_nobody(void **state)
{
        static const char *const user[] = { "--user=nobody", NULL };
        const struct passwd *pw = getpwnam("nobody");
        char socket_path[PATH_MAX];
        const char *dir;
        struct stat st;
        struct host h;

        (void) state;
        if (geteuid() != 0 || !pw) {
                print_message("as_nobody: skipped, --user needs root and a user nobody\n");
                skip();
        }
        tu_runtime_teardown();
        assert_int_equal(setenv("PERFLIB_TEST_TMPDIR", "/tmp", 1), 0);
        dir = tu_runtime_setup();
        assert_int_equal(chmod(dir, 0755), 0);
        assert_int_equal(pl_runtime_make_users(dir), 0);

        host_start(&h, "good", user);
        good_ready(&h, dir, socket_path);
        assert_int_equal(stat(socket_path, &st), 0);
        assert_int_equal(st.st_uid, pw->pw_uid);
        assert_non_null(strstr(socket_path, "/" PL_RUNTIME_USERS "/"));
        good_stop(&h, socket_path);
}

/* No core files of the crashing hosts in the build tree. */
static int no_cores(void **state)
{
        struct rlimit rl = { 0, 0 };

        (void) state;
        return setrlimit(RLIMIT_CORE, &rl);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                TU_TEST(good),
                TU_TEST(hang_up_stops),
                TU_TEST(refused),
                TU_TEST(start_fails),
                TU_TEST(parent_dies),
                TU_TEST(segfault),
                TU_TEST(out_of_memory),
                TU_TEST(usage),
                TU_TEST(as_nobody),
        };

        return cmocka_run_group_tests(tests, no_cores, NULL);
}

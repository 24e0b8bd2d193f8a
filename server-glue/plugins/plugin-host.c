/* SPDX-License-Identifier: MIT */
/*
 * perflib-plugin-host: runs one plugin, out of perflibd's process.
 *
 * perflibd never runs plugin code.  For every plugin of its directory its
 * supervisor (plugins.c) starts this program, which loads the plugin's
 * image, checks its entry point, calls start, and publishes through the
 * SDK like any provider process; SIGTERM has it call stop and exit.  What
 * it tells the supervisor, and how it is started, is host-proto.h.  Users
 * never start it by hand: it needs the supervisor's descriptors.
 *
 * Exit status: 0 after stop; PLUGIN_HOST_EXIT_REFUSED, _FAILED and _USAGE
 * as host-proto.h says (a --user it cannot become, and a parent already
 * gone, count as usage: they are the supervisor's, not the plugin's);
 * 1 when the host cannot set itself up (libltdl, the runtime directory);
 * or the signal that ended the plugin.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "host-proto.h"
#include "perflib-plugin.h"
#include "plugin-load.h"
#include "plugin-pub.h"
#include "reader.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define IMAGE_PATH "/proc/self/fd/" STR(PLUGIN_HOST_IMAGE_FD)

#if defined(__SANITIZE_ADDRESS__)
#define HOST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HOST_ASAN 1
#endif
#endif

struct host_args {
        const char *file;               /* "x.so", for names and messages */
        pid_t parent;
        const char *user;               /* NULL: stay who we are */
        uint64_t memory_max;            /* bytes; 0: no cap */
};

/* RLIMIT_DATA in KiB once set (0: none); read by the fatal signal handler. */
static uint64_t data_limit_kib;

static void __attribute__((format(printf, 2, 3), noreturn))
die(int status, const char *format, ...)
{
        va_list ap;

        fputs(PLUGIN_HOST_PROGRAM ": ", stderr);
        va_start(ap, format);
        vfprintf(stderr, format, ap);
        va_end(ap);
        fputc('\n', stderr);
        exit(status);
}

/* ---- messages to the supervisor ---- */

/*
 * One datagram.  The main thread's (flags 0) wait for room: they are the
 * ones that must not be lost, and a supervisor that stops reading kills us
 * anyway.  The plugin's threads pass MSG_DONTWAIT.
 */
static void __attribute__((format(printf, 2, 3))) send_msg(int flags, const char *format, ...)
{
        char msg[PLUGIN_HOST_MSG_MAX + 1];
        va_list ap;
        int n;

        va_start(ap, format);
        n = vsnprintf(msg, sizeof(msg), format, ap);
        va_end(ap);
        if (n < 0)
                return;
        if ((size_t) n >= sizeof(msg))
                n = PLUGIN_HOST_MSG_MAX;
        (void) send(PLUGIN_HOST_STATUS_FD, msg, (size_t) n, flags | MSG_NOSIGNAL);
}

static void __attribute__((noreturn)) refuse(const char *why)
{
        send_msg(0, "REFUSED %s", why);
        exit(PLUGIN_HOST_EXIT_REFUSED);
}

/*
 * services->log, from any thread of the plugin: one send per message, so
 * lines of two threads never mix; never waiting, so a plugin that logs in
 * a loop cannot stall on a busy supervisor (what does not fit is dropped).
 */
static void __attribute__((format(printf, 3, 4)))
svc_log(const struct perflib_plugin_services *svc, int priority, const char *format, ...)
{
        char text[PLUGIN_HOST_MSG_MAX + 1];
        va_list ap;

        if (!svc || !format)
                return;
        va_start(ap, format);
        (void) vsnprintf(text, sizeof(text), format, ap);
        va_end(ap);
        send_msg(MSG_DONTWAIT, "LOG %d %s", pload_priority(priority), text);
}

/* ---- 1. the command line and the descriptors ---- */

static void help(void)
{
        printf("Usage: %s --file=NAME.so --parent=PID [--user=USER] [--memory-max=BYTES]\n"
               "\n"
               "Runs one perflibd plugin in a process of its own.  perflibd starts it,\n"
               "with the plugin's image on descriptor %d and a status socket on %d;\n"
               "it is not meant to be started by hand.\n"
               "\n"
               "  --file=NAME.so       the plugin's file name, for its name and messages\n"
               "  --parent=PID         the supervisor; the host dies with it\n"
               "  --user=USER          run as USER (when started as root)\n"
               "  --memory-max=BYTES   cap the plugin's data memory (RLIMIT_DATA)\n"
               "  -h, --help           show this help\n",
               PLUGIN_HOST_PROGRAM, PLUGIN_HOST_IMAGE_FD, PLUGIN_HOST_STATUS_FD);
}

static int parse_u64(const char *s, uint64_t *ret)
{
        char *end;
        uintmax_t v;

        if (!s || *s < '0' || *s > '9')
                return -EINVAL;
        errno = 0;
        v = strtoumax(s, &end, 10);
        if (errno || *end || v > UINT64_MAX)
                return -EINVAL;
        *ret = (uint64_t) v;
        return 0;
}

/* NAME.so, as the supervisor names plugins: no path, no control characters. */
static bool plugin_file_ok(const char *file)
{
        size_t len = strlen(file);

        for (const char *c = file; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f || *c == '/')
                        return false;
        return len > 3 && strcmp(file + len - 3, ".so") == 0;
}

static void parse_args(int argc, char **argv, struct host_args *ret)
{
        static const struct option opts[] = {
                { "file", required_argument, NULL, 'f' },
                { "parent", required_argument, NULL, 'p' },
                { "user", required_argument, NULL, 'u' },
                { "memory-max", required_argument, NULL, 'm' },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        struct host_args a = { 0 };
        uint64_t v;
        int c;

        while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
                switch (c) {
                case 'f':
                        a.file = optarg;
                        break;
                case 'p':
                        if (parse_u64(optarg, &v) < 0 || v < 1 || v > INT_MAX)
                                die(PLUGIN_HOST_EXIT_USAGE, "--parent=%s: not a process id", optarg);
                        a.parent = (pid_t) v;
                        break;
                case 'u':
                        a.user = optarg;
                        break;
                case 'm':
                        if (parse_u64(optarg, &a.memory_max) < 0 || a.memory_max == 0)
                                die(PLUGIN_HOST_EXIT_USAGE,
                                    "--memory-max=%s: not a positive number of bytes", optarg);
                        break;
                case 'h':
                        help();
                        exit(0);
                default:
                        exit(PLUGIN_HOST_EXIT_USAGE);
                }
        }
        if (optind < argc)
                die(PLUGIN_HOST_EXIT_USAGE, "unexpected argument '%s'", argv[optind]);
        if (!a.file || !plugin_file_ok(a.file))
                die(PLUGIN_HOST_EXIT_USAGE, "--file=NAME.so is required (a file name, no path)");
        if (!a.parent)
                die(PLUGIN_HOST_EXIT_USAGE, "--parent=PID is required");
        if (a.user && !*a.user)
                die(PLUGIN_HOST_EXIT_USAGE, "--user: empty user name");
        *ret = a;
}

/*
 * The image must be a file, the status descriptor a SOCK_SEQPACKET socket:
 * anything else means we were not started by the supervisor.  Both are
 * made close-on-exec, so a program the plugin runs holds neither, and the
 * status socket blocking, whatever the supervisor's end is.
 */
static void check_fds(void)
{
        struct stat st;
        socklen_t len = sizeof(int);
        int type = 0, fl;

        if (fstat(PLUGIN_HOST_IMAGE_FD, &st) < 0 || !S_ISREG(st.st_mode))
                die(PLUGIN_HOST_EXIT_USAGE, "descriptor %d is not the plugin's image; "
                    "this program is started by perflibd", PLUGIN_HOST_IMAGE_FD);
        if (getsockopt(PLUGIN_HOST_STATUS_FD, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
            type != SOCK_SEQPACKET)
                die(PLUGIN_HOST_EXIT_USAGE, "descriptor %d is not a SOCK_SEQPACKET socket; "
                    "this program is started by perflibd", PLUGIN_HOST_STATUS_FD);
        fl = fcntl(PLUGIN_HOST_STATUS_FD, F_GETFL);
        if (fl < 0 || fcntl(PLUGIN_HOST_STATUS_FD, F_SETFL, fl & ~O_NONBLOCK) < 0 ||
            fcntl(PLUGIN_HOST_STATUS_FD, F_SETFD, FD_CLOEXEC) < 0 ||
            fcntl(PLUGIN_HOST_IMAGE_FD, F_SETFD, FD_CLOEXEC) < 0)
                die(PLUGIN_HOST_EXIT_USAGE, "descriptor flags: %s", strerror(errno));
}

/* ---- 2. and 3. who we are, and whose ---- */

/*
 * Root becomes user: groups, then group, then user (each needs the
 * privilege the next one drops).  Anyone else can only be who they are.
 */
static void become_user(const char *user)
{
        struct passwd *pw;

        errno = 0;
        pw = getpwnam(user);
        if (!pw)
                die(PLUGIN_HOST_EXIT_USAGE, "--user=%s: %s", user,
                    errno ? strerror(errno) : "no such user");
        if (pw->pw_uid == geteuid())
                return;
        if (geteuid() != 0)
                die(PLUGIN_HOST_EXIT_USAGE, "--user=%s: running as uid %u, which cannot "
                    "become another user", user, (unsigned) geteuid());
        if (initgroups(user, pw->pw_gid) < 0)
                die(PLUGIN_HOST_EXIT_USAGE, "--user=%s: initgroups: %s", user, strerror(errno));
        if (setgid(pw->pw_gid) < 0)
                die(PLUGIN_HOST_EXIT_USAGE, "--user=%s: setgid: %s", user, strerror(errno));
        if (setuid(pw->pw_uid) < 0)
                die(PLUGIN_HOST_EXIT_USAGE, "--user=%s: setuid: %s", user, strerror(errno));
        /*
         * The change of credentials made us undumpable, which gives
         * /proc/self/ to root: we could no longer open our own image as
         * IMAGE_PATH, and would leave no core.
         */
        if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
                die(PLUGIN_HOST_EXIT_USAGE, "PR_SET_DUMPABLE: %s", strerror(errno));
}

/*
 * After become_user: a change of credentials clears the parent-death
 * signal.  The parent may have died before the signal was armed, and we
 * were reparented then: getppid() tells.
 */
static void tie_to_parent(pid_t parent)
{
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
            prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                die(PLUGIN_HOST_EXIT_USAGE, "prctl: %s", strerror(errno));
        if (getppid() != parent)
                die(PLUGIN_HOST_EXIT_USAGE, "--parent=%ld is not our parent (%ld): "
                    "it is gone, or was never ours", (long) parent, (long) getppid());
}

/* ---- 4. and 5. the memory cap, and dying of it ---- */

static void cap_memory(uint64_t bytes)
{
#ifdef HOST_ASAN
        /*
         * AddressSanitizer's shadow memory is private writable memory, far
         * more than any cap: under RLIMIT_DATA nothing would start.  The
         * supervisor, which polls the host's memory, still holds the cap.
         */
        (void) bytes;
#else
        struct rlimit rl;

        if (getrlimit(RLIMIT_DATA, &rl) < 0)
                die(PLUGIN_HOST_EXIT_USAGE, "getrlimit: %s", strerror(errno));
        if (rl.rlim_max == RLIM_INFINITY || bytes < rl.rlim_max)
                rl.rlim_max = bytes;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_DATA, &rl) < 0)
                die(PLUGIN_HOST_EXIT_USAGE, "--memory-max: setrlimit: %s", strerror(errno));
        data_limit_kib = rl.rlim_cur / 1024;
#endif
}

/* The "VmData:" of /proc/self/status in KiB, or 0; async-signal-safe. */
static uint64_t data_kib(void)
{
        char buf[4096];
        const char *p;
        uint64_t kib = 0;
        size_t got = 0;
        ssize_t n;
        int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return 0;
        while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
                got += (size_t) n;
        close(fd);
        buf[got] = '\0';
        p = strstr(buf, "\nVmData:");
        if (!p)
                return 0;
        for (p += strlen("\nVmData:"); *p == ' ' || *p == '\t'; p++)
                ;
        for (; *p >= '0' && *p <= '9'; p++)
                kib = kib * 10 + (uint64_t) (*p - '0');
        return kib;
}

/*
 * Writes "FATAL <signo> memory|-" and lets the signal end us: SA_RESETHAND
 * restored its default action, and the signal raised again is delivered
 * when we return (a faulting instruction also faults again), so the
 * supervisor sees the real signal and core.  Async-signal-safe only.
 */
static void on_fatal(int signo, siginfo_t *info, void *context)
{
        char msg[32] = "FATAL ", digits[12];
        size_t n = strlen(msg), d = 0;
        int saved = errno;
        uint64_t slack;
        bool memory;

        (void) info, (void) context;
        /*
         * Near the cap, the signal most likely followed an allocation that
         * failed: how near, the size of that allocation decides, which is
         * not known here.  An eighth of the cap, 16 MiB at least (an 8 MiB
         * request failed at 57 of 64 MiB), half of it at most.
         */
        slack = data_limit_kib / 8 < 16384 ? 16384 : data_limit_kib / 8;
        if (slack > data_limit_kib / 2)
                slack = data_limit_kib / 2;
        memory = data_limit_kib && data_kib() + slack >= data_limit_kib;
        for (unsigned v = (unsigned) signo; d == 0 || v; v /= 10)
                digits[d++] = (char) ('0' + v % 10);
        while (d)
                msg[n++] = digits[--d];
        memcpy(msg + n, memory ? " memory" : " -", memory ? 7 : 2);
        n += memory ? 7 : 2;
        (void) send(PLUGIN_HOST_STATUS_FD, msg, n, MSG_DONTWAIT | MSG_NOSIGNAL);
        (void) raise(signo);
        errno = saved;
}

/*
 * On an alternate stack, so that a stack overflow of the main thread is
 * reported too (the plugin's own threads have none: theirs end by the
 * signal alone).
 */
static void catch_fatal(void)
{
        static char alt[64 * 1024] __attribute__((aligned(16)));
        static const int fatal[] = {
                SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGSYS, SIGXCPU, SIGXFSZ,
        };
        stack_t ss = { .ss_sp = alt, .ss_size = sizeof(alt) };
        struct sigaction sa = {
                .sa_sigaction = on_fatal,
                .sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND,
        };

        sigemptyset(&sa.sa_mask);
        if (sigaltstack(&ss, NULL) < 0)
                die(EXIT_FAILURE, "sigaltstack: %s", strerror(errno));
        for (size_t i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
                if (sigaction(fatal[i], &sa, NULL) < 0)
                        die(EXIT_FAILURE, "sigaction: %s", strerror(errno));
}

/* ---- 6. the signals that stop us ---- */

/*
 * Blocked before any plugin code runs, so that every thread the plugin
 * starts inherits the mask and only the main thread takes them, from the
 * returned signalfd.
 */
static int block_stop_signals(void)
{
        sigset_t set;
        int fd;

        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigaddset(&set, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
                die(EXIT_FAILURE, "sigprocmask: %s", strerror(errno));
        fd = signalfd(-1, &set, SFD_CLOEXEC);
        if (fd < 0)
                die(EXIT_FAILURE, "signalfd: %s", strerror(errno));
        return fd;
}

/* Until a stop signal arrives, or the supervisor hangs up its end. */
static void wait_for_stop(int sigfd)
{
        struct pollfd p[2] = {
                { .fd = sigfd, .events = POLLIN },
                /* No events: the supervisor sends nothing, and hang-up is always reported. */
                { .fd = PLUGIN_HOST_STATUS_FD, .events = 0 },
        };

        for (;;) {
                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        return;
                }
                if (p[0].revents || p[1].revents)
                        return;
        }
}

/* ---- 7. to 10. the plugin ---- */

/* Loads the image and checks its descriptor; a plugin that fails either is refused. */
static const struct perflib_plugin *load_plugin(void)
{
        const struct perflib_plugin *d;
        char why[PLOAD_WHY_MAX];
        lt_dladvise advise;
        lt_dlhandle handle;

        /* Local: the plugin's symbols never satisfy another object's. */
        if (lt_dlinit() != 0 || lt_dladvise_init(&advise) != 0 ||
            lt_dladvise_local(&advise) != 0)
                die(EXIT_FAILURE, "libltdl: %s", lt_dlerror());
        if (pload_open(IMAGE_PATH, advise, &handle, why) < 0)
                refuse(why);
        (void) lt_dladvise_destroy(&advise);
        if (pload_describe(handle, IMAGE_PATH, &d, why) < 0)
                refuse(why);
        /* Stays loaded until exit: stop is the plugin's last call, and nothing follows it. */
        return d;
}

/* What start published, then READY: the supervisor takes READY as the end of the list. */
static void announce(const char *runtime, struct pub_mark *before, int marked, const char *name)
{
        char guid[PUB_GUID_TEXT];
        struct pub *pubs = NULL;
        size_t n = 0;
        int r = marked;

        if (r == 0)
                r = pub_since(runtime, before, &pubs, &n);
        if (r < 0)
                send_msg(0, "LOG %d cannot tell what it publishes (%s): a duplicate of "
                         "another plugin would not be noticed", LOG_WARNING, strerror(-r));
        for (size_t i = 0; i < n; i++) {
                pub_guid_text(&pubs[i].guid, guid);
                send_msg(0, "PUB %c %s", pubs[i].counterset ? 'C' : 'P', guid);
        }
        free(pubs);
        send_msg(0, "READY %s", name);
}

/*
 * Starts the plugin, announces it and waits to stop it; the exit status.
 * The services table is static: a thread the plugin failed to end may
 * still log until exit.
 */
static int run(const struct perflib_plugin *d, const char *name, const char *runtime,
               int sigfd)
{
        static struct perflib_plugin_services svc;
        struct pub_mark before = { 0 };
        void *state = NULL;
        uint32_t status;
        int marked;

        svc = (struct perflib_plugin_services) {
                .abi = PERFLIB_PLUGIN_ABI,
                .size = sizeof(svc),
                .log = svc_log,
                .runtime_dir = runtime,
        };
        /* Before start: what start logs is tagged with the plugin's name. */
        send_msg(0, "NAME %s", name);
        marked = pub_mark(runtime, &before);
        status = d->start(&svc, &state);
        if (status == 0)
                announce(runtime, &before, marked, name);
        pub_mark_done(&before);
        if (status != 0) {
                send_msg(0, "FAILED %" PRIu32, status);
                return PLUGIN_HOST_EXIT_FAILED;
        }
        wait_for_stop(sigfd);
        d->stop(state);
        send_msg(0, "STOPPED");
        return 0;
}

/*
 * The order matters: privileges go before anything else runs, the parent
 * tie after them (a credential change clears it), the cap and the fatal
 * handler before the plugin's first byte of code, and the stop signals
 * blocked before the plugin can start a thread.
 */
int main(int argc, char **argv)
{
        const struct perflib_plugin *d;
        struct host_args a;
        char *runtime = NULL, *name;
        int sigfd, r;

        parse_args(argc, argv, &a);
        check_fds();
        if (a.user)
                become_user(a.user);
        tie_to_parent(a.parent);
        if (a.memory_max)
                cap_memory(a.memory_max);
        catch_fatal();
        sigfd = block_stop_signals();
        /* Where the SDK puts this process's sockets: for a user, its own below the server's. */
        r = pl_runtime_dir(&runtime);
        if (r < 0)
                die(EXIT_FAILURE, "runtime directory: %s", strerror(-r));
        d = load_plugin();
        name = pload_display_name(d->name, a.file);
        if (!name)
                refuse("out of memory");
        r = run(d, name, runtime, sigfd);
        free(name);
        free(runtime);
        return r;
}

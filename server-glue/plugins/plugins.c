/* SPDX-License-Identifier: MIT */
/*
 * The plugin supervisor (plugins.h): scans the plugin directory, lets a
 * new or changed file settle, copies it (plugin-image.h), starts a host
 * process for it (plugin-proc.h, host-proto.h), reads what the host says,
 * holds it to its limits (plugin-conf.h), restarts it after a fault with a
 * doubling delay, refuses it when it publishes what another plugin already
 * does (plugin-pub.h), and stops it when its file goes away or changes.
 *
 * Every host is watched through its pidfd and its status socket on the
 * server's sd-event loop, and one timer per plugin serves whichever
 * deadline it has: the settle time, the start deadline, the stop grace or
 * the restart delay.  A tick every PLUGIN_TICK_USEC reads each host's
 * memory and CPU time from /proc.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#include "host-proto.h"
#include "plugin-image.h"
#include "plugin-load.h"
#include "plugin-proc.h"
#include "plugin-pub.h"
#include "plugins.h"

/* A plugin's name is for logs: anything longer is cut (plugin-load.h). */
#define NAME_MAX_LEN    PLOAD_NAME_MAX
/* One log line, the plugin's text included; a longer one is cut. */
#define LOG_LINE_MAX    2048
/*
 * Tries of a file shorter than its ELF headers say, settle_ms apart and
 * doubling (with the default, 3.1 s in all), before it is reported: a
 * writer may pause for that long without closing the file.
 */
#define SHORT_TRIES     6u
/* GUIDs one plugin may say it published: more is a host gone wrong. */
#define MAX_PUBS        256u
/* Messages read from one host per wakeup, so that a chatty one cannot starve the loop. */
#define MSGS_PER_WAKEUP 64u
/* How often memory and CPU time are read. */
#define PLUGIN_TICK_USEC        (UINT64_C(250) * 1000u)
/* A second miss of the collect deadline within this long kills the host. */
#define MISSED_AGAIN_USEC       (UINT64_C(5) * 1000000u)
/* CPU samples kept per host: the window is split into this many ticks at most. */
#define CPU_SAMPLES     64u

/* Why the supervisor ended a host, said when it is gone. */
enum cause {
        CAUSE_NONE,                     /* it ended by itself */
        CAUSE_MEMORY,
        CAUSE_CPU,
        CAUSE_START_DEADLINE,
        CAUSE_COLLECT_DEADLINE,
        CAUSE_STOP,                     /* asked to stop: not a fault */
};

struct cpu_sample {
        uint64_t at;                    /* µs, monotonic */
        uint64_t cpu;                   /* µs of CPU time */
};

/* One NAME.so of the directory. */
struct plugin {
        struct plugins *owner;
        char *file;                     /* "x.so" */
        char *name;                     /* for logs: the host's READY name, or NULL */
        struct file_id id;
        enum plugin_state state;
        uint64_t seen;                  /* µs, monotonic: this version found, untouched since */
        uint64_t retry_at;              /* PENDING: not tried before then (µs, monotonic) */
        unsigned short_tries;           /* PENDING: found shorter than its ELF headers say */
        bool said;                      /* its twin or duplicate refusal is logged */
        bool twin;                      /* FAILED: the same file as a running plugin */
        bool removed;                   /* STOPPING: its file is gone; freed once stopped */
        bool ready_held;                /* STARTING: READY came, waits for earlier ones */
        const char *stop_why;           /* STOPPING: said when it has stopped */
        char dup_of[NAME_MAX + 1];      /* FAILED: the plugin that published the same first */
        struct pub *pubs;               /* what it published when last started (malloc'd) */
        size_t n_pubs;
        struct pub *new_pubs;           /* STARTING: what its host says it published */
        size_t n_new_pubs;
        struct plugin_image image;      /* the copy its hosts map, while this version lives */
        struct plugin_limits limits;
        struct host_proc host;          /* pid 0 when none runs */
        sd_event_source *exit_src, *status_src, *timer;
        uint64_t spawned_at, ready_at;  /* µs, monotonic */
        unsigned restarts, faults;      /* faults: in a row, for the delay */
        uint64_t missed_at;             /* µs, monotonic: it last missed the collect deadline */
        enum cause cause;               /* why the supervisor is ending its host */
        int fatal_signo;                /* the host's FATAL message */
        bool fatal_memory;
        char refused[256];              /* its host's REFUSED reason */
        uint32_t start_error;           /* its host's FAILED code */
        char last_fault[256];
        struct cpu_sample cpu[CPU_SAMPLES];
        unsigned n_cpu, cpu_head;
};

struct plugins {
        char *dir;
        char *host;
        char *state_file;
        void (*log)(void *userdata, int priority, const char *file, const char *message);
        void (*changed)(void *userdata);
        void *userdata;
        sd_event *event;
        sd_event_source *sync_timer, *tick;
        struct plugin_limits limits;
        const struct plugin_conf *conf;
        unsigned collect_timeout_ms;
        uint64_t settle_usec;
        bool root;
        bool freeing;
        struct plugin **list;           /* sorted by file name */
        size_t n;
        struct plugin **gone;           /* hosts still stopping whose file went */
        size_t n_gone;
};

static void __attribute__((format(printf, 4, 5)))
emit(const struct plugins *p, int priority, const char *file, const char *format, ...)
{
        char line[LOG_LINE_MAX];
        va_list ap;

        if (!p->log)
                return;
        va_start(ap, format);
        (void) vsnprintf(line, sizeof(line), format, ap);
        va_end(ap);
        p->log(p->userdata, priority, file, line);
}

/* The supervisor's words about one plugin file. */
#define plugin_log(e, priority, format, ...) \
        emit((e)->owner, priority, (e)->file, "plugin %s: " format, (e)->file, __VA_ARGS__)

static void write_state(const struct plugins *p);

static void changed(const struct plugins *p)
{
        if (p->freeing)
                return;
        write_state(p);
        if (p->changed)
                p->changed(p->userdata);
}

/* $name when set and not empty, else def: a copy, the caller's. */
static int env_or(const char *name, const char *def, char **ret)
{
        const char *e = getenv(name);
        char *s;

        if (!ret)
                return -EINVAL;
        s = strdup(e && *e ? e : def);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int plugins_default_dir(char **ret)
{
        return env_or("PERFLIB_PLUGIN_DIR", PERFLIB_PLUGIN_DIR_DEFAULT, ret);
}

int plugins_default_host(char **ret)
{
        return env_or("PERFLIB_PLUGIN_HOST", PERFLIB_PLUGIN_HOST_DEFAULT, ret);
}

const char *plugin_state_name(enum plugin_state state)
{
        static const char *const names[] = {
                [PLUGIN_RUNNING] = "running", [PLUGIN_FAILED] = "failed",
                [PLUGIN_PENDING] = "pending", [PLUGIN_STARTING] = "starting",
                [PLUGIN_RESTARTING] = "restarting", [PLUGIN_STOPPING] = "stopping",
        };

        return (unsigned) state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

/*
 * NAME.so with a non-empty NAME that does not start with a dot.  A name
 * with control characters is no plugin's: it would garble the log lines.
 */
static bool plugin_file_name(const char *name)
{
        size_t len = strlen(name);

        for (const char *c = name; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        return false;
        return len > 3 && name[0] != '.' && strcmp(name + len - 3, ".so") == 0;
}

static uint64_t now_usec(clockid_t clock)
{
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static void plugin_free(struct plugin *e)
{
        if (!e)
                return;
        sd_event_source_disable_unref(e->exit_src);
        sd_event_source_disable_unref(e->status_src);
        sd_event_source_disable_unref(e->timer);
        host_proc_close(&e->host);
        plugin_image_close(&e->image);
        free(e->new_pubs);
        free(e->pubs);
        free(e->name);
        free(e->file);
        free(e);
}

/* A new entry, waiting to be tried, for a version of file found at now. */
static int plugin_new(struct plugins *owner, const char *file, const struct file_id *id,
                      uint64_t now, struct plugin **ret)
{
        struct plugin *e = calloc(1, sizeof(*e));

        if (!e)
                return -ENOMEM;
        e->owner = owner;
        e->id = *id;
        e->seen = now;
        e->state = PLUGIN_PENDING;
        e->image.fd = -1;
        e->host = (struct host_proc) { .pidfd = -1, .status_fd = -1 };
        e->file = strdup(file);
        if (!e->file) {
                plugin_free(e);
                return -ENOMEM;
        }
        plugin_conf_limits(owner->conf, &owner->limits, file, &e->limits);
        *ret = e;
        return 0;
}

/* The name logs use: the one its host said, or the file's without ".so". */
static const char *display_name(const struct plugin *e, char buf[NAME_MAX_LEN + 1])
{
        if (e->name)
                return e->name;
        snprintf(buf, NAME_MAX_LEN + 1, "%.*s", (int) strlen(e->file) - 3, e->file);
        return buf;
}

/* A duration for the log: "250 ms", "2 s", "5 min". */
static const char *time_text(uint64_t usec, char buf[32])
{
        if (usec % 60000000u == 0)
                snprintf(buf, 32, "%llu min", (unsigned long long) (usec / 60000000u));
        else if (usec % 1000000u == 0)
                snprintf(buf, 32, "%llu s", (unsigned long long) (usec / 1000000u));
        else
                snprintf(buf, 32, "%llu ms", (unsigned long long) (usec / 1000u));
        return buf;
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* e's one timer, for whichever deadline its state has; at 0 disarms it. */
static void arm(struct plugin *e, uint64_t at)
{
        int r;

        if (at == 0) {
                if (e->timer)
                        (void) sd_event_source_set_enabled(e->timer, SD_EVENT_OFF);
                return;
        }
        if (!e->timer) {
                r = sd_event_add_time(e->owner->event, &e->timer, CLOCK_MONOTONIC, at, 1000,
                                      on_timer, e);
                if (r < 0)
                        plugin_log(e, LOG_ERR, "no timer (%s): its deadlines are not kept",
                                   strerror(-r));
                return;
        }
        (void) sd_event_source_set_time(e->timer, at);
        (void) sd_event_source_set_enabled(e->timer, SD_EVENT_ONESHOT);
}

static int compare_plugins(const void *a, const void *b)
{
        return strcmp((*(struct plugin *const *) a)->file, (*(struct plugin *const *) b)->file);
}

/* The slot of that file's plugin in a sorted list, or NULL. */
static struct plugin **find_slot(struct plugin **list, size_t n, const char *file)
{
        struct plugin key = { .file = (char *) file }, *k = &key;

        return n > 0 ? bsearch(&k, list, n, sizeof(*list), compare_plugins) : NULL;
}

/*
 * The copy the dynamic linker maps: -EAGAIN (nothing logged) while the file
 * changes under the copy or is shorter than its ELF headers say, up to
 * SHORT_TRIES; other failures are logged.
 */
static int plugin_copy(struct plugin *e, const char *path)
{
        uint64_t need;
        int r;

        r = plugin_image_copy(path, e->file, &e->id, &e->image);
        if (r == -ESTALE) {
                plugin_log(e, LOG_DEBUG, "%s", "changed while being read; trying again");
                return -EAGAIN;
        }
        if (r == -EFBIG)
                plugin_log(e, LOG_ERR, "larger than %llu MiB; skipped",
                           (unsigned long long) (PLUGIN_IMAGE_MAX >> 20));
        else if (r < 0)
                plugin_log(e, LOG_ERR, "cannot read: %s; skipped", strerror(-r));
        if (r < 0)
                return r;
        r = plugin_image_short(&e->image, &need);
        if (r == 0)
                return 0;
        plugin_image_close(&e->image);
        if (r < 0) {
                plugin_log(e, LOG_ERR, "cannot read: %s; skipped", strerror(-r));
                return r;
        }
        if (++e->short_tries < SHORT_TRIES) {
                plugin_log(e, LOG_DEBUG, "%llu bytes of the %llu its ELF headers need; trying again",
                           (unsigned long long) e->id.size, (unsigned long long) need);
                return -EAGAIN;
        }
        plugin_log(e, LOG_ERR, "%llu bytes, shorter than the %llu its ELF headers need "
                   "(cut short, or still being written); skipped",
                   (unsigned long long) e->id.size, (unsigned long long) need);
        return -ENODATA;
}

/* Whether e has a host, or will have one again after its restart delay. */
static bool has_host(const struct plugin *e)
{
        return e->state == PLUGIN_RUNNING || e->state == PLUGIN_STARTING ||
               e->state == PLUGIN_RESTARTING;
}

/* A running plugin loaded from the same file under another name, or NULL. */
static const struct plugin *same_file(const struct plugins *p, const struct plugin *e)
{
        for (size_t i = 0; i < p->n; i++) {
                const struct plugin *o = p->list[i];

                if (o != e && has_host(o) && o->id.dev == e->id.dev && o->id.ino == e->id.ino)
                        return o;
        }
        return NULL;
}

/*
 * Whether e's file has been left alone for the settle time: by its ctime
 * (a file older than that loads at once, at startup say), or, should the
 * wall clock be off, by how long this loader has seen it unchanged.  When
 * not, *ret_when is when it will have been.
 */
static bool settled(const struct plugins *p, const struct plugin *e, uint64_t now,
                    uint64_t *ret_when)
{
        const struct timespec *c = &e->id.ctime;
        int64_t age = (int64_t) now_usec(CLOCK_REALTIME) -
                      ((int64_t) c->tv_sec * 1000000 + c->tv_nsec / 1000);
        uint64_t when = e->seen + p->settle_usec;

        if (now >= when || (age >= 0 && (uint64_t) age >= p->settle_usec))
                return true;
        if (age >= 0 && now + (p->settle_usec - (uint64_t) age) < when)
                when = now + (p->settle_usec - (uint64_t) age);
        *ret_when = when;
        return false;
}

static int on_exit_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata);
static int on_status(sd_event_source *s, int fd, uint32_t revents, void *userdata);
static void tick_arm(struct plugins *p);

/* The user its host runs as when we are root: NULL for root itself. */
static const char *host_user(const struct plugin *e)
{
        const char *u = e->limits.user[0] ? e->limits.user : PLUGIN_USER_DEFAULT;

        if (!e->owner->root || strcmp(u, "root") == 0 || strcmp(u, "0") == 0)
                return NULL;
        return u;
}

/* Starts a host for e's image: STARTING, with its start deadline armed. */
static int host_start(struct plugin *e, uint64_t now)
{
        struct plugins *p = e->owner;
        int r;

        free(e->new_pubs);
        e->new_pubs = NULL;
        e->n_new_pubs = 0;
        e->cause = CAUSE_NONE;
        e->fatal_signo = 0;
        e->fatal_memory = false;
        e->refused[0] = '\0';
        e->start_error = 0;
        e->n_cpu = e->cpu_head = 0;
        e->ready_at = e->missed_at = 0;
        e->ready_held = false;
        r = host_spawn(p->host, e->file, e->image.fd, host_user(e), e->limits.memory_max,
                       &e->host);
        if (r < 0) {
                plugin_log(e, LOG_ERR, "cannot start %s: %s", p->host, strerror(-r));
                return r;
        }
        r = sd_event_add_io(p->event, &e->exit_src, e->host.pidfd, EPOLLIN, on_exit_ready, e);
        if (r >= 0)
                r = sd_event_add_io(p->event, &e->status_src, e->host.status_fd, EPOLLIN,
                                    on_status, e);
        if (r < 0) {
                /* Unwatched it would run unsupervised: better not at all. */
                plugin_log(e, LOG_ERR, "cannot watch its host: %s", strerror(-r));
                kill(e->host.pid, SIGKILL);
                (void) waitpid(e->host.pid, NULL, 0);
                e->exit_src = sd_event_source_disable_unref(e->exit_src);
                host_proc_close(&e->host);
                e->host.pid = 0;
                return r;
        }
        e->spawned_at = now;
        e->state = PLUGIN_STARTING;
        arm(e, now + e->limits.start_timeout);
        tick_arm(p);
        changed(p);
        return 0;
}

/*
 * Ends e's host for cause: SIGKILL now, or (CAUSE_STOP, said with why)
 * SIGTERM and SIGKILL after the grace to stop.
 */
static void host_end_why(struct plugin *e, enum cause cause, const char *why)
{
        if (!e->host.pid || e->cause != CAUSE_NONE)
                return;
        e->cause = cause;
        if (cause != CAUSE_STOP) {
                (void) kill(e->host.pid, SIGKILL);
                return;
        }
        (void) kill(e->host.pid, SIGTERM);
        e->stop_why = why;
        e->state = PLUGIN_STOPPING;
        arm(e, now_usec(CLOCK_MONOTONIC) + e->limits.stop_timeout);
        changed(e->owner);
}

static void host_end(struct plugin *e, enum cause cause)
{
        host_end_why(e, cause, NULL);
}

/* ---- what a host says ---- */

static void sanitize(char *s)
{
        for (; *s; s++)
                if ((unsigned char) *s < 0x20 || *s == 0x7f)
                        *s = '?';
}

/* "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}", as pub_guid_text writes it. */
static bool parse_guid(const char *s, GUID *ret)
{
        unsigned v[11];
        int end = 0;

        if (sscanf(s, "{%8x-%4x-%4x-%2x%2x-%2x%2x%2x%2x%2x%2x}%n", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &end) != 11 ||
            end != PUB_GUID_TEXT - 1 || s[end])
                return false;
        ret->Data1 = v[0];
        ret->Data2 = (uint16_t) v[1];
        ret->Data3 = (uint16_t) v[2];
        for (int i = 0; i < 8; i++)
                ret->Data4[i] = (uint8_t) v[3 + i];
        return true;
}

static void msg_pub(struct plugin *e, const char *arg)
{
        struct pub *v;
        GUID g;

        if (e->state != PLUGIN_STARTING || e->n_new_pubs >= MAX_PUBS ||
            (arg[0] != 'P' && arg[0] != 'C') || arg[1] != ' ' || !parse_guid(arg + 2, &g))
                return;
        v = reallocarray(e->new_pubs, e->n_new_pubs + 1, sizeof(*v));
        if (!v)
                return;
        e->new_pubs = v;
        v[e->n_new_pubs++] = (struct pub) { .guid = g, .counterset = arg[0] == 'C' };
}

static void msg_log(struct plugin *e, const char *arg)
{
        char buf[NAME_MAX_LEN + 1], *end;
        long priority = strtol(arg, &end, 10);

        if (end == arg || *end != ' ')
                return;
        /* The host clamps it too, but plugin code runs there. */
        priority = pload_priority((int) priority);
        emit(e->owner, (int) priority, e->file, "plugin %s (%s): %s", display_name(e, buf),
             e->file, end + 1);
}

static int plugin_check_unique(struct plugin *e);

/* A plugin before e in name order whose start has not returned yet. */
static bool earlier_starting(const struct plugins *p, const struct plugin *e)
{
        for (size_t i = 0; i < p->n && p->list[i] != e; i++)
                if (p->list[i]->state == PLUGIN_STARTING && !p->list[i]->ready_held)
                        return true;
        return false;
}

static void become_running(struct plugin *e)
{
        e->state = PLUGIN_RUNNING;
        if (plugin_check_unique(e) < 0)
                return;
        plugin_log(e, LOG_INFO, "started \"%s\" (host pid %ld)", e->name ? e->name : "?",
                   (long) e->host.pid);
        changed(e->owner);
}

/*
 * Plugins whose start returned, in name order, each once no plugin before
 * it is still starting: of plugins started together that publish the same
 * GUID, the first by name keeps it, whichever start returned first.
 */
static void release_ready(struct plugins *p)
{
        for (size_t i = 0; i < p->n; i++) {
                struct plugin *e = p->list[i];

                if (!e->ready_held || earlier_starting(p, e))
                        continue;
                e->ready_held = false;
                become_running(e);
        }
}

static void msg_ready(struct plugin *e, const char *arg)
{
        if (e->state != PLUGIN_STARTING || e->ready_held)
                return;
        free(e->name);
        e->name = pload_display_name(arg, e->file);
        free(e->pubs);
        e->pubs = e->new_pubs;
        e->n_pubs = e->n_new_pubs;
        e->new_pubs = NULL;
        e->n_new_pubs = 0;
        e->ready_at = now_usec(CLOCK_MONOTONIC);
        /* Its start returned: no deadline but the others' from here. */
        arm(e, 0);
        e->ready_held = true;
        release_ready(e->owner);
}

/* The descriptor's name, before start: what start logs is tagged with it. */
static void msg_name(struct plugin *e, const char *arg)
{
        char *name;

        if (e->state != PLUGIN_STARTING || !(name = pload_display_name(arg, e->file)))
                return;
        free(e->name);
        e->name = name;
}

static void on_message(struct plugin *e, char *m)
{
        char *arg = strchr(m, ' ');

        sanitize(m);
        if (arg)
                *arg++ = '\0';
        else
                arg = m + strlen(m);
        if (strcmp(m, "LOG") == 0)
                msg_log(e, arg);
        else if (strcmp(m, "NAME") == 0)
                msg_name(e, arg);
        else if (strcmp(m, "PUB") == 0)
                msg_pub(e, arg);
        else if (strcmp(m, "READY") == 0)
                msg_ready(e, arg);
        else if (strcmp(m, "REFUSED") == 0)
                snprintf(e->refused, sizeof(e->refused), "%s", *arg ? arg : "refused");
        else if (strcmp(m, "FAILED") == 0)
                e->start_error = (uint32_t) strtoul(arg, NULL, 10);
        else if (strcmp(m, "FATAL") == 0) {
                e->fatal_signo = atoi(arg);
                e->fatal_memory = strstr(arg, " memory") != NULL;
        }
}

/* Reads what the host said, at most MSGS_PER_WAKEUP messages. */
static void read_messages(struct plugin *e)
{
        char m[PLUGIN_HOST_MSG_MAX + 1];

        for (unsigned i = 0; i < MSGS_PER_WAKEUP && e->host.status_fd >= 0; i++) {
                ssize_t n = recv(e->host.status_fd, m, PLUGIN_HOST_MSG_MAX, MSG_DONTWAIT);

                if (n <= 0) {
                        /* At the end, stop listening: a closed socket stays readable. */
                        if (n == 0 || (errno != EAGAIN && errno != EINTR))
                                e->status_src = sd_event_source_disable_unref(e->status_src);
                        return;
                }
                m[n] = '\0';
                if (strlen(m) == (size_t) n)
                        on_message(e, m);
        }
}

static int on_status(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        read_messages(userdata);
        return 0;
}

/* ---- a host ends ---- */

/* What ended e's host, for the fault's line. */
static void fault_text(const struct plugin *e, const siginfo_t *si, char *buf, size_t size)
{
        char how[128], t[32];

        exit_text(si, how, sizeof(how));
        if (e->cause == CAUSE_MEMORY || e->fatal_memory)
                snprintf(buf, size, "over its memory limit (%llu MiB), %s",
                         (unsigned long long) (e->limits.memory_max >> 20), how);
        else if (e->cause == CAUSE_CPU)
                snprintf(buf, size, "over its CPU limit (%u%% of a CPU over %s), %s",
                         e->limits.cpu_max, time_text(e->limits.cpu_window, t), how);
        else if (e->cause == CAUSE_START_DEADLINE)
                snprintf(buf, size, "missed its start deadline (%s), %s",
                         time_text(e->limits.start_timeout, t), how);
        else if (e->cause == CAUSE_COLLECT_DEADLINE)
                snprintf(buf, size, "missed its collect deadline (%u ms) twice in a row, %s",
                         e->owner->collect_timeout_ms, how);
        else
                snprintf(buf, size, "%s", how);
}

/* Logs the fault and arms the restart after the doubling delay. */
static void fault(struct plugin *e, const siginfo_t *si, uint64_t now)
{
        char name[NAME_MAX_LEN + 1], t[32];
        uint64_t delay;

        /* A stretch of health forgives the faults before it. */
        if (e->ready_at && now - e->ready_at >= e->limits.healthy)
                e->faults = 0;
        e->faults++;
        delay = e->limits.restart_min;
        for (unsigned i = 1; i < e->faults && delay < e->limits.restart_max; i++)
                delay *= 2;
        if (delay > e->limits.restart_max)
                delay = e->limits.restart_max;
        fault_text(e, si, e->last_fault, sizeof(e->last_fault));
        plugin_log(e, LOG_ERR, "\"%s\" %s; restarting in %s", display_name(e, name),
                   e->last_fault, time_text(delay, t));
        e->state = PLUGIN_RESTARTING;
        arm(e, now + delay);
}

static void gone_remove(struct plugins *p, struct plugin *e)
{
        for (size_t i = 0; i < p->n_gone; i++)
                if (p->gone[i] == e) {
                        p->gone[i] = p->gone[--p->n_gone];
                        break;
                }
}

static void sync_soon(struct plugins *p);

/* e's host is gone: what it meant, and what comes next. */
static void host_gone(struct plugin *e, const siginfo_t *si)
{
        struct plugins *p = e->owner;
        uint64_t now = now_usec(CLOCK_MONOTONIC);
        char name[NAME_MAX_LEN + 1];
        enum cause cause = e->cause;

        read_messages(e);
        e->exit_src = sd_event_source_disable_unref(e->exit_src);
        e->status_src = sd_event_source_disable_unref(e->status_src);
        host_proc_close(&e->host);
        e->host.pid = 0;
        e->ready_held = false;
        arm(e, 0);
        if (cause == CAUSE_STOP) {
                e->cause = CAUSE_NONE;
                plugin_log(e, LOG_INFO, "stopped \"%s\" (%s)", display_name(e, name),
                           e->stop_why ? e->stop_why : "stopped");
                e->state = PLUGIN_FAILED;
                if (e->removed) {
                        gone_remove(p, e);
                        plugin_free(e);
                        /* A new version of its file may wait for it to be gone. */
                        sync_soon(p);
                }
                changed(p);
                return;
        }
        /* What only a new file can mend, and a start that failed by its own word. */
        if (e->refused[0] || e->start_error) {
                if (!e->refused[0])
                        snprintf(e->refused, sizeof(e->refused),
                                 "start failed with Win32 error %u", (unsigned) e->start_error);
                plugin_log(e, LOG_ERR, "%s; skipped", e->refused);
                snprintf(e->last_fault, sizeof(e->last_fault), "%s", e->refused);
                e->state = PLUGIN_FAILED;
        } else
                fault(e, si, now);
        e->cause = CAUSE_NONE;
        changed(p);
}

static int on_exit_ready(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct plugin *e = userdata;
        struct plugins *p = e->owner;
        siginfo_t si;

        if (host_reap(&e->host, &si) < 0)
                return 0;
        /* e may be freed by this. */
        host_gone(e, &si);
        /* Those whose start returned while it was still starting may go on. */
        release_ready(p);
        return 0;
}

/* The start deadline, the end of the grace to stop, or the restart delay. */
static int on_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct plugin *e = userdata;

        switch (e->state) {
        case PLUGIN_STARTING:
                host_end(e, CAUSE_START_DEADLINE);
                break;
        case PLUGIN_STOPPING:
                if (e->host.pid) {
                        plugin_log(e, LOG_WARNING, "did not stop within %s of SIGTERM; killed",
                                   time_text(e->limits.stop_timeout, (char[32]){ 0 }));
                        (void) kill(e->host.pid, SIGKILL);
                }
                break;
        case PLUGIN_RESTARTING:
                e->restarts++;
                if (host_start(e, now_usec(CLOCK_MONOTONIC)) < 0)
                        fault(e, &(siginfo_t){ .si_code = CLD_EXITED, .si_status = 127 },
                              now_usec(CLOCK_MONOTONIC));
                break;
        default:
                break;
        }
        return 0;
}

/* ---- limits read from /proc ---- */

/* CPU time used in the last window, from the samples (or since it started). */
static uint64_t cpu_in_window(struct plugin *e, uint64_t now, uint64_t cpu)
{
        uint64_t every = e->limits.cpu_window / (CPU_SAMPLES - 2), base = 0;

        if (e->n_cpu == 0 || now - e->cpu[(e->cpu_head + CPU_SAMPLES - 1) % CPU_SAMPLES].at >= every) {
                e->cpu[e->cpu_head] = (struct cpu_sample) { .at = now, .cpu = cpu };
                e->cpu_head = (e->cpu_head + 1) % CPU_SAMPLES;
                if (e->n_cpu < CPU_SAMPLES)
                        e->n_cpu++;
        }
        /* The newest sample at least a window old is where the window starts. */
        for (unsigned i = 1; i <= e->n_cpu; i++) {
                const struct cpu_sample *c = &e->cpu[(e->cpu_head + CPU_SAMPLES - i) % CPU_SAMPLES];

                if (now - c->at >= e->limits.cpu_window) {
                        base = c->cpu;
                        break;
                }
        }
        return cpu > base ? cpu - base : 0;
}

static void check_usage(struct plugin *e, uint64_t now)
{
        uint64_t rss, cpu;

        if (!e->host.pid || e->cause != CAUSE_NONE || proc_usage(e->host.pid, &rss, &cpu) < 0)
                return;
        if (rss > e->limits.memory_max) {
                host_end(e, CAUSE_MEMORY);
                return;
        }
        if (cpu_in_window(e, now, cpu) * 100u > (uint64_t) e->limits.cpu_max * e->limits.cpu_window)
                host_end(e, CAUSE_CPU);
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
        struct plugins *p = userdata;
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        for (size_t i = 0; i < p->n; i++)
                check_usage(p->list[i], now);
        tick_arm(p);
        return 0;
}

/* The tick runs while any host does. */
static void tick_arm(struct plugins *p)
{
        bool any = false;
        uint64_t at = now_usec(CLOCK_MONOTONIC) + PLUGIN_TICK_USEC;

        for (size_t i = 0; i < p->n && !any; i++)
                any = p->list[i]->host.pid != 0;
        if (!any) {
                if (p->tick)
                        (void) sd_event_source_set_enabled(p->tick, SD_EVENT_OFF);
                return;
        }
        if (!p->tick) {
                if (sd_event_add_time(p->event, &p->tick, CLOCK_MONOTONIC, at, 10000, on_tick, p) < 0)
                        emit(p, LOG_ERR, NULL, "plugins: no timer: memory and CPU limits "
                             "are not kept");
                return;
        }
        if (sd_event_source_get_enabled(p->tick, NULL) > 0)
                return;
        (void) sd_event_source_set_time(p->tick, at);
        (void) sd_event_source_set_enabled(p->tick, SD_EVENT_ONESHOT);
}

/*
 * Once is slow, twice in a row is hung: the namespace asks a provider that
 * missed the deadline again only after a quiet second, so a host that
 * misses it at the next ask too has not answered for that long.
 */
int plugins_missed_deadline(struct plugins *p, pid_t pid)
{
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (!p || pid <= 0)
                return 0;
        for (size_t i = 0; i < p->n; i++) {
                struct plugin *e = p->list[i];

                if (e->host.pid != pid || (e->state != PLUGIN_RUNNING &&
                                           e->state != PLUGIN_STARTING))
                        continue;
                if (e->missed_at && now - e->missed_at < MISSED_AGAIN_USEC)
                        host_end(e, CAUSE_COLLECT_DEADLINE);
                else
                        e->missed_at = now;
                return 1;
        }
        return 0;
}

/* Appends a new entry for a plugin file found by a scan at now. */
static int scan_add(struct plugins *p, const char *file, const struct stat *st, uint64_t now,
                    struct plugin ***list, size_t *n, size_t *cap)
{
        struct file_id id;
        struct plugin *e;
        int r;

        if (*n == *cap) {
                size_t c = *cap ? *cap * 2 : 16;
                struct plugin **l = reallocarray(*list, c, sizeof(**list));

                if (!l)
                        return -ENOMEM;
                *list = l;
                *cap = c;
        }
        file_id_from_stat(st, &id);
        r = plugin_new(p, file, &id, now, &e);
        if (r < 0)
                return r;
        (*list)[(*n)++] = e;
        return 0;
}

/*
 * Every plugin file of the directory, as new pending entries sorted by
 * name; *ret is owned by the caller.  Symbolic links are followed; a
 * dangling one, a directory or a device is not a plugin.
 */
static int scan_dir(struct plugins *p, uint64_t now, struct plugin ***ret, size_t *ret_n)
{
        struct plugin **list = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        struct stat st;
        DIR *d;
        int r = 0;

        d = opendir(p->dir);
        if (!d) {
                r = errno;
                if (r != ENOENT)
                        return r > 0 ? -r : -EIO;
                *ret = NULL;
                *ret_n = 0;
                return 0;
        }
        for (;;) {
                errno = 0;
                de = readdir(d);
                if (!de) {
                        r = -errno;
                        break;
                }
                if (!plugin_file_name(de->d_name) ||
                    fstatat(dirfd(d), de->d_name, &st, 0) < 0 || !S_ISREG(st.st_mode))
                        continue;
                r = scan_add(p, de->d_name, &st, now, &list, &n, &cap);
                if (r < 0)
                        break;
        }
        closedir(d);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        plugin_free(list[i]);
                free(list);
                return r;
        }
        if (n > 1)
                qsort(list, n, sizeof(*list), compare_plugins);
        *ret = list;
        *ret_n = n;
        return 0;
}

/*
 * Whether the old entry stands for the file a scan found now: the same
 * version for one that was tried; for one still waiting, also untouched
 * since, else it starts waiting again.
 */
static bool still_current(const struct plugin *old, const struct plugin *found)
{
        if (old->state == PLUGIN_PENDING)
                return file_id_untouched(&old->id, &found->id);
        return file_id_equal(&old->id, &found->id);
}

/* ---- duplicates, loading and the directory ---- */

/*
 * Refuses e when it published a GUID a running plugin published first:
 * said once per version of its file, and e's host is stopped.  -EEXIST then.
 */
static int plugin_check_unique(struct plugin *e)
{
        const struct plugins *p = e->owner;
        char guid[PUB_GUID_TEXT];

        for (size_t i = 0; i < p->n; i++) {
                const struct plugin *o = p->list[i];
                const struct pub *c;

                if (o == e || o->state != PLUGIN_RUNNING)
                        continue;
                c = pub_common(e->pubs, e->n_pubs, o->pubs, o->n_pubs);
                if (!c)
                        continue;
                pub_guid_text(&c->guid, guid);
                if (!e->said)
                        plugin_log(e, LOG_ERR, "%s %s is already published by plugin %s, "
                                   "which was loaded first; skipped",
                                   c->counterset ? "counterset" : "provider", guid, o->file);
                e->said = true;
                snprintf(e->dup_of, sizeof(e->dup_of), "%s", o->file);
                host_end_why(e, CAUSE_STOP, "duplicate");
                return -EEXIST;
        }
        return 0;
}

/*
 * Copies e's file and starts its first host.  -EAGAIN: its file is not
 * ready (nothing logged; e stays PENDING).  Other failures are logged and
 * leave e FAILED.
 */
static int plugin_load(struct plugin *e, const char *path, uint64_t now)
{
        int r;

        /* Whoever may write it could run code as the host's user. */
        if (e->id.mode & S_IWOTH) {
                plugin_log(e, LOG_ERR, "%s", "writable by others; skipped");
                r = -EPERM;
        } else
                r = plugin_copy(e, path);
        if (r == -EAGAIN)
                return r;
        if (r == 0)
                r = host_start(e, now);
        if (r < 0) {
                e->state = PLUGIN_FAILED;
                return r;
        }
        return 0;
}

/* A gone plugin of that file whose host still stops: its successor waits. */
static bool predecessor_stopping(const struct plugins *p, const char *file)
{
        for (size_t i = 0; i < p->n_gone; i++)
                if (strcmp(p->gone[i]->file, file) == 0)
                        return true;
        return false;
}

/*
 * Moves the old entries that still stand for their file into the new list
 * (in place of their fresh twin); the others' hosts are stopped (they wait
 * in the gone list until they are) and the rest freed.
 */
static void retire_old(struct plugins *p, struct plugin **found, size_t n_found)
{
        for (size_t i = 0; i < p->n; i++) {
                struct plugin *old = p->list[i];
                struct plugin **slot = find_slot(found, n_found, old->file);
                struct plugin **v;

                if (slot && still_current(old, *slot)) {
                        plugin_free(*slot);
                        *slot = old;
                        continue;
                }
                if (!old->host.pid) {
                        plugin_free(old);
                        continue;
                }
                v = reallocarray(p->gone, p->n_gone + 1, sizeof(*v));
                if (!v) {
                        /* Cannot wait for it: ended at once. */
                        (void) kill(old->host.pid, SIGKILL);
                        (void) waitpid(old->host.pid, NULL, 0);
                        plugin_free(old);
                        continue;
                }
                p->gone = v;
                p->gone[p->n_gone++] = old;
                old->removed = true;
                old->cause = CAUSE_NONE;
                if (old->state != PLUGIN_STOPPING)
                        host_end_why(old, CAUSE_STOP, slot ? "file replaced" : "file removed");
                else
                        old->cause = CAUSE_STOP;
        }
}

/*
 * Tries a pending entry whose time has come.  One that is the same file as
 * a running plugin is refused: it would publish the same providers again.
 * One whose file is not ready waits (e->retry_at), as does one whose
 * previous version's host has not stopped yet.
 */
static void try_load(struct plugins *p, struct plugin *e, uint64_t now)
{
        const struct plugin *twin;
        char path[PATH_MAX];
        uint64_t when;

        if (now < e->retry_at || predecessor_stopping(p, e->file))
                return;
        if (!settled(p, e, now, &when)) {
                e->retry_at = when;
                return;
        }
        twin = same_file(p, e);
        if (twin) {
                if (!e->said)
                        plugin_log(e, LOG_ERR, "same file as %s, already running; skipped",
                                   twin->file);
                e->said = e->twin = true;
                e->state = PLUGIN_FAILED;
                return;
        }
        if ((size_t) snprintf(path, sizeof(path), "%s/%s", p->dir, e->file) >= sizeof(path)) {
                plugin_log(e, LOG_ERR, "%s", "path too long; skipped");
                e->state = PLUGIN_FAILED;
                return;
        }
        /* Tried again after the settle time, doubling for a file found short. */
        if (plugin_load(e, path, now) == -EAGAIN)
                e->retry_at = now + (p->settle_usec << (e->short_tries ? e->short_tries - 1 : 0));
}

/*
 * Whether a refused twin or duplicate must wait still: while a running
 * plugin has its file or publishes what it published, or while the plugin
 * it lost to is being replaced (that one keeps its place).
 */
static bool still_refused(const struct plugins *p, const struct plugin *e)
{
        struct plugin **winner;

        if (e->twin)
                return same_file(p, e) != NULL;
        if (e->host.pid)
                return true;
        for (size_t i = 0; i < p->n; i++) {
                const struct plugin *o = p->list[i];

                if (o != e && o->state == PLUGIN_RUNNING &&
                    pub_common(e->pubs, e->n_pubs, o->pubs, o->n_pubs))
                        return true;
        }
        winner = find_slot(p->list, p->n, e->dup_of);
        return winner && ((*winner)->state == PLUGIN_PENDING ||
                          (*winner)->state == PLUGIN_STARTING);
}

/*
 * New and changed files first, in name order; then the twins and
 * duplicates refused earlier whose way is clear now.
 */
static void load_pending(struct plugins *p, uint64_t now)
{
        for (size_t i = 0; i < p->n; i++)
                if (p->list[i]->state == PLUGIN_PENDING)
                        try_load(p, p->list[i], now);
        for (size_t i = 0; i < p->n; i++) {
                struct plugin *e = p->list[i];

                if (e->state != PLUGIN_FAILED || (!e->twin && !e->dup_of[0]) ||
                    still_refused(p, e))
                        continue;
                e->state = PLUGIN_PENDING;
                e->twin = false;
                e->dup_of[0] = '\0';
                try_load(p, e, now);
        }
}

static int on_sync_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
        (void) plugins_sync(userdata);
        return 0;
}

/* Syncs again at `at` (µs, monotonic); 0 disarms. */
static void sync_at(struct plugins *p, uint64_t at)
{
        if (p->freeing)
                return;
        if (at == 0) {
                if (p->sync_timer)
                        (void) sd_event_source_set_enabled(p->sync_timer, SD_EVENT_OFF);
                return;
        }
        if (!p->sync_timer) {
                if (sd_event_add_time(p->event, &p->sync_timer, CLOCK_MONOTONIC, at, 1000,
                                      on_sync_timer, p) < 0)
                        emit(p, LOG_WARNING, NULL, "plugins: no timer: a file still being "
                             "written loads at the next change or SIGHUP");
                return;
        }
        (void) sd_event_source_set_time(p->sync_timer, at);
        (void) sd_event_source_set_enabled(p->sync_timer, SD_EVENT_ONESHOT);
}

static void sync_soon(struct plugins *p)
{
        sync_at(p, now_usec(CLOCK_MONOTONIC));
}

int plugins_sync(struct plugins *p)
{
        struct plugin **found;
        size_t n_found;
        uint64_t now = now_usec(CLOCK_MONOTONIC), next = 0;
        int r;

        if (!p)
                return -EINVAL;
        r = scan_dir(p, now, &found, &n_found);
        if (r < 0) {
                emit(p, LOG_ERR, NULL, "plugins: cannot read %s: %s", p->dir, strerror(-r));
                return r;
        }
        retire_old(p, found, n_found);
        free(p->list);
        p->list = found;
        p->n = n_found;
        load_pending(p, now);
        for (size_t i = 0; i < p->n; i++)
                if (p->list[i]->state == PLUGIN_PENDING &&
                    !predecessor_stopping(p, p->list[i]->file) &&
                    (next == 0 || p->list[i]->retry_at < next))
                        next = p->list[i]->retry_at;
        sync_at(p, next);
        tick_arm(p);
        changed(p);
        return 0;
}

/* ---- the supervisor ---- */

int plugins_new(const char *dir, const struct plugins_config *cfg, struct plugins **ret)
{
        struct plugins *p;
        int r;

        if (!dir || !*dir || !cfg || !cfg->event || !ret)
                return -EINVAL;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->settle_usec = (uint64_t) (cfg->settle_ms ? cfg->settle_ms : PLUGINS_SETTLE_MS) * 1000u;
        p->log = cfg->log;
        p->changed = cfg->changed;
        p->userdata = cfg->userdata;
        p->event = sd_event_ref(cfg->event);
        p->conf = cfg->conf;
        p->collect_timeout_ms = cfg->collect_timeout_ms;
        p->root = geteuid() == 0;
        if (cfg->limits)
                p->limits = *cfg->limits;
        else
                plugin_limits_default(&p->limits);
        p->dir = strdup(dir);
        r = p->dir ? 0 : -ENOMEM;
        if (r == 0)
                r = cfg->host ? ((p->host = strdup(cfg->host)) ? 0 : -ENOMEM)
                              : plugins_default_host(&p->host);
        if (r == 0 && cfg->state_file)
                r = (p->state_file = strdup(cfg->state_file)) ? 0 : -ENOMEM;
        if (r < 0) {
                plugins_free(p);
                return r;
        }
        *ret = p;
        return 0;
}

/* The hosts still running, each asked to stop, waited for until the grace is over. */
static void stop_all(struct plugins *p)
{
        uint64_t deadline = 0, now = now_usec(CLOCK_MONOTONIC);
        struct plugin **all = reallocarray(NULL, p->n + p->n_gone + 1, sizeof(*all));
        size_t n = 0;

        if (!all)
                return;
        for (size_t i = 0; i < p->n + p->n_gone; i++) {
                struct plugin *e = i < p->n ? p->list[i] : p->gone[i - p->n];

                if (!e->host.pid)
                        continue;
                (void) kill(e->host.pid, SIGTERM);
                if (now + e->limits.stop_timeout > deadline)
                        deadline = now + e->limits.stop_timeout;
                all[n++] = e;
        }
        for (size_t i = 0; i < n; i++) {
                struct plugin *e = all[i];
                siginfo_t si;

                for (;;) {
                        uint64_t t = now_usec(CLOCK_MONOTONIC);
                        struct pollfd pfd = { .fd = e->host.pidfd, .events = POLLIN };

                        if (host_reap(&e->host, &si) == 0)
                                break;
                        if (t >= deadline) {
                                plugin_log(e, LOG_WARNING, "%s", "did not stop in time; killed");
                                (void) kill(e->host.pid, SIGKILL);
                                (void) waitpid(e->host.pid, NULL, 0);
                                break;
                        }
                        (void) poll(&pfd, 1, (int) ((deadline - t + 999) / 1000));
                }
                e->host.pid = 0;
                e->state = PLUGIN_FAILED;
                plugin_log(e, LOG_INFO, "stopped \"%s\" (server stopping)",
                           display_name(e, (char[NAME_MAX_LEN + 1]){ 0 }));
        }
        free(all);
}

void plugins_free(struct plugins *p)
{
        if (!p)
                return;
        p->freeing = true;
        stop_all(p);
        for (size_t i = 0; i < p->n; i++)
                plugin_free(p->list[i]);
        for (size_t i = 0; i < p->n_gone; i++)
                plugin_free(p->gone[i]);
        free(p->list);
        free(p->gone);
        sd_event_source_disable_unref(p->sync_timer);
        sd_event_source_disable_unref(p->tick);
        sd_event_unref(p->event);
        if (p->state_file)
                (void) unlink(p->state_file);
        free(p->state_file);
        free(p->host);
        free(p->dir);
        free(p);
}

bool plugins_busy(const struct plugins *p)
{
        if (!p)
                return false;
        for (size_t i = 0; i < p->n; i++) {
                enum plugin_state s = p->list[i]->state;

                if (s == PLUGIN_PENDING || s == PLUGIN_STARTING || s == PLUGIN_STOPPING)
                        return true;
        }
        return p->n_gone > 0;
}

size_t plugins_count(const struct plugins *p, enum plugin_state state)
{
        size_t n = 0;

        for (size_t i = 0; p && i < p->n; i++)
                n += p->list[i]->state == state;
        return n;
}

int plugins_foreach(const struct plugins *p,
                    int (*cb)(const struct plugin_info *info, void *userdata), void *userdata)
{
        if (!p || !cb)
                return -EINVAL;
        for (size_t i = 0; i < p->n; i++) {
                const struct plugin *e = p->list[i];
                struct plugin_info info = {
                        .file = e->file,
                        .name = e->name,
                        .state = e->state,
                        .pid = e->host.pid,
                        .restarts = e->restarts,
                        .last_fault = e->last_fault,
                };
                int r = cb(&info, userdata);

                if (r != 0)
                        return r;
        }
        return 0;
}

/*
 * The plugin table perflibd --list-plugins prints, replaced whole (a
 * reader never sees half of one).  Not written is no fault: logged at debug.
 */
static void write_state(const struct plugins *p)
{
        char tmp[PATH_MAX];
        FILE *f;
        int fd;

        if (!p->state_file ||
            (size_t) snprintf(tmp, sizeof(tmp), "%s.tmp", p->state_file) >= sizeof(tmp))
                return;
        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
        f = fd >= 0 ? fdopen(fd, "w") : NULL;
        if (!f) {
                if (fd >= 0)
                        close(fd);
                emit(p, LOG_DEBUG, NULL, "plugins: cannot write %s: %s", tmp, strerror(errno));
                return;
        }
        fprintf(f, "%-24s %-20s %-10s %7s %8s  %s\n", "FILE", "NAME", "STATE", "PID",
                "RESTARTS", "LAST FAULT");
        for (size_t i = 0; i < p->n; i++) {
                const struct plugin *e = p->list[i];

                fprintf(f, "%-24s %-20s %-10s %7ld %8u  %s\n", e->file, e->name ? e->name : "-",
                        plugin_state_name(e->state), (long) e->host.pid, e->restarts,
                        e->last_fault[0] ? e->last_fault : "-");
        }
        if (fclose(f) != 0 || rename(tmp, p->state_file) < 0) {
                emit(p, LOG_DEBUG, NULL, "plugins: cannot write %s: %s", p->state_file,
                     strerror(errno));
                (void) unlink(tmp);
        }
}

/* SPDX-License-Identifier: MIT */
/*
 * supervise.c: perflibd's side of the plugin supervisor (plugins/): its
 * options, starting it on the loop, handing it the namespace's missed
 * collect deadlines, and --list-plugins.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"
#include "log.h"
#include "plugins.h"
#include "reader.h"

#define STATE_FILE "plugins.state"
/* How long perflibd waits for its plugins to start before it listens. */
#define PLUGINS_READY_WAIT_USEC (UINT64_C(2) * 1000000u)

static const char *const plugin_keys[] = {
        [OPT_PLUGIN_MEMORY_MAX - OPT_PLUGIN_BASE] = "memory-max",
        [OPT_PLUGIN_START_TIMEOUT - OPT_PLUGIN_BASE] = "start-timeout",
        [OPT_PLUGIN_STOP_TIMEOUT - OPT_PLUGIN_BASE] = "stop-timeout",
        [OPT_PLUGIN_CPU_MAX - OPT_PLUGIN_BASE] = "cpu-max",
        [OPT_PLUGIN_CPU_WINDOW - OPT_PLUGIN_BASE] = "cpu-window",
        [OPT_PLUGIN_RESTART_MIN - OPT_PLUGIN_BASE] = "restart-min",
        [OPT_PLUGIN_RESTART_MAX - OPT_PLUGIN_BASE] = "restart-max",
        [OPT_PLUGIN_USER - OPT_PLUGIN_BASE] = "user",
};

static int set_string(char **dst, const char *s)
{
        char *t = strdup(s);

        if (!t)
                return -ENOMEM;
        free(*dst);
        *dst = t;
        return 0;
}

int daemon_plugin_option(struct daemon *d, int opt, const char *name, const char *arg)
{
        uint64_t usec;

        switch (opt) {
        case OPT_PLUGIN_HOST:
                return set_string(&d->plugin_host, arg);
        case OPT_PLUGIN_CONFIG:
                return set_string(&d->plugin_config, arg);
        case OPT_LIST_PLUGINS:
                d->list_plugins = true;
                return 0;
        case OPT_COLLECT_TIMEOUT:
                if (plugin_parse_time(arg, &usec) < 0 || usec < 1000 || usec > 60000000u) {
                        fprintf(stderr, "perflibd: --%s: not a time from 1ms to 60s: %s\n",
                                name, arg);
                        return -EINVAL;
                }
                d->collect_timeout_ms = (unsigned) (usec / 1000u);
                return 0;
        default:
                break;
        }
        if (opt < OPT_PLUGIN_BASE || opt > OPT_PLUGIN_USER)
                return -EINVAL;
        if (plugin_limits_set(&d->plugin_limits, plugin_keys[opt - OPT_PLUGIN_BASE], arg) < 0) {
                fprintf(stderr, "perflibd: --%s: bad value: %s (see perflibd --help)\n", name,
                        arg);
                return -EINVAL;
        }
        return 0;
}

/*
 * The collect bound is read by libperflib's reader from the environment,
 * in this process: the flag sets it there.  Then the per-plugin file.
 */
int daemon_plugins_setup(struct daemon *d)
{
        char buf[16], *error = NULL;
        const char *path;
        int r;

        if (d->collect_timeout_ms) {
                snprintf(buf, sizeof(buf), "%u", d->collect_timeout_ms);
                if (setenv("PERFLIB_COLLECT_TIMEOUT_MS", buf, 1) < 0)
                        return -errno;
        }
        d->collect_timeout_ms = (unsigned) pl_collect_timeout_ms();
        path = d->plugin_config ? d->plugin_config : getenv("PERFLIB_PLUGIN_CONFIG");
        if (!path || !*path)
                path = PERFLIB_PLUGIN_CONFIG_DEFAULT;
        r = plugin_conf_load(path, &d->plugin_limits, &d->plugin_conf, &error);
        if (r < 0) {
                fprintf(stderr, "perflibd: %s\n", error ? error : strerror(-r));
                free(error);
        }
        return r;
}

/* ---- the loop's side ---- */

/* From the namespace, any thread: only hands the pid to the loop. */
static void on_missed(void *userdata, pid_t pid)
{
        struct daemon *d = userdata;

        if (pid > 0)
                (void) write(d->missed_pipe[1], &pid, sizeof(pid));
}

static int on_missed_pipe(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
        struct daemon *d = userdata;
        pid_t pids[64];
        ssize_t n = read(fd, pids, sizeof(pids));

        for (ssize_t i = 0; i < n / (ssize_t) sizeof(pid_t); i++)
                (void) plugins_missed_deadline(d->plugins, pids[i]);
        return 0;
}

/*
 * Also called with the plugins' own lines.  The rate limit goes by plugin
 * file, so that each plugin's start and stop are always said however many
 * plugins there are, and by format: errors and warnings get one of their
 * own ("%-s" prints as "%s"), never suppressed for a plugin's chatter.
 */
static void plugin_log(void *userdata, int priority, const char *file, const char *message)
{
        if (priority <= LOG_WARNING)
                log_subject_msg(priority, file, "%-s", message);
        else
                log_subject_msg(priority, file, "%s", message);
}

static void missed_setup(struct daemon *d)
{
        if (pipe2(d->missed_pipe, O_CLOEXEC | O_NONBLOCK) < 0 ||
            sd_event_add_io(d->event, &d->missed_src, d->missed_pipe[0], EPOLLIN,
                            on_missed_pipe, d) < 0) {
                log_warning("plugins: a host that misses its collect deadline is not "
                            "restarted (%s)", strerror(errno));
                return;
        }
        ns_set_missed(d->ns, on_missed, d);
}

/*
 * As root the hosts run as another user, who must reach the runtime
 * directory to publish in its own directory below it.  Said once, at
 * start: every host would fail the same way.
 */
static void check_runtime_reachable(const struct daemon *d)
{
        struct stat st;

        if (geteuid() != 0 || strcmp(d->plugin_limits.user, "root") == 0 ||
            stat(d->runtime_dir, &st) < 0 || (st.st_mode & S_IXOTH))
                return;
        log_warning("plugins: %s is mode %04o: plugin hosts, which run as %s, cannot publish "
                    "in it; make it 0755, or see --plugin-user", d->runtime_dir,
                    (unsigned) (st.st_mode & 07777),
                    d->plugin_limits.user[0] ? d->plugin_limits.user : PLUGIN_USER_DEFAULT);
}

/*
 * A client that connects as soon as perflibd listens should find the
 * plugins there; a plugin whose start hangs must not keep everyone else
 * waiting: so the loop runs until every host started (or failed), for
 * PLUGINS_READY_WAIT_USEC at most, before perflibd listens.
 */
static void wait_started(struct daemon *d)
{
        uint64_t now, end;

        if (sd_event_now(d->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        end = now + PLUGINS_READY_WAIT_USEC;
        while (plugins_busy(d->plugins) && now < end &&
               sd_event_get_state(d->event) != SD_EVENT_FINISHED) {
                if (sd_event_run(d->event, end - now) < 0 ||
                    sd_event_now(d->event, CLOCK_MONOTONIC, &now) < 0)
                        return;
        }
}

void daemon_plugins_start(struct daemon *d, void (*changed)(void *userdata))
{
        char *state = NULL;
        struct plugins_config cfg = {
                .log = plugin_log, .changed = changed, .userdata = d,
                .event = d->event, .host = d->plugin_host, .limits = &d->plugin_limits,
                .conf = d->plugin_conf, .collect_timeout_ms = d->collect_timeout_ms,
        };
        int r;

        if (asprintf(&state, "%s/" STATE_FILE, d->runtime_dir) < 0)
                state = NULL;
        cfg.state_file = state;
        r = plugins_new(d->plugin_dir, &cfg, &d->plugins);
        free(state);
        if (r < 0) {
                log_warning("plugins disabled: %s", strerror(-r));
                return;
        }
        if (access(d->plugin_host ? d->plugin_host : PERFLIB_PLUGIN_HOST_DEFAULT, X_OK) < 0 &&
            !getenv("PERFLIB_PLUGIN_HOST"))
                log_warning("plugins: the host program %s: %s; no plugin can start",
                            d->plugin_host ? d->plugin_host : PERFLIB_PLUGIN_HOST_DEFAULT,
                            strerror(errno));
        check_runtime_reachable(d);
        missed_setup(d);
        r = plugins_sync(d->plugins);
        if (r < 0 && r != -ENOENT)
                log_warning("plugin directory %s: %s", d->plugin_dir, strerror(-r));
        wait_started(d);
}

void daemon_plugins_resync(struct daemon *d)
{
        if (d->plugins)
                (void) plugins_sync(d->plugins);
}

void daemon_plugins_done(struct daemon *d)
{
        plugins_free(d->plugins);
        d->plugins = NULL;
        if (d->ns)
                ns_set_missed(d->ns, NULL, NULL);
        d->missed_src = sd_event_source_disable_unref(d->missed_src);
        for (int i = 0; i < 2; i++)
                if (d->missed_pipe[i] > 0)
                        close(d->missed_pipe[i]);
        plugin_conf_free(d->plugin_conf);
        free(d->plugin_host);
        free(d->plugin_config);
}

/* --list-plugins: the running server's table, as it last wrote it. */
int daemon_list_plugins(const struct daemon *d)
{
        char *path, buf[4096];
        ssize_t n;
        int fd;

        if (asprintf(&path, "%s/" STATE_FILE, d->runtime_dir) < 0)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "perflibd: %s: %s (is perflibd running with runtime "
                        "directory %s?)\n", path, strerror(errno), d->runtime_dir);
                free(path);
                return -ENOENT;
        }
        free(path);
        while ((n = read(fd, buf, sizeof(buf))) > 0)
                fwrite(buf, 1, (size_t) n, stdout);
        close(fd);
        return 0;
}

/* SPDX-License-Identifier: MIT */
/*
 * The plugin supervisor (server-glue/plugins/) against the test plugins of
 * tests/plugins/, each started in a real host process (perflib-plugin-host)
 * on an sd-event loop this test runs: which files of the directory it
 * starts, what it logs about the ones it refuses, that a started plugin's
 * provider is readable like any other (from its host's process, its
 * reference counter through the host's collect service), that sync follows
 * files being removed, replaced and added back, waits for files being
 * written, and refuses a plugin publishing what another does.  The faults
 * of plugins (crashes, hangs, limits) are test-plugin-faults' and
 * test-plugin-host's.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>
#include <cmocka.h>
#include <systemd/sd-event.h>

#include "plugins.h"
#include "test-plugin.h"
#include "testutil.h"

/* ---- what the loader logged ---- */

struct logged {
        int priority;
        char *file;
        char *message;
};

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static struct logged *logs;
static size_t n_logs;

static void capture(void *userdata, int priority, const char *file, const char *message)
{
        struct logged *l;

        (void) userdata;
        pthread_mutex_lock(&log_lock);
        l = reallocarray(logs, n_logs + 1, sizeof(*logs));
        if (!l)
                abort();
        logs = l;
        logs[n_logs] = (struct logged) {
                .priority = priority,
                .file = file ? strdup(file) : NULL,
                .message = strdup(message),
        };
        if (!logs[n_logs].message || (file && !logs[n_logs].file))
                abort();
        n_logs++;
        pthread_mutex_unlock(&log_lock);
}

static void logs_clear(void)
{
        for (size_t i = 0; i < n_logs; i++) {
                free(logs[i].file);
                free(logs[i].message);
        }
        free(logs);
        logs = NULL;
        n_logs = 0;
}

/*
 * How many messages about file (at priority, or any with -1) contain text;
 * each must also name the file in its text, which is what a reader of the
 * log sees.
 */
static size_t logged(int priority, const char *file, const char *text)
{
        size_t n = 0;

        for (size_t i = 0; i < n_logs; i++) {
                const struct logged *l = &logs[i];

                if (!l->file || strcmp(l->file, file) != 0 ||
                    (priority >= 0 && l->priority != priority) || !strstr(l->message, text))
                        continue;
                assert_non_null(strstr(l->message, file));
                n++;
        }
        return n;
}

/* Messages about file at LOG_WARNING or worse. */
static size_t problems(const char *file)
{
        size_t n = 0;

        for (size_t i = 0; i < n_logs; i++)
                n += logs[i].file && strcmp(logs[i].file, file) == 0 &&
                     logs[i].priority <= LOG_WARNING;
        return n;
}

/* ---- the plugin directory ---- */

static char plugin_dir[PATH_MAX];

static void path_in_dir(char *buf, const char *file)
{
        assert_true((size_t) snprintf(buf, PATH_MAX, "%s/%s", plugin_dir, file) < PATH_MAX);
}

static void module_path(char *buf, const char *module)
{
        assert_true((size_t) snprintf(buf, PATH_MAX, "%s/%s.so", TEST_PLUGIN_BUILD_DIR,
                                      module) < PATH_MAX);
}

static void copy_file(const char *src, const char *dst, mode_t mode)
{
        char buf[65536];
        ssize_t n;
        int in = open(src, O_RDONLY | O_CLOEXEC);
        int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);

        assert_true(in >= 0);
        assert_true(out >= 0);
        while ((n = read(in, buf, sizeof(buf))) > 0)
                assert_int_equal(write(out, buf, (size_t) n), n);
        assert_int_equal(n, 0);
        assert_int_equal(fchmod(out, mode), 0);
        close(in);
        assert_int_equal(close(out), 0);
}

/*
 * Installs the built test module as file, the way an installer should: a
 * copy under a dot name, renamed over the file, so always a new inode.
 */
static void install_mode(const char *module, const char *file, mode_t mode)
{
        char src[PATH_MAX], tmp[PATH_MAX], dst[PATH_MAX], dotname[NAME_MAX + 1];

        module_path(src, module);
        assert_true((size_t) snprintf(dotname, sizeof(dotname), ".%s.tmp", file) <
                    sizeof(dotname));
        path_in_dir(tmp, dotname);
        path_in_dir(dst, file);
        copy_file(src, tmp, mode);
        assert_int_equal(rename(tmp, dst), 0);
}

static void install(const char *module, const char *file)
{
        install_mode(module, file, 0755);
}

static void write_file(const char *file, const char *content)
{
        char path[PATH_MAX];
        FILE *f;

        path_in_dir(path, file);
        f = fopen(path, "we");
        assert_non_null(f);
        assert_true(fputs(content, f) >= 0);
        assert_int_equal(fclose(f), 0);
}

static void remove_file(const char *file)
{
        char path[PATH_MAX];

        path_in_dir(path, file);
        assert_int_equal(unlink(path), 0);
}

/* The built module's bytes, malloc'd. */
static uint8_t *module_bytes(const char *module, size_t *ret_size)
{
        char path[PATH_MAX];
        struct stat st;
        uint8_t *buf;
        int fd;

        module_path(path, module);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        assert_true(fd >= 0);
        assert_int_equal(fstat(fd, &st), 0);
        buf = malloc((size_t) st.st_size);
        assert_non_null(buf);
        assert_int_equal(read(fd, buf, (size_t) st.st_size), st.st_size);
        close(fd);
        *ret_size = (size_t) st.st_size;
        return buf;
}

/* Opens file of the directory to write it in place, as cp(1) does: created or truncated. */
static int open_in_place(const char *file)
{
        char path[PATH_MAX];
        int fd;

        path_in_dir(path, file);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        assert_true(fd >= 0);
        return fd;
}

static void write_all(int fd, const uint8_t *buf, size_t size)
{
        assert_int_equal(write(fd, buf, size), (ssize_t) size);
}

static void link_to(const char *target, const char *file)
{
        char path[PATH_MAX];

        path_in_dir(path, file);
        assert_int_equal(symlink(target, path), 0);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st, (void) flag, (void) ftw;
        return remove(path) < 0 ? -errno : 0;
}

/* ---- the loader's view ---- */

struct lookup {
        const char *file;
        int state;                      /* -1: not listed */
        char name[64];
        char previous[NAME_MAX + 1];    /* checks the walk's order */
};

static int lookup_one(const struct plugin_info *info, void *userdata)
{
        struct lookup *k = userdata;

        assert_true(strcmp(k->previous, info->file) < 0);
        snprintf(k->previous, sizeof(k->previous), "%s", info->file);
        assert_true(info->state != PLUGIN_RUNNING || info->name != NULL);
        assert_true((info->state == PLUGIN_RUNNING) == (info->pid > 0));
        if (strcmp(info->file, k->file) == 0) {
                k->state = (int) info->state;
                snprintf(k->name, sizeof(k->name), "%s", info->name ? info->name : "");
        }
        return 0;
}

/* The state of file's plugin, or -1 when the loader does not list it. */
static int state_of(const struct plugins *p, const char *file)
{
        struct lookup k = { .file = file, .state = -1 };

        assert_int_equal(plugins_foreach(p, lookup_one, &k), 0);
        return k.state;
}

static const char *name_of(const struct plugins *p, const char *file)
{
        static struct lookup k;

        k = (struct lookup) { .file = file, .state = -1 };
        assert_int_equal(plugins_foreach(p, lookup_one, &k), 0);
        return k.name;
}

/* ---- syncing ---- */

/* The loader's settle time in these tests: a file is tried 10 ms after it was last touched. */
#define SETTLE_MS 10u

static sd_event *loop;

static bool idle(const void *arg);

static int print_one(const struct plugin_info *info, void *userdata)
{
        (void) userdata;
        print_message("%s: %s, pid %ld\n", info->file, plugin_state_name(info->state),
                      (long) info->pid);
        return 0;
}

/* Runs the supervisor's loop until done() (30 s at most: a loaded machine starts hosts slowly). */
static void run_until(bool (*done)(const void *arg), const void *arg)
{
        struct timespec now, end;

        clock_gettime(CLOCK_MONOTONIC, &end);
        end.tv_sec += 30;
        for (;;) {
                if (done(arg))
                        return;
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (now.tv_sec > end.tv_sec ||
                    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
                        break;
                assert_true(sd_event_run(loop, 10000) >= 0);
        }
        if (done == idle)
                (void) plugins_foreach(arg, print_one, NULL);
        for (size_t i = 0; i < n_logs; i++)
                print_message("logged: %s\n", logs[i].message);
        fail_msg("the supervisor never got there");
}

static bool idle(const void *arg)
{
        return !plugins_busy(arg);
}

/* Syncs as perflibd does, then runs the loop until no file waits and no host starts or stops. */
static void sync_settled(struct plugins *p)
{
        assert_int_equal(plugins_sync(p), 0);
        run_until(idle, p);
}

struct wanted_log {
        const char *file, *text;
};

static bool has_logged(const void *arg)
{
        const struct wanted_log *w = arg;

        return logged(-1, w->file, w->text) > 0;
}

/* Runs the loop until a message about file containing text is logged. */
static void wait_logged(const char *file, const char *text)
{
        const struct wanted_log w = { file, text };

        run_until(has_logged, &w);
}

/* ---- fixtures ---- */

/*
 * A configuration for the tests' supervisors: their loop, the built host,
 * which runs as we do (as root too: the runtime directory is ours).
 */
static struct plugin_limits test_limits;

static struct plugins_config test_config(unsigned settle_ms, bool quiet)
{
        plugin_limits_default(&test_limits);
        snprintf(test_limits.user, sizeof(test_limits.user), "root");
        return (struct plugins_config) {
                .limits = &test_limits,
                .log = quiet ? NULL : capture,
                .settle_ms = settle_ms,
                .event = loop,
                .host = PLUGIN_HOST_PATH,
                .collect_timeout_ms = 100,
        };
}

static int setup(void **state)
{
        const char *base = getenv("PERFLIB_TEST_TMPDIR");
        struct plugins_config cfg;
        struct plugins *p = NULL;

        tu_runtime_setup();
        snprintf(plugin_dir, sizeof(plugin_dir), "%s/perflib-plugins.XXXXXX",
                 base && *base ? base : "/tmp");
        if (!loop && sd_event_new(&loop) < 0)
                return -1;
        cfg = test_config(SETTLE_MS, false);
        if (!mkdtemp(plugin_dir) || plugins_new(plugin_dir, &cfg, &p) < 0)
                return -1;
        *state = p;
        return 0;
}

static int teardown(void **state)
{
        plugins_free(*state);
        (void) nftw(plugin_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
        tu_runtime_teardown();
        logs_clear();
        return 0;
}

/* ---- reading a plugin's provider ---- */

struct found_socket {
        char path[PATH_MAX];
        GUID guid;
        struct pl_reader *reader;
};

static int find_provider(const char *socket_path, void *userdata)
{
        struct found_socket *f = userdata;
        struct pl_reader *r = NULL;
        GUID guid;
        uint32_t pid;

        assert_int_equal(pl_reader_open(socket_path, &r), 0);
        assert_int_equal(pl_reader_provider(r, &guid, &pid), 0);
        if (memcmp(&guid, &f->guid, sizeof(guid)) != 0) {
                pl_reader_close(r);
                return 0;
        }
        /* The plugin runs in its host, never in the supervisor's process. */
        assert_true(pid != (uint32_t) getpid());
        snprintf(f->path, sizeof(f->path), "%s", socket_path);
        f->reader = r;
        return 1;
}

/*
 * The good plugin's (variant v) provider is announced in the runtime
 * directory, and a snapshot shows its instance with the values it set,
 * its reference counter read through the pointer it registered.
 */
static void check_good_values(unsigned v)
{
        struct found_socket f = { .guid = TP_PROVIDER_GUID(v) };
        const GUID cset = TP_CSET_GUID(v);
        const char *runtime = getenv("PERFLIB_RUNTIME_DIR");
        const struct pl_counterset *cs = NULL;
        struct pl_snapshot *s = NULL;

        assert_int_equal(pl_scan(runtime, find_provider, &f, NULL), 1);
        assert_memory_equal(f.path, runtime, strlen(runtime));
        assert_int_equal(f.path[strlen(runtime)], '/');
        assert_int_equal(pl_reader_find_counterset(f.reader, &cset, &cs), 0);
        assert_int_equal(cs->num_counters, 3);
        assert_int_equal(pl_reader_snapshot(f.reader, cs->index, PL_SNAPSHOT_COLLECT, &s), 0);
        assert_int_equal(s->n_instances, 1);
        assert_false(s->refs_stale);
        assert_int_equal(s->instances[0].instance_id, TP_INSTANCE_ID);
        assert_int_equal(wcscmp(s->instances[0].name, TP_INSTANCE_NAME), 0);
        assert_int_equal(s->instances[0].num_values, 3);
        assert_int_equal(s->instances[0].values[0], TP_VALUE_1(v));
        assert_true(s->instances[0].values[1] == TP_VALUE_2);
        assert_true(s->instances[0].values[2] == TP_VALUE_REF);
        pl_snapshot_free(s);
        pl_reader_close(f.reader);
}

/* ---- the tests ---- */

/* The bad plugins and what the loader must say about each. */
static const struct {
        const char *module;
        const char *reason;
} bad[] = {
        { "bad-abi", "descriptor has ABI 2, this server knows ABI 1" },
        { "bad-size", "descriptor size 8 is less than" },
        { "bad-no-entry", "no entry point perflib_plugin_entry_v1" },
        { "bad-null", "perflib_plugin_entry_v1 returned no descriptor" },
        { "bad-no-stop", "descriptor has no stop function" },
        { "bad-start", "start failed with Win32 error 5" },
        { "bad-undefined", "undefined symbol: tp_no_such_function" },
};

static void good_loads_bad_skipped(void **state)
{
        struct plugins *p = *state;
        char file[NAME_MAX + 1], text[PATH_MAX + 64], dir[PATH_MAX];

        install("good", "good.so");
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                snprintf(file, sizeof(file), "%s.so", bad[i].module);
                install(bad[i].module, file);
        }
        write_file("x.so", "#!/bin/sh\n# not a shared object, whatever its name says\n");
        /* Not plugins: a dotfile, a temporary name, a control character, a
         * directory, a text file. */
        install("bad-no-stop", ".hidden.so");
        install("bad-no-stop", "good.so.tmp");
        install("bad-no-stop", "new\nline.so");
        path_in_dir(dir, "dir.so");
        assert_int_equal(mkdir(dir, 0755), 0);
        write_file("notes.txt", "hello\n");

        sync_settled(p);
        assert_int_equal(plugins_count(p, PLUGIN_RUNNING), 1);
        assert_int_equal(plugins_count(p, PLUGIN_FAILED), sizeof(bad) / sizeof(bad[0]) + 1);
        assert_int_equal(state_of(p, "good.so"), PLUGIN_RUNNING);
        assert_string_equal(name_of(p, "good.so"), "good");
        assert_int_equal(logged(LOG_INFO, "good.so", "plugin good.so: started \"good\""), 1);
        /* The plugin's own message, through the services table, with its tag. */
        snprintf(text, sizeof(text), "plugin good (good.so): %s (runtime dir %s)", TP_HELLO,
                 getenv("PERFLIB_RUNTIME_DIR"));
        assert_int_equal(logged(LOG_NOTICE, "good.so", text), 1);

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                snprintf(file, sizeof(file), "%s.so", bad[i].module);
                assert_int_equal(state_of(p, file), PLUGIN_FAILED);
                assert_int_equal(logged(LOG_ERR, file, bad[i].reason), 1);
                assert_int_equal(logged(LOG_ERR, file, "skipped"), 1);
        }
        assert_int_equal(logged(LOG_CRIT, "bad-start.so",
                                "plugin bad (bad-start.so): " TP_START_FAILS), 1);
        assert_int_equal(state_of(p, "x.so"), PLUGIN_FAILED);
        assert_int_equal(logged(LOG_ERR, "x.so", "plugin x.so: cannot load: "), 1);
        assert_int_equal(state_of(p, ".hidden.so"), -1);
        assert_int_equal(state_of(p, "good.so.tmp"), -1);
        assert_int_equal(state_of(p, "new\nline.so"), -1);
        assert_int_equal(state_of(p, "dir.so"), -1);
        assert_int_equal(state_of(p, "notes.txt"), -1);

        /* Only the good plugin's provider is left: bad-start stopped its own. */
        assert_int_equal(tu_count_providers(NULL), 1);
        check_good_values(1);

        /* Nothing changed: nothing is tried again, nothing is logged. */
        logs_clear();
        sync_settled(p);
        assert_false(plugins_busy(p));
        assert_int_equal(n_logs, 0);
        assert_int_equal(plugins_count(p, PLUGIN_RUNNING), 1);
        assert_int_equal(plugins_count(p, PLUGIN_FAILED), sizeof(bad) / sizeof(bad[0]) + 1);
}

static void removed_then_added_back(void **state)
{
        struct plugins *p = *state;

        install("good", "good.so");
        sync_settled(p);
        assert_int_equal(tu_count_providers(NULL), 1);
        check_good_values(1);

        remove_file("good.so");
        sync_settled(p);
        assert_int_equal(state_of(p, "good.so"), -1);
        assert_int_equal(plugins_count(p, PLUGIN_RUNNING), 0);
        assert_int_equal(logged(LOG_INFO, "good.so", "stopped \"good\" (file removed)"), 1);
        assert_int_equal(tu_count_providers(NULL), 0);

        install("good", "good.so");
        sync_settled(p);
        assert_int_equal(state_of(p, "good.so"), PLUGIN_RUNNING);
        assert_int_equal(logged(LOG_INFO, "good.so", "started \"good\""), 2);
        assert_int_equal(tu_count_providers(NULL), 1);
        check_good_values(1);
}

static void replaced_is_reloaded(void **state)
{
        struct plugins *p = *state;
        char path[PATH_MAX];

        install("good", "good.so");
        sync_settled(p);

        /* A new inode under the same name. */
        install("good", "good.so");
        sync_settled(p);
        assert_int_equal(logged(LOG_INFO, "good.so", "stopped \"good\" (file replaced)"), 1);
        assert_int_equal(logged(LOG_INFO, "good.so", "started \"good\""), 2);

        /* The same inode with a new modification time. */
        path_in_dir(path, "good.so");
        assert_int_equal(utimensat(AT_FDCWD, path,
                                   (const struct timespec[2]) { { 0, UTIME_OMIT }, { 12345, 0 } },
                                   0), 0);
        sync_settled(p);
        assert_int_equal(logged(LOG_INFO, "good.so", "stopped \"good\" (file replaced)"), 2);
        assert_int_equal(logged(LOG_INFO, "good.so", "started \"good\""), 3);
        assert_int_equal(plugins_count(p, PLUGIN_RUNNING), 1);
        assert_int_equal(tu_count_providers(NULL), 1);
        check_good_values(1);

        /* A failed file is tried again once it changes. */
        write_file("x.so", "garbage");
        sync_settled(p);
        assert_int_equal(state_of(p, "x.so"), PLUGIN_FAILED);
        install("good2", "x.so");
        sync_settled(p);
        assert_int_equal(state_of(p, "x.so"), PLUGIN_RUNNING);
        assert_string_equal(name_of(p, "x.so"), "good2");
        assert_int_equal(tu_count_providers(NULL), 2);
        check_good_values(2);
}

static void symlinks(void **state)
{
        struct plugins *p = *state;
        char target[PATH_MAX];

        module_path(target, "good");
        link_to(target, "linked.so");
        link_to(target, "twin.so");
        link_to("/nonexistent/plugin.so", "dangling.so");
        link_to("/", "root.so");
        sync_settled(p);
        assert_int_equal(state_of(p, "linked.so"), PLUGIN_RUNNING);
        /* The dynamic linker would hand out the running copy a second time. */
        assert_int_equal(state_of(p, "twin.so"), PLUGIN_FAILED);
        assert_int_equal(logged(LOG_ERR, "twin.so",
                                "same file as linked.so, already running; skipped"), 1);
        assert_int_equal(state_of(p, "dangling.so"), -1);
        assert_int_equal(state_of(p, "root.so"), -1);
        assert_int_equal(tu_count_providers(NULL), 1);
        check_good_values(1);

        /* Said once, not on every sync. */
        sync_settled(p);
        assert_int_equal(logged(LOG_ERR, "twin.so", "same file as"), 1);

        /* Once the first is gone, its twin loads in its place. */
        remove_file("linked.so");
        sync_settled(p);
        assert_int_equal(state_of(p, "twin.so"), PLUGIN_RUNNING);
        assert_int_equal(tu_count_providers(NULL), 1);
        check_good_values(1);
}

static void writable_by_others(void **state)
{
        struct plugins *p = *state;
        char path[PATH_MAX];

        install_mode("good", "open.so", 0757);
        sync_settled(p);
        assert_int_equal(state_of(p, "open.so"), PLUGIN_FAILED);
        assert_int_equal(logged(LOG_ERR, "open.so", "writable by others; skipped"), 1);
        assert_int_equal(tu_count_providers(NULL), 0);

        /* A mode change is a change of the file: tried again. */
        path_in_dir(path, "open.so");
        assert_int_equal(chmod(path, 0755), 0);
        sync_settled(p);
        assert_int_equal(state_of(p, "open.so"), PLUGIN_RUNNING);
        assert_int_equal(tu_count_providers(NULL), 1);
}

static void free_stops_all(void **state)
{
        struct plugins *p = *state;

        install("good", "a.so");
        install("good2", "b.so");
        sync_settled(p);
        assert_int_equal(plugins_count(p, PLUGIN_RUNNING), 2);
        assert_int_equal(tu_count_providers(NULL), 2);
        check_good_values(1);
        check_good_values(2);

        plugins_free(p);
        *state = NULL;
        assert_int_equal(logged(LOG_INFO, "a.so", "stopped \"good\" (server stopping)"), 1);
        assert_int_equal(logged(LOG_INFO, "b.so", "stopped \"good2\" (server stopping)"), 1);
        assert_int_equal(tu_count_providers(NULL), 0);
}

/* A directory that cannot be read changes nothing; a missing one is empty. */
static void directory_errors(void **state)
{
        const struct plugins_config cfg = test_config(SETTLE_MS, false);
        struct plugins *p = *state, *q = NULL;
        char moved[PATH_MAX + 8];
        FILE *f;

        install("good", "good.so");
        sync_settled(p);

        /* The directory replaced by a file: an error, and the plugin keeps running. */
        snprintf(moved, sizeof(moved), "%s.moved", plugin_dir);
        assert_int_equal(rename(plugin_dir, moved), 0);
        f = fopen(plugin_dir, "we");
        assert_non_null(f);
        fclose(f);
        logs_clear();
        assert_int_equal(plugins_sync(p), -ENOTDIR);
        assert_int_equal(state_of(p, "good.so"), PLUGIN_RUNNING);
        assert_int_equal(tu_count_providers(NULL), 1);
        assert_int_equal(n_logs, 1);
        assert_null(logs[0].file);
        assert_int_equal(logs[0].priority, LOG_ERR);
        assert_non_null(strstr(logs[0].message, plugin_dir));
        assert_int_equal(unlink(plugin_dir), 0);
        assert_int_equal(rename(moved, plugin_dir), 0);
        sync_settled(p);
        assert_int_equal(state_of(p, "good.so"), PLUGIN_RUNNING);
        assert_int_equal(logged(-1, "good.so", "stopped"), 0);

        assert_int_equal(plugins_new("/nonexistent/perflib-plugins", &cfg, &q), 0);
        sync_settled(q);
        assert_int_equal(plugins_count(q, PLUGIN_RUNNING) + plugins_count(q, PLUGIN_FAILED), 0);
        plugins_free(q);
}

/*
 * A file being written is not loaded, and nothing is said about it, until
 * it is complete: neither while it is young nor when its writer pauses.
 */
static void being_written_waits(void **state)
{
        /* Its own loader, whose retries (31 settle times) outlast a loaded machine's stall. */
        const struct plugins_config cfg = test_config(100, false);
        struct plugins *p = NULL;
        size_t size;
        uint8_t *so = module_bytes("good", &size);
        int fd = open_in_place("slow.so");

        assert_int_equal(plugins_new(plugin_dir, &cfg, &p), 0);
        write_all(fd, so, size / 2);
        assert_int_equal(plugins_sync(p), 0);
        assert_int_equal(state_of(p, "slow.so"), PLUGIN_PENDING);
        assert_true(plugins_busy(p));

        /* The writer pauses: the file settles, is found short and waits again. */
        usleep(200000);
        assert_int_equal(plugins_sync(p), 0);
        assert_int_equal(state_of(p, "slow.so"), PLUGIN_PENDING);
        assert_true(logged(LOG_DEBUG, "slow.so", "its ELF headers need; trying again") > 0);
        assert_int_equal(tu_count_providers(NULL), 0);

        write_all(fd, so + size / 2, size - size / 2);
        assert_int_equal(close(fd), 0);
        sync_settled(p);
        assert_int_equal(state_of(p, "slow.so"), PLUGIN_RUNNING);
        assert_int_equal(logged(LOG_INFO, "slow.so", "started \"good\""), 1);
        assert_int_equal(problems("slow.so"), 0);
        check_good_values(1);
        plugins_free(p);
        free(so);
}

/* A file cut short is reported once, after its retries, with its size and what it needs. */
static void short_file_reported_once(void **state)
{
        struct plugins *p = *state;
        size_t size;
        uint8_t *so = module_bytes("good", &size);
        int fd = open_in_place("cut.so");

        write_all(fd, so, 1000);
        assert_int_equal(close(fd), 0);
        write_file("empty.so", "");
        sync_settled(p);
        assert_int_equal(state_of(p, "cut.so"), PLUGIN_FAILED);
        assert_int_equal(state_of(p, "empty.so"), PLUGIN_FAILED);
        assert_int_equal(logged(LOG_ERR, "cut.so", "plugin cut.so: 1000 bytes, shorter than the "),
                         1);
        assert_int_equal(logged(LOG_ERR, "empty.so", "plugin empty.so: 0 bytes, shorter than the"),
                         1);
        assert_int_equal(problems("cut.so") + problems("empty.so"), 2);
        assert_int_equal(logged(LOG_DEBUG, "cut.so", "trying again"), 5);

        /* Said once; completed, it loads. */
        sync_settled(p);
        assert_int_equal(problems("cut.so"), 1);
        install("good", "cut.so");
        sync_settled(p);
        assert_int_equal(state_of(p, "cut.so"), PLUGIN_RUNNING);
        assert_int_equal(problems("cut.so"), 1);
        free(so);
}

/*
 * A running plugin's file rewritten in place: the plugin runs from the
 * loader's copy, so stopping it while its file is truncated is safe (from
 * the file itself, its code would be gone: SIGBUS), and the new content
 * loads once written.
 */
static void rewritten_in_place(void **state)
{
        struct plugins *p = *state;
        size_t size;
        uint8_t *so = module_bytes("good2", &size);
        int fd;

        install("good", "good.so");
        sync_settled(p);
        assert_int_equal(state_of(p, "good.so"), PLUGIN_RUNNING);

        fd = open_in_place("good.so");
        assert_int_equal(plugins_sync(p), 0);
        wait_logged("good.so", "stopped \"good\" (file replaced)");
        assert_int_equal(logged(LOG_INFO, "good.so", "stopped \"good\" (file replaced)"), 1);
        assert_int_equal(state_of(p, "good.so"), PLUGIN_PENDING);
        assert_int_equal(tu_count_providers(NULL), 0);

        write_all(fd, so, size);
        assert_int_equal(close(fd), 0);
        sync_settled(p);
        assert_int_equal(state_of(p, "good.so"), PLUGIN_RUNNING);
        assert_string_equal(name_of(p, "good.so"), "good2");
        assert_int_equal(problems("good.so"), 0);
        assert_int_equal(tu_count_providers(NULL), 1);
        check_good_values(2);
        free(so);
}

/*
 * Two plugins publishing one provider, or one counterset: the first loaded
 * keeps it, the other is refused, said once naming both files, and tried
 * again once the first is gone.
 */
static void duplicates(void **state)
{
        struct plugins *p = *state;

        install("good", "a.so");
        install("good", "b.so");
        sync_settled(p);
        assert_int_equal(state_of(p, "a.so"), PLUGIN_RUNNING);
        assert_int_equal(state_of(p, "b.so"), PLUGIN_FAILED);
        assert_int_equal(logged(LOG_ERR, "b.so", "plugin b.so: provider " TP_PROVIDER_TEXT(1)
                                " is already published by plugin a.so, which was loaded first; "
                                "skipped"), 1);
        assert_int_equal(tu_count_providers(NULL), 1);
        check_good_values(1);

        install("good-cset", "c.so");
        sync_settled(p);
        assert_int_equal(state_of(p, "c.so"), PLUGIN_FAILED);
        assert_int_equal(logged(LOG_ERR, "c.so", "plugin c.so: counterset " TP_CSET_TEXT(1)
                                " is already published by plugin a.so"), 1);
        assert_int_equal(tu_count_providers(NULL), 1);

        /* A replaced file keeps its plugin's place; nothing is said again. */
        install("good", "a.so");
        sync_settled(p);
        assert_int_equal(logged(LOG_INFO, "a.so", "started"), 2);
        assert_int_equal(state_of(p, "a.so"), PLUGIN_RUNNING);
        assert_int_equal(state_of(p, "b.so"), PLUGIN_FAILED);
        assert_int_equal(state_of(p, "c.so"), PLUGIN_FAILED);
        assert_int_equal(problems("b.so") + problems("c.so"), 2);

        /* The first gone, the next in name order takes its place. */
        remove_file("a.so");
        sync_settled(p);
        assert_int_equal(state_of(p, "b.so"), PLUGIN_RUNNING);
        assert_int_equal(state_of(p, "c.so"), PLUGIN_FAILED);
        assert_int_equal(problems("b.so") + problems("c.so"), 2);
        assert_int_equal(tu_count_providers(NULL), 1);
        check_good_values(1);
}

static int count_calls(const struct plugin_info *info, void *userdata)
{
        (void) info;
        return ++*(int *) userdata == 2 ? 42 : 0;
}

static void arguments(void **state)
{
        const struct plugins_config quiet = test_config(SETTLE_MS, true);
        const struct plugins_config cfg = test_config(SETTLE_MS, false);
        struct plugins *p = *state, *q = NULL;
        char *dir = NULL;
        int calls = 0;

        assert_int_equal(plugins_new(NULL, NULL, &q), -EINVAL);
        assert_int_equal(plugins_new("", NULL, &q), -EINVAL);
        assert_int_equal(plugins_new(plugin_dir, NULL, NULL), -EINVAL);
        assert_null(q);
        assert_int_equal(plugins_sync(NULL), -EINVAL);
        assert_false(plugins_busy(NULL));
        assert_int_equal(plugins_missed_deadline(NULL, 1), 0);
        /* A supervisor needs a loop to watch its hosts on. */
        assert_int_equal(plugins_new(plugin_dir, &(struct plugins_config){ 0 }, &q), -EINVAL);
        assert_int_equal(plugins_new(plugin_dir, &cfg, &q), 0);
        plugins_free(q);
        q = NULL;
        assert_int_equal(plugins_count(NULL, PLUGIN_RUNNING), 0);
        assert_int_equal(plugins_foreach(NULL, count_calls, NULL), -EINVAL);
        assert_int_equal(plugins_foreach(p, NULL, NULL), -EINVAL);
        plugins_free(NULL);

        /* A walk stops at the first non-zero return of its callback. */
        install("good", "a.so");
        install("good2", "b.so");
        write_file("c.so", "");
        sync_settled(p);
        assert_int_equal(plugins_foreach(p, count_calls, &calls), 42);
        assert_int_equal(calls, 2);

        /* No log callback: messages are dropped, plugins still load. */
        assert_int_equal(plugins_new(plugin_dir, &quiet, &q), 0);
        remove_file("b.so");
        sync_settled(q);
        assert_int_equal(plugins_count(q, PLUGIN_RUNNING), 1);
        assert_int_equal(plugins_count(q, PLUGIN_FAILED), 1);
        plugins_free(q);

        assert_int_equal(setenv("PERFLIB_PLUGIN_DIR", "/somewhere/else", 1), 0);
        assert_int_equal(plugins_default_dir(&dir), 0);
        assert_string_equal(dir, "/somewhere/else");
        free(dir);
        assert_int_equal(unsetenv("PERFLIB_PLUGIN_DIR"), 0);
        assert_int_equal(plugins_default_dir(&dir), 0);
        assert_true(dir[0] == '/');
        free(dir);
        assert_int_equal(plugins_default_dir(NULL), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
                T(good_loads_bad_skipped),
                T(removed_then_added_back),
                T(replaced_is_reloaded),
                T(symlinks),
                T(writable_by_others),
                T(free_stops_all),
                T(directory_errors),
                T(being_written_waits),
                T(short_file_reported_once),
                T(rewritten_in_place),
                T(duplicates),
                T(arguments),
#undef T
        };

        int failed = cmocka_run_group_tests(tests, NULL, NULL);

        sd_event_unref(loop);
        return failed;
}

/* SPDX-License-Identifier: MIT */
/*
 * The cgroup v2 readers (providers/common/cgroupfs.h) on saved trees
 * (tests/data/cgroup): a pure v2 systemd machine with a docker scope and
 * a deep user session, a hybrid machine's unified hierarchy with no
 * controller (only cpu.stat and the pressure files), a group whose files
 * are garbage; the mount found in several mountinfo shapes; and the walk's
 * bounds.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cgroupfs.h"
#include "procfs.h"

static int open_fixture(const char *rel)
{
        char path[4096];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", CGROUP_FIXTURES, rel);
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                fail_msg("%s: %s", path, strerror(errno));
        return fd;
}

static int mount_of(const char *rel, char *buf, size_t size)
{
        FILE *f = pv_fopen(CGROUP_FIXTURES, rel);
        int r;

        assert_non_null(f);
        r = pv_cgroup2_mount(f, buf, size);
        fclose(f);
        return r;
}

static void test_mount(void **state)
{
        char p[64] = "untouched";

        (void) state;
        assert_int_equal(mount_of("mountinfo-hybrid", p, sizeof(p)), 0);
        assert_string_equal(p, "/sys/fs/cgroup/unified");
        assert_int_equal(mount_of("mountinfo-v2", p, sizeof(p)), 0);
        assert_string_equal(p, "/sys/fs/cgroup");
        /* Bad lines before it are skipped; an escaped space is decoded. */
        assert_int_equal(mount_of("mountinfo-garbage", p, sizeof(p)), 0);
        assert_string_equal(p, "/run/my cgroups");
        strcpy(p, "untouched");
        assert_int_equal(mount_of("mountinfo-v1", p, sizeof(p)), -ENOENT);
        assert_string_equal(p, "untouched");
        assert_int_equal(mount_of("mountinfo-v2", p, 8), -ENAMETOOLONG);
}

static void test_limit(void **state)
{
        uint64_t v = 7;

        (void) state;
        assert_int_equal(pv_cgroup_limit_parse("max\n", &v), 0);
        assert_true(v == PV_CG_NO_LIMIT);
        assert_int_equal(pv_cgroup_limit_parse("536870912\n", &v), 0);
        assert_int_equal(v, 536870912);
        v = 7;
        assert_int_equal(pv_cgroup_limit_parse("maximum\n", &v), -EINVAL);
        assert_int_equal(pv_cgroup_limit_parse("12 34\n", &v), -EINVAL);
        assert_int_equal(pv_cgroup_limit_parse("-1\n", &v), -EINVAL);
        assert_int_equal(pv_cgroup_limit_parse("", &v), -EINVAL);
        assert_int_equal(pv_cgroup_limit_parse("99999999999999999999\n", &v), -ERANGE);
        assert_int_equal(v, 7);
}

static struct pv_cgroup read_group(const char *rel)
{
        struct pv_cgroup c;
        int fd = open_fixture(rel);

        assert_int_equal(pv_cgroup_read(fd, &c), 0);
        close(fd);
        return c;
}

/* A group with every controller: each file's figures, io.stat summed over devices. */
static void test_read_full(void **state)
{
        struct pv_cgroup c = read_group("v2-systemd/system.slice");

        (void) state;
        assert_int_equal(c.have, PV_CG_CPU | PV_CG_THROTTLE | PV_CG_MEMORY | PV_CG_MEMORY_PEAK |
                         PV_CG_MEMORY_MAX | PV_CG_MEMORY_EVENTS | PV_CG_IO | PV_CG_PIDS |
                         PV_CG_PIDS_MAX | PV_CG_CPU_PRESSURE | PV_CG_MEMORY_PRESSURE |
                         PV_CG_IO_PRESSURE);
        assert_int_equal(c.usage_usec, 500000000);
        assert_int_equal(c.user_usec, 300000000);
        assert_int_equal(c.system_usec, 200000000);
        assert_int_equal(c.nr_periods, 1000);
        assert_int_equal(c.nr_throttled, 25);
        assert_int_equal(c.throttled_usec, 123456);
        assert_int_equal(c.memory_current, 734003200);
        assert_int_equal(c.memory_peak, 1048576000);
        assert_true(c.memory_max == PV_CG_NO_LIMIT);
        assert_int_equal(c.events[PV_CG_EV_MAX], 3);
        assert_int_equal(c.events[PV_CG_EV_OOM], 1);
        /* oom_kill, not oom_group_kill after it. */
        assert_int_equal(c.events[PV_CG_EV_OOM_KILL], 1);
        assert_int_equal(c.rbytes, 4196);
        assert_int_equal(c.wbytes, 8392);
        assert_int_equal(c.rios, 4);
        assert_int_equal(c.wios, 6);
        assert_int_equal(c.pids_current, 5);
        assert_true(c.pids_max == PV_CG_NO_LIMIT);
        assert_int_equal(c.cpu.some.total, 40);
        assert_int_equal(c.io.full.total, 20);

        /* A container's limits. */
        c = read_group("v2-systemd/system.slice/docker-4f3a9c2e1b7d.scope");
        assert_int_equal(c.memory_max, 536870912);
        assert_int_equal(c.pids_max, 100);
        assert_int_equal(c.pids_current, 12);
        /* No memory.peak before 5.19: left 0. */
        assert_false(c.have & PV_CG_MEMORY_PEAK);
        assert_int_equal(c.memory_peak, 0);
}

/* The root has no memory.current or pids.current; a hybrid machine's groups only the core files. */
static void test_read_partial(void **state)
{
        struct pv_cgroup c = read_group("v2-systemd");

        (void) state;
        assert_int_equal(c.have, PV_CG_CPU | PV_CG_IO | PV_CG_CPU_PRESSURE |
                         PV_CG_MEMORY_PRESSURE | PV_CG_IO_PRESSURE);
        assert_int_equal(c.usage_usec, 900000000);
        assert_int_equal(c.rbytes, 5000001);
        assert_int_equal(c.wios, 704);
        assert_int_equal(c.memory_current, 0);
        c = read_group("v1-hybrid/process_api");
        assert_int_equal(c.have, PV_CG_CPU | PV_CG_CPU_PRESSURE | PV_CG_MEMORY_PRESSURE |
                         PV_CG_IO_PRESSURE);
        assert_int_equal(c.usage_usec, 4000000);
        assert_int_equal(c.nr_periods, 0);
}

/* Garbage: each bad file leaves its figures 0; io.stat's good lines still count. */
static void test_read_garbage(void **state)
{
        struct pv_cgroup c = read_group("v2-systemd/garbage.slice");

        (void) state;
        assert_int_equal(c.have, PV_CG_IO | PV_CG_MEMORY_PRESSURE | PV_CG_IO_PRESSURE);
        assert_int_equal(c.usage_usec, 0);
        assert_int_equal(c.memory_current, 0);
        assert_int_equal(c.memory_max, 0);
        assert_int_equal(c.pids_current, 0);
        assert_int_equal(c.pids_max, 0);
        assert_int_equal(c.rbytes, 15);
        assert_int_equal(c.wbytes, 25);
        assert_int_equal(c.rios, 6);
        assert_int_equal(c.wios, 7);
        assert_int_equal(c.cpu.have, 0);
}

/* ---- the walk ---- */

struct seen {
        char paths[32][256];
        uint64_t ino[32];
        size_t n;
        size_t fail_at;                 /* fn fails on this call (1-based); 0: never */
};

static int record(const char *path, int dirfd, uint64_t ino, void *userdata)
{
        struct seen *s = userdata;
        struct stat st;

        assert_true(s->n < 32);
        /* dirfd is the group's own directory. */
        assert_int_equal(fstat(dirfd, &st), 0);
        assert_true(S_ISDIR(st.st_mode));
        assert_int_equal(fstatat(dirfd, "cpu.stat", &st, 0), 0);
        snprintf(s->paths[s->n], sizeof(s->paths[0]), "%s", path);
        s->ino[s->n] = ino;
        if (++s->n == s->fail_at)
                return -EIO;
        return 0;
}

static bool has(const struct seen *s, const char *path)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->paths[i], path) == 0)
                        return true;
        return false;
}

/* The index of path in the walk's order (which must list it). */
static size_t order_of(const struct seen *s, const char *path)
{
        for (size_t i = 0; i < s->n; i++)
                if (strcmp(s->paths[i], path) == 0)
                        return i;
        fail_msg("the walk did not list %s", path);
        return 0;
}

static const char *const all_groups[] = {
        "/", "garbage.slice", "odd (1)#2", "system.slice", "system.slice/ssh.service",
        "system.slice/docker-4f3a9c2e1b7d.scope", "user.slice", "user.slice/user-1000.slice",
        "user.slice/user-1000.slice/user@1000.service",
        "user.slice/user-1000.slice/user@1000.service/app.slice",
        "user.slice/user-1000.slice/user@1000.service/app.slice/deep.scope",
};
#define N_ALL (sizeof(all_groups) / sizeof(all_groups[0]))

static int walk(struct pv_cgroup_walk *w, struct seen *s)
{
        int fd = open_fixture("v2-systemd"), r;

        r = pv_cgroup_walk(fd, w, record, s);
        close(fd);
        return r;
}

/* Every group once, parents before children, with its directory's inode; files are not groups. */
static void test_walk_all(void **state)
{
        struct pv_cgroup_walk w = { .max_depth = 16, .max_groups = 100 };
        struct seen s = { .n = 0 };
        char path[4096];
        struct stat st;

        (void) state;
        assert_int_equal(walk(&w, &s), 0);
        assert_int_equal(s.n, N_ALL);
        assert_int_equal(w.n_groups, N_ALL);
        assert_false(w.truncated);
        for (size_t i = 0; i < N_ALL; i++)
                assert_true(has(&s, all_groups[i]));
        assert_string_equal(s.paths[0], "/");
        assert_true(order_of(&s, "system.slice") < order_of(&s, "system.slice/ssh.service"));
        assert_true(order_of(&s, "user.slice/user-1000.slice/user@1000.service/app.slice") <
                    order_of(&s, all_groups[N_ALL - 1]));
        snprintf(path, sizeof(path), "%s/v2-systemd/system.slice/ssh.service", CGROUP_FIXTURES);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(s.ino[order_of(&s, "system.slice/ssh.service")], st.st_ino);
}

/* The bounds leave groups out, with their subtrees, and say so. */
static void test_walk_bounds(void **state)
{
        struct pv_cgroup_walk w = { .max_depth = 1, .max_groups = 100 };
        struct seen s = { .n = 0 };

        (void) state;
        assert_int_equal(walk(&w, &s), 0);
        assert_int_equal(s.n, 5);               /* the root and its four children */
        assert_true(w.truncated);
        assert_true(has(&s, "system.slice"));
        assert_false(has(&s, "system.slice/ssh.service"));

        /* Depth 5 is exactly deep enough: nothing is left out. */
        w = (struct pv_cgroup_walk) { .max_depth = 5, .max_groups = N_ALL };
        s.n = 0;
        assert_int_equal(walk(&w, &s), 0);
        assert_int_equal(s.n, N_ALL);
        assert_false(w.truncated);

        w = (struct pv_cgroup_walk) { .max_depth = 16, .max_groups = 3 };
        s.n = 0;
        assert_int_equal(walk(&w, &s), 0);
        assert_int_equal(s.n, 3);
        assert_int_equal(w.n_groups, 3);
        assert_true(w.truncated);
        /* Parents first: what was listed is a tree hanging from the root. */
        for (size_t i = 1; i < s.n; i++) {
                char parent[256];
                char *slash;

                snprintf(parent, sizeof(parent), "%s", s.paths[i]);
                slash = strrchr(parent, '/');
                if (slash) {
                        *slash = '\0';
                        assert_true(has(&s, parent));
                }
        }

        w = (struct pv_cgroup_walk) { .max_depth = 16, .max_groups = 0 };
        s.n = 0;
        assert_int_equal(walk(&w, &s), 0);
        assert_int_equal(s.n, 0);
}

/* The callback's error stops the walk and is its result; a bad root is -errno. */
static void test_walk_errors(void **state)
{
        struct pv_cgroup_walk w = { .max_depth = 16, .max_groups = 100 };
        struct seen s = { .fail_at = 2 };

        (void) state;
        assert_int_equal(walk(&w, &s), -EIO);
        assert_int_equal(s.n, 2);
        assert_int_equal(pv_cgroup_walk(-1, &w, record, &s), -EINVAL);
        assert_int_equal(pv_cgroup_walk(AT_FDCWD, &w, NULL, &s), -EINVAL);
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_mount),
                cmocka_unit_test(test_limit),
                cmocka_unit_test(test_read_full),
                cmocka_unit_test(test_read_partial),
                cmocka_unit_test(test_read_garbage),
                cmocka_unit_test(test_walk_all),
                cmocka_unit_test(test_walk_bounds),
                cmocka_unit_test(test_walk_errors),
        };

        return cmocka_run_group_tests(tests, NULL, NULL);
}

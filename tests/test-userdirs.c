/* SPDX-License-Identifier: MIT */
/*
 * Where files come from: a server's runtime directory (root's, 0755) takes
 * files from nobody else; other users publish in directories of their own
 * below users/ (1733).  A user's provider lands in its directory and is
 * found; a squatter who took the user's name first costs it nothing; a
 * directory others could write, a socket its directory's owner did not make,
 * a listener that is not the socket file's owner and a user's fifth
 * directory are never read.  Runs as root only: the providers must run as
 * other users.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "testutil.h"

#define USER    65534
#define OTHER   65533

static GUID prov = { 0x05e4d001, 0x1, 0x2, { 2, 7, 1, 8, 2, 8, 1, 8 } };
static GUID cset = { 0x05e4d002, 0x1, 0x2, { 2, 7, 1, 8, 2, 8, 1, 8 } };
static const char *run;

static void become(uid_t uid)
{
        if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
            setresuid(uid, uid, uid) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                _exit(4);
}

/* As USER: may not write the server's directory, publishes in its own. */
static void user_provider(void *arg, int wfd)
{
        char path[4200];
        HANDLE h;
        ULONG size;
        PPERF_COUNTERSET_INFO t;

        (void) arg;
        become(USER);
        snprintf(path, sizeof(path), "%s/planted", run);
        if (open(path, O_WRONLY | O_CREAT | O_EXCL, 0644) >= 0 || errno != EACCES)
                _exit(5);
        t = tu_template(&prov, &cset, PERF_COUNTERSET_SINGLE_INSTANCE, 1, (const ULONG[]) { 4 },
                        &size);
        if (!t || PerfStartProvider(&prov, NULL, &h) != ERROR_SUCCESS ||
            PerfSetCounterSetInfo(h, t, size) != ERROR_SUCCESS)
                _exit(6);
        tu_ready(wfd);
        for (;;)
                pause();
}

struct found {
        unsigned n;
        char path[4200];
};

static int on_socket(const char *path, void *userdata)
{
        struct found *f = userdata;

        f->n++;
        snprintf(f->path, sizeof(f->path), "%s", path);
        return 0;
}

static struct found scan(void)
{
        struct found f = { 0 };

        assert_int_equal(pl_scan(run, on_socket, &f, NULL), 0);
        return f;
}

static void stop(pid_t pid)
{
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

static uid_t peer_of(const char *path)
{
        struct pl_reader *r = NULL;
        uid_t uid = (uid_t) -1;

        assert_int_equal(pl_reader_open(path, &r), 0);
        assert_int_equal(pl_reader_peer_uid(r, &uid), 0);
        pl_reader_close(r);
        return uid;
}

/* USER's provider, started and found: the only one, listened on by USER. */
static pid_t user_found(struct found *f)
{
        pid_t pid = tu_spawn(user_provider, NULL, NULL);

        assert_true(pid > 0);
        *f = scan();
        assert_int_equal(f->n, 1);
        assert_int_equal(peer_of(f->path), USER);
        return pid;
}

static void user_publishes_in_own_directory(void **state)
{
        char want[4200];
        struct found f;
        pid_t pid = user_found(&f);

        (void) state;
        snprintf(want, sizeof(want), "%s/users/%u/", run, USER);
        assert_memory_equal(f.path, want, strlen(want));
        stop(pid);
}

static void squat(void *arg, int wfd)
{
        char path[4200];

        (void) arg;
        become(OTHER);
        snprintf(path, sizeof(path), "%s/users/%u", run, USER);
        if (mkdir(path, 0755) < 0)
                _exit(5);
        tu_ready(wfd);
}

static void squatter_costs_nothing(void **state)
{
        char squatted[4200];
        pid_t pid;

        (void) state;
        pid = tu_spawn(squat, NULL, NULL);
        assert_true(pid > 0);
        waitpid(pid, NULL, 0);
        struct found f;
        pid = user_found(&f);
        snprintf(squatted, sizeof(squatted), "%s/users/%u/", run, USER);
        assert_memory_not_equal(f.path, squatted, strlen(squatted));
        stop(pid);
}

/* A listening provider-named socket at path, bound as uid; its listener's pid. */
static void listen_as(void *arg, int wfd)
{
        const char *path = arg;
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
        struct stat st;

        if (stat(path, &st) == 0 || errno != ENOENT)
                _exit(5);
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 4) < 0)
                _exit(6);
        tu_ready(wfd);
        for (;;)
                pause();
}

static void listen_as_user(void *arg, int wfd)
{
        become(USER);
        listen_as(arg, wfd);
}

static void sock_path(char *buf, size_t size, const char *dir, unsigned i)
{
        snprintf(buf, size, "%s/provider-1-%u-00000000-0000-0000-0000-000000000000.sock", dir, i);
}

static void what_is_never_read(void **state)
{
        char dir[4200], path[4300];
        pid_t pids[2];

        (void) state;
        /* A directory its group could write: ignored until fixed. */
        snprintf(dir, sizeof(dir), "%s/users/shared", run);
        assert_int_equal(mkdir(dir, 0775), 0);
        assert_int_equal(chown(dir, USER, USER), 0);
        assert_int_equal(chmod(dir, 0775), 0);
        sock_path(path, sizeof(path), dir, 1);
        pids[0] = tu_spawn(listen_as_user, path, NULL);
        assert_true(pids[0] > 0);
        assert_int_equal(scan().n, 0);
        assert_int_equal(chmod(dir, 0755), 0);
        assert_int_equal(scan().n, 1);

        /* Root's socket in USER's directory: not its owner's, never connected to. */
        sock_path(path, sizeof(path), dir, 2);
        pids[1] = tu_spawn(listen_as, path, NULL);
        assert_true(pids[1] > 0);
        assert_int_equal(scan().n, 1);

        /* A socket file handed to USER while root listens: the reader refuses it. */
        struct pl_reader *r = NULL;
        assert_int_equal(chown(path, USER, USER), 0);
        assert_int_equal(pl_reader_open(path, &r), -EPERM);
        stop(pids[0]);
        stop(pids[1]);
}

static void four_directories_a_user(void **state)
{
        char dir[4200], path[4300];
        pid_t pids[6];

        (void) state;
        for (unsigned i = 0; i < 6; i++) {
                snprintf(dir, sizeof(dir), "%s/users/d%u", run, i);
                assert_int_equal(mkdir(dir, 0755), 0);
                assert_int_equal(chown(dir, USER, USER), 0);
                sock_path(path, sizeof(path), dir, i);
                pids[i] = tu_spawn(listen_as_user, path, NULL);
                assert_true(pids[i] > 0);
        }
        assert_int_equal(scan().n, 4);
        for (unsigned i = 0; i < 6; i++)
                stop(pids[i]);
}

static void server_never_takes_a_user_directory(void **state)
{
        pid_t pid = fork();
        int status;

        (void) state;
        assert_true(pid >= 0);
        if (pid == 0) {
                char *dir = NULL;

                become(USER);
                _exit(pl_runtime_server_dir(&dir) == -EACCES ? 0 : 7);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
}

static int setup(void **state)
{
        (void) state;
        run = tu_runtime_setup();
        if (chmod(run, 0755) < 0 || pl_runtime_make_users(run) < 0)
                return -1;
        return 0;
}

static int teardown(void **state)
{
        (void) state;
        tu_runtime_teardown();
        return 0;
}

int main(void)
{
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(user_publishes_in_own_directory, setup, teardown),
                cmocka_unit_test_setup_teardown(squatter_costs_nothing, setup, teardown),
                cmocka_unit_test_setup_teardown(what_is_never_read, setup, teardown),
                cmocka_unit_test_setup_teardown(four_directories_a_user, setup, teardown),
                cmocka_unit_test_setup_teardown(server_never_takes_a_user_directory, setup,
                                                teardown),
        };

        if (geteuid() != 0) {
                printf("SKIP: test-userdirs runs providers as other users; run it as root\n");
                return 77;
        }
        return cmocka_run_group_tests(tests, NULL, NULL);
}

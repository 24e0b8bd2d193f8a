/* SPDX-License-Identifier: MIT */
/*
 * A plugin host as a process (plugin-proc.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "host-proto.h"
#include "plugin-proc.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

extern char **environ;

static int pidfd_open_(pid_t pid)
{
        return (int) syscall(SYS_pidfd_open, pid, 0);
}

void host_proc_close(struct host_proc *h)
{
        if (h->pidfd >= 0)
                close(h->pidfd);
        if (h->status_fd >= 0)
                close(h->status_fd);
        h->pidfd = h->status_fd = -1;
}

/*
 * A descriptor moved above the two the host expects, so that dup2 onto 3
 * and 4 can never meet one of its sources.
 */
static int above_host_fds(int fd)
{
        return fcntl(fd, F_DUPFD_CLOEXEC, PLUGIN_HOST_STATUS_FD + 1);
}

static int spawn_actions(posix_spawn_file_actions_t *fa, int image, int status)
{
        int r = posix_spawn_file_actions_init(fa);

        if (r)
                return -r;
        if ((r = posix_spawn_file_actions_addopen(fa, 0, "/dev/null", O_RDONLY, 0)) ||
            (r = posix_spawn_file_actions_addopen(fa, 1, "/dev/null", O_WRONLY, 0)) ||
            (r = posix_spawn_file_actions_adddup2(fa, image, PLUGIN_HOST_IMAGE_FD)) ||
            (r = posix_spawn_file_actions_adddup2(fa, status, PLUGIN_HOST_STATUS_FD)) ||
            (r = posix_spawn_file_actions_addclosefrom_np(fa, PLUGIN_HOST_STATUS_FD + 1))) {
                posix_spawn_file_actions_destroy(fa);
                return -r;
        }
        return 0;
}

/*
 * Whether an environment entry is perflibd's own business with the
 * service manager: a host (plugin code) must not speak for perflibd.
 */
static bool managers_entry(const char *e)
{
        static const char *const names[] = {
                "NOTIFY_SOCKET=", "WATCHDOG_USEC=", "WATCHDOG_PID=", "LISTEN_FDS=",
                "LISTEN_PID=", "LISTEN_FDNAMES=",
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strncmp(e, names[i], strlen(names[i])) == 0)
                        return true;
        return false;
}

/* Our environment without the service manager's entries; the array is malloc'd. */
static char **host_environment(void)
{
        size_t n = 0, k = 0;
        char **env;

        while (environ[n])
                n++;
        env = calloc(n + 1, sizeof(*env));
        if (!env)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!managers_entry(environ[i]))
                        env[k++] = environ[i];
        return env;
}

static int spawn_host(const char *host, char **argv, int image, int status, pid_t *ret)
{
        posix_spawn_file_actions_t fa;
        posix_spawnattr_t attr;
        sigset_t none;
        int r = spawn_actions(&fa, image, status);

        if (r < 0)
                return r;
        /* The host starts with default signal handling and nothing blocked, whatever ours is. */
        sigemptyset(&none);
        r = posix_spawnattr_init(&attr);
        if (!r)
                r = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
        if (!r)
                r = posix_spawnattr_setsigmask(&attr, &none);
        if (!r) {
                sigset_t all;

                sigfillset(&all);
                r = posix_spawnattr_setsigdefault(&attr, &all);
        }
        if (!r) {
                char **env = host_environment();

                r = env ? posix_spawn(ret, host, &fa, &attr, argv, env) : ENOMEM;
                free(env);
        }
        posix_spawnattr_destroy(&attr);
        posix_spawn_file_actions_destroy(&fa);
        return -r;
}

int host_spawn(const char *host, const char *file, int image_fd, const char *user,
               uint64_t memory_max, struct host_proc *ret)
{
        char a_file[300], a_parent[32], a_user[96], a_mem[48];
        char *argv[6] = { (char *) PLUGIN_HOST_PROGRAM, a_file, a_parent, NULL, NULL, NULL };
        int sv[2] = { -1, -1 }, image = -1, status = -1, pidfd, r;
        size_t n = 3;
        pid_t pid;

        if (!host || !file || image_fd < 0 || !ret)
                return -EINVAL;
        if ((size_t) snprintf(a_file, sizeof(a_file), "--file=%s", file) >= sizeof(a_file))
                return -ENAMETOOLONG;
        snprintf(a_parent, sizeof(a_parent), "--parent=%ld", (long) getpid());
        if (user) {
                snprintf(a_user, sizeof(a_user), "--user=%s", user);
                argv[n++] = a_user;
        }
        if (memory_max) {
                snprintf(a_mem, sizeof(a_mem), "--memory-max=%" PRIu64, memory_max);
                argv[n++] = a_mem;
        }
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        image = above_host_fds(image_fd);
        status = above_host_fds(sv[1]);
        r = image < 0 || status < 0 ? -errno : spawn_host(host, argv, image, status, &pid);
        if (image >= 0)
                close(image);
        if (status >= 0)
                close(status);
        close(sv[1]);
        if (r < 0) {
                close(sv[0]);
                return r;
        }
        /* Only we reap it, so it cannot be gone (and its pid reused) before this. */
        pidfd = pidfd_open_(pid);
        if (pidfd < 0) {
                r = -errno;
                kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                close(sv[0]);
                return r;
        }
        (void) fcntl(sv[0], F_SETFL, O_NONBLOCK);
        *ret = (struct host_proc) { .pid = pid, .pidfd = pidfd, .status_fd = sv[0] };
        return 0;
}

int host_reap(struct host_proc *h, siginfo_t *ret_info)
{
        siginfo_t si = { 0 };

        if (waitid((idtype_t) P_PIDFD, (id_t) h->pidfd, &si, WEXITED | WNOHANG) < 0) {
                /* Without P_PIDFD (kernels before 5.4), by pid: still only ours. */
                if (errno != EINVAL || waitid(P_PID, (id_t) h->pid, &si, WEXITED | WNOHANG) < 0)
                        return -errno;
        }
        if (si.si_pid == 0)
                return -EAGAIN;
        *ret_info = si;
        return 0;
}

int proc_usage(pid_t pid, uint64_t *ret_rss, uint64_t *ret_cpu_usec)
{
        char path[64], buf[1024], *p;
        unsigned long long utime, stime, rss;
        long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%ld/stat", (long) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return n < 0 ? -errno : -ESRCH;
        buf[n] = '\0';
        /* The name in parentheses may hold anything: fields start after the last ')'. */
        p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu "
                         "%*d %*d %*d %*d %*d %*d %*u %*u %llu", &utime, &stime, &rss) != 3)
                return -EBADMSG;
        *ret_rss = rss * (uint64_t) page;
        *ret_cpu_usec = (utime + stime) * 1000000u / (uint64_t) (tick > 0 ? tick : 100);
        return 0;
}

void exit_text(const siginfo_t *si, char *buf, size_t size)
{
        if (si->si_code == CLD_EXITED) {
                snprintf(buf, size, "exited with status %d", si->si_status);
                return;
        }
        snprintf(buf, size, "killed by signal %d (%s)%s", si->si_status,
                 strsignal(si->si_status), si->si_code == CLD_DUMPED ? ", core dumped" : "");
}

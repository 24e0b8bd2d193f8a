/* SPDX-License-Identifier: MIT */
/*
 * pcq_password_prompt: a password asked on the controlling terminal with
 * echo off, for every libpcq program that connects as a user (typeperf -u).
 * Echo goes off before the prompt is shown, so nothing typed early is
 * echoed, and comes back before a signal that interrupted the read takes
 * effect: the signals that end a program are caught while echo is off
 * and raised again once the terminal is as it was.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "pcq.h"

static const int held[] = { SIGINT, SIGTERM, SIGQUIT, SIGHUP };
#define N_HELD (sizeof(held) / sizeof(held[0]))

static volatile sig_atomic_t pending;

static void on_signal(int sig)
{
        pending = sig;
}

/* One line from fd, byte by byte so that nothing after it is consumed. */
static uint32_t read_line(int fd, char *buf, size_t size)
{
        size_t len = 0;

        for (;;) {
                char ch;
                ssize_t n = read(fd, &ch, 1);

                if (n < 0 && errno == EINTR && !pending)
                        continue;
                if (n <= 0)
                        return ERROR_CANCELLED;
                if (ch == '\n' || ch == '\r')
                        break;
                if (len + 1 >= size) {
                        explicit_bzero(buf, size);
                        return ERROR_INSUFFICIENT_BUFFER;
                }
                buf[len++] = ch;
        }
        buf[len] = 0;
        return ERROR_SUCCESS;
}

static uint32_t ask(int fd, const char *prompt, char *buf, size_t size)
{
        struct sigaction sa = { .sa_handler = on_signal }, old[N_HELD];
        struct termios saved, quiet;
        uint32_t e = ERROR_NOT_FOUND;

        if (tcgetattr(fd, &saved) < 0)
                return ERROR_NOT_FOUND;
        quiet = saved;
        quiet.c_lflag &= (tcflag_t) ~(ECHO | ECHOE | ECHOK | ECHONL);
        pending = 0;
        /* Without SA_RESTART, so that a signal ends the read. */
        for (size_t i = 0; i < N_HELD; i++)
                sigaction(held[i], &sa, &old[i]);
        if (tcsetattr(fd, TCSAFLUSH, &quiet) == 0) {
                (void)!write(fd, prompt, strlen(prompt));
                e = read_line(fd, buf, size);
                (void)!write(fd, "\n", 1);
                tcsetattr(fd, TCSAFLUSH, &saved);
        }
        for (size_t i = 0; i < N_HELD; i++)
                sigaction(held[i], &old[i], NULL);
        if (pending)
                raise(pending);
        return pending ? ERROR_CANCELLED : e;
}

PCQ_API uint32_t pcq_password_prompt(const char *prompt, char *buf, size_t size)
{
        int fd;
        uint32_t e;

        if (!prompt || !buf || size < 2)
                return PDH_INVALID_ARGUMENT;
        fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (fd < 0)
                return ERROR_NOT_FOUND;
        e = ask(fd, prompt, buf, size);
        close(fd);
        return e;
}

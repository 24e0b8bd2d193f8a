/* SPDX-License-Identifier: MIT */
/*
 * perflib-passwd: adds, updates or deletes a remote account of perflibd
 * (perflib-passwd(8)).  It lives beside the accounts module, not in
 * tools/ as the design's table has it, because tools/ may include only
 * the SDK and libpcq while this needs the accounts file's code and the
 * NT hash of the wire's NTLM (sdk/librpc/ntlm.h); lodctr sits beside the
 * registry for the same reason.
 *
 * Exit status: 0 done, 1 failed (file, password or no such account),
 * 2 bad command line or user name.
 */
#ifdef HAVE_CONFIG_H
#include <config.h>
#endif

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

#include "acct-edit.h"
#include "ntlm.h"

#ifndef PERFLIB_ACCOUNTS_DEFAULT
#define PERFLIB_ACCOUNTS_DEFAULT "/etc/perflib/accounts"
#endif

enum { EXIT_DONE = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

static const char *prog = "perflib-passwd";

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: %s [-f FILE] USER      add USER or change its password\n"
                "       %s [-f FILE] -x USER   delete USER\n"
                "\n"
                "  -f, --file=FILE   the accounts file (default $PERFLIB_ACCOUNTS, else\n"
                "                    %s)\n"
                "  -x, --delete      delete the account\n"
                "  -h, --help        show this help and exit\n"
                "  -V, --version     show the version and exit\n"
                "\n"
                "The password is read as one line from standard input when it is not a\n"
                "terminal, else asked twice without echo.\n"
                "Exit status: 0 done, 1 failed, 2 bad command line or user name.\n",
                prog, prog, PERFLIB_ACCOUNTS_DEFAULT);
}

/* The signal that interrupted a prompt, re-raised once echo is back. */
static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
        caught = sig;
}

/* One line from FD into BUF (SIZE bytes, '\n' dropped); -E2BIG if longer. */
static int read_line(int fd, char *buf, size_t size)
{
        size_t len = 0;
        bool any = false;

        for (;;) {
                char c;
                ssize_t n = read(fd, &c, 1);

                if (n < 0 && errno == EINTR && !caught)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0 && !any)
                        return -ENODATA;
                if (n == 0 || c == '\n')
                        break;
                any = true;
                if (len + 1 >= size)
                        return -E2BIG;
                buf[len++] = c;
        }
        buf[len] = '\0';
        return 0;
}

static const int prompt_signals[] = { SIGINT, SIGTERM, SIGQUIT, SIGHUP };
#define N_PROMPT_SIGNALS (sizeof(prompt_signals) / sizeof(prompt_signals[0]))

/* Asks PROMPT on the terminal at FD with echo off; see read_line. */
static int prompt_hidden(int fd, const char *prompt, char *buf, size_t size)
{
        struct sigaction sa = { .sa_handler = on_signal }, old[N_PROMPT_SIGNALS];
        struct termios saved, quiet;
        int r;

        if (tcgetattr(fd, &saved) < 0)
                return -errno;
        quiet = saved;
        quiet.c_lflag &= (tcflag_t) ~(ECHO | ECHOE | ECHOK | ECHONL);
        /* No SA_RESTART: a signal ends the read, so echo is restored. */
        for (size_t i = 0; i < N_PROMPT_SIGNALS; i++)
                sigaction(prompt_signals[i], &sa, &old[i]);
        /* Echo off before the prompt: what is typed after it is kept. */
        r = tcsetattr(fd, TCSAFLUSH, &quiet) < 0 ? -errno : 0;
        fputs(prompt, stderr);
        fflush(stderr);
        if (r == 0)
                r = read_line(fd, buf, size);
        tcsetattr(fd, TCSADRAIN, &saved);
        fputc('\n', stderr);
        for (size_t i = 0; i < N_PROMPT_SIGNALS; i++)
                sigaction(prompt_signals[i], &old[i], NULL);
        if (caught)
                raise(caught);
        return r;
}

static int password_error(int r)
{
        if (r == -E2BIG)
                fprintf(stderr, "%s: password longer than %d bytes\n", prog, NTLM_PASSWORD_MAX);
        else if (r == -ENODATA)
                fprintf(stderr, "%s: no password on standard input\n", prog);
        else
                fprintf(stderr, "%s: reading the password: %s\n", prog, strerror(-r));
        return r;
}

/* The NT hash of the password the user gives, read as the man page says. */
static int get_hash(uint8_t ret[NTLM_HASH_SIZE])
{
        char pw[NTLM_PASSWORD_MAX + 2], again[NTLM_PASSWORD_MAX + 2];
        bool tty = isatty(STDIN_FILENO);
        int r;

        r = tty ? prompt_hidden(STDIN_FILENO, "New password: ", pw, sizeof(pw))
                : read_line(STDIN_FILENO, pw, sizeof(pw));
        if (r == 0 && tty)
                r = prompt_hidden(STDIN_FILENO, "Retype new password: ", again, sizeof(again));
        if (r < 0) {
                r = password_error(r);
        } else if (tty && strcmp(pw, again) != 0) {
                fprintf(stderr, "%s: the passwords do not match\n", prog);
                r = -EINVAL;
        } else if (!pw[0]) {
                fprintf(stderr, "%s: empty password refused\n", prog);
                r = -EINVAL;
        } else if ((r = ntlm_nt_hash(pw, ret)) < 0) {
                fprintf(stderr, "%s: the password is not UTF-8 or longer than %d bytes\n", prog,
                        NTLM_PASSWORD_MAX);
        }
        explicit_bzero(pw, sizeof(pw));
        explicit_bzero(again, sizeof(again));
        return r;
}

/* Options into *ret_path and *ret_delete; -1 to exit with *ret_status. */
static int parse_args(int argc, char **argv, const char **ret_path, bool *ret_delete,
                      int *ret_status)
{
        static const struct option opts[] = {
                { "file", required_argument, NULL, 'f' },
                { "delete", no_argument, NULL, 'x' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { 0 },
        };
        int c;

        while ((c = getopt_long(argc, argv, "f:xhV", opts, NULL)) != -1) {
                switch (c) {
                case 'f': *ret_path = optarg; break;
                case 'x': *ret_delete = true; break;
                case 'h': usage(stdout); *ret_status = EXIT_DONE; return -1;
                case 'V':
                        printf("%s (%s) %s\n", prog, PACKAGE_NAME, PACKAGE_VERSION);
                        *ret_status = EXIT_DONE;
                        return -1;
                default:
                        fprintf(stderr, "Try '%s --help' for more information.\n", prog);
                        *ret_status = EXIT_USAGE;
                        return -1;
                }
        }
        if (optind + 1 != argc || !**ret_path) {
                fprintf(stderr, "%s: %s\nTry '%s --help' for more information.\n", prog,
                        optind + 1 > argc ? "no user name given" :
                        optind + 1 < argc ? "one user name only" : "empty file name", prog);
                *ret_status = EXIT_USAGE;
                return -1;
        }
        return optind;
}

int main(int argc, char **argv)
{
        const char *path = getenv("PERFLIB_ACCOUNTS"), *user;
        uint8_t hash[NTLM_HASH_SIZE];
        struct acct_error err;
        bool delete = false;
        int status = EXIT_USAGE, i, r;

        if (!path || !*path)
                path = PERFLIB_ACCOUNTS_DEFAULT;
        i = parse_args(argc, argv, &path, &delete, &status);
        if (i < 0)
                return status;
        user = argv[i];
        if (!acct_user_valid(user)) {
                fprintf(stderr, "%s: invalid user name: 1 to %d bytes, no ':', no control "
                        "characters, no leading '#' or blank, no trailing blank\n", prog,
                        ACCT_USER_MAX);
                return EXIT_USAGE;
        }
        if (!delete && get_hash(hash) < 0)
                return EXIT_FAILED;
        r = acct_edit(path, user, delete ? NULL : hash, &err);
        explicit_bzero(hash, sizeof(hash));
        if (r < 0) {
                fprintf(stderr, "%s: %s\n", prog, err.msg);
                return EXIT_FAILED;
        }
        return EXIT_DONE;
}

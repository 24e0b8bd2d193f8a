/* SPDX-License-Identifier: MIT */
/*
 * Logging: structured to the journal when systemd connected our stderr to
 * it (JOURNAL_STREAM names that stream), plain lines on stderr otherwise,
 * so the same binary is quiet and greppable in a terminal and searchable
 * with journalctl under systemd.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <syslog.h>
#include <systemd/sd-journal.h>

#include "log.h"

static bool to_journal;
static bool debug;

/* True when stderr is the stream JOURNAL_STREAM ("dev:ino") describes. */
static bool stderr_is_journal(void)
{
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st) < 0)
                return false;
        return st.st_dev == dev && st.st_ino == ino;
}

void log_setup(void)
{
        to_journal = stderr_is_journal();
}

void log_set_debug(bool on)
{
        debug = on;
}

void log_msg(int priority, const char *format, ...)
{
        static const char *const names[] = { "emerg", "alert", "crit", "error",
                                             "warning", "notice", "info", "debug" };
        va_list ap;

        if (priority >= LOG_DEBUG && !debug)
                return;
        va_start(ap, format);
        if (to_journal)
                sd_journal_printv(priority, format, ap);
        else {
                fprintf(stderr, "perflibd: %s: ", names[priority & 7]);
                vfprintf(stderr, format, ap);
                fputc('\n', stderr);
        }
        va_end(ap);
}

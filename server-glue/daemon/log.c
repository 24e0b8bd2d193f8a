/* SPDX-License-Identifier: MIT */
/*
 * Logging: structured to the journal when systemd connected our stderr to
 * it (JOURNAL_STREAM names that stream), plain lines on stderr otherwise,
 * so the same binary is quiet and greppable in a terminal and searchable
 * with journalctl under systemd.
 *
 * Repeated messages are rate-limited as the journal does it, but per
 * message: a peer that makes us fail the same way thousands of times a
 * second must not fill the disk or drown the one line that matters.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* ---- rate limit ---- */

/*
 * One slot per message key (its format string's address: one call site),
 * direct-mapped: two keys sharing a slot take turns, the one leaving
 * reporting what it suppressed.  Far more slots than a burst of distinct
 * messages needs; a collision only costs a reset of both keys' counts.
 */
#define RATE_SLOTS 128

struct rate {
        const char *key;
        char subject[64];               /* what the messages are about ("" = none) */
        int priority;
        uint64_t begin;                 /* usec: the current interval's start */
        unsigned logged;                /* in it */
        unsigned suppressed;            /* in it */
};

static pthread_mutex_t rate_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rate rates[RATE_SLOTS];

static uint64_t mono_usec(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}

static uint64_t (*now_usec)(void) = mono_usec;

void log_set_clock(uint64_t (*now)(void))
{
        pthread_mutex_lock(&rate_lock);
        now_usec = now ? now : mono_usec;
        for (size_t i = 0; i < RATE_SLOTS; i++)
                rates[i] = (struct rate){};
        pthread_mutex_unlock(&rate_lock);
}

/* What the limiter decided: log or not, and a "suppressed" line to log first. */
struct rate_verdict {
        bool log;
        struct rate prev;               /* prev.key: suppressed messages like it, NULL = none */
        unsigned prev_suppressed;
};

static size_t slot_of(const char *key, const char *subject)
{
        uint64_t h = (uintptr_t) key;

        /* FNV-1a over the subject: each plugin file its own slot. */
        for (const char *c = subject; *c; c++)
                h = (h ^ (uint8_t) *c) * 1099511628211u;
        return (size_t) (((h >> 3) ^ (h >> 11) ^ (h >> 29)) % RATE_SLOTS);
}

static struct rate_verdict rate_check(const char *key, const char *subject, int priority)
{
        struct rate *s = &rates[slot_of(key, subject)];
        struct rate_verdict v = { .log = true };
        uint64_t now;

        pthread_mutex_lock(&rate_lock);
        now = now_usec();
        if (s->key != key || strncmp(s->subject, subject, sizeof(s->subject) - 1) != 0 ||
            now - s->begin >= LOG_RATE_INTERVAL_USEC) {
                if (s->suppressed > 0) {
                        v.prev = *s;
                        v.prev_suppressed = s->suppressed;
                }
                *s = (struct rate){ .key = key, .priority = priority, .begin = now };
                snprintf(s->subject, sizeof(s->subject), "%s", subject);
        }
        if (s->logged < LOG_RATE_BURST)
                s->logged++;
        else {
                s->suppressed++;
                v.log = false;
        }
        pthread_mutex_unlock(&rate_lock);
        return v;
}

/* ---- output ---- */

static void log_emitv(int priority, const char *format, va_list ap)
{
        static const char *const names[] = { "emerg", "alert", "crit", "error",
                                             "warning", "notice", "info", "debug" };

        if (to_journal) {
                sd_journal_printv(priority, format, ap);
                return;
        }
        /* One write per line (stdio locks the stream), so threads do not interleave. */
        flockfile(stderr);
        fprintf(stderr, "perflibd: %s: ", names[priority & 7]);
        vfprintf(stderr, format, ap);
        fputc('\n', stderr);
        funlockfile(stderr);
}

static void log_emit(int priority, const char *format, ...)
{
        va_list ap;

        va_start(ap, format);
        log_emitv(priority, format, ap);
        va_end(ap);
}

static void log_suppressed(const struct rate *r, unsigned n)
{
        if (r->subject[0])
                log_emit(r->priority, "suppressed %u messages about %s like: %s", n, r->subject,
                         r->key);
        else
                log_emit(r->priority, "suppressed %u messages like: %s", n, r->key);
}

void log_subject_msgv(int priority, const char *subject, const char *format, va_list ap)
{
        struct rate_verdict v;

        if (priority >= LOG_DEBUG && !debug)
                return;
        v = rate_check(format, subject ? subject : "", priority);
        if (v.prev.key)
                log_suppressed(&v.prev, v.prev_suppressed);
        if (v.log)
                log_emitv(priority, format, ap);
}

void log_subject_msg(int priority, const char *subject, const char *format, ...)
{
        va_list ap;

        va_start(ap, format);
        log_subject_msgv(priority, subject, format, ap);
        va_end(ap);
}

void log_msgv(int priority, const char *format, va_list ap)
{
        log_subject_msgv(priority, NULL, format, ap);
}

void log_msg(int priority, const char *format, ...)
{
        va_list ap;

        va_start(ap, format);
        log_msgv(priority, format, ap);
        va_end(ap);
}

void log_flush(void)
{
        pthread_mutex_lock(&rate_lock);
        for (size_t i = 0; i < RATE_SLOTS; i++)
                if (rates[i].suppressed > 0) {
                        log_suppressed(&rates[i], rates[i].suppressed);
                        rates[i].suppressed = 0;
                }
        pthread_mutex_unlock(&rate_lock);
}

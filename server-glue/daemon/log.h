/* SPDX-License-Identifier: MIT */
/*
 * log.h: perflibd's logging (log.c), apart from the daemon's state so that
 * any file of the daemon logs without seeing the rest.
 */
#ifndef PERFLIBD_LOG_H
#define PERFLIBD_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Under systemd (stderr is the journal) logs go to the journal with fields;
 * otherwise to stderr, one line each.  priority is a syslog(3) level.
 *
 * Any thread may log.  Each format string (the message's key: one call
 * site) is logged at most LOG_RATE_BURST times per LOG_RATE_INTERVAL_USEC;
 * the next message of that key after the interval first logs
 * "suppressed N messages like: FORMAT".  log_subject_msg keys by what the
 * message is about as well (a plugin's file, say), so that one chatty
 * subject cannot silence the others; log_flush reports what is still
 * suppressed (at exit).
 */
#define LOG_RATE_BURST          10u
#define LOG_RATE_INTERVAL_USEC  (UINT64_C(30) * 1000000u)

void log_setup(void);
void log_msg(int priority, const char *format, ...) __attribute__((format(printf, 2, 3)));
void log_msgv(int priority, const char *format, va_list ap) __attribute__((format(printf, 2, 0)));
void log_subject_msg(int priority, const char *subject, const char *format, ...)
        __attribute__((format(printf, 3, 4)));
void log_subject_msgv(int priority, const char *subject, const char *format, va_list ap)
        __attribute__((format(printf, 3, 0)));
void log_flush(void);
void log_set_debug(bool on);
/* For the tests: the rate limit's clock (microseconds, NULL = CLOCK_MONOTONIC); resets it. */
void log_set_clock(uint64_t (*now)(void));
#define log_error(...)  log_msg(3, __VA_ARGS__)
#define log_warning(...) log_msg(4, __VA_ARGS__)
#define log_notice(...) log_msg(5, __VA_ARGS__)
#define log_info(...)   log_msg(6, __VA_ARGS__)
#define log_debug(...)  log_msg(7, __VA_ARGS__)

#endif /* PERFLIBD_LOG_H */

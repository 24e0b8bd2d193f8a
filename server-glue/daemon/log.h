/* SPDX-License-Identifier: MIT */
/*
 * log.h: perflibd's logging (log.c), apart from the daemon's state so that
 * any file of the daemon logs without seeing the rest.
 */
#ifndef PERFLIBD_LOG_H
#define PERFLIBD_LOG_H

#include <stdbool.h>

/* Under systemd (stderr is the journal) logs go to the journal with fields;
 * otherwise to stderr, one line each.  priority is a syslog(3) level. */
void log_setup(void);
void log_msg(int priority, const char *format, ...) __attribute__((format(printf, 2, 3)));
void log_set_debug(bool on);
#define log_error(...)  log_msg(3, __VA_ARGS__)
#define log_warning(...) log_msg(4, __VA_ARGS__)
#define log_notice(...) log_msg(5, __VA_ARGS__)
#define log_info(...)   log_msg(6, __VA_ARGS__)
#define log_debug(...)  log_msg(7, __VA_ARGS__)

#endif /* PERFLIBD_LOG_H */

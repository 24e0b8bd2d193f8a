/* SPDX-License-Identifier: MIT */
/*
 * typeperf's parts: the command line (typeperf-opts.c), the output
 * formats and file (typeperf-out.c), the collection (typeperf-run.c) and
 * the sampling loop (typeperf.c).
 * Private to the program.
 */
#ifndef TYPEPERF_H
#define TYPEPERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <signal.h>
#include <time.h>

#include "pcq.h"

/*
 * Exit codes, as typeperf(1) documents them: scripts tell failures apart
 * by these, so they never change meaning.
 */
enum {
        TP_EXIT_OK = 0,
        TP_EXIT_USAGE = 1,              /* bad option or option argument */
        TP_EXIT_COUNTER = 2,            /* bad path, nothing to collect, -cf file */
        TP_EXIT_CONNECT = 3,            /* the host cannot be reached or refused us */
        TP_EXIT_OUTPUT = 4,             /* the output file cannot be created or written */
        TP_EXIT_INTERRUPTED = 5,        /* SIGINT/SIGTERM before the first sample */
        TP_EXIT_COLLECT = 6,            /* collecting failed during the run */
};

enum tp_format {
        TP_CSV,
        TP_TSV,
        TP_JSON,
};

enum tp_query {
        TP_QUERY_NONE,
        TP_QUERY_PATHS,                 /* -q */
        TP_QUERY_INSTANCES,             /* -qx */
};

struct tp_options {
        char **paths;                   /* counter paths, owned (tp_options_done) */
        size_t n_paths;
        uint64_t interval_ns;           /* -si, default 1 s */
        unsigned long samples;          /* -sc; 0: until interrupted */
        enum tp_format format;
        enum tp_query query;
        const char *query_object;       /* -q OBJECT; NULL: every object */
        const char *output;             /* -o; NULL: standard output */
        const char *host;               /* -s; NULL: the local machine */
        const char *user;               /* -u; NULL: $PERFLIB_USER, if any */
        bool yes;                       /* -y */
};

/*
 * Parses argv into *o, reading any -cf file.  Returns -1 after printing a
 * usage error, 1 when --help or --version was printed, 0 to run; *ret_exit
 * gets the exit code for -1 (usage or a counter file error).
 */
int tp_parse_args(int argc, char **argv, struct tp_options *o, int *ret_exit);
/* Parses [[hh:]mm:]ss[.fff] into nanoseconds; -1 when malformed or zero. */
int tp_parse_interval(const char *s, uint64_t *ret_ns);
/*
 * Appends the counter paths of a -cf file to o (one a line, # comments,
 * blank lines skipped).  -1 after printing "FILE:LINE: why" on error.
 */
int tp_read_counter_file(const char *file, struct tp_options *o);
/* Appends a copy of path; -1 on allocation failure. */
int tp_add_path(struct tp_options *o, const char *path);
void tp_options_done(struct tp_options *o);

/* ---- output ---- */

struct tp_out {
        int fd;
        const char *name;               /* for messages: the file, or "standard output" */
        bool is_file;
        bool broken;                    /* a write failed: nothing more is written */
};

/*
 * Whether path may be written: true when it does not exist, or -y, or the
 * user said yes on the terminal.  Prints why not.
 */
bool tp_out_may_write(const char *path, bool yes);
/*
 * Opens path (NULL: standard output) for writing, truncating it (after
 * tp_out_may_write said yes); -1 after printing why.
 */
int tp_out_open(struct tp_out *o, const char *path);
/* Writes all of buf (one whole line or more); -1 after printing why. */
int tp_out_write(struct tp_out *o, const char *buf, size_t len);
/* Flushes to disk and closes a file; -1 after printing why.  Idempotent. */
int tp_out_close(struct tp_out *o);

/* One column of one sample. */
struct tp_cell {
        bool valid;
        double value;
        const char *text;               /* the formatted value when valid */
};

/*
 * The header line (CSV/TSV: "(PDH-CSV 4.0) (zone)(bias)" and the column
 * paths; JSON: none, NULL with *ret_len 0), malloc'd, the caller's.  when:
 * for the time zone.  Returns NULL on allocation failure with *ret_len 1.
 */
char *tp_header_line(enum tp_format f, char *const *columns, size_t n, time_t when,
                     size_t *ret_len);
/*
 * One sample line, malloc'd, the caller's; NULL on allocation failure.
 * when: the sample's time, Unix seconds and nanoseconds.
 */
char *tp_sample_line(enum tp_format f, char *const *columns, const struct tp_cell *cells,
                     size_t n, const struct timespec *when, size_t *ret_len);

/* ---- collection (typeperf-run.c) ---- */

struct tp_host {
        char *name;                     /* as given, NULL: this machine */
        char *label;                    /* what the column headers show after \\ */
        pcq_conn *conn;
        pcq_query *query;
};

struct tp_column {
        char *label;                    /* \\host\Object(instance)\Counter */
        struct tp_host *host;
        pcq_counter *counter;           /* owned by host's query, maybe shared */
        bool wildcard;                  /* before the priming collect expands it */
        char *match;                    /* a wildcard's item: its path as libpcq writes it */
        size_t hint;                    /* where that item was last */
        struct pcq_counter_desc desc;
        uint32_t text_type;             /* desc's type and attributes, for a number */
        uint64_t text_attrib;
        char text[64];
};

struct tp_run {
        const struct tp_options *o;
        struct pcq_credentials cred;    /* for remote hosts; password points at password */
        char password[1024];            /* asked once, wiped by tp_run_done */
        struct tp_host **hosts;         /* each owned; columns point at them */
        size_t n_hosts;
        struct tp_column *cols;
        size_t n_cols;
        char **labels;                  /* the columns' labels, for the line builders */
        struct tp_cell *cells;
        struct tp_out out;
        sigset_t stop;                  /* the signals that end the run */
        unsigned long written;          /* sample lines written */
};

/* A host name as PDH writes it: no leading backslashes. */
const char *tp_bare_host(const char *host);
/*
 * The host for name (NULL: this machine) in r, connected and with a query
 * on first use; NULL after printing why, *ret_exit set.  Owned by r.
 */
struct tp_host *tp_get_host(struct tp_run *r, const char *name, int *ret_exit);
/*
 * Adds the columns of r->o's paths, connecting to their hosts, and
 * collects once (priming the rate counters, expanding the wildcards);
 * -1 after printing why, *ret_exit set.
 */
int tp_add_counters(struct tp_run *r, int *ret_exit);
/* Collects every host once; -1 after printing which one failed. */
int tp_collect(struct tp_run *r);
/* Writes the header line (none for JSON), then a line of the last collect, to r->out. */
int tp_write_header(struct tp_run *r);
int tp_write_sample(struct tp_run *r);
/* Frees what r holds (not r itself, nor r->out). */
void tp_run_done(struct tp_run *r);

#endif

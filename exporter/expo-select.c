/* SPDX-License-Identifier: MIT */
/*
 * Which counters a scrape exports.  Countersets are left out by name
 * (--collect.exclude: an expression matching anywhere in the name, as
 * regexec does; '^Process$' names one counterset alone);
 * a --counters file narrows the rest to its paths, with typeperf's
 * wildcards: "(*)" every instance, "(name*)" a prefix, "\*" every counter.
 */
#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "expo-opts.h"
#include "expo-select.h"

struct line_path {
        struct pcq_path p;
        char *text;                     /* the line as written */
        unsigned line;
};

struct expo_select {
        regex_t *exclude;
        size_t n_exclude;
        struct line_path *paths;        /* NULL: no --counters file */
        size_t n_paths;
        const char *file;
};

void expo_select_free(struct expo_select *s)
{
        if (!s)
                return;
        for (size_t i = 0; i < s->n_exclude; i++)
                regfree(&s->exclude[i]);
        free(s->exclude);
        for (size_t i = 0; i < s->n_paths; i++) {
                pcq_path_done(&s->paths[i].p);
                free(s->paths[i].text);
        }
        free(s->paths);
        free(s);
}

static int compile_exclude(struct expo_select *s, const char *const *v, size_t n)
{
        s->exclude = calloc(n + 1, sizeof(*s->exclude));
        if (!s->exclude)
                return -ENOMEM;
        for (; s->n_exclude < n; s->n_exclude++) {
                const char *re = v[s->n_exclude];
                char why[128];
                int r = regcomp(&s->exclude[s->n_exclude], re, REG_EXTENDED | REG_NOSUB);

                if (r) {
                        regerror(r, NULL, why, sizeof(why));
                        expo_log(EXPO_ERROR, "--collect.exclude=%s: %s", re, why);
                        return -EINVAL;
                }
        }
        return 0;
}

/* The line without its comment and surrounding blanks, in place. */
static char *trim(char *line)
{
        char *end;

        line[strcspn(line, "#\r\n")] = '\0';
        while (*line == ' ' || *line == '\t')
                line++;
        end = line + strlen(line);
        while (end > line && (end[-1] == ' ' || end[-1] == '\t'))
                *--end = '\0';
        return line;
}

/* One path of the file; 1 when it is bad (logged), 0, or -ENOMEM. */
static int add_path(struct expo_select *s, const char *text, unsigned line)
{
        struct line_path *v, *lp;
        size_t pos = 0;
        uint32_t e;

        v = realloc(s->paths, (s->n_paths + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        s->paths = v;
        lp = &v[s->n_paths];
        *lp = (struct line_path){ .line = line };
        e = pcq_path_parse(text, &lp->p, &pos);
        if (e) {
                expo_log(EXPO_ERROR, "%s:%u: '%s': %s (at byte %zu)", s->file, line, text,
                         pcq_status_text(e), pos + 1);
                return 1;
        }
        if (lp->p.host) {
                expo_log(EXPO_ERROR, "%s:%u: '%s': a path here names no host (use --server)",
                         s->file, line, text);
                pcq_path_done(&lp->p);
                return 1;
        }
        if (!(lp->text = strdup(text))) {
                pcq_path_done(&lp->p);
                return -ENOMEM;
        }
        s->n_paths++;
        return 0;
}

static int load_paths(struct expo_select *s, const char *file)
{
        FILE *f = fopen(file, "re");
        char *buf = NULL;
        size_t cap = 0;
        unsigned line = 0, bad = 0;
        int r = 0;

        s->file = file;
        if (!f) {
                r = -errno;
                expo_log(EXPO_ERROR, "%s: %s", file, strerror(-r));
                return r;
        }
        /* An empty file still selects: nothing. */
        if (!(s->paths = malloc(sizeof(*s->paths))))
                r = -ENOMEM;
        while (r >= 0 && getline(&buf, &cap, f) >= 0) {
                char *text = trim(buf);

                line++;
                if (*text && (r = add_path(s, text, line)) > 0)
                        bad++;
        }
        free(buf);
        fclose(f);
        if (r < 0)
                return r;
        return bad ? -EINVAL : 0;
}

int expo_select_new(const char *const *exclude, size_t n_exclude, const char *counters_file,
                    struct expo_select **ret)
{
        struct expo_select *s = calloc(1, sizeof(*s));
        int r;

        if (!s)
                return -ENOMEM;
        r = compile_exclude(s, exclude, n_exclude);
        if (r >= 0 && counters_file)
                r = load_paths(s, counters_file);
        if (r < 0) {
                expo_select_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

int expo_select_check(const struct expo_select *s, pcq_conn *c)
{
        int r = 0;

        for (size_t i = 0; i < s->n_paths; i++) {
                uint32_t e = pcq_validate_path(c, s->paths[i].text);

                if (e == ERROR_SUCCESS || e == PDH_CSTATUS_NO_INSTANCE)
                        continue;
                expo_log(EXPO_ERROR, "%s:%u: '%s': %s", s->file, s->paths[i].line,
                         s->paths[i].text, *pcq_conn_error(c) ? pcq_conn_error(c) :
                         pcq_status_text(e));
                r = -ENOENT;
        }
        return r;
}

static bool excluded(const struct expo_select *s, const char *set)
{
        for (size_t i = 0; i < s->n_exclude; i++)
                if (!regexec(&s->exclude[i], set, 0, NULL, 0))
                        return true;
        return false;
}

bool expo_select_set(const struct expo_select *s, const char *set)
{
        if (excluded(s, set))
                return false;
        if (!s->paths)
                return true;
        for (size_t i = 0; i < s->n_paths; i++)
                if (!strcasecmp(s->paths[i].p.object, set))
                        return true;
        return false;
}

bool expo_select_narrow(const struct expo_select *s, const char *set)
{
        for (size_t i = 0; s->paths && i < s->n_paths; i++) {
                const struct pcq_path *p = &s->paths[i].p;

                if (strcasecmp(p->object, set))
                        continue;
                if (strcmp(p->counter, "*") || (p->instance && strcmp(p->instance, "*")) ||
                    p->parent)
                        return true;
        }
        return false;
}

/* Whether instance (as the server names it: "parent/name") matches p's. */
static bool instance_matches(const struct pcq_path *p, const char *instance)
{
        const char *want = p->instance, *name = instance;
        size_t n;

        if (!want || !instance)
                return true;
        if (p->parent) {
                n = strlen(p->parent);
                if (strncasecmp(instance, p->parent, n) || instance[n] != '/')
                        return false;
                name = instance + n + 1;
        }
        n = strlen(want);
        if (n && want[n - 1] == '*')
                return !strncasecmp(name, want, n - 1);
        return !strcasecmp(name, want);
}

bool expo_select_value(const struct expo_select *s, const char *set, const char *counter,
                       const char *instance)
{
        if (!s->paths)
                return true;
        for (size_t i = 0; i < s->n_paths; i++) {
                const struct pcq_path *p = &s->paths[i].p;

                if (!strcasecmp(p->object, set) &&
                    (!strcmp(p->counter, "*") || !strcasecmp(p->counter, counter)) &&
                    instance_matches(p, instance))
                        return true;
        }
        return false;
}

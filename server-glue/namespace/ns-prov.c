/* SPDX-License-Identifier: MIT */
/*
 * ns-prov.c: the provider list of struct ns.  A provider announced in the
 * runtime directory is added once (by path), dropped when its service
 * connection hangs up, and checked at each refresh for countersets and
 * self-descriptions it published since the last build; each of these marks
 * the counterset list dirty for ns.c to rebuild.  One that could not be
 * added is pending, tried again with backoff; one that is stopped or
 * missed the collect bound is unresponsive, and its values are not served.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "ns-log.h"
#include "ns-map.h"
#include "ns-prov.h"

void ns_names_free(struct ns_name *n)
{
        while (n) {
                struct ns_name *next = n->next;

                free(n);
                n = next;
        }
}

void ns_prov_free(struct ns_prov *p)
{
        if (!p)
                return;
        pl_reader_close(p->r);
        for (uint32_t i = 0; i < p->n_names; i++)
                free(p->names[i]);
        free(p->names);
        ns_names_free(p->parked);
        free(p->reported);
        pthread_mutex_destroy(&p->name_lock);
        pthread_mutex_destroy(&p->lock);
        free(p->path);
        free(p);
}

static struct ns_prov *prov_find(const struct ns *ns, const char *path)
{
        for (size_t i = 0; i < ns->n_provs; i++)
                if (strcmp(ns->provs[i]->path, path) == 0)
                        return ns->provs[i];
        return NULL;
}

/*
 * The state letter and the parent of pid, from /proc/PID/stat: 0, or -1
 * when it cannot be read.  "pid (comm) S ppid ...": comm may hold ')' but
 * is at most 15 bytes and only numbers follow it, so the last ')' read
 * ends it.
 */
static int pid_stat(pid_t pid, char *ret_state, pid_t *ret_ppid)
{
        char path[32], buf[128], state;
        const char *c;
        long ppid;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -1;
        buf[n] = '\0';
        c = strrchr(buf, ')');
        if (!c || sscanf(c + 1, " %c %ld", &state, &ppid) != 2)
                return -1;
        *ret_state = state;
        *ret_ppid = (pid_t) ppid;
        return 0;
}

/* The parent of pid; 0 when it cannot be told. */
static pid_t parent_of(pid_t pid)
{
        pid_t ppid;
        char state;

        return pid_stat(pid, &state, &ppid) == 0 ? ppid : 0;
}

/*
 * A provider for path with its reader open: 0, -ENOMEM, or ns_map_open's
 * error (a segment refused for its size or kept out by a shortage is
 * logged there and by ns.c).  unlocked: see ns_map_open.
 */
static int prov_open(struct ns *ns, const char *path, bool unlocked, struct ns_prov **ret)
{
        struct ns_prov *p = calloc(1, sizeof(*p));
        int r;

        if (!p)
                return -ENOMEM;
        p->n_csets = -1;
        p->parked_tail = &p->parked;
        pthread_mutex_init(&p->lock, NULL);
        pthread_mutex_init(&p->name_lock, NULL);
        p->path = strdup(path);
        r = p->path ? ns_map_open(ns, path, unlocked, &p->r, &p->mapped) : -ENOMEM;
        if (r < 0) {
                ns_prov_free(p);
                return r;
        }
        p->callback = pl_reader_has_callback(p->r) > 0;
        /* Without a pid only the collect bound tells that it hangs. */
        if (pl_reader_peer_pid(p->r, &p->pid) < 0)
                p->pid = 0;
        p->has_owner = pl_reader_peer_uid(p->r, &p->owner) == 0;
        /*
         * A plugin's host runs as an unprivileged user when we are root, but
         * publishes for the server, as in-process plugins did: it is one of
         * our children (the server starts no other), whose pid the kernel
         * gave its socket, and none of another user's processes can be.
         */
        if (p->pid > 0 && parent_of(p->pid) == getpid()) {
                p->host = true;
                p->owner = geteuid();
                p->has_owner = true;
        }
        *ret = p;
        return 0;
}

static long pending_find(const struct ns *ns, const char *path)
{
        for (size_t i = 0; i < ns->n_pending; i++)
                if (strcmp(ns->pending[i].path, path) == 0)
                        return (long) i;
        return -1;
}

static void pending_drop(struct ns *ns, long i)
{
        if (i < 0)
                return;
        free(ns->pending[i].path);
        ns->pending[i] = ns->pending[--ns->n_pending];
}

/* path failed (again) at now: its next try waits twice as long as the last one, up to the cap. */
static void pending_note(struct ns *ns, long i, const char *path, uint64_t now)
{
        struct ns_pending *v;

        if (i >= 0) {
                v = &ns->pending[i];
                v->backoff = v->backoff * 2 < ns->timings.retry_max ? v->backoff * 2
                                                                  : ns->timings.retry_max;
                v->next_try = now + v->backoff;
                return;
        }
        /* Out of memory, it is only tried again at the next scan, as before. */
        v = realloc(ns->pending, (ns->n_pending + 1) * sizeof(*v));
        if (!v)
                return;
        ns->pending = v;
        v += ns->n_pending;
        *v = (struct ns_pending){ .path = strdup(path), .next_try = now + ns->timings.retry_min,
                                  .backoff = ns->timings.retry_min };
        if (v->path)
                ns->n_pending++;
}

/*
 * Adds the provider at path; one that cannot be added yet is pending.  Its
 * place in the pending list is looked up after the open, which may have
 * let go of the lock.  path may be a pending entry's: not used once dropped.
 */
static int prov_try(struct ns *ns, const char *path, bool unlocked)
{
        struct ns_prov *p = NULL, **v;
        int r = prov_open(ns, path, unlocked, &p);
        long i = pending_find(ns, path);

        if (r < 0) {
                /*
                 * A provider that exits between the scan and here is simply
                 * not added; one that refuses is dead, and a sweep removes
                 * the socket it left behind.
                 */
                if (r == -ECONNREFUSED)
                        ns->sweep = true;
                if (r == -ENOENT || r == -ECONNREFUSED)
                        pending_drop(ns, i);
                else
                        pending_note(ns, i, path, ns_mono_ns());
                return 0;
        }
        /* Both discovery threads add providers: one may have added it meanwhile. */
        v = prov_find(ns, path) ? NULL : realloc(ns->provs, (ns->n_provs + 1) * sizeof(*v));
        if (!v) {
                ns_map_release(ns, p->mapped);
                ns_prov_free(p);
                if (prov_find(ns, path))
                        return 0;
                pending_note(ns, i, path, ns_mono_ns());
                return -ENOMEM;
        }
        ns->provs = v;
        pending_drop(ns, i);
        ns->provs[ns->n_provs++] = p;
        ns->dirty = true;
        return 0;
}

int ns_prov_add(const char *path, void *userdata)
{
        struct ns *ns = userdata;
        long i;

        if (prov_find(ns, path))
                return 0;
        /* A rescan does not hurry one that is pending: a hung socket costs a bound per try. */
        i = pending_find(ns, path);
        if (i >= 0 && ns_mono_ns() < ns->pending[i].next_try)
                return 0;
        return prov_try(ns, path, false);
}

bool ns_prov_known(const struct ns *ns, const char *path)
{
        return prov_find(ns, path) || pending_find(ns, path) >= 0;
}

int ns_prov_add_unlocked(struct ns *ns, const char *path)
{
        return prov_find(ns, path) ? 0 : prov_try(ns, path, true);
}

const char *ns_pending_due(const struct ns *ns, uint64_t now, uint64_t *ret_next)
{
        long first = -1;

        for (size_t i = 0; i < ns->n_pending; i++)
                if (first < 0 || ns->pending[i].next_try < ns->pending[first].next_try)
                        first = (long) i;
        *ret_next = first < 0 ? 0 : ns->pending[first].next_try;
        return first >= 0 && *ret_next <= now ? ns->pending[first].path : NULL;
}

void ns_provs_retry(struct ns *ns)
{
        uint64_t next;
        const char *due = ns_pending_due(ns, ns_mono_ns(), &next);

        /* Only when it is no longer pending does a provider show up at once: ignore ENOMEM. */
        if (due)
                (void) prov_try(ns, due, false);
}

int ns_scan_done(struct ns *ns, int k, unsigned reclaimed)
{
        if (reclaimed > 0)
                ns_log(ns, LOG_INFO, "removed %u socket(s) of dead providers from %s", reclaimed,
                       ns->runtime_dir);
        /* A missing runtime directory just means no provider yet. */
        if (k == -ENOENT)
                return 0;
        if (!ns_map_shortage(k))
                return k;
        ns_map_short(ns, "runtime directory", ns->runtime_dir, k);
        return 0;
}

void ns_pending_free(struct ns *ns)
{
        for (size_t i = 0; i < ns->n_pending; i++)
                free(ns->pending[i].path);
        free(ns->pending);
        ns->pending = NULL;
        ns->n_pending = 0;
}

/*
 * Drops providers whose service connection hung up, and asks for a sweep:
 * one that died left its socket, which the next scan removes.
 */
void ns_provs_reap(struct ns *ns)
{
        size_t j = 0;

        for (size_t i = 0; i < ns->n_provs; i++) {
                if (pl_reader_alive(ns->provs[i]->r) > 0) {
                        ns->provs[j++] = ns->provs[i];
                        continue;
                }
                ns_map_release(ns, ns->provs[i]->mapped);
                ns_prov_free(ns->provs[i]);
                ns->dirty = ns->sweep = true;
        }
        ns->n_provs = j;
}

/* Notices countersets and self-descriptions published since the last build. */
void ns_provs_check(struct ns *ns)
{
        for (size_t i = 0; i < ns->n_provs; i++) {
                struct ns_prov *p = ns->provs[i];
                const struct ctrpp_provider_desc *d;

                if (pl_reader_counterset_count(p->r) != p->n_csets)
                        ns->dirty = true;
                if (!p->has_desc && pl_reader_description(p->r, &d) == 0)
                        ns->dirty = true;
        }
}

/* Whether pid is stopped: state T (stopped) or t (tracing stop). */
static bool pid_stopped(pid_t pid)
{
        pid_t ppid;
        char state;

        return pid_stat(pid, &state, &ppid) == 0 && (state == 'T' || state == 't');
}

bool ns_prov_unresponsive(const struct ns *ns, struct ns_prov *p, uint64_t now)
{
        if (now < p->quiet_until)
                return true;
        if (p->pid <= 0)
                return false;
        if (now - p->state_at >= ns->timings.state_check || p->state_at == 0) {
                p->state_at = now;
                p->stopped = pid_stopped(p->pid);
        }
        return p->stopped;
}

size_t ns_providers(const struct ns *ns)
{
        return ns->n_provs;
}

void ns_prov_missed(struct ns *ns, struct ns_prov *p)
{
        p->quiet_until = ns_mono_ns() + NS_QUIET_NS;
        if (ns->missed)
                ns->missed(ns->missed_userdata, p->pid);
}

/* SPDX-License-Identifier: MIT */
/*
 * ns-owner.c: who may publish a counterset (ns-owner.h).  Without it any
 * user's provider could publish another user's counterset GUID and have
 * its values merged into the victim's, under names it chose.
 *
 * An installed counterset has its owner from the registry.  A
 * self-described one is claimed: kept by the user who held it at the last
 * rebuild while one of that user's copies is live, else taken by the
 * user of the copy found first that is under the cap.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "ns-log.h"
#include "ns-owner.h"

/* Refusals remembered per provider: a provider publishing more is muted. */
#define NS_REPORTS_MAX 64

/* Countersets owned per capped user in one decision. */
struct tally {
        struct { uid_t uid; size_t n; } *v;
        size_t n;
};

static bool capped(const struct ns *ns, uid_t uid)
{
        return uid != 0 && uid != ns->server_uid;
}

/* The count for uid, added at 0 when new: NULL when out of memory. */
static size_t *tally_of(struct tally *t, uid_t uid)
{
        void *v;

        for (size_t i = 0; i < t->n; i++)
                if (t->v[i].uid == uid)
                        return &t->v[i].n;
        v = realloc(t->v, (t->n + 1) * sizeof(*t->v));
        if (!v)
                return NULL;
        t->v = v;
        t->v[t->n].uid = uid;
        t->v[t->n].n = 0;
        return &t->v[t->n++].n;
}

/* Whether uid may own one more counterset: 1 yes, 0 no, -ENOMEM. */
static int has_room(const struct ns *ns, struct tally *t, uid_t uid)
{
        size_t *k;

        if (!capped(ns, uid))
                return 1;
        k = tally_of(t, uid);
        return !k ? -ENOMEM : *k < ns->max_per_user;
}

static const struct ns_claim *claim_find(const struct ns *ns, const GUID *g)
{
        size_t lo = 0, hi = ns->n_claims;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int k = memcmp(&ns->claims[mid].guid, g, sizeof(GUID));

                if (k == 0)
                        return &ns->claims[mid];
                if (k < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

static int claim_cmp(const void *a, const void *b)
{
        return memcmp(&((const struct ns_claim *) a)->guid, &((const struct ns_claim *) b)->guid,
                      sizeof(GUID));
}

/*
 * Gives every copy of v[lo, hi) its verdict, owner being the counterset's
 * owner; with privileged_too, root's and the server's own copies (its
 * plugins) are accepted as well.
 */
static void judge(const struct ns *ns, struct ns_copy *v, size_t lo, size_t hi, uid_t owner,
                  bool privileged_too)
{
        for (size_t i = lo; i < hi; i++) {
                bool ok = v[i].installed || v[i].uid == owner ||
                          (privileged_too && !capped(ns, v[i].uid));

                v[i].owner = owner;
                v[i].verdict = ok ? NS_ACCEPTED : NS_REFUSED_OWNER;
        }
}

/*
 * The group v[lo, hi) when it is decided without looking at the cap: an
 * installed counterset, or a claim still held.  1 when decided (*claimed
 * set for a kept claim), 0 when it is up for claiming.
 */
static int decide_fixed(const struct ns *ns, struct ns_copy *v, size_t lo, size_t hi,
                        bool *claimed)
{
        const struct ns_claim *c = claim_find(ns, &v[lo].guid);

        *claimed = false;
        for (size_t i = lo; i < hi; i++)
                if (v[i].installed) {
                        judge(ns, v, lo, hi, v[i].uid, true);
                        return 1;
                }
        for (size_t i = lo; c && i < hi; i++)
                if (v[i].uid == c->uid) {
                        judge(ns, v, lo, hi, c->uid, false);
                        *claimed = true;
                        return 1;
                }
        return 0;
}

/*
 * The group v[lo, hi), up for claiming, goes to the user of its earliest
 * copy who has room: *claimed when someone took it.  Copies of users at
 * the cap are refused as such, the other users' as not theirs.
 */
static int decide_new(const struct ns *ns, struct tally *t, struct ns_copy *v, size_t lo,
                      size_t hi, bool *claimed)
{
        size_t first = SIZE_MAX;
        int r;

        for (size_t i = lo; i < hi; i++) {
                if (first != SIZE_MAX && v[i].order >= v[first].order)
                        continue;
                if ((r = has_room(ns, t, v[i].uid)) < 0)
                        return r;
                if (r)
                        first = i;
        }
        if (first != SIZE_MAX)
                judge(ns, v, lo, hi, v[first].uid, false);
        for (size_t i = lo; i < hi; i++) {
                if (first != SIZE_MAX && v[i].uid == v[first].uid)
                        continue;
                if ((r = has_room(ns, t, v[i].uid)) < 0)
                        return r;
                v[i].verdict = r ? NS_REFUSED_OWNER : NS_REFUSED_CAP;
                v[i].owner = first != SIZE_MAX ? v[first].uid : v[i].uid;
        }
        *claimed = first != SIZE_MAX;
        return 0;
}

/* A group of copies up for claiming, and when its earliest copy was found. */
struct open_group {
        size_t lo, hi, order;
};

static int open_cmp(const void *a, const void *b)
{
        const struct open_group *x = a, *y = b;

        return x->order < y->order ? -1 : x->order > y->order;
}

/* Counts a claim of uid's on g into t and claims[*n]. */
static int claim_add(const struct ns *ns, struct tally *t, struct ns_claim *claims, size_t *n,
                     const GUID *g, uid_t uid)
{
        size_t *k = capped(ns, uid) ? tally_of(t, uid) : NULL;

        if (capped(ns, uid) && !k)
                return -ENOMEM;
        if (k)
                (*k)++;
        claims[*n].guid = *g;
        claims[(*n)++].uid = uid;
        return 0;
}

/* Groups decided outright first, so that claims held are counted before new ones. */
static int decide_groups(struct ns *ns, struct tally *t, struct ns_copy *v, size_t n,
                         struct open_group *open, struct ns_claim *claims, size_t *ret_n)
{
        size_t n_open = 0, n_claims = 0;
        bool claimed;
        int r;

        for (size_t lo = 0, hi; lo < n; lo = hi) {
                size_t order = v[lo].order;

                for (hi = lo + 1; hi < n && memcmp(&v[hi].guid, &v[lo].guid, sizeof(GUID)) == 0; hi++)
                        order = v[hi].order < order ? v[hi].order : order;
                if (!decide_fixed(ns, v, lo, hi, &claimed))
                        open[n_open++] = (struct open_group) { lo, hi, order };
                else if (claimed && (r = claim_add(ns, t, claims, &n_claims, &v[lo].guid,
                                                   v[lo].owner)) < 0)
                        return r;
        }
        if (n_open > 1)
                qsort(open, n_open, sizeof(*open), open_cmp);
        for (size_t i = 0; i < n_open; i++) {
                struct ns_copy *c = &v[open[i].lo];

                if ((r = decide_new(ns, t, v, open[i].lo, open[i].hi, &claimed)) < 0)
                        return r;
                if (claimed && (r = claim_add(ns, t, claims, &n_claims, &c->guid, c->owner)) < 0)
                        return r;
        }
        *ret_n = n_claims;
        return 0;
}

int ns_owner_decide(struct ns *ns, struct ns_copy *v, size_t n)
{
        struct open_group *open = calloc(n ? n : 1, sizeof(*open));
        struct ns_claim *claims = calloc(n ? n : 1, sizeof(*claims));
        struct tally t = { 0 };
        size_t n_claims = 0;
        int r = -ENOMEM;

        if (!open || !claims)
                goto fail;
        r = decide_groups(ns, &t, v, n, open, claims, &n_claims);
        if (r < 0)
                goto fail;
        if (n_claims > 1)
                qsort(claims, n_claims, sizeof(*claims), claim_cmp);
        free(ns->claims);
        ns->claims = claims;
        ns->n_claims = n_claims;
        free(open);
        free(t.v);
        return 0;
fail:
        free(open);
        free(claims);
        free(t.v);
        return r;
}

/* Whether p's refusal of g is new (and now remembered). */
static bool first_refusal(struct ns *ns, struct ns_prov *p, const GUID *g)
{
        GUID *v;

        for (size_t i = 0; i < p->n_reported; i++)
                if (memcmp(&p->reported[i], g, sizeof(GUID)) == 0)
                        return false;
        if (p->reports_muted)
                return false;
        v = p->n_reported < NS_REPORTS_MAX ? realloc(p->reported, (p->n_reported + 1) * sizeof(*v))
                                           : NULL;
        if (!v) {
                p->reports_muted = true;
                ns_log(ns, LOG_WARNING, "provider %s (pid %d, uid %u): further refused "
                       "countersets are not reported", p->path, (int) p->pid, (unsigned) p->owner);
                return false;
        }
        p->reported = v;
        p->reported[p->n_reported++] = *g;
        return true;
}

void ns_owner_report(struct ns *ns, struct ns_prov *p, const struct ns_copy *c)
{
        const GUID *g = &c->guid;
        char text[39];

        if (c->verdict == NS_ACCEPTED || !first_refusal(ns, p, g))
                return;
        snprintf(text, sizeof(text), "{%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x}",
                 g->Data1, g->Data2, g->Data3, g->Data4[0], g->Data4[1], g->Data4[2],
                 g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
        if (c->verdict == NS_REFUSED_CAP)
                ns_log(ns, LOG_WARNING, "provider %s (pid %d, uid %u): counterset %s refused: "
                       "its user owns %zu countersets already (--max-countersets-per-user)",
                       p->path, (int) p->pid, (unsigned) p->owner, text, ns->max_per_user);
        else
                ns_log(ns, LOG_WARNING, "provider %s (pid %d, uid %u): counterset %s refused: "
                       "it belongs to uid %u", p->path, (int) p->pid, (unsigned) p->owner, text,
                       (unsigned) c->owner);
}

void ns_owner_report_unknown(struct ns *ns, struct ns_prov *p)
{
        if (p->reports_muted)
                return;
        p->reports_muted = true;
        ns_log(ns, LOG_WARNING, "provider %s: the user it runs as is unknown (no SO_PEERCRED): "
               "nothing it publishes is served", p->path);
}

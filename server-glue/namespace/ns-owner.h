/* SPDX-License-Identifier: MIT */
/*
 * ns-owner.h: who may publish a counterset (the rules are in ns-live.h).
 * The catalog (ns-catalog.h) hands every copy of every counterset it found
 * to ns_owner_decide before it merges them, drops the refused ones and
 * reports them with ns_owner_report.  The claims on self-described
 * countersets live in struct ns from one rebuild to the next.
 *
 * ns_owner_decide sees uids and GUIDs only, no provider, so that the rules
 * are tested without processes.
 */
#ifndef PERFLIBD_NS_OWNER_H
#define PERFLIBD_NS_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "ns-prov.h"

/* A self-described counterset and the user who owns it. */
struct ns_claim {
        GUID guid;
        uid_t uid;
};

enum ns_verdict {
        NS_ACCEPTED,
        NS_REFUSED_OWNER,               /* another user owns the counterset */
        NS_REFUSED_CAP,                 /* its user owns ns->max_per_user already */
};

/* One copy of a counterset: a provider's, or the installed description. */
struct ns_copy {
        GUID guid;
        uid_t uid;                      /* the provider's owner, or the installed owner */
        bool installed;
        size_t order;                   /* discovery order: lower was found first */
        enum ns_verdict verdict;        /* out */
        uid_t owner;                    /* out: the counterset's owner */
};

/*
 * Sets every copy's verdict, v sorted so that copies of one GUID are
 * adjacent, and replaces ns's claims with those this decision made or
 * kept.  0, or -ENOMEM with ns unchanged (verdicts undefined).
 */
int ns_owner_decide(struct ns *ns, struct ns_copy *v, size_t n);

/* Reports c, p's copy, once per (p, GUID), through ns->report. */
void ns_owner_report(struct ns *ns, struct ns_prov *p, const struct ns_copy *c);

/* Reports once that p's owner is unknown, so it publishes nothing. */
void ns_owner_report_unknown(struct ns *ns, struct ns_prov *p);

#endif /* PERFLIBD_NS_OWNER_H */

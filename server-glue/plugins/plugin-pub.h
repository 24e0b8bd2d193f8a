/* SPDX-License-Identifier: MIT */
/*
 * plugin-pub.h: what a plugin published.  Its providers are the ones this
 * process started while the plugin's start ran: the collect-service
 * sockets with this process's pid that appeared in the runtime directory
 * meanwhile.  Each is read like any provider (libperflib's reader) for its
 * provider GUID and its countersets' GUIDs.  Two plugins publishing the
 * same GUID would otherwise have their instances merged into one
 * counterset by the namespace, and nobody told.
 *
 * Functions return 0 or -errno and write ret_ parameters only on success.
 */
#ifndef PERFLIBD_PLUGIN_PUB_H
#define PERFLIBD_PLUGIN_PUB_H

#include <stdbool.h>
#include <stddef.h>

#include "perflib.h"

/* One GUID a plugin published. */
struct pub {
        GUID guid;
        bool counterset;                /* a counterset's, else a provider's */
};

/* The provider sockets of this process in a runtime directory, at one moment. */
struct pub_mark {
        char **names;                   /* sorted; each and the array malloc'd */
        size_t n;
};

/* The sockets now; a missing directory has none.  *ret is the caller's (pub_mark_done). */
int pub_mark(const char *dir, struct pub_mark *ret);
/* Frees what m holds and empties it. */
void pub_mark_done(struct pub_mark *m);

/*
 * What the providers of this process whose sockets appeared in dir since
 * before publish: each one's provider GUID, then its countersets'.  A
 * provider that cannot be read is left out (the namespace reports it).
 * *ret (malloc'd, NULL when *ret_n is 0) is the caller's.
 */
int pub_since(const char *dir, const struct pub_mark *before, struct pub **ret, size_t *ret_n);

/* The first GUID of a's that b has too, of the same kind; NULL when none. */
const struct pub *pub_common(const struct pub *a, size_t na, const struct pub *b, size_t nb);

/* A GUID as the logs write it: "{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}". */
#define PUB_GUID_TEXT 39
void pub_guid_text(const GUID *g, char buf[PUB_GUID_TEXT]);

#endif /* PERFLIBD_PLUGIN_PUB_H */

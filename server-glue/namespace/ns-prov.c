/* SPDX-License-Identifier: MIT */
/*
 * ns-prov.c: the provider list of struct ns.  A provider announced in the
 * runtime directory is added once (by path), dropped when its service
 * connection hangs up, and checked at each refresh for countersets and
 * self-descriptions it published since the last build; each of these marks
 * the counterset list dirty for ns.c to rebuild.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

int ns_prov_add(const char *path, void *userdata)
{
        struct ns *ns = userdata;
        struct ns_prov *p, **v;

        if (prov_find(ns, path))
                return 0;
        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->n_csets = -1;
        p->parked_tail = &p->parked;
        pthread_mutex_init(&p->lock, NULL);
        pthread_mutex_init(&p->name_lock, NULL);
        v = realloc(ns->provs, (ns->n_provs + 1) * sizeof(*v));
        if (v)
                ns->provs = v;
        p->path = strdup(path);
        if (!p->path || !v) {
                ns_prov_free(p);
                return -ENOMEM;
        }
        /*
         * A provider that exits between the scan and here is simply not
         * added; one refused for its size or kept out by a shortage is
         * logged by ns_map_open and ns.c.
         */
        if (ns_map_open(ns, path, &p->r, &p->mapped) < 0) {
                ns_prov_free(p);
                return 0;
        }
        p->callback = pl_reader_has_callback(p->r) > 0;
        ns->provs[ns->n_provs++] = p;
        ns->dirty = true;
        return 0;
}

/* Drops providers whose service connection hung up. */
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
                ns->dirty = true;
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

size_t ns_providers(const struct ns *ns)
{
        return ns->n_provs;
}

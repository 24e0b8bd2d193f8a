/* SPDX-License-Identifier: MIT */
/*
 * The providers of this process, in one list: so that a reader in the same
 * process collects their by-reference values directly, and so that a forked
 * child drops the collect services it inherited.
 */
#include <errno.h>

#include "collect.h"
#include "proclist.h"
#include "service.h"
#include "state.h"

/* Every provider of this process, for in-process readers. */
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pl_provider *registry;

/*
 * fork(): the child inherits the service's descriptors, and an inherited
 * reader connection would keep the provider looking alive after the parent
 * dies.  So the child closes them all and has no service; the parent goes on
 * as before.  Every lock is held across the fork so the child's copy of the
 * state is consistent.
 */
static void atfork_prepare(void)
{
        pthread_mutex_lock(&registry_lock);
        for (struct pl_provider *p = registry; p; p = p->next)
                pthread_mutex_lock(&p->lock);
}

static void atfork_parent(void)
{
        for (struct pl_provider *p = registry; p; p = p->next)
                pthread_mutex_unlock(&p->lock);
        pthread_mutex_unlock(&registry_lock);
}

static void atfork_child(void)
{
        for (struct pl_provider *p = registry; p; p = p->next) {
                pl_service_forget(p);
                pthread_mutex_unlock(&p->lock);
        }
        pthread_mutex_unlock(&registry_lock);
}

static void atfork_register(void)
{
        pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

void pl_proclist_add(struct pl_provider *p)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;

        pthread_once(&once, atfork_register);
        pthread_mutex_lock(&registry_lock);
        p->next = registry;
        registry = p;
        pthread_mutex_unlock(&registry_lock);
}

void pl_proclist_remove(struct pl_provider *p)
{
        pthread_mutex_lock(&registry_lock);
        for (struct pl_provider **pp = &registry; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                        *pp = p->next;
                        break;
                }
        pthread_mutex_unlock(&registry_lock);
}

int pl_provider_collect_local(uint64_t dev, uint64_t ino)
{
        int r = -ESRCH;

        /* Held throughout so that the provider cannot be stopped under us. */
        pthread_mutex_lock(&registry_lock);
        for (struct pl_provider *p = registry; p; p = p->next)
                if (p->dev == dev && p->ino == ino) {
                        pl_provider_collect(p);
                        r = 0;
                        break;
                }
        pthread_mutex_unlock(&registry_lock);
        return r;
}

/* SPDX-License-Identifier: MIT */
/* service.c: a provider's collect service, its thread and socket.  Hidden. */
#ifndef PL_SERVICE_H
#define PL_SERVICE_H

struct pl_provider;

int pl_service_start(struct pl_provider *p, const char *runtime_dir);
void pl_service_stop(struct pl_provider *p);
/* In a forked child: the service belongs to the parent, drop every descriptor of it. */
void pl_service_forget(struct pl_provider *p);

#endif /* PL_SERVICE_H */

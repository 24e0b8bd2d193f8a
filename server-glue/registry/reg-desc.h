/* SPDX-License-Identifier: MIT */
/*
 * reg-desc.h: a manifest's provider as the description perflibd serves
 * (reg-desc.c).  Depends on ctrpp's manifest model only, never on the
 * registry directory: registry.c calls it for each installed provider.
 */
#ifndef PERFLIBD_REG_DESC_H
#define PERFLIBD_REG_DESC_H

#include "perfman.h"

/*
 * The description of provider p of m (on which pm_assign_ids ran), as
 * ctrpp's resource generator writes it, deep-copied: owned by the caller,
 * freed with reg_desc_free.  manifest_name is what .manifest says; the
 * caller chooses it (registry.c: the base name of the manifest lodctr was
 * given), and NULL leaves .manifest NULL.
 */
int reg_desc_build(const struct pm_manifest *m, const struct pm_provider *p,
                   const char *manifest_name, struct ctrpp_provider_desc **ret);

/* Accepts NULL.  registry.h declares it too, for whoever holds a reg_entry. */
void reg_desc_free(struct ctrpp_provider_desc *desc);

#endif /* PERFLIBD_REG_DESC_H */

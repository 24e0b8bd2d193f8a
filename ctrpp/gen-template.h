/* SPDX-License-Identifier: MIT */
/*
 * What the provider header's writers share (gen-header.c, gen-legacy.c):
 * their context and the counterset template (gen-template.c).
 */
#ifndef CTRPP_GEN_TEMPLATE_H
#define CTRPP_GEN_TEMPLATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "gen.h"

/* One memory stream reused for every counter: opening one each costs more than the rest. */
struct scratch {
        FILE *m;
        char *text;
        size_t size;
};

struct hctx {
        const struct pm_manifest *m;
        const struct gen_options *o;
        FILE *f;
        const char *prefix;
        struct scratch *scratch;
};

void pm_scratch_done(struct scratch *s);

/* The PERF_COUNTERSET_INFO InstanceType: its macro, else the number. */
void pm_put_instance_type(FILE *f, uint32_t t);
bool pm_uses_structs(const struct pm_counterset *cs);
/*
 * One counter's PERF_COUNTER_INFO initializer; structs and tail as
 * put_offset takes them.  -ENOMEM when the scratch stream fails.
 */
int pm_put_counter_info(const struct hctx *h, const struct pm_counterset *cs,
                     const struct pm_counter *c, bool structs, uint32_t *tail);
void pm_put_field_checks(const struct hctx *h, const struct pm_counterset *cs);
/* Whether any counterset of m is laid out by <structs>. */
bool pm_any_structs(const struct pm_manifest *m);
/* CTRPP_ALIGN8 and CTRPP_CHECK_FIELD, which such templates use. */
void pm_put_struct_macros(FILE *f);

#endif

/* SPDX-License-Identifier: MIT */
/* The provider header's -legacy body (gen-legacy.c). */
#ifndef CTRPP_GEN_LEGACY_H
#define CTRPP_GEN_LEGACY_H

struct hctx;

/* Every provider's Vista-era variables, then PerfAutoInitialize/PerfAutoCleanup. */
int pm_put_legacy_body(const struct hctx *h);

#endif

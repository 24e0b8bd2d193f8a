/* SPDX-License-Identifier: MIT */
/*
 * ctrpp's generators: from a validated manifest to the files a provider is
 * built with.  Each writes to f and returns 0, or -errno when writing failed;
 * the caller owns f and decides where the output lands.
 */
#ifndef CTRPP_GEN_H
#define CTRPP_GEN_H

#include <stdbool.h>
#include <stdio.h>

#include "perfman.h"

struct gen_options {
        const char *prefix;             /* -prefix P; "" when not given */
        bool legacy;                    /* -legacy: Vista-era PerfAutoInitialize form */
        bool memory_routines;           /* -MemoryRoutines */
        bool notification_callback;     /* -NotificationCallback */
        const char *header_name;        /* base name of the -o file, for guards and includes */
        const char *counters_header_name; /* base name of the -ch file, or NULL */
        const char *resource_name;      /* base name of the -rc file */
};

/* The provider header (-o): GUIDs, templates, CounterInitialize/CounterCleanup. */
int gen_header(const struct pm_manifest *m, const struct gen_options *o, FILE *f);
/* The symbolic constants header (-ch). */
int gen_counters_header(const struct pm_manifest *m, const struct gen_options *o, FILE *f);
/* The resource file (-rc): C data carrying every string and the metadata. */
int gen_resource(const struct pm_manifest *m, const struct gen_options *o, FILE *f);

/*
 * Every provider's <prefix><Provider>_Description (gen-resource.c): the
 * resource file's data, which -legacy writes into its .c file instead.
 */
int gen_put_descriptions(const struct pm_manifest *m, const char *prefix, FILE *f);

/*
 * -legacy (gen-legacy.c): the files Windows Vista's ctrpp writes, named
 * after the manifest (<base>.h, <base>.c, <base>.rc, <base>_r.h).
 */
int gen_legacy_header(const struct pm_manifest *m, const struct gen_options *o, FILE *f);
int gen_legacy_source(const struct pm_manifest *m, const struct gen_options *o, FILE *f);
int gen_legacy_rc(const struct pm_manifest *m, const struct gen_options *o, FILE *f);
int gen_legacy_ids(const struct pm_manifest *m, const struct gen_options *o, FILE *f);

/* ---- shared writers (gen-util.c) ---- */

/* The last path component; "manifest" for NULL.  Borrows from path. */
const char *gen_base_name(const char *path);
/* Whether c may stand in a C identifier (first: at its start). */
bool gen_is_ident_char(char c, bool first);
/*
 * text made a C identifier (other characters become '_', a leading digit
 * gets a '_' in front); NULL when text is empty or NULL, or on ENOMEM.
 * Owned by the caller.
 */
char *gen_identifier_from(const char *text);
/*
 * The identifier for a provider or counterset: its symbol, else its name
 * made an identifier, else fallback.  Both generators name the provider
 * this way, so the header's reference and the resource file's definition
 * of <Provider>_Description always agree.  Owned by the caller; NULL on ENOMEM.
 */
char *gen_symbol_or(const char *symbol, const char *fallback_text, const char *fallback);
/* s as a C string literal: UTF-8 kept, escapes where C needs them, "??" split. */
void gen_put_string(FILE *f, const char *s);
/* s inside a comment: nothing in it can end the comment or break the line. */
void gen_put_comment_text(FILE *f, const char *s);
/* A GUID initializer: { 0x..., 0x..., 0x..., { 0x.., ... } } */
void gen_put_guid(FILE *f, const GUID *g);

#endif

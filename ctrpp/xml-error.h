/* SPDX-License-Identifier: MIT */
/* libxml2's own messages made diagnostics (xml-error.c). */
#ifndef CTRPP_XML_ERROR_H
#define CTRPP_XML_ERROR_H

#include <libxml/xmlerror.h>

/* libxml2 2.12 made the error handlers take a const error. */
#if LIBXML_VERSION >= 21200
typedef const xmlError *xml_error_t;
#else
typedef xmlErrorPtr xml_error_t;
#endif

/* Owned by the caller; NULL when out of memory. */
char *pm_tidy_message(const char *msg);
void pm_elide_values(char *msg);
/* Structured error handlers; userdata is the struct parser. */
void pm_on_xml_error(void *userdata, xml_error_t e);
void pm_ignore_xml_error(void *userdata, xml_error_t e);

#endif

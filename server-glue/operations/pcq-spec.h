/* SPDX-License-Identifier: MIT */
/*
 * pcq-spec.h: the numbers of MS-PCQ the operations and their callers
 * share: the sizes of the fixed structures, the request codes and locale of
 * QueryCounterSetRegistrationInfo, and the Win32 codes perflib.h lacks.
 * Only constants: no file of the folder is below it.
 */
#ifndef PERFLIBD_PCQ_SPEC_H
#define PERFLIBD_PCQ_SPEC_H

/* Sizes of the fixed MS-PCQ structures (section 2.2.4). */
#define PCQ_COUNTERSET_REG_INFO_SIZE    32u
#define PCQ_COUNTER_REG_INFO_SIZE       48u
#define PCQ_COUNTER_IDENTIFIER_SIZE     40u
#define PCQ_DATA_HEADER_SIZE            48u
#define PCQ_COUNTER_HEADER_SIZE         16u

/* Win32 codes the core returns that perflib.h does not define. */
#ifndef ERROR_RESOURCE_LANG_NOT_FOUND
#define ERROR_RESOURCE_LANG_NOT_FOUND   1815UL
#endif
#ifndef ERROR_WMI_INVALID_REGINFO
#define ERROR_WMI_INVALID_REGINFO       4211UL  /* 0x1073 */
#endif

/* The locale the namespace's strings are in (en-US), besides 0 (the default). */
#define PCQ_LCID_ENGLISH 0x0409u

/* Request codes of QueryCounterSetRegistrationInfo (section 3.1.4.1.2). */
enum pcq_request_code {
        PCQ_REQ_COUNTERSET_INFO = 1,
        PCQ_REQ_COUNTER_INFO = 2,
        PCQ_REQ_COUNTERSET_NAME = 3,
        PCQ_REQ_COUNTERSET_HELP = 4,
        PCQ_REQ_COUNTER_NAMES = 5,
        PCQ_REQ_COUNTER_HELP = 6,
        PCQ_REQ_PROVIDER_NAME = 7,
        PCQ_REQ_PROVIDER_GUID = 8,
        PCQ_REQ_COUNTERSET_ENGLISH_NAME = 9,
        PCQ_REQ_COUNTER_ENGLISH_NAMES = 10,
};

#endif /* PERFLIBD_PCQ_SPEC_H */

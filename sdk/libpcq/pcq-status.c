/* SPDX-License-Identifier: MIT */
/*
 * pcq_status_text: English text for the codes libpcq returns.  The texts
 * follow what Windows' FormatMessage says for the same code (people search
 * for those), shortened where Windows' wording is about Windows itself.
 */
#include <stdio.h>

#include "pcq.h"

/* Values perflib-wintypes.h and pcq.h do not define; winerror.h's. */
#define ERROR_MORE_DATA                 234u
#define ERROR_RESOURCE_LANG_NOT_FOUND   1815u
#define ERROR_WMI_INVALID_REGINFO       4211u
#define RPC_S_INVALID_BOUND             1734u
#define RPC_X_BAD_STUB_DATA             1783u
/* DCE/RPC fault statuses (C706 appendix E), as pv2_client_last_fault gives them. */
#define NCA_S_FAULT_INVALID_BOUND       0x1C000007u
#define NCA_S_FAULT_CONTEXT_MISMATCH    0x1C00001Au
#define NCA_S_FAULT_REMOTE_NO_MEMORY    0x1C00001Bu
#define NCA_S_OP_RNG_ERROR              0x1C010002u
#define NCA_S_UNK_IF                    0x1C010003u
#define NCA_S_PROTO_ERROR               0x1C01000Bu

struct status_row {
        uint32_t code;
        const char *text;
};

/*
 * 0 is both ERROR_SUCCESS and PDH_CSTATUS_VALID_DATA; the Win32 text is
 * the one kept, it reads right for both.
 */
static const struct status_row status_rows[] = {
        { ERROR_SUCCESS, "The operation completed successfully." },
        { PDH_CSTATUS_NEW_DATA, "The returned data is valid and different from the last sample." },
        { ERROR_PATH_NOT_FOUND, "The system cannot find the path specified." },
        { ERROR_ACCESS_DENIED, "Access is denied." },
        { ERROR_INVALID_HANDLE, "The handle is invalid." },
        { ERROR_NOT_ENOUGH_MEMORY, "Not enough memory resources are available to process this command." },
        { ERROR_INVALID_DATA, "The data is invalid." },
        { ERROR_OUTOFMEMORY, "Not enough memory resources are available to complete this operation." },
        { ERROR_GEN_FAILURE, "A device attached to the system is not functioning." },
        { ERROR_NOT_SUPPORTED, "The request is not supported." },
        { ERROR_INVALID_PARAMETER, "The parameter is incorrect." },
        { ERROR_INSUFFICIENT_BUFFER, "The data area passed to a system call is too small." },
        { ERROR_ALREADY_EXISTS, "Cannot create a file when that file already exists." },
        { ERROR_NO_DATA, "The pipe is being closed." },
        { ERROR_MORE_DATA, "More data is available." },
        { ERROR_NOT_FOUND, "Element not found." },
        { ERROR_CANCELLED, "The operation was canceled by the user." },
        { ERROR_CONNECTION_ABORTED, "The network connection was aborted." },
        { ERROR_TIMEOUT, "This operation returned because the timeout period expired." },
        { RPC_S_CALL_FAILED, "The remote procedure call failed." },
        { RPC_S_INVALID_BOUND, "The array bounds are invalid." },
        { RPC_X_BAD_STUB_DATA, "The stub received bad data." },
        { ERROR_RESOURCE_LANG_NOT_FOUND, "The specified resource language ID cannot be found." },
        { ERROR_WMI_GUID_NOT_FOUND, "The GUID passed was not recognized as valid by a WMI data provider." },
        { ERROR_WMI_INSTANCE_NOT_FOUND, "The instance name passed was not recognized as valid by a WMI data provider." },
        { ERROR_WMI_ITEMID_NOT_FOUND, "The data item ID passed was not recognized as valid by a WMI data provider." },
        { ERROR_WMI_INVALID_REGINFO, "The WMI data provider registration information is not valid." },
        { NCA_S_FAULT_INVALID_BOUND, "RPC fault: an array bound or size is out of range." },
        { NCA_S_FAULT_CONTEXT_MISMATCH, "RPC fault: the context handle is unknown or closed." },
        { NCA_S_FAULT_REMOTE_NO_MEMORY, "RPC fault: the server is out of memory." },
        { NCA_S_OP_RNG_ERROR, "RPC fault: the operation number is out of range." },
        { NCA_S_UNK_IF, "RPC fault: the interface is unknown." },
        { NCA_S_PROTO_ERROR, "RPC fault: protocol error." },
        { PDH_CSTATUS_NO_MACHINE, "Unable to connect to the specified computer, or the computer is offline." },
        { PDH_CSTATUS_NO_INSTANCE, "The specified instance is not present." },
        { PDH_MORE_DATA, "There is more data to return than would fit in the supplied buffer." },
        { PDH_CSTATUS_ITEM_NOT_VALIDATED, "The data item has been added to the query but has not been validated nor accessed." },
        { PDH_NO_DATA, "No data to return." },
        { PDH_CALC_NEGATIVE_DENOMINATOR, "A counter with a negative denominator value was detected." },
        { PDH_CALC_NEGATIVE_TIMEBASE, "A counter with a negative timebase value was detected." },
        { PDH_CALC_NEGATIVE_VALUE, "A counter with a negative value was detected." },
        { PDH_CSTATUS_NO_OBJECT, "The specified object was not found on the computer." },
        { PDH_CSTATUS_NO_COUNTER, "The specified counter could not be found." },
        { PDH_CSTATUS_INVALID_DATA, "The returned data is not valid." },
        { PDH_MEMORY_ALLOCATION_FAILURE, "A PDH function could not allocate enough temporary memory to complete the operation." },
        { PDH_INVALID_HANDLE, "The handle is not a valid PDH object." },
        { PDH_INVALID_ARGUMENT, "A required argument is missing or incorrect." },
        { PDH_CSTATUS_NO_COUNTERNAME, "An empty counter name path string was passed in." },
        { PDH_CSTATUS_BAD_COUNTERNAME, "The counter name path string could not be parsed or interpreted." },
        { PDH_INSUFFICIENT_BUFFER, "The buffer passed by the caller is not large enough." },
        { PDH_CANNOT_CONNECT_MACHINE, "Unable to connect to the specified computer." },
        { PDH_INVALID_PATH, "The specified counter path could not be interpreted." },
        { PDH_INVALID_INSTANCE, "The instance name could not be read from the specified counter path." },
        { PDH_INVALID_DATA, "The data is not valid." },
};

const char *pcq_status_text(uint32_t status)
{
        /* Per thread, so that two threads naming two unknown codes do not race. */
        static _Thread_local char unknown[32];

        for (size_t i = 0; i < sizeof(status_rows) / sizeof(status_rows[0]); i++)
                if (status_rows[i].code == status)
                        return status_rows[i].text;
        snprintf(unknown, sizeof(unknown), "Unknown error 0x%08X", (unsigned)status);
        return unknown;
}

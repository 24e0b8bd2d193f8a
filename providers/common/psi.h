/* SPDX-License-Identifier: MIT */
/*
 * psi.h: the kernel's pressure stall information, the format of
 * /proc/pressure/{cpu,memory,io,irq} and of a cgroup's
 * {cpu,memory,io,irq}.pressure (Documentation/accounting/psi.rst):
 *
 *      some avg10=0.12 avg60=0.05 avg300=0.01 total=123456
 *      full avg10=0.00 avg60=0.00 avg300=0.00 total=0
 *
 * Internal to providers/.
 */
#ifndef PV_PSI_H
#define PV_PSI_H

#include <stdint.h>

/* One line: the averages in hundredths of a percent (1.42 % is 142), total in us. */
struct pv_psi_line {
        uint64_t avg10, avg60, avg300;
        uint64_t total;
};

enum {
        PV_PSI_SOME = 1 << 0,   /* the "some" line was there and whole */
        /* the "full" line (not for CPU before Linux 5.13; irq has only it) */
        PV_PSI_FULL = 1 << 1,
};

struct pv_psi {
        struct pv_psi_line some, full;
        unsigned have;          /* PV_PSI_* */
};

/*
 * Parses the text of a pressure file.  A line that is not whole (a field
 * missing or not a number) is left out, and its bit not set; a text with
 * neither line is -EINVAL.  Unknown lines and fields are skipped.
 */
int pv_psi_parse(const char *text, struct pv_psi *ret);

#endif /* PV_PSI_H */

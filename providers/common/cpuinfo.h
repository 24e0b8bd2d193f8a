/* SPDX-License-Identifier: MIT */
/*
 * cpuinfo.h: where each CPU sits and how fast it runs, from sysfs
 * (devices/system/node, devices/system/cpu/cpuN/cpufreq) and
 * /proc/cpuinfo, for the Processor Information provider.  Internal to
 * providers/; the conventions of procfs.h (a root to read under, 0 or
 * -errno, ret_ written only on success).
 */
#ifndef PV_CPUINFO_H
#define PV_CPUINFO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * Calls fn(cpu, userdata) for each CPU of a sysfs CPU list ("0-3,8,10-11"),
 * in order; stops at the first fn that returns non-zero.  -EBADMSG when the
 * text is not a list.
 */
int pv_cpulist_parse(const char *text, int (*fn)(unsigned cpu, void *userdata),
                     void *userdata);

/*
 * The NUMA node of each CPU cpu_id[0..n), from sysfsroot/devices/system/
 * node/nodeN/cpulist: node[k] for cpu_id[k].  A CPU that no node lists (no
 * NUMA in the kernel: no node directory at all) is in node 0.
 */
int pv_cpu_nodes(const char *sysfsroot, const unsigned *cpu_id, size_t n, unsigned *node);

/*
 * CPU cpu's frequency from cpufreq, in kHz: scaling_cur_freq (else
 * cpuinfo_cur_freq) and cpuinfo_max_freq.  -ENOENT without cpufreq (most
 * virtual machines); *ret_max_khz is 0 when only the maximum is missing.
 */
int pv_cpufreq_read(const char *sysfsroot, unsigned cpu, uint64_t *ret_cur_khz,
                    uint64_t *ret_max_khz);

/*
 * /proc/cpuinfo's "cpu MHz" of each CPU cpu_id[0..n) into mhz[k] (rounded;
 * 0 for a CPU it does not list).  -ENOENT when no CPU has the line (not
 * x86: others print no frequency there).
 */
int pv_cpuinfo_mhz(FILE *f, const unsigned *cpu_id, size_t n, uint64_t *mhz);

#endif /* PV_CPUINFO_H */

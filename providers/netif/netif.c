/* SPDX-License-Identifier: MIT */
/*
 * Network Interface: one instance per interface of /proc/net/dev, loopback
 * included, named by its interface name; the instance id is its ifindex.
 * Current Bandwidth is the link speed sysfs knows, 0 when it knows none.
 */
#include <errno.h>
#include <stdio.h>

#include "instances.h"
#include "plugin.h"
#include "procfs.h"
#include "netif.h"

#define N_VALUES        (PV_NETWORK_INTERFACE_PACKETS_OUTBOUND_DISCARDED + 1)

static struct pv_instset interfaces;

static uint64_t bandwidth(const char *name)
{
        char rel[96];
        int64_t mbits;

        snprintf(rel, sizeof(rel), "%s/speed", name);
        /* Loopback and virtual interfaces fail with EINVAL, or say -1. */
        if (pv_read_s64("/sys/class/net", rel, &mbits) < 0 || mbits <= 0)
                return 0;
        return (uint64_t) mbits * 1000000u;
}

static uint32_t ifindex(const char *name)
{
        char rel[96];
        int64_t index;

        snprintf(rel, sizeof(rel), "%s/ifindex", name);
        return pv_read_s64("/sys/class/net", rel, &index) == 0 ? (uint32_t) index : 0;
}

static void netif_values(const struct pv_netdev *n, uint64_t *v)
{
        v[PV_NETWORK_INTERFACE_BYTES_TOTAL] = n->rx_bytes + n->tx_bytes;
        v[PV_NETWORK_INTERFACE_PACKETS] = n->rx_packets + n->tx_packets;
        v[PV_NETWORK_INTERFACE_PACKETS_RECEIVED] = n->rx_packets;
        v[PV_NETWORK_INTERFACE_PACKETS_SENT] = n->tx_packets;
        v[PV_NETWORK_INTERFACE_CURRENT_BANDWIDTH] = bandwidth(n->name);
        v[PV_NETWORK_INTERFACE_BYTES_RECEIVED] = n->rx_bytes;
        v[PV_NETWORK_INTERFACE_PACKETS_RECEIVED_ERRORS] = n->rx_errs;
        v[PV_NETWORK_INTERFACE_PACKETS_RECEIVED_DISCARDED] = n->rx_drop;
        v[PV_NETWORK_INTERFACE_BYTES_SENT] = n->tx_bytes;
        v[PV_NETWORK_INTERFACE_PACKETS_OUTBOUND_ERRORS] = n->tx_errs;
        v[PV_NETWORK_INTERFACE_PACKETS_OUTBOUND_DISCARDED] = n->tx_drop;
}

static int collect(void)
{
        uint64_t v[N_VALUES] = { 0 };
        PPERF_COUNTERSET_INSTANCE inst;
        struct pv_netdev n;
        FILE *f = pv_fopen("/proc", "net/dev");
        int r;

        if (!f)
                return -errno;
        while ((r = pv_netdev_next(f, &n)) > 0) {
                if ((r = pv_instset_get(&interfaces, n.name, ifindex(n.name), &inst)) < 0)
                        break;
                netif_values(&n, v);
                pv_set_values(PV_NETWORK_INTERFACE_PROVIDER, inst,
                              &PV_NETWORK_INTERFACEInfo.CounterSet, v, N_VALUES);
        }
        fclose(f);
        if (r < 0)
                return r;
        pv_instset_sweep(&interfaces);
        return 0;
}

static ULONG start(PERFLIBREQUEST callback)
{
        ULONG status = CounterInitialize(callback, NULL, NULL, NULL);

        if (status == ERROR_SUCCESS)
                pv_instset_init(&interfaces, PV_NETWORK_INTERFACE_PROVIDER,
                                &PV_NETWORK_INTERFACEGuid);
        return status;
}

static void stop(void)
{
        pv_instset_done(&interfaces);
        CounterCleanup();
}

const struct pv_provider pv_provider = {
        .name = "netif", .start = start, .collect = collect, .stop = stop,
};

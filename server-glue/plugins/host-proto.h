/* SPDX-License-Identifier: MIT */
/*
 * host-proto.h: how perflibd's plugin supervisor (plugins.c) and a plugin
 * host process (perflib-plugin-host, plugin-host.c) talk.  perflibd never
 * runs plugin code: for each plugin it starts one host, which loads the
 * plugin, starts it and publishes through the SDK like any provider process.
 *
 * The supervisor starts the host as
 *
 *      perflib-plugin-host --file=NAME.so --parent=PID [--user=USER]
 *                          [--memory-max=BYTES]
 *
 * with these descriptors and nothing else open but 0, 1 and 2:
 *      PLUGIN_HOST_IMAGE_FD    the plugin's private copy (a sealed memfd,
 *                              plugin-image.h), which the host maps
 *      PLUGIN_HOST_STATUS_FD   one end of a SOCK_SEQPACKET socketpair: the
 *                              host's messages to the supervisor
 * and $PERFLIB_RUNTIME_DIR set to the server's runtime directory.
 *
 * Messages (host to supervisor), one datagram each, at most
 * PLUGIN_HOST_MSG_MAX bytes of text, not NUL-terminated.  The supervisor
 * treats every one as untrusted input (plugin code runs in the host, and
 * may write to the socket too): unknown or malformed ones are ignored,
 * and none of them makes it hold more than a bounded amount of memory.
 *
 *      "NAME <name>"             the descriptor's name (the file's without
 *                                .so when it has none), once it passed the
 *                                checks, before start is called, so that
 *                                what the plugin logs from start is tagged
 *      "LOG <priority> <text>"   the plugin's services->log; priority as
 *                                syslog(3), clamped by both sides
 *      "PUB P <GUID>"            after start returned 0: a provider GUID the
 *      "PUB C <GUID>"            plugin published, or a counterset GUID; in
 *                                the form pub_guid_text writes
 *      "READY <name>"            start returned 0; name is the descriptor's
 *                                (the file's without .so when it has none)
 *      "REFUSED <reason>"        the plugin was not started, for a reason its
 *                                file must change to mend (cannot be loaded,
 *                                no entry point, ABI or size, no start or
 *                                stop); the host then exits with
 *                                PLUGIN_HOST_EXIT_REFUSED
 *      "FAILED <win32>"          start returned that Win32 error; the host
 *                                exits with PLUGIN_HOST_EXIT_FAILED
 *      "FATAL <signo> <cause>"   from the host's handler of a fatal signal,
 *                                just before the signal ends it; cause is
 *                                "memory" when its data was near its memory
 *                                limit (an eighth of it, 16 MiB at least: the
 *                                signal most likely followed an allocation
 *                                that failed), else "-"
 *      "STOPPED"                 stop returned after SIGTERM; exit 0 follows
 *
 * The supervisor sends nothing: SIGTERM asks the host to call stop and exit
 * (SIGKILL follows after a grace period).  The host kills itself when the
 * supervisor dies (PR_SET_PDEATHSIG, after checking getppid() is --parent).
 */
#ifndef PERFLIBD_HOST_PROTO_H
#define PERFLIBD_HOST_PROTO_H

#define PLUGIN_HOST_IMAGE_FD            3
#define PLUGIN_HOST_STATUS_FD           4

/* One message; a longer one is cut by the socket, not split. */
#define PLUGIN_HOST_MSG_MAX             2048

#define PLUGIN_HOST_EXIT_REFUSED        78      /* EX_CONFIG: the file must change */
#define PLUGIN_HOST_EXIT_FAILED         75      /* EX_TEMPFAIL: start failed */
#define PLUGIN_HOST_EXIT_USAGE          64      /* EX_USAGE: the supervisor's bug */

/* The program's name, installed in $(pkglibexecdir). */
#define PLUGIN_HOST_PROGRAM             "perflib-plugin-host"

#endif /* PERFLIBD_HOST_PROTO_H */

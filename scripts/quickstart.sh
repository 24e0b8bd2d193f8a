#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/quickstart.sh: the first command to run on a fresh checkout.
#
# Builds the tree (scripts/setup.sh, which installs what is missing), then,
# with every piece of state under BUILD_DIR/quickstart (no root, nothing
# outside the build directory):
#   1. gathers the Linux provider plugins and the sample plugin into a
#      plugin directory;
#   2. starts perflibd in the foreground of this script (its log on stderr),
#      and a provider process beside it (samples/usermode: the spec's
#      example manifest);
#   3. shows a few samples of three counters through typeperf, then one
#      scrape of perflib-exporter (a few lines of /metrics) on loopback;
#   4. stops them cleanly (SIGTERM, then waits) and checks they exited 0;
#   5. prints what to try next, starting with the build tree's environment
#      (BUILD_DIR/perflib-env.sh, see README.md).
#
# BUILD_DIR (default ./build) and setup's arguments work as for setup.sh;
# SAMPLES (default 5) is how many samples typeperf shows.
set -euo pipefail

srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-build}
case $build_dir in
/*) ;;
*) build_dir=$srcdir/$build_dir ;;
esac
samples=${SAMPLES:-5}

log() { printf 'quickstart: %s\n' "$*"; }
die() { printf 'quickstart: error: %s\n' "$*" >&2; exit 1; }

BUILD_DIR=$build_dir "$srcdir/scripts/setup.sh" "$@"

perflibd_bin=$build_dir/server-glue/perflibd
typeperf_bin=$build_dir/tools/typeperf
provider_bin=$build_dir/samples/usermode/usermode-provider
exporter_bin=$build_dir/exporter/perflib-exporter
for b in "$perflibd_bin" "$typeperf_bin" "$provider_bin" "$exporter_bin"; do
        [ -x "$b" ] || die "$b was not built"
done

state=$build_dir/quickstart
rm -rf "$state"
mkdir -p "$state/run" "$state/registry" "$state/plugins"
export PERFLIB_RUNTIME_DIR=$state/run
export PERFLIB_REGISTRY_DIR=$state/registry
export PERFLIB_PLUGIN_DIR=$state/plugins
# Each plugin runs in a host process; the build's, not an installed one.
export PERFLIB_PLUGIN_HOST=$build_dir/server-glue/plugins/perflib-plugin-host
export PERFLIB_PLUGIN_CONFIG=$srcdir/server-glue/plugins.conf

# The plugins as libtool built them; perflibd loads NAME.so files and
# follows symbolic links.
for so in "$build_dir"/providers/*/.libs/*.so "$build_dir"/samples/plugin/.libs/*.so; do
        [ -e "$so" ] || die "no plugin at $so: was the build complete?"
        ln -s "$so" "$state/plugins/$(basename "$so")"
done

perflibd_pid=
provider_pid=
exporter_pid=
stop_all() {
        local pid
        for pid in "$exporter_pid" "$provider_pid" "$perflibd_pid"; do
                if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
                        kill -TERM "$pid" 2>/dev/null || true
                        wait "$pid" 2>/dev/null || true
                fi
        done
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "starting perflibd (state in $state)"
"$perflibd_bin" &
perflibd_pid=$!
for _ in $(seq 100); do
        [ -S "$PERFLIB_RUNTIME_DIR/perflibd.sock" ] && break
        kill -0 "$perflibd_pid" 2>/dev/null || die "perflibd exited early (see its messages above)"
        sleep 0.05
done
[ -S "$PERFLIB_RUNTIME_DIR/perflibd.sock" ] || die "perflibd did not open its socket"

log "starting the sample provider process (the spec's example manifest)"
"$provider_bin" --interval 250 / &
provider_pid=$!

counters=(
        '\Processor(_Total)\% Processor Time'
        '\Memory\Available Bytes'
        '\Sample Plugin Workers(worker-1)\Requests/sec'
        '\My System Objects\Thread Count'
)
# The provider announces itself within a few hundred ms; wait for its
# counterset rather than guess.
for _ in $(seq 50); do
        "$typeperf_bin" -q 'My System Objects' 2>/dev/null | grep -q 'Thread Count' && break
        kill -0 "$provider_pid" 2>/dev/null || die "the sample provider exited early"
        sleep 0.1
done

"$typeperf_bin" -q 'My System Objects' 2>/dev/null | grep -q 'Thread Count' ||
        die "the sample provider's counters did not appear"

log "typeperf $(printf '"%s" ' "${counters[@]}")-sc $samples"
"$typeperf_bin" "${counters[@]}" -sc "$samples"

# perflib-exporter on the first free loopback port from its default, 9478.
port=9478
while (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; do
        port=$((port + 1))
done
"$exporter_bin" --web.listen-address="127.0.0.1:$port" --log.level=warn &
exporter_pid=$!
log "perflib-exporter: curl http://127.0.0.1:$port/metrics (a few of its lines)"
for _ in $(seq 50); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        kill -0 "$exporter_pid" 2>/dev/null || die "perflib-exporter exited early"
        sleep 0.1
done
curl -sS -m 10 "http://127.0.0.1:$port/metrics" >"$state/metrics" ||
        die "perflib-exporter did not answer"
grep -E '^perflib_(processor_percent_processor_time|memory_available_bytes|exporter_up)' \
        "$state/metrics" | head -n 6

log "stopping perflib-exporter, the sample provider and perflibd (SIGTERM)"
for var in exporter_pid provider_pid perflibd_pid; do
        pid=${!var}
        kill -TERM "$pid"
        status=0
        wait "$pid" || status=$?
        printf -v "$var" '%s' ''
        [ "$status" -eq 0 ] || die "pid $pid exited with status $status"
done

# The build tree's own environment, named as it is typed from the top of
# the clone.
env_script=$build_dir/perflib-env.sh
case $env_script in
"$srcdir"/*) env_script=${env_script#"$srcdir"/} ;;
esac

cat <<EOF
quickstart: done.

Next steps, with the build tree as an installation of its own (README.md):
$(printf '  %-30s  # %s' ". $env_script" "its programs, pkg-config, man pages, state")
  perflibd &                      # serve the Linux providers built there
  typeperf -q                     # list every counter
  typeperf '\\Process(*)\\% Processor Time' -sc 3
  perflib-exporter &              # every counter at http://localhost:9478/metrics
  man typeperf
Then write a provider of your own: README.md, "Writing a provider".
Every test: scripts/test.sh
EOF

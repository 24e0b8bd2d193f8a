#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/quickstart.sh: the first command to run on a fresh checkout.
#
# Builds the tree (scripts/setup.sh), starts the sample provider in the
# background with a runtime directory of its own (BUILD_DIR/run, so no root
# and no system directory is involved), watches it with perflib-top for five
# one-second samples, then stops the provider with SIGTERM and waits for it.
#
# BUILD_DIR (default ./build) and setup's arguments work as for setup.sh.
set -euo pipefail

srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-build}
case $build_dir in
/*) ;;
*) build_dir=$srcdir/$build_dir ;;
esac

log() { printf 'quickstart: %s\n' "$*"; }
die() { printf 'quickstart: error: %s\n' "$*" >&2; exit 1; }

BUILD_DIR=$build_dir "$srcdir/scripts/setup.sh" "$@"

provider_bin=$build_dir/samples/sample-provider
top_bin=$build_dir/tools/perflib-top
[ -x "$provider_bin" ] || die "$provider_bin was not built"
[ -x "$top_bin" ] || die "$top_bin was not built"

export PERFLIB_RUNTIME_DIR=$build_dir/run
mkdir -p "$PERFLIB_RUNTIME_DIR"

provider_pid=
stop_provider() {
        if [ -n "$provider_pid" ] && kill -0 "$provider_pid" 2>/dev/null; then
                kill -TERM "$provider_pid" 2>/dev/null || true
                wait "$provider_pid" 2>/dev/null || true
        fi
}
trap stop_provider EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

log "starting the sample provider (PERFLIB_RUNTIME_DIR=$PERFLIB_RUNTIME_DIR)"
"$provider_bin" --interval 250 &
provider_pid=$!

# Wait until its collect service socket exists (at most ~5 s).
for _ in $(seq 50); do
        if compgen -G "$PERFLIB_RUNTIME_DIR/provider-$provider_pid-*.sock" >/dev/null; then
                break
        fi
        kill -0 "$provider_pid" 2>/dev/null || die "the sample provider exited early"
        sleep 0.1
done

log "watching it: perflib-top -n 5 -i 1000"
"$top_bin" -n 5 -i 1000

log "stopping the sample provider (SIGTERM)"
kill -TERM "$provider_pid"
status=0
wait "$provider_pid" || status=$?
provider_pid=
[ "$status" -eq 0 ] || die "the sample provider exited with status $status"

cat <<EOF
quickstart: done.

Next steps:
  - run the sample provider yourself:   PERFLIB_RUNTIME_DIR=$PERFLIB_RUNTIME_DIR $provider_bin
  - watch it from another terminal:      PERFLIB_RUNTIME_DIR=$PERFLIB_RUNTIME_DIR $top_bin
  - read its source:                     samples/sample-provider.c
  - run every test:                      scripts/test.sh
EOF

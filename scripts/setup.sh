#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# scripts/setup.sh [--build-dir DIR] [CONFIGURE_ARG]...
#
# Gets a fresh Debian machine from a checkout to a built tree, and does no
# more than is needed when run again:
#   1. installs the Debian packages the build and the tests need, when any is
#      missing (apt-get update once, then apt-get install; sudo when not root);
#   2. runs autoreconf -fi when configure is missing or out of date;
#   3. configures out of tree (VPATH) into the build directory, again only
#      when it is not configured yet or the configure arguments changed;
#   4. runs make -j$(nproc).
#
# The build directory is --build-dir DIR, else $BUILD_DIR, else ./build; a
# relative path is taken from the top of the source tree.  Every other
# argument is passed to configure.  PERFLIB_SKIP_DEPS=1 skips step 1.
set -euo pipefail

srcdir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${BUILD_DIR:-build}
configure_args=()

# What the build and `make check` need.
required_pkgs=(build-essential autoconf automake libtool pkg-config libltdl-dev
               libxml2-dev libsystemd-dev libcmocka-dev nettle-dev clang
               libkrb5-dev krb5-kdc krb5-admin-server krb5-user
               python3-impacket tshark procps iproute2 sysstat python3-samba samba winbind libwbclient-dev
               libmicrohttpd-dev libyaml-dev libcrypt-dev zlib1g-dev
               prometheus python3-prometheus-client curl openssl numactl lm-sensors)
# Nice to have: the PCP MMV comparison in bench/, clang's libFuzzer runtime,
# and systemd-socket-activate for the socket activation test.
optional_pkgs=(libpcp-mmv1-dev libpcp3-dev libclang-rt-dev systemd prometheus-node-exporter)

log() { printf 'setup: %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

while [ $# -gt 0 ]; do
        case $1 in
        --build-dir) [ $# -ge 2 ] || die "--build-dir needs a directory"
                     build_dir=$2; shift 2 ;;
        --build-dir=*) build_dir=${1#--build-dir=}; shift ;;
        -h|--help) sed -n '3,19s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) configure_args+=("$1"); shift ;;
        esac
done
case $build_dir in
/*) ;;
*) build_dir=$srcdir/$build_dir ;;
esac

# ---- 1. Debian packages ----

pkg_installed() {
        dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# Runs a command as root: directly when we are root, else through sudo.
as_root() {
        if [ "$(id -u)" -eq 0 ]; then
                "$@"
        elif command -v sudo >/dev/null 2>&1; then
                sudo "$@"
        else
                die "need root or sudo to run: $*"
        fi
}

apt_updated=no
apt_update_once() {
        if [ $apt_updated = no ]; then
                log "apt-get update"
                as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
                apt_updated=yes
        fi
}

apt_install() {
        as_root env DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -q --no-install-recommends "$@"
}

install_deps() {
        local missing=() optional_missing=() p

        if ! command -v dpkg-query >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
                log "not a Debian system: not installing packages; needed: ${required_pkgs[*]}"
                return 0
        fi
        for p in "${required_pkgs[@]}"; do
                pkg_installed "$p" || missing+=("$p")
        done
        for p in "${optional_pkgs[@]}"; do
                pkg_installed "$p" || optional_missing+=("$p")
        done
        if [ ${#missing[@]} -gt 0 ]; then
                apt_update_once
                log "installing ${missing[*]}"
                apt_install "${missing[@]}"
        fi
        # One at a time, so that one unavailable package does not hold up the rest.
        for p in ${optional_missing[@]+"${optional_missing[@]}"}; do
                apt_update_once
                if apt_install "$p" >/dev/null 2>&1; then
                        log "installed optional $p"
                else
                        log "optional package $p is unavailable; continuing without it"
                fi
        done
}

# ---- 2. autotools ----

# True when configure or some Makefile.in is missing or older than its source.
needs_autoreconf() {
        local am in

        [ -x "$srcdir/configure" ] || return 0
        [ "$srcdir/configure.ac" -nt "$srcdir/configure" ] && return 0
        while IFS= read -r am; do
                in=${am%.am}.in
                if [ ! -e "$in" ] || [ "$am" -nt "$in" ]; then
                        return 0
                fi
        done < <(find "$srcdir" -path "$srcdir/build*" -prune -o \
                        -path "$srcdir/.git" -prune -o -name Makefile.am -print)
        return 1
}

# ---- 3. configure ----

configure_tree() {
        local stamp=$build_dir/.setup-configure-args want

        if [ -e "$srcdir/config.status" ] && [ "$srcdir" != "$build_dir" ]; then
                die "$srcdir is configured in-tree; run 'make distclean' there first (builds go to $build_dir)"
        fi
        want=$(printf '%s\n' ${configure_args[@]+"${configure_args[@]}"})
        mkdir -p "$build_dir"
        if [ -e "$build_dir/Makefile" ] && [ -e "$build_dir/config.status" ] &&
           [ -e "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
                log "$build_dir is configured already"
                return 0
        fi
        log "configuring in $build_dir${configure_args[*]+ (${configure_args[*]})}"
        (cd "$build_dir" && "$srcdir/configure" ${configure_args[@]+"${configure_args[@]}"})
        printf '%s' "$want" >"$stamp"
}

# ---- main ----

if [ "${PERFLIB_SKIP_DEPS:-0}" != 1 ]; then
        install_deps
fi
if needs_autoreconf; then
        log "autoreconf -fi"
        (cd "$srcdir" && autoreconf -fi)
fi
configure_tree
jobs=$(nproc 2>/dev/null || echo 2)
log "make -j$jobs in $build_dir"
make -C "$build_dir" -j"$jobs"
log "done: $build_dir"

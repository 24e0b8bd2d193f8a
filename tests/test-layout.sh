#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The map on paper is the map in the tree (check-layout.py): each folder
# includes only from the folders below it, no two files of a folder call
# each other round a loop, and every folder has its README.
set -uo pipefail

: "${top_srcdir:?}" "${top_builddir:?}"
if ! command -v python3 >/dev/null || ! command -v nm >/dev/null; then
        echo "SKIP: test-layout needs python3 and nm"
        exit 77
fi

check="$top_srcdir/tests/check-layout.py"
status=0
for what in includes readmes; do
        python3 "$check" "$what" "$top_srcdir" || status=1
done
python3 "$check" calls "$top_srcdir" "$top_builddir" || status=1
[ "$status" -eq 0 ] && echo "layout: includes, calls and READMEs match the map"
exit "$status"

#!/bin/sh
# SPDX-License-Identifier: MIT
# memhw-check.py interop: see there.
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 is missing"; exit 77; }
exec python3 "$(dirname "$0")/memhw-check.py" interop

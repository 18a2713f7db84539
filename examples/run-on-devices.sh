#!/bin/sh
# CTest's runner of the examples: run-on-devices.sh GPUPORT_INFO BACKEND EXAMPLE [ARG...] runs
# EXAMPLE --device SPEC ARG... on every device of BACKEND that gpuport-info lists; fails when
# one run fails, and exits 77 (skipped) when the backend has no device here.
set -u
info=$1 backend=$2
shift 2
specs=$("$info" -l | awk -v b="$backend:" 'index($1, b) == 1 { print $1 }')
if [ -z "$specs" ]; then
    echo "no $backend device here; skipping"
    exit 77
fi
status=0
for spec in $specs; do
    "$@" --device "$spec" || status=1
done
exit $status

#!/bin/sh
# Runs every fuzz target of a GPUPORT_FUZZ build for SECONDS each (default 60), two at a time,
# from its corpus (tests/fuzz/corpus/NAME, read only; what it finds goes to a scratch folder).
# A crash or broken promise leaves the input in ./crash-* and fails the run.
#   tests/fuzz/run.sh BUILD_DIR [SECONDS]
set -eu
build=$1
seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gpuport-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
run_one() {
    mkdir -p "$work/$1"
    if "$build/bin/fuzz_$1" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        "$work/$1" "$here/corpus/$1" >"$work/$1.log" 2>&1; then
        echo "fuzz $1: $(grep -E 'stat::number_of_executed_units' "$work/$1.log" | awk '{print $2}') runs, nothing found"
    else
        echo "fuzz $1: FAILED"; tail -40 "$work/$1.log"; return 1
    fi
}
status=0
set -- device_spec options settings cache_entry user_code kernel_source cuda_c
while [ $# -gt 0 ]; do
    run_one "$1" & a=$!
    b=""
    if [ $# -gt 1 ]; then run_one "$2" & b=$!; fi
    wait $a || status=1
    [ -z "$b" ] || wait $b || status=1
    shift; [ $# -gt 0 ] && shift
done
exit $status

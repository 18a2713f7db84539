#!/bin/sh
# Runs each exit case RUNS times on DEVICE, each run with a kernel cache of its own (so pocl
# compiles as the program ends), and fails on any run that does not end as the case should:
# status 0 and an empty stderr (1 and only the traceback for the Python exception). The cases
# run side by side, each in its own folder.
# Usage: exit.sh RUNS DEVICE PYTHON|- PY_CASES|- C_PROGRAM (- for Python under the sanitizers,
# where python3 cannot load gpuport)
set -u
runs=$1 device=$2 python=$3 cases=$4
shift 4
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
check() { # expected status, name, command...
    want=$1 what=$2 dir=$tmp/$2
    shift 2
    mkdir -p "$dir"
    i=0 bad=0
    while [ "$i" -lt "$runs" ]; do
        i=$((i + 1))
        rm -rf "$dir/cache"
        GPUPORT_CACHE_DIR="$dir/cache" GPUPORT_DEVICE="$device" "$@" > "$dir/out" 2> "$dir/err"
        rc=$?
        grep -v -e '^Traceback' -e '^  ' -e "^RuntimeError: the lesson's deliberate mistake" "$dir/err" > "$dir/rest"
        if [ "$rc" -ne "$want" ] || [ -s "$dir/rest" ]; then
            echo "exit.sh: $what, run $i of $runs: status $rc (wanted $want)" >> "$dir/log"
            cat "$dir/err" >> "$dir/log"
            bad=$((bad + 1))
        fi
    done
    echo "exit.sh: $what on $device: $runs runs, $bad not clean" >> "$dir/log"
}
for mode in kernel exit map copy; do check 0 "C-$mode" "$@" "$device" "$mode" & done
if [ "$python" != - ]; then
    for c in ufunc kernel copy; do check 0 "Python-$c" "$python" "$cases" "$c" & done
    check 1 "Python-exception" "$python" "$cases" exception &
fi
wait
cat "$tmp"/*/log
! grep -q ", [1-9][0-9]* not clean$" "$tmp"/*/log

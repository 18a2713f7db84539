#!/bin/sh
# Runs each disagreement of gpuport-test-mpi-disagree at RANKS ranks (each must end at once
# with every rank refusing), then each kill of rank 1 mid-run: the job must end within LIMIT
# seconds with the status of a process killed by that signal (mpiexec's, for the rank that died).
# Usage: disagree.sh RANKS MPIEXEC PROGRAM
set -u
ranks=$1 mpiexec=$2 program=$3 limit=60
failed=0
for mode in run reduce gather scatter skip; do
    timeout "$limit" "$mpiexec" -n "$ranks" "$program" "$mode" || { echo "disagree.sh: $mode failed"; failed=1; }
done
for pair in SIGSEGV:11 SIGKILL:9 SIGTERM:15; do
    sig=${pair%:*}
    start=$(date +%s)
    timeout "$limit" "$mpiexec" -n "$ranks" "$program" "kill-$sig" > out.$$ 2>&1
    rc=$? took=$(($(date +%s) - start))
    want=$((128 + ${pair#*:}))
    if [ "$rc" -ne "$want" ]; then
        echo "disagree.sh: kill-$sig: the job ended with status $rc after $took s, not $want (rank 1 killed by $sig)"
        cat out.$$
        failed=1
    else
        echo "disagree.sh: kill-$sig at $ranks ranks: the job ended in $took s, status $rc"
    fi
    rm -f out.$$
done
exit "$failed"

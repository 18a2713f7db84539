#!/bin/sh
# Users' own element-wise kernels against BabelStream's: examples/stream (the four kernels in the
# dialect, GP_FOR and --guarded) and a BabelStream binary of your own build (its OpenCL, CUDA or
# OpenMP model) on one device, in alternating rounds, then each kernel's best bandwidth as a ratio
# to BabelStream's in the same round. BabelStream is not part of gpuport: build it from
# github.com/UoB-HPC/BabelStream (docs/kernel-dialect.md says how it was built for our figures).
#   bench/stream-vs-babelstream.sh BUILD_DIR BABELSTREAM GPUPORT_DEVICE [BABELSTREAM_ARGS...]
# for example: bench/stream-vs-babelstream.sh build ./ocl-stream cpu --device 0
# Environment: N (elements per array, 2^24), REPS (runs of each kernel, 40), ROUNDS (4).
set -eu
build=$1 babel=$2 device=$3
shift 3
n=${N:-16777216} reps=${REPS:-40} rounds=${ROUNDS:-4}
# The four kernels' best MB/s, in the order Copy Mul Add Triad, from either program's table.
rates() { awk '$1 ~ /^(Copy|Mul|Add|Triad)$/ { printf "%s ", $2 }'; }
echo "round form Copy Mul Add Triad (bandwidth / BabelStream's in the round; BabelStream in GB/s)"
r=1
while [ "$r" -le "$rounds" ]; do
    b=$("$babel" "$@" --float -s "$n" -n "$reps" | rates)
    echo "$r BabelStream $b" | awk '{ printf "%s %-11s", $1, $2; for (i = 3; i <= 6; i++) printf " %6.1f", $i / 1000; print "" }'
    for form in GP_FOR guarded; do
        flag=""
        [ $form = guarded ] && flag=--guarded
        g=$("$build/bin/stream" --device "$device" --n "$n" --reps "$reps" $flag | rates)
        echo "$r $form $g $b" | awk '{ printf "%s %-11s", $1, $2; for (i = 3; i <= 6; i++) printf " %6.3f", $i / $(i + 4); print "" }'
    done
    r=$((r + 1))
done

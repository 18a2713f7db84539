#!/bin/sh
# Scaling tables of the distributed stencil: gpuport-bench-mpi at 1, 2 and 4 ranks, weak (a fixed
# block per rank) and strong (a fixed grid), 2D 5-point and 3D 7-point, then a Markdown table with
# parallel efficiency (weak: T1 / TP; strong: T1 / (P TP)). For weak scaling also P ranks apart
# (each its own block, all at once, no exchange), and the efficiency against them: what the
# exchange costs beyond the ranks' sharing of the machine. CSV rows go to OUT.csv too.
#   bench/mpi-scaling.sh BUILD_DIR OUT
# Environment: GPUPORT_MPI_TRANSPORT (auto: see gpuport_mpi.h), RANKS ("1 2 4"), MPIEXEC ("mpiexec"), MPI_FLAGS (placement, such as
# "--bind-to core --map-by slot:PE=4"), WEAK2 and STRONG2 (sides of the 2D block and grid:
# 2048, 4096), WEAK3 and STRONG3 (3D: 128, 256), STEPS (50), REPS (5), TYPE (f32 or f64),
# NORM_EVERY (0: the norm of the update after every K steps, as a solver checks convergence).
set -eu
build=$1 out=$2
bench=$build/bin/gpuport-bench-mpi
ranks=${RANKS:-1 2 4} mpiexec=${MPIEXEC:-mpiexec} flags=${MPI_FLAGS:-}
steps=${STEPS:-50} reps=${REPS:-5} type="" norm=${NORM_EVERY:-0}
[ "${TYPE:-f32}" = f64 ] && type="--f64"
: > "$out.csv"
first=1
for shape in 5point 7point; do
    for mode in weak strong; do
        case $shape$mode in
        5pointweak) n=${WEAK2:-2048} ;; 5pointstrong) n=${STRONG2:-4096} ;;
        7pointweak) n=${WEAK3:-128} ;; *) n=${STRONG3:-256} ;;
        esac
        for p in $ranks; do
            apart=""
            [ $mode = weak ] && [ "$p" -gt 1 ] && apart="--apart"
            for a in $apart ""; do
                header=""
                [ $first = 1 ] && header="--header"
                first=0
                # shellcheck disable=SC2086 # word lists
                $mpiexec -n "$p" $flags "$bench" --mode $mode --shape $shape --n "$n" --steps "$steps" \
                    --reps "$reps" --norm-every "$norm" $type $a $header >> "$out.csv"
            done
        done
    done
done
# The table: each row's efficiency against the one-rank row of its mode and shape.
awk -F, 'NR == 1 { next }
    { key = $1 "," $2; if ($4 == 1) base[key] = $8 }
    $1 == "apart" { apart[$2 "," $4] = $8; next }
    { rows[++n] = $0 }
    END {
        print "| mode | shape | ranks | grid | transport | ms per step | host wait for MPI | exchange alone (share) | halo bytes per rank | efficiency | ranks apart: ms per step, efficiency against them | one rank / gp_stencil_run |"
        print "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
        for (i = 1; i <= n; i++) {
            split(rows[i], f, ",")
            key = f[1] "," f[2]
            eff = f[1] == "weak" ? base[key] / f[8] : base[key] / (f[4] * f[8])
            ref = f[4] == 1 && f[14] > 0 ? sprintf("%.3f", f[14]) : ""
            sep = (f[2] "," f[4]) in apart && f[1] == "weak" ? sprintf("%.3f, %.2f", apart[f[2] "," f[4]], apart[f[2] "," f[4]] / f[8]) : ""
            printf "| %s | %s | %s (%s) | %s | %s | %.3f | %.3f | %.3f (%.0f%%) | %d | %.2f | %s | %s |\n", f[1], f[2], f[4], f[5], f[6], f[15], f[8], f[9], f[10], 100 * f[11], f[12], eff, sep, ref
        }
        split(rows[1], f, ",")
        print ""
        print "Device: " f[7] "; " f[3] "."
    }' "$out.csv" | tee "$out.md"

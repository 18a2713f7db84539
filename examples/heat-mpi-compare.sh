#!/bin/sh
# heat-mpi-compare.sh HEAT HEAT_MPI "MPIEXEC -n N" "MPI_OPTIONS" PGM OPTION...: runs heat_diffusion
# on one device with OPTIONs, and heat_diffusion_mpi over N ranks with the same and MPI_OPTIONS;
# each must pass its own check against plain C, and both must report the same step count and
# centre value.
set -u
heat=$1 heat_mpi=$2 mpiexec=$3 mpi_options=$4 pgm=$5
shift 5
one=$("$heat" "$@" --out "$pgm") || { echo "$one"; echo "heat_diffusion failed"; exit 1; }
# shellcheck disable=SC2086 # the mpiexec command and the options are word lists
many=$($mpiexec "$heat_mpi" "$@" $mpi_options --out "$pgm") || { echo "$many"; echo "heat_diffusion_mpi failed"; exit 1; }
printf '%s\n--\n%s\n' "$one" "$many"
a=$(echo "$one" | sed -n 's/.*: \([0-9]* steps\), .*\(centre u = .*\)/\1 \2/p')
b=$(echo "$many" | sed -n 's/.*: \([0-9]* steps\), .*\(centre u = .*\)/\1 \2/p')
if [ -z "$a" ] || [ "$a" != "$b" ]; then
    echo "differ: one device '$a', ranks '$b'"
    exit 1
fi
echo "same: $a"

#!/bin/sh
# Proves libgpuport exports exactly the functions gpuport.h declares, each under a version node
# of src/core/gpuport.map, and that the map lists no more and no fewer.
#   tests/symbols.sh LIBRARY SOURCE_DIR
set -eu
lib=$1
src=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuport-symbols.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
grep -o 'GP_API [^(]*\bgp_[a-z0-9_]*(' "$src/include/gpuport.h" | grep -o 'gp_[a-z0-9_]*($' | tr -d '(' | sort -u >"$tmp/header"
grep -o '^ *gp_[a-z0-9_]*;' "$src/src/core/gpuport.map" | tr -d ' ;' | sort -u >"$tmp/map"
nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }' >"$tmp/raw"
sed 's/@.*//' "$tmp/raw" | sort -u >"$tmp/exported"
status=0
for pair in "header map" "header exported"; do
    set -- $pair
    if ! diff -u "$tmp/$1" "$tmp/$2" >"$tmp/diff"; then
        echo "symbols: $1 and $2 differ:"; cat "$tmp/diff"; status=1
    fi
done
if grep -v '@@GPUPORT_[0-9]*\.[0-9]*$' "$tmp/raw" >"$tmp/unversioned"; then
    echo "symbols: exported without a version node:"; cat "$tmp/unversioned"; status=1
fi
[ -s "$tmp/header" ] || { echo "symbols: no GP_API function found in gpuport.h"; status=1; }
[ $status = 0 ] && echo "symbols: $(wc -l <"$tmp/header") functions, the header's, the map's and the library's alike"
exit $status

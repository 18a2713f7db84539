#!/bin/sh
# Proves another user cannot get their code loaded as a GPUPORT_PLUGIN_PATH plugin (run as root,
# with "nobody" as the other user, who races renameat2 exchanges while the victim loads):
#   link     the victim's folder holds a link to a plugin in a folder the other user can write,
#            where they swap that file with their own;
#   folder   the victim's own folder sits in a folder the other user can write, where they swap
#            it with a folder of theirs;
#   ancestor the same with no race: refused, naming the folder and its mode;
#   own      the victim's own folder, and a link to it, beside all this: loaded every time.
# A run fails when the other user's code ran (it leaves a mark) or when a refusal is missing.
# Also: a trace file made under umask 000 is 0600.
# Usage: plugins.sh RUNS GPUPORT_INFO PLUGIN EVIL_LIB SWAP TRACE_TEST
set -u
runs=$1 info=$2 plugin=$3 evil=$4 swap=$5 trace=$6
[ "$(id -u)" -eq 0 ] && id nobody > /dev/null 2>&1 && command -v runuser > /dev/null || {
    echo "plugins.sh: needs root and the user nobody (runuser)"; exit 77; }
base=$(mktemp -d /tmp/gpuport-security-XXXXXX) || exit 1
racer=
trap 'touch "$base/stop"; [ -n "$racer" ] && wait "$racer"; rm -rf "$base"' EXIT
chmod 0755 "$base"
mkdir -m 0777 "$base/marks"
export GPUPORT_EVIL_MARKS="$base/marks" GPUPORT_DEBUG=load
failed=0
fail() { echo "plugins.sh: $*"; failed=$((failed + 1)); }
as_other() { runuser -u nobody -- "$@"; }
name=libgpuport-opencl.so

# The other user's writable folders: one with the victim's copy of the plugin and the other's
# own code beside it, one with the victim's folder and the other's beside it.
mkdir -m 0777 "$base/open" "$base/open2" "$base/ancestor"
cp "$plugin" "$base/open/$name"
mkdir -m 0755 "$base/victim" "$base/open2/victim" "$base/ancestor/victim" "$base/own" "$base/ownlink"
ln -s "$base/open/$name" "$base/victim/$name"
cp "$plugin" "$base/open2/victim/$name"
cp "$plugin" "$base/ancestor/victim/$name"
cp "$plugin" "$base/own/$name"
ln -s "$base/own/$name" "$base/ownlink/$name"
chown nobody "$base/open"
as_other cp "$evil" "$base/open/evil.so"
as_other mkdir -m 0755 "$base/open2/theirs" && as_other cp "$evil" "$base/open2/theirs/$name"

# Each run: refused as the case says (in the words of GPUPORT_DEBUG=load), never the other's code.
race() { # case, folder, what the refusal must say, A, B (swapped by the other user meanwhile)
    what=$1 folder=$2 says=$3
    rm -f "$base/stop"
    as_other "$swap" "$4" "$5" "$base/stop" &
    racer=$!
    i=0
    while [ "$i" -lt "$runs" ]; do
        i=$((i + 1))
        GPUPORT_PLUGIN_PATH="$folder" "$info" -l > /dev/null 2> "$base/err"
        grep -q "$says" "$base/err" || { fail "$what, run $i: not refused as '$says':"; grep opencl "$base/err"; }
    done
    touch "$base/stop"
    wait "$racer" || fail "$what: the racing helper failed"
    racer=
    echo "plugins.sh: $what: $runs runs"
}
race link "$base/victim" "passed over: $base/victim/$name is refused: the folder $base/open " \
    "$base/open/$name" "$base/open/evil.so"
race folder "$base/open2/victim" "passed over: $base/open2/victim/$name is refused: the folder $base/open2 " \
    "$base/open2/victim" "$base/open2/theirs"
GPUPORT_PLUGIN_PATH="$base/ancestor/victim" "$info" -l > /dev/null 2> "$base/err"
grep -q "the folder $base/ancestor (owner uid 0 (root), mode 0777) can be written by its group and others" "$base/err" ||
    { fail "ancestor: not refused with the folder and its mode:"; grep opencl "$base/err"; }
for folder in own ownlink; do
    for i in 1 2 3; do
        GPUPORT_PLUGIN_PATH="$base/$folder" "$info" -l > /dev/null 2> "$base/err"
        grep -q "opencl: loaded $base/$folder/$name" "$base/err" || { fail "$folder: its own plugin was not loaded:"; grep opencl "$base/err"; }
    done
done
marks=$(ls "$base/marks" | wc -l)
[ "$marks" -eq 0 ] || fail "the other user's code ran in $marks runs"

(umask 000 && GPUPORT_DEBUG= "$trace" --file "$base/trace.csv" > /dev/null) || fail "the trace test failed under umask 000"
mode=$(stat -c %a "$base/trace.csv" 2> /dev/null)
[ "$mode" = 600 ] || fail "a trace made under umask 000 is mode $mode, not 600"

[ "$failed" -eq 0 ] || { echo "plugins.sh: $failed failures"; exit 1; }
echo "plugins.sh: every run refused the other user's files or loaded the victim's own"

#!/usr/bin/env bash
# The time of a clean release build, as a newcomer's first build takes it: a fresh clone of each
# commit given, `cmake --preset release`, then `cmake --build --preset release` (Ninja's default
# parallelism) with no compiler cache. Prints one line per commit: wall time, CPU time, objects.
#
#   tests/bench/build_time.sh [COMMIT...]          # default: HEAD
#   tests/bench/build_time.sh 8e278c7 HEAD         # before and after, one after the other
#
# Run it on an otherwise idle machine: another build beside it makes both slower.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
commits=("$@")
[ ${#commits[@]} -eq 0 ] && commits=(HEAD)
printf '%-12s %10s %10s %8s  %s\n' commit wall_s cpu_s objects machine
for commit in "${commits[@]}"; do
    dir="$work/$(git -C "$repo" rev-parse --short "$commit")"
    git clone -q "$repo" "$dir"
    git -C "$dir" checkout -q "$commit"
    # The shared/ folder beside the checkout, where tests look for it, is not needed to build.
    (cd "$dir" && CCACHE_DISABLE=1 cmake --preset release > "$dir.configure.log" 2>&1)
    start=$(date +%s.%N)
    # CPU seconds of the build's children (user + system), from bash's times.
    cpu=$( { cd "$dir" && CCACHE_DISABLE=1 TIMEFORMAT='%U %S' bash -c 'time cmake --build --preset release > /dev/null 2>&1'; } 2>&1 | awk '{print $1 + $2}')
    end=$(date +%s.%N)
    objects=$(find "$dir/build/release" -name '*.o' | wc -l)
    printf '%-12s %10.0f %10.0f %8d  %s cores, %s\n' "$(git -C "$repo" rev-parse --short "$commit")" \
        "$(echo "$end - $start" | bc)" "$cpu" "$objects" "$(nproc)" "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
done

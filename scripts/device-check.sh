#!/usr/bin/env bash
# The device check, made for a 15-minute lease on a machine with NVIDIA
# GPUs: two commands, each ending well inside 420 s, run from the
# repository root (by hand, or through the device tool, one `run` each):
#
#   OUT=dir scripts/device-check.sh part1 [path/to/wire-report]
#     kit      unpack the kit's Boost packages (.device-kit/debs)
#     build    nvbandwidth from .device-kit/nvbandwidth with nvcc, the kit's
#              build line (its log kept: nvbandwidth-build.log)
#     facts    nvidia-smi -q, PCIe and clocks, topology, the state before
#     ours-1   our CUDA copy sweeps at SIZES
#     nvbandwidth-<MiB>, per size: the CE tests at that size; when it
#              aborts setting CPU affinity, again with --disableAffinity
#              (and every later size with it); the comparison after each
#   OUT=dir scripts/device-check.sh part2 [path/to/wire-report]
#     reference-cuda-events (ctypes, driver only), the comparison;
#     reference-torch where PyTorch is, the comparison; ours-2 (drift);
#     the state after; the final comparison
#   scripts/device-check.sh plan
#     prints each part's step budgets and checks that each sums to at most
#     PART_LIMIT_S (the parts check it too before they start)
#
# Every step runs under `timeout`: one that hangs costs its budget, and the
# rest still runs and reports. Results are written under $OUT as they come,
# at most six files: summary.txt (a line per step, appended, both parts),
# comparison.txt and comparison.json (rewritten after every size and
# reference), nvbandwidth-build.log, part1.tgz and part2.tgz (the raw
# outputs, refreshed after every step). The work directory (WORK, default
# target/device-check-work) is kept between the parts, so part2 compares
# with part1's nvbandwidth and first sweep when the machine stayed warm.
# GPUs are matched across tools by PCI bus id, never by index.
#
# Before the lease, here: `scripts/device-check.sh part1` copies
# ../shared/device-kit to .device-kit/ (ignored through .git/info/exclude)
# when that is absent; carry `.device-kit` and the release binary.
#
# Exits 2 on bad usage or an over-budget plan; 1 when a part compared
# nothing; 0 otherwise (verdicts are in comparison.txt: a FAIL is a
# finding, not a broken check).
# Settings (environment): SIZES=256M,512M  REPEATS=5  GPUS (the GPUs made
# visible, default all)  TOLERANCE=0.02  MIN_BYTES=268435456
# NVBANDWIDTH=path (default: the one built, else on PATH)  PYTHON=python3
# SYSFS_ROOT=/ (collect's --sysfs-root)  KIT=.device-kit  NVCC_ARCH=sm_90
# Rehearsed in CI against the fake libcuda and a stand-in nvbandwidth
# (.ci/run): numbers meaningless, the flow real.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
part="${1:-}"
bin="${2:-target/release/wire-report}"
out="${OUT:-device-check}"
sizes="${SIZES:-256M,512M}"
repeats="${REPEATS:-5}"
py="${PYTHON:-python3}"
kit="${KIT:-.device-kit}"
work="${WORK:-target/device-check-work}"
# Seconds one command may take; the parts' budgets must sum to at most
# this, which leaves 40 s of the device tool's 420 s for start and copy.
PART_LIMIT_S=380
# `timeout -k` grace, counted in every step's budget.
KILL_S=2

# The budgets, seconds. part1 = kit 10 + build 100 + facts 10+5+5+5 +
# ours 80 + nvbandwidth 25 per size and one affinity retry of 25 +
# compare 10 per size; part2 = reference 90 + compare 10, torch 90 +
# compare 10, ours 80, state 5, compare 10. `plan` sums them from here.
B_KIT=10 B_BUILD=100 B_FACTS_Q=10 B_FACTS=5 B_OURS=80 B_NVB=25 B_COMPARE=10
B_REF=90 B_TORCH=90 B_STATE=5
nsizes=$(echo "$sizes" | tr ',' '\n' | grep -c .)
plan_part1=$(( B_KIT + B_BUILD + B_FACTS_Q + 3 * B_FACTS + B_OURS + (nsizes + 1) * B_NVB + nsizes * B_COMPARE ))
steps_part1=$(( 1 + 1 + 4 + 1 + (nsizes + 1) + nsizes ))
plan_part2=$(( B_REF + B_COMPARE + B_TORCH + B_COMPARE + B_OURS + B_STATE + B_COMPARE ))
steps_part2=7
worst_part1=$(( plan_part1 + steps_part1 * KILL_S ))
worst_part2=$(( plan_part2 + steps_part2 * KILL_S ))

plan_ok() {
    echo "plan: part1 at most $worst_part1 s ($steps_part1 steps, $plan_part1 s of budgets + ${KILL_S} s grace each), part2 at most $worst_part2 s ($steps_part2 steps), limit $PART_LIMIT_S s each, $nsizes sizes"
    [ "$worst_part1" -le "$PART_LIMIT_S" ] && [ "$worst_part2" -le "$PART_LIMIT_S" ]
}

case "$part" in
    plan) plan_ok; exit $(( $? == 0 ? 0 : 2 )) ;;
    part1|part2) ;;
    *) echo "usage: OUT=dir $0 part1|part2|plan [path/to/wire-report]" >&2; exit 2 ;;
esac
plan_ok >&2 || { echo "device-check: the plan exceeds $PART_LIMIT_S s; fewer SIZES" >&2; exit 2; }
[ -x "$bin" ] || { echo "device-check: no wire-report binary at $bin" >&2; exit 2; }
command -v "$py" >/dev/null || { echo "device-check: no $py" >&2; exit 2; }
mkdir -p "$out" "$work" || exit 2
out="$(cd "$out" && pwd)" work="$(cd "$work" && pwd)"
export CUDA_DEVICE_ORDER=PCI_BUS_ID
[ -n "${GPUS:-}" ] && export CUDA_VISIBLE_DEVICES="$GPUS"
summary="$out/summary.txt"
started=$(date +%s)

# note LINE: one line in summary.txt (and on stderr), as it happens.
note() {
    echo "[$part +$(( $(date +%s) - started )) s] $*" >> "$summary"
    echo "device-check: $*" >&2
}

# The part's raw outputs, refreshed after every step (a later hang keeps them).
pack() {
    tar -czf "$out/.$part.tgz.tmp" -C "$work" --exclude='./boost' --exclude='./nvbandwidth' . 2>/dev/null \
        && mv "$out/.$part.tgz.tmp" "$out/$part.tgz"
}

# step NAME SECONDS COMMAND...: stdout to NAME.out, stderr to NAME.err in
# the work directory, a line in summary.txt with the exit status and time.
step() {
    local name="$1" secs="$2" t0 rc what
    shift 2
    t0=$(date +%s)
    timeout -k "$KILL_S" "$secs" "$@" > "$work/$name.out" 2> "$work/$name.err"
    rc=$?
    what="exit $rc"
    { [ "$rc" = 124 ] || [ "$rc" = 137 ]; } && what="TIMED OUT after ${secs} s"
    note "$name: $what, $(( $(date +%s) - t0 )) s of $secs"
    pack
    return $rc
}

# compare WHEN: the comparison of everything so far, into comparison.txt
# and comparison.json (replaced whole), its first line into summary.txt.
compare() {
    step "compare-$1" "$B_COMPARE" "$py" "$here/device-compare.py" "$work" "${TOLERANCE:-0.02}" "${MIN_BYTES:-268435456}"
    local rc=$?
    if [ -s "$work/compare-$1.out" ]; then
        cp "$work/compare-$1.out" "$out/.comparison.tmp" && mv "$out/.comparison.tmp" "$out/comparison.txt"
        [ -f "$work/comparison.json" ] && cp "$work/comparison.json" "$out/comparison.json"
        note "  $(head -1 "$work/compare-$1.out")"
    fi
    return $rc
}

state=(nvidia-smi --query-gpu=index,pci.bus_id,persistence_mode,compute_mode,clocks.applications.graphics,clocks.applications.memory,mig.mode.current,memory.used --format=csv,noheader)

ours() {
    local root=()
    [ -n "${SYSFS_ROOT:-}" ] && root=(--sysfs-root "$SYSFS_ROOT")
    step "$1" "$B_OURS" "$bin" collect --quiet "${root[@]}" --sizes "$sizes" --repeats "$repeats" --out "$work/$1"
}

# The kit beside the checkout, copied in once (here, before the lease).
copy_kit() {
    [ -d "$kit" ] && return 0
    [ -d ../shared/device-kit ] || return 0
    cp -r ../shared/device-kit "$kit" && chmod -R u+w "$kit"
    local exclude
    exclude="$(git rev-parse --git-path info/exclude 2>/dev/null)" || return 0
    grep -qx "/$kit/" "$exclude" 2>/dev/null || echo "/$kit/" >> "$exclude"
}

# The kit's build line (.device-kit/README.md), into the work directory.
build_nvbandwidth() {
    local src="$kit/nvbandwidth" boost="$work/boost"
    nvcc -O3 -std=c++17 -arch="${NVCC_ARCH:-sm_90}" -DGIT_VERSION='"v0.8"' \
        -I"$src" -I"$boost/usr/include" \
        "$src"/*.cpp "$src/kernels.cu" "$src/json/jsoncpp.cpp" \
        "$boost/usr/lib/x86_64-linux-gnu/libboost_program_options.a" \
        -lcuda -lnvidia-ml -o "$work/nvbandwidth/nvbandwidth"
}

mib_of() {
    "$py" -c "import sys; s=sys.argv[1]; m={'K':1/1024,'M':1,'G':1024}; print(int(float(s[:-1])*m[s[-1]]) if s[-1] in m else int(s)//(1<<20))" "$1"
}

part1() {
    note "part1: sizes $sizes, repeats $repeats, work $work"
    rm -f "$work"/*.out "$work"/*.err
    rm -rf "$work/ours-1" "$work/ours-2"
    copy_kit
    local nvb="${NVBANDWIDTH:-}"
    if [ -z "$nvb" ] && [ -d "$kit/nvbandwidth" ]; then
        if command -v nvcc >/dev/null; then
            mkdir -p "$work/boost" "$work/nvbandwidth"
            step kit "$B_KIT" bash -c 'for f in "$1"/debs/*.deb; do dpkg -x "$f" "$2" || exit 1; done' _ "$kit" "$work/boost"
            export -f build_nvbandwidth
            step build "$B_BUILD" env kit="$kit" work="$work" bash -c build_nvbandwidth
            cat "$work/build.out" "$work/build.err" > "$out/nvbandwidth-build.log" 2>/dev/null
            [ -x "$work/nvbandwidth/nvbandwidth" ] && nvb="$work/nvbandwidth/nvbandwidth"
        else
            note "build: nvcc not on PATH; nvbandwidth not built from $kit"
        fi
    elif [ -z "$nvb" ]; then
        note "kit: no $kit (and no ../shared/device-kit to copy); nvbandwidth not built"
    fi
    [ -z "$nvb" ] && nvb="$(command -v nvbandwidth || true)"
    if command -v nvidia-smi >/dev/null; then
        step facts-q "$B_FACTS_Q" nvidia-smi -q
        step facts-pcie-clocks "$B_FACTS" nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks.sm,clocks.mem,clocks.max.sm,persistence_mode,driver_version --format=csv
        step facts-topo "$B_FACTS" nvidia-smi topo -m
        step state-before "$B_FACTS" "${state[@]}"
    else
        note "facts: nvidia-smi not on PATH (no facts, no device-state check)"
    fi
    ours ours-1
    if [ -z "$nvb" ] || [ ! -x "$nvb" ]; then
        note "nvbandwidth: none built or found (set NVBANDWIDTH=path); not compared"
        compare part1
        return
    fi
    local affinity=() retried=0 s mib
    for s in ${sizes//,/ }; do
        mib=$(mib_of "$s")
        step "nvbandwidth-$mib" "$B_NVB" "$nvb" "${affinity[@]}" -t host_to_device_memcpy_ce device_to_host_memcpy_ce device_local_copy device_to_device_memcpy_write_ce -b "$mib"
        # nvbandwidth aborts in some VMs where NVML cannot set the CPU
        # affinity (NVML_ASSERT in setOptimalCpuAffinity): once, again
        # without it, and every later size without it.
        if [ "$retried" = 0 ] && grep -q "setOptimalCpuAffinity" "$work/nvbandwidth-$mib.out" "$work/nvbandwidth-$mib.err" 2>/dev/null; then
            retried=1 affinity=(--disableAffinity)
            mv "$work/nvbandwidth-$mib.out" "$work/nvbandwidth-affinity-abort.txt"
            cat "$work/nvbandwidth-$mib.err" >> "$work/nvbandwidth-affinity-abort.txt"
            note "nvbandwidth-$mib: aborted setting the CPU affinity; again with --disableAffinity"
            step "nvbandwidth-$mib" "$B_NVB" "$nvb" "${affinity[@]}" -t host_to_device_memcpy_ce device_to_host_memcpy_ce device_local_copy device_to_device_memcpy_write_ce -b "$mib"
        fi
        compare "$mib"
    done
}

part2() {
    note "part2: sizes $sizes, repeats $repeats, work $work"
    [ -f "$work/ours-1/bundle.json" ] || note "part2: no first sweep in $work (part1 not run on this machine): compared with our second sweep alone"
    step reference-cuda-events "$B_REF" "$py" "$here/cuda-events-reference.py" "$sizes" "$repeats"
    compare reference-cuda-events
    if "$py" -c "import torch" >/dev/null 2>&1; then
        step reference-torch "$B_TORCH" "$py" "$here/torch-reference.py" "$sizes" "$repeats"
        compare reference-torch
    else
        note "reference-torch: PyTorch not installed; not compared"
    fi
    ours ours-2
    if command -v nvidia-smi >/dev/null; then
        step state-after "$B_STATE" "${state[@]}"
    fi
    compare final
}

"$part"
rc=0
grep -q "NOTHING COMPARED" "$out/comparison.txt" 2>/dev/null && rc=1
[ -f "$out/comparison.txt" ] || rc=1
note "$part: done in $(( $(date +%s) - started )) s (limit $PART_LIMIT_S s)"
[ -f "$out/comparison.txt" ] && cat "$out/comparison.txt"
exit $rc

#!/usr/bin/env bash
# The device check, one command, made for a 15-minute lease on a machine
# with NVIDIA GPUs (run by hand, or through the device tool with the
# release binary carried):
#   1. facts: nvidia-smi -q, PCIe generation and width, clocks, persistence,
#      and the device state before
#   2. our CUDA copy sweeps at SIZES (256 MiB and 512 MiB)
#   3. the references at the same sizes: nvbandwidth (-t matching tests,
#      -b each size, -j), the ctypes CUDA-events reference (driver and
#      Python only), PyTorch where present
#   4. our sweeps again, to bracket drift
#   5. the comparison: PASS or FAIL at +-TOLERANCE per copy kind and size
#      (>= MIN_BYTES) against each reference; the pageable vs pinned
#      penalty; the device state after, against before
# Writes at most three files under $OUT: summary.txt, comparison.json and
# device-check.tgz (everything else). Every step has a timeout. Exits 1
# when nothing was compared, 2 on bad usage; 0 otherwise (the verdicts are
# in summary.txt: a FAIL is a finding, not a broken check).
#
# Usage: OUT=dir scripts/device-check.sh [path/to/wire-report]
# Settings (environment): SIZES=256M,512M  REPEATS=5  GPUS=0,1 (the GPUs
# made visible; peer copies need two)  TOLERANCE=0.02  MIN_BYTES=268435456
# NVBANDWIDTH=path (default: on PATH)  PYTHON=python3
# Rehearsed in CI against the fake libcuda (.ci/run): numbers meaningless,
# the flow real.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
bin="${1:-target/release/wire-report}"
out="${OUT:-device-check}"
sizes="${SIZES:-256M,512M}"
repeats="${REPEATS:-5}"
py="${PYTHON:-python3}"
[ -x "$bin" ] || { echo "device-check: no wire-report binary at $bin" >&2; exit 2; }
command -v "$py" >/dev/null || { echo "device-check: no $py" >&2; exit 2; }
mkdir -p "$out" || exit 2
work="$(mktemp -d "${TMPDIR:-/tmp}/device-check.XXXXXX")" || exit 2
trap 'rm -rf "$work"' EXIT
export CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES="${GPUS:-0,1}"
steps="$work/steps.txt"
: > "$steps"

# step NAME SECONDS COMMAND...: stdout to NAME.out, stderr to NAME.err,
# one line in steps.txt with the exit status and seconds.
step() {
    local name="$1" secs="$2" start rc
    shift 2
    start=$(date +%s)
    timeout -k 5 "$secs" "$@" > "$work/$name.out" 2> "$work/$name.err"
    rc=$?
    local what="exit $rc"
    [ "$rc" = 124 ] || [ "$rc" = 137 ] && what="TIMED OUT after ${secs} s"
    echo "$name: $what, $(( $(date +%s) - start )) s" >> "$steps"
    echo "device-check: $name: $what" >&2
    return $rc
}

# The device state this check must leave as it found it (memory.used last:
# compared apart).
state=(nvidia-smi --query-gpu=index,pci.bus_id,persistence_mode,compute_mode,clocks.applications.graphics,clocks.applications.memory,mig.mode.current,memory.used --format=csv,noheader)

if command -v nvidia-smi >/dev/null; then
    step facts-q 30 nvidia-smi -q
    step facts-pcie-clocks 20 nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,clocks.sm,clocks.mem,clocks.max.sm,persistence_mode,driver_version --format=csv
    step facts-topo 20 nvidia-smi topo -m
    step state-before 20 "${state[@]}"
else
    echo "facts: nvidia-smi not on PATH (no facts, no device-state check)" >> "$steps"
fi

ours() {
    step "$1" 240 "$bin" collect --quiet --sizes "$sizes" --repeats "$repeats" --out "$work/$1"
}
ours ours-1

nvb="${NVBANDWIDTH:-$(command -v nvbandwidth || true)}"
if [ -n "$nvb" ] && [ -x "$nvb" ]; then
    for s in ${sizes//,/ }; do
        mib=$("$py" -c "import sys; s=sys.argv[1]; m={'K':1/1024,'M':1,'G':1024}; print(int(float(s[:-1])*m[s[-1]]) if s[-1] in m else int(s)//(1<<20))" "$s")
        step "nvbandwidth-$mib" 150 "$nvb" -t host_to_device_memcpy_ce device_to_host_memcpy_ce device_local_copy device_to_device_memcpy_write_ce -b "$mib" -j
    done
else
    echo "nvbandwidth: not found (set NVBANDWIDTH=path); not compared" >> "$steps"
fi
step reference-cuda-events 180 "$py" "$here/cuda-events-reference.py" "$sizes" "$repeats"
if "$py" -c "import torch" >/dev/null 2>&1; then
    step reference-torch 180 "$py" "$here/torch-reference.py" "$sizes" "$repeats"
else
    echo "reference-torch: PyTorch not installed; not compared" >> "$steps"
fi
ours ours-2
if command -v nvidia-smi >/dev/null; then
    step state-after 20 "${state[@]}"
fi

step compare 60 "$py" "$here/device-compare.py" "$work" "${TOLERANCE:-0.02}" "${MIN_BYTES:-268435456}"
compared=$?
cp "$work/compare.out" "$out/summary.txt" 2>/dev/null || echo "no comparison (see compare.err)" > "$out/summary.txt"
[ -f "$work/comparison.json" ] && mv "$work/comparison.json" "$out/comparison.json"
{ echo; echo "steps:"; cat "$steps"; } >> "$out/summary.txt"
tar -czf "$out/device-check.tgz" -C "$work" . 2>/dev/null
cat "$out/summary.txt"
exit $(( compared == 0 ? 0 : 1 ))

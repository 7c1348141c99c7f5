#!/usr/bin/env bash
# The device check for a machine with a GPU (run by hand, or through the
# device tool with the release binary carried): wire-report's CUDA copy
# sweeps and, in the same run, a reference (PyTorch or CuPy copies timed
# with CUDA events at the same sizes). Writes both under $OUT (default
# ./gpu-check) and prints ours/reference per copy kind.
#
# Usage: OUT=dir scripts/gpu-check.sh [path/to/wire-report]
set -uo pipefail
bin="${1:-target/release/wire-report}"
out="${OUT:-gpu-check}"
sizes="${SIZES:-1M,16M,256M}"
mkdir -p "$out"
nvidia-smi -L > "$out/nvidia-smi-L.txt" 2>&1 || true
"$bin" collect --sizes "$sizes" --budget "${BUDGET:-60}" --out "$out/collect" 2> "$out/collect.log"
echo "collect exit $?" >> "$out/collect.log"
python3 "$(dirname "$0")/gpu-reference.py" "$sizes" > "$out/reference.json" 2> "$out/reference.log" \
    || echo "reference: no PyTorch/CuPy here (see reference.log)"
python3 - "$out" <<'PY'
import json, sys, os
out = sys.argv[1]
try:
    b = json.load(open(os.path.join(out, "collect", "bundle.json")))
    ref = json.load(open(os.path.join(out, "reference.json")))
except Exception as e:
    print("no comparison:", e); sys.exit(0)
ours = {}
for m in b["measurements"]:
    if m["tool"] == "wire-report" and m["statistic"] == "median" and m["source"]["file"] == "cuda copy sweeps":
        key = (m["test"].split(" ")[1] + " " + m["test"].split(" ")[2], m["size_bytes"])
        ours[key] = max(ours.get(key, 0), m["bandwidth_bytes_per_s"])
rows = []
for r in ref["results"]:
    k = (r["kind"], r["size_bytes"])
    if k in ours:
        rows.append({"kind": r["kind"], "size_bytes": r["size_bytes"], "ours_bytes_per_s": ours[k], "reference_bytes_per_s": r["bytes_per_s"], "ratio": ours[k] / r["bytes_per_s"]})
json.dump(rows, open(os.path.join(out, "comparison.json"), "w"), indent=1)
for r in rows:
    print(f"{r['kind']:18} {r['size_bytes']:>10}  ours {r['ours_bytes_per_s']/1e9:8.2f} GB/s  reference {r['reference_bytes_per_s']/1e9:8.2f} GB/s  ratio {r['ratio']:.3f}")
PY

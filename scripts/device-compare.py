"""The comparison step of scripts/device-check.sh: our CUDA copy sweeps
(two runs, bracketing the references) against each reference, per copy
kind and size, PASS within +-TOLERANCE; the pageable vs pinned penalty of
our runs; the device state after the check against before.

Usage: python3 device-compare.py WORKDIR TOLERANCE MIN_BYTES
Reads WORKDIR/ours-{1,2}/bundle.json, WORKDIR/nvbandwidth-<MiB>.out (-j
JSON), WORKDIR/reference-{cuda-events,torch}.out, WORKDIR/state-*.out.
Writes WORKDIR/comparison.json; prints the summary. Exits 1 when nothing
was compared. Bytes per second throughout; GB/s = 1e9 bytes/s.
"""
import glob
import json
import os
import re
import sys

# nvbandwidth test -> our copy kind; the cell's (src, dst) from (row, col).
# Its matrices: host_to_device/device_to_host/device_local_copy have one
# row (the CPU, or nothing) and a column per GPU; device_to_device write_ce
# has the writing (source) GPU as the row and the destination as column.
NVB = {
    "host_to_device_memcpy_ce": ("H2D pinned", lambda r, c: ("host", f"GPU{c}")),
    "device_to_host_memcpy_ce": ("D2H pinned", lambda r, c: (f"GPU{c}", "host")),
    "device_local_copy": ("D2D", lambda r, c: (f"GPU{c}", f"GPU{c}")),
    "device_to_device_memcpy_write_ce": ("peer copy, peer access enabled",
                                         lambda r, c: (f"GPU{r}", f"GPU{c}")),
}


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def cells_of(bundle):
    """A bundle's measurement cells as flat dicts: version 1 lists them;
    version 2 keeps what a series shares once, and each cell names it."""
    ms = (bundle or {}).get("measurements", [])
    if isinstance(ms, list):
        return ms
    series = ms.get("series", [])
    out = []
    for c in ms.get("cells", []):
        i = c.get("series")
        shared = series[i] if isinstance(i, int) and 0 <= i < len(series) else {}
        out.append({**shared, **c})
    return out


def ours(work, run):
    b = load(os.path.join(work, f"ours-{run}", "bundle.json"))
    cells = {}
    for m in cells_of(b):
        t = m.get("test", "")
        mt = re.match(r"cuda (.+) (\S+)->(\S+)$", t)
        if not mt or m.get("statistic") != "median" or not m.get("bandwidth_bytes_per_s"):
            continue
        cells[(mt.group(1), mt.group(2), mt.group(3), m.get("size_bytes"))] = m["bandwidth_bytes_per_s"]
    return cells


def nvbandwidth(work):
    cells = {}
    for path in glob.glob(os.path.join(work, "nvbandwidth-*.out")):
        size = int(re.search(r"nvbandwidth-(\d+)\.out$", path).group(1)) << 20
        doc = load(path)
        cases = (doc or {}).get("nvbandwidth", {}).get("testcases", [])
        for case in cases:
            rule = NVB.get(case.get("name"))
            matrix = case.get("bandwidth_matrix") or []
            if not rule:
                continue
            for r, row in enumerate(matrix):
                for c, v in enumerate(row):
                    try:
                        gbps = float(v)
                    except (TypeError, ValueError):
                        continue  # N/A
                    src, dst = rule[1](r, c)
                    cells[(rule[0], src, dst, size)] = gbps * 1e9
    return cells


def reference(work, name):
    doc = load(os.path.join(work, f"reference-{name}.out"))
    cells = {}
    for r in (doc or {}).get("results", []):
        if r.get("checked", True):
            cells[(r["kind"], r["src"], r["dst"], r["size_bytes"])] = r["bytes_per_s"]
    return cells


def state(work, when):
    try:
        with open(os.path.join(work, f"state-{when}.out")) as f:
            # memory.used (the last column) is not state this check sets.
            return [",".join(l.split(",")[:-1]) for l in f.read().splitlines() if l.strip()]
    except OSError:
        return None


def main():
    work, tol, min_bytes = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    runs = [ours(work, 1), ours(work, 2)]
    refs = {"nvbandwidth": nvbandwidth(work), "cuda-events (ctypes)": reference(work, "cuda-events"),
            "torch": reference(work, "torch")}
    rows, lines = [], []
    for ref_name, ref in refs.items():
        for key in sorted(ref, key=str):
            kind, src, dst, size = key
            if size < min_bytes:
                continue
            got = [r[key] for r in runs if key in r]
            if not got:
                continue
            mine = sum(got) / len(got)
            ratio = mine / ref[key]
            verdict = "PASS" if abs(ratio - 1) <= tol else "FAIL"
            drift = got[1] / got[0] - 1 if len(got) == 2 else None
            rows.append({"reference": ref_name, "kind": kind, "src": src, "dst": dst, "size_bytes": size,
                         "ours_bytes_per_s": got, "reference_bytes_per_s": ref[key], "ratio": ratio,
                         "drift_between_our_runs": drift, "verdict": verdict})
            lines.append(f"{verdict} {kind:32} {src}->{dst} {size >> 20:5} MiB  ours {mine / 1e9:8.2f} GB/s"
                         f"  {ref_name} {ref[key] / 1e9:8.2f} GB/s  ratio {ratio:.4f}"
                         + (f"  drift {drift * 100:+.2f}%" if drift is not None else ""))
    penalty = []
    for key, pinned in sorted(runs[0].items(), key=str):
        kind, src, dst, size = key
        if kind.endswith(" pinned"):
            pageable = runs[0].get((kind.replace("pinned", "pageable"), src, dst, size))
            if pageable:
                penalty.append({"kind": kind.split()[0], "src": src, "dst": dst, "size_bytes": size,
                                "pageable_over_pinned": pageable / pinned})
    before, after = state(work, "before"), state(work, "after")
    restored = None if before is None or after is None else before == after
    fails = sum(r["verdict"] == "FAIL" for r in rows)
    print(f"device check: {len(rows)} comparisons at +-{tol * 100:g}%, {len(rows) - fails} PASS, {fails} FAIL"
          + ("" if rows else " -- NOTHING COMPARED"))
    print("(GB/s = 1e9 bytes/s; median per copy of 16-copy windows; ours = mean of the two runs around the references)")
    for l in lines:
        print(l)
    print("pageable vs pinned (our first run):")
    for p in penalty:
        print(f"  {p['kind']} {p['src']}->{p['dst']} {p['size_bytes'] >> 20} MiB: pageable at "
              f"{p['pageable_over_pinned'] * 100:.1f}% of pinned")
    print("device state restored: " + {None: "not checked (no nvidia-smi)", True: "yes",
                                      False: f"NO: before {before}, after {after}"}[restored])
    with open(os.path.join(work, "comparison.json"), "w") as f:
        json.dump({"tolerance": tol, "min_size_bytes": min_bytes, "rows": rows, "pageable_vs_pinned": penalty,
                   "device_state_restored": restored}, f, indent=1)
    sys.exit(0 if rows else 1)


main()

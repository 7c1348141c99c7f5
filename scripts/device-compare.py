"""The comparison step of scripts/device-check.sh: our CUDA copy sweeps
(the runs present, bracketing the references) against each reference, per
copy kind, GPU and size, PASS within +-TOLERANCE; the pageable vs pinned
penalty of our runs; the device state after the check against before.

GPUs are matched by PCI bus id, never by index: our cells name a GPU as
the topology does (a display device ahead of the GPU in PCI order makes it
GPU1), and the bundle ties that name to its bus id; nvbandwidth lists
`Device N: NAME (dddddddd:bb:dd)` (its output.cpp, getDeviceDisplayInfo;
in -j JSON under "GPU Device list"); the two references print each
ordinal's bus id. A device a tool lists without a bus id is not compared.

Usage: python3 device-compare.py WORKDIR TOLERANCE MIN_BYTES
Reads WORKDIR/ours-{1,2}/bundle.json, WORKDIR/nvbandwidth-<MiB>.out (text
or -j JSON), WORKDIR/reference-{cuda-events,torch}.out, WORKDIR/state-*.out.
Writes WORKDIR/comparison.json; prints the summary. Exits 1 when nothing
was compared. Bytes per second throughout; GB/s = 1e9 bytes/s.
"""
import glob
import json
import os
import re
import sys

# nvbandwidth test -> (our copy kind, method); the cell's (src, dst) from
# (row, col) as device ordinals or "host". Its matrices:
# host_to_device/device_to_host/device_local_copy have one row (the CPU,
# or nothing) and a column per GPU; device_to_device write has the writing
# (source) GPU as the row and the destination as column. The SM tests copy
# with kernels, not the copy engines ours use: compared apart.
NVB = {
    "host_to_device_memcpy_ce": ("H2D pinned", "CE", lambda r, c: ("host", c)),
    "device_to_host_memcpy_ce": ("D2H pinned", "CE", lambda r, c: (c, "host")),
    "device_local_copy": ("D2D", "CE", lambda r, c: (c, c)),
    "device_to_device_memcpy_write_ce": ("peer copy, peer access enabled", "CE", lambda r, c: (r, c)),
    "host_to_device_memcpy_sm": ("H2D pinned", "SM", lambda r, c: ("host", c)),
    "device_to_host_memcpy_sm": ("D2H pinned", "SM", lambda r, c: (c, "host")),
}

BUS = re.compile(r"\b([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?\b")


def bus_key(text):
    """A PCI bus id as dddd:bb:dd (domain, bus, device), whatever the
    tool's spelling (00000000:99:00, 0000:99:00.0); None if there is none."""
    m = BUS.search(text or "")
    if not m:
        return None
    return f"{int(m.group(1), 16):04x}:{int(m.group(2), 16):02x}:{int(m.group(3), 16):02x}"


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


def our_bus_ids(bundle):
    """Our GPU names -> bus ids: the topology's devices, else the CUDA
    probe's list (`GPU1 NAME (0000:99:00.0, 16 GiB)`)."""
    ids = {}
    for d in ((bundle or {}).get("topology") or {}).get("devices", []) or []:
        key = bus_key(d.get("pci_bus_id"))
        if d.get("id") and key:
            ids[d["id"]] = key
    for p in (bundle or {}).get("probes", []) or []:
        if p.get("name") == "cuda copy sweeps":
            for m in re.finditer(r"(?:^|, )(\S+) .*?\(([0-9a-fA-F:.]+), \d+ GiB\)", p.get("message", "")):
                ids.setdefault(m.group(1), bus_key(m.group(2)))
    return ids


def ours(work, run):
    b = load(os.path.join(work, f"ours-{run}", "bundle.json"))
    if b is None:
        return None
    ids = our_bus_ids(b)
    cells = {}
    for m in cells_of(b):
        mt = re.match(r"cuda (.+) (\S+)->(\S+)$", m.get("test", ""))
        if not mt or m.get("statistic") != "median" or not m.get("bandwidth_bytes_per_s"):
            continue
        ends = [x if x == "host" else ids.get(x) for x in (mt.group(2), mt.group(3))]
        if None in ends:
            continue  # a GPU without a bus id: never matched by index
        cells[(mt.group(1), ends[0], ends[1], m.get("size_bytes"))] = m["bandwidth_bytes_per_s"]
    return cells


def nvbandwidth_text(text):
    """(devices: ordinal -> bus id, [(test, matrix rows)]) from its text output."""
    devices, cases, test, rows, header = {}, [], None, None, False
    for line in text.splitlines():
        s = line.strip()
        m = re.match(r"Device (\d+): (.*)$", s)
        if m:
            key = bus_key(m.group(2))
            if key:
                devices[int(m.group(1))] = key
            continue
        m = re.match(r"Running (\S+)\.$", s)
        if m:
            test, rows, header = m.group(1), None, False
            continue
        if test and "bandwidth (GB/s)" in s:
            rows, header = [], True
            cases.append((test, rows))
            continue
        if rows is not None and header:
            header = False  # the column numbers
            continue
        if rows is not None:
            parts = s.split()
            if parts and parts[0].isdigit() and len(parts) > 1:
                rows.append(parts[1:])
            elif s:
                rows = None
    return devices, cases


def nvbandwidth_json(doc):
    title = doc.get("nvbandwidth", {})
    devices = {}
    for entry in title.get("GPU Device list", []) or []:
        m = re.match(r"\s*(\d+):", str(entry))
        key = bus_key(str(entry).split(":", 1)[1] if m else "")
        if m and key:
            devices[int(m.group(1))] = key
    cases = [(c.get("name"), c.get("bandwidth_matrix") or []) for c in title.get("testcases", [])]
    return devices, cases


def nvbandwidth(work, notes):
    refs = {}
    for path in sorted(glob.glob(os.path.join(work, "nvbandwidth-*.out"))):
        m = re.search(r"nvbandwidth-(\d+)\.out$", path)
        if not m:
            continue
        size = int(m.group(1)) << 20
        try:
            with open(path, errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        try:
            devices, cases = nvbandwidth_json(json.loads(text))
        except ValueError:
            devices, cases = nvbandwidth_text(text)
        if cases and not devices:
            notes.append(f"{os.path.basename(path)}: nvbandwidth listed no device bus ids; not compared")
        for name, matrix in cases:
            rule = NVB.get(name)
            if not rule:
                continue
            kind, method, where = rule
            cells = refs.setdefault(f"nvbandwidth {method}", {})
            for r, row in enumerate(matrix):
                for c, v in enumerate(row):
                    try:
                        gbps = float(v)
                    except (TypeError, ValueError):
                        continue  # N/A
                    ends = [x if x == "host" else devices.get(x) for x in where(r, c)]
                    if None in ends:
                        continue
                    cells[(kind, ends[0], ends[1], size)] = gbps * 1e9
    return refs


def reference(work, name, notes):
    doc = load(os.path.join(work, f"reference-{name}.out"))
    devices = {f"GPU{d['ordinal']}": bus_key(d.get("pci_bus_id")) for d in (doc or {}).get("devices", [])}
    cells = {}
    for r in (doc or {}).get("results", []):
        if not r.get("checked", True):
            notes.append(f"{name}: {r['kind']} {r['src']}->{r['dst']} copied wrong bytes; not compared")
            continue
        ends = [x if x == "host" else devices.get(x) for x in (r["src"], r["dst"])]
        if None in ends:
            notes.append(f"{name}: no bus id for {r['src']}->{r['dst']}; not compared")
            continue
        cells[(r["kind"], ends[0], ends[1], r["size_bytes"])] = r["bytes_per_s"]
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
    runs = [r for r in (ours(work, 1), ours(work, 2)) if r is not None]
    notes = []
    refs = nvbandwidth(work, notes)
    refs["cuda-events (ctypes)"] = reference(work, "cuda-events", notes)
    refs["torch"] = reference(work, "torch", notes)
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
    first = runs[0] if runs else {}
    for key, pinned in sorted(first.items(), key=str):
        kind, src, dst, size = key
        if kind.endswith(" pinned"):
            pageable = first.get((kind.replace("pinned", "pageable"), src, dst, size))
            if pageable:
                penalty.append({"kind": kind.split()[0], "src": src, "dst": dst, "size_bytes": size,
                                "pageable_over_pinned": pageable / pinned})
    before, after = state(work, "before"), state(work, "after")
    restored = None if before is None or after is None else before == after
    fails = sum(r["verdict"] == "FAIL" for r in rows)
    print(f"device check: {len(rows)} comparisons at +-{tol * 100:g}%, {len(rows) - fails} PASS, {fails} FAIL"
          + ("" if rows else " -- NOTHING COMPARED") + f"; {len(runs)} of our runs")
    print("(GB/s = 1e9 bytes/s; median per copy of 16-copy windows; GPUs by PCI bus id; ours = mean of our runs;"
          " nvbandwidth SM = its kernel copies, ours use the copy engines)")
    for l in lines:
        print(l)
    for n in notes:
        print(f"note: {n}")
    print("pageable vs pinned (our first run):")
    for p in penalty:
        print(f"  {p['kind']} {p['src']}->{p['dst']} {p['size_bytes'] >> 20} MiB: pageable at "
              f"{p['pageable_over_pinned'] * 100:.1f}% of pinned")
    print("device state restored: " + {None: "not checked (no state before and after)", True: "yes",
                                      False: f"NO: before {before}, after {after}"}[restored])
    with open(os.path.join(work, "comparison.json"), "w") as f:
        json.dump({"tolerance": tol, "min_size_bytes": min_bytes, "rows": rows, "notes": notes,
                   "pageable_vs_pinned": penalty, "device_state_restored": restored}, f, indent=1)
    sys.exit(0 if rows else 1)


main()

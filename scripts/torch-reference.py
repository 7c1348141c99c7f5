"""PyTorch as an extra reference for scripts/device-check.sh, timed like
wire-report and nvbandwidth: the stream held by a spin kernel
(torch.cuda._sleep) while WARMUP_COPIES warm-up copies (nvbandwidth's
WARMUP_COUNT), the start event, COPIES back-to-back copies and the end
event are queued; median of the windows; each device's PCI bus id listed;
pinned host buffers touched before timing; the final destination checked.

Usage: python3 torch-reference.py SIZES [REPEATS]. Prints JSON as
cuda-events-reference.py does. Exits 1 without PyTorch or a CUDA device.
"""
import json
import statistics
import sys

COPIES = 16
WARMUP_COPIES = 4
WARMUP_WINDOWS = 2
# Cycles the spin kernel holds the stream: long enough to queue a window
# (about 0.1 s at 2 GHz), released by itself (no host flag in PyTorch).
HOLD_CYCLES = 200_000_000


def sizes(arg):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return [int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s) for s in arg.split(",")]


def main():
    try:
        import torch
    except ImportError as e:
        print(f"torch reference: {e}", file=sys.stderr)
        sys.exit(1)
    if not torch.cuda.is_available():
        print("torch reference: no CUDA device for PyTorch", file=sys.stderr)
        sys.exit(1)
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    g0 = torch.device("cuda:0")
    g1 = torch.device("cuda:1") if torch.cuda.device_count() > 1 else None
    results = []
    for n in sizes(sys.argv[1] if len(sys.argv) > 1 else "256M,512M"):
        pinned = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        pinned.fill_(1)
        a = torch.empty(n, dtype=torch.uint8, device=g0)
        b = torch.empty(n, dtype=torch.uint8, device=g0)
        cases = [
            ("H2D pinned", "host", "GPU0", lambda: a.copy_(pinned, non_blocking=True), lambda: a),
            ("D2H pinned", "GPU0", "host", lambda: pinned.copy_(a, non_blocking=True), lambda: pinned),
            ("D2D", "GPU0", "GPU0", lambda: b.copy_(a, non_blocking=True), lambda: b),
        ]
        if g1 is not None and torch.cuda.can_device_access_peer(0, 1):
            c = torch.empty(n, dtype=torch.uint8, device=g1)
            cases.append(("peer copy, peer access enabled", "GPU0", "GPU1",
                          lambda: c.copy_(a, non_blocking=True), lambda: c))
        stream = torch.cuda.Stream(device=g0)
        for kind, src, dst, fn, out in cases:
            samples, checked = [], True
            for i in range(WARMUP_WINDOWS + repeats):
                seed = i % 2 + 2
                base = (torch.arange(251, dtype=torch.int64) * 7 + seed).remainder_(256).to(torch.uint8)
                want = base.repeat(n // 251 + 1)[:n]
                (pinned if kind == "H2D pinned" else a).copy_(want)
                torch.cuda.synchronize()
                s0 = torch.cuda.Event(enable_timing=True)
                s1 = torch.cuda.Event(enable_timing=True)
                with torch.cuda.stream(stream):
                    torch.cuda._sleep(HOLD_CYCLES)
                    for _ in range(WARMUP_COPIES):
                        fn()
                    s0.record(stream)
                    for _ in range(COPIES):
                        fn()
                    s1.record(stream)
                s1.synchronize()
                if i >= WARMUP_WINDOWS:
                    samples.append(n * COPIES / (s0.elapsed_time(s1) / 1e3))
                    checked = checked and bool(torch.equal(out().cpu(), want))
            results.append({"kind": kind, "src": src, "dst": dst, "size_bytes": n,
                            "bytes_per_s": statistics.median(samples),
                            "samples_bytes_per_s": samples, "checked": checked})
    devices = []
    for i in range(min(torch.cuda.device_count(), 2)):
        devices.append({"ordinal": i, "pci_bus_id": bus_id(torch, i)})
    json.dump({"reference": f"torch {torch.__version__}, CUDA events, spin kernel, {COPIES} copies per window",
               "device": torch.cuda.get_device_name(0), "devices": devices, "results": results},
              sys.stdout, indent=1)


def bus_id(torch, i):
    """Device i's PCI bus id: from torch where its properties carry it,
    else from the driver (torch has loaded libcuda; same ordinals)."""
    p = torch.cuda.get_device_properties(i)
    if all(hasattr(p, a) for a in ("pci_domain_id", "pci_bus_id", "pci_device_id")):
        return f"{p.pci_domain_id:04x}:{p.pci_bus_id:02x}:{p.pci_device_id:02x}.0"
    import ctypes
    cu = ctypes.CDLL("libcuda.so.1")
    buf = ctypes.create_string_buffer(64)
    if cu.cuDeviceGetPCIBusId(buf, 64, i) != 0:
        return None
    return buf.value.decode(errors="replace")


main()

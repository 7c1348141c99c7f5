"""Reference GPU copy bandwidth for scripts/gpu-check.sh: PyTorch (or CuPy)
copies timed with CUDA events, warm-up outside the timed window, median of
repetitions, at the sizes given (4K, 1M, 256M style). Prints JSON."""
import json, statistics, sys

def sizes(arg):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return [int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s) for s in arg.split(",")]

def main():
    import torch
    assert torch.cuda.is_available(), "no CUDA device for PyTorch"
    dev = torch.device("cuda:0")
    results = []
    for n in sizes(sys.argv[1] if len(sys.argv) > 1 else "1M,16M,256M"):
        pinned = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        pageable = torch.empty(n, dtype=torch.uint8)
        d0 = torch.empty(n, dtype=torch.uint8, device=dev)
        d1 = torch.empty(n, dtype=torch.uint8, device=dev)
        cases = {
            "H2D pinned": lambda: d0.copy_(pinned, non_blocking=True),
            "H2D pageable": lambda: d0.copy_(pageable),
            "D2H pinned": lambda: pinned.copy_(d0, non_blocking=True),
            "D2H pageable": lambda: pageable.copy_(d0),
            "D2D": lambda: d1.copy_(d0),
        }
        for kind, fn in cases.items():
            for _ in range(2):
                fn()
            torch.cuda.synchronize()
            times = []
            for _ in range(7):
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record(); fn(); b.record(); b.synchronize()
                times.append(a.elapsed_time(b) / 1e3)
            results.append({"kind": kind, "size_bytes": n, "bytes_per_s": n / statistics.median(times)})
    json.dump({"reference": f"torch {torch.__version__}, CUDA events", "device": torch.cuda.get_device_name(0), "results": results}, sys.stdout, indent=1)

main()

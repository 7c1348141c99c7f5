"""A CUDA-events reference that needs nothing but the driver and Python:
libcuda through ctypes, timed the way wire-report times its copies (and
nvbandwidth its memcpy tests): the stream held by cuStreamWaitValue32 on a
host flag while WARMUP_COPIES warm-up copies (nvbandwidth's WARMUP_COUNT),
the start event, COPIES back-to-back copies and the end event are queued,
then released, the end awaited at most HOLD_TIMEOUT_S; the median of the
windows; pinned host memory (cuMemHostAlloc flags 0, not write-combined),
touched before timing; the final destination checked byte for byte.

Usage: python3 cuda-events-reference.py SIZES [REPEATS]   (SIZES: 256M,512M)
Prints JSON: {"reference", "device", "devices": [{ordinal, pci_bus_id}],
"results": [{kind, src, dst, size_bytes, bytes_per_s, samples_bytes_per_s,
checked}]}. Exits 1 when the driver cannot be used. Devices as GPU<ordinal>
in CUDA's numbering; the comparison matches them by the bus ids listed.
"""
import ctypes
import json
import statistics
import sys
import time

COPIES = 16
WARMUP_COPIES = 4
WARMUP_WINDOWS = 2
HOLD_TIMEOUT_S = 10.0
NOT_READY = 600


def sizes(arg):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return [int(s[:-1]) * mult[s[-1]] if s[-1] in mult else int(s) for s in arg.split(",")]


cu = None
for name in ("libcuda.so.1", "libcuda.so"):
    try:
        cu = ctypes.CDLL(name)
        break
    except OSError:
        pass
if cu is None:
    print("no libcuda.so.1 or libcuda.so on this machine", file=sys.stderr)
    sys.exit(1)
P = ctypes.c_void_p
U64 = ctypes.c_uint64


def check(r, what):
    if r != 0:
        s = ctypes.c_char_p()
        cu.cuGetErrorString(r, ctypes.byref(s))
        raise RuntimeError(f"{what}: CUDA error {r} ({(s.value or b'?').decode()})")


def call(fn, *args):
    check(getattr(cu, fn)(*args), fn)


class Dev:
    def __init__(self, ordinal):
        self.ordinal = ordinal
        d = ctypes.c_int()
        call("cuDeviceGet", ctypes.byref(d), ordinal)
        self.ctx = P()
        call("cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx), d)
        self.current()
        self.stream = P()
        call("cuStreamCreate", ctypes.byref(self.stream), 0)
        self.ev = [P(), P()]
        for e in self.ev:
            call("cuEventCreate", ctypes.byref(e), 0)  # timing events
        self.flag_host = P()
        call("cuMemHostAlloc", ctypes.byref(self.flag_host), ctypes.c_size_t(4), 3)
        self.flag_dev = U64()
        call("cuMemHostGetDevicePointer_v2", ctypes.byref(self.flag_dev), self.flag_host, 0)
        self.flag = ctypes.cast(self.flag_host, ctypes.POINTER(ctypes.c_uint32))

    def current(self):
        call("cuCtxSetCurrent", self.ctx)

    def alloc(self, n):
        self.current()
        p = U64()
        call("cuMemAlloc_v2", ctypes.byref(p), ctypes.c_size_t(n))
        return p

    def window(self, queue_one, n):
        """Times COPIES copies in one held window; returns bytes/s."""
        self.current()
        self.flag[0] = 0
        call("cuStreamWaitValue32_v2", self.stream, self.flag_dev, ctypes.c_uint32(1), 0)
        try:
            for _ in range(WARMUP_COPIES):
                queue_one()
            call("cuEventRecord", self.ev[0], self.stream)
            for _ in range(COPIES):
                queue_one()
            call("cuEventRecord", self.ev[1], self.stream)
        finally:
            self.flag[0] = 1
        deadline = time.monotonic() + HOLD_TIMEOUT_S
        while True:
            r = cu.cuEventQuery(self.ev[1])
            if r != NOT_READY:
                check(r, "cuEventQuery")
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the held stream did not finish within {HOLD_TIMEOUT_S} s of its flag's release")
            time.sleep(0.0005)
        ms = ctypes.c_float()
        call("cuEventElapsedTime", ctypes.byref(ms), self.ev[0], self.ev[1])
        if not ms.value > 0:
            raise RuntimeError(f"elapsed time of {ms.value} ms: no bandwidth")
        return n * COPIES / (ms.value / 1e3)


def pattern(n, seed):
    base = bytes((i * 7 + seed) % 251 for i in range(251))
    return (base * (n // 251 + 1))[:n]


def measure(dev, kind, src, dst, n, queue_one, download, upload, repeats):
    samples, checked = [], True
    for i in range(WARMUP_WINDOWS + repeats):
        want = pattern(n, i % 2)
        upload(want)
        bw = dev.window(queue_one, n)
        if i >= WARMUP_WINDOWS:
            samples.append(bw)
            checked = checked and download() == want
    return {"kind": kind, "src": src, "dst": dst, "size_bytes": n,
            "bytes_per_s": statistics.median(samples), "samples_bytes_per_s": samples,
            "checked": checked}


def main():
    ns = sizes(sys.argv[1] if len(sys.argv) > 1 else "256M,512M")
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    call("cuInit", 0)
    count = ctypes.c_int()
    call("cuDeviceGetCount", ctypes.byref(count))
    name = ctypes.create_string_buffer(256)
    call("cuDeviceGetName", name, 256, 0)
    devices = []
    for i in range(min(count.value, 2)):
        bus = ctypes.create_string_buffer(64)
        call("cuDeviceGetPCIBusId", bus, 64, i)
        devices.append({"ordinal": i, "pci_bus_id": bus.value.decode(errors="replace")})
    d0 = Dev(0)
    d1 = Dev(1) if count.value > 1 else None
    can = ctypes.c_int(0)
    if d1:
        call("cuDeviceCanAccessPeer", ctypes.byref(can), 0, 1)
    m = max(ns)
    host = P()
    d0.current()
    call("cuMemHostAlloc", ctypes.byref(host), ctypes.c_size_t(m), 0)
    ctypes.memset(host, 0, m)  # touched before timing
    a, b = d0.alloc(m), d0.alloc(m)
    c = d1.alloc(m) if d1 and can.value else None
    check_buf = ctypes.create_string_buffer(m)
    s = d0.stream
    results = []
    enabled = []
    if c is not None:
        for x, y in ((d0, d1), (d1, d0)):
            x.current()
            r = cu.cuCtxEnablePeerAccess(y.ctx, 0)
            if r == 0:
                enabled.append((x, y))
            elif r != 704:  # already enabled
                check(r, "cuCtxEnablePeerAccess")
    for n in ns:
        def up_dev(ptr, ctx_dev):
            def f(want):
                ctx_dev.current()
                ctypes.memmove(check_buf, want, n)
                call("cuMemcpyHtoDAsync_v2", ptr, check_buf, ctypes.c_size_t(n), ctx_dev.stream)
                call("cuStreamSynchronize", ctx_dev.stream)
            return f

        def down_dev(ptr, ctx_dev):
            def f():
                ctx_dev.current()
                ctypes.memset(check_buf, 0xA5, n)
                call("cuMemcpyDtoHAsync_v2", check_buf, ptr, ctypes.c_size_t(n), ctx_dev.stream)
                call("cuStreamSynchronize", ctx_dev.stream)
                return check_buf.raw[:n]
            return f

        def up_host(want):
            ctypes.memmove(host, want, n)

        def down_host():
            return ctypes.string_at(host, n)

        def poison_then(up):
            def f(want):
                up(want)
                ctypes.memset(host, 0xA5, n)
            return f

        results.append(measure(d0, "H2D pinned", "host", "GPU0", n,
                               lambda: call("cuMemcpyHtoDAsync_v2", a, host, ctypes.c_size_t(n), s),
                               down_dev(a, d0), up_host, repeats))
        results.append(measure(d0, "D2H pinned", "GPU0", "host", n,
                               lambda: call("cuMemcpyDtoHAsync_v2", host, a, ctypes.c_size_t(n), s),
                               down_host, poison_then(up_dev(a, d0)), repeats))
        results.append(measure(d0, "D2D", "GPU0", "GPU0", n,
                               lambda: call("cuMemcpyDtoDAsync_v2", b, a, ctypes.c_size_t(n), s),
                               down_dev(b, d0), up_dev(a, d0), repeats))
        if c is not None:
            results.append(measure(d0, "peer copy, peer access enabled", "GPU0", "GPU1", n,
                                   lambda: call("cuMemcpyPeerAsync", c, d1.ctx, a, d0.ctx, ctypes.c_size_t(n), s),
                                   down_dev(c, d1), up_dev(a, d0), repeats))
    for x, y in enabled:
        x.current()
        call("cuCtxDisablePeerAccess", y.ctx)
    if c is not None:
        d1.current()
        call("cuMemFree_v2", c)
    d0.current()
    for p in (a, b):
        call("cuMemFree_v2", p)
    call("cuMemFreeHost", host)
    for d in (d0, d1):
        if d:
            d.current()
            call("cuMemFreeHost", d.flag_host)
            for e in d.ev:
                call("cuEventDestroy_v2", e)
            call("cuStreamDestroy_v2", d.stream)
            call("cuDevicePrimaryCtxRelease_v2", d.ordinal)
    json.dump({"reference": f"ctypes libcuda, CUDA events, held stream, {COPIES} copies per window, median of {repeats}",
               "device": name.value.decode(errors="replace"), "devices": devices, "results": results}, sys.stdout, indent=1)


cu.cuMemAlloc_v2.argtypes = [ctypes.POINTER(U64), ctypes.c_size_t]
cu.cuMemHostGetDevicePointer_v2.argtypes = [ctypes.POINTER(U64), P, ctypes.c_uint]
cu.cuMemcpyHtoDAsync_v2.argtypes = [U64, P, ctypes.c_size_t, P]
cu.cuMemcpyDtoHAsync_v2.argtypes = [P, U64, ctypes.c_size_t, P]
cu.cuMemcpyDtoDAsync_v2.argtypes = [U64, U64, ctypes.c_size_t, P]
cu.cuMemcpyPeerAsync.argtypes = [U64, P, U64, P, ctypes.c_size_t, P]
cu.cuMemFree_v2.argtypes = [U64]
cu.cuStreamWaitValue32_v2.argtypes = [P, U64, ctypes.c_uint32, ctypes.c_uint]
cu.cuMemHostAlloc.argtypes = [ctypes.POINTER(P), ctypes.c_size_t, ctypes.c_uint]
cu.cuMemFreeHost.argtypes = [P]
cu.cuCtxSetCurrent.argtypes = [P]
cu.cuCtxEnablePeerAccess.argtypes = [P, ctypes.c_uint]
cu.cuCtxDisablePeerAccess.argtypes = [P]
cu.cuEventRecord.argtypes = [P, P]
cu.cuEventSynchronize.argtypes = [P]
cu.cuEventQuery.argtypes = [P]
cu.cuEventElapsedTime.argtypes = [ctypes.POINTER(ctypes.c_float), P, P]
cu.cuEventDestroy_v2.argtypes = [P]
cu.cuStreamSynchronize.argtypes = [P]
cu.cuStreamDestroy_v2.argtypes = [P]

try:
    main()
except RuntimeError as e:
    print(f"cuda-events reference: {e}", file=sys.stderr)
    sys.exit(1)

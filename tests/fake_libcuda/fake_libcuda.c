/*
 * FAKE libcuda for wire-report's tests. NOT a GPU driver: it exports just
 * the CUDA driver-API symbols wire-report's CUDA backend calls, backed by
 * host memory, so the backend's logic (enumeration, pairs, sweeps,
 * verification, cleanup on every path) can be tested on a machine without
 * a GPU. Numbers it produces are meaningless and never go in a report.
 *
 * Switches (environment variables):
 *   FAKE_CUDA_DEVICES=n        number of fake devices (default 2)
 *   FAKE_CUDA_NO_DEVICE=1      cuInit fails with CUDA_ERROR_NO_DEVICE
 *   FAKE_CUDA_ALLOC_FAIL=n     the n-th cuMemAlloc (1-based) fails with OUT_OF_MEMORY
 *   FAKE_CUDA_CORRUPT=1        every copy flips one byte of its destination
 *   FAKE_CUDA_PEER_REFUSED=1   no pair can access each other as peers
 *   FAKE_CUDA_SLOW_EVERY=n     every n-th copy takes 1000 times as long
 *   FAKE_CUDA_BYTES_PER_MS=x   the fake's copy rate (default 1e7: 10 GB/s)
 *   FAKE_CUDA_REPORT=path      at exit, write what is still allocated,
 *                              enabled or retained (leak check)
 *
 * Time is virtual: every copy advances a clock by 0.01 ms plus its bytes
 * at the fake's rate, and events read that clock. No wall clock is read,
 * so the times the fake reports never depend on the machine's speed or
 * load.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fake_ctx { int dev; int peer[64]; } *CUcontext;
typedef struct fake_stream { int unused; } *CUstream;
typedef struct fake_event { double t_ms; int recorded; } *CUevent;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_PEER_ACCESS_UNSUPPORTED 217
#define CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED 704
#define CUDA_ERROR_PEER_ACCESS_NOT_ENABLED 705

static int initialized;
static struct fake_ctx contexts[64];
static int retained[64];
static long live_allocs, live_host_allocs, live_streams, live_events, alloc_calls;
static CUcontext current;

static int env_int(const char *k, int dflt) {
    const char *v = getenv(k);
    return v && *v ? atoi(v) : dflt;
}
static int ndev(void) { int n = env_int("FAKE_CUDA_DEVICES", 2); return n < 0 ? 0 : (n > 64 ? 64 : n); }
static double clock_ms;
static long copies;
/* Advances the virtual clock by one copy of n bytes. */
static void elapse(size_t n) {
    const char *r = getenv("FAKE_CUDA_BYTES_PER_MS");
    double rate = r && *r ? atof(r) : 1e7;
    double t = 0.01 + (rate > 0 ? (double)n / rate : 0);
    int slow = env_int("FAKE_CUDA_SLOW_EVERY", 0);
    if (slow > 0 && ++copies % slow == 0) t *= 1000;
    clock_ms += t;
}

static void report(void) {
    const char *path = getenv("FAKE_CUDA_REPORT");
    if (!path) return;
    FILE *f = fopen(path, "w");
    if (!f) return;
    long peers = 0, ctx = 0;
    for (int i = 0; i < 64; i++) {
        ctx += retained[i];
        for (int j = 0; j < 64; j++) peers += contexts[i].peer[j];
    }
    fprintf(f, "device_allocations %ld\nhost_allocations %ld\nstreams %ld\nevents %ld\npeer_enabled %ld\nretained_contexts %ld\nalloc_calls %ld\n",
            live_allocs, live_host_allocs, live_streams, live_events, peers, ctx, alloc_calls);
    fclose(f);
}

CUresult cuInit(unsigned int flags) {
    (void)flags;
    if (env_int("FAKE_CUDA_NO_DEVICE", 0)) return CUDA_ERROR_NO_DEVICE;
    if (!initialized) atexit(report);
    initialized = 1;
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult e, const char **s) {
    switch (e) {
    case CUDA_SUCCESS: *s = "no error"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory (FAKE)"; break;
    case CUDA_ERROR_NO_DEVICE: *s = "no CUDA-capable device is detected (FAKE)"; break;
    case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED: *s = "peer access is not supported between these two devices (FAKE)"; break;
    default: *s = "FAKE error"; break;
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n) { if (!initialized) return CUDA_ERROR_NOT_INITIALIZED; *n = ndev(); return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) { if (ordinal < 0 || ordinal >= ndev()) return CUDA_ERROR_INVALID_DEVICE; *d = ordinal; return CUDA_SUCCESS; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d) { snprintf(name, (size_t)len, "FAKE libcuda device %d (not a GPU)", d); return CUDA_SUCCESS; }
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) { (void)d; *bytes = (size_t)1 << 34; return CUDA_SUCCESS; }
CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d) { snprintf(id, (size_t)len, "0000:%02x:00.0", 0x10 + d); return CUDA_SUCCESS; }

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    if (d < 0 || d >= ndev()) return CUDA_ERROR_INVALID_DEVICE;
    contexts[d].dev = d; retained[d]++; *c = &contexts[d]; return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { if (retained[d] <= 0) return CUDA_ERROR_INVALID_VALUE; retained[d]--; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c) { current = c; return CUDA_SUCCESS; }

CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer) {
    *can = (d != peer && !env_int("FAKE_CUDA_PEER_REFUSED", 0)) ? 1 : 0;
    return CUDA_SUCCESS;
}
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
    (void)flags;
    if (!current) return CUDA_ERROR_INVALID_VALUE;
    if (env_int("FAKE_CUDA_PEER_REFUSED", 0)) return CUDA_ERROR_PEER_ACCESS_UNSUPPORTED;
    if (current->peer[peer->dev]) return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    current->peer[peer->dev] = 1;
    return CUDA_SUCCESS;
}
CUresult cuCtxDisablePeerAccess(CUcontext peer) {
    if (!current || !current->peer[peer->dev]) return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;
    current->peer[peer->dev] = 0;
    return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream *s, unsigned int flags) { (void)flags; *s = calloc(1, sizeof(**s)); live_streams++; return CUDA_SUCCESS; }
CUresult cuStreamDestroy_v2(CUstream s) { free(s); live_streams--; return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream s) { (void)s; return CUDA_SUCCESS; }

CUresult cuEventCreate(CUevent *e, unsigned int flags) { (void)flags; *e = calloc(1, sizeof(**e)); live_events++; return CUDA_SUCCESS; }
CUresult cuEventDestroy_v2(CUevent e) { free(e); live_events--; return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)s; e->t_ms = clock_ms; e->recorded = 1; return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent e) { (void)e; return CUDA_SUCCESS; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
    if (!a->recorded || !b->recorded) return CUDA_ERROR_INVALID_VALUE;
    *ms = (float)(b->t_ms - a->t_ms);
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    alloc_calls++;
    if (env_int("FAKE_CUDA_ALLOC_FAIL", 0) == alloc_calls) return CUDA_ERROR_OUT_OF_MEMORY;
    void *m = malloc(n ? n : 1);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)m; live_allocs++; return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); live_allocs--; return CUDA_SUCCESS; }
CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags) { (void)flags; *p = malloc(n ? n : 1); if (!*p) return CUDA_ERROR_OUT_OF_MEMORY; live_host_allocs++; return CUDA_SUCCESS; }
CUresult cuMemFreeHost(void *p) { free(p); live_host_allocs--; return CUDA_SUCCESS; }

/* A copy into device memory of n bytes: the clock advances, and the
 * destination is corrupted when asked. */
static void copied(void *dst, size_t n) {
    elapse(n);
    if (n && env_int("FAKE_CUDA_CORRUPT", 0)) ((unsigned char *)dst)[n / 2] ^= 0x5a;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream s) { (void)s; memcpy((void *)(uintptr_t)d, h, n); copied((void *)(uintptr_t)d, n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, CUstream s) { (void)s; memcpy(h, (void *)(uintptr_t)d, n); elapse(n); return CUDA_SUCCESS; }
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) { (void)s; memcpy((void *)(uintptr_t)d, (void *)(uintptr_t)src, n); copied((void *)(uintptr_t)d, n); return CUDA_SUCCESS; }
CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s) {
    (void)dc; (void)sc; (void)s;
    memcpy((void *)(uintptr_t)d, (void *)(uintptr_t)src, n); copied((void *)(uintptr_t)d, n); return CUDA_SUCCESS;
}

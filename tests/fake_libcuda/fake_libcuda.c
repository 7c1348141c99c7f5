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
 *   FAKE_CUDA_ALLOC_FAIL_CODE=c  the code it fails with (default 2; any
 *                              number, to play a newer driver's code)
 *   FAKE_CUDA_CORRUPT=1        every copy into device memory flips one byte
 *   FAKE_CUDA_D2H=drop|flip    device-to-host copies write nothing (drop)
 *                              or flip one byte of their destination (flip)
 *   FAKE_CUDA_PEER_REFUSED=1   no pair can access each other as peers
 *   FAKE_CUDA_PEER_PREENABLED=1  every context already has peer access to
 *                              every other when the process starts (as if
 *                              another library had enabled it)
 *   FAKE_CUDA_SLOW_EVERY=n     every n-th copy takes 1000 times as long
 *   FAKE_CUDA_BYTES_PER_MS=x   the fake's copy rate (default 1e7: 10 GB/s);
 *                              a peer copy without peer access (staged
 *                              through the host) runs at a quarter of it
 *   FAKE_CUDA_SUBMIT_US=x      host time each call takes (default 5 us)
 *   FAKE_CUDA_REPORT=path      at exit, write what is still allocated,
 *                              enabled or retained (leak check), how
 *                              often contexts were retained, and the fewest
 *                              and most copies queued in a held window
 *                              before its first event (the warm-up count)
 *   FAKE_CUDA_HOLD_STUCK=1     a stream waiting on a host flag never sees
 *                              the flag written (a hold that hangs): its
 *                              events never happen (cuEventQuery: not ready)
 *   FAKE_CUDA_BUS_IDS=a,b,...  the devices' PCI bus ids (default
 *                              0000:10:00.0, 0000:11:00.0, ...)
 *   FAKE_CUDA_SKIP_REPEATS=1   in a held window, a copy identical to the
 *                              window's previous one moves no bytes (they
 *                              are already there; the host touches nothing
 *                              while a window is held): the virtual clock
 *                              is unchanged, and runs at 256 MiB and up
 *                              stay quick
 *
 * Time is virtual. The host has a clock that every call advances by the
 * submit latency; each stream has a GPU timeline: work queued on a free
 * stream starts when it is submitted (or when the stream's previous work
 * ends), so a window timing one copy includes the submit latency. A stream
 * waiting on a host flag (cuStreamWaitValue32_v2) holds its work until the
 * flag is seen written; then the held work runs back to back. No wall clock
 * is read, so the times never depend on the machine's speed or load.
 *
 * Teeth (what a real driver would do, or what would hide a defect):
 * events created with CU_EVENT_DISABLE_TIMING cannot be timed; a stream
 * belongs to the context current when it was made, and work on it needs
 * that context current; a device buffer belongs to the context it was
 * allocated in and is freed and downloaded only there; a pageable host
 * copy queued on a held stream would deadlock (error, nothing copied);
 * synchronising a held stream would hang (error).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct fake_ctx { int dev; int peer[64]; } *CUcontext;
struct pending { int is_event; double dur; struct fake_event *ev; };
typedef struct fake_stream {
    CUcontext ctx; double busy_until; volatile uint32_t *wait_flag; uint32_t wait_value;
    struct pending *held; int nheld, cap;
    int counting; long since_wait; /* copies queued since the wait, until an event */
    const void *last_dst, *last_src; size_t last_n; /* the previous copy */
} *CUstream;
typedef struct fake_event { double t_ms; int recorded; int timing; } *CUevent;

#define CUDA_SUCCESS 0
#define CUDA_ERROR_INVALID_VALUE 1
#define CUDA_ERROR_OUT_OF_MEMORY 2
#define CUDA_ERROR_NOT_INITIALIZED 3
#define CUDA_ERROR_NO_DEVICE 100
#define CUDA_ERROR_INVALID_DEVICE 101
#define CUDA_ERROR_INVALID_CONTEXT 201
#define CUDA_ERROR_INVALID_HANDLE 400
#define CUDA_ERROR_ILLEGAL_STATE 401
#define CUDA_ERROR_PEER_ACCESS_UNSUPPORTED 217
#define CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED 704
#define CUDA_ERROR_PEER_ACCESS_NOT_ENABLED 705
#define CUDA_ERROR_FAKE_DEADLOCK 9999 /* not a CUDA code: the fake's own */

static int initialized;
static struct fake_ctx contexts[64];
static int retained[64];
static long live_allocs, live_host_allocs, live_streams, live_events, alloc_calls, retain_calls;
static long warmup_min = -1, warmup_max = -1; /* copies before the first event of held windows */
static CUcontext current;

static int env_int(const char *k, int dflt) {
    const char *v = getenv(k);
    return v && *v ? atoi(v) : dflt;
}
static double env_f(const char *k, double dflt) {
    const char *v = getenv(k);
    return v && *v ? atof(v) : dflt;
}
static int ndev(void) { int n = env_int("FAKE_CUDA_DEVICES", 2); return n < 0 ? 0 : (n > 64 ? 64 : n); }
static double host_ms;
static long copies;
/* Every call takes the submit latency of host time. */
static void call(void) { host_ms += env_f("FAKE_CUDA_SUBMIT_US", 5) / 1e3; }
/* GPU time of one copy of n bytes (slower when staged). */
static double copy_ms(size_t n, int staged) {
    double rate = env_f("FAKE_CUDA_BYTES_PER_MS", 1e7);
    if (staged) rate /= 4;
    double t = rate > 0 ? (double)n / rate : 0;
    int slow = env_int("FAKE_CUDA_SLOW_EVERY", 0);
    if (slow > 0 && ++copies % slow == 0) t *= 1000;
    return t;
}

/* Device allocations and the context that owns each. */
struct alloc { CUdeviceptr p; CUcontext owner; };
static struct alloc *allocs; static int nallocs, capallocs;
static CUcontext owner_of(CUdeviceptr p) {
    for (int i = 0; i < nallocs; i++) if (allocs[i].p == p) return allocs[i].owner;
    return NULL;
}
/* Pinned host allocations: anything else is pageable. */
static void **pinned; static int npinned, cappinned;
static int is_pinned(const void *h) {
    for (int i = 0; i < npinned; i++) if (pinned[i] == h) return 1;
    return 0;
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
    fprintf(f, "device_allocations %ld\nhost_allocations %ld\nstreams %ld\nevents %ld\npeer_enabled %ld\nretained_contexts %ld\nalloc_calls %ld\nretain_calls %ld\nheld_warmup_min %ld\nheld_warmup_max %ld\n",
            live_allocs, live_host_allocs, live_streams, live_events, peers, ctx, alloc_calls, retain_calls, warmup_min, warmup_max);
    fclose(f);
}

CUresult cuInit(unsigned int flags) {
    (void)flags;
    if (env_int("FAKE_CUDA_NO_DEVICE", 0)) return CUDA_ERROR_NO_DEVICE;
    if (!initialized) {
        atexit(report);
        if (env_int("FAKE_CUDA_PEER_PREENABLED", 0) && !env_int("FAKE_CUDA_PEER_REFUSED", 0))
            for (int i = 0; i < ndev(); i++)
                for (int j = 0; j < ndev(); j++) contexts[i].peer[j] = i != j;
    }
    initialized = 1;
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult e, const char **s) {
    switch (e) {
    case CUDA_SUCCESS: *s = "no error"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *s = "out of memory (FAKE)"; break;
    case CUDA_ERROR_NO_DEVICE: *s = "no CUDA-capable device is detected (FAKE)"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *s = "invalid device context (FAKE)"; break;
    case CUDA_ERROR_INVALID_HANDLE: *s = "invalid resource handle (FAKE)"; break;
    case CUDA_ERROR_PEER_ACCESS_UNSUPPORTED: *s = "peer access is not supported between these two devices (FAKE)"; break;
    case CUDA_ERROR_FAKE_DEADLOCK: *s = "FAKE: a real GPU would hang here (held stream)"; break;
    default: *s = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n) { if (!initialized) return CUDA_ERROR_NOT_INITIALIZED; *n = ndev(); return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int ordinal) { if (ordinal < 0 || ordinal >= ndev()) return CUDA_ERROR_INVALID_DEVICE; *d = ordinal; return CUDA_SUCCESS; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d) { snprintf(name, (size_t)len, "FAKE libcuda device %d (not a GPU)", d); return CUDA_SUCCESS; }
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) { (void)d; *bytes = (size_t)1 << 34; return CUDA_SUCCESS; }
CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d) {
    const char *ids = getenv("FAKE_CUDA_BUS_IDS");
    if (d < 0 || d >= ndev()) return CUDA_ERROR_INVALID_DEVICE;
    if (ids && *ids) {
        /* The d-th comma-separated entry. */
        const char *p = ids;
        for (int i = 0; i < d && p; i++) { p = strchr(p, ','); if (p) p++; }
        if (!p || !*p) return CUDA_ERROR_INVALID_DEVICE;
        size_t n = strcspn(p, ",");
        snprintf(id, (size_t)len, "%.*s", (int)n, p);
        return CUDA_SUCCESS;
    }
    snprintf(id, (size_t)len, "0000:%02x:00.0", 0x10 + d); return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
    if (d < 0 || d >= ndev()) return CUDA_ERROR_INVALID_DEVICE;
    call(); retain_calls++;
    contexts[d].dev = d; retained[d]++; *c = &contexts[d]; return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
    if (d < 0 || d >= 64 || retained[d] <= 0) return CUDA_ERROR_INVALID_VALUE;
    retained[d]--; return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c) { call(); current = c; return CUDA_SUCCESS; }

CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer) {
    *can = (d != peer && !env_int("FAKE_CUDA_PEER_REFUSED", 0)) ? 1 : 0;
    return CUDA_SUCCESS;
}
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags) {
    (void)flags;
    if (!current) return CUDA_ERROR_INVALID_CONTEXT;
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

/* Work on a stream: needs its context current. */
static CUresult usable(CUstream s) {
    if (!s) return CUDA_ERROR_INVALID_HANDLE;
    return s->ctx == current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}
static int held(CUstream s) {
    return s->wait_flag && (*s->wait_flag < s->wait_value || env_int("FAKE_CUDA_HOLD_STUCK", 0));
}
/* Runs the held work once the flag is written, from now on the host clock. */
static void run_held(CUstream s) {
    if (!s->wait_flag || held(s)) return;
    double t = s->busy_until > host_ms ? s->busy_until : host_ms;
    for (int i = 0; i < s->nheld; i++) {
        if (s->held[i].is_event) { s->held[i].ev->t_ms = t; s->held[i].ev->recorded = 1; }
        else t += s->held[i].dur;
    }
    s->busy_until = t; s->nheld = 0; s->wait_flag = NULL;
}
static void enqueue(CUstream s, int is_event, double dur, CUevent ev) {
    run_held(s);
    if (s->wait_flag) {
        if (s->nheld == s->cap) { s->cap = s->cap ? 2 * s->cap : 64; s->held = realloc(s->held, (size_t)s->cap * sizeof *s->held); }
        s->held[s->nheld++] = (struct pending){ is_event, dur, ev };
        return;
    }
    double start = s->busy_until > host_ms ? s->busy_until : host_ms;
    if (is_event) { ev->t_ms = start; ev->recorded = 1; }
    else s->busy_until = start + dur;
}

/* Every live stream, so that the held work of any can run when its flag
 * is seen written (as a GPU polls it). */
static CUstream streams[256]; static int nstreams;
static void run_all_held(void) { for (int i = 0; i < nstreams; i++) run_held(streams[i]); }
CUresult cuStreamCreate(CUstream *s, unsigned int flags) {
    (void)flags;
    if (!current) return CUDA_ERROR_INVALID_CONTEXT;
    if (nstreams == 256) return CUDA_ERROR_OUT_OF_MEMORY;
    *s = calloc(1, sizeof(**s)); (*s)->ctx = current; live_streams++;
    streams[nstreams++] = *s; return CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(CUstream s) {
    run_held(s);
    if (s->wait_flag) return CUDA_ERROR_FAKE_DEADLOCK;
    for (int i = 0; i < nstreams; i++) if (streams[i] == s) { streams[i] = streams[--nstreams]; break; }
    free(s->held); free(s); live_streams--; return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream s) {
    call(); run_held(s);
    if (s->wait_flag) return CUDA_ERROR_FAKE_DEADLOCK;
    if (s->busy_until > host_ms) host_ms = s->busy_until;
    return CUDA_SUCCESS;
}
CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *h, unsigned int flags) {
    (void)flags;
    if (!is_pinned(h)) return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)h; return CUDA_SUCCESS;
}
CUresult cuStreamWaitValue32_v2(CUstream s, CUdeviceptr addr, uint32_t value, unsigned int flags) {
    call();
    CUresult r = usable(s); if (r) return r;
    if (flags != 0 /* CU_STREAM_WAIT_VALUE_GEQ */ || !is_pinned((void *)(uintptr_t)addr)) return CUDA_ERROR_INVALID_VALUE;
    run_held(s);
    if (s->wait_flag) return CUDA_ERROR_ILLEGAL_STATE; /* the fake holds one wait at a time */
    s->wait_flag = (volatile uint32_t *)(uintptr_t)addr; s->wait_value = value;
    s->counting = 1; s->since_wait = 0; s->last_dst = s->last_src = NULL; s->last_n = 0;
    return CUDA_SUCCESS;
}

CUresult cuEventCreate(CUevent *e, unsigned int flags) {
    *e = calloc(1, sizeof(**e)); (*e)->timing = !(flags & 0x2 /* CU_EVENT_DISABLE_TIMING */); live_events++; return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(CUevent e) { free(e); live_events--; return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream s) {
    call();
    CUresult r = usable(s); if (r) return r;
    if (s->counting && s->since_wait > 0) {
        if (warmup_min < 0 || s->since_wait < warmup_min) warmup_min = s->since_wait;
        if (s->since_wait > warmup_max) warmup_max = s->since_wait;
    }
    s->counting = 0;
    e->recorded = 0; enqueue(s, 1, 0, e); return CUDA_SUCCESS;
}
CUresult cuEventQuery(CUevent e) {
    call(); run_all_held();
    if (!e->recorded) return 600; /* CUDA_ERROR_NOT_READY */
    if (e->t_ms > host_ms) host_ms = e->t_ms;
    return CUDA_SUCCESS;
}
CUresult cuEventSynchronize(CUevent e) {
    call(); run_all_held();
    if (!e->recorded) return CUDA_ERROR_FAKE_DEADLOCK;
    if (e->t_ms > host_ms) host_ms = e->t_ms;
    return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) {
    if (!a->timing || !b->timing) return CUDA_ERROR_INVALID_HANDLE;
    if (!a->recorded || !b->recorded) return CUDA_ERROR_INVALID_VALUE;
    *ms = (float)(b->t_ms - a->t_ms);
    return CUDA_SUCCESS;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
    alloc_calls++;
    if (!current) return CUDA_ERROR_INVALID_CONTEXT;
    if (env_int("FAKE_CUDA_ALLOC_FAIL", 0) == alloc_calls) return env_int("FAKE_CUDA_ALLOC_FAIL_CODE", CUDA_ERROR_OUT_OF_MEMORY);
    void *m = malloc(n ? n : 1);
    if (!m) return CUDA_ERROR_OUT_OF_MEMORY;
    if (nallocs == capallocs) { capallocs = capallocs ? 2 * capallocs : 64; allocs = realloc(allocs, (size_t)capallocs * sizeof *allocs); }
    *p = (CUdeviceptr)(uintptr_t)m; allocs[nallocs++] = (struct alloc){ *p, current };
    live_allocs++; return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
    for (int i = 0; i < nallocs; i++) if (allocs[i].p == p) {
        if (allocs[i].owner != current) return CUDA_ERROR_INVALID_CONTEXT;
        allocs[i] = allocs[--nallocs];
        free((void *)(uintptr_t)p); live_allocs--; return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}
CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags) {
    (void)flags;
    *p = malloc(n ? n : 1); if (!*p) return CUDA_ERROR_OUT_OF_MEMORY;
    if (npinned == cappinned) { cappinned = cappinned ? 2 * cappinned : 64; pinned = realloc(pinned, (size_t)cappinned * sizeof *pinned); }
    pinned[npinned++] = *p; live_host_allocs++; return CUDA_SUCCESS;
}
CUresult cuMemFreeHost(void *p) {
    for (int i = 0; i < npinned; i++) if (pinned[i] == p) {
        pinned[i] = pinned[--npinned]; free(p); live_host_allocs--; return CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

/* A copy of n bytes on s: the stream's timeline advances (or holds it). */
static CUresult copy_on(CUstream s, const void *host, size_t n, int staged) {
    call();
    CUresult r = usable(s); if (r) return r;
    run_held(s);
    if (host && !is_pinned(host) && s->wait_flag) return CUDA_ERROR_FAKE_DEADLOCK;
    if (s->counting) s->since_wait++;
    enqueue(s, 0, copy_ms(n, staged), NULL);
    return CUDA_SUCCESS;
}
/* Whether this copy repeats the previous one of the same held window, with
 * the switch on: then its bytes are already in place. Remembers it. */
static int repeat(CUstream s, const void *dst, const void *src, size_t n) {
    if (!s->wait_flag) { s->last_dst = s->last_src = NULL; s->last_n = 0; return 0; }
    int same = env_int("FAKE_CUDA_SKIP_REPEATS", 0) && s->last_dst == dst && s->last_src == src && s->last_n == n;
    s->last_dst = dst; s->last_src = src; s->last_n = n;
    return same;
}
static int owned_by_stream(CUdeviceptr d, CUstream s) { return owner_of(d) == s->ctx; }
static void corrupt(void *dst, size_t n) {
    if (n && env_int("FAKE_CUDA_CORRUPT", 0)) ((unsigned char *)dst)[n / 2] ^= 0x5a;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *h, size_t n, CUstream s) {
    CUresult r = copy_on(s, h, n, 0); if (r) return r;
    if (!owned_by_stream(d, s)) return CUDA_ERROR_INVALID_CONTEXT;
    if (repeat(s, (void *)(uintptr_t)d, h, n)) return CUDA_SUCCESS;
    memcpy((void *)(uintptr_t)d, h, n); corrupt((void *)(uintptr_t)d, n); return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoHAsync_v2(void *h, CUdeviceptr d, size_t n, CUstream s) {
    CUresult r = copy_on(s, h, n, 0); if (r) return r;
    if (!owned_by_stream(d, s)) return CUDA_ERROR_INVALID_CONTEXT;
    const char *mode = getenv("FAKE_CUDA_D2H");
    if (mode && !strcmp(mode, "drop")) return CUDA_SUCCESS;
    if (repeat(s, h, (void *)(uintptr_t)d, n)) return CUDA_SUCCESS;
    memcpy(h, (void *)(uintptr_t)d, n);
    if (n && mode && !strcmp(mode, "flip")) ((unsigned char *)h)[n / 3] ^= 0x21;
    return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s) {
    CUresult r = copy_on(s, NULL, n, 0); if (r) return r;
    if (!owned_by_stream(d, s) || !owned_by_stream(src, s)) return CUDA_ERROR_INVALID_CONTEXT;
    if (repeat(s, (void *)(uintptr_t)d, (void *)(uintptr_t)src, n)) return CUDA_SUCCESS;
    memcpy((void *)(uintptr_t)d, (void *)(uintptr_t)src, n); corrupt((void *)(uintptr_t)d, n); return CUDA_SUCCESS;
}
CUresult cuMemcpyPeerAsync(CUdeviceptr d, CUcontext dc, CUdeviceptr src, CUcontext sc, size_t n, CUstream s) {
    if (!s || owner_of(d) != dc || owner_of(src) != sc) return CUDA_ERROR_INVALID_VALUE;
    /* Direct when the source's context can reach the destination's. */
    int staged = !(sc->peer[dc->dev] && dc->peer[sc->dev]);
    CUresult r = copy_on(s, NULL, n, staged); if (r) return r;
    if (repeat(s, (void *)(uintptr_t)d, (void *)(uintptr_t)src, n)) return CUDA_SUCCESS;
    memcpy((void *)(uintptr_t)d, (void *)(uintptr_t)src, n); corrupt((void *)(uintptr_t)d, n); return CUDA_SUCCESS;
}

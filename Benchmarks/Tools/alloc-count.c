// Counts heap allocations for folio-bench: preloaded (LD_PRELOAD) on glibc, it forwards
// every allocation call to glibc's own allocator and counts calls and requested bytes.
// folio-bench looks up `folio_bench_allocations` at run time; when it is there, rows note
// the allocations their timed part made. Build and use: Benchmarks/Tools/alloc-count.sh.
//
// Counters are process-wide and relaxed: the harness reads them before and after a timed
// part that runs alone, so the difference is that part's (plus whatever a background
// thread allocated meanwhile, which the notes say).
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <errno.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static uint64_t calls, bytes;

static inline void count(size_t size) {
    __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&bytes, size, __ATOMIC_RELAXED);
}

void folio_bench_allocations(uint64_t *outCalls, uint64_t *outBytes) {
    *outCalls = __atomic_load_n(&calls, __ATOMIC_RELAXED);
    *outBytes = __atomic_load_n(&bytes, __ATOMIC_RELAXED);
}

void *malloc(size_t size) { count(size); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { count(n * size); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { count(size); return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { count(size); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { count(size); return __libc_memalign(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    count(size);
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

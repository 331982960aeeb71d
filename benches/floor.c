/* Hand-written C floors for the workloads of benches/compare.py, measured on this machine:
 * the fastest plain loops we know for each (AVX-512, non-temporal stores, huge pages), so
 * that ovir's times can be read against what the memory and the divider allow here.
 *
 * Build and run (benches/compare.py --floor does both):
 *   gcc -O3 -march=native -fopenmp benches/floor.c -o target/floor && target/floor 1
 * The argument is the thread count; a second one runs only the workloads whose name contains
 * it. Prints "workload<TAB>median ms" lines. Needs AVX-512
 * (F, BW, DQ, VL) and F16C. Exact results: integer floor division goes through f64, as in
 * the floor. */
#include <immintrin.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#define D 64
#define N ((long)D * D * D * D)
#define RUNS 40

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* 2 MiB-aligned, on transparent huge pages, touched once. */
static void *big(size_t bytes) {
    void *p = aligned_alloc(2u << 20, (bytes + (2u << 20) - 1) & ~(size_t)((2u << 20) - 1));
    if (!p) { perror("aligned_alloc"); exit(2); }
    madvise(p, bytes, MADV_HUGEPAGE);
    memset(p, 0, bytes);
    return p;
}

static float *fa, *fb, *fo, *fbb, *fbs;
static int32_t *ia, *ib, *io;
static uint16_t *ha, *hb, *ho;

static void f32_sub(void) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i += 16)
        _mm512_stream_ps(fo + i, _mm512_sub_ps(_mm512_load_ps(fa + i), _mm512_load_ps(fb + i)));
    _mm_sfence();
}

static void f32_div(void) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i += 16)
        _mm512_stream_ps(fo + i, _mm512_div_ps(_mm512_load_ps(fa + i), _mm512_load_ps(fb + i)));
    _mm_sfence();
}

/* a [64,64,64,64] - b [64,1,64,1]: contiguous runs of 64 against one b value. */
static void f32_sub_bcast(void) {
#pragma omp parallel for schedule(static)
    for (long r = 0; r < N / D; r++) {
        long i0 = r / (D * D), i2 = r % D;
        __m512 v = _mm512_set1_ps(fbb[i0 * D + i2]);
        for (long j = 0; j < D; j += 16)
            _mm512_stream_ps(fo + r * D + j, _mm512_sub_ps(_mm512_load_ps(fa + r * D + j), v));
    }
    _mm_sfence();
}

/* (a - m) / s, m and s [64,1,64,1]: runs of 64 against one value of each. */
static void f32_norm(void) {
#pragma omp parallel for schedule(static)
    for (long r = 0; r < N / D; r++) {
        long k = (r / (D * D)) * D + r % D;
        __m512 m = _mm512_set1_ps(fbb[k]), s = _mm512_set1_ps(fbs[k]);
        for (long j = 0; j < D; j += 16)
            _mm512_stream_ps(fo + r * D + j,
                             _mm512_div_ps(_mm512_sub_ps(_mm512_load_ps(fa + r * D + j), m), s));
    }
    _mm_sfence();
}

static void f32_div_scalar(void) {
    __m512 v = _mm512_set1_ps(3.0f);
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i += 16)
        _mm512_stream_ps(fo + i, _mm512_div_ps(_mm512_load_ps(fa + i), v));
    _mm_sfence();
}

/* Exact floor division of i32 through f64 (the inputs have no zero divisor). */
static void i32_floordiv(void) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i += 16) {
        __m512i x = _mm512_load_si512(ia + i), y = _mm512_load_si512(ib + i);
        __m512d xl = _mm512_cvtepi32_pd(_mm512_castsi512_si256(x));
        __m512d xh = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(x, 1));
        __m512d yl = _mm512_cvtepi32_pd(_mm512_castsi512_si256(y));
        __m512d yh = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(y, 1));
        __m256i ql = _mm512_cvtpd_epi32(_mm512_roundscale_pd(_mm512_div_pd(xl, yl), _MM_FROUND_TO_NEG_INF));
        __m256i qh = _mm512_cvtpd_epi32(_mm512_roundscale_pd(_mm512_div_pd(xh, yh), _MM_FROUND_TO_NEG_INF));
        _mm512_stream_si512((__m512i *)(io + i), _mm512_inserti64x4(_mm512_castsi256_si512(ql), qh, 1));
    }
    _mm_sfence();
}

static void i32_sub(void) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i += 16)
        _mm512_stream_si512((__m512i *)(io + i),
                            _mm512_sub_epi32(_mm512_load_si512(ia + i), _mm512_load_si512(ib + i)));
    _mm_sfence();
}

static void f16_sub(void) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i += 16) {
        __m512 x = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(ha + i)));
        __m512 y = _mm512_cvtph_ps(_mm256_load_si256((const __m256i *)(hb + i)));
        _mm256_stream_si256((__m256i *)(ho + i),
                            _mm512_cvtps_ph(_mm512_sub_ps(x, y), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    _mm_sfence();
}

/* x = a; then x - b, x / b, ... eight steps, in registers. */
static void chain8(void) {
#pragma omp parallel for schedule(static)
    for (long i = 0; i < N; i += 16) {
        __m512 x = _mm512_load_ps(fa + i), y = _mm512_load_ps(fb + i);
        for (int k = 0; k < 8; k++)
            x = (k % 2 == 0) ? _mm512_sub_ps(x, y) : _mm512_div_ps(x, y);
        _mm512_stream_ps(fo + i, x);
    }
    _mm_sfence();
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* NCHW -> NHWC, [64,64,64,64] (0,2,3,1): out[n][h][w][c] = in[n][c][h][w], each (n, h)
 * plane of 64 c x 64 w transposed in 16 x 16 blocks (plain loops the compiler vectorises). */
static void f32_transpose_nhwc(void) {
#pragma omp parallel for schedule(static)
    for (long nh = 0; nh < D * D; nh++) {
        long n = nh / D, h = nh % D;
        const float *src = fa + n * D * D * D + h * D;   /* + c * D * D + w */
        float *dst = fo + nh * D * D;                      /* + w * D + c */
        for (long c0 = 0; c0 < D; c0 += 16)
            for (long w0 = 0; w0 < D; w0 += 16)
                for (long c = c0; c < c0 + 16; c++)
                    for (long w = w0; w < w0 + 16; w++)
                        dst[w * D + c] = src[c * D * D + w];
    }
}

static const char *only;

static void measure(const char *name, void (*f)(void)) {
    double t[RUNS];
    if (only && !strstr(name, only)) return;
    for (int k = 0; k < 3; k++) f();
    for (int k = 0; k < RUNS; k++) {
        double s = now_ms();
        f();
        t[k] = now_ms() - s;
    }
    qsort(t, RUNS, sizeof t[0], cmp);
    printf("%s\t%.4f\n", name, t[RUNS / 2]);
    fflush(stdout);
}

int main(int argc, char **argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 1;
    if (threads < 1) { fprintf(stderr, "usage: floor THREADS\n"); return 2; }
    if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq")) {
        fprintf(stderr, "floor: this CPU has no AVX-512\n");
        return 2;
    }
    only = argc > 2 ? argv[2] : NULL;
    omp_set_num_threads(threads);
    fa = big(N * 4); fb = big(N * 4); fo = big(N * 4); fbb = big(D * D * 4); fbs = big(D * D * 4);
    ia = big(N * 4); ib = big(N * 4); io = big(N * 4);
    ha = big(N * 2); hb = big(N * 2); ho = big(N * 2);
    uint64_t s = 0x9E3779B97F4A7C15u;
    for (long i = 0; i < N; i++) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        fa[i] = (float)(s % 20001) / 100.0f - 100.0f;
        fb[i] = (float)((s >> 20) % 999) / 10.0f + 0.5f;
        ia[i] = (int32_t)(s % 2001) - 1000;
        ib[i] = (int32_t)((s >> 24) % 100) + 1;
        if ((s >> 40) & 1) ib[i] = -ib[i];
        ha[i] = _cvtss_sh(fa[i], 0);
        hb[i] = _cvtss_sh(fb[i], 0);
    }
    for (long i = 0; i < D * D; i++) {
        fbb[i] = (float)i * 0.25f + 1.0f;
        fbs[i] = (float)(i % 97) * 0.5f + 0.75f;
    }
    measure("f32 sub, same shape", f32_sub);
    measure("f32 div, same shape", f32_div);
    measure("f32 sub, b [64,1,64,1]", f32_sub_bcast);
    measure("f32 div by scalar Const", f32_div_scalar);
    measure("f32 (a-m)/s, m,s [64,1,64,1]", f32_norm);
    measure("i32 floor division", i32_floordiv);
    measure("i32 sub (reference for floor division)", i32_sub);
    measure("f16 sub", f16_sub);
    measure("chain of 8 sub/div", chain8);
    measure("f32 transpose [64,64,64,64] (0,2,3,1)", f32_transpose_nhwc);
    return 0;
}

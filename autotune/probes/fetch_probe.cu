// What does code beyond the instruction cache cost?  (autotune/device_kit.py runs it.)  The timing model charged
// the code of a kernel beyond the SM's instruction cache (128 KB) L2 bandwidth only, and no fetch latency; ncu
// finds the chemistry kernels (365-477 KB of code) stalled on instruction fetch ('no instruction', a third of
// their stall samples on the H200), and the viscosity switch (one copy of code per warp, 134 KB for DME) ran
// 3.4x slower than the overlay (25 KB) on the H100 (docs/measurements).  Its H200 rates are now the model's
// (singe.targets: unshared_fetch, shared_fetch).
//
// One CTA of 8 warps per SM runs straight-line code of independent FFMA (8 accumulators per warp) `repeats`
// times over:
//   shared  every warp runs the same code, of 16, 32, 64, 128 or 256 KB (1,024 to 16,384 instructions)
//   split   each warp runs its own eighth of the code, 128 or 256 KB in all (the switch's layout)
// Printed per kernel: warp instructions issued per SM per cycle (clock64 around the loop of each CTA).  With
// the code in the cache, the FFMA rate; beyond it, what fetching costs.  Exit 1 when a result is not the value
// computed on the host.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int WARPS = 8;
constexpr int UNIT = 1024;  // instructions of one body<1>: 16 KB of SASS
constexpr int REPEATS = 64;

#define STEP(a, m, k) asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(a) : "f"(m), "f"(k))
#define STEP8(m, k) STEP(a[0], m, k); STEP(a[1], m, k); STEP(a[2], m, k); STEP(a[3], m, k); \
  STEP(a[4], m, k); STEP(a[5], m, k); STEP(a[6], m, k); STEP(a[7], m, k);
#define STEP64(m, k) STEP8(m, k) STEP8(m, k) STEP8(m, k) STEP8(m, k) STEP8(m, k) STEP8(m, k) STEP8(m, k) STEP8(m, k)
#define STEP512(m, k) STEP64(m, k) STEP64(m, k) STEP64(m, k) STEP64(m, k) STEP64(m, k) STEP64(m, k) STEP64(m, k) \
  STEP64(m, k)

// UNIT x N straight-line FFMA: a[i] = a[i] * m + k, 8 independent chains.
template <int N>
__device__ __forceinline__ void body(float (&a)[8], float m, float k)
{
  if constexpr (N == 1) {
    STEP512(m, k)
    STEP512(m, k)
  } else {
    body<N / 2>(a, m, k);
    body<N - N / 2>(a, m, k);
  }
}

// The code of warp `w` in the split layout: its own copy (operands that differ by warp keep the compiler from
// merging the copies).
template <int N, int W = 0>
__device__ __forceinline__ void split_body(int warp, float (&a)[8], float m, const float *k)
{
  if constexpr (W < WARPS) {
    if (warp == W)
      body<N>(a, m, k[W]);
    else
      split_body<N, W + 1>(warp, a, m, k);
  }
}

template <int N, bool SPLIT>  // N: units of code per warp
__global__ void __launch_bounds__(WARPS * 32, 1) fetch(float m, const float *k, float *out, long long *cycles)
{
  const int warp = __shfl_sync(0xffffffffu, (int)(threadIdx.x >> 5), 0);
  float a[8];
  for (int i = 0; i < 8; i++) a[i] = 1.0f + i;
  __syncthreads();
  const long long start = clock64();
#pragma unroll 1
  for (int r = 0; r < REPEATS; r++) {
    if constexpr (SPLIT)
      split_body<N>(warp, a, m, k);
    else
      body<N>(a, m, k[0]);
  }
  __syncthreads();
  const long long stop = clock64();
  out[blockIdx.x * WARPS * 32 + threadIdx.x] = a[0] + a[1] + a[2] + a[3] + a[4] + a[5] + a[6] + a[7];
  if (threadIdx.x == 0) cycles[blockIdx.x] = stop - start;
}

// What a thread of warp `warp` computes: each accumulator through UNIT / 8 x N x REPEATS steps of a * m + k.
static float expected(int steps, float m, float k)
{
  float sum = 0.0f;
  for (int i = 0; i < 8; i++) {
    float a = 1.0f + i;
    for (int s = 0; s < steps; s++) a = fmaf(a, m, k);
    sum += a;
  }
  return sum;
}

struct Case {
  const char *name;
  int kilobytes;  // of code in all
  int units;  // per warp
  bool split;
  void (*kernel)(float, const float *, float *, long long *);
};

int main()
{
  const Case cases[] = {
      {"shared", 16, 1, false, fetch<1, false>},   {"shared", 32, 2, false, fetch<2, false>},
      {"shared", 64, 4, false, fetch<4, false>},   {"shared", 128, 8, false, fetch<8, false>},
      {"shared", 256, 16, false, fetch<16, false>}, {"split", 128, 1, true, fetch<1, true>},
      {"split", 256, 2, true, fetch<2, true>}};
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) return 3;
  const float m = 0.5f, host_k[WARPS] = {1.0f, 1.5f, 2.0f, 2.5f, 3.0f, 3.5f, 4.0f, 4.5f};
  float *k = nullptr, *out = nullptr;
  long long *cycles = nullptr;
  if (cudaMalloc(&k, sizeof host_k) != cudaSuccess) return 3;
  if (cudaMemcpy(k, host_k, sizeof host_k, cudaMemcpyHostToDevice) != cudaSuccess) return 3;
  if (cudaMalloc(&out, sizeof(float) * sms * WARPS * 32) != cudaSuccess) return 3;
  if (cudaMalloc(&cycles, sizeof(long long) * sms) != cudaSuccess) return 3;
  static float host_out[1 << 16];
  static long long host_cycles[1 << 10];
  int wrong = 0;
  for (const Case &c : cases) {
    c.kernel<<<sms, WARPS * 32>>>(m, k, out, cycles);  // warm-up
    c.kernel<<<sms, WARPS * 32>>>(m, k, out, cycles);
    if (cudaMemcpy(host_out, out, sizeof(float) * WARPS * 32, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
    if (cudaMemcpy(host_cycles, cycles, sizeof(long long) * sms, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
    double mean = 0.0;
    for (int b = 0; b < sms; b++) mean += host_cycles[b] / (double)sms;
    int bad = 0;
    for (int t = 0; t < WARPS * 32; t++) {
      const float want = expected(UNIT / 8 * c.units * REPEATS, m, host_k[c.split ? t / 32 : 0]);
      const float got = host_out[t];
      bad += !(got == got) || (got - want > 1e-3f * want) || (want - got > 1e-3f * want);
    }
    wrong += bad;
    const double issued = (double)WARPS * UNIT * c.units * REPEATS;  // warp instructions per CTA, loop aside
    printf("fetch %s %d KB: %.3f warp instructions per SM per cycle (1 CTA of %d warps, %.0f cycles)%s\n", c.name,
           c.kilobytes, issued / mean, WARPS, mean, bad ? " WRONG VALUES" : "");
  }
  cudaFree(k);
  cudaFree(out);
  cudaFree(cycles);
  return wrong ? 1 : 0;
}

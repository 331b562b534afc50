// How long does a load of a spilled register take?  (autotune/device_kit.py runs it.)  The data-parallel chemistry
// baselines spill 4.7 KB (DME) and 12.7 KB (n-heptane) a thread at 255 registers, and ncu on an H200
// (docs/measurements/2026-11-27-h200) stalls them 5.4 and 9.6 cycles per issued instruction on long scoreboards:
// loads of local memory whose result the next instructions use.  The timing model charges a spill its issue slot
// and its bytes of L2 bandwidth, not that wait (singe/timing.py, ``Target.local_latency``).
//
// Each thread chases its own array of 8-byte integers in local memory (indexed at run time, so ptxas keeps it there, as a
// spill): each load's index (with the address arithmetic between two loads) is the value the previous one read, along a full-period permutation, so no two loads
// overlap and successive loads of a warp touch different 256-byte lines.  A warp's loads are coalesced as a
// spill's (8 bytes a lane, side by side).  Printed per mode: cycles per dependent load,
// from clock64 around the chase, averaged over the warps timed:
//   l1       one warp on the device, 1 KB a thread (32 KB a warp: the L1 data cache holds it)
//   l2       one warp on the device, 128 KB a thread (4 MB a warp: beyond the L1, within the L2)
//   loaded4  2 CTAs of 128 threads on every SM (the chemistry baselines' occupancy at 255 registers), 4 KB a
//            thread (about DME chemistry's spills): every SM's warps chase at once
//   loaded16 the same, 16 KB a thread (about n-heptane chemistry's)
// Exit 1 when a chase does not end where the host's walk of the same permutation does.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int BASELINE_THREADS = 128;
constexpr int BASELINE_CTAS = 2;

// The permutation every chase walks: a full-period linear congruential step modulo N (a power of two), with a
// multiplier that moves each step across many 256-byte lines.
__host__ __device__ constexpr int next_index(int i, int n) { return (int)((i * 1029LL + 4097) & (n - 1)); }

template <int N>
__global__ void __launch_bounds__(BASELINE_THREADS, BASELINE_CTAS) chase(int loads, int *ends, long long *cycles)
{
  long long local[N];  // 8 bytes an element, as a spilled double (ptxas loads the low word: LDL)
  for (int i = 0; i < N; i++) local[i] = next_index(i, N);
  int index = threadIdx.x % N;
  for (int i = 0; i < N; i++) index = (int)local[index];  // warm: the caches hold what they can of the array
  __syncwarp();
  const long long start = clock64();
  for (int i = 0; i < loads; i++) index = (int)local[index];
  const long long stop = clock64();
  const int thread = blockIdx.x * blockDim.x + threadIdx.x;
  ends[thread] = index;
  if (threadIdx.x % 32 == 0) cycles[thread / 32] = stop - start;
}

struct Mode {
  const char *name;
  void (*kernel)(int, int *, long long *);
  int elements, ctas, threads;
  const char *what;
};

int main()
{
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) return 3;
  const Mode modes[] = {
    {"l1", chase<128>, 128, 1, 32, "one warp, 1 KB a thread"},
    {"l2", chase<16384>, 16384, 1, 32, "one warp, 128 KB a thread"},
    {"loaded4", chase<512>, 512, BASELINE_CTAS * sms, BASELINE_THREADS,
     "2 CTAs of 128 threads on every SM, 4 KB a thread"},
    {"loaded16", chase<2048>, 2048, BASELINE_CTAS * sms, BASELINE_THREADS,
     "2 CTAs of 128 threads on every SM, 16 KB a thread"},
  };
  const int loads = 1 << 14;
  int wrong = 0;
  for (const Mode &mode : modes) {
    const int threads = mode.ctas * mode.threads, warps = threads / 32;
    int *ends = nullptr;
    long long *cycles = nullptr;
    if (cudaMalloc(&ends, threads * sizeof(int)) != cudaSuccess) return 3;
    if (cudaMalloc(&cycles, warps * sizeof(long long)) != cudaSuccess) return 3;
    cudaDeviceSetLimit(cudaLimitStackSize, mode.elements * sizeof(long long) + 4096);
    mode.kernel<<<mode.ctas, mode.threads>>>(loads, ends, cycles);
    if (cudaDeviceSynchronize() != cudaSuccess) {
      printf("local %s: launch failed: %s\n", mode.name, cudaGetErrorString(cudaGetLastError()));
      return 3;
    }
    int *host_ends = new int[threads];
    long long *host_cycles = new long long[warps];
    cudaMemcpy(host_ends, ends, threads * sizeof(int), cudaMemcpyDeviceToHost);
    cudaMemcpy(host_cycles, cycles, warps * sizeof(long long), cudaMemcpyDeviceToHost);
    int bad = 0;
    double total = 0.0;
    for (int t = 0; t < threads; t++) {
      int want = (t % mode.threads) % mode.elements;
      for (int i = 0; i < mode.elements + loads; i++) want = next_index(want, mode.elements);
      bad += host_ends[t] != want;
    }
    for (int w = 0; w < warps; w++) total += (double)host_cycles[w];
    wrong += bad;
    printf("local %s: %.1f cycles per dependent load (%s, %d loads)%s\n", mode.name, total / warps / loads,
           mode.what, loads, bad ? " WRONG VALUES" : "");
    delete[] host_ends;
    delete[] host_cycles;
    cudaFree(ends);
    cudaFree(cycles);
  }
  return wrong ? 1 : 0;
}

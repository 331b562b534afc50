// Does compute-sanitizer's racecheck see the ordering a named barrier gives?  (autotune/device_kit.py runs it.)
//
// A CTA of 15 warps (the DME viscosity kernel's) shares slots in shared memory.  Modes:
//   arrive   warp 0: write, barrier.arrive 1, 64;  warp 1: barrier.sync 1, 64, read   (ordered: producer-consumer)
//   sync     warp 0: write, barrier.sync 1, 64;    warp 1: barrier.sync 1, 64, read   (ordered, different instructions)
//   none     warp 0: write;                        warp 1: read after spinning        (a race)
//   chain    warp 0: write, arrive 1;  warp 1: sync 1, arrive 2;  warp 2: sync 2, read  (ordered through two barriers)
//   war      warp 1: write, read, arrive 1;  warp 0: sync 1, write over it            (a read, then a reuse: ordered)
//   many     warps 1-14: write, barrier.sync 2, 480;  warp 0: barrier.sync 2, 480, read all 14  (ordered; the
//            first hazard racecheck reported in the DME viscosity kernel has this shape)
//   slabs    the DME viscosity kernel's protocol over 64 slabs, its barriers reused in every one: warp 0 writes
//            slot 0 (ln T), barrier.arrive 1, 480, barrier.sync 2, 480, reads the 14 slots; warps 1-14
//            barrier.sync 1, 480, read slot 0, write their own slot, barrier.sync 2, 480  (ordered: a warp's
//            next write waits for warp 0's next arrive, which follows its reads)
// A racecheck that models named barriers reports only 'none'.  The program checks the values it read and
// exits 1 when one is wrong (only 'none' may read a stale slot).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

// The named barriers as the kernels emit them (templates/common.cuh.j2: SINGE_BAR_ARRIVE, SINGE_BAR_SYNC)
#define ARRIVE(id, threads) asm volatile("barrier.arrive %0, %1;" :: "r"(id), "r"(threads) : "memory")
#define SYNC(id, threads) asm volatile("barrier.sync %0, %1;" :: "r"(id), "r"(threads) : "memory")

enum Mode { kArrive, kSync, kNone, kChain, kWar, kMany, kSlabs, kModes };
constexpr int kWarps = 15;
constexpr int kSlabCount = 64;

__host__ __device__ inline double written(int warp, int lane) { return 1.0 + lane + 32.0 * warp; }

// The value each mode's reader stores for `lane`.
__host__ __device__ inline double expected(int mode, int lane)
{
  if (mode == kMany || mode == kSlabs) {
    double sum = 0.0;
    for (int w = 1; w < kWarps; w++) sum += written(w, lane);
    return mode == kMany ? sum : sum * kSlabCount * (kSlabCount + 1) / 2;  // slab s scales by s + 1
  }
  return written(mode == kWar ? 1 : 0, lane);
}

__global__ void probe(int mode, double *out)
{
  __shared__ double slot[kWarps * 32];
  const int warp = __shfl_sync(0xffffffffu, (int)(threadIdx.x >> 5), 0);
  const int lane = threadIdx.x & 31;
  double *mine = out + blockIdx.x * 32 + lane;
  switch (mode) {
  case kArrive: case kSync: case kNone:
    if (warp == 0) {
      slot[lane] = written(0, lane);
      if (mode == kArrive) ARRIVE(1, 64);
      if (mode == kSync) SYNC(1, 64);
    } else if (warp == 1) {
      if (mode != kNone) SYNC(1, 64);
      else for (volatile int spin = 0; spin < 100000; spin = spin + 1) {}
      *mine = slot[lane];
    }
    break;
  case kChain:
    if (warp == 0) {
      slot[lane] = written(0, lane);
      ARRIVE(1, 64);
    } else if (warp == 1) {
      SYNC(1, 64);
      ARRIVE(2, 64);
    } else if (warp == 2) {
      SYNC(2, 64);
      *mine = slot[lane];
    }
    break;
  case kWar:
    if (warp == 1) {
      slot[lane] = written(1, lane);
      *mine = *(volatile double *)&slot[lane];
      ARRIVE(1, 64);
    } else if (warp == 0) {
      SYNC(1, 64);
      slot[lane] = -1.0;
    }
    break;
  case kMany:
    if (warp > 0) slot[warp * 32 + lane] = written(warp, lane);
    SYNC(2, 480);
    if (warp == 0) {
      double sum = 0.0;
      for (int w = 1; w < kWarps; w++) sum += slot[w * 32 + lane];
      *mine = sum;
    }
    break;
  case kSlabs: {
    double sum = 0.0;
    for (int s = 0; s < kSlabCount; s++) {
      if (warp == 0) {
        slot[lane] = s + 1.0;
        ARRIVE(1, 480);
        SYNC(2, 480);
        for (int w = 1; w < kWarps; w++) sum += slot[w * 32 + lane];
      } else {
        SYNC(1, 480);
        slot[warp * 32 + lane] = slot[lane] * written(warp, lane);
        SYNC(2, 480);
      }
    }
    if (warp == 0) *mine = sum;
    break;
  }
  }
}

int main(int argc, char **argv)
{
  const char *names[kModes] = {"arrive", "sync", "none", "chain", "war", "many", "slabs"};
  int mode = -1;
  for (int m = 0; m < kModes; m++)
    if (argc > 1 && !strcmp(argv[1], names[m])) mode = m;
  if (mode < 0) {
    fprintf(stderr, "usage: %s arrive|sync|none|chain|war|many|slabs\n", argv[0]);
    return 2;
  }
  const int blocks = 64;
  double *out = nullptr, host[blocks * 32];
  if (cudaMalloc(&out, sizeof host) != cudaSuccess) return 3;
  probe<<<blocks, kWarps * 32>>>(mode, out);
  if (cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
  int wrong = 0;
  for (int i = 0; i < blocks * 32; i++) wrong += host[i] != expected(mode, i % 32);
  printf("probe %s: %d of %d values stale\n", names[mode], wrong, blocks * 32);
  cudaFree(out);
  return wrong && mode != kNone ? 1 : 0;
}

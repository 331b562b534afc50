// Does compute-sanitizer's racecheck see the ordering a named barrier gives?  (autotune/device_kit.py runs it.)
//
// Two warps of one CTA share a slot per lane.  Warp 0 writes it; warp 1 reads it.  Modes:
//   arrive   warp 0: write, barrier.arrive 1, 64;  warp 1: barrier.sync 1, 64, read   (ordered: producer-consumer)
//   sync     warp 0: write, barrier.sync 1, 64;    warp 1: barrier.sync 1, 64, read   (ordered, different instructions)
//   none     warp 0: write;                        warp 1: read after spinning        (a race)
// A racecheck that models named barriers reports only 'none'.  The program checks the values it read and
// exits 1 when one is wrong (only 'none' may read a stale slot).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

__global__ void probe(int mode, double *out)
{
  __shared__ double slot[32];
  const int warp = __shfl_sync(0xffffffffu, (int)(threadIdx.x >> 5), 0);
  const int lane = threadIdx.x & 31;
  if (warp == 0) {
    slot[lane] = 1.0 + lane;
    if (mode == 0) asm volatile("barrier.arrive 1, 64;" ::: "memory");
    if (mode == 1) asm volatile("barrier.sync 1, 64;" ::: "memory");
  } else {
    if (mode == 0 || mode == 1) asm volatile("barrier.sync 1, 64;" ::: "memory");
    if (mode == 2) for (volatile int spin = 0; spin < 100000; spin = spin + 1) {}
    out[blockIdx.x * 32 + lane] = slot[lane];
  }
}

int main(int argc, char **argv)
{
  const char *names[] = {"arrive", "sync", "none"};
  int mode = -1;
  for (int m = 0; m < 3; m++)
    if (argc > 1 && !strcmp(argv[1], names[m])) mode = m;
  if (mode < 0) {
    fprintf(stderr, "usage: %s arrive|sync|none\n", argv[0]);
    return 2;
  }
  const int blocks = 64;
  double *out = nullptr, host[blocks * 32];
  if (cudaMalloc(&out, sizeof host) != cudaSuccess) return 3;
  probe<<<blocks, 64>>>(mode, out);
  if (cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
  int wrong = 0;
  for (int i = 0; i < blocks * 32; i++) wrong += host[i] != 1.0 + (i % 32);
  printf("probe %s: %d of %d values stale\n", names[mode], wrong, blocks * 32);
  cudaFree(out);
  return wrong && mode != 2 ? 1 : 0;
}

// What does an SM sustain of the loads that feed the warp-specialized kernels' arithmetic?  (autotune/device_kit.py
// runs it.)  The timing model charges a constant-table load (LDC.64 at a warp-dependent index, the SINGE_CONST_AT of
// the transport kernels' loops) an issue slot and 1.27 LDS.64 slots of the load queue (measured here: the mixed
// mode, docs/measurements/2026-11-27-h200) but no latency, and a shared load (LDS.64) 256 B of the SM's shared
// bandwidth and the preset's shared latency.  ncu on an H200 (docs/measurements/2026-11-26-h200) found DME viscosity's
// warp-specialized kernel, which issues ~960 LDC.64 and ~970 LDS.64 per slab, stalled mostly on short scoreboards
// (MIO), where the data-parallel kernel reads its constants as operands of its instructions.
//
// Each mode runs 4 CTAs of 8 warps per SM; every iteration feeds 8 DFMA (4 independent chains) with 8 doubles:
//   lds   LDS.64 of a slot per lane (shared memory)
//   ldc   LDC.64 of a __constant__ table at a warp-uniform index that ptxas does not know (as SINGE_CONST_AT)
//   bank  the same table at indices ptxas knows (constant-bank operands, or ULDC on sm_90)
//   none  immediates: the DFMA rate alone
//   mixed LDS.64 and LDC.64 in turn: near the slower alone if they share the MIO queue, near their sum if not
//   sts   STS.64 of each DFMA's result to a slot per lane (the operands immediates, as 'none'): the store rate,
//         which the model prices as an LDS.64 (256 B of the shared resource)
//   bcast    LDS.64 at a warp-uniform address (a constant table in shared memory, one double a load)
//   bcast128 LDS.128 at a warp-uniform address (two doubles a load: a warp's constants of one loop iteration)
//   The two tell whether a warp's constant table read from shared memory would cost the load queue less than
//   the LDC.64 the overlay issues now.
//   lds128   LDS.128 of two doubles per lane (a lane's two values of one inner species side by side, which the
//            Wilke loops now read as two LDS.64 from two slots): whether the load queue takes it as one load
//            or as the two LDS.64 its 512 B are (the model's price of DME viscosity's lane-varying loads).
// Printed per mode: loads (or DFMA) per SM per cycle, from clock64 around the loop of each CTA.  Exit 1 when a mode's
// result is not the value computed on the host (the loads read what they should).
//
// Then the latency of one load when nothing else is in flight (one warp on the device, each load's index the value
// the previous one read: a chain), which the timing model needs for the constant-table loads it charges no latency:
//   latency lds   LDS.64 of a slot per lane, at the index read by the previous LDS.64
//   latency ldc   LDC.64 of a __constant__ table at the index read by the previous LDC.64
// Printed: cycles per load of the chain (the index arithmetic between two loads included).
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>

constexpr int TABLE = 1024;
constexpr int UNROLL = 8;
constexpr int THREADS = 256;
constexpr int CTAS_PER_SM = 4;
__constant__ double table[TABLE];

// Where load u of an iteration reads its double in each mode (lds, ldc, bank, none, mixed), on the device and
// in the host's check alike.
enum Source { kShared, kIndexed, kBank, kImmediate, kBroadcast, kBroadcastPair, kLanePair };
__host__ __device__ constexpr Source source(int mode, int u)
{
  return mode == 4 ? (u % 2 == 0 ? kShared : kIndexed) : mode == 0 ? kShared : mode == 1 ? kIndexed
         : mode == 2 ? kBank : mode == 6 ? kBroadcast : mode == 7 ? kBroadcastPair : mode == 8 ? kLanePair
         : kImmediate;  // 3 ('none') and 5 ('sts'): immediates
}

// Loads (or stores, or DFMA) a mode issues per iteration of UNROLL DFMA.
__host__ __device__ constexpr int per_iteration(int mode) { return mode == 7 || mode == 8 ? UNROLL / 2 : UNROLL; }

template <int MODE>
__global__ void __launch_bounds__(THREADS, CTAS_PER_SM) mio(int iterations, double *out, long long *cycles)
{
  __shared__ double slots[64][32];
  const int warp = __shfl_sync(0xffffffffu, (int)(threadIdx.x >> 5), 0);
  const int lane = threadIdx.x & 31;
  for (int k = threadIdx.x; k < 64 * 32; k += blockDim.x) slots[k / 32][k % 32] = 1.0 / (1 + k / 32);
  __syncthreads();
  double a[4] = {0.0, 0.0, 0.0, 0.0};
  const int base = warp * 64;
  const long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < iterations; i++) {
#pragma unroll
    for (int u = 0; u < UNROLL; u++) {
      const Source from = source(MODE, u);
      const bool paired = from == kBroadcastPair || from == kLanePair;
      const int row = (i * UNROLL + (paired ? u & ~1 : u)) & 63;  // even where paired: rows row and row + 1
      const double2 pair = from == kBroadcastPair ? reinterpret_cast<const double2 *>(slots[row])[warp & 15]
                           : from == kLanePair ? reinterpret_cast<const double2 *>(slots[row])[lane]
                           : double2{0.0, 0.0};  // one LDS.128 per two u (ptxas CSE)
      const double c = from == kShared ? slots[row][lane]
                       : from == kBroadcast ? slots[row][warp & 31]
                       : paired ? (u % 2 == 0 ? pair.x : pair.y)
                       : from == kIndexed ? table[(base + i * UNROLL + u) & (TABLE - 1)]
                       : from == kBank ? table[u] : 1.0 / (1 + u);
      a[u & 3] = fma(c, 0.5, a[u & 3]);
      if (MODE == 5) slots[(i * UNROLL + u) & 63][lane] = a[u & 3];
    }
  }
  const long long stop = clock64();
  out[blockIdx.x * THREADS + threadIdx.x] = a[0] + a[1] + a[2] + a[3];
  if (threadIdx.x == 0) cycles[blockIdx.x] = stop - start;
}

constexpr int CHAIN = 512;  // entries of a chain; entry k holds the index of the next
__constant__ long long chain[CHAIN];

__host__ __device__ constexpr long long next_link(long long k) { return (k * 37 + 11) % CHAIN; }

template <int MODE>  // 0: LDS.64, 1: LDC.64
__global__ void __launch_bounds__(32, 1) latency(int loads, long long *out, long long *cycles)
{
  __shared__ long long links[CHAIN];
  for (int k = threadIdx.x; k < CHAIN; k += blockDim.x) links[k] = next_link(k);
  __syncwarp();
  long long at = __shfl_sync(0xffffffffu, (long long)(threadIdx.x >> 5), 0);  // 0, unknown to ptxas
  const long long start = clock64();
#pragma unroll 1
  for (int i = 0; i < loads; i++) at = MODE == 0 ? links[at] : chain[at];
  const long long stop = clock64();
  out[threadIdx.x] = at;
  if (threadIdx.x == 0) *cycles = stop - start;
}

// What thread t of a CTA computes: sum over the loads of 0.5 x the value loaded.
static double expected(int mode, int iterations, int thread, const double *host_table)
{
  const int warp = thread / 32;
  double sum = 0.0;
  for (int i = 0; i < iterations; i++)
    for (int u = 0; u < UNROLL; u++) {
      const int step = i * UNROLL + u;
      const Source from = source(mode, u);
      const double c = from == kShared || from == kBroadcast ? 1.0 / (1 + (step & 63))
                       : from == kBroadcastPair ? 1.0 / (1 + ((step & ~1) & 63))
                       : from == kLanePair ? 1.0 / (1 + ((step & ~1) & 63) + (thread % 32 >= 16))  // 16-31: row + 1
                       : from == kIndexed ? host_table[(warp * 64 + step) & (TABLE - 1)]
                       : from == kBank ? host_table[u] : 1.0 / (1 + u);
      sum += 0.5 * c;
    }
  return sum;
}

int main()
{
  const char *names[] = {"lds", "ldc", "bank", "none", "mixed", "sts", "bcast", "bcast128", "lds128"};
  void (*kernels[])(int, double *, long long *) = {mio<0>, mio<1>, mio<2>, mio<3>, mio<4>, mio<5>, mio<6>, mio<7>,
                                                   mio<8>};
  const int modes = sizeof names / sizeof names[0];
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) return 3;
  double host_table[TABLE];
  for (int k = 0; k < TABLE; k++) host_table[k] = 1.0 + 1.0 / (1 + k);
  if (cudaMemcpyToSymbol(table, host_table, sizeof host_table) != cudaSuccess) return 3;
  const int blocks = sms * CTAS_PER_SM, iterations = 4096;
  double *out = nullptr;
  long long *cycles = nullptr;
  if (cudaMalloc(&out, sizeof(double) * blocks * THREADS) != cudaSuccess) return 3;
  if (cudaMalloc(&cycles, sizeof(long long) * blocks) != cudaSuccess) return 3;
  static double host_out[1 << 20];
  static long long host_cycles[1 << 14];
  int wrong = 0;
  for (int mode = 0; mode < modes; mode++) {
    kernels[mode]<<<blocks, THREADS>>>(iterations, out, cycles);  // warm-up
    kernels[mode]<<<blocks, THREADS>>>(iterations, out, cycles);
    if (cudaMemcpy(host_out, out, sizeof(double) * blocks * THREADS, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
    if (cudaMemcpy(host_cycles, cycles, sizeof(long long) * blocks, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
    double mean = 0.0;
    for (int b = 0; b < blocks; b++) mean += host_cycles[b] / (double)blocks;
    int bad = 0;
    for (int t = 0; t < THREADS; t++) {
      const double want = expected(mode, iterations, t, host_table), got = host_out[t];
      bad += !(got == got) || (got - want > 1e-9 * want) || (want - got > 1e-9 * want);
    }
    wrong += bad;
    const double per_sm = (double)CTAS_PER_SM * THREADS / 32 * iterations * per_iteration(mode) / mean;  // warp instr.
    printf("mio %s: %.3f %s per SM per cycle (%d CTAs of %d warps per SM, %.0f cycles per CTA)%s\n", names[mode],
           per_sm, mode == 3 ? "DFMA" : mode == 5 ? "stores" : "loads", CTAS_PER_SM, THREADS / 32, mean, bad ? " WRONG VALUES" : "");
  }
  long long host_chain[CHAIN], want = 0;
  for (int k = 0; k < CHAIN; k++) host_chain[k] = next_link(k);
  if (cudaMemcpyToSymbol(chain, host_chain, sizeof host_chain) != cudaSuccess) return 3;
  const int loads = 1 << 16;
  for (int i = 0; i < loads; i++) want = next_link(want);
  const char *chained[] = {"lds", "ldc"};
  void (*chains[])(int, long long *, long long *) = {latency<0>, latency<1>};
  long long *ends = nullptr, *spent = nullptr, host_ends[32], host_spent = 0;
  if (cudaMalloc(&ends, sizeof host_ends) != cudaSuccess || cudaMalloc(&spent, sizeof host_spent) != cudaSuccess)
    return 3;
  for (int mode = 0; mode < 2; mode++) {
    chains[mode]<<<1, 32>>>(loads, ends, spent);  // warm-up
    chains[mode]<<<1, 32>>>(loads, ends, spent);
    if (cudaMemcpy(host_ends, ends, sizeof host_ends, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
    if (cudaMemcpy(&host_spent, spent, sizeof host_spent, cudaMemcpyDeviceToHost) != cudaSuccess) return 3;
    int bad = 0;
    for (int t = 0; t < 32; t++) bad += host_ends[t] != want;
    wrong += bad;
    printf("latency %s: %.1f cycles per dependent load (one warp, %d loads)%s\n", chained[mode],
           (double)host_spent / loads, loads, bad ? " WRONG VALUES" : "");
  }
  cudaFree(ends);
  cudaFree(spent);
  cudaFree(out);
  cudaFree(cycles);
  return wrong ? 1 : 0;
}

// singe_host_runtime.h: run singe's emitted CUDA kernels on the CPU, unchanged.
//
// The generated .cu includes this header instead of <cuda_runtime.h> when it is
// compiled as C++17 with -DSINGE_HOST (g++ -std=c++17 -DSINGE_HOST -x c++).
// It maps the CUDA dialect the templates use onto a small cooperative runtime:
//
// * Every thread of a CTA is a fiber with its own stack; the CTAs of a launch
//   run one after the other (so one copy of shared memory serves every CTA).
//   Fibers switch with a hand-written context switch (x86-64: six callee-saved
//   registers and the stack pointer; elsewhere ucontext), never a system call.
// * Warp collectives (__shfl*_sync, named barriers, __syncwarp) gather the
//   lanes of a warp: the last lane to arrive completes the operation for all.
//   Named barriers follow PTX bar.sync / bar.arrive: 16 ids per CTA, the warp
//   (32 threads) as the unit of arrival, a generation completes when its count
//   of threads has arrived, then the barrier is reset for the next generation.
// * When no fiber can run and some have not finished, the launch stops with a
//   deadlock report (barrier ids, warps waiting, arrived counts); barrier
//   misuse (counts that differ within a generation, divergent warps, bad ids,
//   a generation left incomplete when the CTA ends) stops it the same way.
// * Dynamic shared memory is poisoned with NaN at the start of every CTA.
// * Schedules: deterministic (FIFO, lanes in order); random (seeded): at
//   every collective the next fiber to run is drawn at random; priority
//   (seeded): random warp priorities, changed at random collectives.
//
// C API for the Python side (singe/host.py): singe_host_configure,
// singe_host_last_error, singe_host_statistics, singe_host_set_grid_limit,
// singe_host_set_checks, singe_host_set_stack_size.
#ifndef SINGE_HOST_RUNTIME_H
#define SINGE_HOST_RUNTIME_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <string>

// The hand-written x86-64 switch; elsewhere (or with -DSINGE_HOST_UCONTEXT) ucontext.
#if defined(__x86_64__) && !defined(SINGE_HOST_UCONTEXT)
#define SINGE_HOST_FAST_SWITCH 1
#else
#define SINGE_HOST_FAST_SWITCH 0
#include <ucontext.h>
#endif

// ---------------------------------------------------------------------------------------------
// CUDA qualifiers and built-in types.

#define __global__
#define __device__
#define __host__
#define __constant__
#define __shared__
#define __forceinline__ inline
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)

struct uint3 {
  unsigned int x, y, z;
};

struct alignas(16) double2 {
  double x, y;
};
inline double2 make_double2(double x, double y) { return double2{x, y}; }

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};

typedef void *cudaStream_t;

// The opt-in maximum of dynamic shared memory per CTA and the amount allowed
// without cudaFuncSetAttribute (SINGE_SET_SHARED) [B]: singe/host.py passes
// them from the GPU target table (singe/targets.py).
#if !defined(SINGE_HOST_MAX_SHARED_BYTES) || !defined(SINGE_HOST_DEFAULT_SHARED_BYTES)
#error "define SINGE_HOST_MAX_SHARED_BYTES and SINGE_HOST_DEFAULT_SHARED_BYTES (singe/host.py passes them)"
#endif
// The kernel's `extern __shared__ T name[]` array (every extern shared array of
// a CTA starts at the same address on the GPU).  singe/host.py passes its name
// and element type; this is the one copy the sequential CTAs share.
#ifndef SINGE_HOST_DYNAMIC_SHARED
#define SINGE_HOST_DYNAMIC_SHARED singe_shared
#endif
#ifndef SINGE_HOST_DYNAMIC_SHARED_TYPE
#define SINGE_HOST_DYNAMIC_SHARED_TYPE double
#endif
alignas(256) SINGE_HOST_DYNAMIC_SHARED_TYPE
    SINGE_HOST_DYNAMIC_SHARED[SINGE_HOST_MAX_SHARED_BYTES / sizeof(SINGE_HOST_DYNAMIC_SHARED_TYPE)];

namespace singe_host {

enum Status { kSuccess = 0, kInvalidConfiguration = 1, kDeadlock = 2, kMisuse = 3, kResources = 4 };
enum Schedule { kDeterministic = 0, kRandom = 1, kPriority = 2 };
enum FiberState { kReady, kRunning, kBlocked, kDone };
enum Op { kNone, kShflIdx, kShflUp, kShflDown, kShflXor, kBarSync, kBarArrive, kSyncWarp };

// Where a collective is in the source: a number unique to each expansion of
// the intrinsic's macro (__COUNTER__) and its line (__LINE__).
struct Site {
  int id, line;
};

constexpr int kWarpSize = 32;
constexpr int kMaxThreads = 1024;
constexpr int kResidentCtas = 2;  // CTAs the host's device holds at once (SINGE_RESIDENT_CTAS)
constexpr int kMaxWarps = kMaxThreads / kWarpSize;
constexpr int kBarriers = 16;
constexpr uint64_t kPoison = 0x7ff8dead7ff8deadull;  // a quiet NaN as a double; garbage as anything else

// One thread of a CTA.
struct Fiber {
  void *sp = nullptr;  // saved stack pointer (x86-64) while switched out
#if !SINGE_HOST_FAST_SWITCH
  ucontext_t context;
#endif
  unsigned char *stack = nullptr;  // lowest usable address (a guard page sits below)
  size_t stack_bytes = 0;
  uint3 thread_idx{0, 0, 0};
  int tid = 0, warp = 0, lane = 0;
  FiberState state = kReady;
  // The collective this lane waits at (while state == kBlocked).
  Op op = kNone;
  unsigned mask = 0;
  int barrier = 0, count = 0;  // barrier id and thread count
  int source = 0, width = 32;  // shuffle operand b and width
  Site site{0, 0};
  uint64_t value = 0, result = 0;
};

// Lanes of a warp gathered at one collective operation.
struct Group {
  Op op = kNone;
  unsigned members = 0;  // lanes that take part
  unsigned arrived = 0;  // lanes already there
  int barrier = 0, count = 0;
  Site site{0, 0};
};

struct Warp {
  unsigned live = 0;   // lanes that exist and have not exited
  Group groups[kWarpSize];
  int n_groups = 0;
  Op waiting = kNone;  // kBarSync while the warp waits for a barrier generation
  int waiting_barrier = -1;
};

// One named barrier of the CTA.
struct Barrier {
  int expected = 0;        // thread count of the current generation (0: none started)
  int arrived = 0;         // threads arrived in the current generation
  int generation = 0;      // generations completed
  unsigned sync_warps = 0, arrive_warps = 0;  // warps counted in this generation, by instruction
  int first_warp = -1;     // the warp that started the generation (for messages)
};

struct State {
  // configuration
  Schedule schedule = kDeterministic;
  uint64_t seed = 0;
  size_t stack_bytes = 256 * 1024;
  unsigned grid_limit = 0;  // at most this many CTAs along x (0: the grid as launched)
  bool same_site = true;    // lanes of a warp must meet at the same call site of a collective
  // the launch
  const char *kernel = "";
  dim3 grid, block, block_idx;
  size_t shared_bytes = 0;
  void (*body)(void *) = nullptr;
  void *body_arg = nullptr;
  int n_threads = 0, n_warps = 0;
  uint64_t rng = 0;
  // fibers of the CTA
  Fiber fibers[kMaxThreads];
  int stacks_allocated = 0;
  Warp warps[kMaxWarps];
  Barrier barriers[kBarriers];
  Fiber *ready[kMaxThreads];
  int ready_head = 0, ready_size = 0;  // the ring (deterministic, random); ready_size counts every ready fiber
  Fiber *warp_ready[kMaxWarps][kWarpSize];  // per-warp FIFOs (priority)
  int warp_head[kMaxWarps] = {}, warp_count[kMaxWarps] = {};
  int order[kMaxWarps] = {};  // warps by decreasing priority
  int demote = 64;
  Fiber *current = nullptr;
  void *scheduler_sp = nullptr;
#if !SINGE_HOST_FAST_SWITCH
  ucontext_t scheduler_context;
#endif
  int done = 0;
  // outcome
  int status = kSuccess;       // of the running launch
  int last_status = kSuccess;  // for SINGE_LAUNCH_STATUS (cleared when read)
  std::string error;           // message of the last failed launch
  // per-kernel opt-in shared memory (SINGE_SET_SHARED): kernel -> bytes
  std::map<void (*)(), size_t> shared_limits;
  // statistics of the last launch
  unsigned long long switches = 0, collectives = 0, generations = 0, ctas = 0;
};

// The runtime's state.  With the GNU toolchain an inline variable is a process-wide unique symbol
// (STB_GNU_UNIQUE, even in libraries loaded RTLD_LOCAL): every kernel library Python loads shares it, and so
// its fiber stacks (up to 1024 x 256 KB of address space, which one copy per library would multiply past a
// 3 GB address-space limit in a test session).  Its table of the kernels opted into more dynamic shared memory
// (SINGE_SET_SHARED) therefore has no size limit: with 64 entries it refused the 65th kernel of a session.
inline State g;

// ---------------------------------------------------------------------------------------------
// Context switching.

#if SINGE_HOST_FAST_SWITCH
// switch_context(save, load): push the callee-saved registers, save the stack
// pointer in *save, load `load` as the stack pointer, pop and return there.
__attribute__((naked, noipa)) static void switch_context(void ** /*save*/, void * /*load*/) {
  __asm__(
      "pushq %rbp\n\t"
      "pushq %rbx\n\t"
      "pushq %r12\n\t"
      "pushq %r13\n\t"
      "pushq %r14\n\t"
      "pushq %r15\n\t"
      "movq %rsp, (%rdi)\n\t"
      "movq %rsi, %rsp\n\t"
      "popq %r15\n\t"
      "popq %r14\n\t"
      "popq %r13\n\t"
      "popq %r12\n\t"
      "popq %rbx\n\t"
      "popq %rbp\n\t"
      "ret\n\t");
}
#endif

inline void fiber_main();

// A fresh stack whose first switch "returns" into fiber_main.
inline void prepare_stack(Fiber &f) {
#if SINGE_HOST_FAST_SWITCH
  uintptr_t top = (reinterpret_cast<uintptr_t>(f.stack) + f.stack_bytes) & ~uintptr_t(15);
  void **sp = reinterpret_cast<void **>(top);
  *--sp = nullptr;                                       // fake return address of fiber_main
  *--sp = reinterpret_cast<void *>(&fiber_main);         // where switch_context returns to
  for (int i = 0; i < 6; i++) *--sp = nullptr;           // rbp rbx r12 r13 r14 r15
  f.sp = sp;
#else
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = f.stack;
  f.context.uc_stack.ss_size = f.stack_bytes;
  f.context.uc_link = nullptr;
  makecontext(&f.context, fiber_main, 0);
#endif
}

inline void jump(Fiber *from, Fiber *to) {
  g.switches++;
  g.current = to;
  __asm__ __volatile__("" ::: "memory");
#if SINGE_HOST_FAST_SWITCH
  switch_context(from ? &from->sp : &g.scheduler_sp, to ? to->sp : g.scheduler_sp);
#else
  swapcontext(from ? &from->context : &g.scheduler_context, to ? &to->context : &g.scheduler_context);
#endif
  __asm__ __volatile__("" ::: "memory");
}

// ---------------------------------------------------------------------------------------------
// Scheduling.  Deterministic: a FIFO ring of ready fibers (lanes run in order).
// Random: any ready fiber, drawn uniformly, after every collective.  Priority:
// per-warp FIFOs; each CTA draws a random priority order of the warps, the
// highest-priority warp with a ready lane runs, and after each collective the
// running warp drops to the lowest priority with probability 1/demote (drawn
// per CTA among 4, 32, 256, 2048): warps run far ahead of each other, which
// exposes a missing wait in a few seeds.

inline uint64_t next_random() {  // splitmix64
  uint64_t z = (g.rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline void enqueue(Fiber *f) {
  f->state = kReady;
  g.ready_size++;
  if (g.schedule == kPriority) {
    int w = f->warp;
    g.warp_ready[w][(g.warp_head[w] + g.warp_count[w]) % kWarpSize] = f;
    g.warp_count[w]++;
    return;
  }
  g.ready[(g.ready_head + g.ready_size - 1) % kMaxThreads] = f;
}

// A blocked fiber may run again (the running one, released by its own
// operation, simply runs on).
inline void make_ready(Fiber *f) {
  if (f == g.current)
    f->state = kRunning;
  else
    enqueue(f);
}

inline Fiber *take_ready() {
  if (g.ready_size == 0) return nullptr;
  g.ready_size--;
  if (g.schedule == kPriority) {
    for (int i = 0; i < g.n_warps; i++) {
      int w = g.order[i];
      if (g.warp_count[w] == 0) continue;
      Fiber *f = g.warp_ready[w][g.warp_head[w]];
      g.warp_head[w] = (g.warp_head[w] + 1) % kWarpSize;
      g.warp_count[w]--;
      return f;
    }
    abort();  // ready_size counts a fiber that is in no queue
  }
  if (g.schedule == kRandom && g.ready_size > 0) {
    int pick = (g.ready_head + int(next_random() % uint64_t(g.ready_size + 1))) % kMaxThreads;
    Fiber *chosen = g.ready[pick];
    g.ready[pick] = g.ready[g.ready_head];
    g.ready[g.ready_head] = chosen;
  }
  Fiber *f = g.ready[g.ready_head];
  g.ready_head = (g.ready_head + 1) % kMaxThreads;
  return f;
}

// A new CTA: empty queues, and for the priority schedule a random warp order.
inline void reset_schedule() {
  g.ready_head = g.ready_size = 0;
  for (int w = 0; w < g.n_warps; w++) {
    g.warp_head[w] = g.warp_count[w] = 0;
    g.order[w] = w;
  }
  if (g.schedule != kPriority) return;
  for (int i = g.n_warps - 1; i > 0; i--) {  // Fisher-Yates
    int j = int(next_random() % uint64_t(i + 1));
    int t = g.order[i];
    g.order[i] = g.order[j];
    g.order[j] = t;
  }
  static const int demote[] = {4, 32, 256, 2048};
  g.demote = demote[next_random() % 4];
}

inline void demote_warp(int w) {
  int i = 0;
  while (g.order[i] != w) i++;
  for (; i + 1 < g.n_warps; i++) g.order[i] = g.order[i + 1];
  g.order[g.n_warps - 1] = w;
}

// Leave the current fiber (blocked, done or failed) for the next ready one, or
// for the scheduler when none is ready.
inline void leave(Fiber *self) {
  Fiber *next = take_ready();
  if (next == self) {  // made ready again by its own operation
    self->state = kRunning;
    return;
  }
  if (next) next->state = kRunning;
  jump(self, next);
  self->state = kRunning;
}

// After a collective this lane completed: it runs on (deterministic), or the
// schedule picks who runs next (random, priority).
inline void interleave(Fiber *self) {
  if (g.schedule == kDeterministic || g.ready_size == 0) return;
  if (g.schedule == kPriority && next_random() % uint64_t(g.demote) == 0) demote_warp(self->warp);
  enqueue(self);
  leave(self);
}

// ---------------------------------------------------------------------------------------------
// Errors: stop the launch with a message (the failing fiber never resumes).

inline std::string lanes_text(unsigned lanes) {
  std::string text;
  for (int lane = 0; lane < kWarpSize;) {
    if (!(lanes >> lane & 1u)) { lane++; continue; }
    int end = lane;
    while (end + 1 < kWarpSize && (lanes >> (end + 1) & 1u)) end++;
    if (!text.empty()) text += ",";
    text += std::to_string(lane);
    if (end > lane) text += "-" + std::to_string(end);
    lane = end + 1;
  }
  return text.empty() ? "none" : text;
}

inline std::string warps_text(unsigned warps) {
  std::string text;
  for (int w = 0; w < kMaxWarps; w++)
    if (warps >> w & 1u) text += (text.empty() ? "" : ", ") + std::to_string(w);
  return text.empty() ? "none" : text;
}

inline std::string where_text() {
  char text[160];
  snprintf(text, sizeof text, "kernel %s, CTA (%u,%u,%u) of (%u,%u,%u), %d threads", g.kernel, g.block_idx.x,
           g.block_idx.y, g.block_idx.z, g.grid.x, g.grid.y, g.grid.z, g.n_threads);
  return text;
}

inline std::string op_text(Op op, unsigned mask, int barrier, int count, int line = 0) {
  char text[128];
  switch (op) {
    case kBarSync: snprintf(text, sizeof text, "bar.sync %d, %d", barrier, count); break;
    case kBarArrive: snprintf(text, sizeof text, "bar.arrive %d, %d", barrier, count); break;
    case kSyncWarp: snprintf(text, sizeof text, "__syncwarp(0x%08x)", mask); break;
    case kShflIdx: snprintf(text, sizeof text, "__shfl_sync(0x%08x)", mask); break;
    case kShflUp: snprintf(text, sizeof text, "__shfl_up_sync(0x%08x)", mask); break;
    case kShflDown: snprintf(text, sizeof text, "__shfl_down_sync(0x%08x)", mask); break;
    case kShflXor: snprintf(text, sizeof text, "__shfl_xor_sync(0x%08x)", mask); break;
    default: snprintf(text, sizeof text, "nothing"); break;
  }
  if (line <= 0) return text;
  return std::string(text) + " (line " + std::to_string(line) + ")";
}

[[noreturn]] inline void fail(int status, const std::string &message) {
  g.status = status;
  g.error = (status == kDeadlock ? "deadlock: " : "misuse: ") + message + " [" + where_text() + "]";
  Fiber *self = g.current;
  self->state = kBlocked;
  jump(self, nullptr);
  abort();  // never resumed
}

// ---------------------------------------------------------------------------------------------
// Named barriers (PTX bar.sync / bar.arrive, the warp as the unit of arrival).

inline void release_generation(Barrier &b) {
  for (int w = 0; w < g.n_warps; w++) {
    if (!(b.sync_warps >> w & 1u)) continue;
    Warp &warp = g.warps[w];
    warp.waiting = kNone;
    warp.waiting_barrier = -1;
    for (int lane = 0; lane < kWarpSize; lane++)
      if (warp.live >> lane & 1u) make_ready(&g.fibers[w * kWarpSize + lane]);
  }
  b.expected = b.arrived = 0;
  b.sync_warps = b.arrive_warps = 0;
  b.first_warp = -1;
  b.generation++;
  g.generations++;
}

// Warp `w` (all its live lanes) arrives at barrier `id` expecting `count` threads.
inline void barrier_arrive(int w, Op op, int id, int count) {
  Barrier &b = g.barriers[id];
  if (b.expected == 0) {
    b.expected = count;
    b.first_warp = w;
  } else if (b.expected != count) {
    char text[256];
    snprintf(text, sizeof text,
             "barrier %d, generation %d: warp %d uses %s with %d threads, but warp %d started the generation "
             "expecting %d (%d arrived)",
             id, b.generation, w, op == kBarSync ? "bar.sync" : "bar.arrive", count, b.first_warp, b.expected,
             b.arrived);
    fail(kMisuse, text);
  }
  b.arrived += kWarpSize;
  if (op == kBarSync) {
    b.sync_warps |= 1u << w;
    g.warps[w].waiting = kBarSync;
    g.warps[w].waiting_barrier = id;
  } else {
    b.arrive_warps |= 1u << w;
    for (int lane = 0; lane < kWarpSize; lane++)
      if (g.warps[w].live >> lane & 1u) make_ready(&g.fibers[w * kWarpSize + lane]);
  }
  if (b.arrived >= b.expected) release_generation(b);
}

inline void check_barrier_operands(Op op, int id, int count) {
  char text[192];
  if (id < 0 || id >= kBarriers) {
    snprintf(text, sizeof text, "%s: barrier id %d outside 0..%d", op_text(op, 0, id, count).c_str(), id,
             kBarriers - 1);
    fail(kMisuse, text);
  }
  int limit = g.n_warps * kWarpSize;
  if (count <= 0 || count % kWarpSize != 0 || count > limit) {
    snprintf(text, sizeof text, "%s: thread count %d is not a multiple of %d in %d..%d (warp %d)",
             op_text(op, 0, id, count).c_str(), count, kWarpSize, kWarpSize, limit, g.current->warp);
    fail(kMisuse, text);
  }
}

// ---------------------------------------------------------------------------------------------
// Warp collectives: the lanes of a group gather; the last one completes it.

inline bool is_barrier(Op op) { return op == kBarSync || op == kBarArrive; }

inline bool same_collective(const Group &group, const Fiber &f) {
  if (group.op != f.op) return false;
  if (g.same_site && group.site.id != f.site.id) return false;
  if (is_barrier(f.op)) return group.barrier == f.barrier && group.count == f.count;
  return group.members == f.mask;
}

inline uint64_t shuffle_result(const Fiber &f, const Group &group) {
  // PTX shfl.sync: c = ((32 - width) << 8) | (up ? 0 : 31)
  int lane = f.lane;
  int segmask = (kWarpSize - f.width) & 31;
  int cval = f.op == kShflUp ? 0 : 31;
  int max_lane = (lane & segmask) | (cval & ~segmask);
  int min_lane = lane & segmask;
  int b = f.source & 31;
  int j = lane;
  bool ok = false;
  switch (f.op) {
    case kShflUp: j = lane - b; ok = j >= max_lane; break;
    case kShflDown: j = lane + b; ok = j <= max_lane; break;
    case kShflXor: j = lane ^ b; ok = j <= max_lane; break;
    default: j = min_lane | (b & ~segmask); ok = j <= max_lane; break;
  }
  if (!ok) j = lane;
  if (!(group.members >> j & 1u)) return kPoison;  // source lane not in the mask: undefined
  return g.fibers[f.warp * kWarpSize + j].value;
}

inline void complete(Warp &warp, int index) {
  Group group = warp.groups[index];
  warp.groups[index] = warp.groups[--warp.n_groups];
  g.collectives++;
  Fiber *lanes = &g.fibers[g.current->warp * kWarpSize];
  if (is_barrier(group.op)) {
    barrier_arrive(g.current->warp, group.op, group.barrier, group.count);
    return;
  }
  if (group.op != kSyncWarp)
    for (int lane = 0; lane < kWarpSize; lane++)
      if (group.members >> lane & 1u) lanes[lane].result = shuffle_result(lanes[lane], group);
  for (int lane = 0; lane < kWarpSize; lane++)
    if (group.members >> lane & 1u) make_ready(&lanes[lane]);
}

// The current fiber has filled in its collective (op, mask, operands): join
// the group of its warp, complete it if this lane is the last, then wait.
inline void collective() {
  Fiber *self = g.current;
  Warp &warp = g.warps[self->warp];
  unsigned bit = 1u << self->lane;
  if (is_barrier(self->op)) {
    check_barrier_operands(self->op, self->barrier, self->count);
    self->mask = warp.live;
  } else {
    char text[256];
    if (!(self->mask & bit)) {
      snprintf(text, sizeof text, "warp %d lane %d calls %s with a mask that leaves it out", self->warp,
               self->lane, op_text(self->op, self->mask, 0, 0).c_str());
      fail(kMisuse, text);
    }
    if (self->mask & ~warp.live) {
      snprintf(text, sizeof text, "warp %d lane %d calls %s naming lanes %s that exited or do not exist",
               self->warp, self->lane, op_text(self->op, self->mask, 0, 0).c_str(),
               lanes_text(self->mask & ~warp.live).c_str());
      fail(kMisuse, text);
    }
  }
  int index = -1;
  for (int i = 0; i < warp.n_groups; i++) {
    Group &group = warp.groups[i];
    if (!(group.members & bit) && !(group.members & self->mask)) continue;
    if (!(group.members & bit) || !same_collective(group, *self) || (group.arrived & bit)) {
      char text[320];
      snprintf(text, sizeof text, "warp %d diverges: lane %d reaches %s while lanes %s wait at %s", self->warp,
               self->lane, op_text(self->op, self->mask, self->barrier, self->count, self->site.line).c_str(),
               lanes_text(group.arrived).c_str(),
               op_text(group.op, group.members, group.barrier, group.count, group.site.line).c_str());
      fail(kMisuse, text);
    }
    index = i;
    break;
  }
  if (index < 0) {
    index = warp.n_groups++;
    warp.groups[index] = Group{self->op, self->mask, 0u, self->barrier, self->count, self->site};
  }
  warp.groups[index].arrived |= bit;
  self->state = kBlocked;
  if (warp.groups[index].arrived == warp.groups[index].members) complete(warp, index);
  if (self->state == kBlocked)
    leave(self);  // until the group (or the barrier generation) completes
  else
    interleave(self);  // this lane completed it
}

// A lane exits: barrier groups of its warp no longer wait for it.
inline void lane_exit(Fiber *self) {
  Warp &warp = g.warps[self->warp];
  unsigned bit = 1u << self->lane;
  warp.live &= ~bit;
  for (int i = 0; i < warp.n_groups; i++) {
    Group &group = warp.groups[i];
    if (!(group.members & bit)) continue;
    if (!is_barrier(group.op) && group.op != kSyncWarp) {
      char text[256];
      snprintf(text, sizeof text, "warp %d lane %d exits while lanes %s wait for it at %s", self->warp, self->lane,
               lanes_text(group.arrived).c_str(), op_text(group.op, group.members, 0, 0, group.site.line).c_str());
      fail(kMisuse, text);
    }
    group.members &= ~bit;
    if (group.members && group.arrived == group.members) {
      complete(warp, i);
      return;
    }
  }
}

inline void fiber_main() {
  Fiber *self = g.current;
  self->state = kRunning;
  g.body(g.body_arg);
  self->state = kDone;
  g.done++;
  lane_exit(self);
  leave(self);
  abort();  // a finished fiber is never resumed
}

// ---------------------------------------------------------------------------------------------
// Running a CTA and a launch.

inline bool allocate_stacks(int n) {
  long page = sysconf(_SC_PAGESIZE);
  size_t usable = (g.stack_bytes + size_t(page) - 1) / size_t(page) * size_t(page);
  for (; g.stacks_allocated < n; g.stacks_allocated++) {
    Fiber &f = g.fibers[g.stacks_allocated];
    void *memory = mmap(nullptr, usable + size_t(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                        -1, 0);
    if (memory == MAP_FAILED) return false;
    mprotect(memory, size_t(page), PROT_NONE);  // guard page: an overflow faults instead of corrupting
    f.stack = static_cast<unsigned char *>(memory) + page;
    f.stack_bytes = usable;
  }
  return true;
}

inline void free_stacks() {
  long page = sysconf(_SC_PAGESIZE);
  for (int i = 0; i < g.stacks_allocated; i++) {
    Fiber &f = g.fibers[i];
    munmap(f.stack - page, f.stack_bytes + size_t(page));
    f.stack = nullptr;
  }
  g.stacks_allocated = 0;
}

inline std::string deadlock_report() {
  std::string text = "no thread can proceed;";
  for (int id = 0; id < kBarriers; id++) {
    Barrier &b = g.barriers[id];
    if (b.expected == 0) continue;
    char line[256];
    snprintf(line, sizeof line, " barrier %d (generation %d): %d of %d threads arrived (bar.sync: warps %s; "
             "bar.arrive: warps %s);", id, b.generation, b.arrived, b.expected, warps_text(b.sync_warps).c_str(),
             warps_text(b.arrive_warps).c_str());
    text += line;
  }
  unsigned exited = 0;
  for (int w = 0; w < g.n_warps; w++) {
    Warp &warp = g.warps[w];
    if (warp.live == 0) { exited |= 1u << w; continue; }
    char line[320];
    if (warp.waiting == kBarSync) {
      snprintf(line, sizeof line, " warp %d waits at barrier %d;", w, warp.waiting_barrier);
      text += line;
      continue;
    }
    for (int i = 0; i < warp.n_groups; i++) {
      Group &group = warp.groups[i];
      snprintf(line, sizeof line, " warp %d lanes %s wait at %s for lanes %s;", w, lanes_text(group.arrived).c_str(),
               op_text(group.op, group.members, group.barrier, group.count, group.site.line).c_str(),
               lanes_text(group.members & ~group.arrived).c_str());
      text += line;
    }
  }
  if (exited) text += " warps " + warps_text(exited) + " exited;";
  text.pop_back();
  return text;
}

inline void reset_cta() {
  for (int w = 0; w < g.n_warps; w++) {
    Warp &warp = g.warps[w];
    int first = w * kWarpSize;
    int lanes = g.n_threads - first < kWarpSize ? g.n_threads - first : kWarpSize;
    warp.live = lanes == kWarpSize ? 0xffffffffu : (1u << lanes) - 1u;
    warp.n_groups = 0;
    warp.waiting = kNone;
    warp.waiting_barrier = -1;
  }
  for (Barrier &b : g.barriers) b = Barrier{};
  // Poison the dynamic shared memory: a load before any store reads NaN.
  unsigned char *shared = reinterpret_cast<unsigned char *>(SINGE_HOST_DYNAMIC_SHARED);
  size_t words = (g.shared_bytes + 7) / 8;
  for (size_t i = 0; i < words; i++) memcpy(shared + 8 * i, &kPoison, 8);
  reset_schedule();
  g.done = 0;
}

// Run CTA g.block_idx to completion; false (with g.status, g.error) on a deadlock or misuse.
inline bool run_cta() {
  reset_cta();
  for (int t = 0; t < g.n_threads; t++) {
    Fiber &f = g.fibers[t];
    f.tid = t;
    f.warp = t / kWarpSize;
    f.lane = t % kWarpSize;
    f.thread_idx = uint3{unsigned(t) % g.block.x, unsigned(t) / g.block.x % g.block.y,
                         unsigned(t) / (g.block.x * g.block.y)};
    f.op = kNone;
    f.value = f.result = 0;
    prepare_stack(f);
    enqueue(&f);
  }
  Fiber *first = take_ready();
  first->state = kRunning;
  jump(nullptr, first);  // back here when no fiber is ready or one failed
  g.current = nullptr;
  if (g.status != kSuccess) return false;
  if (g.done != g.n_threads) {
    g.status = kDeadlock;
    g.error = "deadlock: " + deadlock_report() + " [" + where_text() + "]";
    return false;
  }
  for (int id = 0; id < kBarriers; id++) {
    Barrier &b = g.barriers[id];
    if (b.expected == 0) continue;
    char text[256];
    snprintf(text, sizeof text, "barrier %d, generation %d is incomplete when the CTA exits: %d of %d threads "
             "arrived (bar.sync: warps %s; bar.arrive: warps %s)", id, b.generation, b.arrived, b.expected,
             warps_text(b.sync_warps).c_str(), warps_text(b.arrive_warps).c_str());
    g.status = kMisuse;
    g.error = std::string("misuse: ") + text + " [" + where_text() + "]";
    return false;
  }
  return true;
}

inline size_t shared_limit(void (*kernel)()) {
  auto found = g.shared_limits.find(kernel);
  return found == g.shared_limits.end() ? SINGE_HOST_DEFAULT_SHARED_BYTES : found->second;
}

template <class Kernel>
inline int set_shared(Kernel *kernel, size_t bytes) {
  void (*key)() = reinterpret_cast<void (*)()>(kernel);
  if (bytes > SINGE_HOST_MAX_SHARED_BYTES) {
    g.last_status = kInvalidConfiguration;
    return kInvalidConfiguration;
  }
  g.shared_limits[key] = bytes;
  return kSuccess;
}

inline int invalid_launch(const std::string &message) {
  g.status = g.last_status = kInvalidConfiguration;
  g.error = "invalid launch: " + message + " [kernel " + g.kernel + "]";
  return g.status;
}

template <class Body>
inline void call_body(void *body) {
  (*static_cast<Body *>(body))();
}

// Run every CTA of a launch in order; the status (0: success).
template <class Kernel, class Body>
inline int launch(const char *name, Kernel *kernel, dim3 grid, dim3 block, size_t shared_bytes, Body body) {
  g.kernel = name;
  g.error.clear();
  g.status = kSuccess;
  g.switches = g.collectives = g.generations = g.ctas = 0;
  g.rng = g.seed;
  unsigned long long threads = 1ull * block.x * block.y * block.z;
  if (threads == 0 || threads > kMaxThreads)
    return invalid_launch("block of " + std::to_string(threads) + " threads (1..1024)");
  if (1ull * grid.x * grid.y * grid.z == 0) return invalid_launch("empty grid");
  size_t limit = shared_limit(reinterpret_cast<void (*)()>(kernel));
  if (shared_bytes > limit)
    return invalid_launch(std::to_string(shared_bytes) + " B of dynamic shared memory, more than the " +
                          std::to_string(limit) + " B allowed (SINGE_SET_SHARED raises the limit)");
  if (g.grid_limit && grid.x > g.grid_limit) grid.x = g.grid_limit;
  g.grid = grid;
  g.block = block;
  g.shared_bytes = shared_bytes;
  g.n_threads = int(threads);
  g.n_warps = (g.n_threads + kWarpSize - 1) / kWarpSize;
  g.body = &call_body<Body>;
  g.body_arg = &body;
  if (!allocate_stacks(g.n_threads)) {
    g.status = g.last_status = kResources;
    g.error = "cannot allocate fiber stacks";
    return g.status;
  }
  for (unsigned z = 0; z < grid.z; z++)
    for (unsigned y = 0; y < grid.y; y++)
      for (unsigned x = 0; x < grid.x; x++) {
        g.block_idx = dim3(x, y, z);
        g.ctas++;
        if (!run_cta()) {
          g.last_status = g.status;
          return g.status;
        }
      }
  g.last_status = kSuccess;
  return kSuccess;
}

inline int take_status() {
  int status = g.last_status;
  g.last_status = kSuccess;
  return status;
}

// ---------------------------------------------------------------------------------------------
// The device-side entry points.

inline Fiber *self() { return g.current; }

template <class T>
inline uint64_t to_bits(T value) {
  static_assert(sizeof(T) <= 8, "shuffles move at most 8 bytes");
  uint64_t bits = 0;
  memcpy(&bits, &value, sizeof(T));
  return bits;
}

template <class T>
inline T from_bits(uint64_t bits) {
  T value;
  memcpy(&value, &bits, sizeof(T));
  return value;
}

template <class T>
inline T shuffle(Site site, Op op, unsigned mask, T value, int source, int width) {
  Fiber *f = self();
  if (width <= 0 || width > kWarpSize || (width & (width - 1))) {
    char text[128];
    snprintf(text, sizeof text, "warp %d lane %d: shuffle width %d is not a power of 2 in 1..32", f->warp, f->lane,
             width);
    fail(kMisuse, text);
  }
  f->op = op;
  f->site = site;
  f->mask = mask;
  f->source = source;
  f->width = width;
  f->value = to_bits(value);
  collective();
  f->op = kNone;
  return from_bits<T>(f->result);
}

inline void bar(Site site, Op op, int id, int count) {
  Fiber *f = self();
  f->op = op;
  f->site = site;
  f->barrier = id;
  f->count = count;
  collective();
  f->op = kNone;
}

inline unsigned warp_mask(unsigned mask = 0xffffffffu) { return mask; }

inline void syncwarp(Site site, unsigned mask) {
  Fiber *f = self();
  f->op = kSyncWarp;
  f->site = site;
  f->mask = mask;
  collective();
  f->op = kNone;
}

}  // namespace singe_host

// ---------------------------------------------------------------------------------------------
// CUDA built-ins.

#define threadIdx (::singe_host::g.current->thread_idx)
#define blockIdx (::singe_host::g.block_idx)
#define blockDim (::singe_host::g.block)
#define gridDim (::singe_host::g.grid)
#define warpSize 32

// The warp collectives are macros so that each use site gets its own id: the
// lanes of a warp must meet at the same site (PTX requires it before sm_70;
// from sm_70 on, shfl.sync instances with the same mask join whatever their
// site, and lanes then read values meant for another instruction: a kernel
// calling __shfl_sync from both arms of a divergent branch is almost surely
// wrong, so it is reported unless singe_host_set_checks(0) turned this off).
namespace singe_host {
template <class T>
inline T shfl(Site site, unsigned mask, T var, int src_lane, int width = 32) {
  return shuffle(site, kShflIdx, mask, var, src_lane, width);
}
template <class T>
inline T shfl_up(Site site, unsigned mask, T var, unsigned delta, int width = 32) {
  return shuffle(site, kShflUp, mask, var, int(delta), width);
}
template <class T>
inline T shfl_down(Site site, unsigned mask, T var, unsigned delta, int width = 32) {
  return shuffle(site, kShflDown, mask, var, int(delta), width);
}
template <class T>
inline T shfl_xor(Site site, unsigned mask, T var, int lane_mask, int width = 32) {
  return shuffle(site, kShflXor, mask, var, lane_mask, width);
}
}  // namespace singe_host

#define SINGE_HOST_SITE (::singe_host::Site{__COUNTER__, __LINE__})
#define __shfl_sync(...) ::singe_host::shfl(SINGE_HOST_SITE, __VA_ARGS__)
#define __shfl_up_sync(...) ::singe_host::shfl_up(SINGE_HOST_SITE, __VA_ARGS__)
#define __shfl_down_sync(...) ::singe_host::shfl_down(SINGE_HOST_SITE, __VA_ARGS__)
#define __shfl_xor_sync(...) ::singe_host::shfl_xor(SINGE_HOST_SITE, __VA_ARGS__)
#define __syncwarp(...) ::singe_host::syncwarp(SINGE_HOST_SITE, ::singe_host::warp_mask(__VA_ARGS__))
#define __syncthreads() \
  ::singe_host::bar(SINGE_HOST_SITE, ::singe_host::kBarSync, 0, ::singe_host::g.n_warps * ::singe_host::kWarpSize)
inline void __threadfence_block() {}
inline void __threadfence() {}

template <class T>
inline T __ldg(const T *address) {
  return *address;
}

inline double __longlong_as_double(long long bits) {
  double value;
  memcpy(&value, &bits, sizeof value);
  return value;
}

inline long long __double_as_longlong(double value) {
  long long bits;
  memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline int __double2hiint(double value) { return (int)(__double_as_longlong(value) >> 32); }
inline int __double2loint(double value) { return (int)(unsigned)__double_as_longlong(value); }

inline double __hiloint2double(int high, int low) {
  return __longlong_as_double((long long)(((unsigned long long)(unsigned)high << 32) | (unsigned)low));
}

// Atomics: fibers never preempt each other, so a plain read-modify-write is atomic.
template <class T>
inline T atomicAdd(T *address, T value) {
  T old = *address;
  *address = old + value;
  return old;
}

inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }
inline long long min(long long a, long long b) { return a < b ? a : b; }
inline long long max(long long a, long long b) { return a > b ? a : b; }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline double __fma_rn(double a, double b, double c) { return fma(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline double __drcp_rn(double a) { return 1.0 / a; }
inline double __dsqrt_rn(double a) { return sqrt(a); }
// singe_rcp_approx (templates/common.cuh.j2; PTX rcp.approx.ftz.f64, MUFU.RCP64H on the GPU), modeled:
// the reciprocal of d's high word, kept to SINGE_HOST_RCP_BITS bits of mantissa (20: the high word;
// relative error below 2^-19).  tests/test_log.py also runs singe_log with fewer.
#ifndef SINGE_HOST_RCP_BITS
#define SINGE_HOST_RCP_BITS 20
#endif
inline double singe_rcp_approx(double d) {
  const double r = 1.0 / __hiloint2double(__double2hiint(d), 0);
  return __longlong_as_double(__double_as_longlong(r) & ~((1LL << (52 - SINGE_HOST_RCP_BITS)) - 1));
}

// ---------------------------------------------------------------------------------------------
// The macros of templates/common.cuh.j2.

#define SINGE_BAR_SYNC(id, threads) ::singe_host::bar(SINGE_HOST_SITE, ::singe_host::kBarSync, (id), (threads))
#define SINGE_BAR_ARRIVE(id, threads) ::singe_host::bar(SINGE_HOST_SITE, ::singe_host::kBarArrive, (id), (threads))
#define SINGE_FENCE() ((void)0)  // the host runtime forwards nothing: a no-op
#define SINGE_PREFETCH(address) ((void)(address))  // a hint to the GPU's L1: nothing to do on the host
// setmaxnreg (sm_90a) changes how many physical registers a warpgroup holds, never a value: the
// compiled code reads no register it has not written, and a thread here keeps its variables in
// its own stack whatever the count.  A no-op is the whole of its meaning on the CPU; the budgets'
// rules are checked by the compiler (singe.programs.plan.budget_problems) and the simulator.
#define SINGE_SETMAXNREG_INC(n) ((void)0)
#define SINGE_SETMAXNREG_DEC(n) ((void)0)
#define SINGE_SET_SHARED(kernel, bytes) ::singe_host::set_shared(&(kernel), (bytes))
#define SINGE_LAUNCH(kernel, grid, block, shared_bytes, stream, ...)                                  \
  ((void)(stream), ::singe_host::launch(#kernel, &(kernel), dim3(grid), dim3(block), size_t(shared_bytes), \
                                        [=]() { kernel(__VA_ARGS__); }))
#define SINGE_LAUNCH_STATUS() (::singe_host::take_status())
// The host's device holds two CTAs at once: a persistent grid of two, each CTA looping over every other slab.
#define SINGE_RESIDENT_CTAS(kernel, threads, shared_bytes, cache) ((void)(cache), ::singe_host::kResidentCtas)

// ---------------------------------------------------------------------------------------------
// C API for singe/host.py.

extern "C" {

// schedule: 0 deterministic (FIFO: lanes in order), 1 random, 2 priority (both seeded by seed);
// applies to later launches (each launch starts again from the seed).
__attribute__((visibility("default"), used)) int singe_host_configure(int schedule, unsigned long long seed) {
  if (schedule < ::singe_host::kDeterministic || schedule > ::singe_host::kPriority) return 1;
  ::singe_host::g.schedule = static_cast<::singe_host::Schedule>(schedule);
  ::singe_host::g.seed = seed;
  return 0;
}

// The message of the last failed launch ("" after a successful one).
__attribute__((visibility("default"), used)) const char *singe_host_last_error(void) {
  return ::singe_host::g.error.c_str();
}

// Counters of the last launch: context switches, completed collectives,
// completed barrier generations, CTAs run.
__attribute__((visibility("default"), used)) void singe_host_statistics(unsigned long long *out) {
  out[0] = ::singe_host::g.switches;
  out[1] = ::singe_host::g.collectives;
  out[2] = ::singe_host::g.generations;
  out[3] = ::singe_host::g.ctas;
}

// Run at most max_ctas CTAs along x (0: no limit), as if the grid were that
// small: only for grid-stride kernels (the warp-specialized template loops over
// slabs with stride gridDim.x), where each CTA then handles several slabs.
__attribute__((visibility("default"), used)) void singe_host_set_grid_limit(unsigned max_ctas) {
  ::singe_host::g.grid_limit = max_ctas;
}

// same_site != 0 (the default): the lanes of a warp must meet at the same
// call site of each collective (shuffle, barrier), else the launch stops
// with a misuse naming both lines.  0: lanes join any instance with the same
// mask and operands (PTX sm_70+), as divergent code would on the GPU.
__attribute__((visibility("default"), used)) void singe_host_set_checks(int same_site) {
  ::singe_host::g.same_site = same_site != 0;
}

// Stack size of each fiber [bytes]; stacks are made again at the next launch.
__attribute__((visibility("default"), used)) int singe_host_set_stack_size(unsigned long long bytes) {
  if (bytes < 16384) return 1;
  ::singe_host::free_stacks();
  ::singe_host::g.stack_bytes = size_t(bytes);
  return 0;
}
}

#endif  // SINGE_HOST_RUNTIME_H

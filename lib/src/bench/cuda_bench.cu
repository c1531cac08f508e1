// `gtranspose --bench` on a GPU: every selected kernel and vendor peer timed
// in device memory beside a cudaMemcpy D2D of the same bytes, measured in the
// same run, each result verified on the device from the position pattern.
//
// One case's life: every row (the copy, the kernels, the peers) warms up in
// turn; then round r times repetition r of every row, one row after another,
// so that a stall of the machine or a change of clocks lands on all rows
// alike; then each row's output is poisoned (kPoison), written once and
// verified. Matrices smaller than kRotateBytes rotate through several
// buffers, each launch (whichever row's) taking the next, so a launch reads
// DRAM rather than the L2 that the previous launch filled.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench_cuda.cuh"
#include "bench/stats.hpp"
#include "gtranspose/bench.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/kernels.hpp"
#include "gtranspose/pattern.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {

namespace {

using namespace bench;

constexpr const char* kReference = "cudaMemcpy D2D";
// An event pair adds microseconds of its own (H100, 2026-11-22: a 2048^2 f32
// D2D copy timed 0.0271 ms alone and 0.0144 ms in batches of 13), so
// launches shorter than kBatchBelowMs are timed kBatchTargetMs at a time.
constexpr double kBatchBelowMs = 0.25;
constexpr double kBatchTargetMs = 1.0;
constexpr int kMaxBatch = 256;
// Sweep rows stop adding repetitions after this much timed work, so a
// sweep over 2^8..2^15 and every kernel stays within a minute or two.
constexpr double kSweepRowBudgetMs = 100;
constexpr int kSweepMinReps = 3;
// The H100 idles at a 345 MHz SM clock (nvidia-smi between runs,
// 2026-11-22), and a 2048^2 f32 D2D copy timed right after a few short
// warm-up launches ran at 929 GB/s against 2334 GB/s in an earlier run:
// every row warms up for this much GPU time first.
constexpr double kMinWarmupMs = 20;
constexpr double kMaxWarmupLaunches = 20000;
// Room left for the CUDA context, cuBLAS and the verification counters.
constexpr std::uint64_t kMemoryMargin = 256ull << 20;

// Block shapes of the block sweep: seed 004 swept square blocks of 4 to 32
// and found 256x1 fastest on a Jetson; the rest are the common tilings.
constexpr unsigned kBlockShapes[][2] = {{32, 8},  {32, 32}, {16, 16}, {8, 8},   {4, 4},   {32, 4},  {32, 16},
                                        {64, 4},  {64, 8},  {128, 2}, {128, 1}, {256, 1}, {16, 32}, {8, 32}};

// `nbuf` input and output buffers, `stride` bytes apart.
struct Slabs {
  std::uint64_t stride = 0;
  std::uint64_t nbuf = 1;
  std::uint64_t launches = 0;  // so far, every candidate's: launch k uses buffer k mod nbuf
  DeviceBuffer in, out;
};

struct Ctx {
  const BenchOptions& o;
  std::size_t es;
  std::string dtype;
  std::vector<const kernels::KernelInfo*> kernels;
  std::string auto_note;  // with --kernel auto: the run that chose the kernel
  Stream stream;
  PeerHandles peers;
  std::uint64_t l2_bytes = 0;
  std::string broken;  // set once the CUDA context is unusable: later rows are not run
};


BenchRow blank_row(const Ctx& x, const std::string& name, const std::string& config, Shape shape) {
  BenchRow row;
  row.name = name;
  row.dtype = x.dtype;
  row.shape = shape;
  row.config = config;
  return row;
}

void add_note_to(std::string& notes, const std::string& note) {
  if (note.empty()) return;
  notes += notes.empty() ? note : "; " + note;
}

void add_note(BenchRow& row, const std::string& note) { add_note_to(row.note, note); }

float elapsed_ms(const Event& a, const Event& b) {
  float ms = 0;
  GT_CUDA_CHECK(cudaEventElapsedTime(&ms, a.get(), b.get()));
  return ms;
}

// One candidate of a case: its row, and its timing while the rounds run.
struct Entry {
  Candidate c;
  Shape shape;
  BenchRow row;         // the result, or why it was not run
  bool pending = true;  // still to be timed and verified
  bool sweep = false;   // timed with the sweep's short budget
  int batch = 1, reps = 0;
  std::vector<Event> ev;  // reps event pairs
};

// Each launch takes the next buffer, whichever candidate makes it, so no
// launch reads what the one before it left in the L2.
void launch_next(const Candidate& c, Slabs& s, cudaStream_t st) {
  const std::uint64_t k = s.launches++ % s.nbuf;
  unsigned char* out = s.out.get() + k * s.stride;
  if (c.kind == CandidateKind::inplace) c.launch(out, nullptr, st);
  else c.launch(s.in.get() + k * s.stride, out, st);
}

// A row that was not run, saying why: by design (RowStatus::skipped), or
// because of a failure (RowStatus::failed).
BenchRow not_run(const Ctx& x, const Candidate& c, Shape shape, const std::string& why, RowStatus status) {
  BenchRow row = blank_row(x, c.name, c.config, shape);
  row.status = status;
  add_note(row, c.note);
  add_note(row, why);
  return row;
}

// fn() for entry e, except that a CUDA failure becomes e's row. When the
// failure broke the context (an illegal address, say), every later step of
// every entry says so instead of running: the table so far still comes back.
template <class F>
void guarded(Ctx& x, Entry& e, F&& fn) {
  if (!e.pending) return;
  if (!x.broken.empty()) {
    e.row = not_run(x, e.c, e.shape, "not run: " + x.broken, RowStatus::failed);
    e.pending = false;
    return;
  }
  try {
    fn();
  } catch (const Error& err) {
    if (err.kind() != ErrorKind::cuda) throw;
    e.row = not_run(x, e.c, e.shape, std::string("failed: ") + err.what(), RowStatus::failed);
    e.pending = false;
    cudaGetLastError();
    const cudaError_t h = cudaDeviceSynchronize();
    if (h != cudaSuccess) x.broken = "the CUDA context broke during " + e.c.name + " (" + cudaGetErrorString(h) + ")";
  }
}

// Warm-up, in two parts. First opts.warmup launches (at least one), so
// module loading and cuBLAS's first-call set-up never land in a timed rep.
// Then launches until kMinWarmupMs of GPU time has passed, so the clocks
// have left idle, and the time of one launch is estimated from those: it
// sets the batch and, in sweeps, the number of repetitions.
void warm_up(Ctx& x, Entry& e, Slabs& s) {
  const std::uint64_t bytes = checked_mul(e.shape.elems(), x.es, "bench matrix bytes");
  if (e.c.kind != CandidateKind::inplace && bytes != s.stride)
    throw Error(ErrorKind::internal, "bench: buffer stride differs from the matrix");
  cudaStream_t st = x.stream.get();
  const int warm = std::max(1, x.o.warmup);
  Event w0, w1, w2;
  GT_CUDA_CHECK(cudaEventRecord(w0.get(), st));
  for (int i = 0; i < warm; ++i) launch_next(e.c, s, st);
  GT_CUDA_CHECK(cudaEventRecord(w1.get(), st));
  GT_CUDA_CHECK(cudaEventSynchronize(w1.get()));
  const double first_ms = elapsed_ms(w0, w1);
  const double first_est = std::max(1e-4, first_ms / warm);
  const int more = int(std::clamp<double>(std::ceil((kMinWarmupMs - first_ms) / first_est), 1, kMaxWarmupLaunches));
  for (int i = 0; i < more; ++i) launch_next(e.c, s, st);
  GT_CUDA_CHECK(cudaEventRecord(w2.get(), st));
  GT_CUDA_CHECK(cudaEventSynchronize(w2.get()));
  const double est = std::max(1e-4, double(elapsed_ms(w1, w2)) / more);
  e.batch = 1;
  if (est < kBatchBelowMs) e.batch = int(std::min<double>(kMaxBatch, std::ceil(kBatchTargetMs / est)));
  int reps = x.o.reps;
  if (e.sweep) reps = int(std::clamp<double>(std::floor(kSweepRowBudgetMs / (est * e.batch)), kSweepMinReps, x.o.reps));
  e.reps = std::max(1, reps);
  e.ev = std::vector<Event>(2 * std::size_t(e.reps));
}

// The row from e's timed repetitions, then its output verified: out of
// place every buffer poisoned and written once by e, in place the matrix
// refilled and transposed once (two applications restore the input, so the
// timed launches prove nothing).
void finish(Ctx& x, Entry& e, Slabs& s) {
  cudaStream_t st = x.stream.get();
  BenchRow row = blank_row(x, e.c.name, e.c.config, e.shape);
  add_note(row, e.c.note);
  std::vector<double> ms(std::size_t(e.reps));
  for (int r = 0; r < e.reps; ++r) ms[r] = elapsed_ms(e.ev[2 * r], e.ev[2 * r + 1]) / e.batch;
  row.median_ms = median(ms);
  row.min_ms = *std::min_element(ms.begin(), ms.end());
  row.max_ms = *std::max_element(ms.begin(), ms.end());
  const std::uint64_t bytes = checked_mul(e.shape.elems(), x.es, "bench matrix bytes");
  row.gbps = row.median_ms > 0 ? 2.0 * double(bytes) / (row.median_ms * 1e-3) / 1e9 : 0;
  if (e.batch > 1) add_note(row, std::to_string(e.batch) + " launches per event pair");

  VerifySpec v;
  v.rows = e.shape.rows;
  v.cols = e.shape.cols;
  v.elem_size = x.es;
  v.seed = x.o.seed;
  v.transposed = e.c.kind != CandidateKind::copy;
  v.lanes = e.c.lanes;
  VerifyResult res;
  if (e.c.kind == CandidateKind::inplace) {
    fill_pattern(s.out.get(), e.shape.rows, e.shape.cols, x.es, x.o.seed, 1, st);
    e.c.launch(s.out.get(), nullptr, st);
    res = verify_pattern(s.out.get(), v, st);
  } else {
    GT_CUDA_CHECK(cudaMemsetAsync(s.out.get(), kPoison, s.stride * s.nbuf, st));
    for (std::uint64_t b = 0; b < s.nbuf; ++b) e.c.launch(s.in.get() + b * s.stride, s.out.get() + b * s.stride, st);
    v.matrices = s.nbuf;
    res = verify_pattern(s.out.get(), v, st);
  }
  row.verified = res.mismatches == 0;
  row.status = row.verified ? RowStatus::ok : RowStatus::failed;
  if (res.mismatches) {
    std::string where = "first at out(" + std::to_string(res.first_row) + ", " + std::to_string(res.first_col) + ")";
    if (s.nbuf > 1) where += " of buffer " + std::to_string(res.first_matrix);
    add_note(row, "WRONG: " + std::to_string(res.mismatches) + " mismatches, " + where);
    // Peers run beside any kernel, so `auto` brings them back too.
    std::string again = "the bench with {kernel} " + (e.c.from_registry ? e.c.name : std::string("auto")) +
                        " {shape} " + to_string(e.shape) + " {dtype} " + x.dtype + " {seed} " + std::to_string(x.o.seed);
    if (e.c.from_registry) again += ", without peers";
    if (!e.c.config.empty()) again += ", in the sweep (block " + e.c.config + ")";
    add_note(row, "reproduce: " + again);
  }
  if (res.nan_only) add_note(row, std::to_string(res.nan_only) + " elements differ only in NaN payload");
  e.row = std::move(row);
  e.pending = false;
}

// Every entry of a case timed in rounds: each warms up in turn, then round r
// times repetition r of every entry, one after another, so that a stall of
// the machine or a change of clocks lands on all of them alike rather than
// on the reps of one. Then each is verified.
void measure_all(Ctx& x, std::vector<Entry>& entries, Slabs& s) {
  cudaStream_t st = x.stream.get();
  for (Entry& e : entries) guarded(x, e, [&] { warm_up(x, e, s); });
  int rounds = 0;
  for (const Entry& e : entries)
    if (e.pending) rounds = std::max(rounds, e.reps);
  for (int r = 0; r < rounds; ++r)
    for (Entry& e : entries)
      if (e.pending && r < e.reps)
        guarded(x, e, [&] {
          GT_CUDA_CHECK(cudaEventRecord(e.ev[2 * r].get(), st));
          for (int j = 0; j < e.batch; ++j) launch_next(e.c, s, st);
          GT_CUDA_CHECK(cudaEventRecord(e.ev[2 * r + 1].get(), st));
        });
  const cudaError_t sync = cudaStreamSynchronize(st);
  if (sync != cudaSuccess && x.broken.empty())
    x.broken = std::string("the CUDA context broke while the rounds ran (") + cudaGetErrorString(sync) + ")";
  for (Entry& e : entries) guarded(x, e, [&] { finish(x, e, s); });
}

CandidateKind kind_of(kernels::Kind k) {
  switch (k) {
    case kernels::Kind::copy: return CandidateKind::copy;
    case kernels::Kind::inplace: return CandidateKind::inplace;
    default: return CandidateKind::transpose;
  }
}

Candidate kernel_candidate(const kernels::KernelInfo& k, const kernels::Problem& p, std::string config) {
  Candidate c;
  c.name = k.name;
  c.config = std::move(config);
  c.kind = kind_of(k.kind);
  c.from_registry = true;
  c.launch = [fn = k.launch, p](const void* in, void* out, cudaStream_t st) { fn(in, out, p, st); };
  return c;
}

std::uint64_t isqrt(std::uint64_t v) {
  auto r = static_cast<std::uint64_t>(std::sqrt(double(v)));
  while (r > 0 && r * r > v) --r;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r;
}

// The shape a kernel runs on in a case of `shape`: in-place kernels that
// need a square get, in a rectangular case, the largest square that fits
// its buffers.
Shape shape_for(const kernels::KernelInfo& k, std::size_t es, Shape shape) {
  if (k.kind != kernels::Kind::inplace || shape.rows == shape.cols) return shape;
  kernels::Problem p;
  p.rows = shape.rows;
  p.cols = shape.cols;
  p.elem_size = es;
  if (k.supports(p, nullptr)) return shape;  // inplace-rect takes the rectangle itself
  // The largest square of no more elements, with its side rounded down to a
  // multiple of 128 when it is that big, so that an aligned rectangle's row
  // measures the path a user's aligned square takes; one less (an odd side:
  // rows not whole 16-byte words, or for 16-byte elements not whole 64-byte
  // sectors) where a side of the rectangle is not a multiple of 128 either,
  // so that the bench's odd row measures in place at an odd size too.
  std::uint64_t n = std::max<std::uint64_t>(1, isqrt(shape.elems()));
  if (n >= 128) {
    n -= n % 128;
    if (shape.rows % 128 != 0 || shape.cols % 128 != 0) n -= 1;
  }
  return {n, n};
}

kernels::Problem problem_for(const Ctx& x, Shape shape) {
  kernels::Problem p;
  p.rows = shape.rows;
  p.cols = shape.cols;
  p.elem_size = x.es;
  return p;
}

// The first elements of the filled input, copied back and compared with the
// host's pattern_bytes: the device fill and check write the pattern as whole
// words, and this keeps them honest against the shared definition.
void cross_check_fill(const Ctx& x, const Slabs& s, Shape shape) {
  const std::uint64_t n = std::min<std::uint64_t>(shape.elems(), 64);
  std::vector<unsigned char> h(n * x.es);
  GT_CUDA_CHECK(cudaMemcpyAsync(h.data(), s.in.get(), h.size(), cudaMemcpyDeviceToHost, x.stream.get()));
  GT_CUDA_CHECK(cudaStreamSynchronize(x.stream.get()));
  for (std::uint64_t i = 0; i < n; ++i) {
    if (!pattern_matches(h.data() + i * x.es, i / shape.cols, i % shape.cols, x.o.seed, x.es))
      throw Error(ErrorKind::internal, "bench: the device fill disagrees with pattern_bytes at (" +
                                           std::to_string(i / shape.cols) + ", " + std::to_string(i % shape.cols) +
                                           ")");
  }
}

// One matrix size: the reference copy, every selected kernel, the peers and,
// when asked, the block-shape sweep. Appends rows and fills their % of copy.
void run_case(Ctx& x, BenchResult& out, Shape shape, bool sweep, bool block_sweep) {
  const std::uint64_t bytes = checked_mul(shape.elems(), x.es, "bench matrix bytes");
  const std::uint64_t nbuf = rotation_buffers(bytes);
  const std::uint64_t need = checked_mul(checked_mul(bytes, nbuf, "bench buffers"), 2, "bench buffers");
  Candidate ref;
  ref.name = kReference;
  ref.kind = CandidateKind::copy;
  ref.launch = [bytes](const void* in, void* o, cudaStream_t st) {
    GT_CUDA_CHECK(cudaMemcpyAsync(o, in, bytes, cudaMemcpyDeviceToDevice, st));
  };
  if (!x.broken.empty()) {
    out.rows.push_back(not_run(x, ref, shape, "not run: " + x.broken, RowStatus::failed));
    return;
  }

  std::size_t free_b = 0, total_b = 0;
  GT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  if (need + kMemoryMargin > free_b) {
    const std::string why = "needs " + format_bytes(need) + " of GPU memory for " + to_string(shape) + " " + x.dtype +
                            ", " + format_bytes(free_b) + " free";
    if (!sweep) throw Error(ErrorKind::usage, "the bench " + why + ": choose a smaller {shape}");
    out.rows.push_back(not_run(x, ref, shape, "skipped: " + why, RowStatus::skipped));
    return;
  }
  Slabs s;
  s.stride = bytes;
  s.nbuf = nbuf;
  s.in = DeviceBuffer(bytes * nbuf, "try a smaller {shape}");
  s.out = DeviceBuffer(bytes * nbuf, "try a smaller {shape}");
  fill_pattern(s.in.get(), shape.rows, shape.cols, x.es, x.o.seed, nbuf, x.stream.get());
  cross_check_fill(x, s, shape);

  // In place the output buffers are the matrices: they hold the pattern, not
  // zeros, from the start (then whatever the candidates before wrote).
  fill_pattern(s.out.get(), shape.rows, shape.cols, x.es, x.o.seed, nbuf, x.stream.get());

  std::vector<Entry> entries;
  const auto add = [&](const Candidate& c, Shape sh, bool short_budget) {
    Entry e;
    e.c = c;
    e.shape = sh;
    e.sweep = short_budget;
    entries.push_back(std::move(e));
  };
  const auto add_row = [&](BenchRow row) {
    Entry e;
    e.row = std::move(row);
    e.pending = false;
    entries.push_back(std::move(e));
  };
  add(ref, shape, sweep);

  for (const kernels::KernelInfo* k : x.kernels) {
    const Shape ks = shape_for(*k, x.es, shape);
    const kernels::Problem p = problem_for(x, ks);
    Candidate c = kernel_candidate(*k, p, "");
    if (ks != shape) c.note = "square " + to_string(ks) + ": in place needs a square";
    add_note_to(c.note, x.auto_note);
    std::string why;
    if (!k->supports(p, &why))
      add_row(not_run(x, c, ks, "skipped: " + (why.empty() ? std::string("not supported") : why), RowStatus::skipped));
    else add(c, ks, sweep);
  }

  if (x.o.peers) {
    std::vector<Candidate> peers;
    try {
      if (x.broken.empty()) peers = make_peers(x.peers, x.stream.get(), shape.rows, shape.cols, x.es, x.dtype);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::cuda) throw;
      Candidate c;
      c.name = "cuBLAS";
      add_row(not_run(x, c, shape, std::string("peers not set up: ") + e.what(), RowStatus::skipped));
    }
    for (const Candidate& c : peers) add(c, shape, sweep);
  }

  if (block_sweep) {
    // Only kernels that honour a block shape, and only the shapes they
    // accept: a row per refusal would bury the table.
    for (const kernels::KernelInfo* k : x.kernels) {
      if (!k->block_shape) continue;
      const Shape ks = shape_for(*k, x.es, shape);
      for (const auto& b : kBlockShapes) {
        kernels::Problem p = problem_for(x, ks);
        p.block_x = b[0];
        p.block_y = b[1];
        if (!k->supports(p, nullptr)) continue;
        add(kernel_candidate(*k, p, std::to_string(b[0]) + "x" + std::to_string(b[1])), ks, true);
      }
    }
  }

  measure_all(x, entries, s);
  const std::size_t first = out.rows.size();
  for (Entry& e : entries) out.rows.push_back(std::move(e.row));
  if (nbuf > 1) {
    add_note(out.rows[first], "each row rotates " + std::to_string(nbuf) + " buffer pairs (" + format_bytes(need) +
                                  ") past the " + format_bytes(x.l2_bytes) + " L2");
  }

  const double ref_gbps = out.rows[first].gbps;
  for (std::size_t i = first; i < out.rows.size(); ++i)
    out.rows[i].pct_of_copy = ref_gbps > 0 ? out.rows[i].gbps / ref_gbps * 100.0 : 0;
}

// The random-shape sweep: `random_shapes` shapes, each side uniform in
// 1..random_max, every selected kernel and peer on each (timed with the
// sweep's short budget per row); the table gets one summary row per kernel
// or peer: min, median and max of its % of copy over the shapes it ran.
void random_sweep(Ctx& x, BenchResult& r) {
  if (x.o.random_max < 1) throw Error(ErrorKind::usage, "the random sweep needs sides of at least 1");
  std::mt19937_64 rng(x.o.seed);
  std::uniform_int_distribution<std::uint64_t> side(1, x.o.random_max);
  BenchResult all;
  for (int i = 0; i < x.o.random_shapes; ++i) {
    const std::uint64_t rows = side(rng), cols = side(rng);
    run_case(x, all, {rows, cols}, true, false);
  }
  std::vector<std::string> names;
  for (const BenchRow& row : all.rows)
    if (std::find(names.begin(), names.end(), row.name) == names.end()) names.push_back(row.name);
  for (const std::string& name : names) {
    std::vector<double> pct, gbps;
    int failed = 0, skipped = 0;
    for (const BenchRow& row : all.rows) {
      if (row.name != name) continue;
      if (row.status == RowStatus::ok) {
        pct.push_back(row.pct_of_copy);
        gbps.push_back(row.gbps);
      } else if (row.status == RowStatus::failed) {
        ++failed;
      } else {
        ++skipped;
      }
    }
    BenchRow s = blank_row(x, name, "random x" + std::to_string(x.o.random_shapes), {x.o.random_max, x.o.random_max});
    s.status = failed ? RowStatus::failed : pct.empty() ? RowStatus::skipped : RowStatus::ok;
    s.verified = failed == 0 && !pct.empty();
    if (!pct.empty()) {
      std::sort(pct.begin(), pct.end());
      s.pct_of_copy = bench::median(pct);
      s.gbps = bench::median(gbps);
      char b[200];
      std::snprintf(b, sizeof b, "%% of copy over %zu shapes (sides 1..%llu, seed %llu): min %.1f, median %.1f, max %.1f",
                    pct.size(), static_cast<unsigned long long>(x.o.random_max),
                    static_cast<unsigned long long>(x.o.seed), pct.front(), s.pct_of_copy, pct.back());
      s.note = b;
    }
    if (skipped) add_note(s, std::to_string(skipped) + " shapes skipped by design");
    if (failed) add_note(s, std::to_string(failed) + " shapes FAILED: see the JSON's shape_rows");
    r.rows.push_back(s);
  }
  r.shape_rows = std::move(all.rows);
}

std::vector<const kernels::KernelInfo*> select_kernels(const BenchOptions& o, std::size_t es) {
  std::vector<const kernels::KernelInfo*> ks;
  if (o.kernel == "all") {
    for (const auto& k : kernels::registry()) ks.push_back(&k);
  } else if (o.kernel == "auto") {
    ks.push_back(&kernels::best(es));
  } else if (const kernels::KernelInfo* k = kernels::find(o.kernel)) {
    ks.push_back(k);
  } else {
    throw Error(ErrorKind::usage,
                "unknown kernel '" + o.kernel + "': choose all, auto or one of " + kernels::names());
  }
  return ks;
}

}  // namespace

BenchResult run_cuda_bench(const BenchOptions& o) {
  if (o.reps < 1) throw Error(ErrorKind::usage, "{reps} must be at least 1");
  if (o.warmup < 0) throw Error(ErrorKind::usage, "{warmup} must not be negative");
  if (o.sweep && (o.sweep_lo < 0 || o.sweep_hi > 20 || o.sweep_lo > o.sweep_hi))
    throw Error(ErrorKind::usage, "the sweep's sizes must satisfy 0 <= lo <= hi <= 20 (2^lo..2^hi per side)");
  o.shape.elems();  // throws on a shape whose element count overflows
  std::string why;
  if (cuda_device_count(&why) == 0) throw Error(ErrorKind::no_device, "the CUDA bench needs a GPU: " + why);
  GT_CUDA_CHECK(cudaSetDevice(0));

  Ctx x{o, dtype_size(o.dtype), dtype_name(o.dtype), select_kernels(o, dtype_size(o.dtype))};
  if (o.kernel == "auto") {
    const kernels::Choice ch = kernels::best_choice(x.es);
    if (ch.chosen_by) x.auto_note = std::string("auto, chosen by ") + ch.chosen_by;
  }
  int l2 = 0;
  GT_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  x.l2_bytes = std::uint64_t(l2);

  BenchResult r;
  r.device = cuda_device_name(0);
  r.reference = kReference;
  r.seed = o.seed;
  if (o.random_shapes > 0) {
    random_sweep(x, r);
    return r;
  }
  if (o.shape_given) {
    run_case(x, r, o.shape, false, o.sweep);
  } else {
    // About 1 GiB each: 16384 rows, and 16383 rows with one column more
    // (rows not 16-byte aligned, edge tiles on both sides).
    const std::uint64_t cols = (std::uint64_t(1) << 30) / (16384 * x.es);
    run_case(x, r, {16384, cols}, false, o.sweep);
    run_case(x, r, {16383, cols + 1}, false, false);
  }
  if (o.sweep) {
    for (int e = o.sweep_lo; e <= o.sweep_hi; ++e) {
      const std::uint64_t side = 1ull << e;
      run_case(x, r, {side, side}, true, false);
    }
  }
  return r;
}

}  // namespace gt

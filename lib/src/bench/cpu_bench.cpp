#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "bench/host_pattern.hpp"
#include "bench/stats.hpp"
#include "engine/cpu/host_buffer.hpp"
#include "engine/cpu/thread_pool.hpp"
#include "engine/cpu/tuning.hpp"
#include "gtranspose/bench.hpp"
#include "gtranspose/cpu_transpose.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/host.hpp"

namespace gt {

namespace {

using Clock = std::chrono::steady_clock;

struct Stats {
  double median_ms, min_ms, max_ms;
};

Stats summarise(const std::vector<double>& s) {
  const auto [lo, hi] = std::minmax_element(s.begin(), s.end());
  return {bench::median(s) * 1e3, *lo * 1e3, *hi * 1e3};
}

template <class F>
double time_once(F&& fn) {
  const auto t0 = Clock::now();
  fn();
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

}  // namespace

BenchResult run_cpu_bench(const BenchOptions& opts) {
  const std::size_t es = dtype_size(opts.dtype);
  const Shape shape = opts.shape;
  if (shape.rows == 0 || shape.cols == 0) throw Error(ErrorKind::usage, "bench shape must not be empty");
  if (opts.reps < 1) throw Error(ErrorKind::usage, "bench needs at least one repetition");
  // What the CPU bench cannot time is refused, not replaced by what it can:
  // a CUDA kernel's row would otherwise read as the CPU transposer's.
  if (opts.kernel != "all" && opts.kernel != "auto" && opts.kernel != "cpu-blocked")
    throw Error(ErrorKind::usage, "the CPU bench (chosen by {engine}, or by auto where no GPU is found) cannot run the "
                                  "CUDA kernel '" + opts.kernel + "': drop {kernel}, or bench it on a GPU with {engine} cuda");
  if (opts.sweep)
    throw Error(ErrorKind::usage, "{sweep} times CUDA kernels over sizes and block shapes: the CPU bench has none; "
                                  "drop {sweep}, or use {engine} cuda on a GPU");
  MatrixInfo info;
  info.shape = shape;
  info.elem_size = es;
  const std::uint64_t bytes = info.bytes();
  const std::uint64_t R = shape.rows, C = shape.cols;
  const int threads = cpu::resolve_threads(opts.threads);

  cpu::HostBuffer in(bytes), out(bytes);
  bench::fill_pattern_host(in.data(), shape, es, opts.seed, threads);

  // In place: the host API on the CPU engine, as a program calls it (a
  // square or R = kC through the engine's stages, any other rectangle by the
  // gcd decomposition), on `out` refilled from `in` before each repetition.
  HostOptions inplace_opts;
  inplace_opts.engine = EngineChoice::cpu;
  inplace_opts.run.threads = threads;
  RunReport inplace_report;
  bench::HostCheck inplace_check;

  // memcpy, the transpose and the in-place transpose alternate, so load
  // from other processes hits them alike and the ratios stay meaningful on
  // a busy machine.
  std::vector<double> t_copy, t_tr, t_ip;
  for (int i = 0; i < opts.warmup + opts.reps; ++i) {
    bench::poison(out.data(), bytes, threads);
    const double tc = time_once([&] { parallel_memcpy(out.data(), in.data(), bytes, threads); });
    // `out` now holds the pattern: transpose it in place.
    const double ti = time_once([&] { inplace_report = transpose_inplace(out.data(), R, C, es, inplace_opts); });
    // The last in-place result: element (c, r) of the C x R matrix must be pattern(r, c).
    if (i + 1 == opts.warmup + opts.reps)
      inplace_check = bench::check_transposed_pattern(out.data(), shape, es, opts.seed, threads);
    bench::poison(out.data(), bytes, threads);
    const double tt = time_once([&] { cpu_transpose(in.data(), R, C, C, out.data(), R, es, threads); });
    if (i >= opts.warmup) {
      t_copy.push_back(tc);
      t_tr.push_back(tt);
      t_ip.push_back(ti);
    }
  }

  // The last transpose is still in `out`: element (c, r) must be pattern(r, c).
  const bench::HostCheck check = bench::check_transposed_pattern(out.data(), shape, es, opts.seed, threads);
  // And the copy, once more, against its input.
  bench::poison(out.data(), bytes, threads);
  parallel_memcpy(out.data(), in.data(), bytes, threads);
  const bool copy_ok = std::memcmp(out.data(), in.data(), bytes) == 0;

  BenchResult res;
  res.device = "CPU, " + std::to_string(threads) + " thread" + (threads == 1 ? "" : "s");
  res.reference = "memcpy";
  res.seed = opts.seed;
  auto row = [&](const char* name, const std::vector<double>& t) {
    BenchRow b;
    b.name = name;
    b.dtype = dtype_name(opts.dtype);
    b.shape = shape;
    const Stats s = summarise(t);
    b.median_ms = s.median_ms;
    b.min_ms = s.min_ms;
    b.max_ms = s.max_ms;
    b.gbps = 2.0 * double(bytes) / (s.median_ms * 1e-3) / 1e9;
    return b;
  };
  BenchRow copy = row("memcpy", t_copy);
  copy.verified = copy_ok;
  copy.status = copy_ok ? RowStatus::ok : RowStatus::failed;
  if (!copy_ok) copy.note = "copy differs from its input";
  copy.pct_of_copy = 100.0;
  // A transpose's row: its check against the pattern, its share of the copy.
  auto transpose_row = [&](const char* name, const std::vector<double>& t, const bench::HostCheck& c) {
    BenchRow b = row(name, t);
    b.verified = c.mismatches == 0;
    b.status = b.verified ? RowStatus::ok : RowStatus::failed;
    if (!b.verified)
      b.note = std::to_string(c.mismatches) + " wrong elements, first at input (" + std::to_string(c.first / C) + ", " +
               std::to_string(c.first % C) + ")";
    b.pct_of_copy = copy.gbps > 0 ? 100.0 * b.gbps / copy.gbps : 0;
    return b;
  };
  BenchRow tr = transpose_row("cpu-blocked", t_tr, check);
  const cpu::CpuTuning tuning = cpu::default_tuning(es);
  tr.config = tuning.isa + " " + std::to_string(tuning.block_rows) + "x" + std::to_string(tuning.block_cols);
  BenchRow ip = transpose_row("cpu-inplace", t_ip, inplace_check);
  ip.config = inplace_report.kernel;
  res.rows.push_back(copy);
  res.rows.push_back(tr);
  res.rows.push_back(ip);
  return res;
}

}  // namespace gt

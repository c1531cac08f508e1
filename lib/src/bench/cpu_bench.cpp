#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "engine/cpu/host_buffer.hpp"
#include "engine/cpu/thread_pool.hpp"
#include "engine/cpu/tuning.hpp"
#include "gtranspose/bench.hpp"
#include "gtranspose/cpu_transpose.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/pattern.hpp"

namespace gt {

namespace {

using Clock = std::chrono::steady_clock;

void poison(unsigned char* p, std::uint64_t bytes, int threads) {
  cpu::parallel_bands(bytes, threads, [&](std::uint64_t b0, std::uint64_t b1) { std::memset(p + b0, 0xA5, b1 - b0); });
}

struct Stats {
  double median_ms, min_ms, max_ms;
};

Stats summarise(std::vector<double> s) {
  std::sort(s.begin(), s.end());
  const std::size_t n = s.size();
  const double med = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
  return {med * 1e3, s.front() * 1e3, s.back() * 1e3};
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
  MatrixInfo info;
  info.shape = shape;
  info.elem_size = es;
  const std::uint64_t bytes = info.bytes();
  const std::uint64_t R = shape.rows, C = shape.cols;
  const int threads = cpu::resolve_threads(opts.threads);

  cpu::HostBuffer in(bytes), out(bytes);
  cpu::parallel_bands(R, threads, [&](std::uint64_t r0, std::uint64_t r1) {
    for (std::uint64_t r = r0; r < r1; ++r)
      for (std::uint64_t c = 0; c < C; ++c) pattern_bytes(r, c, opts.seed, es, in.data() + (r * C + c) * es);
  });

  // memcpy and the transpose alternate, so load from other processes hits
  // both alike and the ratio stays meaningful on a busy machine.
  std::vector<double> t_copy, t_tr;
  for (int i = 0; i < opts.warmup + opts.reps; ++i) {
    poison(out.data(), bytes, threads);
    const double tc = time_once([&] { parallel_memcpy(out.data(), in.data(), bytes, threads); });
    poison(out.data(), bytes, threads);
    const double tt = time_once([&] { cpu_transpose(in.data(), R, C, C, out.data(), R, es, threads); });
    if (i >= opts.warmup) {
      t_copy.push_back(tc);
      t_tr.push_back(tt);
    }
  }

  // The last transpose is still in `out`: element (c, r) must be pattern(r, c).
  std::atomic<std::uint64_t> bad{0};
  std::atomic<std::uint64_t> first_bad{~std::uint64_t(0)};
  cpu::parallel_bands(C, threads, [&](std::uint64_t c0, std::uint64_t c1) {
    for (std::uint64_t c = c0; c < c1; ++c)
      for (std::uint64_t r = 0; r < R; ++r)
        if (!pattern_matches(out.data() + (c * R + r) * es, r, c, opts.seed, es)) {
          ++bad;
          std::uint64_t idx = r * C + c, cur = first_bad.load();
          while (idx < cur && !first_bad.compare_exchange_weak(cur, idx)) {
          }
        }
  });
  // And the copy, once more, against its input.
  poison(out.data(), bytes, threads);
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
  BenchRow tr = row("cpu-blocked", t_tr);
  const cpu::CpuTuning tuning = cpu::default_tuning(es);
  tr.config = tuning.isa + " " + std::to_string(tuning.block_rows) + "x" + std::to_string(tuning.block_cols);
  tr.verified = bad.load() == 0;
  tr.status = tr.verified ? RowStatus::ok : RowStatus::failed;
  if (!tr.verified) {
    const std::uint64_t f = first_bad.load();
    tr.note = std::to_string(bad.load()) + " wrong elements, first at input (" + std::to_string(f / C) + ", " +
              std::to_string(f % C) + ")";
  }
  tr.pct_of_copy = copy.gbps > 0 ? 100.0 * tr.gbps / copy.gbps : 0;
  res.rows.push_back(copy);
  res.rows.push_back(tr);
  return res;
}

}  // namespace gt

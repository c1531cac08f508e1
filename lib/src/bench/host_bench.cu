// The streaming engine's bench, host memory to host memory: a matrix in RAM
// through the GPU and back, beside the link's own rates measured in the same
// run (pinned H2D alone, D2H alone, and both at once, each way).
//
// A transpose of host-resident data crosses the link once each way, so its
// ceiling is the each-way rate with both directions busy; the pct column of
// the stream rows divides by that. Inputs hold the position pattern, outputs
// are poisoned before each run, and every run is verified element by element.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "bench/host_pattern.hpp"
#include "bench/stats.hpp"
#include "engine/cuda/cuda_util.cuh"
#include "gtranspose/bench.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/engine.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/host.hpp"
#include "gtranspose/inplace_writer.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/memory.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {
namespace {

using Clock = std::chrono::steady_clock;

// Host memory for one side of the bench: pinned or pageable, faulted in.
struct HostMem {
  std::unique_ptr<unsigned char[]> pageable;
  PinnedHostBuffer pinned;
  unsigned char* p = nullptr;
  HostMem(std::uint64_t bytes, bool pin) {
    if (pin) {
      pinned = PinnedHostBuffer(std::size_t(bytes));
      p = static_cast<unsigned char*>(pinned.data());
    } else {
      pageable.reset(new unsigned char[bytes]);
      p = pageable.get();
    }
    bench::poison(p, bytes, 0);  // touches every page before any timing
  }
};

struct LinkRates {
  double h2d = 0, d2h = 0, each_way = 0;  // GB/s
};

// Pinned copies of `bytes` in 256 MiB pieces between host and one device
// buffer per direction: H2D alone, D2H alone, then both at once on two
// streams (each-way rate = bytes one way / time until both are done).
LinkRates measure_link(unsigned char* host_a, unsigned char* host_b, std::uint64_t bytes) {
  const std::size_t piece = std::size_t(std::min<std::uint64_t>(bytes, std::uint64_t(256) << 20));
  bytes = std::max<std::uint64_t>(piece, bytes / piece * piece);
  cuda::DeviceBuffer da(piece), db(piece);
  cuda::Stream s1, s2;
  cuda::Event e0, e1, e2;
  auto run = [&](bool up, bool down) {
    GT_CUDA_CHECK(cudaEventRecord(e0.get(), s1.get()));
    GT_CUDA_CHECK(cudaStreamWaitEvent(s2.get(), e0.get(), 0));
    for (std::uint64_t off = 0; off < bytes; off += piece) {
      if (up) GT_CUDA_CHECK(cudaMemcpyAsync(da.get(), host_a + off, piece, cudaMemcpyHostToDevice, s1.get()));
      if (down) GT_CUDA_CHECK(cudaMemcpyAsync(host_b + off, db.get(), piece, cudaMemcpyDeviceToHost, s2.get()));
    }
    GT_CUDA_CHECK(cudaEventRecord(e1.get(), s1.get()));
    GT_CUDA_CHECK(cudaEventRecord(e2.get(), s2.get()));
    GT_CUDA_CHECK(cudaEventSynchronize(e1.get()));
    GT_CUDA_CHECK(cudaEventSynchronize(e2.get()));
    float t1 = 0, t2 = 0;
    GT_CUDA_CHECK(cudaEventElapsedTime(&t1, e0.get(), e1.get()));
    GT_CUDA_CHECK(cudaEventElapsedTime(&t2, e0.get(), e2.get()));
    return double(bytes) / (std::max(up ? t1 : 0.f, down ? t2 : 0.f) / 1e3) / 1e9;
  };
  run(true, true);  // warm-up
  LinkRates r;
  std::vector<double> up, down, both;
  for (int i = 0; i < 3; ++i) {
    up.push_back(run(true, false));
    down.push_back(run(false, true));
    both.push_back(run(true, true));
  }
  r.h2d = bench::median(up);
  r.d2h = bench::median(down);
  r.each_way = bench::median(both);
  return r;
}

BenchRow link_row(const char* name, double gbps, Shape shape, const std::string& dt) {
  BenchRow row;
  row.name = name;
  row.dtype = dt;
  row.shape = shape;
  row.gbps = gbps;
  row.verified = true;
  row.status = RowStatus::ok;
  row.note = "pinned copies, GB/s one way";
  return row;
}

}  // namespace

BenchResult run_host_bench(const BenchOptions& opts) {
  std::string why;
  if (cuda_device_count(&why) == 0) throw Error(ErrorKind::no_device, "the host bench: " + why);
  const std::size_t es = dtype_size(opts.dtype);
  const Shape shape = opts.shape;
  const std::uint64_t bytes = checked_mul(checked_mul(shape.rows, shape.cols, "bench size"), es, "bench size");
  if (opts.reps < 1) throw Error(ErrorKind::usage, "the host bench needs {reps} of at least 1");
  const std::string dt = dtype_name(opts.dtype);

  BenchResult res;
  res.device = cuda_device_name(0);
  res.reference = "h2d+d2h at once";
  res.seed = opts.seed;

  auto want = [&](const std::string& mode) {
    return std::find(opts.host_modes.begin(), opts.host_modes.end(), mode) != opts.host_modes.end();
  };
  const bool square = shape.rows == shape.cols;
  LinkRates link_best;
  auto link = [&](unsigned char* a, unsigned char* b) {
    const LinkRates l = measure_link(a, b, std::min<std::uint64_t>(bytes, std::uint64_t(4) << 30));
    link_best.h2d = std::max(link_best.h2d, l.h2d);
    link_best.d2h = std::max(link_best.d2h, l.d2h);
    link_best.each_way = std::max(link_best.each_way, l.each_way);
  };

  // One engine for every run: its pinned staging is kept from one run to the
  // next, so the warm-up runs pay for pinning and the timed ones do not.
  const std::unique_ptr<Engine> engine = make_engine(EngineKind::cuda);
  const std::unique_ptr<InplaceWriter> plain = plain_inplace_writer();

  // One timed transpose run: poison, run, verify; the engine's report kept.
  // A rectangle in place goes through the host API (gt::transpose_inplace),
  // as a program calls it: R = kC through the engine's stages, any other
  // shape through the GPU where {device_mem} holds it, else the CPU's gcd
  // decomposition (the row's note says which). `api_engine` picks the
  // host API's engine: the CPU engine's row is the reference beside it.
  auto time_runs = [&](const char* name, bool pin_in, bool pin_out, bool inplace,
                       EngineChoice api_engine = EngineChoice::cuda) {
    BenchRow row;
    row.name = name;
    row.dtype = dt;
    row.shape = shape;
    // The host API's route: a rectangle, or the CPU engine's reference row.
    const bool api = inplace && (!square || api_engine != EngineChoice::cuda);
    HostMem in(bytes, pin_in);
    std::unique_ptr<HostMem> out;
    if (!inplace) out = std::make_unique<HostMem>(bytes, pin_out);
    if (pin_in && (inplace || pin_out)) link(in.p, inplace ? in.p : out->p);
    RunOptions ro;
    ro.device_mem = opts.device_mem;
    ro.host_mem = opts.host_mem;
    ro.streams = opts.streams;
    ro.tile_elems = opts.tile_elems;
    ro.kernel = opts.kernel == "all" ? "auto" : opts.kernel;
    const HostMemoryKind kin = pin_in ? HostMemoryKind::pinned : HostMemoryKind::pageable;
    const HostMemoryKind kout = pin_out ? HostMemoryKind::pinned : HostMemoryKind::pageable;
    std::vector<double> walls;
    bool ok = true;
    RunReport last;
    for (int rep = 0; rep < opts.warmup + opts.reps && ok; ++rep) {
      bench::fill_pattern_host(in.p, shape, es, opts.seed + std::uint64_t(rep), 0);
      if (out) bench::poison(out->p, bytes, 0);
      const auto t0 = Clock::now();
      if (api) {
        HostOptions ho;
        ho.engine = api_engine;
        ho.run = ro;
        last = transpose_inplace(in.p, shape.rows, shape.cols, es, ho);
      } else if (inplace) {
        auto m = memory_inplace(HostMatrix{in.p, shape, es, 0, kin});
        last = execute_inplace(*engine, *m, *plain, ro);
      } else {
        auto src = memory_source(HostMatrix{in.p, shape, es, 0, kin});
        auto dst = memory_sink(HostMatrix{out->p, shape.transposed(), es, 0, kout});
        last = execute(*engine, *src, *dst, ro);
      }
      const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
      ok = bench::check_transposed_pattern(inplace ? in.p : out->p, shape, es, opts.seed + std::uint64_t(rep), 0)
               .mismatches == 0;
      if (rep >= opts.warmup) walls.push_back(wall);
    }
    row.verified = ok;
    row.status = ok ? RowStatus::ok : RowStatus::failed;
    if (!ok) {
      row.note = "wrong result: rerun with {host_modes} " + std::string(name) + " {seed} " + std::to_string(opts.seed);
      res.rows.push_back(row);
      return;
    }
    std::sort(walls.begin(), walls.end());
    row.median_ms = bench::median(walls) * 1e3;
    row.min_ms = walls.front() * 1e3;
    row.max_ms = walls.back() * 1e3;
    // One matrix per second each way: the unit the link rates are in.
    row.gbps = double(bytes) / (row.median_ms / 1e3) / 1e9;
    char note[256];
    std::snprintf(note, sizeof note, "%llu tiles of %llux%llu, overlap %.0f%% (%s), kernel %.0f GB/s",
                  static_cast<unsigned long long>(last.tiles), static_cast<unsigned long long>(last.tile_shape.rows),
                  static_cast<unsigned long long>(last.tile_shape.cols), 100 * last.overlap, last.bottleneck.c_str(),
                  last.kernel_gbps);
    row.note = note;
    // The host API's rows: which route ran, and the engine's notes (through
    // the GPU, or why not) in place of the streaming engine's tiles.
    if (api) {
      row.config = last.engine + " " + last.kernel;
      row.note.clear();
      for (const std::string& n : last.notes) row.note += (row.note.empty() ? "" : "; ") + n;
      if (row.note.empty()) row.note = last.kernel;
      // The last repetition's stages, where a route's fixed costs show.
      std::string st;
      for (const StageStat& x : last.stages) {
        char b[96];
        std::snprintf(b, sizeof b, "%s%s %.1f ms", st.empty() ? "" : ", ", x.name.c_str(), x.busy_s * 1e3);
        st += b;
      }
      if (!st.empty()) row.note += "; stages: " + st;
    }
    res.rows.push_back(row);
  };

  if (want("pinned")) time_runs("stream pinned", true, true, false);
  if (want("pageable")) time_runs("stream pageable", false, false, false);
  if (want("inplace-pinned")) time_runs(square ? "stream in-place pinned" : "host API in-place pinned", true, true, true);
  if (want("inplace-pageable"))
    time_runs(square ? "stream in-place pageable" : "host API in-place pageable", false, false, true);
  // A rectangle in place: the CPU engine's host API on the same shape and
  // memory, the route the CUDA engine takes where the GPU cannot hold it.
  if (!square && (want("inplace-pinned") || want("inplace-pageable")))
    time_runs("cpu in-place (host API)", false, false, true, EngineChoice::cpu);
  if (link_best.each_way == 0) {
    // No pinned run: measure the link on pinned buffers of its own.
    const std::uint64_t lb = std::min<std::uint64_t>(bytes, std::uint64_t(4) << 30);
    HostMem a(lb, true), b(lb, true);
    link(a.p, b.p);
  }
  res.rows.insert(res.rows.begin(), {link_row("h2d+d2h at once", link_best.each_way, shape, dt),
                                     link_row("h2d alone", link_best.h2d, shape, dt),
                                     link_row("d2h alone", link_best.d2h, shape, dt)});
  for (auto& row : res.rows) row.pct_of_copy = link_best.each_way > 0 ? 100 * row.gbps / link_best.each_way : 0;
  return res;
}

}  // namespace gt

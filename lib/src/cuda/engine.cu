// The CUDA engine, first version: tiles of the planner go through the GPU in
// two slots (pinned host buffers, device buffers, one stream each), so the
// GPU work of one tile overlaps the file I/O of the next. Issue 5 replaces
// this with the full streaming ring (reader/writer threads, N streams).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "cuda/cuda_util.cuh"
#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/kernels.hpp"
#include "gtranspose/planner.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {
namespace {

using cuda::DeviceBuffer;
using cuda::Event;
using cuda::PinnedBuffer;
using cuda::Stream;

const kernels::KernelInfo& pick_kernel(const std::string& name, std::size_t es) {
  if (name.empty() || name == "auto") return kernels::best(es, kernels::Kind::transpose);
  const kernels::KernelInfo* k = kernels::find(name);
  if (!k) throw Error(ErrorKind::usage, "unknown kernel '" + name + "': see gtranspose --list-kernels");
  if (k->kind != kernels::Kind::transpose)
    throw Error(ErrorKind::usage, "kernel '" + name + "' is not an out-of-place transpose: the engine moves tiles with " +
                                      "one of: " + kernels::names(kernels::Kind::transpose));
  return *k;
}

void require_device() {
  std::string why;
  if (cuda_device_count(&why) == 0) throw Error(ErrorKind::no_device, "--engine cuda: " + why);
}

double secs(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

// Device budget: what the user gave, else half the free memory, at most 4 GiB.
std::uint64_t device_budget(const RunOptions& o) {
  if (o.device_mem) return o.device_mem;
  std::size_t free_b = 0, total_b = 0;
  GT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return std::min<std::uint64_t>(free_b / 2, std::uint64_t(4) << 30);
}

// One slot of the two-deep pipeline.
struct Slot {
  PinnedBuffer h_in, h_out;
  DeviceBuffer d_in, d_out;
  Stream stream;
  Event e0, e1, e2, e3;
  bool busy = false;
  Tile tile;
  explicit Slot(std::size_t bytes) : h_in(bytes), h_out(bytes), d_in(bytes), d_out(bytes) {}
};

void accumulate(Slot& s, RunReport& r, std::uint64_t bytes) {
  float h2d = 0, ker = 0, d2h = 0;
  GT_CUDA_CHECK(cudaEventElapsedTime(&h2d, s.e0.get(), s.e1.get()));
  GT_CUDA_CHECK(cudaEventElapsedTime(&ker, s.e1.get(), s.e2.get()));
  GT_CUDA_CHECK(cudaEventElapsedTime(&d2h, s.e2.get(), s.e3.get()));
  r.stage("h2d").busy_s += h2d / 1e3;
  r.stage("h2d").bytes += bytes;
  r.stage("kernel").busy_s += ker / 1e3;
  r.stage("kernel").bytes += 2 * bytes;
  r.stage("d2h").busy_s += d2h / 1e3;
  r.stage("d2h").bytes += bytes;
}

RunReport base_report(const MatrixInfo& info, const kernels::KernelInfo& k, const char* mode, std::uint64_t tiles,
                      Shape tile, std::uint64_t host, std::uint64_t dev, std::uint64_t dev_peak) {
  RunReport r;
  r.engine = "cuda";
  r.kernel = k.name;
  r.mode = mode;
  r.shape = info.shape;
  r.elem_size = info.elem_size;
  r.bytes = info.bytes();
  r.tiles = tiles;
  r.tile_shape = tile;
  r.host_mem_budget = host;
  r.device_mem_budget = dev;
  r.device_mem_peak = dev_peak;
  return r;
}

void check_cancel(const RunOptions& o) {
  if (o.cancel && o.cancel->load()) throw Error(ErrorKind::cancelled, "interrupted");
}

}  // namespace

RunReport run_cuda(Source& src, Sink& dst, const RunOptions& opts) {
  require_device();
  const MatrixInfo& info = src.info();
  const std::size_t es = info.elem_size;
  const kernels::KernelInfo& k = pick_kernel(opts.kernel, es);
  const std::uint64_t dev = device_budget(opts);
  const std::uint64_t host = opts.host_mem ? opts.host_mem : default_host_budget();
  // Two slots, each with an input and an output buffer, on both sides.
  const std::uint64_t tile_bytes = tile_bytes_for(std::min(host, dev), 4, opts.chunk_elems);
  Plan plan(PlanRequest{info.shape, es, tile_bytes, src.preferred_block(), opts.chunk_elems});
  const std::size_t buf = std::size_t(plan.tile_h() * plan.tile_w() * es);

  RunReport r = base_report(info, k, "out-of-place", plan.count(), {plan.tile_h(), plan.tile_w()}, host, dev,
                            4 * std::uint64_t(buf));

  auto t_start = std::chrono::steady_clock::now();
  std::vector<std::unique_ptr<Slot>> slots;
  for (int i = 0; i < 2; ++i) slots.push_back(std::make_unique<Slot>(buf));

  std::uint64_t done = 0;
  auto retire = [&](Slot& s) {
    if (!s.busy) return;
    GT_CUDA_CHECK(cudaStreamSynchronize(s.stream.get()));
    const Tile& t = s.tile;
    accumulate(s, r, t.elems() * es);
    auto tw = std::chrono::steady_clock::now();
    dst.write(t.c0, t.r0, t.w, t.h, s.h_out.get(), t.h);
    r.stage("write").busy_s += secs(tw);
    r.stage("write").bytes += t.elems() * es;
    s.busy = false;
    done += t.elems() * es;
    if (opts.progress) opts.progress(done, r.bytes);
  };

  for (std::uint64_t i = 0; i < plan.count(); ++i) {
    check_cancel(opts);
    Slot& s = *slots[i % 2];
    retire(s);
    s.tile = plan.tile(i);
    const Tile& t = s.tile;
    auto tr = std::chrono::steady_clock::now();
    src.read(t.r0, t.c0, t.h, t.w, s.h_in.get(), t.w);
    r.stage("read").busy_s += secs(tr);
    r.stage("read").bytes += t.elems() * es;
    const std::size_t bytes = std::size_t(t.elems() * es);
    GT_CUDA_CHECK(cudaEventRecord(s.e0.get(), s.stream.get()));
    GT_CUDA_CHECK(cudaMemcpyAsync(s.d_in.get(), s.h_in.get(), bytes, cudaMemcpyHostToDevice, s.stream.get()));
    GT_CUDA_CHECK(cudaEventRecord(s.e1.get(), s.stream.get()));
    kernels::Problem p{t.h, t.w, es, t.w, t.h};
    k.launch(s.d_in.get(), s.d_out.get(), p, s.stream.get());
    GT_CUDA_CHECK(cudaEventRecord(s.e2.get(), s.stream.get()));
    GT_CUDA_CHECK(cudaMemcpyAsync(s.h_out.get(), s.d_out.get(), bytes, cudaMemcpyDeviceToHost, s.stream.get()));
    GT_CUDA_CHECK(cudaEventRecord(s.e3.get(), s.stream.get()));
    s.busy = true;
  }
  for (std::uint64_t i = plan.count(); i < plan.count() + 2; ++i) retire(*slots[i % 2]);
  r.wall_s = secs(t_start);
  const auto& ks = r.stage("kernel");
  r.kernel_gbps = ks.busy_s > 0 ? double(ks.bytes) / ks.busy_s / 1e9 : 0;
  r.host_mem_peak = peak_rss_bytes();
  return r;
}

RunReport run_cuda_inplace(InplaceMatrix& m, const RunOptions& opts) {
  require_device();
  const MatrixInfo& info = m.info();
  const std::size_t es = info.elem_size;
  const kernels::KernelInfo& k = pick_kernel(opts.kernel, es);
  const std::uint64_t dev = device_budget(opts);
  const std::uint64_t host = opts.host_mem ? opts.host_mem : default_host_budget();
  // A pair needs two tiles in and two out, on both sides.
  InplacePlan plan(info.shape.rows, es, tile_bytes_for(std::min(host, dev), 4, opts.chunk_elems), opts.chunk_elems);
  const std::uint64_t b = plan.block();
  const std::size_t tile_buf = std::size_t(b * b * es);

  RunReport r = base_report(info, k, "in-place", plan.count(), {b, b}, host, dev, 4 * std::uint64_t(tile_buf));

  auto t_start = std::chrono::steady_clock::now();
  Slot s(2 * tile_buf);
  std::uint64_t done = 0;
  for (std::uint64_t i = 0; i < plan.count(); ++i) {
    check_cancel(opts);
    TilePair pr = plan.pair(i);
    const int n = pr.diagonal() ? 1 : 2;
    const Tile tiles[2] = {pr.a, pr.b};
    auto tr = std::chrono::steady_clock::now();
    std::size_t off[2] = {0, tile_buf};
    for (int j = 0; j < n; ++j)
      m.read(tiles[j].r0, tiles[j].c0, tiles[j].h, tiles[j].w, s.h_in.get() + off[j], tiles[j].w);
    r.stage("read").busy_s += secs(tr);
    std::uint64_t pair_bytes = 0;
    for (int j = 0; j < n; ++j) pair_bytes += tiles[j].elems() * es;
    r.stage("read").bytes += pair_bytes;
    GT_CUDA_CHECK(cudaEventRecord(s.e0.get(), s.stream.get()));
    GT_CUDA_CHECK(cudaMemcpyAsync(s.d_in.get(), s.h_in.get(), off[n - 1] + tiles[n - 1].elems() * es, cudaMemcpyHostToDevice,
                                  s.stream.get()));
    GT_CUDA_CHECK(cudaEventRecord(s.e1.get(), s.stream.get()));
    for (int j = 0; j < n; ++j) {
      kernels::Problem p{tiles[j].h, tiles[j].w, es, tiles[j].w, tiles[j].h};
      k.launch(s.d_in.get() + off[j], s.d_out.get() + off[j], p, s.stream.get());
    }
    GT_CUDA_CHECK(cudaEventRecord(s.e2.get(), s.stream.get()));
    GT_CUDA_CHECK(cudaMemcpyAsync(s.h_out.get(), s.d_out.get(), off[n - 1] + tiles[n - 1].elems() * es, cudaMemcpyDeviceToHost,
                                  s.stream.get()));
    GT_CUDA_CHECK(cudaEventRecord(s.e3.get(), s.stream.get()));
    GT_CUDA_CHECK(cudaStreamSynchronize(s.stream.get()));
    accumulate(s, r, pair_bytes);
    auto tw = std::chrono::steady_clock::now();
    // The transpose of tile a belongs where tile b was, and the other way round.
    for (int j = 0; j < n; ++j) {
      const Tile& dst = tiles[n - 1 - j];
      m.write(dst.r0, dst.c0, dst.h, dst.w, s.h_out.get() + off[j], dst.w);
    }
    r.stage("write").busy_s += secs(tw);
    r.stage("write").bytes += pair_bytes;
    done += pair_bytes;
    if (opts.progress) opts.progress(done, r.bytes);
  }
  // The engine makes its writes durable, as the CPU engine does.
  auto tf = std::chrono::steady_clock::now();
  m.flush();
  r.stage("write").busy_s += secs(tf);
  r.wall_s = secs(t_start);
  const auto& ks = r.stage("kernel");
  r.kernel_gbps = ks.busy_s > 0 ? double(ks.bytes) / ks.busy_s / 1e9 : 0;
  r.host_mem_peak = peak_rss_bytes();
  return r;
}

}  // namespace gt

// engine/host_rect.hpp on a GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "core/team.hpp"
#include "engine/cuda/cuda_util.cuh"
#include "engine/host_rect.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/device.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/kernels.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::cuda {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void check(cudaError_t e, const std::string& what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();
  throw Error(ErrorKind::cuda, what + ": " + cudaGetErrorString(e));
}

void check_cancel(const std::atomic<bool>* cancel) {
  if (cancel && cancel->load()) throw Error(ErrorKind::cancelled, "interrupted: the array is unchanged");
}

// Pageable memory's copies, staged: the driver copies pageable memory
// through a staging buffer of its own on the calling thread (PERF.md: 10-20
// GB/s a way on the H100 host), where the memory bus and the link give more.
// Here up to kStageThreads threads (a copy team) each own a pinned slot of
// kStageSlot bytes and a stream, and move a band of the array's kStageSlot
// pieces: to the device, copy a piece into the slot, then the slot's DMA;
// back, the DMA into the slot, then the copy out. One thread's copy
// overlaps the others' DMA. Slots of 8 MiB stay in the last-level cache between the copy
// and the DMA (plan.hpp: kCacheStagedTileBytes). Pinned, registered or
// managed arrays, and GT_TEST_HOST_RECT_DRIVER_COPY=1 (a measurement switch),
// take one cudaMemcpyAsync instead.
constexpr std::uint64_t kStageSlot = std::uint64_t(8) << 20;
constexpr int kStageThreads = 8;

bool driver_copy(const void* host) {
  const char* e = std::getenv("GT_TEST_HOST_RECT_DRIVER_COPY");
  return (e && *e && std::strcmp(e, "0") != 0) || cuda_pointer_kind(host) != PointerKind::unregistered;
}

// The staging of one run, made once for both directions (run 251: each
// thread allocating its own slot and stream once a direction was part of
// about 58 ms of fixed cost): a copy team (core/team.hpp) of `threads`, one
// pinned allocation carved into a slot of `slot` bytes for each, and a stream
// each. threads 0: the driver's copy.
struct Stager {
  int threads = 0;
  std::uint64_t slot = 0;
  std::unique_ptr<CopyTeam> team;
  PinnedBuffer pinned;
  std::vector<std::unique_ptr<Stream>> streams;
  Stager(const void* host, std::uint64_t bytes, int max_threads) {
    if (max_threads < 1 || driver_copy(host)) return;
    const std::uint64_t pieces = (bytes + kStageSlot - 1) / kStageSlot;
    const int hw = int(std::max(1u, std::thread::hardware_concurrency()));
    const int want = int(std::min<std::uint64_t>(pieces, std::uint64_t(std::min(max_threads, hw))));
    team = std::make_unique<CopyTeam>(want);
    threads = team->size();
    slot = std::min(bytes, kStageSlot);
    pinned = PinnedBuffer(std::size_t(slot * std::uint64_t(threads)));
    for (int t = 0; t < threads; ++t) streams.push_back(std::make_unique<Stream>());
  }
  std::uint64_t pinned_bytes() const { return slot * std::uint64_t(threads); }
};

// Moves `bytes` between the program's array and device memory (to_device:
// host -> dev): each band of the team's split takes a slot and its stream and
// moves its kStageSlot pieces through them; or the driver's copy on `st`.
void copy_host(Stager& sg, void* host, void* dev, std::uint64_t bytes, bool to_device, cudaStream_t st,
               const char* what) {
  if (sg.threads == 0) {
    check(cudaMemcpyAsync(to_device ? dev : host, to_device ? host : dev, bytes, cudaMemcpyDefault, st), what);
    check(cudaStreamSynchronize(st), what);
    return;
  }
  const std::uint64_t pieces = (bytes + kStageSlot - 1) / kStageSlot;
  int device = 0;
  check(cudaGetDevice(&device), what);
  std::atomic<int> next_slot{0};  // a band a slot: the split makes at most team->size() bands
  sg.team->split(pieces, 1, [&](std::uint64_t first, std::uint64_t n) {
    check(cudaSetDevice(device), what);
    const int t = next_slot.fetch_add(1);
    unsigned char* slot = sg.pinned.get() + std::uint64_t(t) * sg.slot;
    const cudaStream_t s = sg.streams[std::size_t(t)]->get();
    auto* h = static_cast<unsigned char*>(host);
    auto* d = static_cast<unsigned char*>(dev);
    for (std::uint64_t k = first; k < first + n; ++k) {
      const std::uint64_t off = k * kStageSlot, len = std::min(kStageSlot, bytes - off);
      if (to_device) {
        std::memcpy(slot, h + off, len);
        check(cudaMemcpyAsync(d + off, slot, len, cudaMemcpyHostToDevice, s), what);
        check(cudaStreamSynchronize(s), what);
      } else {
        check(cudaMemcpyAsync(slot, d + off, len, cudaMemcpyDeviceToHost, s), what);
        check(cudaStreamSynchronize(s), what);
        std::memcpy(h + off, slot, len);
      }
    }
  });
}

}  // namespace

bool host_rect_inplace(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                       std::uint64_t device_mem, std::uint64_t host_mem, const std::atomic<bool>* cancel,
                       HostRectRun& run, std::string* why) {
  if (cuda_device_count(why) == 0) return false;
  std::size_t free_b = 0, total_b = 0;
  if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = "the GPU's free memory could not be read";
    return false;
  }
  const std::uint64_t bytes = rows * cols * elem_size;
  run.device_budget = device_mem ? device_mem : default_device_budget(free_b);
  run.device_bytes = bytes + kernels::inplace_rect_device_bytes(rows, cols, elem_size);
  if (run.device_bytes > run.device_budget || run.device_bytes > free_b) {
    if (why)
      *why = "the matrix (" + format_bytes(bytes) + ", with inplace-rect's scratch and tables " + format_bytes(run.device_bytes) +
             ") is larger than the device budget (" + format_bytes(run.device_budget) + ") or the GPU's free memory (" +
             format_bytes(free_b) + ")";
    return false;
  }
  // The run's allocations, timed as a stage of their own ("allocate"): the
  // device's copy of the matrix, the stream, the staging's team and slots.
  auto t0 = std::chrono::steady_clock::now();
  Stream st;
  DeviceBuffer d;
  if (d.try_allocate(std::size_t(bytes)) != cudaSuccess) {
    if (why) *why = "cannot allocate " + format_bytes(bytes) + " of device memory";
    return false;
  }
  const int max_threads = int(std::min<std::uint64_t>(kStageThreads, host_mem / kStageSlot));
  Stager sg(data, bytes, max_threads);
  run.copy_threads = sg.threads;
  run.pinned_bytes = sg.pinned_bytes();
  run.stages.push_back({"allocate", seconds_since(t0), 0});
  check_cancel(cancel);
  t0 = std::chrono::steady_clock::now();
  copy_host(sg, data, d.get(), bytes, true, st.get(), "copying the matrix to the GPU");
  run.stages.push_back({"h2d", seconds_since(t0), bytes});
  check_cancel(cancel);
  t0 = std::chrono::steady_clock::now();
  DeviceOptions o;
  o.stream = reinterpret_cast<std::uintptr_t>(st.get());
  transpose_device_inplace(d.get(), rows, cols, elem_size, o);
  check(cudaStreamSynchronize(st.get()), "transposing the matrix on the GPU (the array is unchanged)");
  run.stages.push_back({"kernel", seconds_since(t0), 2 * bytes});
  check_cancel(cancel);
  t0 = std::chrono::steady_clock::now();
  copy_host(sg, data, d.get(), bytes, false, st.get(),
            "copying the transpose back (the array may hold part of the transpose and part of the matrix)");
  run.stages.push_back({"d2h", seconds_since(t0), bytes});
  return true;
}

}  // namespace gt::cuda

// engine/host_rect.hpp on a GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

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

// Moves `bytes` between the program's array and device memory (to_device:
// host -> dev). Returns the threads it staged through (0: the driver's copy):
// a copy team (core/team.hpp), each thread a band of the pieces through its
// own slot and stream.
int copy_host(void* host, void* dev, std::uint64_t bytes, bool to_device, int max_threads, cudaStream_t st,
              const char* what) {
  if (max_threads < 1 || driver_copy(host)) {
    check(cudaMemcpyAsync(to_device ? dev : host, to_device ? host : dev, bytes, cudaMemcpyDefault, st), what);
    check(cudaStreamSynchronize(st), what);
    return 0;
  }
  const std::uint64_t pieces = (bytes + kStageSlot - 1) / kStageSlot;
  const int hw = int(std::max(1u, std::thread::hardware_concurrency()));
  const int threads = int(std::min<std::uint64_t>(pieces, std::uint64_t(std::min(max_threads, hw))));
  int device = 0;
  check(cudaGetDevice(&device), what);
  CopyTeam team(threads);
  team.split(pieces, 1, [&](std::uint64_t first, std::uint64_t n) {
    check(cudaSetDevice(device), what);
    PinnedBuffer slot(std::size_t(std::min(bytes, kStageSlot)));
    Stream s;
    auto* h = static_cast<unsigned char*>(host);
    auto* d = static_cast<unsigned char*>(dev);
    for (std::uint64_t k = first; k < first + n; ++k) {
      const std::uint64_t off = k * kStageSlot, len = std::min(kStageSlot, bytes - off);
      if (to_device) {
        std::memcpy(slot.get(), h + off, len);
        check(cudaMemcpyAsync(d + off, slot.get(), len, cudaMemcpyHostToDevice, s.get()), what);
        check(cudaStreamSynchronize(s.get()), what);
      } else {
        check(cudaMemcpyAsync(slot.get(), d + off, len, cudaMemcpyDeviceToHost, s.get()), what);
        check(cudaStreamSynchronize(s.get()), what);
        std::memcpy(h + off, slot.get(), len);
      }
    }
  });
  return team.size();
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
  Stream st;
  DeviceBuffer d;
  if (d.try_allocate(std::size_t(bytes)) != cudaSuccess) {
    if (why) *why = "cannot allocate " + format_bytes(bytes) + " of device memory";
    return false;
  }
  check_cancel(cancel);
  auto t0 = std::chrono::steady_clock::now();
  const int max_threads = int(std::min<std::uint64_t>(kStageThreads, host_mem / kStageSlot));
  run.copy_threads = copy_host(data, d.get(), bytes, true, max_threads, st.get(), "copying the matrix to the GPU");
  run.pinned_bytes = std::uint64_t(run.copy_threads) * std::min(bytes, kStageSlot);
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
  copy_host(data, d.get(), bytes, false, max_threads, st.get(),
            "copying the transpose back (the array may hold part of the transpose and part of the matrix)");
  run.stages.push_back({"d2h", seconds_since(t0), bytes});
  return true;
}

}  // namespace gt::cuda

// engine/host_rect.hpp on a GPU.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "engine/host_rect.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/device.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/sizes.hpp"

namespace gt::cuda {
namespace {

constexpr std::uint64_t kRectScratchCap = std::uint64_t(64) << 20;  // inplace-rect's, gtranspose/device.hpp

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

struct DeviceBuffer {
  void* p = nullptr;
  ~DeviceBuffer() {
    if (p && cudaFree(p) != cudaSuccess) cudaGetLastError();
  }
};
struct Stream {
  cudaStream_t s = nullptr;
  ~Stream() {
    if (s && cudaStreamDestroy(s) != cudaSuccess) cudaGetLastError();
  }
};

// Pageable memory's copies, staged: the driver copies pageable memory
// through a staging buffer of its own on the calling thread (PERF.md: 10-20
// GB/s a way on the H100 host), where the memory bus and the link give more.
// Here kStageThreads threads each own a pinned slot of kStageSlot bytes and
// a stream, and take the array's kStageSlot pieces in turn from a counter:
// to the device, copy a piece into the slot, then the slot's DMA; back,
// the DMA into the slot, then the copy out. One thread's copy overlaps the
// others' DMA. Slots of 8 MiB stay in the last-level cache between the copy
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
// host -> dev). Returns the threads it staged through (0: the driver's copy).
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
  std::atomic<std::uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::exception_ptr first;
  std::mutex mu;
  auto work = [&] {
    try {
      check(cudaSetDevice(device), what);
      PinnedHostBuffer slot(std::size_t(std::min(bytes, kStageSlot)));
      Stream s;
      check(cudaStreamCreateWithFlags(&s.s, cudaStreamNonBlocking), what);
      auto* h = static_cast<unsigned char*>(host);
      auto* d = static_cast<unsigned char*>(dev);
      for (std::uint64_t k; !failed.load() && (k = next.fetch_add(1)) < pieces;) {
        const std::uint64_t off = k * kStageSlot, n = std::min(kStageSlot, bytes - off);
        if (to_device) {
          std::memcpy(slot.data(), h + off, n);
          check(cudaMemcpyAsync(d + off, slot.data(), n, cudaMemcpyHostToDevice, s.s), what);
          check(cudaStreamSynchronize(s.s), what);
        } else {
          check(cudaMemcpyAsync(slot.data(), d + off, n, cudaMemcpyDeviceToHost, s.s), what);
          check(cudaStreamSynchronize(s.s), what);
          std::memcpy(h + off, slot.data(), n);
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!first) first = std::current_exception();
      failed = true;
    }
  };
  std::vector<std::thread> helpers;
  try {
    for (int t = 1; t < threads; ++t) helpers.emplace_back(work);
  } catch (...) {  // fewer threads started: those that did (and this one) take every piece
  }
  work();
  for (auto& t : helpers) t.join();
  if (first) std::rethrow_exception(first);
  return threads;
}

}  // namespace

std::uint64_t host_rect_device_bytes(std::uint64_t matrix_bytes) { return matrix_bytes + kRectScratchCap; }

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
  run.device_bytes = host_rect_device_bytes(bytes);
  if (run.device_bytes > run.device_budget || run.device_bytes > free_b) {
    if (why)
      *why = "the matrix (" + format_bytes(bytes) + ", with inplace-rect's scratch " + format_bytes(run.device_bytes) +
             ") is larger than the device budget (" + format_bytes(run.device_budget) + ") or the GPU's free memory (" +
             format_bytes(free_b) + ")";
    return false;
  }
  Stream st;
  check(cudaStreamCreateWithFlags(&st.s, cudaStreamNonBlocking), "cannot create a CUDA stream");
  DeviceBuffer d;
  if (cudaMalloc(&d.p, bytes) != cudaSuccess) {
    cudaGetLastError();
    if (why) *why = "cannot allocate " + format_bytes(bytes) + " of device memory";
    return false;
  }
  check_cancel(cancel);
  auto t0 = std::chrono::steady_clock::now();
  const std::uint64_t host_budget = host_mem ? host_mem : default_host_budget();
  const int max_threads = int(std::min<std::uint64_t>(kStageThreads, host_budget / kStageSlot));
  run.copy_threads = copy_host(data, d.p, bytes, true, max_threads, st.s, "copying the matrix to the GPU");
  run.pinned_bytes = std::uint64_t(run.copy_threads) * std::min(bytes, kStageSlot);
  run.stages.push_back({"h2d", seconds_since(t0), bytes});
  check_cancel(cancel);
  t0 = std::chrono::steady_clock::now();
  DeviceOptions o;
  o.stream = reinterpret_cast<std::uintptr_t>(st.s);
  transpose_device_inplace(d.p, rows, cols, elem_size, o);
  check(cudaStreamSynchronize(st.s), "transposing the matrix on the GPU (the array is unchanged)");
  run.stages.push_back({"kernel", seconds_since(t0), 2 * bytes});
  check_cancel(cancel);
  t0 = std::chrono::steady_clock::now();
  copy_host(data, d.p, bytes, false, max_threads, st.s,
            "copying the transpose back (the array may hold part of the transpose and part of the matrix)");
  run.stages.push_back({"d2h", seconds_since(t0), bytes});
  return true;
}

}  // namespace gt::cuda

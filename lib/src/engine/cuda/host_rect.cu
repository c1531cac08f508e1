// engine/host_rect.hpp on a GPU.
#include <cuda_runtime_api.h>

#include <chrono>

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

}  // namespace

std::uint64_t host_rect_device_bytes(std::uint64_t matrix_bytes) { return matrix_bytes + kRectScratchCap; }

bool host_rect_inplace(void* data, std::uint64_t rows, std::uint64_t cols, std::size_t elem_size,
                       std::uint64_t device_mem, const std::atomic<bool>* cancel, HostRectRun& run,
                       std::string* why) {
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
  check(cudaMemcpyAsync(d.p, data, bytes, cudaMemcpyDefault, st.s), "copying the matrix to the GPU");
  check(cudaStreamSynchronize(st.s), "copying the matrix to the GPU");
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
  check(cudaMemcpyAsync(data, d.p, bytes, cudaMemcpyDefault, st.s), "copying the transpose back");
  check(cudaStreamSynchronize(st.s),
        "copying the transpose back (the array may hold part of the transpose and part of the matrix)");
  run.stages.push_back({"d2h", seconds_since(t0), bytes});
  return true;
}

}  // namespace gt::cuda

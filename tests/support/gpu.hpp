// The one GPU check of the tests: GT_SKIP_WITHOUT_GPU() skips a test, saying
// why, where no CUDA device is usable; GT_SKIP_WITH_GPU("why") skips one that
// is only for machines without a GPU.
//
// Host and CLI tests ask the library (gt::cuda_device_count, which a
// CPU-only build answers too). The device tests link only the kernels, not
// the library, so when compiled by nvcc the runtime is asked directly.
#pragma once
#include <gtest/gtest.h>

#include <string>

#if defined(__CUDACC__)
#include <cuda_runtime_api.h>
#else
#include "gtranspose/cuda.hpp"
#endif

namespace gt::test {

// Empty when a CUDA device is usable, else the reason; asked once per process.
inline const std::string& no_gpu_reason() {
  static const std::string why = [] {
#if defined(__CUDACC__)
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      return std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")";
    }
    return n == 0 ? std::string("cudaGetDeviceCount returned 0") : std::string();
#else
    std::string reason;
    return cuda_device_count(&reason) > 0 ? std::string() : (reason.empty() ? std::string("none found") : reason);
#endif
  }();
  return why;
}

inline bool have_gpu() { return no_gpu_reason().empty(); }

}  // namespace gt::test

#define GT_SKIP_WITHOUT_GPU()                                                                           \
  do {                                                                                                  \
    if (!::gt::test::have_gpu()) GTEST_SKIP() << "no CUDA device: " << ::gt::test::no_gpu_reason();     \
  } while (0)

#define GT_SKIP_WITH_GPU(why)                                   \
  do {                                                          \
    if (::gt::test::have_gpu()) GTEST_SKIP() << "a GPU is present: " << (why); \
  } while (0)

// The one CUDA check of the project (kernels, engine, benches, tests): every
// runtime call goes through GT_CUDA_CHECK, every kernel launch is followed by
// GT_CUDA_LAUNCHED. A failure throws gt::Error(cuda) naming the call, the
// error and the file and line, after clearing a non-sticky error so that
// later, unrelated calls still work.
//
// Debug-sync switch (as CUB's CUB_DEBUG_SYNC): build with
// -DGT_CUDA_DEBUG_SYNC=ON (CMake) and GT_CUDA_LAUNCHED waits for the device
// after every launch, so an asynchronous fault is reported at the launch that
// caused it rather than at some later call.
#pragma once
#include <cuda_runtime_api.h>

#include <cstring>
#include <string>

#include "gtranspose/error.hpp"

namespace gt::cuda {

// "engine.cu" for "/path/to/engine.cu": the file named in messages.
inline const char* base_name(const char* path) {
  const char* slash = std::strrchr(path, '/');
  return slash ? slash + 1 : path;
}

[[noreturn]] inline void throw_cuda(cudaError_t e, const char* what, const char* file, int line) {
  cudaGetLastError();
  throw Error(ErrorKind::cuda, std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                                   ") at " + base_name(file) + ":" + std::to_string(line));
}

inline void check(cudaError_t e, const char* what, const char* file, int line) {
  if (e != cudaSuccess) throw_cuda(e, what, file, line);
}

// After a launch: a configuration error (grid, shared memory) surfaces here;
// with GT_CUDA_DEBUG_SYNC, any fault of the kernel itself too.
inline void check_launch(const char* kernel, const char* file, int line) {
  const std::string what = std::string("launch of kernel ") + kernel;
  check(cudaGetLastError(), what.c_str(), file, line);
#ifdef GT_CUDA_DEBUG_SYNC
  check(cudaDeviceSynchronize(), what.c_str(), file, line);
#endif
}

}  // namespace gt::cuda

#define GT_CUDA_CHECK(call) ::gt::cuda::check((call), #call, __FILE__, __LINE__)
#define GT_CUDA_LAUNCHED(kernel_name) ::gt::cuda::check_launch((kernel_name), __FILE__, __LINE__)

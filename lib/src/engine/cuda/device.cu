// Device discovery and the kernel listing, for the CUDA build.
#include <cuda_runtime_api.h>

#include "gtranspose/cuda.hpp"
#include "gtranspose/kernels.hpp"

namespace gt {

bool built_with_cuda() { return true; }

int cuda_device_count(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) {
      if (e == cudaErrorNoDevice) *why = "no CUDA device found";
      else if (e == cudaErrorInsufficientDriver)
        *why = "no usable CUDA device (no NVIDIA driver, or one older than this build's CUDA runtime)";
      else *why = std::string("no usable CUDA device (") + cudaGetErrorString(e) + ")";
    }
    cudaGetLastError();
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA device found";
  return n;
}

int cuda_runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) cudaGetLastError(), v = 0;
  return v;
}

int cuda_driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) cudaGetLastError(), v = 0;
  return v;
}

std::string cuda_device_name(int device) {
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) {
    cudaGetLastError();
    return "unknown";
  }
  return p.name;
}

std::vector<KernelListing> list_kernels() {
  std::vector<KernelListing> out;
  for (const auto& k : kernels::registry()) out.push_back({k.name, kernels::kind_name(k.kind), k.description});
  return out;
}

bool kernel_known(const std::string& name) { return kernels::find(name) != nullptr; }

}  // namespace gt

// The CUDA queries of a CPU-only build: each says CUDA is absent.
#include "gtranspose/cuda.hpp"

namespace gt {

bool built_with_cuda() { return false; }
int cuda_device_count(std::string* why) {
  if (why) *why = "this gtranspose was built without CUDA (no nvcc at build time)";
  return 0;
}
std::string cuda_device_name(int) { return "none"; }
int cuda_runtime_version() { return 0; }
int cuda_driver_version() { return 0; }
std::vector<KernelListing> list_kernels() { return {}; }
bool kernel_known(const std::string&) { return false; }

}  // namespace gt

// The CUDA entry points of a CPU-only build: each says CUDA is absent.
#include "gtranspose/bench.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"

namespace gt {

bool built_with_cuda() { return false; }
int cuda_device_count(std::string* why) {
  if (why) *why = "this gtranspose was built without CUDA (no nvcc at build time)";
  return 0;
}
std::string cuda_device_name(int) { return "none"; }
std::vector<KernelListing> list_kernels() { return {}; }

BenchResult run_cuda_bench(const BenchOptions&) {
  throw Error(ErrorKind::no_device, "this gtranspose was built without CUDA: use --engine cpu, or rebuild with nvcc installed");
}
BenchResult run_host_bench(const BenchOptions&) {
  throw Error(ErrorKind::no_device, "--bench-host: this gtranspose was built without CUDA: rebuild with nvcc installed");
}

}  // namespace gt

namespace gt {

RunReport run_cuda(Source&, Sink&, const RunOptions&) {
  throw Error(ErrorKind::no_device, "this gtranspose was built without CUDA: use --engine cpu");
}
RunReport run_cuda_inplace(InplaceMatrix&, const RunOptions&) {
  throw Error(ErrorKind::no_device, "this gtranspose was built without CUDA: use --engine cpu");
}
void release_pinned_staging() {}

}  // namespace gt

// The CUDA benches of a CPU-only build: each says CUDA is absent.
#include "gtranspose/bench.hpp"
#include "gtranspose/error.hpp"

namespace gt {

BenchResult run_cuda_bench(const BenchOptions&) {
  throw Error(ErrorKind::no_device,
              "this gtranspose was built without CUDA: use {engine} cpu, or rebuild with nvcc installed");
}
BenchResult run_host_bench(const BenchOptions&) {
  throw Error(ErrorKind::no_device, "the host bench times the CUDA engine, and this gtranspose was built without CUDA: "
                                    "rebuild with nvcc installed");
}

}  // namespace gt

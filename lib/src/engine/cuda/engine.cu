// The CUDA engine object: resolves its kernel from the registry, tells the
// planner the device memory free, owns the pinned staging it keeps between
// runs, and hands each run to a driver (out_of_place.cu, in_place.cu).
#include <cuda_runtime_api.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "engine/cuda/engine.hpp"
#include "engine/cuda/kernel_choice.hpp"
#include "engine/cuda/staging.cuh"
#include "engine/cuda/streamer.cuh"
#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/kernels.hpp"
#include "gtranspose/machine.hpp"

namespace gt::cuda {

const kernels::KernelInfo& pick_kernel(const std::string& name, std::size_t es, kernels::Kind kind) {
  if (name.empty() || name == "auto") return kernels::best(es, kind);
  const kernels::KernelInfo* k = kernels::find(name);
  if (!k) throw Error(ErrorKind::usage, "unknown kernel '" + name + "': use one of " + kernels::names(kind));
  if (k->kind != kind)
    throw Error(ErrorKind::usage, "kernel '" + name + "' is not " +
                                      (kind == kernels::Kind::inplace ? "an in-place" : "an out-of-place") +
                                      " transpose: use one of " + kernels::names(kind));
  return *k;
}

namespace {

// The L3 cache as the C library reports it (0 where it reports none).
std::uint64_t last_level_cache_bytes() {
#if defined(_SC_LEVEL3_CACHE_SIZE)
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return l3 > 0 ? std::uint64_t(l3) : 0;
#else
  return 0;
#endif
}

class CudaEngine final : public Engine {
 public:
  EngineKind kind() const override { return EngineKind::cuda; }

  EngineCaps caps(const RunOptions& opts, std::size_t elem_size) const override {
    const kernels::KernelInfo& k = pick_kernel(opts.kernel, elem_size, kernels::Kind::transpose);
    EngineCaps c;
    c.kind = EngineKind::cuda;
    c.kernel = k.name;
    if (!opts.device_mem) {
      std::size_t free_b = 0, total_b = 0;
      GT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      c.device_free = free_b;
    }
    c.host_cores = int(usable_cores());
    c.host_cache_bytes = last_level_cache_bytes();
    // Refuses, before any I/O, a named kernel that cannot move a run's tiles
    // (a failure at the first launch could leave an unjournaled matrix half done).
    c.kernel_fits = [kp = &k](std::uint64_t h, std::uint64_t w, std::size_t es, std::string* why) {
      return kp->supports(kernels::Problem{h, w, es, w, h}, why);
    };
    return c;
  }

  RunReport run(Source& src, Sink& dst, const RunPlan& plan, const RunOptions& opts) override {
    return run_out_of_place(pool_, src, dst, plan, opts);
  }

  RunReport run_inplace(InplaceMatrix& m, InplaceWriter& writer, const RunPlan& plan,
                        const RunOptions& opts) override {
    return run_in_place(pool_, m, writer, plan, opts);
  }

  void release() override { pool_.release(); }

 private:
  PinnedPool pool_;
};

}  // namespace

std::unique_ptr<Engine> make_cuda_engine() { return std::make_unique<CudaEngine>(); }

}  // namespace gt::cuda

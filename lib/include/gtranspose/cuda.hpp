// What the CUDA side offers the rest of the library. Every function here
// exists in a CPU-only build too, where it reports that CUDA is absent.
#pragma once
#include <string>
#include <vector>

#include "gtranspose/engine.hpp"

namespace gt {

bool built_with_cuda();
// Number of usable devices (0 when the build has no CUDA, the driver is
// missing or no GPU exists); `why` receives the reason when 0.
int cuda_device_count(std::string* why = nullptr);
std::string cuda_device_name(int device = 0);

struct KernelListing {
  std::string name, kind, description;
};
std::vector<KernelListing> list_kernels();  // empty in a CPU-only build

}  // namespace gt

namespace gt {

// The CUDA engine: tiles through the GPU with the named kernel (opts.kernel;
// "auto" = the fastest for the element size). Throws gt::Error(no_device)
// without a GPU and gt::Error(usage) for an unknown kernel.
RunReport run_cuda(Source& src, Sink& dst, const RunOptions& opts);
RunReport run_cuda_inplace(InplaceMatrix& m, const RunOptions& opts);

}  // namespace gt

// Which registry kernel a name resolves to, for the engine (which moves its
// tiles with one) and the device entry points (device.hpp, which run one).
#pragma once
#include <cstddef>
#include <string>

#include "gtranspose/kernels.hpp"

namespace gt::cuda {

// The registry's best of `kind` for the element size ("auto" or empty), or
// the kernel named, which must be of that kind; else gt::Error(usage)
// listing the kernels that are.
const kernels::KernelInfo& pick_kernel(const std::string& name, std::size_t elem_size, kernels::Kind kind);

}  // namespace gt::cuda

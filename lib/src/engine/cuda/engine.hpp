// The CUDA engine's factory, for engine/factory.cpp.
#pragma once
#include <memory>

#include "gtranspose/engine.hpp"

namespace gt::cuda {

// The factory has checked that a device is present.
std::unique_ptr<Engine> make_cuda_engine();

}  // namespace gt::cuda

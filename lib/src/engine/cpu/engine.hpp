// The CPU engine's factory, for engine/factory.cpp.
#pragma once
#include <memory>

#include "gtranspose/engine.hpp"

namespace gt::cpu {

std::unique_ptr<Engine> make_cpu_engine();

}  // namespace gt::cpu

// The one place an engine is chosen and made.
#include <memory>
#include <string>

#include "gtranspose/cuda.hpp"
#include "gtranspose/engine.hpp"
#include "gtranspose/error.hpp"
#include "engine/cpu/engine.hpp"
#if GT_HAVE_CUDA
#include "engine/cuda/engine.hpp"
#endif

namespace gt {

EngineChoice parse_engine(const std::string& name) {
  if (name == "auto") return EngineChoice::automatic;
  if (name == "cuda" || name == "gpu") return EngineChoice::cuda;
  if (name == "cpu") return EngineChoice::cpu;
  throw Error(ErrorKind::usage, "unknown engine '" + name + "': use auto, cuda or cpu");
}

EngineDecision decide_engine(EngineChoice requested) {
  if (requested == EngineChoice::cpu) return {EngineKind::cpu, ""};
  std::string why;
  if (cuda_device_count(&why) > 0) return {EngineKind::cuda, ""};
  if (requested == EngineChoice::cuda)
    throw Error(ErrorKind::no_device, "{engine} cuda: " + why + "; use {engine} cpu (or auto) on this machine");
  return {EngineKind::cpu, why + ": using the CPU engine"};
}

std::unique_ptr<Engine> make_engine(EngineKind kind) {
  if (kind == EngineKind::cpu) return cpu::make_cpu_engine();
  // Throws without a usable device (there is no fallback when cuda is named).
  if (decide_engine(EngineChoice::cuda).kind != EngineKind::cuda)
    throw Error(ErrorKind::internal, "the CUDA engine was decided against without an error");
#if GT_HAVE_CUDA
  return cuda::make_cuda_engine();
#else
  throw Error(ErrorKind::internal, "a CPU-only build found a CUDA device");
#endif
}

}  // namespace gt

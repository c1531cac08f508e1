// The one place an engine is chosen and made.
#include <memory>
#include <string>

#include "gtranspose/cuda.hpp"
#include "gtranspose/engine.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/matrix.hpp"
#include "gtranspose/plan.hpp"
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

EngineHints engine_hints(const RunOptions& run, const Source* src, const Sink* sink, bool in_place_file) {
  EngineHints h;
  h.codecs = (src && src->codec_demand().compressed) || (sink && sink->codec_demand().compressed);
  h.in_place_file = in_place_file;
  h.cuda_options = run.device_mem || run.streams || (!run.kernel.empty() && run.kernel != "auto");
  return h;
}

EngineDecision decide_engine(EngineChoice requested, const EngineHints& hints) {
  if (requested == EngineChoice::cpu) return {EngineKind::cpu, ""};
  // auto's CPU runs are decided before asking for a GPU: asking starts CUDA,
  // 0.3 s of a 2 s run on the H100 machine (docs/PERF.md, run 71).
  if (requested == EngineChoice::automatic && !hints.cuda_options) {
    const std::string gpu = "; {engine} cuda runs it through a GPU";
    if (hints.codecs)
      return {EngineKind::cpu, "the CPU engine (auto): compressed chunks, so the codecs on the CPU cores bound this "
                               "run and a GPU would only add its start and staging" + gpu};
    if (hints.in_place_file)
      return {EngineKind::cpu, "the CPU engine (auto): in place, the writes to the file and its journal bound this run, "
                               "and the CPU engine writes them as bands of whole rows" + gpu};
  }
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

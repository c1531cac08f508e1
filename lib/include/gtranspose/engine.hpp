// Engines move a whole matrix from a Source to a Sink (or in place), tile by
// tile, exactly as a run plan (plan.hpp) says. `cpu` is the reference and the
// fallback; `cuda` streams tiles through the GPU. One interface, one factory:
// nothing else in the library asks which engine it is talking to.
//
// An engine object may run many times (plan once per run, execute many, as
// HPTT's plans are reused): the CUDA engine keeps its pinned staging buffers
// from one run to the next, so a program that transposes again does not pay
// for pinning again. job.hpp's execute() plans and runs in one call.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "gtranspose/inplace_writer.hpp"
#include "gtranspose/matrix.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/report.hpp"

namespace gt {

struct RunOptions {
  std::uint64_t host_mem = 0;    // host budget in bytes (0: default_host_budget())
  std::uint64_t device_mem = 0;  // device budget in bytes (0: default_device_budget())
  std::uint64_t tile_elems = 0;  // a cap on elements per tile (0: the plan's choice)
  int threads = 0;               // CPU threads (0: hardware concurrency)
  int streams = 0;               // CUDA streams (0: the plan's default)
  std::string kernel = "auto";   // CUDA kernel name ("auto": the fastest for the element size)
  // Called from an engine thread as tiles finish, one call at a time and in
  // order: (bytes done, bytes total).
  std::function<void(std::uint64_t, std::uint64_t)> progress;
  // Called from the job's thread as it enters a stage, before that stage's
  // first progress call: "transpose", "copy", "recover", "transpose block 1
  // of 2", "permute rows", "sync" (the output's fsync and rename, which
  // reports no bytes). Progress's bytes count from zero again in each stage
  // that reports bytes.
  std::function<void(const std::string&)> stage;
  // Polled between tiles; when it becomes true the engine stops and throws
  // gt::Error(cancelled).
  const std::atomic<bool>* cancel = nullptr;
};

enum class EngineChoice { automatic, cuda, cpu };
// "auto" | "cuda" | "gpu" | "cpu"; throws gt::Error(usage) otherwise.
[[nodiscard]] EngineChoice parse_engine(const std::string& name);

// What a job knows of its run when it resolves auto (engine_hints fills it
// from the opened files and the options).
struct EngineHints {
  // The chunks in or out pass through a compressor (CodecDemand::compressed):
  // the codecs on the CPU cores bound the run, and the GPU would only add
  // CUDA's start and its pinned staging.
  bool codecs = false;
  // A file transposed in place: its journal's and the matrix's writes bound
  // the run, and the CPU engine's bands of whole rows (journal_square.cpp)
  // write them faster than the CUDA engine's tile pairs on any number of
  // cores. 8 GiB f32 on the H100 machine's disk (docs/PERF.md, runs
  // 195-196), bands against pairs: 1 core 18.0 s against 21.7 s, 2 cores
  // 11.1 against 20.5, 4 cores 7.7 against 19.1, 16 cores 7.0-8.2 against
  // 14.4-17.7 (runs 189-194).
  bool in_place_file = false;
  // Options only the CUDA engine takes ({device_mem}, {streams}, {kernel}):
  // auto keeps the GPU for them.
  bool cuda_options = false;
};
class Source;
class Sink;
[[nodiscard]] EngineHints engine_hints(const RunOptions& run, const Source* src, const Sink* sink, bool in_place_file);

// Which engine a choice resolves to, and why ("no CUDA device found: using
// the CPU engine"). The one place that asks whether a GPU is present and
// that resolves auto: the GPU where there is one, except for the runs the
// hints say the CPU engine runs faster (docs/PERF.md, runs 69-70).
// Throws gt::Error(no_device) for EngineChoice::cuda without a usable device.
struct EngineDecision {
  EngineKind kind = EngineKind::cpu;
  std::string note;  // non-empty when automatic chose the CPU: why
};
[[nodiscard]] EngineDecision decide_engine(EngineChoice requested, const EngineHints& hints = {});

class Engine {
 public:
  virtual ~Engine() = default;
  virtual EngineKind kind() const = 0;
  // What the planner needs of this engine for a run of `elem_size`-byte
  // elements with `opts`: the kernel it resolves opts.kernel to (an unknown
  // or unusable name is gt::Error(usage)), the device memory free, threads.
  virtual EngineCaps caps(const RunOptions& opts, std::size_t elem_size) const = 0;
  // Out of place: dst = transpose(src), as `plan` says. Throws gt::Error.
  virtual RunReport run(Source& src, Sink& dst, const RunPlan& plan, const RunOptions& opts) = 0;
  // In place on a square matrix, through `writer` (which orders and makes
  // durable the writes); the matrix is durable when it returns.
  virtual RunReport run_inplace(InplaceMatrix& m, InplaceWriter& writer, const RunPlan& plan,
                                const RunOptions& opts) = 0;
  // Frees whatever the engine keeps between runs (the CUDA engine's pinned
  // staging). The engine stays usable.
  virtual void release() {}
};

// The one factory. Throws gt::Error(no_device) for cuda in a build or on a
// machine without it.
[[nodiscard]] std::unique_ptr<Engine> make_engine(EngineKind kind);

}  // namespace gt

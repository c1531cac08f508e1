// A whole transpose job, as the CLI asks for it: check the request, open the
// input, pick the engine, run it, and commit the output only when complete.
#pragma once
#include <string>

#include "gtranspose/engine.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/report.hpp"

namespace gt {

enum class EngineChoice { automatic, cuda, cpu };
// "auto" | "cuda" | "cpu"; throws gt::Error(usage) otherwise.
EngineChoice parse_engine(const std::string& name);

struct JobOptions {
  std::string input;
  std::string output;  // empty with in_place
  bool in_place = false;
  // In place: finish a run that was interrupted (its journal, journal.hpp,
  // lies beside the file). Without it, a file with a journal is refused.
  bool resume = false;
  OpenOptions open;    // --shape / --dtype (raw)
  SinkOptions sink;    // --force
  EngineChoice engine = EngineChoice::automatic;
  RunOptions run;
};

// Which engine a request resolves to, and why ("no GPU found: ..."). Throws
// gt::Error(no_device) for --engine cuda without a usable device.
struct EngineDecision {
  EngineChoice engine = EngineChoice::cpu;
  std::string note;  // non-empty when auto fell back, for the report
};
EngineDecision decide_engine(EngineChoice requested);

// Runs the job. Throws gt::Error; on any failure the input is untouched
// (out of place) and no output exists under the final name. In place on a
// file, the engine writes through a journal (journal.hpp): a run stopped at
// any point leaves the journal, and the same job with `resume` finishes it.
RunReport run_job(const JobOptions& opts);

}  // namespace gt

// A whole transpose job, as the CLI asks for it: check the request, open the
// input, choose the engine, plan the run once, run it, and commit the output
// only when complete.
#pragma once
#include <string>

#include "gtranspose/engine.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/inplace_writer.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/report.hpp"

namespace gt {

struct JobOptions {
  std::string input;
  std::string output;  // empty with in_place
  bool in_place = false;
  // In place: finish a run that was interrupted (its journal, journal.hpp,
  // lies beside the file). Without it, a file with a journal is refused.
  bool resume = false;
  OpenOptions open;    // shape / dtype (raw)
  SinkOptions sink;    // force
  EngineChoice engine = EngineChoice::automatic;
  RunOptions run;
};

// Runs the job. Throws gt::Error; on any failure the input is untouched
// (out of place) and no output exists under the final name. In place on a
// file, the engine writes through a journal (journal.hpp): a run stopped at
// any point leaves the journal, and the same job with `resume` finishes it.
RunReport run_job(const JobOptions& opts);
// The checks run_job makes of a request before it opens anything (an input
// and an output, or {in_place} alone; {resume} only in place; not the same
// file twice). Throws gt::Error(usage).
void check_job(const JobOptions& opts);

// What a job would do, and nothing it would do: a dry run (the CLI's
// --dry-run). It checks what run_job checks before it writes (the request,
// the input, the output's name, folder and type, a pending journal, the
// budgets: the same gt::Error a run would throw), plans the run with the
// same planner, and estimates its time (the summary's estimate_basis says
// from what). It opens the input for reading only and creates nothing: no
// output, no temporary file, no journal, no lock file.
struct JobPreview {
  PlanSummary plan;
  MatrixDescription input, output;
};
[[nodiscard]] JobPreview preview_job(const JobOptions& opts);

// What a run plan is asked, for these matrices and options (plan.hpp).
[[nodiscard]] PlanRequest plan_request(const Source& src, const Sink& dst, const RunOptions& opts);
[[nodiscard]] PlanRequest plan_request(const InplaceMatrix& m, const InplaceWriter& writer, const RunOptions& opts);

// Plans a run with `engine` and runs it: what run_job does once its files
// are open, and what the host-memory API and the benches do with memory.
RunReport execute(Engine& engine, Source& src, Sink& dst, const RunOptions& opts);
// For a source that stores its own transpose (Source::stores_transpose: a
// Fortran-order .npy): plans the run as execute() would (so options and
// budgets are checked alike), then copies the stored bytes to `dst` in
// order, in bands within the host budget, with no engine and no
// transposition: as fast as a copy of the file. run_job takes this path by
// itself.
RunReport copy_stored_transpose(Engine& engine, Source& src, Sink& dst, const RunOptions& opts);
RunReport execute_inplace(Engine& engine, InplaceMatrix& m, InplaceWriter& writer, const RunOptions& opts);
// In place on any shape plan_inplace_shape() takes: a square as above; a
// rectangle's stages in order (journal.hpp), from the one `stages` says the
// run goes on with, each block planned and run by the engine.
RunReport execute_inplace_stages(Engine& engine, InplaceMatrix& whole, InplaceStages& stages, const RunOptions& opts);

}  // namespace gt

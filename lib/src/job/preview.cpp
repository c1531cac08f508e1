// The dry run (job.hpp: preview_job): run_job's checks and plan, with the
// input opened for reading only and the output predicted (format.hpp:
// plan_output), so nothing is created and nothing is written.
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "engine/cpu/thread_pool.hpp"
#include "formats/internal.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/journal.hpp"
#include "job/job_internal.hpp"

namespace gt {

namespace {

bool exists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

// The in-place request run_job makes through the journal (a file in place
// always writes through it: plan_request(InplaceMatrix, InplaceWriter)),
// for the square the engine runs: the matrix, or a rectangle's block.
PlanRequest inplace_request(const Source& src, std::uint64_t side, const RunOptions& o) {
  PlanRequest r;
  r.mode = RunMode::in_place;
  r.info = src.info();
  r.info.shape = {side, side};
  r.what = src.describe();
  r.reserved = src.reserved_bytes();
  r.reserved_what = src.describe();
  r.in.concurrent = src.concurrent_reads();
  r.ordered_writes = true;
  r.kept_batches = journal_batches_kept(kJournalGroup);  // Journal::batches_kept
  r.host_mem = o.host_mem;
  r.device_mem = o.device_mem;
  r.tile_elems = o.tile_elems;
  r.streams = o.streams;
  r.kernel = o.kernel;
  return r;
}

// The output as the sink would make it: the input's type and byte order,
// the transposed shape; an HDF5 output that keeps an HDF5 input's layout
// has its chunks transposed and its filters.
MatrixDescription planned_description(const MatrixDescription& in, const Location& loc, bool mirrors) {
  MatrixDescription d = in;
  d.path = loc.path;
  d.format = format_name(loc.format);
  d.dataset = loc.format == Format::hdf5 ? loc.dataset : "";
  d.shape = in.shape.transposed();
  d.chunks = mirrors ? in.chunks.transposed() : Shape{0, 0};
  if (!mirrors) d.filters.clear();
  d.text = "not created (a dry run)";
  return d;
}

}  // namespace

JobPreview preview_job(const JobOptions& opts) {
  check_job(opts);
  // Chosen as run_job chooses it: once the files are open (a GPU named
  // outright checked first).
  if (opts.engine == EngineChoice::cuda) (void)decide_engine(opts.engine);
  EngineDecision decision;
  std::unique_ptr<Engine> engine;
  const auto caps_of = [&](const Source* src, const Sink* sink, std::size_t elem_size) {
    decision = decide_engine(opts.engine, engine_hints(opts.run, src, sink, opts.in_place));
    engine = make_engine(decision.kind);
    return engine->caps(opts.run, elem_size);
  };
  JobPreview pv;
  Location in_loc, out_loc;
  MatrixInfo info;
  std::string text;
  bool mirrors = false;
  std::vector<std::string> notes;
  {
    auto src = open_source(opts.input, opts.open);  // in place too: read only
    info = src->info();
    in_loc = src->location();
    text = src->describe();
    if (opts.in_place) {
      const std::string file = in_loc.path;
      if (in_loc.format == Format::hdf5) fmt::require_square(info, file);
      else fmt::require_inplace_shape(info, file, src->stores_transpose());
      const bool pending = !find_journal(file).empty();
      if (pending && !opts.resume) refuse_if_pending(file, "transpose in place");
      if (!pending && opts.resume)
        throw Error(ErrorKind::usage, "{resume}: " + file + " has no journal, so no interrupted run to finish: drop {resume}");
      const InplaceShape is = plan_inplace_shape(info.shape, text);
      const EngineCaps caps = caps_of(nullptr, nullptr, info.elem_size);
      // A fresh square (a rectangle's square blocks) on a file takes bands of
      // whole rows on the CPU engine where the budget holds one and no {tile}
      // asks for tile pairs (job.cpp, band_route).
      std::optional<SquareBandPlan> sq;
      if (is.kind != InplaceShape::general && !opts.run.tile_elems && caps.kind == EngineKind::cpu)
        sq = plan_square_bands(is.side, info.elem_size, opts.run.host_mem, src->reserved_bytes(),
                               cpu::resolve_threads(opts.run.threads));
      if (sq)
        pv.plan = summarize_square_bands(is.side, info.elem_size, *sq, opts.run.host_mem, src->reserved_bytes(),
                                         is.blocks);
      else if (is.kind == InplaceShape::general)
        pv.plan = summarize_bands(info.shape, info.elem_size, is,
                                  plan_bands(info.shape, info.elem_size, opts.run.host_mem, src->reserved_bytes(),
                                             cpu::resolve_threads(opts.run.threads)),
                                  opts.run.host_mem, src->reserved_bytes());
      else
        pv.plan = summarize_plan(plan_run(inplace_request(*src, is.side, opts.run), caps));
      if (is.kind != InplaceShape::square && is.kind != InplaceShape::general)
        add_rectangle(pv.plan, is, plan_permute(is, info.elem_size, opts.run.host_mem, src->reserved_bytes()));
      if (opts.resume)
        notes.push_back(is.kind == InplaceShape::general
                            ? "resuming: the interrupted run's journal says where it goes on; its bands are planned "
                              "afresh, as shown"
                            : "resuming: the interrupted run's journal fixes its route (bands or tile pairs), their "
                              "size and where it goes on; the plan shown is a fresh run's");
      out_loc = in_loc;
    } else {
      if (!in_loc.path.empty()) refuse_if_pending(in_loc.path, "read");
      if (exists(parse_location(opts.output).path)) refuse_if_pending(parse_location(opts.output).path, "replace");
      PlannedOutput po = plan_output(opts.output, *src, opts.sink);
      const EngineCaps caps = caps_of(src.get(), po.sink.get(), info.elem_size);
      pv.plan = summarize_plan(plan_run(plan_request(*src, *po.sink, opts.run), caps));
      if (src->stores_transpose())
        notes.push_back("the input stores its transpose (a Fortran-order .npy): the run copies its bytes in order, "
                        "no transposer");
      notes.insert(notes.end(), po.notes.begin(), po.notes.end());
      out_loc = po.location;
      mirrors = po.mirrors_input_layout;
    }
  }
  // The input is closed again before describe_matrix opens an HDF5 file.
  pv.input = describe_matrix(in_loc, info, text);
  if (opts.in_place) {
    pv.output = pv.input;
    pv.output.shape = info.shape.transposed();
  } else {
    pv.output = planned_description(pv.input, out_loc, mirrors);
  }
  if (!decision.note.empty()) notes.insert(notes.begin(), decision.note);
  pv.plan.notes.insert(pv.plan.notes.end(), notes.begin(), notes.end());
  estimate_time(pv.plan, in_loc.path, info.bytes(), info.elem_size, !pv.input.filters.empty(),
                !pv.output.filters.empty());
  return pv;
}

}  // namespace gt

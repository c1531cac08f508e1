// A whole job (job.hpp): checks, files, the engine, one plan, the run, the
// commit. The decisions themselves live elsewhere: which engine in
// engine/factory.cpp, budgets and tiles in plan/run_plan.cpp.
#include "gtranspose/job.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "core/stages.hpp"
#include "engine/cpu/thread_pool.hpp"
#include "job/job_internal.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {

namespace {

// Tells the caller (the CLI's progress line) which stage the job entered.
void enter_stage(const RunOptions& o, const std::string& name) {
  if (o.stage) o.stage(name);
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return !path.empty() && ::stat(path.c_str(), &st) == 0;
}

}  // namespace

void check_job(const JobOptions& o) {
  if (o.input.empty()) throw Error(ErrorKind::usage, "no input given: name the matrix to transpose");
  if (o.in_place && !o.output.empty())
    throw Error(ErrorKind::usage, "{in_place} takes no output file: drop the output, or drop {in_place}");
  if (!o.in_place && o.output.empty())
    throw Error(ErrorKind::usage, "no output given: name one, or use {in_place} for a square matrix");
  if (o.resume && !o.in_place)
    throw Error(ErrorKind::usage, "{resume} finishes an interrupted {in_place} run: add {in_place}, or drop {resume}");
  if (!o.in_place && same_file(o.input, o.output))
    throw Error(ErrorKind::usage,
                "the output is the same file as the input: name another output, or use {in_place} (square matrices)" +
                    std::string(parse_location(o.output).dataset.empty()
                                    ? ""
                                    : "; to add the transpose to the input's own HDF5 file, write it to another file "
                                      "and copy it in with h5copy"));
}

namespace {

SideTraits traits_of(bool concurrent, const HostView* v) {
  SideTraits t;
  t.concurrent = concurrent;
  t.in_memory = v != nullptr;
  t.pinned = v && v->pinned;
  return t;
}

void copy_options(PlanRequest& r, const RunOptions& o) {
  r.host_mem = o.host_mem;
  r.device_mem = o.device_mem;
  r.tile_elems = o.tile_elems;
  r.streams = o.streams;
  r.kernel = o.kernel;
}

// What the formats did on their own threads (HDF5 chunk codecs), in the
// report whichever engine ran: their stages after the engine's, their notes.
void add_format_report(RunReport& r, const FormatReport& f) {
  for (const StageStat& s : f.stages) {
    StageStat& t = r.stage(s.name);
    t.busy_s += s.busy_s;
    t.bytes += s.bytes;
  }
  r.notes.insert(r.notes.end(), f.notes.begin(), f.notes.end());
}

}  // namespace

PlanRequest plan_request(const Source& src, const Sink& dst, const RunOptions& opts) {
  PlanRequest r;
  r.mode = RunMode::out_of_place;
  r.info = src.info();
  r.what = src.describe();
  r.preferred_block = src.preferred_block();
  // The source's chunk cache and the sink's (a chunked HDF5 output) both
  // come out of the budget before the engine divides the rest.
  r.reserved = src.reserved_bytes() + dst.reserved_bytes();
  r.reserved_what = src.describe() + (dst.reserved_bytes() ? " with its chunked output" : "");
  r.in = traits_of(src.concurrent_reads(), src.host_view());
  r.out = traits_of(dst.concurrent_writes(), dst.host_view());
  r.codec_in = src.codec_demand();
  r.codec_out = dst.codec_demand();
  copy_options(r, opts);
  return r;
}

PlanRequest plan_request(const InplaceMatrix& m, const InplaceWriter& writer, const RunOptions& opts) {
  PlanRequest r;
  r.mode = RunMode::in_place;
  r.info = m.info();
  r.what = m.describe();
  r.reserved = m.reserved_bytes();
  r.reserved_what = m.describe();
  r.in = traits_of(m.concurrent_io(), m.host_view());
  r.ordered_writes = writer.ordered();
  r.kept_batches = writer.batches_kept();
  r.resumed_block = writer.required_block();
  r.first_pair = writer.first_pair();
  copy_options(r, opts);
  return r;
}

RunReport execute(Engine& engine, Source& src, Sink& dst, const RunOptions& opts) {
  const MatrixInfo& in = src.info();
  if (dst.info().shape != in.shape.transposed() || dst.info().elem_size != in.elem_size)
    throw Error(ErrorKind::internal, "output " + to_string(dst.info().shape) + " is not the transpose of input " +
                                         to_string(in.shape));
  const RunPlan plan = plan_run(plan_request(src, dst, opts), engine.caps(opts, in.elem_size));
  if (plan.codec_threads_in) src.set_codec_threads(plan.codec_threads_in);
  if (plan.codec_threads_out) dst.set_codec_threads(plan.codec_threads_out);
  RunReport r = engine.run(src, dst, plan, opts);
  add_format_report(r, src.format_report());
  add_format_report(r, dst.format_report());
  r.input = src.describe();
  r.output = dst.describe();
  return r;
}

namespace {

// The journal's own writes and syncs happened inside the write stage.
void add_writer_stats(RunReport& r, const InplaceWriter& writer) {
  if (!writer.journal_bytes()) return;
  for (const StageStat& s : writer.stage_stats()) r.stage(s.name) = s;
  r.notes.push_back("journal: " + format_bytes(writer.journal_bytes()) + " written for crash safety, " +
                    std::to_string(writer.journal_syncs()) + " journal syncs, " +
                    std::to_string(writer.matrix_flushes()) + " matrix flushes");
}

// Adds a stage's report to the run's: times and bytes add up.
void add_stage(RunReport& r, const RunReport& s) {
  r.wall_s += s.wall_s;
  r.tiles += s.tiles;
  for (const StageStat& st : s.stages) {
    StageStat& t = r.stage(st.name);
    t.busy_s += st.busy_s;
    t.bytes += st.bytes;
  }
  for (const std::string& n : s.notes)
    if (std::find(r.notes.begin(), r.notes.end(), n) == r.notes.end()) r.notes.push_back(n);
}

}  // namespace

namespace {

// Bands of whole rows for a square (a rectangle's square blocks) of `side`:
// a resumed run of bands; a fresh run on the CPU engine where the budget
// holds a band and no {tile} asks for tile pairs. nullopt: tile pairs
// through the engine (the CUDA engine's runs its kernel, as asked).
std::optional<SquareBandPlan> band_route(const InplaceStages& stages, std::uint64_t side, const InplaceMatrix& whole,
                                         const RunOptions& opts, const Engine& engine) {
  const InplaceStages::SquareRoute route = stages.square_route();
  if (route == InplaceStages::SquareRoute::pairs ||
      (route == InplaceStages::SquareRoute::either && (opts.tile_elems || engine.kind() != EngineKind::cpu)))
    return std::nullopt;
  return plan_square_bands(side, whole.info().elem_size, opts.host_mem, whole.reserved_bytes(),
                           cpu::resolve_threads(opts.threads),
                           route == InplaceStages::SquareRoute::bands ? stages.required_block() : 0);
}

// A run no engine planned (bands through the journal): its plan, and the
// fields an engine's report would carry.
void report_plan(RunReport& r, PlanSummary plan, int threads, std::uint64_t buffers, std::uint64_t reserved) {
  r.plan = std::move(plan);
  r.engine = r.plan.engine;
  r.kernel = r.plan.kernel;
  r.threads = threads;
  r.tile_shape = r.plan.tile;
  r.host_mem_budget = r.plan.host_budget;
  r.host_buffers = buffers;
  r.host_reserved = reserved;
}

// Where the CUDA engine was asked for but a resumed run goes on in bands.
constexpr const char* kResumedInBands =
    "resumed in bands of whole rows, as the interrupted run began: the CPU's threads transpose them, no GPU step";

// A square in bands of whole rows through the journal (plan.hpp,
// SquareBandPlan): no engine runs, the CPU's threads transpose the bands.
RunReport execute_square_bands(Engine& engine, InplaceMatrix& whole, InplaceStages& stages, const SquareBandPlan& sq,
                               const RunOptions& opts) {
  const MatrixInfo& info = whole.info();
  check_applicable(plan_request(whole, stages, opts), engine.caps(opts, info.elem_size));
  enter_stage(opts, "transpose in bands");
  RunReport r;
  r.host_rss_start = current_rss_bytes();
  const auto t0 = Clock::now();
  stages.square_bands(whole, sq);
  add_writer_stats(r, stages);
  end_report(r, seconds_between(t0, Clock::now()));  // the bottleneck, the overlap, the peak memory
  report_plan(r, summarize_square_bands(info.shape.rows, info.elem_size, sq, opts.host_mem, whole.reserved_bytes()),
              sq.threads, sq.buffer_bytes, whole.reserved_bytes());
  r.tiles = sq.bands;
  if (engine.kind() == EngineKind::cuda) r.notes.push_back(kResumedInBands);
  r.mode = mode_name(RunMode::in_place);
  r.shape = info.shape;
  r.elem_size = info.elem_size;
  r.bytes = info.bytes();
  r.input = r.output = whole.describe();
  return r;
}

}  // namespace

RunReport execute_inplace_stages(Engine& engine, InplaceMatrix& whole, InplaceStages& stages, const RunOptions& opts) {
  const Shape shape = stages.shape();
  if (shape.rows == shape.cols) {
    if (const std::optional<SquareBandPlan> sq = band_route(stages, shape.rows, whole, opts, engine))
      return execute_square_bands(engine, whole, stages, *sq, opts);
    return execute_inplace(engine, whole, stages, opts);
  }
  const InplaceShape is = plan_inplace_shape(shape, whole.describe());
  const std::vector<InplaceStage> list = inplace_stages(is);
  const std::size_t es = whole.info().elem_size;
  // A general shape's bands, planned before anything is written: a budget
  // that holds none is refused with the journal untouched.
  std::optional<BandPlan> bands;
  if (is.kind == InplaceShape::general)
    bands = plan_bands(shape, es, opts.host_mem, whole.reserved_bytes(), cpu::resolve_threads(opts.threads));
  RunReport r;
  bool first = true;
  for (std::uint64_t i = stages.next_stage(); i < list.size(); ++i) {
    stages.start_stage(i);
    const InplaceStage& st = list[i];
    if (is_band_stage(st.kind)) {
      const std::string name = st.kind == InplaceStage::rotate        ? "rotate columns"
                               : st.kind == InplaceStage::row_shuffle ? "shuffle rows"
                                                                      : "shuffle columns";
      enter_stage(opts, name);
      const auto t0 = Clock::now();
      stages.band_step(whole, *bands);
      const double s = seconds_between(t0, Clock::now());
      r.wall_s += s;
      StageStat& p = r.stage(name);
      p.busy_s += s;
      p.bytes += whole.info().bytes();
      continue;
    }
    if (st.kind == InplaceStage::block) {
      enter_stage(opts, "transpose block " + std::to_string(st.index + 1) + " of " + std::to_string(is.blocks));
      const auto view = block_view(whole, is, st.index);
      if (const std::optional<SquareBandPlan> sq = band_route(stages, is.side, whole, opts, engine)) {
        if (first) {
          check_applicable(plan_request(*view, stages, opts), engine.caps(opts, whole.info().elem_size));
          report_plan(r,
                      summarize_square_bands(is.side, whole.info().elem_size, *sq, opts.host_mem,
                                             whole.reserved_bytes(), is.blocks),
                      sq->threads, sq->buffer_bytes, whole.reserved_bytes());
          if (engine.kind() == EngineKind::cuda) r.notes.push_back(kResumedInBands);
          first = false;
        }
        const auto t0 = Clock::now();
        stages.square_bands(*view, *sq);
        r.wall_s += seconds_between(t0, Clock::now());
        r.tiles += sq->bands;
        continue;
      }
      const RunPlan plan = plan_run(plan_request(*view, stages, opts), engine.caps(opts, whole.info().elem_size));
      const RunReport b = engine.run_inplace(*view, stages, plan, opts);
      if (first) {  // the engine's side of the report; times and stages add up below
        RunReport meta = b;
        meta.wall_s = r.wall_s, meta.tiles = 0, meta.stages = r.stages, meta.notes.clear();
        r = meta;
        first = false;
      }
      add_stage(r, b);
      continue;
    }
    enter_stage(opts, st.kind == InplaceStage::permute ? "permute rows" : "finish");
    const auto t0 = Clock::now();
    if (st.kind == InplaceStage::permute) {
      PermutePlan pp = plan_permute(is, whole.info().elem_size, opts.host_mem, whole.reserved_bytes());
      pp.threads = cpu::resolve_threads(opts.threads);
      stages.permute(whole, pp);
    } else {
      stages.end(whole);
    }
    const double s = seconds_between(t0, Clock::now());
    r.wall_s += s;
    if (st.kind == InplaceStage::permute) {  // a grid has several: their times add up
      StageStat& p = r.stage("permute");
      p.name = "permute";
      p.busy_s += s;
      p.bytes = stages.stage_bytes();  // what every permutation so far moved
    }
  }
  add_writer_stats(r, stages);
  // Runs no engine reported on (bands only) still say their peak memory.
  if (!r.host_mem_peak) r.host_mem_peak = peak_rss_bytes();
  if (bands) {
    // No engine ran: the CPU's threads permuted the bands.
    report_plan(r, summarize_bands(shape, es, is, *bands, opts.host_mem, whole.reserved_bytes()), bands->threads,
                bands->buffer_bytes, whole.reserved_bytes());
    r.tiles = bands->bands;
    if (engine.kind() == EngineKind::cuda)
      r.notes.push_back("the CPU's threads permute a general shape's bands: no GPU step for this shape");
  } else if (!r.plan.engine.empty()) {
    add_rectangle(r.plan, is, plan_permute(is, whole.info().elem_size, opts.host_mem, whole.reserved_bytes()));
  }
  r.mode = mode_name(RunMode::in_place);
  r.shape = shape;
  r.elem_size = whole.info().elem_size;
  r.bytes = whole.info().bytes();
  r.notes.insert(r.notes.begin(), "rectangle in place: " + rectangle_stages_text(is));
  r.input = r.output = whole.describe();
  return r;
}

RunReport execute_inplace(Engine& engine, InplaceMatrix& m, InplaceWriter& writer, const RunOptions& opts) {
  enter_stage(opts, "transpose in place");
  const RunPlan plan = plan_run(plan_request(m, writer, opts), engine.caps(opts, m.info().elem_size));
  RunReport r = engine.run_inplace(m, writer, plan, opts);
  add_writer_stats(r, writer);
  r.input = r.output = m.describe();
  return r;
}

RunReport run_job(const JobOptions& opts) {
  check_job(opts);
  // The engine is chosen once the files are open: auto reads what they hold.
  // A GPU named outright is checked first, before a file is opened.
  if (opts.engine == EngineChoice::cuda) (void)decide_engine(opts.engine);
  EngineDecision decision;
  std::unique_ptr<Engine> engine;
  const auto start_engine = [&](const Source* src, const Sink* sink, bool in_place) {
    decision = decide_engine(opts.engine, engine_hints(opts.run, src, sink, in_place));
    engine = make_engine(decision.kind);
  };

  RunReport report;
  // What the report's input and output objects say, read once every file
  // of the run is closed (describe_matrix opens an HDF5 file itself).
  struct Described {
    Location loc;
    MatrixInfo info;
  } in_side, out_side;
  if (opts.in_place) {
    auto m = open_inplace(opts.input, opts.open);
    in_side = {m->location(), m->info()};
    out_side = in_side;
    out_side.info.shape = in_side.info.shape.transposed();
    // One run at a time on a file transposed in place, whatever names it.
    const std::string file = m->location().path;
    const FileLock lock = lock_file(file, true);
    // The engine writes through the journal beside the file; with resume,
    // opening it finishes the interrupted batches first.
    if (opts.resume) enter_stage(opts.run, "recover");
    auto journal = open_inplace_journal(*m, file, opts.resume ? ResumeMode::resume : ResumeMode::fresh,
                                        recovery_budget(opts.run.host_mem, m->reserved_bytes()));
    start_engine(nullptr, nullptr, true);
    try {
      report = execute_inplace_stages(*engine, *m, *journal, opts.run);
    } catch (const Error& e) {
      // A run that stopped after it began writing leaves its journal: say
      // how to finish (the matrix is partly transposed until then).
      const std::string jp = find_journal(file);
      if (e.kind() != ErrorKind::usage && !jp.empty() && journal->finishable())
        throw Error(e.kind(), e.message() + " (" + file + " is partly transposed: its journal " + jp +
                                  " lets the same command with {resume} finish it)");
      throw;
    }
    if (!lock.held()) report.notes.push_back("the file system of " + file + " takes no locks: nothing kept another run off it");
  } else {
    auto src = open_source(opts.input, opts.open);
    // A file half transposed in place is neither the matrix nor its transpose.
    const std::string in_file = src->location().path;
    const FileLock lock = in_file.empty() ? FileLock() : lock_file(in_file, false);
    if (!in_file.empty()) refuse_if_pending(in_file, "read");
    const std::string out_file = parse_location(opts.output).path;
    if (file_exists(out_file)) refuse_if_pending(out_file, "replace");
    auto sink = create_sink(opts.output, *src, opts.sink);
    start_engine(src.get(), sink.get(), false);
    in_side = {src->location(), src->info()};
    out_side = {output_location(opts.output, opts.sink.format), sink->info()};
    const auto t0 = Clock::now();
    enter_stage(opts.run, src->stores_transpose() ? "copy" : "transpose");
    report = src->stores_transpose() ? copy_stored_transpose(*engine, *src, *sink, opts.run)
                                     : execute(*engine, *src, *sink, opts.run);
    enter_stage(opts.run, "sync");
    sink->commit();
    // The commit's fsync is part of the job: the wall time counts it.
    const double total_s = seconds_between(t0, Clock::now());
    if (total_s > report.wall_s) {
      report.stage("commit").busy_s = total_s - report.wall_s;
      report.wall_s = total_s;
    }
  }
  if (!decision.note.empty()) report.notes.insert(report.notes.begin(), decision.note);
  report.in_matrix = describe_matrix(in_side.loc, in_side.info, report.input);
  report.out_matrix = describe_matrix(out_side.loc, out_side.info, report.output);
  return report;
}

}  // namespace gt

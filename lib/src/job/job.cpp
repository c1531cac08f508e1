#include "gtranspose/job.hpp"

#include <sys/stat.h>

#include <chrono>

#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/sizes.hpp"

namespace gt {

EngineChoice parse_engine(const std::string& name) {
  if (name == "auto") return EngineChoice::automatic;
  if (name == "cuda" || name == "gpu") return EngineChoice::cuda;
  if (name == "cpu") return EngineChoice::cpu;
  throw Error(ErrorKind::usage, "unknown engine '" + name + "': use auto, cuda or cpu");
}

EngineDecision decide_engine(EngineChoice requested) {
  if (requested == EngineChoice::cpu) return {EngineChoice::cpu, ""};
  std::string why;
  int n = cuda_device_count(&why);
  if (n > 0) return {EngineChoice::cuda, ""};
  if (requested == EngineChoice::cuda)
    throw Error(ErrorKind::no_device, "--engine cuda: " + why + "; use --engine cpu (or auto) on this machine");
  return {EngineChoice::cpu, why + ": using the CPU engine"};
}

namespace {

void check_request(const JobOptions& o) {
  if (o.input.empty()) throw Error(ErrorKind::usage, "no input given: gtranspose IN OUT, or gtranspose IN --in-place");
  if (o.in_place && !o.output.empty())
    throw Error(ErrorKind::usage, "--in-place takes no output file: drop OUT, or drop --in-place");
  if (!o.in_place && o.output.empty())
    throw Error(ErrorKind::usage, "no output given: gtranspose IN OUT, or gtranspose IN --in-place for a square matrix");
  if (o.resume && !o.in_place)
    throw Error(ErrorKind::usage, "--resume finishes an interrupted --in-place run: add --in-place, or drop --resume");
  if (!o.in_place && same_file(o.input, o.output))
    throw Error(ErrorKind::usage, "OUT is the same file as IN: name another output, or use --in-place (square matrices)");
}

// Takes what the source holds by itself (an HDF5 chunk cache) out of the
// host budget the engine may divide; refuses a budget that leaves too little.
std::uint64_t engine_budget(std::uint64_t host_mem, std::uint64_t reserved, const std::string& what) {
  if (reserved == 0) return host_mem;
  if (reserved > host_mem / 2)
    throw Error(ErrorKind::usage, what + ": stored in chunks that take " + format_bytes(reserved) +
                                      " of memory to read: give --host-mem of at least " + format_bytes(2 * reserved));
  return host_mem - reserved;
}

void note_reserved(RunReport& r, std::uint64_t host_mem, std::uint64_t reserved) {
  r.host_mem_budget = host_mem;
  if (reserved) r.notes.push_back("HDF5 chunk cache: " + format_bytes(reserved) + " of the host budget");
}

}  // namespace

RunReport run_job(const JobOptions& opts) {
  check_request(opts);
  EngineDecision engine = decide_engine(opts.engine);
  RunOptions run = opts.run;
  if (run.host_mem == 0) run.host_mem = default_host_budget();

  RunReport report;
  if (opts.in_place) {
    auto m = open_inplace(opts.input, opts.open);
    const std::uint64_t host_mem = run.host_mem;
    run.host_mem = engine_budget(host_mem, m->reserved_bytes(), m->describe());
    // The engine writes through the journal beside the file (unless the
    // caller brought its own writer); with --resume, opening it finishes
    // the interrupted batch first.
    const std::string file = m->location().path;
    std::unique_ptr<InplaceWriter> journal;
    if (!run.writer) {
      journal = open_inplace_journal(*m, file, opts.resume ? ResumeMode::resume : ResumeMode::fresh, run.host_mem);
      run.writer = journal.get();
    }
    try {
      report = engine.engine == EngineChoice::cuda ? run_cuda_inplace(*m, run) : run_cpu_inplace(*m, run);
    } catch (const Error& e) {
      // A run that stopped after it began writing leaves its journal: say
      // how to finish (the matrix is partly transposed until then).
      const std::string jp = journal_path(file);
      struct stat st {};
      if (journal && e.kind() != ErrorKind::usage && ::lstat(jp.c_str(), &st) == 0)
        throw Error(e.kind(), std::string(e.what()) + " (" + file + " is partly transposed: its journal " + jp +
                                  " lets the same command with --resume finish it)");
      throw;
    }
    note_reserved(report, host_mem, m->reserved_bytes());
    report.input = report.output = m->describe();
    if (journal) {
      if (journal->journal_bytes() && report.stage("journal").bytes == 0)
        report.stage("journal") = {"journal", journal->journal_seconds(), journal->journal_bytes()};
      if (journal->first_pair())
        report.notes.push_back("resumed from the journal: " + std::to_string(journal->first_pair()) + " of " +
                               std::to_string(report.tiles) + " tile pairs were done before");
    }
  } else {
    auto src = open_source(opts.input, opts.open);
    const std::uint64_t host_mem = run.host_mem;
    auto sink = create_sink(opts.output, *src, opts.sink);
    // The source's chunk cache and the sink's (a chunked HDF5 output) both
    // come out of the budget before the engine divides the rest.
    const std::uint64_t reserved = src->reserved_bytes() + sink->reserved_bytes();
    run.host_mem = engine_budget(host_mem, reserved,
                                 src->describe() + (sink->reserved_bytes() ? " with its chunked output" : ""));
    auto t0 = std::chrono::steady_clock::now();
    report = engine.engine == EngineChoice::cuda ? run_cuda(*src, *sink, run) : run_cpu(*src, *sink, run);
    note_reserved(report, host_mem, reserved);
    sink->commit();
    // The commit's fsync is part of the job: the wall time counts it.
    double commit_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (commit_s > report.wall_s) {
      report.stage("commit").busy_s = commit_s - report.wall_s;
      report.wall_s = commit_s;
    }
    report.input = src->describe();
    report.output = sink->describe();
  }
  if (!engine.note.empty()) report.notes.insert(report.notes.begin(), engine.note);
  return report;
}

}  // namespace gt

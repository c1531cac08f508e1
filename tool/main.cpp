// gtranspose: the command line. It parses, calls the library, prints; the
// work lives in lib/. Every error is one line on stderr and an exit code:
// 2 for usage errors, 1 for runtime errors, 0 for success.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "about.hpp"
#include "common.hpp"
#include "gtranspose/bench.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/sizes.hpp"
#include "gtranspose/version.hpp"
#include "mpi_run.hpp"
#include "progress.hpp"
#include "signals.hpp"

namespace {

using gt::tool::fail;

constexpr const char* kProgram = "gtranspose";

std::string kernel_help() {
  std::string h = "CUDA kernel: auto (fastest for the element size)";
  auto ks = gt::list_kernels();
  if (!ks.empty()) {
    h += " or one of:";
    for (const auto& k : ks)
      if (k.kind == "transpose") h += " " + k.name;
  }
  return h + "; --list-kernels describes them";
}

enum class Mode { job, bench, bench_host };

// Which options each mode takes; any other given is refused rather than
// ignored. (What an engine can use is the library's to refuse: plan.hpp.)
void refuse_inapplicable(const CLI::App& app, Mode mode) {
  struct Rule {
    const char* flag;
    bool job, bench, bench_host;
  };
  static const Rule kRules[] = {
      {"--in-place", true, false, false}, {"--resume", true, false, false},   {"--format", true, false, false},
      {"--tile", true, false, true},      {"--chunk", true, false, false},    {"--host-mem", true, false, true},
      {"--device-mem", true, false, true}, {"--streams", true, false, true},  {"--threads", true, true, false},
      {"--reps", false, true, true},      {"--warmup", false, true, true},    {"--seed", false, true, true},
      {"--no-peers", false, true, false}, {"--sweep", false, true, false},    {"--host-modes", false, false, true},
      {"--random-shapes", false, true, false}, {"--dry-run", true, false, false},
  };
  const char* name = mode == Mode::job ? "a transpose (IN OUT, or IN --in-place)" : mode == Mode::bench ? "--bench" : "--bench-host";
  for (const Rule& r : kRules) {
    const bool ok = mode == Mode::job ? r.job : mode == Mode::bench ? r.bench : r.bench_host;
    if (!ok && app.count(r.flag)) {
      std::string where;
      for (auto [takes, m] : {std::pair{r.job, "a transpose"}, {r.bench, "--bench"}, {r.bench_host, "--bench-host"}})
        if (takes) where += std::string(where.empty() ? "" : " and ") + m;
      throw gt::Error(gt::ErrorKind::usage, std::string(r.flag) + " applies to " + where + " only, not to " + name);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Every HDF5 file the run finishes is closed; one HDF5 could not close
  // (a full disk) must not be closed again at exit, where HDF5 1.10 crashes.
  gt::hdf5_no_shutdown_at_exit();
  CLI::App app{
      "gtranspose: transpose matrices too large for the GPU and for RAM.\n"
      "  gtranspose IN OUT [options]          out of place\n"
      "  gtranspose IN --in-place [options]   inside the file (squares, R = kC, C = kR, grids of g x g blocks)\n"
      "  gtranspose --bench [options]         kernel bandwidth table\n"
      "  gtranspose --bench-host [options]    the streaming engine, host memory to host memory\n"
      "Inputs by content (HDF5, NumPy), else raw bytes (needs --shape, --dtype); outputs by extension: .h5/.hdf5\n"
      "(FILE.h5:/group/dataset), .npy, .raw/.bin/.dat, or --format. Exit status: 0 done, 2 usage, 1 other errors;\n"
      "killed by SIGINT, SIGTERM or SIGHUP: that signal (a shell shows 128+N).",
      "gtranspose"};
  std::string in, out, shape, dtype, engine = "auto", kernel = "auto", json, host_mem, device_mem, tile, chunk, format;
  bool in_place = false, resume = false, force = false, quiet = false, list = false, bench = false, no_peers = false,
       sweep = false, version = false, bench_host = false, dry_run = false;
  std::string host_modes = "pinned,pageable", list_datasets;
  int threads = 0, streams = 0, reps = 50, warmup = 5, random_shapes = 0;
  std::uint64_t seed = 12345;

  app.add_option("IN", in, "input matrix (FILE, FILE.h5:/dataset)");
  app.add_option("OUT", out, "output matrix, written under a temporary name and renamed when complete");
  app.add_flag("--in-place", in_place,
               "transpose inside the file: any raw or C-order .npy matrix (R x C with no block route takes a slower "
               "route in bands), HDF5 datasets if square");
  app.add_flag("--resume", resume,
               "with --in-place: finish a run that was interrupted (killed, power loss) from the journal "
               "FILE.gtjournal it left beside the file");
  app.add_option("--shape", shape, "ROWSxCOLS of a raw input (or of the --bench matrix)");
  app.add_option("--dtype", dtype, "element type of a raw input or of --bench: " + gt::dtype_names());
  app.add_option("--engine", engine, "auto (cuda where a GPU exists, except compressed HDF5 chunks and files in place, which the CPU engine runs faster; else cpu), cuda or cpu");
  app.add_option("--kernel", kernel, kernel_help());
  app.add_flag("--list-kernels", list, "list the CUDA kernels and exit");
  app.add_flag("-f,--force", force, "replace an existing output (OUT, or the --json file)");
  app.add_option("--json", json, "also write the report (or bench table) as JSON to this file, or - for stdout "
                                  "(the text report then goes to stderr)");
  app.add_option("--format", format, "the format of OUT (of IN with --in-place), whatever its name says: raw, npy "
                                     "or hdf5");
  app.add_flag("-q,--quiet", quiet, "print nothing but errors");
  app.add_option("--host-mem", host_mem, "host memory budget, e.g. 512M, 8GiB (default: a quarter of RAM or of the cgroup's memory limit, <= 16 GiB)");
  app.add_option("--device-mem", device_mem, "device memory budget, e.g. 2G (default: half the free memory, <= 4 GiB)");
  app.add_option("--tile", tile,
                 "elements per tile, overriding the planner (K/M/G suffixes); a square in place on a file then "
                 "moves in tile pairs, not in bands of whole rows");
  app.add_option("--chunk", chunk, "deprecated: the old name of --tile")->group("");
  app.add_option("--threads", threads, "CPU threads (default: all cores)");
  app.add_option("--streams", streams, "CUDA streams (default: the engine's)");
  app.add_flag("--bench", bench, "time kernels in memory beside a copy of the same size");
  app.add_option("--reps", reps, "--bench: timed repetitions (median reported)");
  app.add_option("--warmup", warmup, "--bench: untimed warm-up runs");
  app.add_option("--seed", seed, "--bench: seed of the position pattern");
  app.add_flag("--no-peers", no_peers, "--bench: leave out cuBLAS and cuBLASLt");
  app.add_flag("--sweep", sweep, "--bench: sweep sizes 2^8..2^15 per side and block shapes");
  app.add_option("--random-shapes", random_shapes,
                 "--bench: N random shapes (sides 1..20000, from --seed); the table shows min, median and max "
                 "of each kernel's and peer's % of copy, --json every shape");
  app.add_flag("--bench-host", bench_host,
               "time the CUDA streaming engine from host memory to host memory (--shape, --dtype, --device-mem, "
               "--host-mem, --streams) beside pinned H2D and D2H copies measured in the same run");
  app.add_option("--host-modes", host_modes,
                 "--bench-host: runs, comma-separated: pinned, pageable, inplace-pinned, inplace-pageable "
                 "(default pinned,pageable; in place on a rectangle: the host API, beside the CPU engine's)");
  app.add_flag("--dry-run,--plan", dry_run,
               "print the plan (input, output, tiles, engine, threads, memory, journal, a time estimate) and run "
               "nothing: no output, temporary file or journal is created (with --json, the plan as JSON)");
  app.add_flag("-V,--version", version,
               "print the version, HDF5, CUDA runtime and driver, the codecs built in, and whether a GPU is usable");
  // For the shell completion of FILE.h5:/dataset: one 2-D dataset a line.
  app.add_option("--list-datasets", list_datasets, "list the 2-D datasets of an HDF5 file")->group("");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    std::vector<std::string> known;
    for (const CLI::Option* o : app.get_options())
      for (const std::string& n : o->get_lnames()) known.push_back("--" + n);
    return fail(kProgram, std::string(e.what()) + gt::tool::did_you_mean(argc, argv, known) + " (see gtranspose --help)",
                2);
  }

  try {
    if (version) {
      std::cout << gt::tool::version_text(kProgram, gt::build_info());
      return 0;
    }
    if (!list_datasets.empty()) {
      for (const std::string& d : gt::list_matrices(list_datasets)) std::cout << gt::tool::printable(d) << "\n";
      return 0;
    }
    if (list) {
      auto ks = gt::list_kernels();
      if (ks.empty()) return fail(kProgram, "this gtranspose was built without CUDA: no kernels to list", 1);
      for (const auto& k : ks) std::printf("  %-22s %-10s %s\n", k.name.c_str(), k.kind.c_str(), k.description.c_str());
      return 0;
    }

    const std::uint64_t host_bytes = host_mem.empty() ? 0 : gt::parse_size(host_mem);
    const std::uint64_t device_bytes = device_mem.empty() ? 0 : gt::parse_size(device_mem);
    if (!chunk.empty()) {
      if (!tile.empty()) throw gt::Error(gt::ErrorKind::usage, "give --tile, not --tile and --chunk");
      std::cerr << "gtranspose: --chunk is deprecated: use --tile (elements per tile)\n";
      tile = chunk;
    }
    const std::uint64_t tile_elems = tile.empty() ? 0 : gt::parse_size(tile);
    if (threads < 0 || streams < 0 || reps < 1 || warmup < 0)
      throw gt::Error(gt::ErrorKind::usage, "--threads, --streams and --warmup take numbers >= 0, --reps >= 1");
    const std::optional<gt::DType> dt = gt::tool::dtype_option(dtype);
    gt::EngineChoice eng = gt::parse_engine(engine);
    std::optional<gt::Format> fmt;
    if (!format.empty() && !(fmt = gt::parse_format(format)))
      throw gt::Error(gt::ErrorKind::usage, "unknown --format '" + format + "': use raw, npy or hdf5");
    // Options that would be accepted and then silently ignored are refused.
    if (bench && bench_host) throw gt::Error(gt::ErrorKind::usage, "give --bench or --bench-host, not both");
    refuse_inapplicable(app, bench ? Mode::bench : bench_host ? Mode::bench_host : Mode::job);
    if (force && json.empty() && (bench || bench_host || in_place))
      throw gt::Error(gt::ErrorKind::usage, std::string("--force replaces an existing OUT or --json file, and ") +
                                                (in_place ? "an in-place run" : "a bench") +
                                                " has neither here: drop --force");
    if (!json.empty()) {
      std::vector<std::string> matrices{in, out};
      if (in_place && !in.empty()) matrices.push_back(gt::journal_path(gt::parse_location(in).path));
      gt::tool::check_json_path(json, matrices, force);
    }
    // With --json - the JSON has stdout to itself.
    std::ostream& text_out = json == "-" ? std::cerr : std::cout;

    if (bench) gt::tool::refuse_under_launcher("--bench");
    if (bench_host) {
      if (!in.empty()) throw gt::Error(gt::ErrorKind::usage, "--bench-host takes no files: give --shape and --dtype");
      if (eng == gt::EngineChoice::cpu)
        throw gt::Error(gt::ErrorKind::usage, "--bench-host times the CUDA engine: drop --engine cpu");
      const std::vector<std::string> modes = gt::tool::split_list(host_modes);
      for (const auto& m : modes)
        if (m != "pinned" && m != "pageable" && m != "inplace-pinned" && m != "inplace-pageable")
          throw gt::Error(gt::ErrorKind::usage, "unknown --host-modes entry '" + m +
                                                    "': use pinned, pageable, inplace-pinned or inplace-pageable");
      gt::BenchOptions b;
      b.shape = shape.empty() ? gt::Shape{16384, 16384} : gt::parse_shape(shape);
      if (dt) b.dtype = *dt;
      b.kernel = kernel;
      b.reps = app.count("--reps") ? reps : 3;
      b.warmup = app.count("--warmup") ? warmup : 1;
      b.seed = seed;
      b.device_mem = device_bytes;
      b.host_mem = host_bytes;
      b.streams = streams;
      b.tile_elems = tile_elems;
      b.host_modes = modes;
      bool root = true;  // under mpirun, every rank runs it on its GPU at once; rank 0 prints
      gt::BenchResult r = gt::tool::run_host_bench_launched(b, &root);
      if (!root) return 0;
      if (!quiet) gt::tool::print_text(text_out, gt::render_params(gt::format_bench(r), gt::tool::flag_of));
      if (!json.empty()) gt::tool::write_json(json, gt::bench_json(r), force);
      for (const auto& row : r.rows)
        if (row.status == gt::RowStatus::failed) return fail(kProgram, "bench-host: " + row.name + ": " + row.note, 1);
      return 0;
    }

    if (bench) {
      if (!in.empty()) throw gt::Error(gt::ErrorKind::usage, "--bench takes no files: give --shape and --dtype");
      gt::BenchOptions b;
      if (!shape.empty()) b.shape = gt::parse_shape(shape);
      b.shape_given = !shape.empty();
      if (random_shapes < 0) throw gt::Error(gt::ErrorKind::usage, "--random-shapes takes a count >= 0");
      b.random_shapes = random_shapes;
      if (dt) b.dtype = *dt;
      // The default table has every kernel; a random sweep the flagship and its peers.
      b.kernel = kernel == "auto" && !app.count("--kernel") ? (random_shapes ? "auto" : "all") : kernel;
      b.reps = reps;
      b.warmup = warmup;
      b.threads = threads;
      b.seed = seed;
      b.peers = !no_peers;
      b.sweep = sweep;
      const gt::EngineDecision d = gt::decide_engine(eng);
      gt::BenchResult r = d.kind == gt::EngineKind::cuda ? gt::run_cuda_bench(b) : gt::run_cpu_bench(b);
      // Said once the bench ran: a refused one gets its one error line alone.
      if (!d.note.empty() && !quiet) std::cerr << "gtranspose: " << gt::tool::printable(d.note) << "\n";
      if (!quiet) gt::tool::print_text(text_out, gt::render_params(gt::format_bench(r), gt::tool::flag_of));
      if (!json.empty()) gt::tool::write_json(json, gt::bench_json(r), force);
      // A row skipped by design (a kernel that refuses the shape, cuBLAS not
      // installed) is not a failure; a row that ran and came out wrong is.
      for (const auto& row : r.rows)
        if (row.status == gt::RowStatus::failed) return fail(kProgram, "bench: " + row.name + ": " + row.note, 1);
      return 0;
    }

    if (in.empty()) throw gt::Error(gt::ErrorKind::usage, "no input given: gtranspose IN OUT (see gtranspose --help)");
    gt::JobOptions job;
    job.input = in;
    job.output = out;
    job.in_place = in_place;
    job.resume = resume;
    if (!shape.empty()) job.open.shape = gt::parse_shape(shape);
    job.open.dtype = dt;
    job.sink.force = force;
    (in_place ? job.open.format : job.sink.format) = fmt;
    job.engine = eng;
    job.run.host_mem = host_bytes;
    job.run.device_mem = device_bytes;
    job.run.tile_elems = tile_elems;
    job.run.threads = threads;
    job.run.streams = streams;
    job.run.kernel = kernel;
    if (dry_run) {
      const gt::JobPreview pv = gt::preview_job(job);
      const std::string head = "gtranspose --dry-run (" + pv.plan.mode + "): the plan; nothing was run or created\n";
      if (!quiet)
        gt::tool::print_text(text_out, gt::render_params(head + gt::format_plan(pv.plan, pv.input, pv.output), gt::tool::flag_of));
      if (!json.empty()) gt::tool::write_json(json, gt::plan_json(pv.plan, pv.input, pv.output), force);
      return 0;
    }
    gt::tool::Progress progress(!quiet);
    job.run.progress = [&](std::uint64_t d, std::uint64_t t) { progress.update(d, t); };
    job.run.stage = [&](const std::string& name) { progress.stage(name); };

    gt::tool::install_cleanup_handlers();
    gt::tool::set_interrupt_message(in_place ? "\ngtranspose: interrupted: " + gt::tool::printable(in) +
                                             " is left partly transposed; its journal lets the same command with "
                                             "--resume finish it"
                                       : std::string("\ngtranspose: interrupted: partial output removed"));
    bool root = true;  // under mpirun, rank 0 prints for all
    gt::RunReport r = gt::tool::run_job_launched(job, &root);
    progress.clear();
    if (!root) return 0;
    if (!quiet) gt::tool::print_text(text_out, gt::render_params(gt::format_report(r), gt::tool::flag_of));
    if (!json.empty()) gt::tool::write_json(json, gt::report_json(r), force);
    return 0;
  } catch (const gt::Error& e) {
    return fail(kProgram, e);
  } catch (const std::exception& e) {
    return fail(kProgram, e.what(), 1);
  }
}

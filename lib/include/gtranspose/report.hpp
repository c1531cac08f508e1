// The report every run ends with, and its JSON form.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gtranspose/types.hpp"

namespace gt {

// One pipeline stage: busy time (summed over the threads that ran it) and bytes.
struct StageStat {
  std::string name;  // "read", "h2d", "kernel", "d2h", "write", "transpose"
  double busy_s = 0;
  std::uint64_t bytes = 0;
};

// One rank of a run several processes shared (gtranspose/mpi.hpp): its
// share's wall time, bytes and stages.
struct RankStat {
  int rank = 0;
  double wall_s = 0;
  std::uint64_t bytes = 0;
  std::vector<StageStat> stages;
};

// What a matrix is, as the report's input and output objects show it
// (README: "The JSON report"). Figures in elements and bytes.
struct MatrixDescription {
  std::string path;
  std::string format;      // "raw", "npy", "hdf5", "memory"
  std::string dataset;     // HDF5: the dataset's path; "" for other formats
  Shape shape;
  std::size_t elem_size = 0;
  std::string dtype;       // "f32", ... ; "" when the type has no --dtype name
  std::string byte_order;  // "little", "big", "n/a" (one-byte and opaque elements)
  Shape chunks{0, 0};      // HDF5 chunked storage; {0,0}: contiguous, or no chunks
  std::vector<std::string> filters;  // HDF5 filters in pipeline order ("shuffle", "deflate", ...)
  std::string text;        // the format's own sentence (Source::describe)
};

// The plan of a run as a user sees it (plan.hpp: summarize_plan): what a
// --dry-run prints, and what a real run's report begins with.
struct PlanSummary {
  std::string engine, kernel, mode;
  Shape tile{0, 0};
  std::uint64_t tiles = 0;
  int threads = 0;            // CPU transposer threads
  int lanes = 0;              // CUDA streams
  int readers = 0, writers = 0;
  int read_team = 1, write_team = 1;  // threads splitting each reader's (writer's) tile copy, it included
  int slots = 0;              // tiles (in place: pairs) in flight on the host
  std::uint64_t slot_bytes = 0;
  std::string staging;        // how tiles reach the transposer, in words
  int codec_threads_in = 0, codec_threads_out = 0;
  std::uint64_t host_budget = 0;
  std::uint64_t host_peak = 0;    // what the plan allocates: buffers + formats' caches + codec buffers
  std::uint64_t device_budget = 0;
  std::uint64_t device_peak = 0;  // device buffers (CUDA)
  // In place through the journal: bytes it will write over the run, and the
  // most its file holds at once (the batches it keeps); 0 out of place.
  std::uint64_t journal_bytes = 0, journal_file_bytes = 0;
  // A dry run's time estimate (0: none made), in words what it rests on, and
  // each stage's rate: measured on this machine now, or a constant.
  double estimate_s = 0;
  std::string estimate_basis;
  struct Rate {
    std::string stage;  // "read", "transpose", "link", "write", "decode", "encode"
    double bytes_per_s = 0;
    bool measured = false;
    std::string source;  // where the figure comes from
  };
  std::vector<Rate> estimate_rates;
  std::vector<std::string> notes;
};

struct RunReport {
  std::string engine;   // "cpu" or "cuda"
  std::string kernel;   // CUDA kernel name, or the CPU transposer's
  std::string mode;     // "out-of-place" or "in-place"
  std::string input, output;
  Shape shape;          // the input's shape
  std::size_t elem_size = 0;
  std::uint64_t bytes = 0;         // matrix bytes
  std::uint64_t tiles = 0;         // tiles (or tile pairs) processed
  Shape tile_shape;
  int threads = 0;
  double wall_s = 0;
  std::vector<StageStat> stages;
  double kernel_gbps = 0;          // kernel's own bandwidth (read + write), 0 if n/a
  // How far the stages ran at once: the busiest stage's time over the wall
  // time (1.0 = the run took exactly as long as its bottleneck stage, every
  // other stage hidden behind it), and which stage that was. 0 / "" if n/a.
  double overlap = 0;
  std::string bottleneck;
  // Host memory. The budget ({host_mem}) covers the engine's buffers and
  // what the formats hold (plan.hpp); the process's resident set also holds
  // the program, its libraries, HDF5's metadata and the CUDA context, which
  // no budget covers: it is reported beside the budget, not against it.
  std::uint64_t host_mem_budget = 0;
  std::uint64_t host_buffers = 0;    // tile and staging buffers the engine allocated
  std::uint64_t host_reserved = 0;   // what the formats hold (HDF5 chunk caches, a source's chunk index)
  std::uint64_t host_mem_peak = 0;   // the process's peak resident set (VmHWM)
  std::uint64_t host_rss_start = 0;  // its resident set when the engine began the run
  std::uint64_t device_mem_budget = 0, device_mem_peak = 0;
  std::vector<std::string> notes;  // e.g. "no GPU found: using the CPU engine"
  // A run shared by MPI ranks: each rank's share, and the slowest (-1: not shared).
  std::vector<RankStat> ranks;
  int slowest_rank = -1;
  // The JSON report's input and output objects, and the plan the run was
  // given (set by the job; empty for a report made elsewhere).
  MatrixDescription in_matrix, out_matrix;
  PlanSummary plan;

  // End-to-end: matrix bytes / wall time, in GB/s (1e9 bytes).
  double gbps() const { return wall_s > 0 ? double(bytes) / wall_s / 1e9 : 0; }
  StageStat& stage(const std::string& name);  // finds or appends
};

std::string format_report(const RunReport& r);  // human-readable, several lines
// The plan's lines, as a dry run prints them and a report begins.
std::string format_plan(const PlanSummary& p, const MatrixDescription& in, const MatrixDescription& out);
// The JSON report, schema 1 (README: "The JSON report"); a dry run's has
// the plan and the matrices only ("dry_run": true).
constexpr int kReportSchema = 1;
std::string report_json(const RunReport& r);
std::string plan_json(const PlanSummary& p, const MatrixDescription& in, const MatrixDescription& out);

// Minimal JSON helpers shared by the reports and the benches.
std::string json_escape(const std::string& s);

// Peak resident set size of this process so far (VmHWM), in bytes; 0 if unknown.
std::uint64_t peak_rss_bytes();
// Resident set size of this process now (VmRSS), in bytes; 0 if unknown.
std::uint64_t current_rss_bytes();

}  // namespace gt

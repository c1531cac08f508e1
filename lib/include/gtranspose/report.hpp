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
  std::uint64_t host_reserved = 0;   // what the formats hold (HDF5 chunk caches)
  std::uint64_t host_mem_peak = 0;   // the process's peak resident set (VmHWM)
  std::uint64_t host_rss_start = 0;  // its resident set when the engine began the run
  std::uint64_t device_mem_budget = 0, device_mem_peak = 0;
  std::vector<std::string> notes;  // e.g. "no GPU found: using the CPU engine"
  // A run shared by MPI ranks: each rank's share, and the slowest (-1: not shared).
  std::vector<RankStat> ranks;
  int slowest_rank = -1;

  // End-to-end: matrix bytes / wall time, in GB/s (1e9 bytes).
  double gbps() const { return wall_s > 0 ? double(bytes) / wall_s / 1e9 : 0; }
  StageStat& stage(const std::string& name);  // finds or appends
};

std::string format_report(const RunReport& r);  // human-readable, several lines
std::string report_json(const RunReport& r);

// Minimal JSON helpers shared by the reports and the benches.
std::string json_escape(const std::string& s);

// Peak resident set size of this process so far (VmHWM), in bytes; 0 if unknown.
std::uint64_t peak_rss_bytes();
// Resident set size of this process now (VmRSS), in bytes; 0 if unknown.
std::uint64_t current_rss_bytes();

}  // namespace gt

// The run's one report (rank 0's): every rank's share sent to rank 0 as
// text, and combined there into the aggregate rate, the summed stages, each
// rank's stage times and the slowest rank.
#pragma once
#include <string>
#include <vector>

#include "gtranspose/matrix.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/report.hpp"

namespace gt::mpi {

struct RankShareReport {
  int rank = 0;
  RankShare share;
  double busy_s = 0;        // its share, from start to its writes durable
  std::string device;       // its GPU ("" on the CPU or with one GPU)
  RunReport run;            // its engine's report (empty for an empty share)
};

std::string encode_rank(const RankShareReport& r);
RankShareReport decode_rank(const std::string& s);

// Rank 0's report from every rank's (`all`, in rank order).
// `root_run` is rank 0's own report (its notes and budgets are kept).
RunReport combine(const RunReport& root_run, const std::vector<std::string>& all, int ranks, int nodes, std::uint64_t align,
                  const std::string& engine_note, const Source& src, const Sink& dst, double wall_s, double commit_s);

}  // namespace gt::mpi

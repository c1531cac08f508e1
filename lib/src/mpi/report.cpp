#include "mpi/report.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "gtranspose/sizes.hpp"

namespace gt::mpi {

namespace {
std::string seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f s", s);
  return b;
}
}  // namespace

// One line per field; names (stages, engine, kernel) hold no line breaks.
std::string encode_rank(const RankShareReport& r) {
  std::ostringstream o;
  o.precision(17);
  const RunReport& x = r.run;
  o << r.rank << ' ' << r.share.row0 << ' ' << r.share.rows << ' ' << r.busy_s << ' ' << x.wall_s << ' ' << x.tiles
    << ' ' << x.bytes << ' ' << x.tile_shape.rows << ' ' << x.tile_shape.cols << ' ' << x.threads << ' ' << x.overlap
    << ' ' << x.host_buffers << ' ' << x.host_reserved << ' ' << x.host_mem_peak << ' ' << x.device_mem_peak << ' '
    << x.stages.size() << '\n';
  for (const StageStat& s : x.stages) o << s.busy_s << ' ' << s.bytes << ' ' << s.name << '\n';
  o << x.engine << '\n' << x.kernel << '\n' << x.bottleneck << '\n' << r.device << '\n';
  return o.str();
}

RankShareReport decode_rank(const std::string& s) {
  RankShareReport r;
  std::istringstream in(s);
  RunReport& x = r.run;
  std::size_t stages = 0;
  in >> r.rank >> r.share.row0 >> r.share.rows >> r.busy_s >> x.wall_s >> x.tiles >> x.bytes >> x.tile_shape.rows >>
      x.tile_shape.cols >> x.threads >> x.overlap >> x.host_buffers >> x.host_reserved >> x.host_mem_peak >>
      x.device_mem_peak >> stages;
  for (std::size_t k = 0; k < stages; ++k) {
    StageStat st;
    in >> st.busy_s >> st.bytes;
    in.get();
    std::getline(in, st.name);
    x.stages.push_back(st);
  }
  std::getline(in, x.engine);
  std::getline(in, x.kernel);
  std::getline(in, x.bottleneck);
  std::getline(in, r.device);
  return r;
}

RunReport combine(const RunReport& root_run, const std::vector<std::string>& all, int ranks, int nodes, std::uint64_t align,
                  const std::string& engine_note, const Source& src, const Sink& dst, double wall_s, double commit_s) {
  std::vector<RankShareReport> rs;
  for (const std::string& s : all) rs.push_back(decode_rank(s));
  // Rank 0's report carries what every rank shares (engine, kernel, budgets,
  // its formats' notes); times, bytes and tiles add up over the ranks.
  RunReport r = root_run;
  for (std::size_t k = 1; k < rs.size(); ++k)
    if (r.engine.empty()) r.engine = rs[k].run.engine, r.kernel = rs[k].run.kernel;
  r.shape = src.info().shape;
  r.elem_size = src.info().elem_size;
  r.bytes = src.info().bytes();
  r.input = src.describe();
  r.output = dst.describe();
  r.mode = mode_name(RunMode::out_of_place);
  r.tiles = 0;
  r.stages.clear();
  r.host_mem_peak = 0;
  r.device_mem_peak = 0;
  int slowest = 0;
  for (const RankShareReport& k : rs) {
    r.tiles += k.run.tiles;
    r.host_mem_peak = std::max(r.host_mem_peak, k.run.host_mem_peak);
    r.device_mem_peak = std::max(r.device_mem_peak, k.run.device_mem_peak);
    for (const StageStat& st : k.run.stages) {
      StageStat& t = r.stage(st.name);
      t.busy_s += st.busy_s;
      t.bytes += st.bytes;
    }
    RankStat stat;
    stat.rank = k.rank;
    stat.wall_s = k.busy_s;
    stat.bytes = k.share.rows * src.info().shape.rows * src.info().elem_size;
    stat.stages = k.run.stages;
    r.ranks.push_back(stat);
    if (k.busy_s > rs[std::size_t(slowest)].busy_s) slowest = k.rank;
  }
  if (commit_s > 0) r.stage("commit") = {"commit", commit_s, 0};
  r.wall_s = wall_s;
  r.slowest_rank = slowest;
  // The run ends with its slowest rank: its overlap and bottleneck are the run's.
  r.overlap = rs[std::size_t(slowest)].run.overlap;
  r.bottleneck = rs[std::size_t(slowest)].run.bottleneck;
  std::vector<std::string> notes;
  if (!engine_note.empty()) notes.push_back(engine_note);
  const RankShare first = rs.front().share;
  notes.push_back("MPI: " + std::to_string(ranks) + " ranks on " + std::to_string(nodes) + " node" +
                  (nodes == 1 ? "" : "s") + ", each a band of about " + std::to_string(first.rows) +
                  " output rows" + (align > 1 ? " (whole chunks of " + std::to_string(align) + " rows)" : "") +
                  "; host budget, buffers and tiles above are rank 0's, stages summed over the ranks, memory peaks the largest rank's");
  const RankShareReport& s = rs[std::size_t(slowest)];
  const double fastest = [&] {
    double f = s.busy_s;
    for (const RankShareReport& k : rs) f = std::min(f, k.busy_s);
    return f;
  }();
  notes.push_back("slowest rank " + std::to_string(slowest) + ": " + seconds(s.busy_s) + " for its share (the fastest " +
                  seconds(fastest) + "); the run's wall time waits for it");
  for (const RankShareReport& k : rs)
    if (!k.device.empty()) notes.push_back("rank " + std::to_string(k.rank) + ": " + k.device);
  r.notes.insert(r.notes.begin(), notes.begin(), notes.end());
  return r;
}

}  // namespace gt::mpi

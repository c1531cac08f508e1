#include "core/stages.hpp"

#include <algorithm>

namespace gt {

double Intervals::covered() {
  std::sort(v_.begin(), v_.end());
  double total = 0, lo = 0, hi = -1;
  for (const auto& [a, b] : v_) {
    if (a > hi) {
      if (hi > lo) total += hi - lo;
      lo = a;
      hi = b;
    } else {
      hi = std::max(hi, b);
    }
  }
  if (hi > lo) total += hi - lo;
  return total;
}

RunReport start_report(const RunPlan& p) {
  RunReport r;
  r.engine = engine_name(p.engine);
  r.kernel = p.kernel;
  r.mode = mode_name(p.mode);
  r.shape = p.info.shape;
  r.elem_size = p.info.elem_size;
  r.bytes = p.info.bytes();
  r.tiles = p.tiles;
  r.tile_shape = p.tile;
  r.threads = p.threads;
  r.host_mem_budget = p.host_budget;
  r.host_reserved = p.reserved;
  r.host_rss_start = current_rss_bytes();
  r.device_mem_budget = p.device_budget;
  r.device_mem_peak = p.device_bytes;
  r.notes = p.notes;
  r.plan = summarize_plan(p);
  return r;
}

void set_stage(RunReport& r, const std::string& name, Intervals& iv, std::uint64_t bytes) {
  r.stage(name) = {name, iv.covered(), bytes};
}

void end_report(RunReport& r, double wall_s) {
  r.wall_s = wall_s;
  double best = 0;
  for (const auto& s : r.stages)
    if (s.busy_s > best) {
      best = s.busy_s;
      r.bottleneck = s.name;
    }
  r.overlap = r.wall_s > 0 ? best / r.wall_s : 0;
  r.host_mem_peak = peak_rss_bytes();
}

}  // namespace gt

#include "gtranspose/report.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "gtranspose/sizes.hpp"

namespace gt {

StageStat& RunReport::stage(const std::string& name) {
  for (auto& s : stages)
    if (s.name == name) return s;
  stages.push_back({name, 0, 0});
  return stages.back();
}

std::string json_escape(const std::string& s) {
  std::string o;
  o.reserve(s.size() + 2);
  for (char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char b[8];
          std::snprintf(b, sizeof b, "\\u%04x", c);
          o += b;
        } else {
          o += c;
        }
    }
  }
  return o;
}

static std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string format_report(const RunReport& r) {
  std::ostringstream o;
  o << "gtranspose " << r.mode << ": " << r.input;
  if (!r.output.empty() && r.output != r.input) o << " -> " << r.output;
  o << "\n";
  o << "  shape " << to_string(r.shape) << " -> " << to_string(r.shape.transposed()) << ", element " << r.elem_size
    << " B, " << format_bytes(r.bytes) << "\n";
  o << "  engine " << r.engine;
  if (!r.kernel.empty()) o << " (" << r.kernel << ")";
  if (r.threads) o << ", " << r.threads << " threads";
  o << ", " << r.tiles << " tile" << (r.tiles == 1 ? "" : "s") << " of " << to_string(r.tile_shape) << "\n";
  o << "  wall " << fmt("%.3f", r.wall_s) << " s, " << fmt("%.2f", r.gbps()) << " GB/s end to end\n";
  for (const auto& s : r.stages) {
    o << "  " << s.name << std::string(s.name.size() < 10 ? 10 - s.name.size() : 1, ' ') << fmt("%8.3f", s.busy_s)
      << " s busy";
    if (s.bytes && s.busy_s > 0) o << ", " << fmt("%.2f", double(s.bytes) / s.busy_s / 1e9) << " GB/s";
    o << "\n";
  }
  if (r.overlap > 0)
    o << "  overlap: the busiest stage (" << r.bottleneck << ") ran " << fmt("%.0f", 100 * r.overlap)
      << "% of the wall time\n";
  if (r.kernel_gbps > 0) o << "  kernel bandwidth " << fmt("%.1f", r.kernel_gbps) << " GB/s (read + write)\n";
  if (r.host_mem_budget)
    o << "  host memory: peak " << format_bytes(r.host_mem_peak) << " of " << format_bytes(r.host_mem_budget)
      << " budget\n";
  if (r.device_mem_budget)
    o << "  device memory: peak " << format_bytes(r.device_mem_peak) << " of " << format_bytes(r.device_mem_budget)
      << " budget\n";
  for (const auto& n : r.notes) o << "  note: " << n << "\n";
  return o.str();
}

std::string report_json(const RunReport& r) {
  std::ostringstream o;
  o << "{\n";
  o << "  \"engine\": \"" << json_escape(r.engine) << "\",\n";
  o << "  \"kernel\": \"" << json_escape(r.kernel) << "\",\n";
  o << "  \"mode\": \"" << json_escape(r.mode) << "\",\n";
  o << "  \"input\": \"" << json_escape(r.input) << "\",\n";
  o << "  \"output\": \"" << json_escape(r.output) << "\",\n";
  o << "  \"rows\": " << r.shape.rows << ", \"cols\": " << r.shape.cols << ", \"elem_size\": " << r.elem_size << ",\n";
  o << "  \"bytes\": " << r.bytes << ", \"tiles\": " << r.tiles << ", \"tile_rows\": " << r.tile_shape.rows
    << ", \"tile_cols\": " << r.tile_shape.cols << ", \"threads\": " << r.threads << ",\n";
  o << "  \"wall_s\": " << fmt("%.6f", r.wall_s) << ", \"gbps\": " << fmt("%.4f", r.gbps())
    << ", \"kernel_gbps\": " << fmt("%.3f", r.kernel_gbps) << ",\n";
  o << "  \"overlap\": " << fmt("%.4f", r.overlap) << ", \"bottleneck\": \"" << json_escape(r.bottleneck) << "\",\n";
  o << "  \"host_mem_budget\": " << r.host_mem_budget << ", \"host_mem_peak\": " << r.host_mem_peak << ",\n";
  o << "  \"device_mem_budget\": " << r.device_mem_budget << ", \"device_mem_peak\": " << r.device_mem_peak << ",\n";
  o << "  \"stages\": [";
  for (std::size_t i = 0; i < r.stages.size(); ++i) {
    const auto& s = r.stages[i];
    o << (i ? ", " : "") << "{\"name\": \"" << json_escape(s.name) << "\", \"busy_s\": " << fmt("%.6f", s.busy_s)
      << ", \"bytes\": " << s.bytes << "}";
  }
  o << "],\n  \"notes\": [";
  for (std::size_t i = 0; i < r.notes.size(); ++i) o << (i ? ", " : "") << "\"" << json_escape(r.notes[i]) << "\"";
  o << "]\n}\n";
  return o.str();
}

std::uint64_t peak_rss_bytes() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) {
      std::istringstream is(line.substr(6));
      std::uint64_t kb = 0;
      is >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

}  // namespace gt

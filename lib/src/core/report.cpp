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
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    // C1 controls (U+0080..U+009F, UTF-8 C2 80..C2 9F) as escapes too: a
    // report printed with --json - must not carry terminal commands.
    if (static_cast<unsigned char>(c) == 0xc2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) < 0xa0 &&
        static_cast<unsigned char>(s[i + 1]) >= 0x80) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned char>(s[++i]));
      o += b;
      continue;
    }
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
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
  if (r.host_mem_budget) {
    o << "  host memory: buffers " << format_bytes(r.host_buffers);
    if (r.host_reserved) o << " + formats' caches " << format_bytes(r.host_reserved);
    o << " of " << format_bytes(r.host_mem_budget) << " budget";
    if (r.host_mem_peak)
      o << "; process peak " << format_bytes(r.host_mem_peak) << " resident (" << format_bytes(r.host_rss_start)
        << " before the run: program, libraries, file metadata)";
    o << "\n";
  }
  if (r.device_mem_budget)
    o << "  device memory: peak " << format_bytes(r.device_mem_peak) << " of " << format_bytes(r.device_mem_budget)
      << " budget\n";
  for (const auto& k : r.ranks) {
    o << "  rank " << k.rank << ": " << fmt("%.3f", k.wall_s) << " s, "
      << fmt("%.2f", k.wall_s > 0 ? double(k.bytes) / k.wall_s / 1e9 : 0.0) << " GB/s";
    for (const auto& s : k.stages) o << ", " << s.name << " " << fmt("%.3f", s.busy_s) << " s";
    o << (k.rank == r.slowest_rank ? " (slowest)" : "") << "\n";
  }
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
  o << "  \"host_mem_budget\": " << r.host_mem_budget << ", \"host_buffers\": " << r.host_buffers
    << ", \"host_reserved\": " << r.host_reserved << ", \"host_mem_peak\": " << r.host_mem_peak
    << ", \"host_rss_start\": " << r.host_rss_start << ",\n";
  o << "  \"device_mem_budget\": " << r.device_mem_budget << ", \"device_mem_peak\": " << r.device_mem_peak << ",\n";
  o << "  \"stages\": [";
  for (std::size_t i = 0; i < r.stages.size(); ++i) {
    const auto& s = r.stages[i];
    o << (i ? ", " : "") << "{\"name\": \"" << json_escape(s.name) << "\", \"busy_s\": " << fmt("%.6f", s.busy_s)
      << ", \"bytes\": " << s.bytes << "}";
  }
  o << "],\n";
  if (!r.ranks.empty()) {  // a run shared by MPI ranks
    o << "  \"slowest_rank\": " << r.slowest_rank << ", \"ranks\": [";
    for (std::size_t i = 0; i < r.ranks.size(); ++i) {
      const auto& k = r.ranks[i];
      o << (i ? ", " : "") << "{\"rank\": " << k.rank << ", \"wall_s\": " << fmt("%.6f", k.wall_s)
        << ", \"bytes\": " << k.bytes << ", \"stages\": [";
      for (std::size_t j = 0; j < k.stages.size(); ++j)
        o << (j ? ", " : "") << "{\"name\": \"" << json_escape(k.stages[j].name)
          << "\", \"busy_s\": " << fmt("%.6f", k.stages[j].busy_s) << ", \"bytes\": " << k.stages[j].bytes << "}";
      o << "]}";
    }
    o << "],\n";
  }
  o << "  \"notes\": [";
  for (std::size_t i = 0; i < r.notes.size(); ++i) o << (i ? ", " : "") << "\"" << json_escape(r.notes[i]) << "\"";
  o << "]\n}\n";
  return o.str();
}

namespace {

// A "Vm...:" line of /proc/self/status, in bytes; 0 if unknown.
std::uint64_t status_bytes(const std::string& key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key, 0) == 0) {
      std::istringstream is(line.substr(key.size()));
      std::uint64_t kb = 0;
      is >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

}  // namespace

std::uint64_t peak_rss_bytes() { return status_bytes("VmHWM:"); }
std::uint64_t current_rss_bytes() { return status_bytes("VmRSS:"); }

}  // namespace gt

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

namespace {

std::string matrix_line(const char* label, const MatrixDescription& m) {
  std::ostringstream o;
  o << "  " << label << " " << (m.format.empty() ? "?" : m.format);
  if (!m.dataset.empty()) o << " " << m.dataset;
  o << " " << (m.dtype.empty() ? std::to_string(m.elem_size) + "-byte elements" : m.dtype) << " " << to_string(m.shape);
  if (m.byte_order != "n/a" && !m.byte_order.empty()) o << ", " << m.byte_order << "-endian";
  if (m.chunks.rows) o << ", chunked " << to_string(m.chunks);
  for (std::size_t i = 0; i < m.filters.size(); ++i) o << (i ? "+" : ", ") << m.filters[i];
  if (!m.path.empty()) o << ": " << m.path;
  o << "\n";
  return o.str();
}

// " (4 threads each)" for a team that splits each tile's copy; "" for one thread.
std::string team_text(int team) { return team > 1 ? " (" + std::to_string(team) + " threads each)" : ""; }

}  // namespace

std::string format_plan(const PlanSummary& p, const MatrixDescription& in, const MatrixDescription& out) {
  std::ostringstream o;
  if (!in.format.empty()) o << matrix_line("input ", in);
  if (!out.format.empty()) o << matrix_line("output", out);
  o << "  plan: " << p.mode << ", engine " << p.engine;
  if (!p.kernel.empty()) o << " (" << p.kernel << ")";
  if (p.threads) o << ", " << p.threads << " thread" << (p.threads == 1 ? "" : "s");
  if (p.lanes) o << ", " << p.lanes << " stream" << (p.lanes == 1 ? "" : "s");
  o << "; " << p.tiles << " tile" << (p.tiles == 1 ? "" : "s") << " of " << to_string(p.tile) << "\n";
  o << "  plan: " << p.readers << " reader" << (p.readers == 1 ? "" : "s") << team_text(p.read_team) << ", "
    << p.writers << " writer" << (p.writers == 1 ? "" : "s") << team_text(p.write_team) << ", " << p.slots << " slot"
    << (p.slots == 1 ? "" : "s");
  if (p.slot_bytes) o << " of " << format_bytes(p.slot_bytes);
  // Equal counts are one pool (formats/codecs/pool.hpp: WorkerPool::shared).
  if (p.codec_threads_in && p.codec_threads_in == p.codec_threads_out)
    o << ", codec threads " << p.codec_threads_in << " (one pool, both sides)";
  else if (p.codec_threads_in || p.codec_threads_out)
    o << ", codec threads " << p.codec_threads_in << " in, " << p.codec_threads_out << " out";
  o << "; staging: " << p.staging << "\n";
  o << "  plan: host memory peak " << format_bytes(p.host_peak) << " of " << format_bytes(p.host_budget) << " budget";
  if (p.device_budget)
    o << "; device memory peak " << format_bytes(p.device_peak) << " of " << format_bytes(p.device_budget) << " budget";
  o << "\n";
  if (p.journal_bytes)
    o << "  plan: journal writes " << format_bytes(p.journal_bytes) << " over the run; its file holds at most "
      << format_bytes(p.journal_file_bytes) << "\n";
  if (p.estimate_s > 0) o << "  plan: estimate " << fmt("%.2f", p.estimate_s) << " s (" << p.estimate_basis << ")\n";
  for (const auto& n : p.notes) o << "  plan note: " << n << "\n";
  return o.str();
}

std::string format_report(const RunReport& r) {
  std::ostringstream o;
  o << "gtranspose " << r.mode << ": " << r.input;
  if (!r.output.empty() && r.output != r.input) o << " -> " << r.output;
  o << "\n";
  o << "  shape " << to_string(r.shape) << " -> " << to_string(r.shape.transposed()) << ", element " << r.elem_size
    << " B, " << format_bytes(r.bytes) << "\n";
  // The plan the run was given comes first, as a dry run shows it; a report
  // made without one (a bench's) says the engine and tiles alone.
  if (!r.plan.engine.empty()) {
    PlanSummary p = r.plan;
    p.notes.clear();  // they open the run's notes below
    o << format_plan(p, r.in_matrix, r.out_matrix);
  } else {
    o << "  engine " << r.engine;
    if (!r.kernel.empty()) o << " (" << r.kernel << ")";
    if (r.threads) o << ", " << r.threads << " threads";
    o << ", " << r.tiles << " tile" << (r.tiles == 1 ? "" : "s") << " of " << to_string(r.tile_shape) << "\n";
  }
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

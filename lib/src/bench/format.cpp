// The bench's table and JSON, shared by the CPU and CUDA benches (so no CUDA
// here).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "gtranspose/bench.hpp"
#include "gtranspose/version.hpp"
#include "gtranspose/report.hpp"

namespace gt {

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// A row that never ran (skipped, failed) has no times: print dashes, not zeros.
bool ran(const BenchRow& r) { return r.median_ms > 0 || r.gbps > 0; }

// JSON has no NaN or infinity.
std::string json_number(double v) { return std::isfinite(v) ? fmt("%.9g", v) : "null"; }

std::string json_string(const std::string& s) { return "\"" + json_escape(s) + "\""; }

}  // namespace

const char* row_status_name(RowStatus s) {
  switch (s) {
    case RowStatus::ok: return "ok";
    case RowStatus::skipped: return "skipped";
    case RowStatus::failed: return "failed";
  }
  return "?";
}

std::string format_bench(const BenchResult& r) {
  const std::vector<std::string> head = {"kernel", "dtype",     "shape",    "config", "median ms",
                                         "min ms", "GB/s",      "% of copy", "verified", "note"};
  // Numbers are right-aligned, words left-aligned.
  const std::vector<bool> right = {false, false, false, false, true, true, true, true, false, false};
  std::vector<std::vector<std::string>> cells;
  for (const BenchRow& row : r.rows) {
    const bool ok = ran(row);
    cells.push_back({row.name, row.dtype, to_string(row.shape), row.config.empty() ? "-" : row.config,
                     ok ? fmt("%.4f", row.median_ms) : "-", ok ? fmt("%.4f", row.min_ms) : "-",
                     ok ? fmt("%.1f", row.gbps) : "-", ok ? fmt("%.1f", row.pct_of_copy) : "-",
                     ok ? (row.verified ? "yes" : "NO") : "-", row.note});
  }
  std::vector<std::size_t> width(head.size());
  for (std::size_t i = 0; i < head.size(); ++i) {
    width[i] = head[i].size();
    for (const auto& c : cells) width[i] = std::max(width[i], c[i].size());
  }
  const auto line = [&](const std::vector<std::string>& c) {
    std::string s;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (i + 1 == c.size()) {  // the note: last, never padded
        if (!c[i].empty()) s += "  " + c[i];
        break;
      }
      const std::string pad(width[i] - c[i].size(), ' ');
      if (i) s += "  ";
      s += right[i] ? pad + c[i] : c[i] + pad;
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s + "\n";
  };

  std::ostringstream o;
  o << "device: " << r.device << "   reference: " << r.reference << "   seed: " << r.seed << "\n";
  o << line(head);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    // Each size starts with its reference row: a blank line sets it apart.
    if (i > 0 && !r.reference.empty() && r.rows[i].name == r.reference) o << "\n";
    o << line(cells[i]);
  }
  return o.str();
}

namespace {

// One JSON array of rows.
void rows_json(std::ostringstream& o, const std::vector<BenchRow>& rows) {
  o << "[";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const BenchRow& row = rows[i];
    // Matrix bytes, for plots against size; 0 when the dtype has no name or
    // the product overflows.
    std::uint64_t bytes = 0;
    if (auto t = parse_dtype(row.dtype)) {
      if (__builtin_mul_overflow(row.shape.rows, row.shape.cols, &bytes) ||
          __builtin_mul_overflow(bytes, std::uint64_t(dtype_size(*t)), &bytes))
        bytes = 0;
    }
    o << (i ? ",\n    {" : "\n    {") << "\"name\": " << json_string(row.name)
      << ", \"dtype\": " << json_string(row.dtype) << ", \"rows\": " << row.shape.rows
      << ", \"cols\": " << row.shape.cols << ", \"shape\": " << json_string(to_string(row.shape))
      << ", \"bytes\": " << bytes << ", \"config\": " << json_string(row.config)
      << ", \"ran\": " << (ran(row) ? "true" : "false") << ", \"median_ms\": " << json_number(row.median_ms)
      << ", \"min_ms\": " << json_number(row.min_ms) << ", \"max_ms\": " << json_number(row.max_ms)
      << ", \"gbps\": " << json_number(row.gbps) << ", \"pct_of_copy\": " << json_number(row.pct_of_copy)
      // The same figures in plain units (schema 1: seconds, bytes per second).
      << ", \"median_s\": " << json_number(row.median_ms / 1e3) << ", \"min_s\": " << json_number(row.min_ms / 1e3)
      << ", \"max_s\": " << json_number(row.max_ms / 1e3) << ", \"rate_bytes_per_s\": " << json_number(row.gbps * 1e9)
      << ", \"verified\": " << (row.verified ? "true" : "false") << ", \"status\": \"" << row_status_name(row.status)
      << "\", \"note\": " << json_string(row.note) << "}";
  }
  o << (rows.empty() ? "]" : "\n  ]");
}

}  // namespace

std::string bench_json(const BenchResult& r) {
  std::ostringstream o;
  o << "{\n  \"schema\": " << kReportSchema << ",\n  \"version\": " << json_string(library_version())
    << ",\n  \"kind\": \"bench\",\n  \"device\": " << json_string(r.device) << ",\n  \"reference\": " << json_string(r.reference)
    << ",\n  \"seed\": " << r.seed << ",\n  \"rows\": ";
  rows_json(o, r.rows);
  if (!r.shape_rows.empty()) {
    o << ",\n  \"shape_rows\": ";
    rows_json(o, r.shape_rows);
  }
  o << "\n}\n";
  return o.str();
}

}  // namespace gt

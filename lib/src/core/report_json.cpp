// The JSON report, schema 1 (README: "The JSON report"): every figure in
// plain units (bytes, seconds, bytes per second), the matrices and the plan
// as objects. Written with nlohmann::json, so the escaping is a JSON
// library's: everything outside ASCII leaves as \uXXXX, which keeps a report
// printed with --json - free of terminal commands, and bytes that are not
// UTF-8 (a path may hold any) become U+FFFD rather than an invalid document.
#include <nlohmann/json.hpp>

#include "gtranspose/report.hpp"
#include "gtranspose/version.hpp"

namespace gt {

namespace {

// Insertion order: "schema" and "version" first, the fields as documented.
using json = nlohmann::ordered_json;

json shape_json(const Shape& s) { return json::array({s.rows, s.cols}); }
json or_null(const std::string& s) { return s.empty() ? json(nullptr) : json(s); }
// A rate in bytes per second; null where nothing was timed.
json rate(std::uint64_t bytes, double s) { return bytes && s > 0 ? json(double(bytes) / s) : json(nullptr); }

json matrix_json(const MatrixDescription& m) {
  return {{"path", m.path},
          {"format", m.format},
          {"dataset", or_null(m.dataset)},
          {"shape", shape_json(m.shape)},
          {"dtype", or_null(m.dtype)},
          {"elem_size", m.elem_size},
          {"byte_order", m.byte_order},
          {"bytes", m.shape.rows * m.shape.cols * m.elem_size},
          {"chunks", m.chunks.rows ? shape_json(m.chunks) : json(nullptr)},
          {"filters", m.filters},
          {"description", m.text}};
}

json summary_json(const PlanSummary& p) {
  json j = {{"engine", p.engine},
            {"kernel", p.kernel},
            {"mode", p.mode},
            {"tile_shape", shape_json(p.tile)},
            {"tiles", p.tiles},
            {"threads", p.threads},
            {"streams", p.lanes},
            {"readers", p.readers},
            {"writers", p.writers},
            {"read_team", p.read_team},
            {"write_team", p.write_team},
            {"slots", p.slots},
            {"slot_bytes", p.slot_bytes},
            {"staging", p.staging},
            {"codec_threads", {{"input", p.codec_threads_in}, {"output", p.codec_threads_out}}},
            {"host_memory", {{"budget_bytes", p.host_budget}, {"peak_bytes", p.host_peak}}},
            {"device_memory", {{"budget_bytes", p.device_budget}, {"peak_bytes", p.device_peak}}},
            {"journal", nullptr},
            {"estimate", nullptr},
            {"notes", p.notes}};
  if (p.journal_bytes) j["journal"] = {{"written_bytes", p.journal_bytes}, {"file_bytes", p.journal_file_bytes}};
  if (p.estimate_s > 0) {
    json rates = json::array();
    for (const auto& r : p.estimate_rates)
      rates.push_back({{"stage", r.stage}, {"bytes_per_s", r.bytes_per_s}, {"measured", r.measured}, {"source", r.source}});
    j["estimate"] = {{"seconds", p.estimate_s}, {"basis", p.estimate_basis}, {"rates", rates}};
  }
  return j;
}

// A report of a matrix in host memory (the host-memory API) has no file:
// its objects come from the report's own shape.
MatrixDescription or_memory(const MatrixDescription& m, const Shape& shape, std::size_t elem_size,
                            const std::string& text) {
  if (!m.format.empty()) return m;
  MatrixDescription d;
  d.format = "memory";
  d.shape = shape;
  d.elem_size = elem_size;
  d.byte_order = "n/a";
  d.text = text;
  return d;
}

std::string dump(const json& j) { return j.dump(2, ' ', true, json::error_handler_t::replace) + "\n"; }

json header(bool dry_run) {
  return {{"schema", kReportSchema}, {"version", library_version()}, {"kind", dry_run ? "plan" : "run"}, {"dry_run", dry_run}};
}

}  // namespace

std::string report_json(const RunReport& r) {
  json j = header(false);
  j["mode"] = r.mode;
  j["engine"] = r.engine;
  j["kernel"] = r.kernel;
  j["input"] = matrix_json(or_memory(r.in_matrix, r.shape, r.elem_size, r.input));
  j["output"] = matrix_json(or_memory(r.out_matrix, r.shape.transposed(), r.elem_size, r.output));
  j["plan"] = r.plan.engine.empty() ? json(nullptr) : summary_json(r.plan);
  j["bytes"] = r.bytes;
  j["tiles"] = r.tiles;
  j["tile_shape"] = shape_json(r.tile_shape);
  j["threads"] = r.threads;
  j["wall_s"] = r.wall_s;
  j["rate_bytes_per_s"] = rate(r.bytes, r.wall_s);
  j["kernel_rate_bytes_per_s"] = r.kernel_gbps > 0 ? json(r.kernel_gbps * 1e9) : json(nullptr);
  j["overlap"] = r.overlap;
  j["bottleneck"] = or_null(r.bottleneck);
  j["host_memory"] = {{"budget_bytes", r.host_mem_budget},
                      {"buffers_bytes", r.host_buffers},
                      {"reserved_bytes", r.host_reserved},
                      {"peak_rss_bytes", r.host_mem_peak},
                      {"rss_start_bytes", r.host_rss_start}};
  j["device_memory"] = {{"budget_bytes", r.device_mem_budget}, {"peak_bytes", r.device_mem_peak}};
  json stages = json::array();
  for (const auto& s : r.stages)
    stages.push_back({{"name", s.name}, {"busy_s", s.busy_s}, {"bytes", s.bytes}, {"rate_bytes_per_s", rate(s.bytes, s.busy_s)}});
  j["stages"] = stages;
  if (!r.ranks.empty()) {  // a run shared by MPI ranks (gtranspose/mpi.hpp)
    json ranks = json::array();
    for (const auto& k : r.ranks) {
      json ks = json::array();
      for (const auto& s : k.stages)
        ks.push_back({{"name", s.name}, {"busy_s", s.busy_s}, {"bytes", s.bytes}, {"rate_bytes_per_s", rate(s.bytes, s.busy_s)}});
      ranks.push_back({{"rank", k.rank}, {"wall_s", k.wall_s}, {"bytes", k.bytes}, {"stages", ks}});
    }
    j["ranks"] = ranks;
    j["slowest_rank"] = r.slowest_rank;
  }
  j["notes"] = r.notes;
  return dump(j);
}

std::string plan_json(const PlanSummary& p, const MatrixDescription& in, const MatrixDescription& out) {
  json j = header(true);
  j["mode"] = p.mode;
  j["engine"] = p.engine;
  j["kernel"] = p.kernel;
  j["input"] = matrix_json(in);
  j["output"] = matrix_json(out);
  j["plan"] = summary_json(p);
  return dump(j);
}

}  // namespace gt

// The JSON report, schema 1 (README: "The JSON report"), read back with a
// JSON library from real runs: raw, .npy, HDF5 chunked with gzip, in place,
// a bench, a dry run; every field of the schema present with its type, the
// figures consistent with each other. And --dry-run: the plan, and nothing
// created.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli/cli_util.hpp"
#include "support/gpu.hpp"

using cli::generate;
using cli::gtgen;
using cli::gtranspose;
using cli::Result;
using cli::TempDir;
using cli::why;
using nlohmann::json;

namespace {

json load(const std::string& path) { return json::parse(gt::test::file_contents(path)); }

// A field of `j` named `key` of JSON type `t` (or null where `nullable`).
void expect_field(const json& j, const char* key, json::value_t t, bool nullable = false) {
  ASSERT_TRUE(j.contains(key)) << key << " missing in " << j.dump();
  const json& v = j.at(key);
  if (nullable && v.is_null()) return;
  // Integers are unsigned or signed as the writer had them: both are numbers.
  const bool ok = v.type() == t || (t == json::value_t::number_float && v.is_number()) ||
                  (t == json::value_t::number_unsigned && v.is_number_integer() && v.get<std::int64_t>() >= 0);
  EXPECT_TRUE(ok) << key << " is " << v.type_name() << ": " << v.dump();
}

using T = json::value_t;

void expect_shape(const json& s) {
  ASSERT_TRUE(s.is_array()) << s.dump();
  ASSERT_EQ(s.size(), 2u) << s.dump();
  EXPECT_TRUE(s[0].is_number_unsigned() && s[1].is_number_unsigned()) << s.dump();
}

void expect_matrix(const json& m) {
  for (const char* k : {"path", "format", "byte_order", "description"}) expect_field(m, k, T::string);
  expect_field(m, "dataset", T::string, true);
  expect_field(m, "dtype", T::string, true);
  expect_field(m, "elem_size", T::number_unsigned);
  expect_field(m, "bytes", T::number_unsigned);
  expect_field(m, "filters", T::array);
  expect_shape(m.at("shape"));
  if (!m.at("chunks").is_null()) expect_shape(m.at("chunks"));
  EXPECT_EQ(m.at("bytes").get<std::uint64_t>(), m.at("shape")[0].get<std::uint64_t>() *
                                                   m.at("shape")[1].get<std::uint64_t>() * m.at("elem_size").get<std::uint64_t>());
}

void expect_plan(const json& p) {
  for (const char* k : {"engine", "kernel", "mode", "staging"}) expect_field(p, k, T::string);
  for (const char* k : {"tiles", "threads", "streams", "readers", "writers", "read_team", "write_team", "slots", "slot_bytes"})
    expect_field(p, k, T::number_unsigned);
  expect_shape(p.at("tile_shape"));
  for (const char* side : {"host_memory", "device_memory"}) {
    expect_field(p.at(side), "budget_bytes", T::number_unsigned);
    expect_field(p.at(side), "peak_bytes", T::number_unsigned);
  }
  EXPECT_GT(p.at("host_memory").at("budget_bytes").get<std::uint64_t>(), 0u);
  EXPECT_LE(p.at("host_memory").at("peak_bytes").get<std::uint64_t>(), p.at("host_memory").at("budget_bytes").get<std::uint64_t>());
  expect_field(p.at("codec_threads"), "input", T::number_unsigned);
  expect_field(p.at("codec_threads"), "output", T::number_unsigned);
  expect_field(p, "journal", T::object, true);
  expect_field(p, "estimate", T::object, true);
  expect_field(p, "notes", T::array);
}

void expect_header(const json& r, bool dry) {
  EXPECT_EQ(r.at("schema"), 1);
  expect_field(r, "version", T::string);
  EXPECT_EQ(r.at("dry_run"), dry);
  EXPECT_EQ(r.at("kind"), dry ? "plan" : "run");
  for (const char* k : {"mode", "engine", "kernel"}) expect_field(r, k, T::string);
  expect_matrix(r.at("input"));
  expect_matrix(r.at("output"));
  expect_plan(r.at("plan"));
  // The output is the input's transpose.
  EXPECT_EQ(r.at("output").at("shape")[0], r.at("input").at("shape")[1]);
  EXPECT_EQ(r.at("output").at("shape")[1], r.at("input").at("shape")[0]);
}

// A real run's report: every field of schema 1 with its type.
void expect_run_report(const json& r) {
  expect_header(r, false);
  for (const char* k : {"bytes", "tiles", "threads"}) expect_field(r, k, T::number_unsigned);
  expect_shape(r.at("tile_shape"));
  expect_field(r, "wall_s", T::number_float);
  expect_field(r, "rate_bytes_per_s", T::number_float);
  expect_field(r, "kernel_rate_bytes_per_s", T::number_float, true);
  expect_field(r, "overlap", T::number_float);
  expect_field(r, "bottleneck", T::string, true);
  for (const char* k : {"budget_bytes", "buffers_bytes", "reserved_bytes", "peak_rss_bytes", "rss_start_bytes"})
    expect_field(r.at("host_memory"), k, T::number_unsigned);
  for (const char* k : {"budget_bytes", "peak_bytes"}) expect_field(r.at("device_memory"), k, T::number_unsigned);
  ASSERT_TRUE(r.at("stages").is_array());
  EXPECT_FALSE(r.at("stages").empty());
  for (const json& s : r.at("stages")) {
    expect_field(s, "name", T::string);
    expect_field(s, "busy_s", T::number_float);
    expect_field(s, "bytes", T::number_unsigned);
    expect_field(s, "rate_bytes_per_s", T::number_float, true);
  }
  expect_field(r, "notes", T::array);
  EXPECT_EQ(r.at("bytes"), r.at("input").at("bytes"));
  const double wall = r.at("wall_s").get<double>();
  ASSERT_GT(wall, 0);
  EXPECT_NEAR(r.at("rate_bytes_per_s").get<double>(), r.at("bytes").get<double>() / wall, 1e-6 * r.at("bytes").get<double>() / wall);
  // The plan the report begins with is the run's.
  EXPECT_EQ(r.at("plan").at("tiles"), r.at("tiles"));
  EXPECT_EQ(r.at("plan").at("tile_shape"), r.at("tile_shape"));
  EXPECT_EQ(r.at("plan").at("engine"), r.at("engine"));
}

}  // namespace

TEST(ReportJson, RawToNpy) {
  TempDir d;
  generate(d / "in.raw", "300x200", "i16");
  Result r = gtranspose({d / "in.raw", d / "out.npy", "--shape", "300x200", "--dtype", "i16", "--engine", "cpu",
                         "--json", d / "r.json"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const json j = load(d / "r.json");
  expect_run_report(j);
  EXPECT_EQ(j.at("input").at("format"), "raw");
  EXPECT_EQ(j.at("input").at("path"), d / "in.raw");
  EXPECT_EQ(j.at("input").at("dtype"), "i16");
  EXPECT_EQ(j.at("input").at("byte_order"), "little");
  EXPECT_TRUE(j.at("input").at("dataset").is_null());
  EXPECT_TRUE(j.at("input").at("chunks").is_null());
  EXPECT_EQ(j.at("output").at("format"), "npy");
  EXPECT_EQ(j.at("output").at("shape"), json::array({200, 300}));
  EXPECT_EQ(j.at("mode"), "out-of-place");
  EXPECT_TRUE(j.at("plan").at("journal").is_null());
  EXPECT_TRUE(j.at("plan").at("estimate").is_null()) << "a real run has its wall time, not an estimate";
  // The text report begins with the same plan.
  EXPECT_NE(r.out.find("plan: out-of-place, engine cpu"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("input  raw i16 300x200"), std::string::npos) << r.out;
}

TEST(ReportJson, NpyBigEndianAndOneByte) {
  TempDir d;
  ASSERT_EQ(gtgen({d / "in.npy", "--shape", "64x48", "--dtype", "u8", "-q"}).exit_code, 0);
  Result r = gtranspose({d / "in.npy", d / "out.raw", "--engine", "cpu", "--json", d / "r.json", "-q"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const json j = load(d / "r.json");
  expect_run_report(j);
  EXPECT_EQ(j.at("input").at("format"), "npy");
  EXPECT_EQ(j.at("input").at("byte_order"), "n/a") << "one-byte elements have no byte order";
  EXPECT_EQ(j.at("output").at("format"), "raw");
  EXPECT_TRUE(r.out.empty()) << "-q prints nothing: " << r.out;
}

TEST(ReportJson, Hdf5ChunkedGzip) {
  TempDir d;
  ASSERT_EQ(gtgen({d / "in.h5:/g/x", "--shape", "300x200", "--dtype", "f64", "--values", "smooth", "--chunk", "64x48",
                   "--filters", "shuffle,gzip=4", "-q"})
                .exit_code,
            0);
  Result r = gtranspose({d / "in.h5:/g/x", d / "out.h5", "--engine", "cpu", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const json j = json::parse(r.out);  // --json -: stdout holds the JSON alone
  expect_run_report(j);
  const json& in = j.at("input");
  EXPECT_EQ(in.at("format"), "hdf5");
  EXPECT_EQ(in.at("dataset"), "/g/x");
  EXPECT_EQ(in.at("dtype"), "f64");
  EXPECT_EQ(in.at("chunks"), json::array({64, 48}));
  EXPECT_EQ(in.at("filters"), json::array({"shuffle", "deflate"}));
  const json& out = j.at("output");
  EXPECT_EQ(out.at("format"), "hdf5");
  EXPECT_EQ(out.at("dataset"), "/g/x") << "the output keeps the input's dataset name";
  EXPECT_EQ(out.at("chunks"), json::array({48, 64}));
  EXPECT_EQ(out.at("filters"), json::array({"shuffle", "deflate"}));
  EXPECT_NE(r.err.find("plan: "), std::string::npos) << "the text report goes to stderr: " << r.err;
}

TEST(ReportJson, InPlaceHasTheJournal) {
  TempDir d;
  generate(d / "sq.raw", "256x256", "f32");
  Result r = gtranspose({d / "sq.raw", "--in-place", "--shape", "256x256", "--dtype", "f32", "--engine", "cpu", "--tile",
                         "4K", "--json", d / "r.json", "-q"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const json j = load(d / "r.json");
  expect_run_report(j);
  EXPECT_EQ(j.at("mode"), "in-place");
  EXPECT_EQ(j.at("input").at("path"), j.at("output").at("path"));
  const json& journal = j.at("plan").at("journal");
  ASSERT_TRUE(journal.is_object()) << j.at("plan").dump();
  // The strictly lower triangle, saved once.
  EXPECT_EQ(journal.at("written_bytes"), 256u * 255 / 2 * 4);
  EXPECT_GE(journal.at("file_bytes").get<std::uint64_t>(), 8192u);
}

TEST(ReportJson, BenchHasSchemaAndPlainUnits) {
  TempDir d;
  Result r = gtranspose({"--bench", "--shape", "64x64", "--dtype", "f32", "--reps", "2", "--warmup", "0", "--json",
                         d / "b.json", "-q"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const json j = load(d / "b.json");
  EXPECT_EQ(j.at("schema"), 1);
  EXPECT_EQ(j.at("kind"), "bench");
  expect_field(j, "version", T::string);
  ASSERT_FALSE(j.at("rows").empty());
  for (const json& row : j.at("rows")) {
    expect_field(row, "name", T::string);
    expect_field(row, "bytes", T::number_unsigned);
    if (!row.at("ran").get<bool>()) continue;
    expect_field(row, "median_s", T::number_float);
    expect_field(row, "rate_bytes_per_s", T::number_float);
    EXPECT_NEAR(row.at("median_s").get<double>() * 1e3, row.at("median_ms").get<double>(), 1e-9);
  }
}

TEST(DryRun, PrintsThePlanAndCreatesNothing) {
  TempDir d;
  generate(d / "in.raw", "500x300", "f32");
  const std::uint64_t before = cli::file_hash(d / "in.raw");
  Result r = gtranspose({d / "in.raw", d / "out.npy", "--shape", "500x300", "--dtype", "f32", "--engine", "cpu",
                         "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  for (const char* want : {"nothing was run or created", "input  raw f32 500x300", "output npy f32 300x500",
                           "plan: out-of-place, engine cpu", " of 500x300", "host memory peak", "staging:", "estimate "})
    EXPECT_NE(r.out.find(want), std::string::npos) << want << " in\n" << r.out;
  EXPECT_EQ(d.entries(), std::vector<std::string>{"in.raw"}) << "a dry run creates nothing";
  EXPECT_EQ(cli::file_hash(d / "in.raw"), before);
  // --plan is the same, and its JSON is schema 1 with the plan alone.
  Result p = gtranspose({d / "in.raw", d / "out.npy", "--shape", "500x300", "--dtype", "f32", "--engine", "cpu",
                         "--plan", "--json", "-"});
  ASSERT_EQ(p.exit_code, 0) << why(p);
  const json j = json::parse(p.out);
  expect_header(j, true);
  EXPECT_FALSE(j.contains("wall_s"));
  const json& est = j.at("plan").at("estimate");
  ASSERT_TRUE(est.is_object()) << j.dump();
  EXPECT_GT(est.at("seconds").get<double>(), 0);
  EXPECT_NE(est.at("basis").get<std::string>().find("measured"), std::string::npos);
  bool measured_read = false;
  for (const json& rate : est.at("rates")) {
    EXPECT_GT(rate.at("bytes_per_s").get<double>(), 0);
    if (rate.at("stage") == "read") measured_read = rate.at("measured").get<bool>();
  }
  EXPECT_TRUE(measured_read);
  EXPECT_EQ(d.entries(), std::vector<std::string>{"in.raw"});
}

TEST(DryRun, InPlaceCreatesNoJournalAndKeepsTheFile) {
  TempDir d;
  generate(d / "sq.raw", "512x256", "u16");
  const std::uint64_t before = cli::file_hash(d / "sq.raw");
  Result r = gtranspose({d / "sq.raw", "--in-place", "--shape", "512x256", "--dtype", "u16", "--engine", "cpu",
                         "--dry-run", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const json j = json::parse(r.out);
  expect_header(j, true);
  ASSERT_TRUE(j.at("plan").at("journal").is_object());
  EXPECT_GT(j.at("plan").at("journal").at("written_bytes").get<std::uint64_t>(), 0u);
  EXPECT_EQ(d.entries(), std::vector<std::string>{"sq.raw"}) << "no journal, no lock file";
  EXPECT_EQ(cli::file_hash(d / "sq.raw"), before);
}

TEST(DryRun, Hdf5OutputMirrorsChunksAndFilters) {
  TempDir d;
  ASSERT_EQ(gtgen({d / "in.h5:/x", "--shape", "200x100", "--chunk", "50x40", "--filters", "shuffle,gzip=4", "-q"})
                .exit_code,
            0);
  Result r = gtranspose({d / "in.h5", d / "out.h5", "--engine", "cpu", "--dry-run", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const json j = json::parse(r.out);
  expect_header(j, true);
  EXPECT_EQ(j.at("output").at("chunks"), json::array({40, 50}));
  EXPECT_EQ(j.at("output").at("filters"), json::array({"shuffle", "deflate"}));
  EXPECT_EQ(j.at("output").at("dataset"), "/x");
  EXPECT_EQ(d.entries(), std::vector<std::string>{"in.h5"});
}

TEST(DryRun, RefusesWhatTheRunWouldRefuse) {
  TempDir d;
  generate(d / "in.raw", "64x32", "f32");
  gt::test::write_file(d / "out.npy", "x");
  // An existing output without --force: the run's error, exit 1, nothing created.
  Result r = gtranspose({d / "in.raw", d / "out.npy", "--shape", "64x32", "--dtype", "f32", "--dry-run"});
  EXPECT_EQ(r.exit_code, 1) << why(r);
  EXPECT_NE(r.err.find("--force"), std::string::npos) << r.err;
  // A name that says no format.
  r = gtranspose({d / "in.raw", d / "out.txt", "--shape", "64x32", "--dtype", "f32", "--dry-run"});
  EXPECT_EQ(r.exit_code, 2) << why(r);
  // A shape in place cannot take.
  r = gtranspose({d / "in.raw", "--in-place", "--shape", "48x32", "--dtype", "f32", "--dry-run"});
  EXPECT_NE(r.exit_code, 0) << why(r);
  // --dry-run is a transpose's option.
  r = gtranspose({"--bench", "--dry-run"});
  EXPECT_EQ(r.exit_code, 2) << why(r);
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"in.raw", "out.npy"}));
}

namespace {

// What a dry run plans is what the run then runs: the same plan object.
void expect_dry_run_plans_the_run(const std::string& engine) {
  TempDir d;
  generate(d / "in.raw", "700x500", "f32");
  ASSERT_EQ(gtgen({d / "c.h5:/x", "--shape", "300x260", "--dtype", "f64", "--values", "smooth", "--chunk", "64x48",
                   "--filters", "shuffle,gzip=4", "-q"})
                .exit_code,
            0);
  generate(d / "sq.npy", "300x300", "u16");
  generate(d / "rect.raw", "200x600", "i8");
  const std::vector<std::vector<std::string>> runs = {
      {d / "in.raw", d / "o.npy", "--shape", "700x500", "--dtype", "f32", "--tile", "16K"},
      {d / "c.h5", d / "o.h5", "--host-mem", "64M"},
      {d / "sq.npy", "--in-place", "--tile", "8K"},
      {d / "rect.raw", "--in-place", "--shape", "200x600", "--dtype", "i8"},
  };
  for (std::vector<std::string> args : runs) {
    args.insert(args.end(), {"--engine", engine, "--json", "-", "-q"});
    if (engine == "cpu") args.insert(args.end(), {"--threads", "2"});
    SCOPED_TRACE(args[0]);
    std::vector<std::string> dry = args;
    dry.push_back("--dry-run");
    Result p = gtranspose(dry);
    ASSERT_EQ(p.exit_code, 0) << why(p);
    Result r = gtranspose(args);
    ASSERT_EQ(r.exit_code, 0) << why(r);
    json planned = json::parse(p.out).at("plan"), ran = json::parse(r.out).at("plan");
    for (json* j : {&planned, &ran}) j->erase("estimate"), j->erase("notes");
    EXPECT_EQ(planned, ran) << "dry run:\n" << planned.dump(1) << "\nrun:\n" << ran.dump(1);
  }
}

}  // namespace

TEST(DryRun, PlansWhatTheRunRuns) { expect_dry_run_plans_the_run("cpu"); }

TEST(DryRun, PlansWhatTheCudaRunRuns) {
  GT_SKIP_WITHOUT_GPU();
  expect_dry_run_plans_the_run("cuda");
}

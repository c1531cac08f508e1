// The CUDA engine end to end through the command line: every format and
// element size, out of place and in place, with small budgets so that many
// tiles go through the GPU. Skipped with a reason where no GPU exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli_util.hpp"
#include "gtranspose/plan.hpp"
#include "support/gpu.hpp"

using cli::gtgen;
using cli::gtranspose;
using cli::Result;
using cli::TempDir;
using cli::why;

namespace {

struct Case {
  std::string ext, dtype, shape, kernel;
  bool in_place;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.ext << " " << c.dtype << " " << c.shape << " " << c.kernel << (c.in_place ? " in place" : "");
}

std::string swap_shape(const std::string& s) {
  auto x = s.find('x');
  return s.substr(x + 1) + "x" + s.substr(0, x);
}

}  // namespace

class CudaEngine : public ::testing::TestWithParam<Case> {};

TEST_P(CudaEngine, MatchesThePattern) {
  GT_SKIP_WITHOUT_GPU();
  const Case& c = GetParam();
  TempDir d;
  const std::string in = d / ("in" + c.ext), out = d / ("out" + c.ext);
  Result g = gtgen({in, "--shape", c.shape, "--dtype", c.dtype, "--seed", "21"});
  ASSERT_EQ(g.exit_code, 0) << why(g);
  std::vector<std::string> raw;
  if (c.ext == ".raw") raw = {"--shape", c.shape, "--dtype", c.dtype};
  std::vector<std::string> args{in};
  if (c.in_place) args.push_back("--in-place");
  else args.push_back(out);
  args.insert(args.end(), {"--engine", "cuda", "--kernel", c.kernel, "--host-mem", "2M", "--device-mem", "1M"});
  args.insert(args.end(), raw.begin(), raw.end());
  Result r = gtranspose(args);
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("engine cuda (" + (c.kernel == "auto" ? std::string() : c.kernel)), std::string::npos)
      << why(r);
  std::vector<std::string> verify{"--verify", c.in_place ? in : out, "--transposed", "--seed", "21", "-q"};
  if (c.ext == ".raw") verify.insert(verify.end(), {"--shape", swap_shape(c.shape), "--dtype", c.dtype});
  Result v = gtgen(verify);
  EXPECT_EQ(v.exit_code, 0) << why(v) << "\n" << why(r);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, CudaEngine,
    ::testing::Values(Case{".raw", "u8", "1031x2049", "padded", false}, Case{".raw", "f16", "777x1501", "padded", false},
                      Case{".raw", "f32", "1201x613", "auto", false}, Case{".raw", "f64", "3x50000", "padded", false},
                      Case{".raw", "c128", "50000x3", "padded", false}, Case{".npy", "i32", "640x480", "smem", false},
                      Case{".npy", "c64", "301x511", "unrolled", false}, Case{".h5", "u16", "333x777", "diagonal", false},
                      Case{".h5", "f64", "1x1", "padded", false}, Case{".raw", "u8", "1025x1025", "padded", true},
                      Case{".raw", "f32", "700x700", "auto", true}, Case{".npy", "c128", "129x129", "padded", true},
                      Case{".h5", "i16", "611x611", "tiled", true}));

// auto on a machine with a GPU: the GPU, except where the CPU engine runs
// the job faster (decide_engine, docs/PERF.md run 69): compressed chunks,
// and a file in place (on any number of cores: PERF.md, runs 195-196).
// An option only the CUDA engine takes keeps the GPU.
TEST(CudaEngineAuto, ChoosesByWhatBoundsTheRun) {
  GT_SKIP_WITHOUT_GPU();
  TempDir d;
  const std::string gz = d / "gz.h5", plain = d / "plain.h5", raw = d / "sq.raw";
  ASSERT_EQ(gtgen({gz, "--shape", "300x257", "--dtype", "f32", "--chunk", "64x64", "--filters", "shuffle,gzip=4",
                   "--seed", "3"}).exit_code, 0);
  ASSERT_EQ(gtgen({plain, "--shape", "300x257", "--dtype", "f32", "--chunk", "64x64", "--seed", "3"}).exit_code, 0);
  ASSERT_EQ(gtgen({raw, "--shape", "300x300", "--dtype", "f32", "--seed", "3"}).exit_code, 0);
  const auto engine_of = [&](std::vector<std::string> args) {
    Result r = gtranspose(args);
    EXPECT_EQ(r.exit_code, 0) << why(r);
    return r.out;
  };
  std::string out = engine_of({gz, d / "a.h5"});
  EXPECT_NE(out.find("engine cpu"), std::string::npos) << out;
  EXPECT_NE(out.find("the CPU engine (auto): compressed chunks"), std::string::npos) << out;
  EXPECT_NE(out.find("--engine cuda runs it through a GPU"), std::string::npos) << out;
  out = engine_of({gz, d / "b.h5", "--kernel", "padded"});
  EXPECT_NE(out.find("engine cuda (padded"), std::string::npos) << out;
  out = engine_of({gz, d / "c.h5", "--engine", "cuda"});
  EXPECT_NE(out.find("engine cuda"), std::string::npos) << out;
  out = engine_of({plain, d / "d.h5"});
  EXPECT_NE(out.find("engine cuda"), std::string::npos) << out;
  out = engine_of({raw, "--in-place", "--shape", "300x300", "--dtype", "f32"});
  EXPECT_NE(out.find("engine cpu"), std::string::npos) << out;
  EXPECT_NE(out.find("in place, the writes to the file and its journal bound this run"), std::string::npos) << out;
  out = engine_of({raw, "--in-place", "--shape", "300x300", "--dtype", "f32", "--device-mem", "64M"});
  EXPECT_NE(out.find("engine cuda"), std::string::npos) << out;
  // The dry run says what the run would choose.
  out = engine_of({gz, d / "e.h5", "--dry-run"});
  EXPECT_NE(out.find("engine cpu"), std::string::npos) << out;
  for (const char* o : {"a.h5", "b.h5", "c.h5", "d.h5"}) {
    Result v = gtgen({"--verify", d / o, "--transposed", "--seed", "3", "-q"});
    EXPECT_EQ(v.exit_code, 0) << o << ": " << why(v);
  }
  // Transposed twice in place: the matrix it began as.
  Result v = gtgen({"--verify", raw, "--seed", "3", "-q", "--shape", "300x300", "--dtype", "f32"});
  EXPECT_EQ(v.exit_code, 0) << why(v);
}

// --bench on the GPU: every row of a case (the copy, each kernel, the peers)
// is timed in rounds, one repetition of each in turn, and each verified
// afterwards on every buffer it wrote; an odd shape small enough to rotate
// many buffers, and the random-shape sweep, must come back with every row
// run and verified (or skipped by design, saying why).
TEST(CudaBench, EveryRowRunsAndVerifies) {
  GT_SKIP_WITHOUT_GPU();
  const auto check = [](const Result& r, const char* what) {
    ASSERT_EQ(r.exit_code, 0) << what << ": " << why(r);
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_FALSE(j.at("rows").empty()) << what;
    int ran = 0;
    // A sweep's "rows" summarise its "shape_rows" (% of copy over the
    // shapes, no time of their own): the times are checked on the shapes.
    const bool sweep = j.contains("shape_rows");
    for (const char* key : {"rows", "shape_rows"}) {
      if (!j.contains(key)) continue;
      const bool timed = !sweep || std::string(key) == "shape_rows";
      for (const auto& row : j.at(key)) {
        const std::string status = row.at("status");
        EXPECT_NE(status, "failed") << what << ": " << row.dump();
        if (status != "ok") continue;
        ++ran;
        EXPECT_TRUE(row.at("verified").get<bool>()) << what << ": " << row.dump();
        EXPECT_GT(row.at("pct_of_copy").get<double>(), 0) << what << ": " << row.dump();
        if (timed) {
          EXPECT_GT(row.at("median_ms").get<double>(), 0) << what << ": " << row.dump();
        }
      }
    }
    EXPECT_GE(ran, 3) << what << ": the copy, a kernel and a peer at least";
  };
  check(gtranspose({"--bench", "--engine", "cuda", "--kernel", "all", "--dtype", "u8", "--shape", "1001x777", "--reps",
                    "4", "--json", "-", "-q"}),
        "u8 1001x777");
  check(gtranspose({"--bench", "--engine", "cuda", "--kernel", "padded", "--dtype", "f32", "--random-shapes", "4",
                    "--reps", "3", "--json", "-", "-q"}),
        "random shapes");
}

// --bench-host in place on a rectangle (neither side a multiple of the
// other): the host API on the CUDA engine takes it through the GPU (its
// row's note says so), beside the CPU engine's host API on the same shape;
// every row verified.
TEST(CudaBench, HostInPlaceRectangleBesideTheCpuEngine) {
  GT_SKIP_WITHOUT_GPU();
  // Small, so through the GPU below kHostRectGpuMinBytes: the child inherits it.
  setenv("GT_TEST_HOST_RECT_MIN_BYTES", "0", 1);
  const Result r = gtranspose({"--bench-host", "--shape", "301x517", "--dtype", "f32", "--host-modes",
                               "inplace-pinned,inplace-pageable", "--reps", "2", "--json", "-", "-q"});
  unsetenv("GT_TEST_HOST_RECT_MIN_BYTES");
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> names;
  for (const auto& row : j.at("rows")) {
    const std::string name = row.at("name");
    names.push_back(name);
    EXPECT_EQ(row.at("status"), "ok") << row.dump();
    EXPECT_TRUE(row.at("verified").get<bool>()) << row.dump();
    if (name.rfind("host API in-place", 0) == 0) {
      EXPECT_NE(row.at("note").get<std::string>().find("through the GPU"), std::string::npos) << row.dump();
    }
  }
  for (const char* want : {"host API in-place pinned", "host API in-place pageable", "cpu in-place (host API)"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want << " missing: " << r.out;
}

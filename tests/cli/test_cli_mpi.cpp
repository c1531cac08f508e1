// `mpirun -n 2 gtranspose` end to end on the CPU engine (two cores: the
// ranks oversubscribe; root: --allow-run-as-root): every format, every
// element size, odd shapes, bit for bit against the position pattern and
// against the same run as one process; a failure injected on one rank
// (GT_TEST_MPI_FAIL_RANK) stops both, leaves nothing at OUT or beside it,
// and is said once, naming the rank; in place is refused; a build without
// MPI refuses to run as N copies.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_util.hpp"
#include "gtranspose/launch.hpp"
#include "gtranspose/types.hpp"

namespace cli {
namespace {

const std::string kMpirun = GT_MPIEXEC;

bool have_mpirun() { return !kMpirun.empty() && ::access(kMpirun.c_str(), X_OK) == 0; }

#define NEED_MPI()                                                                                        \
  do {                                                                                                    \
    if (!have_mpirun()) GTEST_SKIP() << "mpirun not found: install openmpi-bin (scripts/setup.sh does)"; \
    if (!gt::built_with_mpi())                                                                            \
      GTEST_SKIP() << "this gtranspose was built without MPI (install libopenmpi-dev and reconfigure); "   \
                      "MpiCli.RefusedWithoutMpi covers this build";                                        \
  } while (0)

Result mpirun(int n, const std::vector<std::string>& args, const std::vector<std::string>& env = {},
              int signal_after_ms = -1) {
  std::vector<std::string> a{"-n", std::to_string(n), "--allow-run-as-root", "--oversubscribe"};
  // Open MPI waits odls_base_sigkill_timeout (1 s) between the signals it
  // sends the ranks for a Ctrl-C, SIGKILL last: on a loaded CI machine a rank
  // may not have run its handler by then (5 s: the run ends ~8 s after).
  if (signal_after_ms >= 0) a.insert(a.end(), {"--mca", "odls_base_sigkill_timeout", "5"});
  for (const auto& e : env) a.insert(a.end(), {"-x", e});
  a.push_back(GT_CLI_PATH);
  a.insert(a.end(), args.begin(), args.end());
  Limits lim;
  lim.timeout_ms = 120000;  // a hang fails the test
  lim.signal_after_ms = signal_after_ms;
  return run(kMpirun, a, lim);
}

// The folder's entries: what a run left (temporary files included).
std::vector<std::string> entries(const TempDir& d) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(d.path())) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// gtranspose's own lines in what mpirun printed (mpirun adds its banners).
int our_lines(const std::string& err) {
  int n = 0;
  for (std::size_t p = 0; (p = err.find("gtranspose: ", p)) != std::string::npos; ++p) ++n;
  return n;
}

struct Case {
  std::string shape, dtype;
};
// Every element size; shapes that do not divide by the ranks, a single
// row and a single column (one rank's share empty or one row), and more
// output rows than input rows.
const std::vector<Case> kCases = {{"1001x777", "f32"}, {"333x1025", "i16"}, {"257x3", "u8"},
                                  {"1x513", "f64"},    {"129x67", "c128"}, {"2x1", "c64"}};

TEST(MpiCli, RawAndNpyBitExactEveryElementSize) {
  NEED_MPI();
  for (const Case& c : kCases) {
    for (const std::string ext : {".raw", ".npy"}) {
      SCOPED_TRACE(c.shape + " " + c.dtype + " " + ext);
      TempDir d;
      const std::string in = d / ("in" + ext), out = d / ("out" + ext), one = d / ("one" + ext);
      generate(in, c.shape, c.dtype, 5);
      std::vector<std::string> raw;
      if (ext == ".raw") raw = {"--shape", c.shape, "--dtype", c.dtype};
      std::vector<std::string> args{in, out, "--engine", "cpu", "-q"};
      args.insert(args.end(), raw.begin(), raw.end());
      Result r = mpirun(2, args);
      ASSERT_EQ(r.exit_code, 0) << why(r);
      const auto [rows, cols] = gt::parse_shape(c.shape);
      std::vector<std::string> vraw;
      if (ext == ".raw") vraw = {"--shape", std::to_string(cols) + "x" + std::to_string(rows), "--dtype", c.dtype};
      expect_transposed(out, 5, vraw);
      // The same run as one process writes the same bytes.
      args[1] = one;
      Result s = gtranspose(args);
      ASSERT_EQ(s.exit_code, 0) << why(s);
      EXPECT_EQ(file_hash(out), file_hash(one));
      EXPECT_EQ(entries(d), (std::vector<std::string>{"in" + ext, "one" + ext, "out" + ext}));
    }
  }
}

TEST(MpiCli, Hdf5ContiguousAndChunkedBitExact) {
  NEED_MPI();
  struct H5 {
    std::string shape, dtype, chunk, filters;
  };
  // Chunks that do not divide the extents; compressed, shuffled, unfiltered;
  // fewer chunk rows of output than ranks need (one rank gets all).
  const std::vector<H5> cases = {{"1003x517", "f64", "64x100", "shuffle,gzip=4"}, {"700x301", "i16", "33x70", "zstd"},
                                 {"300x200", "f32", "50x40", ""},                 {"97x1001", "u8", "97x1001", "lz4"},
                                 {"65x130", "c128", "7x9", "shuffle,gzip=1"}};
  for (const H5& c : cases) {
    SCOPED_TRACE(c.shape + " " + c.dtype + " chunks " + c.chunk + " " + c.filters);
    TempDir d;
    const std::string in = d / "in.h5", out = d / "out.h5";
    std::vector<std::string> g{in, "--shape", c.shape, "--dtype", c.dtype, "--seed", "7", "--chunk", c.chunk, "-q"};
    if (!c.filters.empty()) g.insert(g.end(), {"--filters", c.filters});
    Result gen = gtgen(g);
    ASSERT_EQ(gen.exit_code, 0) << why(gen);
    Result r = mpirun(2, {in, out, "--engine", "cpu", "--host-mem", "64M", "--json", d / "r.json"});
    ASSERT_EQ(r.exit_code, 0) << why(r);
    expect_transposed(out, 7);
    // The output keeps the input's pipeline, transposed chunks.
    EXPECT_NE(r.out.find("chunked"), std::string::npos) << why(r);
    const auto j = nlohmann::json::parse(gt::test::file_contents(d / "r.json"));
    EXPECT_TRUE(j.contains("slowest_rank")) << j.dump(2);
    ASSERT_EQ(j["ranks"].size(), 2u) << j.dump(2);
    EXPECT_EQ(j["ranks"][1]["rank"], 1) << j.dump(2);
    EXPECT_EQ(entries(d), (std::vector<std::string>{"in.h5", "out.h5", "r.json"}));
  }
  // Contiguous HDF5, from .npy and from a contiguous HDF5 input.
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.shape + " " + c.dtype + " contiguous");
    TempDir d;
    generate(d / "in.npy", c.shape, c.dtype, 9);
    Result r = mpirun(2, {d / "in.npy", d / "out.h5", "--engine", "cpu", "-q"});
    ASSERT_EQ(r.exit_code, 0) << why(r);
    expect_transposed(d / "out.h5", 9);
    Result r2 = mpirun(2, {d / "out.h5", d / "back.h5", "--engine", "cpu", "-q"});
    ASSERT_EQ(r2.exit_code, 0) << why(r2);
    Result v = gtgen({"--verify", d / "back.h5", "--seed", "9", "-q"});
    EXPECT_EQ(v.exit_code, 0) << why(v);
  }
}

TEST(MpiCli, FailureOnOneRankStopsAllLeavesNothingNamesTheRank) {
  NEED_MPI();
  struct F {
    std::string in, out, rank;
    std::vector<std::string> extra;
  };
  TempDir d;
  generate(d / "a.raw", "1001x777", "f32", 3);
  Result g = gtgen({d / "c.h5", "--shape", "1003x517", "--dtype", "f64", "--chunk", "64x100", "--filters",
                    "shuffle,gzip=4", "-q"});
  ASSERT_EQ(g.exit_code, 0) << why(g);
  const std::vector<F> cases = {{d / "a.raw", d / "b.raw", "1", {"--shape", "1001x777", "--dtype", "f32"}},
                                {d / "a.raw", d / "b.npy", "0", {"--shape", "1001x777", "--dtype", "f32"}},
                                {d / "c.h5", d / "d.h5", "1", {}},
                                {d / "c.h5", d / "d.h5", "0", {}}};
  for (const F& f : cases) {
    SCOPED_TRACE(f.out + " failing rank " + f.rank);
    std::vector<std::string> args{f.in, f.out, "--engine", "cpu"};
    args.insert(args.end(), f.extra.begin(), f.extra.end());
    Result r = mpirun(2, args, {"GT_TEST_MPI_FAIL_RANK=" + f.rank});
    EXPECT_EQ(r.exit_code, 1) << why(r);
    EXPECT_FALSE(r.timed_out) << why(r);
    EXPECT_NE(r.err.find("gtranspose: rank " + f.rank + " of 2: cannot write the output: No space left on device"),
              std::string::npos)
        << why(r);
    EXPECT_EQ(our_lines(r.err), 1) << "said once\n" << why(r);
    EXPECT_EQ(r.out, "") << why(r);
    EXPECT_EQ(entries(d), (std::vector<std::string>{"a.raw", "c.h5"})) << why(r);
  }
}

// Ctrl-C reaches mpirun, which passes it to every rank: rank 0 removes the
// temporary output, and says so once. Rank 1 stalls in its first write
// (GT_TEST_MPI_STALL_RANK), so the run is under way when the signal comes.
TEST(MpiCli, InterruptLeavesNothingAndIsSaidOnce) {
  NEED_MPI();
  TempDir d;
  generate(d / "a.npy", "512x384", "f32", 4);
  Result r = mpirun(2, {d / "a.npy", d / "b.npy", "--engine", "cpu"}, {"GT_TEST_MPI_STALL_RANK=1"}, 4000);
  EXPECT_NE(r.exit_code, 0) << why(r);
  EXPECT_FALSE(r.timed_out) << why(r);
  EXPECT_NE(r.err.find("gtranspose: interrupted: partial output removed"), std::string::npos) << why(r);
  EXPECT_EQ(our_lines(r.err), 1) << why(r);
  EXPECT_EQ(entries(d), std::vector<std::string>{"a.npy"}) << why(r);
}

TEST(MpiCli, ExistingOutputKeptWithoutForceAndReplacedWithIt) {
  NEED_MPI();
  TempDir d;
  generate(d / "a.npy", "301x203", "f32", 4);
  write_file(d / "b.npy", "keep me");
  Result r = mpirun(2, {d / "a.npy", d / "b.npy", "--engine", "cpu"});
  EXPECT_EQ(r.exit_code, 1) << why(r);
  EXPECT_NE(r.err.find("--force"), std::string::npos) << why(r);
  EXPECT_EQ(our_lines(r.err), 1) << why(r);
  EXPECT_EQ(gt::test::file_contents(d / "b.npy"), "keep me");
  Result f = mpirun(2, {d / "a.npy", d / "b.npy", "--engine", "cpu", "--force", "-q"});
  ASSERT_EQ(f.exit_code, 0) << why(f);
  expect_transposed(d / "b.npy", 4);
  EXPECT_EQ(entries(d), (std::vector<std::string>{"a.npy", "b.npy"}));
}

TEST(MpiCli, InPlaceRefusedUnderMpi) {
  NEED_MPI();
  TempDir d;
  generate(d / "sq.npy", "64x64", "f32", 2);
  const std::uint64_t before = file_hash(d / "sq.npy");
  Result r = mpirun(2, {d / "sq.npy", "--in-place", "--engine", "cpu"});
  EXPECT_EQ(r.exit_code, 2) << why(r);
  EXPECT_NE(r.err.find("--in-place does not run under MPI yet"), std::string::npos) << why(r);
  EXPECT_EQ(our_lines(r.err), 1) << why(r);
  EXPECT_EQ(file_hash(d / "sq.npy"), before);
}

TEST(MpiCli, ReportHasEveryRankAndTheAggregate) {
  NEED_MPI();
  TempDir d;
  generate(d / "a.npy", "1000x999", "f32", 6);
  Result r = mpirun(2, {d / "a.npy", d / "b.npy", "--engine", "cpu", "--json", d / "r.json"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("  rank 0: "), std::string::npos) << why(r);
  EXPECT_NE(r.out.find("  rank 1: "), std::string::npos) << why(r);
  EXPECT_NE(r.out.find("(slowest)"), std::string::npos) << why(r);
  EXPECT_NE(r.out.find("MPI: 2 ranks on 1 node, each a band of about 499 output rows"), std::string::npos) << why(r);
  const auto j = nlohmann::json::parse(gt::test::file_contents(d / "r.json"));
  EXPECT_EQ(j["bytes"], 3996000u) << j.dump(2);  // the whole matrix, not rank 0's share
  ASSERT_EQ(j["ranks"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["ranks"][0]["rank"], 0);
  EXPECT_EQ(j["ranks"][1]["rank"], 1);
  EXPECT_TRUE(j["ranks"][0]["stages"].is_array());
  // Each rank's band: 999 output rows as 499 and 500.
  EXPECT_EQ(j["ranks"][0]["bytes"], 1996000u) << j.dump(2);
  EXPECT_EQ(j["ranks"][1]["bytes"], 2000000u) << j.dump(2);
}

// Run as N copies of the whole job: refused where the build has no MPI; a
// bench is refused under a launcher in every build.
TEST(MpiCli, RefusedWithoutMpiAndBenchRefusedUnderLauncher) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not found: install openmpi-bin (scripts/setup.sh does)";
  TempDir d;
  generate(d / "a.npy", "30x20", "f32", 1);
  if (!gt::built_with_mpi()) {
    Result r = mpirun(2, {d / "a.npy", d / "b.npy", "--engine", "cpu"});
    EXPECT_EQ(r.exit_code, 2) << why(r);
    EXPECT_NE(r.err.find("built without MPI, and mpirun started 2 copies"), std::string::npos) << why(r);
    EXPECT_EQ(entries(d), std::vector<std::string>{"a.npy"});
  }
  Result b = mpirun(2, {"--bench", "--shape", "64x64", "--engine", "cpu"});
  EXPECT_EQ(b.exit_code, 2) << why(b);
  EXPECT_NE(b.err.find("--bench runs as one process, and this is one of 2 started by mpirun"), std::string::npos)
      << why(b);
}

}  // namespace
}  // namespace cli

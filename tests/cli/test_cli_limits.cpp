// What gtranspose refuses at once and what it promises: a FIFO or device as
// input is refused without blocking; a run of countless tiny tiles is
// refused; options that cannot apply are refused (exit 2); any budget that
// holds the tiles a run needs works, and the report says what the budget
// covers, which the resident set's growth keeps to; an interrupted run ends
// by its signal (128+N in a shell); a Fortran-order input is copied.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <regex>

#include "cli/cli_util.hpp"
#include "gtranspose/cuda.hpp"
#include "support/gpu.hpp"

using cli::expect_error;
using cli::expect_transposed;
using cli::generate;
using cli::gtgen;
using cli::gtranspose;
using cli::Result;
using cli::TempDir;
using cli::why;

namespace {

// A number field of a --json report's host_memory object.
std::uint64_t json_number(const std::string& json, const std::string& key) {
  std::smatch m;
  const std::string object = json.substr(std::min(json.size(), json.rfind("\"host_memory\"")));
  if (!std::regex_search(object, m, std::regex("\"" + key + "\": ([0-9]+)"))) {
    ADD_FAILURE() << "no " << key << " in " << json;
    return 0;
  }
  return std::stoull(m[1]);
}

}  // namespace

TEST(Fifo, AnInputFifoIsRefusedWithoutBlocking) {
  TempDir d;
  cli::Limits lim;
  lim.timeout_ms = 20000;
  for (const char* name : {"in.npy", "in.h5", "in.raw", "in.nc"}) {
    SCOPED_TRACE(name);
    ASSERT_EQ(::mkfifo((d / name).c_str(), 0644), 0);
    Result r = gtranspose({d / name, d / "o.raw", "--shape", "4x4", "--dtype", "f32", "--engine", "cpu"}, lim);
    ASSERT_FALSE(r.timed_out) << "gtranspose blocked on a FIFO\n" << why(r);
    expect_error(r, 1, "is not a regular file (a FIFO)");
    Result i = gtranspose({d / name, "--in-place", "--shape", "4x4", "--dtype", "f32", "--engine", "cpu"}, lim);
    ASSERT_FALSE(i.timed_out) << why(i);
    expect_error(i, 1, "a FIFO");
  }
  Result dev = gtranspose({"/dev/zero", d / "o.raw", "--shape", "4x4", "--dtype", "f32", "--engine", "cpu"}, lim);
  ASSERT_FALSE(dev.timed_out) << why(dev);
  expect_error(dev, 1, "a character device");
}

TEST(Tiles, CountlessTinyTilesAreRefusedAtOnce) {
  TempDir d;
  generate(d / "a.raw", "4096x4096", "f32");  // 64 MiB: 16M one-element tiles
  cli::Limits lim;
  lim.timeout_ms = 20000;
  const std::vector<std::string> raw{"--shape", "4096x4096", "--dtype", "f32", "--engine", "cpu"};
  for (const char* flag : {"--tile", "--chunk"}) {
    std::vector<std::string> args{d / "a.raw", d / "b.raw", flag, "1"};
    args.insert(args.end(), raw.begin(), raw.end());
    Result r = gtranspose(args, lim);
    ASSERT_FALSE(r.timed_out) << why(r);
    EXPECT_EQ(r.exit_code, 2) << why(r);
    EXPECT_NE(r.err.find("--tile 1 makes 16777216 tiles of 1x1"), std::string::npos) << why(r);
    EXPECT_NE(r.err.find("give --tile 4K or more"), std::string::npos) << why(r);
  }
  // A budget that holds no tile of the floor says which budget would.
  std::vector<std::string> small{d / "a.raw", d / "b.raw", "--host-mem", "8K"};
  small.insert(small.end(), raw.begin(), raw.end());
  expect_error(gtranspose(small, lim), 2, "give --host-mem 64K or more");
  EXPECT_EQ(d.entries(), std::vector<std::string>{"a.raw"});
  // The floor's own tiles run.
  std::vector<std::string> floor{d / "a.raw", d / "b.raw", "--tile", "4K", "-q"};
  floor.insert(floor.end(), raw.begin(), raw.end());
  Result f = gtranspose(floor);
  ASSERT_EQ(f.exit_code, 0) << why(f);
  expect_transposed(d / "b.raw", 3, {"--shape", "4096x4096", "--dtype", "f32"});
}

TEST(Options, ThoseThatCannotApplyAreRefused) {
  TempDir d;
  generate(d / "a.npy", "30x20", "f32");
  const std::string in = d / "a.npy", out = d / "b.npy";
  // A CPU-only build knows no kernel names at all, and says so.
  expect_error(gtranspose({in, out, "--engine", "cpu", "--kernel", "padded"}), 2,
               gt::built_with_cuda() ? "not the CUDA kernel 'padded': drop --kernel" : "this build has no CUDA kernels");
  expect_error(gtranspose({in, out, "--engine", "cpu", "--streams", "2"}), 2, "it uses no CUDA streams: drop --streams");
  expect_error(gtranspose({in, out, "--engine", "cpu", "--device-mem", "1M"}), 2, "uses no device memory: drop --device-mem");
  generate(d / "sq.npy", "20x20", "f32");
  expect_error(gtranspose({d / "sq.npy", "--in-place", "--engine", "cpu", "--device-mem", "1M"}), 2, "drop --device-mem");
  expect_error(gtranspose({"--bench", "--engine", "cpu", "--kernel", "padded", "--shape", "64x64"}), 2,
               "cannot run the CUDA kernel 'padded'");
  expect_error(gtranspose({"--bench", "--engine", "cpu", "--sweep"}), 2, "drop --sweep");
  expect_error(gtranspose({"--bench", "--engine", "cpu", "--host-mem", "8M"}), 2,
               "--host-mem applies to a transpose and --bench-host only, not to --bench");
  expect_error(gtranspose({"--bench", "--engine", "cpu", "--tile", "4K"}), 2, "--tile applies to a transpose and --bench-host only");
  expect_error(gtranspose({in, out, "--host-modes", "pinned"}), 2, "--host-modes applies to --bench-host only");
  expect_error(gtranspose({"--bench-host", "--threads", "2"}), 2, "--threads applies to a transpose and --bench only");
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"a.npy", "sq.npy"}));
}

TEST(Options, WithoutAGpuAutoIsTheCpuEngineAndRefusesThemToo) {
  GT_SKIP_WITH_GPU("auto picks the CUDA engine there");
  TempDir d;
  generate(d / "a.npy", "30x20", "f32");
  expect_error(gtranspose({d / "a.npy", d / "b.npy", "--kernel", "padded"}), 2, "--kernel");
  // The audit: --bench --kernel padded benched the CPU engine instead.
  expect_error(gtranspose({"--bench", "--kernel", "padded", "--shape", "64x64"}), 2, "cannot run the CUDA kernel 'padded'");
}

// The example (1001x1001 u16 in place in 256 KiB) and budgets far
// below the 1 MiB the CLI used to demand, each holding the tiles it needs.
TEST(Budget, AnyBudgetThatHoldsTheTilesWorks) {
  TempDir d;
  generate(d / "m.npy", "1001x1001", "u16", 4);
  for (const char* budget : {"64K", "100K", "300K"}) {
    const std::string out = d / ("o" + std::string(budget) + ".npy");
    Result o = gtranspose({d / "m.npy", out, "--engine", "cpu", "--host-mem", budget, "-q"});
    ASSERT_EQ(o.exit_code, 0) << why(o);
    expect_transposed(out, 4);
  }
  Result r = gtranspose({d / "m.npy", "--in-place", "--engine", "cpu", "--host-mem", "256K", "--json", d / "r.json"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  expect_transposed(d / "m.npy", 4);
  const std::string j = gt::test::file_contents(d / "r.json");
  EXPECT_LE(json_number(j, "buffers_bytes") + json_number(j, "reserved_bytes"), 256u << 10) << j;
}

// What the budget covers (the engine's buffers and the formats' caches) is
// within it, and the resident set grows by no more than the budget plus a
// fixed 4 MiB over the run (thread stacks, I/O vectors, a Fortran-order
// file's 2 MiB bounce buffer, HDF5's bookkeeping). The process's own
// resident memory before the run (program, libraries) is outside it.
TEST(Budget, TheReportSaysWhatTheBudgetCoversAndKeepsToIt) {
  TempDir d;
  generate(d / "a.raw", "4096x2048", "f32");  // 32 MiB
  generate(d / "a.npy", "2048x2048", "f64");
  generate(d / "a.h5", "2048x1024", "c64");
  struct Run {
    std::vector<std::string> args;
    std::uint64_t budget;
  } runs[] = {
      {{d / "a.raw", d / "o1.raw", "--shape", "4096x2048", "--dtype", "f32", "--host-mem", "8M"}, 8u << 20},
      {{d / "a.raw", d / "o2.raw", "--shape", "4096x2048", "--dtype", "f32", "--host-mem", "512K"}, 512u << 10},
      {{d / "a.npy", d / "o3.h5", "--host-mem", "16M"}, 16u << 20},
      {{d / "a.h5", d / "o4.npy", "--host-mem", "4M"}, 4u << 20},
      {{d / "a.npy", "--in-place", "--host-mem", "2M"}, 2u << 20},
  };
  for (const Run& run : runs) {
    std::vector<std::string> args = run.args;
    args.insert(args.end(), {"--engine", "cpu", "--json", d / "r.json", "--force"});
    Result r = gtranspose(args);
    ASSERT_EQ(r.exit_code, 0) << why(r);
    const std::string j = gt::test::file_contents(d / "r.json");
    const std::uint64_t buffers = json_number(j, "buffers_bytes"), reserved = json_number(j, "reserved_bytes");
    const std::uint64_t peak = json_number(j, "peak_rss_bytes"), start = json_number(j, "rss_start_bytes");
    EXPECT_EQ(json_number(j, "budget_bytes"), run.budget);
    EXPECT_LE(buffers + reserved, run.budget) << r.cmdline;
    EXPECT_LE(peak - start, run.budget + (4u << 20)) << r.cmdline << ": grew " << ((peak - start) >> 10) << " KiB\n" << j;
    EXPECT_NE(r.out.find("host memory: buffers "), std::string::npos) << why(r);
    EXPECT_NE(r.out.find("before the run"), std::string::npos) << why(r);
  }
}

// The README's exit codes: an interrupted run ends by its signal, which a
// shell reports as 128+N; the partial output is gone either way. (A shell
// without job control starts background commands with SIGINT ignored, so
// SIGINT is sent from here; SIGTERM and SIGHUP go through /bin/sh.)
TEST(Signals, AnInterruptedRunEndsByItsSignal) {
  TempDir d;
  generate(d / "a.raw", "8192x6144", "f32");
  const std::vector<std::string> args{d / "a.raw", d / "b.raw", "--shape", "8192x6144", "--dtype", "f32", "--engine",
                                      "cpu", "--host-mem", "1M", "--threads", "1"};
  cli::Limits lim;
  lim.signal_after_ms = 300;
  Result i = gtranspose(args, lim);
  EXPECT_EQ(i.signal, SIGINT) << why(i);
  EXPECT_EQ(d.entries(), std::vector<std::string>{"a.raw"});
  for (auto [sig, code] : {std::pair{SIGTERM, 143}, {SIGHUP, 129}}) {
    SCOPED_TRACE(sig);
    std::string cmd = std::string(GT_CLI_PATH);
    for (const auto& a : args) cmd += " '" + a + "'";
    cmd += " 2>/dev/null & pid=$!; sleep 0.3; kill -" + std::to_string(sig) + " $pid; wait $pid; echo $?";
    Result r = cli::run("/bin/sh", {"-c", cmd});
    ASSERT_EQ(r.exit_code, 0) << why(r);
    EXPECT_EQ(r.out, std::to_string(code) + "\n") << why(r);
    EXPECT_EQ(d.entries(), std::vector<std::string>{"a.raw"});
  }
}

// A Fortran-order .npy holds its transpose's bytes: the output is those
// bytes (as fast as cp), and the same as a C-order input gives.
TEST(Fortran, AFortranOrderInputIsCopiedAsItIs) {
  TempDir d;
  generate(d / "b.npy", "300x700", "f32", 8);  // B; its bytes are A = B^T stored in Fortran order
  const std::string b = gt::test::file_contents(d / "b.npy");
  const std::size_t data = 10 + std::size_t(static_cast<unsigned char>(b[8]) | static_cast<unsigned char>(b[9]) << 8);
  std::string dict = "{'descr': '<f4', 'fortran_order': True, 'shape': (700, 300), }";
  dict.resize(117, ' ');
  dict += '\n';
  cli::write_file(d / "f.npy", std::string("\x93NUMPY\x01\x00", 8) + char(dict.size()) + '\0' + dict + b.substr(data));
  for (const char* out : {"t.npy", "t.raw", "t.h5"}) {
    SCOPED_TRACE(out);
    Result r = gtranspose({d / "f.npy", d / out, "--engine", "cpu", "--host-mem", "256K"});
    ASSERT_EQ(r.exit_code, 0) << why(r);
    EXPECT_NE(r.out.find("stored in Fortran order"), std::string::npos) << why(r);
    // The transpose of A is B: gt-gen's pattern, not transposed.
    std::vector<std::string> v{"--verify", d / out, "--seed", "8", "-q"};
    if (std::string(out) == "t.raw") v.insert(v.end(), {"--shape", "300x700", "--dtype", "f32"});
    Result g = gtgen(v);
    EXPECT_EQ(g.exit_code, 0) << why(g);
  }
  EXPECT_EQ(gt::test::file_contents(d / "t.npy").substr(data), b.substr(data));
  // Options are checked as for any run.
  expect_error(gtranspose({d / "f.npy", d / "u.npy", "--engine", "cpu", "--streams", "2"}), 2, "drop --streams");
}

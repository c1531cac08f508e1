// What a user of other command-line tools expects: --version that says what
// the build holds and whether a GPU is usable, and a "did you mean" for an
// option mistyped (exit 2, one line).
#include <gtest/gtest.h>
#include <sched.h>

#include <nlohmann/json.hpp>

#include "cli/cli_util.hpp"
#include "gtranspose/about.hpp"
#include "gtranspose/cuda.hpp"
#include "gtranspose/machine.hpp"

using cli::expect_error;
using cli::gtranspose;
using cli::Result;
using cli::why;

TEST(Version, SaysLibrariesCodecsAndTheGpu) {
  Result r = gtranspose({"--version"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const gt::BuildInfo b = gt::build_info();
  EXPECT_EQ(r.out.rfind("gtranspose " + b.version + " (", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("HDF5 " + b.hdf5 + "\n"), std::string::npos) << r.out;
  EXPECT_NE(b.hdf5.find('.'), std::string::npos) << b.hdf5;
  EXPECT_NE(r.out.find("codecs: deflate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(b.codecs), std::string::npos) << r.out;
  if (gt::built_with_cuda()) {
    EXPECT_GT(b.cuda_runtime, 0);
    EXPECT_NE(r.out.find("CUDA runtime " + gt::cuda_version_text(b.cuda_runtime) + ", driver supports CUDA "),
              std::string::npos)
        << r.out;
  } else {
    EXPECT_NE(r.out.find("CUDA: not built in"), std::string::npos) << r.out;
  }
  if (b.gpus > 0) {
    EXPECT_NE(r.out.find("GPU: " + std::to_string(b.gpus) + " usable (" + b.gpu + ")"), std::string::npos) << r.out;
  } else {
    // Why not, in the runtime's words.
    ASSERT_FALSE(b.no_gpu_reason.empty());
    EXPECT_NE(r.out.find("GPU: none usable: " + b.no_gpu_reason), std::string::npos) << r.out;
  }
  EXPECT_NE(r.out.find("  machine: " + b.machine + "\n"), std::string::npos) << r.out;
  EXPECT_EQ(gt::cuda_version_text(12040), "12.4");
  EXPECT_EQ(gt::cuda_version_text(0), "none");
}

TEST(Usage, AnUnknownOptionGetsDidYouMean) {
  expect_error(gtranspose({"in.raw", "out.raw", "--hostmem", "1G"}), 2, "(did you mean --host-mem?)");
  expect_error(gtranspose({"in.raw", "out.raw", "--hostmem=1G"}), 2, "(did you mean --host-mem?)");
  expect_error(gtranspose({"in.raw", "out.raw", "--dryrun"}), 2, "(did you mean --dry-run?)");
  expect_error(gtranspose({"in.raw", "out.raw", "--in-palce"}), 2, "(did you mean --in-place?)");
  expect_error(gtranspose({"in.raw", "out.raw", "--devic-mem", "1G"}), 2, "(did you mean --device-mem?)");
  // Nothing near: no guess, still one line and exit 2.
  Result r = gtranspose({"in.raw", "out.raw", "--frobnicate"});
  expect_error(r, 2, "--frobnicate");
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
  // After "--" a word is a file, never an option to correct.
  r = gtranspose({"--", "--hostmem"});
  EXPECT_EQ(r.err.find("did you mean"), std::string::npos) << r.err;
}

// Under taskset (or a scheduler's cpuset) the run's threads follow the
// affinity, not the node's core count, and --version says so.
TEST(Version, ThreadsFollowTheCpuAffinity) {
  cli::TempDir d;
  cli::generate(d / "in.raw", "300x200", "f32");
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  int first = 0;
  while (!CPU_ISSET(first, &before)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);  // the child inherits this thread's mask
  Result v = gtranspose({"--version"});
  Result r = gtranspose({d / "in.raw", d / "out.raw", "--shape", "300x200", "--dtype", "f32", "--engine", "cpu",
                         "--dry-run", "--json", "-", "-q"});
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  ASSERT_EQ(v.exit_code, 0) << why(v);
  EXPECT_NE(v.out.find("machine: 1 of " + std::to_string(gt::online_cores()) + " cores"), std::string::npos) << v.out;
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.at("plan").at("threads"), 1) << j.at("plan").dump();
  // Without the mask, the plan takes every core it may use.
  Result all = gtranspose({d / "in.raw", d / "out.raw", "--shape", "300x200", "--dtype", "f32", "--engine", "cpu",
                           "--dry-run", "--json", "-", "-q"});
  ASSERT_EQ(all.exit_code, 0) << why(all);
  EXPECT_EQ(nlohmann::json::parse(all.out).at("plan").at("threads"), gt::usable_cores());
}

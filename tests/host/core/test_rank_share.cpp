// The MPI decisions of the run plan (plan.hpp): each rank's band of output
// rows, its GPU, its host budget; and the launcher's environment
// (launch.hpp) that a build with or without MPI reads.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdint>
#include <string>

#include "gtranspose/launch.hpp"
#include "gtranspose/plan.hpp"

namespace {

// Every row once, in rank order, balanced to one unit, on unit boundaries.
void check_shares(std::uint64_t rows, std::uint64_t align, int ranks) {
  SCOPED_TRACE(std::to_string(rows) + " rows, align " + std::to_string(align) + ", " + std::to_string(ranks) + " ranks");
  const std::uint64_t a = align ? align : 1, units = (rows + a - 1) / a;
  std::uint64_t next = 0, least = UINT64_MAX, most = 0;
  for (int k = 0; k < ranks; ++k) {
    const gt::RankShare s = gt::plan_rank_share(rows, align, k, ranks);
    ASSERT_EQ(s.row0, next);
    if (s.row0 < rows) {
      ASSERT_EQ(s.row0 % a, 0u);
    }
    const std::uint64_t u = (s.rows + a - 1) / a;
    least = std::min(least, u);
    most = std::max(most, u);
    next += s.rows;
  }
  EXPECT_EQ(next, rows);
  EXPECT_LE(most - least, 1u);
  EXPECT_EQ(most, (units + std::uint64_t(ranks) - 1) / std::uint64_t(ranks));
}

TEST(RankShare, CoversEveryRowOnceBalancedAndAligned) {
  for (std::uint64_t rows : {1ull, 2ull, 3ull, 7ull, 999ull, 1000ull, 1001ull, 65536ull})
    for (std::uint64_t align : {0ull, 1ull, 7ull, 64ull, 100ull})
      for (int ranks : {1, 2, 3, 5, 8, 64}) check_shares(rows, align, ranks);
}

TEST(RankShare, SixtyFourBitExtentsAndManyRanks) {
  check_shares((std::uint64_t(1) << 40) + 3, 4096, 7);
  check_shares((std::uint64_t(1) << 62) + 12345, 1, 100000);
  check_shares(UINT64_MAX / 2, 3, 1 << 20);
}

TEST(RankShare, ExactHalvesAndEmptyTail) {
  EXPECT_EQ(gt::plan_rank_share(999, 1, 0, 2).rows, 499u);
  EXPECT_EQ(gt::plan_rank_share(999, 1, 1, 2).row0, 499u);
  EXPECT_EQ(gt::plan_rank_share(999, 1, 1, 2).rows, 500u);
  // 517 rows of 100-row chunks: 6 units, 3 each (the last unit short).
  EXPECT_EQ(gt::plan_rank_share(517, 100, 0, 2).rows, 300u);
  EXPECT_EQ(gt::plan_rank_share(517, 100, 1, 2).rows, 217u);
  // More ranks than rows: the first ranks take one each, the rest none.
  EXPECT_EQ(gt::plan_rank_share(2, 1, 0, 4).rows, 0u);
  EXPECT_EQ(gt::plan_rank_share(2, 1, 1, 4).rows, 1u);
  EXPECT_EQ(gt::plan_rank_share(2, 1, 3, 4).rows, 1u);
  EXPECT_EQ(gt::plan_rank_share(0, 1, 1, 2).rows, 0u);
  EXPECT_THROW((void)gt::plan_rank_share(10, 1, 2, 2), gt::Error);
}

TEST(RankShare, DeviceAndHostBudgetPerRank) {
  EXPECT_EQ(gt::plan_rank_device(0, 2), 0);
  EXPECT_EQ(gt::plan_rank_device(1, 2), 1);
  EXPECT_EQ(gt::plan_rank_device(3, 2), 1);  // shared
  EXPECT_EQ(gt::plan_rank_device(1, 0), -1);
  EXPECT_EQ(gt::plan_rank_host_budget(123456, 4), 123456u);  // {host_mem} is per rank
  EXPECT_EQ(gt::plan_rank_host_budget(0, 1), gt::default_host_budget());
  EXPECT_EQ(gt::plan_rank_host_budget(0, 2), std::max<std::uint64_t>(gt::default_host_budget() / 2, 64ull << 20));
  EXPECT_EQ(gt::plan_rank_host_budget(0, 1 << 20), 64ull << 20);
}

// Sets an environment variable for one scope.
class Env {
 public:
  Env(const char* name, const char* value) : name_(name) {
    if (const char* v = ::getenv(name)) old_ = v, had_ = true;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~Env() { had_ ? ::setenv(name_.c_str(), old_.c_str(), 1) : ::unsetenv(name_.c_str()); }

 private:
  std::string name_, old_;
  bool had_ = false;
};

TEST(Launch, RanksAndLocalRankFromTheLaunchersEnvironment) {
  Env a("OMPI_COMM_WORLD_SIZE", nullptr), b("PMI_SIZE", nullptr), c("PMIX_RANK", nullptr), d("PMI_RANK", nullptr),
      e("SLURM_STEP_NUM_TASKS", nullptr), f("OMPI_COMM_WORLD_LOCAL_RANK", nullptr), g("MPI_LOCALRANKID", nullptr),
      h("SLURM_LOCALID", nullptr);
  EXPECT_EQ(gt::launched_ranks(), 0);
  EXPECT_EQ(gt::launched_local_rank(), -1);
  {
    Env s("SLURM_STEP_NUM_TASKS", "4");  // a batch script is no rank
    EXPECT_EQ(gt::launched_ranks(), 0);
    Env r("PMIX_RANK", "2");  // srun's ranks under PMIx are
    EXPECT_EQ(gt::launched_ranks(), 4);
  }
  {
    Env o("OMPI_COMM_WORLD_SIZE", "2"), l("OMPI_COMM_WORLD_LOCAL_RANK", "1");
    EXPECT_EQ(gt::launched_ranks(), 2);
    EXPECT_EQ(gt::launched_local_rank(), 1);
  }
  {
    Env p("PMI_SIZE", "8"), l("MPI_LOCALRANKID", "3");
    EXPECT_EQ(gt::launched_ranks(), 8);
    EXPECT_EQ(gt::launched_local_rank(), 3);
  }
  Env bad("PMI_SIZE", "x2");
  EXPECT_EQ(gt::launched_ranks(), 0);
}

TEST(Launch, PinsTheRanksGpuAmongThoseListed) {
  {
    Env v("CUDA_VISIBLE_DEVICES", "4,5,6");
    const std::string note = gt::pin_rank_device(1);
    EXPECT_STREQ(::getenv("CUDA_VISIBLE_DEVICES"), "5");
    EXPECT_EQ(note, "GPU 1 of 3 on this node (CUDA_VISIBLE_DEVICES=5)");
    EXPECT_EQ(gt::pin_rank_device(1), "");  // one GPU left: nothing changes
    EXPECT_STREQ(::getenv("CUDA_VISIBLE_DEVICES"), "5");
  }
  {
    Env v("CUDA_VISIBLE_DEVICES", "0,1");
    EXPECT_EQ(gt::pin_rank_device(2), "GPU 0 of 2 on this node (CUDA_VISIBLE_DEVICES=0), shared with another rank");
  }
  {
    Env v("CUDA_VISIBLE_DEVICES", "0,1");
    EXPECT_EQ(gt::pin_rank_device(-1), "");
    EXPECT_STREQ(::getenv("CUDA_VISIBLE_DEVICES"), "0,1");
  }
}

}  // namespace

namespace {
TEST(RankShare, ThreadsSharedAmongTheNodesRanks) {
  EXPECT_EQ(gt::plan_rank_threads(32, 2), 16);
  EXPECT_EQ(gt::plan_rank_threads(32, 1), 32);
  EXPECT_EQ(gt::plan_rank_threads(2, 4), 1);
  EXPECT_EQ(gt::plan_rank_threads(0, 2), 0);  // a format that runs no codecs
  EXPECT_EQ(gt::plan_rank_threads(7, 0), 7);
}
}  // namespace

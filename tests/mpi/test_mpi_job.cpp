// The library's MPI entry point (gtranspose/mpi.hpp) on a communicator, run
// by ctest under `mpirun -n 2`: raw files of every element size and odd
// shapes, bit for bit against the reference transpose; a communicator other
// than MPI_COMM_WORLD (each rank alone on its own job, and a duplicate);
// a failure on one rank in set-up, the same error on every rank naming it.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>
#include <string>

#include "gtranspose/mpi.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"

namespace {

int world_rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// One folder for all ranks: rank 0's name, broadcast.
std::string shared_dir(MPI_Comm comm, const gt::test::TempDir* mine) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  char buf[4096] = {};
  if (rank == 0) std::snprintf(buf, sizeof buf, "%s", mine->path().c_str());
  MPI_Bcast(buf, sizeof buf, MPI_CHAR, 0, comm);
  return buf;
}

gt::JobOptions raw_job(const std::string& in, const std::string& out, gt::Shape shape, std::size_t es) {
  gt::JobOptions o;
  o.input = in;
  o.output = out;
  o.open.shape = shape;
  o.open.dtype = gt::test::dtype_for(es);
  o.engine = gt::EngineChoice::cpu;
  return o;
}

TEST(MpiJob, RawEveryElementSizeBitExactOnTheWorld) {
  gt::test::TempDir d;
  const std::string dir = shared_dir(MPI_COMM_WORLD, &d);
  for (std::size_t es : {1, 2, 4, 8, 16})
    for (gt::Shape s : {gt::Shape{301, 177}, gt::Shape{1, 1000}, gt::Shape{999, 1}, gt::Shape{3, 2}}) {
      SCOPED_TRACE(std::to_string(es) + " B, " + gt::to_string(s));
      const std::string in = dir + "/in.raw", out = dir + "/out.raw";
      const gt::test::Bytes m = gt::test::random_bytes(s.rows * s.cols * es, es * 131 + s.rows);
      if (world_rank() == 0) gt::test::write_file(in, std::string(m.begin(), m.end()));
      MPI_Barrier(MPI_COMM_WORLD);
      const gt::RunReport r = gt::mpi::run_job(raw_job(in, out, s, es), MPI_COMM_WORLD);
      if (world_rank() == 0) {
        const std::string got = gt::test::file_contents(out);
        const gt::test::Bytes want = gt::test::transposed(m, s.rows, s.cols, es);
        ASSERT_EQ(got.size(), want.size());
        EXPECT_EQ(gt::test::first_difference(reinterpret_cast<const unsigned char*>(got.data()), want.data(),
                                             want.size(), es, s.cols),
                  "");
        ASSERT_EQ(r.ranks.size(), 2u);
        EXPECT_EQ(r.bytes, s.rows * s.cols * es);
        EXPECT_EQ(r.ranks[0].bytes + r.ranks[1].bytes, r.bytes);
        EXPECT_TRUE(r.slowest_rank == 0 || r.slowest_rank == 1);
        std::filesystem::remove(out);
      }
      MPI_Barrier(MPI_COMM_WORLD);
    }
}

// Each rank alone (a communicator of one, from MPI_Comm_split): two jobs at
// once, neither touching the other's files.
TEST(MpiJob, ACommunicatorOfItsOwn) {
  MPI_Comm alone = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, world_rank(), 0, &alone);
  gt::test::TempDir d;
  const gt::Shape s{123, 45 + std::uint64_t(world_rank())};
  const gt::test::Bytes m = gt::test::random_bytes(s.rows * s.cols * 4, 7 + world_rank());
  gt::test::write_file(d / "in.raw", std::string(m.begin(), m.end()));
  const gt::RunReport r = gt::mpi::run_job(raw_job(d / "in.raw", d / "out.raw", s, 4), alone);
  const std::string got = gt::test::file_contents(d / "out.raw");
  const gt::test::Bytes want = gt::test::transposed(m, s.rows, s.cols, 4);
  EXPECT_EQ(got, std::string(want.begin(), want.end()));
  EXPECT_EQ(r.ranks.size(), 1u);
  MPI_Comm_free(&alone);
}

// A rank whose input is missing fails set-up: every rank throws the same
// error, naming it, and nothing is created.
TEST(MpiJob, AFailureOnOneRankIsEveryRanksError) {
  gt::test::TempDir d;
  const std::string dir = shared_dir(MPI_COMM_WORLD, &d);
  const gt::Shape s{40, 30};
  const gt::test::Bytes m = gt::test::random_bytes(s.rows * s.cols, 3);
  if (world_rank() == 0) gt::test::write_file(dir + "/in.raw", std::string(m.begin(), m.end()));
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  const std::string in = world_rank() == 1 ? dir + "/missing.raw" : dir + "/in.raw";
  try {
    (void)gt::mpi::run_job(raw_job(in, dir + "/out.raw", s, 1), dup);
    ADD_FAILURE() << "no error";
  } catch (const gt::Error& e) {
    EXPECT_EQ(e.kind(), gt::ErrorKind::input);
    EXPECT_EQ(e.message().rfind("rank 1 of 2: ", 0), 0u) << e.message();
    EXPECT_NE(e.message().find("missing.raw"), std::string::npos) << e.message();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(std::filesystem::exists(dir + "/out.raw"));
  MPI_Comm_free(&dup);
}

TEST(MpiJob, InPlaceIsRefusedNamingTheOption) {
  gt::JobOptions o;
  o.input = "/nonexistent/sq.npy";
  o.in_place = true;
  try {
    (void)gt::mpi::run_job(o, MPI_COMM_WORLD);
    ADD_FAILURE() << "no error";
  } catch (const gt::Error& e) {
    EXPECT_EQ(e.kind(), gt::ErrorKind::usage);
    EXPECT_NE(e.message().find("{in_place} does not run under MPI"), std::string::npos) << e.message();
  }
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, gt::mpi::kThreadLevel, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints GoogleTest's progress; every rank's failures count.
  if (world_rank() != 0) delete ::testing::UnitTest::GetInstance()->listeners().Release(
      ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  int failed = RUN_ALL_TESTS() != 0 ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any;
}

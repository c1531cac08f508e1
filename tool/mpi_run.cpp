#include "mpi_run.hpp"

#include <cstdlib>
#include <algorithm>
#include <iostream>
#include <sstream>
#include <vector>
#include <string>

#include "common.hpp"
#include "signals.hpp"
#include "gtranspose/launch.hpp"
#if GT_HAVE_MPI
#include "gtranspose/mpi.hpp"
#endif

namespace gt::tool {

void refuse_under_launcher(const char* what) {
  if (const int n = launched_ranks(); n > 1)
    throw Error(ErrorKind::usage, std::string(what) + " runs as one process, and this is one of " + std::to_string(n) +
                                      " started by mpirun: run it without mpirun");
}

namespace {

#if !GT_HAVE_MPI
[[noreturn]] void refuse_without_mpi(int ranks) {
  throw Error(ErrorKind::usage, "this gtranspose was built without MPI, and mpirun started " + std::to_string(ranks) +
                                    " copies of it, which would each do the whole job: run it without mpirun, or "
                                    "build it with MPI (install libopenmpi-dev, then cmake -DGT_ENABLE_MPI=ON)");
}
#endif

#if GT_HAVE_MPI
// MPI for one command: this rank's GPU first (before MPI or CUDA start),
// then MPI_Init_thread; finished on every path. Rank 0 says an error for
// all and exits with its status; the others wait until it has, then exit 0:
// mpirun ends the job with SIGTERM when a rank exits with a failure, which
// would cut rank 0 short if another failed first. mpirun's status is rank 0's.
template <class F>
auto with_mpi(bool* root, F&& f) -> decltype(f(0)) {
  pin_rank_device(launched_local_rank());
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, mpi::kThreadLevel, &provided) != MPI_SUCCESS)
    throw Error(ErrorKind::io, "MPI_Init_thread failed: run under mpirun, or without it");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  *root = rank == 0;
  if (rank != 0) set_interrupt_message("");  // Ctrl-C reaches every rank: rank 0 says it
  try {
    auto r = f(rank);
    MPI_Finalize();
    return r;
  } catch (const Error& e) {
    const int code = rank == 0 ? fail("gtranspose", e) : e.exit_code();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    std::exit(rank == 0 ? code : 0);
  }
}

std::string encode_rows(const BenchResult& r, double t0, double t1) {
  std::ostringstream o;
  o.precision(17);
  o << t0 << ' ' << t1 << '\n';
  for (const BenchRow& row : r.rows)
    o << row.gbps << ' ' << row.median_ms << ' ' << int(row.status) << ' ' << row.name << '\n';
  return o.str();
}
#endif

}  // namespace

BenchResult run_host_bench_launched(const BenchOptions& b, bool* root) {
  *root = true;
  const int ranks = launched_ranks();
  if (ranks == 0) return run_host_bench(b);
#if GT_HAVE_MPI
  return with_mpi(root, [&](int rank) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    BenchResult r = run_host_bench(b);
    const double t1 = MPI_Wtime();
    const std::string mine = encode_rows(r, t0, t1);
    int n = int(mine.size());
    std::vector<int> sizes(static_cast<std::size_t>(size), 0), offs(static_cast<std::size_t>(size), 0);
    MPI_Gather(&n, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
    std::string all;
    if (rank == 0) {
      int total = 0;
      for (int k = 0; k < size; ++k) offs[std::size_t(k)] = total, total += sizes[std::size_t(k)];
      all.resize(std::size_t(total));
    }
    MPI_Gatherv(mine.data(), n, MPI_CHAR, all.data(), sizes.data(), offs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
    if (rank != 0 || size == 1) return r;
    // Each rank's rows, then their sum: the ranks ran at once, so the sum of
    // their rates is the machine's (as far as their timed windows overlap).
    std::vector<BenchRow> sum = r.rows;
    double start = t0, end = t1, last_start = t0, first_end = t1;
    for (int k = 1; k < size; ++k) {
      std::istringstream in(all.substr(std::size_t(offs[std::size_t(k)]), std::size_t(sizes[std::size_t(k)])));
      double a = 0, z = 0;
      in >> a >> z;
      start = std::min(start, a), end = std::max(end, z), last_start = std::max(last_start, a), first_end = std::min(first_end, z);
      for (std::size_t i = 0; i < sum.size(); ++i) {
        BenchRow row = r.rows[i];
        int status = 0;
        in >> row.gbps >> row.median_ms >> status;
        in.get();
        std::getline(in, row.name);
        row.status = RowStatus(status);
        row.name = "rank " + std::to_string(k) + ": " + row.name;
        sum[i].gbps += row.gbps;
        if (row.status == RowStatus::failed) sum[i].status = RowStatus::failed;
        r.rows.push_back(row);
      }
    }
    for (BenchRow& row : sum) {
      row.name = "all " + std::to_string(size) + " ranks: " + row.name;
      row.note = "sum of the ranks' rates; their timed windows overlapped " +
                 std::to_string(int(100 * std::max(0.0, first_end - last_start) / std::max(1e-9, end - start))) + "%";
      r.rows.push_back(row);
    }
    return r;
  });
#else
  if (ranks > 1) refuse_without_mpi(ranks);
  return run_host_bench(b);
#endif
}

RunReport run_job_launched(JobOptions job, bool* root) {
  *root = true;
  const int ranks = launched_ranks();
  if (ranks == 0) return run_job(job);
#if GT_HAVE_MPI
  return with_mpi(root, [&](int rank) {
    if (rank != 0) job.run.progress = nullptr;
    return mpi::run_job(job, MPI_COMM_WORLD);
  });
#else
  if (ranks > 1) refuse_without_mpi(ranks);
  return run_job(job);
#endif
}

}  // namespace gt::tool

#include "mpi_run.hpp"

#include <cstdlib>
#include <iostream>
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

RunReport run_job_launched(JobOptions job, bool* root) {
  *root = true;
  const int ranks = launched_ranks();
  if (ranks == 0) return run_job(job);
#if GT_HAVE_MPI
  // Before MPI or CUDA start: CUDA then sees this rank's GPU alone.
  pin_rank_device(launched_local_rank());
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, mpi::kThreadLevel, &provided) != MPI_SUCCESS)
    throw Error(ErrorKind::io, "MPI_Init_thread failed: run under mpirun, or without it");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  *root = rank == 0;
  if (rank != 0) {
    job.run.progress = nullptr;
    set_interrupt_message("");  // Ctrl-C reaches every rank: rank 0 says it
  }
  try {
    RunReport r = mpi::run_job(job, MPI_COMM_WORLD);
    MPI_Finalize();
    return r;
  } catch (const Error& e) {
    // Every rank has the same error (gtranspose/mpi.hpp): rank 0 says it,
    // and the others wait until it has (mpirun ends the job when the first
    // rank exits with a failure), then all exit with its status.
    const int code = rank == 0 ? fail("gtranspose", e) : e.exit_code();
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    std::exit(code);
  }
#else
  if (ranks > 1)
    throw Error(ErrorKind::usage, "this gtranspose was built without MPI, and mpirun started " + std::to_string(ranks) +
                                      " copies of it, which would each do the whole job: run it without mpirun, or "
                                      "build it with MPI (install libopenmpi-dev, then cmake -DGT_ENABLE_MPI=ON)");
  return run_job(job);
#endif
}

}  // namespace gt::tool

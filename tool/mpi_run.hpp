// `mpirun -n N gtranspose IN OUT`: a run as one rank of an MPI job where the
// build has MPI, and a refusal where it does not (rather than N processes
// each doing the whole job and racing for the output).
#pragma once
#include "gtranspose/bench.hpp"
#include "gtranspose/job.hpp"

namespace gt::tool {

// Runs the job. Under a launcher (gt::launched_ranks() > 0) with MPI built
// in: gives this rank its node-local GPU, starts MPI, runs gt::mpi::run_job
// on MPI_COMM_WORLD and finishes MPI; `*root` is false on ranks other than 0,
// which print nothing (rank 0 prints the report, or the one error, for all,
// and mpirun's exit status is rank 0's: the others exit 0 after it reported). Under a launcher of more than one
// rank without MPI: gt::Error(usage). Otherwise gt::run_job.
RunReport run_job_launched(JobOptions job, bool* root);

// --bench-host: under a launcher with MPI built in, every rank runs the
// host bench on its own GPU, starting together (a barrier); rank 0's result
// gets each other rank's rows ("rank 1: pinned") and the ranks' sum ("all 2
// ranks: pinned"), with a note on how far their timed windows overlapped.
// Without a launcher: gt::run_host_bench.
BenchResult run_host_bench_launched(const BenchOptions& b, bool* root);

// Throws gt::Error(usage) under a launcher of more than one rank: `what`
// runs as one process only.
void refuse_under_launcher(const char* what);

}  // namespace gt::tool

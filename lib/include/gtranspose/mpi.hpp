// One transpose run by every rank of an MPI communicator: `mpirun -n N
// gtranspose IN OUT`, or a program's own ranks. Only in a build with MPI
// (gtranspose/launch.hpp: built_with_mpi()); the rest of the library never
// sees an MPI header.
//
// How it runs (docs/SCALE.md):
//   - every rank opens the input; rank 0 creates the output under its
//     temporary name, allocated in full, and tells the others where it is;
//   - each rank takes a balanced, contiguous band of the output's rows
//     (plan_rank_share: its output tiles, in output order), transposes it
//     with its own engine (the GPU of its node-local rank, or the CPU) and
//     its own plan ({host_mem}, {device_mem} per rank), and writes it:
//     raw, .npy and contiguous HDF5 at their offsets, by pwrite, from every
//     rank; a chunked HDF5 output's chunks encoded on each rank's codec
//     threads and stored by rank 0 (serial HDF5 has one writer);
//   - the ranks agree on every step: an error on any rank stops the others
//     at their next tile, nothing appears under the output's name, and
//     every rank throws the same gt::Error, whose message names the rank
//     ("rank 1 of 2: ..."); only after all succeeded does rank 0 commit;
//   - rank 0's report is the run's: the aggregate rate, every rank's stage
//     times (RunReport::ranks) and the slowest rank; other ranks return
//     their own.
// In place is refused under MPI (gt::Error(usage), naming {in_place}).
//
// Collective: every rank of `comm` calls it with the same options. MPI must
// be initialised with at least MPI_THREAD_SERIALIZED (kThreadLevel): the
// engine's threads send a chunked output's chunks. The call duplicates
// `comm` for its own messages. Test hooks: with GT_TEST_MPI_FAIL_RANK=k in
// its environment, rank k fails its first write as a full disk would; with
// GT_TEST_MPI_STALL_RANK=k, rank k stalls a minute in its first write.
#pragma once
#include <mpi.h>

#include "gtranspose/job.hpp"
#include "gtranspose/launch.hpp"

namespace gt::mpi {

constexpr int kThreadLevel = MPI_THREAD_SERIALIZED;

RunReport run_job(const JobOptions& opts, MPI_Comm comm);

}  // namespace gt::mpi

// What a program needs to know about MPI before it starts MPI, in every
// build (with or without MPI): whether this build has the MPI job
// (gtranspose/mpi.hpp), and whether a launcher (mpirun, mpiexec, srun)
// started this process as one of several ranks, read from the environment
// the launcher sets. A build without MPI uses it to refuse a run under
// mpirun instead of running N copies of the same job.
#pragma once
#include <string>

namespace gt {

bool built_with_mpi();

// The number of ranks the launcher started (OMPI_COMM_WORLD_SIZE of Open MPI,
// PMI_SIZE of MPICH's Hydra and Intel MPI, SLURM_STEP_NUM_TASKS of an srun
// step that set PMIX_RANK or PMI_RANK); 0 when no launcher says so.
int launched_ranks();
// This process's rank among the ranks of its node, as the launcher says
// (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID); -1 if unknown.
int launched_local_rank();

// Gives this rank the GPU of its node-local rank (plan_rank_device) by
// narrowing CUDA_VISIBLE_DEVICES to that one device, which must happen
// before CUDA starts in the process (it then holds for every thread the
// engine starts). The GPUs counted are those CUDA_VISIBLE_DEVICES lists, or
// the driver's (/proc/driver/nvidia/gpus) where it is unset; with one GPU
// or none, or a negative local rank, nothing changes. Returns a note for
// the report ("GPU 1 of 2 on this node (CUDA_VISIBLE_DEVICES=1)"), or "".
std::string pin_rank_device(int local_rank);

}  // namespace gt

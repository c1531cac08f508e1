// The launcher's environment (gtranspose/launch.hpp).
#include "gtranspose/launch.hpp"

#include <dirent.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "gtranspose/plan.hpp"

namespace gt {

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return -1;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  return end && *end == '\0' && n >= 0 && n < (1L << 30) ? int(n) : -1;
}

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (c != ' ') {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

int driver_gpus() {
  DIR* d = ::opendir("/proc/driver/nvidia/gpus");
  if (!d) return 0;
  int n = 0;
  while (const dirent* e = ::readdir(d))
    if (e->d_name[0] != '.') ++n;
  ::closedir(d);
  return n;
}

}  // namespace

bool built_with_mpi() { return GT_HAVE_MPI != 0; }

int launched_ranks() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const int n = env_int(name); n > 0) return n;
  // srun starts ranks without a PMI_SIZE under PMIx; a batch script itself
  // (SLURM_NTASKS set, no rank) is not a rank.
  if (std::getenv("PMIX_RANK") || std::getenv("PMI_RANK"))
    if (const int n = env_int("SLURM_STEP_NUM_TASKS"); n > 0) return n;
  return 0;
}

int launched_local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const int n = env_int(name); n >= 0) return n;
  return -1;
}

std::string pin_rank_device(int local_rank) {
  if (local_rank < 0) return "";
  const char* set = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::vector<std::string> listed = set ? split_commas(set) : std::vector<std::string>{};
  const int gpus = set ? int(listed.size()) : driver_gpus();
  if (gpus <= 1) return "";
  const int device = plan_rank_device(local_rank, gpus);
  const std::string id = set ? listed[std::size_t(device)] : std::to_string(device);
  ::setenv("CUDA_VISIBLE_DEVICES", id.c_str(), 1);
  return "GPU " + std::to_string(device) + " of " + std::to_string(gpus) + " on this node (CUDA_VISIBLE_DEVICES=" + id +
         ")" + (local_rank >= gpus ? ", shared with another rank" : "");
}

}  // namespace gt

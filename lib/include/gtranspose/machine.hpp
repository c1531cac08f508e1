// What this process may use of the machine it runs on: the cores its CPU
// affinity and its cgroup's CPU quota leave it, and the memory its cgroup's
// limit leaves it. A batch scheduler (Slurm's cpusets and cgroups, a
// container's --cpus and --memory, taskset) narrows both, while
// std::thread::hardware_concurrency() and _SC_PHYS_PAGES count the whole
// node: a job given 4 of 128 cores and 16 GiB would otherwise start 128
// threads and plan for a quarter of 1 TiB.
#pragma once
#include <cstdint>
#include <string>

namespace gt {

// A cgroup's limits, the tightest of the process's own cgroup and its
// ancestors up to the hierarchy's mount (cgroup v2: cpu.max, memory.max;
// v1: cpu.cfs_quota_us / cpu.cfs_period_us, memory.limit_in_bytes).
struct CgroupLimits {
  double cpus = 0;          // the CPU quota in cores (1.5: 150 ms a 100 ms period); 0: none
  std::uint64_t memory = 0; // bytes; 0: none
};
// Reads them from the files under ROOT ("" for the real /proc and /sys: a
// test passes a folder holding proc/self/cgroup, proc/self/mountinfo and the
// cgroup files under the mount points mountinfo names). A file that is
// missing or malformed counts as no limit.
[[nodiscard]] CgroupLimits read_cgroup_limits(const std::string& root = "");

// The CPUs this thread may run on (sched_getaffinity; a new thread inherits
// its creator's), 0 if unknown.
[[nodiscard]] unsigned affinity_cores();
// The cores online in the machine (what hardware_concurrency counts), at least 1.
[[nodiscard]] unsigned online_cores();

// The threads a run uses by default: the affinity's cores, no more than the
// cgroup's quota rounded up, at least 1. Every thread count of the library
// that is not given derives from this.
[[nodiscard]] unsigned usable_cores();
// Physical RAM, or the cgroup's memory limit where lower: what the default
// host budget is a share of (plan.hpp). 0 if unknown.
[[nodiscard]] std::uint64_t usable_ram_bytes();
// Physical RAM in bytes (0 if unknown).
[[nodiscard]] std::uint64_t physical_ram_bytes();

// "4 of 16 cores (affinity), 16.0 GiB of 125.8 GiB RAM (cgroup limit)": what
// --version says, naming what narrowed each.
[[nodiscard]] std::string machine_text();

}  // namespace gt

// What a run may use of the machine (gtranspose/machine.hpp): the cgroup's
// CPU quota and memory limit read from v2 and v1 file trees like the ones a
// container or a Slurm job sees, their ancestors' limits, malformed files, and
// the CPU affinity that taskset and cpusets set.
#include <gtest/gtest.h>
#include <sched.h>

#include <filesystem>
#include <string>

#include "gtranspose/machine.hpp"
#include "support/temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using gt::test::TempDir;
using gt::test::write_file;

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  write_file(p.string(), text);
}

// A root holding proc/self/{cgroup,mountinfo} as given.
void proc(const fs::path& root, const std::string& cgroup, const std::string& mountinfo) {
  put(root / "proc/self/cgroup", cgroup);
  put(root / "proc/self/mountinfo", mountinfo);
}

const char* kV2Mount = "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";

TEST(Machine, CgroupV2QuotaAndLimitTheTightestUpTheTree) {
  TempDir d;
  proc(d.path(), "0::/slurm/job7/step0\n", std::string("22 1 8:1 / / rw - ext4 /dev/sda1 rw\n") + kV2Mount);
  const fs::path cg = fs::path(d.path()) / "sys/fs/cgroup";
  put(cg / "slurm/job7/step0/cpu.max", "max 100000\n");
  put(cg / "slurm/job7/cpu.max", "250000 100000\n");  // 2.5 cores for the job
  put(cg / "slurm/cpu.max", "3200000 100000\n");
  put(cg / "slurm/job7/step0/memory.max", "max\n");
  put(cg / "slurm/job7/memory.max", "17179869184\n");
  put(cg / "slurm/memory.max", "1099511627776\n");
  const gt::CgroupLimits l = gt::read_cgroup_limits(d.path());
  EXPECT_DOUBLE_EQ(l.cpus, 2.5);
  EXPECT_EQ(l.memory, std::uint64_t(16) << 30);
}

TEST(Machine, CgroupV2InANamespaceReadsTheMountsTop) {
  // Inside a container with its own cgroup namespace the path is "/", and the
  // limits sit in the mount's top folder.
  TempDir d;
  proc(d.path(), "0::/\n", kV2Mount);
  put(fs::path(d.path()) / "sys/fs/cgroup/cpu.max", "400000 100000\n");
  put(fs::path(d.path()) / "sys/fs/cgroup/memory.max", "8589934592\n");
  const gt::CgroupLimits l = gt::read_cgroup_limits(d.path());
  EXPECT_DOUBLE_EQ(l.cpus, 4.0);
  EXPECT_EQ(l.memory, std::uint64_t(8) << 30);
}

TEST(Machine, CgroupV1QuotaAndLimitThroughTheirControllersMounts) {
  TempDir d;
  proc(d.path(), "11:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n1:name=systemd:/docker/abc\n0::/\n",
       "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
       "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct\n"
       "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n");
  // The cpu mount shows only the container's cgroup: its top is the cgroup.
  put(fs::path(d.path()) / "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us", "50000\n");
  put(fs::path(d.path()) / "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  // The memory mount shows the whole tree: the limit is the parent's.
  put(fs::path(d.path()) / "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes", "9223372036854771712\n");
  put(fs::path(d.path()) / "sys/fs/cgroup/memory/docker/memory.limit_in_bytes", "2147483648\n");
  put(fs::path(d.path()) / "sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  const gt::CgroupLimits l = gt::read_cgroup_limits(d.path());
  EXPECT_DOUBLE_EQ(l.cpus, 0.5);
  EXPECT_EQ(l.memory, std::uint64_t(2) << 30);
}

TEST(Machine, NoLimitMissingOrMalformedFilesCountAsNone) {
  TempDir d;
  EXPECT_EQ(gt::read_cgroup_limits(d.path()).cpus, 0) << "no /proc at all";
  proc(d.path(), "0::/a\n", kV2Mount);
  EXPECT_EQ(gt::read_cgroup_limits(d.path()).cpus, 0) << "no limit files";
  put(fs::path(d.path()) / "sys/fs/cgroup/a/cpu.max", "max max\n");
  put(fs::path(d.path()) / "sys/fs/cgroup/a/memory.max", "lots\n");
  put(fs::path(d.path()) / "sys/fs/cgroup/cpu.max", "100000 0\n");  // a zero period
  put(fs::path(d.path()) / "sys/fs/cgroup/memory.max", "-5\n");
  gt::CgroupLimits l = gt::read_cgroup_limits(d.path());
  EXPECT_EQ(l.cpus, 0);
  EXPECT_EQ(l.memory, 0u);
  // v1's "no quota" (-1) and "no limit" (the largest page-aligned 63-bit value).
  TempDir e;
  proc(e.path(), "3:cpu:/\n2:memory:/\n",
       "32 31 0:29 / /c rw - cgroup cgroup rw,cpu\n33 31 0:30 / /m rw - cgroup cgroup rw,memory\n");
  put(fs::path(e.path()) / "c/cpu.cfs_quota_us", "-1\n");
  put(fs::path(e.path()) / "c/cpu.cfs_period_us", "100000\n");
  put(fs::path(e.path()) / "m/memory.limit_in_bytes", "9223372036854771712\n");
  l = gt::read_cgroup_limits(e.path());
  EXPECT_EQ(l.cpus, 0);
  EXPECT_EQ(l.memory, 0u);
}

TEST(Machine, TheRealMachineIsConsistent) {
  EXPECT_GE(gt::usable_cores(), 1u);
  EXPECT_LE(gt::usable_cores(), gt::online_cores());
  EXPECT_GT(gt::physical_ram_bytes(), 0u);
  EXPECT_LE(gt::usable_ram_bytes(), gt::physical_ram_bytes());
  EXPECT_GT(gt::usable_ram_bytes(), 0u);
  EXPECT_NE(gt::machine_text().find(" cores"), std::string::npos) << gt::machine_text();
}

TEST(Machine, AffinityNarrowsTheCores) {
  // taskset and a scheduler's cpuset set the affinity; hardware_concurrency
  // ignores it, usable_cores must not.
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  int first = -1;
  for (int c = 0; c < CPU_SETSIZE && first < 0; ++c)
    if (CPU_ISSET(c, &before)) first = c;
  ASSERT_GE(first, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const unsigned a = gt::affinity_cores(), u = gt::usable_cores();
  const std::string text = gt::machine_text();
  ASSERT_EQ(sched_setaffinity(0, sizeof before, &before), 0);
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(u, 1u);
  EXPECT_EQ(text.rfind("1 of " + std::to_string(gt::online_cores()) + " cores", 0), 0u) << text;
  if (gt::online_cores() > 1) {
    EXPECT_NE(text.find("(CPU affinity)"), std::string::npos) << text;
  }
  EXPECT_EQ(gt::affinity_cores(), unsigned(CPU_COUNT(&before)));
}

}  // namespace

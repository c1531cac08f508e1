#include "gtranspose/machine.hpp"

#include <sched.h>
#include <cerrno>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "gtranspose/sizes.hpp"

namespace gt {

namespace {

// The first line of a small file, "" if it cannot be read.
std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  if (f) std::getline(f, line);
  return line;
}

// A decimal number that is the whole of TEXT (surrounding blanks allowed).
bool whole_number(const std::string& text, long double* v) {
  std::istringstream in(text);
  long double x = 0;
  std::string rest;
  if (!(in >> x) || (in >> rest) || !(x >= 0)) return false;
  *v = x;
  return true;
}

// One hierarchy's mount: where it is mounted, and which of its cgroups that
// mount's top is ("/" unless the mount shows only part of the hierarchy).
struct Mount {
  std::string point, root;
};

// The mounts of cgroup v2 (V1 empty) or of the v1 hierarchy holding the
// controller V1, from mountinfo: "id parent maj:min ROOT POINT opts ... - TYPE source SUPEROPTS".
std::vector<Mount> cgroup_mounts(const std::string& root, const std::string& v1) {
  std::vector<Mount> out;
  std::ifstream f(root + "/proc/self/mountinfo");
  std::string line;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string id, parent, dev, mroot, point, word;
    if (!(in >> id >> parent >> dev >> mroot >> point)) continue;
    while (in >> word && word != "-") {
    }
    std::string type, source, super;
    if (!(in >> type >> source >> super)) continue;
    if (v1.empty() ? type != "cgroup2" : type != "cgroup") continue;
    if (!v1.empty()) {
      bool has = false;
      std::istringstream opts(super);
      for (std::string o; std::getline(opts, o, ',');) has |= o == v1;
      if (!has) continue;
    }
    out.push_back({point, mroot});
  }
  return out;
}

// This process's cgroup in the v2 hierarchy (V1 empty) or in the v1 one
// holding V1, from /proc/self/cgroup ("id:controllers:path"); "" if none.
std::string cgroup_path(const std::string& root, const std::string& v1) {
  std::ifstream f(root + "/proc/self/cgroup");
  std::string line;
  while (std::getline(f, line)) {
    const auto a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
    if (v1.empty()) {
      if (line.compare(0, a, "0") == 0 && controllers.empty()) return path;
      continue;
    }
    std::istringstream in(controllers);
    for (std::string c; std::getline(in, c, ',');)
      if (c == v1) return path;
  }
  return "";
}

// The folders from this process's cgroup up to the top of the mount, its own
// first. A cgroup path outside the mount's root (another namespace's view)
// falls back to the mount's top alone.
std::vector<std::string> cgroup_dirs(const std::string& root, const std::string& v1) {
  const std::string path = cgroup_path(root, v1);
  if (path.empty() || path[0] != '/') return {};
  for (const Mount& m : cgroup_mounts(root, v1)) {
    std::string rel;
    if (m.root == "/") rel = path;
    else if (path.compare(0, m.root.size(), m.root) == 0 &&
             (path.size() == m.root.size() || path[m.root.size()] == '/'))
      rel = path.substr(m.root.size());
    std::vector<std::string> dirs;
    const std::string top = root + m.point;
    while (!rel.empty() && rel != "/") {
      dirs.push_back(top + rel);
      rel.erase(rel.find_last_of('/'));
    }
    dirs.push_back(top);
    return dirs;
  }
  return {};
}

void tighten(double* limit, double v) {
  if (v > 0 && (*limit == 0 || v < *limit)) *limit = v;
}
void tighten(std::uint64_t* limit, long double v) {
  // v1 writes "no limit" as the largest page-aligned 63-bit value.
  if (v > 0 && v < 0x1p62L && (*limit == 0 || std::uint64_t(v) < *limit)) *limit = std::uint64_t(v);
}

}  // namespace

CgroupLimits read_cgroup_limits(const std::string& root) {
  CgroupLimits l;
  for (const std::string& d : cgroup_dirs(root, "")) {
    std::istringstream cpu(first_line(d + "/cpu.max"));
    std::string quota, period;
    long double q = 0, p = 0;
    if (cpu >> quota >> period && whole_number(quota, &q) && whole_number(period, &p) && p > 0) tighten(&l.cpus, double(q / p));
    long double m = 0;
    if (whole_number(first_line(d + "/memory.max"), &m)) tighten(&l.memory, m);
  }
  for (const std::string& d : cgroup_dirs(root, "cpu")) {
    long double q = 0, p = 0;  // a quota of -1 (none) fails whole_number
    if (whole_number(first_line(d + "/cpu.cfs_quota_us"), &q) &&
        whole_number(first_line(d + "/cpu.cfs_period_us"), &p) && p > 0)
      tighten(&l.cpus, double(q / p));
  }
  for (const std::string& d : cgroup_dirs(root, "memory")) {
    long double m = 0;
    if (whole_number(first_line(d + "/memory.limit_in_bytes"), &m)) tighten(&l.memory, m);
  }
  return l;
}

unsigned affinity_cores() {
  for (int n = 1024; n <= (1 << 20); n *= 2) {
    cpu_set_t* set = CPU_ALLOC(n);
    if (!set) return 0;
    const std::size_t size = CPU_ALLOC_SIZE(n);
    CPU_ZERO_S(size, set);
    const int rc = sched_getaffinity(0, size, set);
    const int count = rc == 0 ? CPU_COUNT_S(size, set) : 0;
    CPU_FREE(set);
    if (rc == 0) return unsigned(count);
    if (errno != EINVAL) return 0;  // EINVAL: the kernel's mask is wider than n CPUs
  }
  return 0;
}

unsigned online_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

namespace {

// The cores and RAM that an affinity of `affinity` cores and these limits leave.
unsigned cores_within(unsigned affinity, const CgroupLimits& l) {
  unsigned n = affinity ? affinity : online_cores();
  if (l.cpus > 0) n = std::min(n, unsigned(std::max(1.0, std::ceil(l.cpus))));
  return std::max(1u, n);
}
std::uint64_t ram_within(std::uint64_t ram, const CgroupLimits& l) {
  return l.memory && (ram == 0 || l.memory < ram) ? l.memory : ram;
}

}  // namespace

unsigned usable_cores() { return cores_within(affinity_cores(), read_cgroup_limits()); }

std::uint64_t physical_ram_bytes() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return std::uint64_t(pages) * std::uint64_t(page);
}

std::uint64_t usable_ram_bytes() { return ram_within(physical_ram_bytes(), read_cgroup_limits()); }

std::string machine_text() {
  const CgroupLimits l = read_cgroup_limits();  // read once for both lines
  const unsigned online = online_cores(), affinity = affinity_cores(), usable = cores_within(affinity, l);
  std::string t = std::to_string(usable) + " of " + std::to_string(online) + " cores";
  if (usable < online) {
    const bool by_quota = l.cpus > 0 && usable < (affinity ? affinity : online);
    t += by_quota ? " (cgroup CPU quota)" : " (CPU affinity)";
  }
  const std::uint64_t ram = physical_ram_bytes(), use = ram_within(ram, l);
  if (use && use < ram) t += ", " + format_bytes(use) + " of " + format_bytes(ram) + " RAM (cgroup memory limit)";
  else if (ram) t += ", " + format_bytes(ram) + " RAM";
  return t;
}

}  // namespace gt

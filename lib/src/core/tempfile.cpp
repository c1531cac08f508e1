#include "gtranspose/tempfile.hpp"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "core/paths.hpp"
#include "gtranspose/error.hpp"

namespace gt {
namespace {

using paths::base_of;
using paths::dir_of;

// Fixed storage so the signal handler touches no allocator: a slot is
// claimed by flipping `used`, filled, then published with `live`.
constexpr int kSlots = 64;
struct Slot {
  std::atomic<bool> used{false};
  std::atomic<bool> live{false};
  char path[PATH_MAX];
};
Slot g_slots[kSlots];
std::atomic<unsigned> g_counter{0};

// The longest file name `dir` takes (255 on every common Linux file system).
std::size_t name_max(const std::string& dir) {
  const long n = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  return n > 0 ? std::size_t(n) : std::size_t(NAME_MAX);
}

[[noreturn]] void in_the_way(const std::string& final_path) {
  throw Error(ErrorKind::output, final_path + " appeared while the run was going (another program or run created "
                                              "it): it was left as it is; use {force} to replace it");
}

// Renames `from` to `to` unless `to` exists, atomically: renameat2 with
// RENAME_NOREPLACE, or where the file system lacks it, link(2) (which never
// replaces) and unlink(2).
void rename_no_replace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return;
  if (errno == EEXIST) in_the_way(to);
  if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
    throw_errno(ErrorKind::output, "cannot rename " + from + " to " + to);
  if (::link(from.c_str(), to.c_str()) == 0) {
    // The result is in place under both names; losing the temporary's name
    // can only fail in ways that leave the result intact.
    ::unlink(from.c_str());
    return;
  }
  if (errno == EEXIST) in_the_way(to);
  if (errno != EPERM && errno != EOPNOTSUPP && errno != ENOSYS)
    throw_errno(ErrorKind::output, "cannot link " + from + " to " + to);
  // A file system with neither (FAT, some network file systems): look, then
  // rename. Only a file created in the moment between the two is replaced.
  if (::access(to.c_str(), F_OK) == 0 || errno != ENOENT) in_the_way(to);
  if (::rename(from.c_str(), to.c_str()) != 0) throw_errno(ErrorKind::output, "cannot rename " + from + " to " + to);
}

}  // namespace

TempPath::TempPath(const std::string& final_path, Replace replace) : final_(final_path), replace_(replace) {
  const std::string dir = dir_of(final_), suffix = ".gt-tmp-" + std::to_string(::getpid()) + "-" +
                                                   std::to_string(g_counter.fetch_add(1));
  // "." + name + suffix must stay a legal file name even when the final name
  // is as long as the folder allows: the temporary's name is cut, not the run.
  std::string base = base_of(final_);
  const std::size_t room = name_max(dir);
  if (1 + base.size() + suffix.size() > room) base.resize(room > 1 + suffix.size() ? room - 1 - suffix.size() : 0);
  tmp_ = dir + "/." + base + suffix;
  if (tmp_.size() >= PATH_MAX) throw Error(ErrorKind::output, "output path too long: " + final_);
  for (int i = 0; i < kSlots; ++i) {
    bool expected = false;
    if (g_slots[i].used.compare_exchange_strong(expected, true)) {
      std::memcpy(g_slots[i].path, tmp_.c_str(), tmp_.size() + 1);
      g_slots[i].live.store(true);
      slot_ = i;
      break;
    }
  }
  if (slot_ < 0) throw Error(ErrorKind::internal, "too many temporary outputs at once");
}

TempPath::~TempPath() {
  // Unlink before unregistering: a signal in between then finds nothing to
  // remove, rather than a file it no longer knows about.
  if (!committed_) ::unlink(tmp_.c_str());
  if (slot_ >= 0) {
    g_slots[slot_].live.store(false);
    g_slots[slot_].used.store(false);
  }
}

void TempPath::commit() {
  if (committed_) return;
  if (replace_ == Replace::yes) {
    if (::rename(tmp_.c_str(), final_.c_str()) != 0)
      throw_errno(ErrorKind::output, "cannot rename " + tmp_ + " to " + final_);
  } else {
    rename_no_replace(tmp_, final_);
  }
  committed_ = true;
  if (slot_ >= 0) g_slots[slot_].live.store(false);
  // Make the rename itself durable.
  int fd = ::open(dir_of(final_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
}

void remove_temp_files_signal_safe() noexcept {
  for (auto& s : g_slots)
    if (s.live.load()) ::unlink(s.path);
}

}  // namespace gt

#include "gtranspose/tempfile.hpp"

#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
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

}  // namespace

TempPath::TempPath(const std::string& final_path) : final_(final_path) {
  tmp_ = dir_of(final_) + "/." + base_of(final_) + ".gt-tmp-" + std::to_string(::getpid()) + "-" +
         std::to_string(g_counter.fetch_add(1));
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
  if (::rename(tmp_.c_str(), final_.c_str()) != 0)
    throw_errno(ErrorKind::output, "cannot rename " + tmp_ + " to " + final_);
  committed_ = true;
  if (slot_ >= 0) g_slots[slot_].live.store(false);
  // Make the rename itself durable.
  int fd = ::open(dir_of(final_).c_str(), O_RDONLY | O_DIRECTORY);
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

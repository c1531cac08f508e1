// A disk that forgets what was not made durable: the power-loss test's model
// (test_journal_powerloss.cpp).
//
// A run is recorded through the plain I/O layer's test log (plain_io.hpp):
// every write (file, offset, bytes), every sync of a file (fsync or
// fdatasync), the journal's names (link, unlink), folder syncs and the
// matrix's mark (an extended attribute). A power loss after the first k
// events leaves, of each file:
//   - every write followed by a sync of the same file before event k;
//   - of the writes that were not, any subset (the disk and the page cache
//     reorder freely), a write possibly cut short (torn);
//   - the names as of the folder's last sync, or any newer state;
//   - the mark as of the file's last full fsync (fdatasync need not keep an
//     extended attribute), or a newer one.
// Disk::after() builds such a state in one of four ways; materialize()
// writes it to the real files, keeping the matrix's inode.
#pragma once
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "support/reference.hpp"
#include "support/temp_dir.hpp"
#include "testing.hpp"

namespace gt::powerloss {

using test::Bytes;
using Inode = std::pair<std::uint64_t, std::uint64_t>;  // device, inode
constexpr const char* kMark = "user.gtranspose.journal";

// One recorded event, its bytes copied.
struct Event {
  fmt::IoEvent::Kind kind;
  Inode file;
  std::string path;
  std::uint64_t offset = 0;
  Bytes data;
  bool data_only = false;
};

// Records every event while alive (one recorder at a time).
class Recorder {
 public:
  Recorder() {
    fmt::set_io_log([this](const fmt::IoEvent& e) {
      Event ev{e.kind, {e.dev, e.ino}, e.path, e.offset, {}, e.data_only};
      if (e.kind == fmt::IoEvent::write) {
        const auto* p = static_cast<const unsigned char*>(e.data);
        ev.data.assign(p, p + e.size);
      }
      std::lock_guard<std::mutex> lk(mu_);
      events_.push_back(std::move(ev));
    });
  }
  ~Recorder() { fmt::set_io_log(nullptr); }
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  std::vector<Event> take() {
    fmt::set_io_log(nullptr);
    std::lock_guard<std::mutex> lk(mu_);
    return std::move(events_);
  }

 private:
  std::mutex mu_;
  std::vector<Event> events_;
};

enum class Variant { durable, everything, random_subset, torn_last };
inline const char* variant_name(Variant v) {
  switch (v) {
    case Variant::durable: return "only what was durable";
    case Variant::everything: return "every write that was issued";
    case Variant::random_subset: return "a random subset of the writes not yet durable";
    case Variant::torn_last: return "what was durable and the last write torn";
  }
  return "";
}
constexpr Variant kVariants[] = {Variant::durable, Variant::everything, Variant::random_subset, Variant::torn_last};

inline Inode inode_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {0, 0};
  return {std::uint64_t(st.st_dev), std::uint64_t(st.st_ino)};
}

struct Disk {
  std::map<Inode, Bytes> files;
  std::map<std::string, Inode> names;  // the journal's names (the matrix's name never changes)
  std::string matrix;                  // the matrix's path
  std::string mark;                    // its extended attribute ("" none)

  // The state a power loss after the first k events leaves. `seed` picks the random subset.
  Disk after(const std::vector<Event>& ev, std::size_t k, Variant v, std::uint64_t seed) const {
    Disk d = *this;
    const Inode m = inode_of(matrix);
    // The event that makes event i durable: the next sync of its file (for a
    // mark, the next full fsync of the matrix); ev.size() if none.
    std::vector<std::size_t> durable_at(k, ev.size());
    for (std::size_t i = 0; i < k; ++i) {
      for (std::size_t j = i + 1; j < k; ++j) {
        const Event& s = ev[j];
        if (s.kind != fmt::IoEvent::sync || s.file != (ev[i].kind == fmt::IoEvent::mark ? m : ev[i].file)) continue;
        if (ev[i].kind == fmt::IoEvent::mark && s.data_only) continue;
        durable_at[i] = j;
        break;
      }
    }
    std::mt19937_64 rng(seed);
    std::size_t last_loose = k;  // the last write not yet durable (torn_last)
    for (std::size_t i = 0; i < k; ++i)
      if (ev[i].kind == fmt::IoEvent::write && durable_at[i] >= k) last_loose = i;
    std::map<std::string, Inode> durable_names = names, current_names = names;
    std::string durable_mark = mark, current_mark = mark;
    for (std::size_t i = 0; i < k; ++i) {
      const Event& e = ev[i];
      const bool durable = durable_at[i] < k;
      switch (e.kind) {
        case fmt::IoEvent::write: {
          bool apply = durable || v == Variant::everything || (v == Variant::random_subset && (rng() & 1));
          std::uint64_t n = e.data.size();
          if (v == Variant::torn_last && i == last_loose) apply = true, n = std::max<std::uint64_t>(1, n / 2);
          if (!apply) break;
          Bytes& f = d.files[e.file];
          if (f.size() < e.offset + n) f.resize(std::size_t(e.offset + n));
          std::memcpy(f.data() + e.offset, e.data.data(), std::size_t(n));
          break;
        }
        case fmt::IoEvent::link: current_names[e.path] = e.file; break;
        case fmt::IoEvent::unlink: current_names.erase(e.path); break;
        case fmt::IoEvent::folder_sync: durable_names = current_names; break;
        case fmt::IoEvent::mark:
          current_mark = e.path;
          if (durable) durable_mark = e.path;
          break;
        case fmt::IoEvent::sync: break;
      }
    }
    const bool newest = v == Variant::everything || (v == Variant::random_subset && (rng() & 1));
    d.names = newest ? current_names : durable_names;
    d.mark = newest ? current_mark : durable_mark;
    return d;
  }

  // Writes this state to the real files (the matrix keeps its inode; a
  // journal is made anew) and returns it as it now lies there.
  Disk materialize(const std::vector<std::string>& known_names) const {
    Disk out;
    out.matrix = matrix;
    out.mark = mark;
    const Inode m = inode_of(matrix);
    out.files[m] = files.count(m) ? files.at(m) : Bytes{};
    test::write_file(matrix, out.files[m]);
    for (const std::string& n : known_names) ::unlink(n.c_str());
    for (const auto& [name, ino] : names) {
      const Bytes content = files.count(ino) ? files.at(ino) : Bytes{};
      test::write_file(name, content);
      const Inode now = inode_of(name);
      out.names[name] = now;
      out.files[now] = content;
    }
    if (mark.empty())
      ::removexattr(matrix.c_str(), kMark);
    else
      ::setxattr(matrix.c_str(), kMark, mark.data(), mark.size(), 0);
    return out;
  }
};

// The names a run may create: every name it linked.
inline std::vector<std::string> linked_names(const std::vector<Event>& ev) {
  std::vector<std::string> out;
  for (const Event& e : ev)
    if (e.kind == fmt::IoEvent::link && std::find(out.begin(), out.end(), e.path) == out.end()) out.push_back(e.path);
  return out;
}

}  // namespace gt::powerloss

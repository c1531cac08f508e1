// The journal's internals that tests reach: its checksum and a hook at every
// step of the protocol (journal.hpp), where a test simulates a crash.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

namespace gt::journal_detail {

// A streaming 64-bit checksum: four independent lanes of multiply-rotate
// over 8-byte words (32 bytes a round, several GB/s on one core), merged and
// mixed at the end. The same bytes give the same digest however they are cut
// into update() calls.
class StreamHash {
 public:
  explicit StreamHash(std::uint64_t seed = 0);
  void update(const void* data, std::size_t n);
  std::uint64_t digest() const;

 private:
  std::uint64_t lane_[4];
  unsigned char pending_[32];
  std::size_t fill_ = 0;
  std::uint64_t total_ = 0;
  std::uint64_t seed_;
};

inline std::uint64_t hash_bytes(const void* data, std::size_t n, std::uint64_t seed = 0) {
  StreamHash h(seed);
  h.update(data, n);
  return h.digest();
}

// The points of the protocol where the hook is called, in the order a batch
// passes them. Recovery (--resume) passes the same points from a_tile on.
enum class Point {
  created,           // fresh run: the journal's first header durable, the file not yet under its name
  named,             // fresh run: the journal under its name, its folder not yet synced
  begun,             // journal created and durable, before the engine's first write
  prev_flushed,      // the previous batch's tiles b made durable (before step 1 reuses the data area)
  data_written,      // step 1: the batch's new_b tiles written to the journal, header not yet
  saved_written,     // step 1: header "saved" written, not yet synced
  saved_synced,      // step 1 durable
  a_tile,            // step 2: after each new_a tile written to the matrix
  a_flushed,         // step 2 durable
  a_marked,          // step 3: header "a_written" written, not yet synced
  a_marked_synced,   // step 3 durable
  b_tile,            // step 4: after each new_b tile written to the matrix
  recovered,         // recovery: the batch redone and flushed, before the header says idle
  idle_synced,       // recovery: header "idle" durable
  finish_flushed,    // finish(): the matrix durable, journal not yet removed
  removed,           // finish(): journal removed and its folder synced
};

// Installs a hook called at every point (nullptr: none). A test makes it
// _exit() in a forked child, or throw, to stop the run right there.
void set_hook(std::function<void(Point)> hook);

}  // namespace gt::journal_detail

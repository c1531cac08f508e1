// The journal's internals that tests reach: its checksum, a hook at every
// step of the protocol (journal.hpp), where a test simulates a crash, and
// the switches the power-loss test needs (skip one barrier, pretend the file
// system keeps no extended attributes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

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

// The points of the protocol where the hook is called, in the order a run
// passes them (journal.hpp describes the steps). Recovery passes b_tile,
// a_tile, matrix_flushed, saved_synced and recovered.
enum class Point {
  marked,          // fresh run: the matrix marked (xattr) and synced, no journal yet
  created,         // fresh run: the journal's first header durable, the file not yet under its name
  named,           // fresh run: the journal under its name, its folder not yet synced
  begun,           // the journal durable under its name, before the engine's first write
  data_written,    // a batch's journal data written, its header not yet
  saved_written,   // the header that describes it written, not yet synced
  saved_synced,    // that header durable
  b_tile,          // after each tile b (of the previous batch) written to the matrix
  a_tile,          // after each tile a (of this batch) written to the matrix
  matrix_flushed,  // the matrix durable after a batch's writes
  recovered,       // recovery: the interrupted batches redone, before the header says so
  finish_flushed,  // finish(): the last tiles b durable, the journal not yet removed
  removed,         // finish(): the journal removed and its folder synced
};

// Installs a hook called at every point (nullptr: none). A test makes it
// _exit() in a forked child, or throw, to stop the run right there.
void set_hook(std::function<void(Point)> hook);

// Every call that makes something durable in the protocol, by its place in
// the protocol. The power-loss test (test_journal_powerloss.cpp) skips one
// at a time and proves that a crash somewhere then loses data.
enum class Barrier {
  mark_synced,      // create: the matrix's journal mark (xattr) durable before the journal exists
  header_synced,    // create: the first header durable before the journal gets its name
  folder_synced,    // create: the journal's name durable
  journal_synced,   // each batch: its journal data and header durable
  matrix_flushed,   // each batch: its tiles a (and the previous batch's tiles b) durable
  final_synced,     // finish(): the header that says the last batch's tiles a are written
  final_flushed,    // finish(): the last tiles b durable before the journal goes
  removal_synced,   // finish(): the journal's removal durable before the run reports success
  recovery_flushed, // resume: the redone batches durable before the header says idle
  recovery_synced,  // resume: the idle header durable before the run goes on
  saved_synced,     // each permutation group: its saved segments and header durable before its first step
  step_flushed,     // each permutation step: its moves durable before the header says the next step
  step_synced,      // each permutation step: the header that says so durable before the next step's moves
  end_marked,       // a rectangle's end: the journal says the data is complete before a .npy header changes
  end_synced,       // a rectangle's end: the .npy header's new shape durable before the journal goes
  band_synced,      // each band of a general shape: its new content and header durable before the matrix changes
  band_flushed,     // each band: its matrix writes durable before the next band's header replaces its own
  band_redone,      // resume: a band rewritten from the journal durable before the next band's header
  count
};
const char* barrier_name(Barrier b);

// Skips every call of one barrier (Barrier::count: none). Test only.
void set_skipped_barrier(Barrier b);

// Pretends the file system keeps no user extended attributes. Test only.
void set_xattrs_unsupported(bool on);

// What a journal's latest valid header says, for tests that damage the
// right bytes of it. valid false: no valid header of this version.
struct BatchView {
  std::uint64_t first = 0, count = 0, offset = 0, bytes = 0;
};
struct JournalView {
  bool valid = false;
  std::uint64_t header_offset = 0;  // where that header copy lies
  std::uint64_t done = 0;
  bool has_prev = false, has_cur = false;
  bool band = false;  // a band in flight (cur: the band; a square's: its diagonal block's slot)
  BatchView prev, cur;
};
JournalView read_journal_view(const std::string& journal);

}  // namespace gt::journal_detail

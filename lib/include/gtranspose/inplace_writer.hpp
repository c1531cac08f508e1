// What an in-place engine writes through. An engine reads a pair of tiles,
// transposes both, and hands the results to an InplaceWriter, which owns the
// order and the durability of the writes: straight to the matrix (the plain
// writer), or through the crash-safety journal (journal.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "gtranspose/matrix.hpp"
#include "gtranspose/report.hpp"
#include "gtranspose/tiles.hpp"

namespace gt {

// One pair of a batch, as an engine hands it over after transposing.
struct PairWrite {
  std::uint64_t index = 0;        // pair index in the plan
  TilePair pair;
  const void* new_a = nullptr;    // transpose of tile b: goes where tile a is (a.h x a.w, ld a.w); null on the diagonal
  const void* new_b = nullptr;    // transpose of tile a: goes where tile b is (b.h x b.w, ld b.w)
  // InplaceWriter::source_sum() of tile a as the engine read it (before any
  // transpose), where the writer wants_source_sums(); has_a_sum false lets
  // the writer work it out from new_b itself (slower, on its own thread).
  std::uint64_t a_sum = 0;
  bool has_a_sum = false;
};

class InplaceWriter {
 public:
  virtual ~InplaceWriter() = default;
  // The plan's block (tile side) a resumed run must keep, or 0 when the
  // engine may choose (a fresh run).
  virtual std::uint64_t required_block() const { return 0; }
  // Pairs with an index below this are already done (a resumed run).
  virtual std::uint64_t first_pair() const { return 0; }
  // Called once by the engine before any write, with the plan it follows.
  virtual void begin(const PairGrid& plan) = 0;
  // Writes a batch of consecutive pairs (indices ascending, continuing the
  // previous batch). Called from one thread at a time, unless ordered() is
  // false: then from several threads at once, for disjoint pairs.
  virtual void write_batch(InplaceMatrix& m, const std::vector<PairWrite>& batch) = 0;
  // After the last batch: makes the matrix durable and removes the journal.
  virtual void finish(InplaceMatrix& m) = 0;
  // True when batches must come in pair order from one thread (a journal);
  // false lets an engine write pairs from several threads as they finish.
  virtual bool ordered() const { return true; }
  // How many more write_batch() calls a batch's buffers must outlive: the
  // writer reads a batch's new_a and new_b until that many later calls (or
  // finish()) have returned, and the engine keeps them until then. The
  // journal writes a batch's tiles a one call later and its tiles b two
  // calls later, while the next batches' journal data goes to its own file.
  virtual int batches_kept() const { return 0; }
  // True when the writer wants PairWrite::a_sum: a checksum of tile a as
  // read, which an engine computes on its reader threads with source_sum()
  // (h x w elements, row-major, contiguous).
  virtual bool wants_source_sums() const { return false; }
  virtual std::uint64_t source_sum(const void* tile, std::uint64_t bytes) const {
    (void)tile, (void)bytes;
    return 0;
  }
  // The bytes the journal wrote (0 for the plain writer), for the report.
  virtual std::uint64_t journal_bytes() const { return 0; }
  // Syncs of the journal and flushes of the matrix it made.
  virtual std::uint64_t journal_syncs() const { return 0; }
  virtual std::uint64_t matrix_flushes() const { return 0; }
  // The writer's own stages for the report, inside the engine's "write"
  // stage: "journal" (its data and headers written), "journal sync",
  // "matrix writes" (with their flushes, on a thread of their own while the
  // journal data is written), "matrix flush", and "overlap wait" (what of
  // the matrix side the journal side waited for).
  virtual std::vector<StageStat> stage_stats() const { return {}; }
};

// Writes straight to the matrix, in any order and from any number of
// threads (ordered() is false); finish() flushes it. Host memory, and runs
// that asked for no crash safety.
[[nodiscard]] std::unique_ptr<InplaceWriter> plain_inplace_writer();

}  // namespace gt

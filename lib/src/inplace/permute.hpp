// The segment permutation of a rectangle's in-place run (plan.hpp,
// InplaceShape; the derivation is at the top of permute.cpp): the transpose
// of a P x Q matrix whose elements are segments of `side` elements, by
// cycle following, cut into chains and groups so that a journal can make
// every move crash-safe while holding one segment per chain.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "gtranspose/matrix.hpp"
#include "gtranspose/plan.hpp"

namespace gt::permute {

// The segment at x = p*Q + q goes to q*P + p; src_of() is the inverse: the
// segment destination d receives.
inline std::uint64_t src_of(std::uint64_t d, std::uint64_t P, std::uint64_t Q) { return (d % P) * Q + d / P; }

// A chain: destinations first, src(first), src(src(first)), ... (len of
// them); move t writes destination t with the segment at destination t+1.
// The last move's source is the first destination of chain `next` of the
// same group (the next chain of the cycle, or its first), which step 0 of
// that chain overwrote: the journal saved it.
struct Chain {
  std::uint64_t first = 0, len = 0, next = 0;
};
// Whole cycles, cut into chains of at most chain_length moves (more for a
// cycle longer than chains * chain_length), at most `chains` chains (a
// cycle whose chains would not fit starts the next group).
struct Group {
  std::vector<Chain> chains;
  std::uint64_t steps = 0;  // the longest chain
};

// Groups in order, the same every time for the same (P, Q, plan): recovery
// walks them again to the one it resumes.
class GroupWalker {
 public:
  GroupWalker(std::uint64_t P, std::uint64_t Q, std::uint64_t chains, std::uint64_t chain_length);
  // The next group; false after the last.
  bool next(Group& g);

 private:
  std::uint64_t P_, Q_, chains_, len_, n_, scan_ = 0;
  std::vector<bool> seen_;
  std::vector<Chain> pending_;  // the cycle that did not fit the last group
};

// Segment x of `whole` (as a run of side-element segments, row-major): its row and column.
struct Place {
  std::uint64_t row, col;
};
inline Place place_of(std::uint64_t x, std::uint64_t side, std::uint64_t cols) {
  const std::uint64_t e = x * side;
  return {e / cols, e % cols};
}

// Runs one permutation stage without a journal (host memory: nothing to
// crash-protect), one cycle at a time through one segment of scratch.
void permute_plain(InplaceMatrix& whole, const InplaceShape& shape, const PermuteRegion& region);
// Host memory's permutations: `count` segments of seg_bytes at `base`, each
// destination d receiving the segment at src(d). The cycles' first segments
// are found first (two bits a segment), then up to `threads` threads each
// follow every cycle on their own stripe of the segments' bytes (whole
// 64-byte lines, at least 256 bytes), so the moves run as parallel memcpy.
// A cycle's first piece waits in held(w) (room for seg_bytes) where the
// caller has scratch, else in a buffer of the stripe's own.
void follow_cycles(unsigned char* base, std::uint64_t count, std::uint64_t seg_bytes, int threads,
                   const std::function<std::uint64_t(std::uint64_t)>& src,
                   const std::function<unsigned char*(int)>& held = {});
// The same permutation as permute_plain on a packed matrix in host memory at
// `base`, by follow_cycles (permute_plain reads and writes each segment
// through a buffer, on one thread).
void permute_memory(unsigned char* base, std::size_t elem_size, std::uint64_t side, const PermuteRegion& region,
                    int threads);

}  // namespace gt::permute

// The journal's checksum, its test hook and its test switches (journal_detail.hpp).
#include <algorithm>
#include <atomic>
#include <mutex>
#include <cstring>

#include "inplace/journal_detail.hpp"
#include "inplace/journal_internal.hpp"

namespace gt {

// --- checksum and test hook ---------------------------------------------------

namespace journal_detail {

namespace {

constexpr std::uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full, kP3 = 0x165667B19E3779F9ull,
                        kP4 = 0x85EBCA77C2B2AE63ull, kP5 = 0x27D4EB2F165667C5ull;

inline std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline std::uint64_t load64(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
// One lane step: multiply the word in, rotate, multiply again.
inline std::uint64_t mix(std::uint64_t acc, std::uint64_t word) { return rotl(acc + word * kP2, 31) * kP1; }

std::function<void(Point)>& hook() {
  static std::function<void(Point)> h;
  return h;
}

}  // namespace

StreamHash::StreamHash(std::uint64_t seed) : lane_{seed + kP1 + kP2, seed + kP2, seed, seed - kP1}, seed_(seed) {}

void StreamHash::update(const void* data, std::size_t n) {
  if (n == 0) return;  // an empty buffer's data may be null, which memcpy may not take
  auto p = static_cast<const unsigned char*>(data);
  total_ += n;
  if (fill_) {  // complete the pending 32 bytes first
    const std::size_t take = std::min(n, sizeof pending_ - fill_);
    std::memcpy(pending_ + fill_, p, take);
    fill_ += take;
    p += take;
    n -= take;
    if (fill_ < sizeof pending_) return;
    for (int i = 0; i < 4; ++i) lane_[i] = mix(lane_[i], load64(pending_ + 8 * i));
    fill_ = 0;
  }
  std::uint64_t v0 = lane_[0], v1 = lane_[1], v2 = lane_[2], v3 = lane_[3];
  for (; n >= 32; p += 32, n -= 32) {
    v0 = mix(v0, load64(p));
    v1 = mix(v1, load64(p + 8));
    v2 = mix(v2, load64(p + 16));
    v3 = mix(v3, load64(p + 24));
  }
  lane_[0] = v0, lane_[1] = v1, lane_[2] = v2, lane_[3] = v3;
  std::memcpy(pending_, p, n);
  fill_ = n;
}

std::uint64_t StreamHash::digest() const {
  std::uint64_t h;
  if (total_ >= 32) {
    h = rotl(lane_[0], 1) + rotl(lane_[1], 7) + rotl(lane_[2], 12) + rotl(lane_[3], 18);
    for (std::uint64_t l : lane_) h = (h ^ mix(0, l)) * kP1 + kP4;
  } else {
    h = seed_ + kP5;
  }
  h += total_;
  const unsigned char* p = pending_;
  std::size_t n = fill_;
  for (; n >= 8; p += 8, n -= 8) h = rotl(h ^ mix(0, load64(p)), 27) * kP1 + kP4;
  for (; n; ++p, --n) h = rotl(h ^ (*p * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

void set_hook(std::function<void(Point)> h) { hook() = std::move(h); }

namespace {
std::atomic<int> g_skipped{int(Barrier::count)};
std::atomic<bool> g_no_xattrs{false};
}  // namespace

const char* barrier_name(Barrier b) {
  switch (b) {
    case Barrier::mark_synced: return "the matrix synced after it is marked";
    case Barrier::header_synced: return "the journal's first header synced before it is named";
    case Barrier::folder_synced: return "the journal's folder synced after it is named";
    case Barrier::journal_synced: return "each batch's journal data and header synced";
    case Barrier::matrix_flushed: return "each batch's matrix writes flushed";
    case Barrier::final_synced: return "the last header synced";
    case Barrier::final_flushed: return "the last tiles b flushed";
    case Barrier::removal_synced: return "the folder synced after the journal is removed";
    case Barrier::recovery_flushed: return "recovery's matrix writes flushed";
    case Barrier::recovery_synced: return "recovery's headers synced";
    case Barrier::saved_synced: return "a permutation group's saved rows synced";
    case Barrier::step_flushed: return "each permutation step's moves flushed";
    case Barrier::step_synced: return "each permutation step's header synced";
    case Barrier::end_marked: return "the journal's end header synced before a .npy header changes";
    case Barrier::end_synced: return "a .npy header's new shape synced";
    case Barrier::band_synced: return "each band's journal data and header synced";
    case Barrier::band_flushed: return "each band's matrix writes flushed";
    case Barrier::band_redone: return "a band redone by recovery flushed";
    case Barrier::count: break;
  }
  return "none";
}

void set_skipped_barrier(Barrier b) { g_skipped.store(int(b)); }
void set_xattrs_unsupported(bool on) { g_no_xattrs.store(on); }

}  // namespace journal_detail

namespace journal_impl {

void hit(journal_detail::Point p) {
  // A batch's two sides run on two threads: one call of the hook at a time.
  static std::mutex mu;
  if (auto& h = journal_detail::hook()) {
    std::lock_guard<std::mutex> lk(mu);
    h(p);
  }
}

bool barrier_skipped(Barrier b) { return journal_detail::g_skipped.load(std::memory_order_relaxed) == int(b); }
bool xattrs_disabled() { return journal_detail::g_no_xattrs.load(std::memory_order_relaxed); }

}  // namespace journal_impl

}  // namespace gt

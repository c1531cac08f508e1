#include "core/team.hpp"

#include <algorithm>

#include "gtranspose/matrix.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/tiles.hpp"

namespace gt {

std::uint64_t band_start(std::uint64_t count, int parts, int k) {
  const std::uint64_t n = std::uint64_t(std::max(1, parts)), i = std::uint64_t(k);
  // i * count / n without overflowing 64 bits for any count.
  return count / n * i + count % n * i / n;
}

int band_count(std::uint64_t count, std::uint64_t min_units, int size) {
  const std::uint64_t least = std::max<std::uint64_t>(1, min_units);
  const std::uint64_t bands = std::min<std::uint64_t>(std::uint64_t(std::max(1, size)), count / least);
  return int(std::max<std::uint64_t>(1, bands));
}

CopyTeam::CopyTeam(int size) {
  errors_.resize(std::size_t(std::max(1, size)));
  try {
    for (int k = 1; k < size; ++k) helpers_.emplace_back([this, k] { helper(k); });
  } catch (...) {
    stop();  // the helpers already started
    throw;
  }
}

CopyTeam::~CopyTeam() { stop(); }

void CopyTeam::stop() noexcept {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : helpers_)
    if (t.joinable()) t.join();
}

void CopyTeam::run_band(int part) {
  const std::uint64_t first = band_start(count_, parts_, part), end = band_start(count_, parts_, part + 1);
  try {
    if (end > first) (*fn_)(first, end - first);
  } catch (...) {
    errors_[std::size_t(part)] = std::current_exception();
  }
}

void CopyTeam::helper(int part) {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lk(mu_);
      start_cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      if (part >= parts_) continue;  // a call of fewer bands than helpers
    }
    run_band(part);
    std::lock_guard<std::mutex> lk(mu_);
    if (--pending_ == 0) done_cv_.notify_one();
  }
}

void CopyTeam::split(std::uint64_t count, std::uint64_t min_units,
                     const std::function<void(std::uint64_t, std::uint64_t)>& fn) {
  if (count == 0) return;
  const int parts = band_count(count, min_units, size());
  {
    std::lock_guard<std::mutex> lk(mu_);
    fn_ = &fn;
    count_ = count;
    parts_ = parts;
    pending_ = parts - 1;
    std::fill(errors_.begin(), errors_.end(), nullptr);
    if (parts > 1) ++generation_;
  }
  if (parts > 1) start_cv_.notify_all();
  run_band(0);
  std::unique_lock<std::mutex> lk(mu_);
  done_cv_.wait(lk, [&] { return pending_ == 0; });
  fn_ = nullptr;
  for (auto& e : errors_)
    if (e) std::rethrow_exception(e);
}

namespace {

// Rows of `row_elems` elements a band needs to hold kTeamBandBytes.
std::uint64_t band_rows(std::uint64_t row_elems, std::size_t es) {
  const std::uint64_t row = std::max<std::uint64_t>(1, row_elems * es);
  return (kTeamBandBytes + row - 1) / row;
}

}  // namespace

void team_read(CopyTeam& team, Source& src, const Tile& t, void* buf, std::size_t es) {
  auto* b = static_cast<unsigned char*>(buf);
  team.split(t.h, band_rows(t.w, es), [&](std::uint64_t r, std::uint64_t n) {
    src.read(t.r0 + r, t.c0, n, t.w, b + r * t.w * es, t.w);
  });
}

void team_write(CopyTeam& team, Sink& dst, const Tile& t, const void* buf, std::size_t es) {
  const auto* b = static_cast<const unsigned char*>(buf);
  team.split(t.w, band_rows(t.h, es), [&](std::uint64_t r, std::uint64_t n) {
    dst.write(t.c0 + r, t.r0, n, t.h, b + r * t.h * es, t.h);
  });
}

}  // namespace gt

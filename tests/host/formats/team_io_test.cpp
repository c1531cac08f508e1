// Copy teams (core/team.hpp): the band arithmetic, the fork-join, and the
// CUDA engine's staged copies (team_read, team_write) between host-memory
// matrices and a slot buffer, checked byte for byte against a plain
// reference for every element size, odd shapes, odd leading dimensions and
// teams larger than the work.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/memory.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/tiles.hpp"
#include "testing.hpp"

namespace gt {
namespace {

// stream_copy: every head alignment of the target, source offsets, lengths
// around the 64-byte lines, each byte copied and nothing beside the range
// touched (guards of a poison byte on both sides).
TEST(StreamCopy, EveryAlignmentAndLengthBitExact) {
  std::vector<unsigned char> src(5000), dst(5200);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<unsigned char>(i * 131 + 7);
  for (std::size_t n : {0, 1, 15, 16, 63, 64, 65, 127, 128, 129, 191, 200, 1000, 4097}) {
    for (std::size_t doff = 0; doff < 64; ++doff) {
      for (std::size_t soff : {0, 1, 3, 8, 17}) {
        std::fill(dst.begin(), dst.end(), 0xA5);
        stream_copy(dst.data() + 64 + doff, src.data() + soff, n);
        stream_fence();
        ASSERT_EQ(std::memcmp(dst.data() + 64 + doff, src.data() + soff, n), 0) << n << " " << doff << " " << soff;
        for (std::size_t i = 0; i < 64 + doff; ++i) ASSERT_EQ(dst[i], 0xA5) << "before, " << n << " " << doff;
        for (std::size_t i = 64 + doff + n; i < dst.size(); ++i) ASSERT_EQ(dst[i], 0xA5) << "after, " << n << " " << doff;
      }
    }
  }
}

TEST(Team, BandsCoverEveryUnitOnceAndDifferByAtMostOne) {
  for (std::uint64_t count : {0ull, 1ull, 2ull, 7ull, 64ull, 1001ull}) {
    for (int parts = 1; parts <= 9; ++parts) {
      EXPECT_EQ(band_start(count, parts, 0), 0u);
      EXPECT_EQ(band_start(count, parts, parts), count);
      std::uint64_t lo = count, hi = 0;
      for (int k = 0; k < parts; ++k) {
        const std::uint64_t n = band_start(count, parts, k + 1) - band_start(count, parts, k);
        lo = std::min(lo, n);
        hi = std::max(hi, n);
      }
      EXPECT_LE(hi - lo, 1u) << count << " in " << parts;
    }
  }
  // No overflow near 2^64.
  const std::uint64_t big = ~std::uint64_t(0) - 5;
  EXPECT_EQ(band_start(big, 7, 7), big);
  EXPECT_LT(band_start(big, 7, 3), band_start(big, 7, 4));
}

TEST(Team, BandCountKeepsBandsAtLeastTheMinimum) {
  EXPECT_EQ(band_count(100, 1, 4), 4);
  EXPECT_EQ(band_count(100, 30, 4), 3);  // 3 bands of >= 30
  EXPECT_EQ(band_count(100, 200, 4), 1);
  EXPECT_EQ(band_count(3, 0, 8), 3);     // more threads than units
  EXPECT_EQ(band_count(0, 1, 8), 1);
  EXPECT_EQ(band_count(100, 1, 0), 1);
}

TEST(Team, SplitRunsEveryBandOnItsOwnThreadAndWaits) {
  for (int size : {1, 2, 3, 4, 7}) {
    CopyTeam team(size);
    EXPECT_EQ(team.size(), size);
    for (std::uint64_t count : {1ull, 2ull, 5ull, 64ull, 1000ull}) {
      for (int round = 0; round < 3; ++round) {  // the same team, reused
        std::vector<std::atomic<int>> hits(count);
        for (auto& h : hits) h = 0;
        std::mutex mu;
        std::set<std::thread::id> ids;
        std::atomic<int> bands{0};
        team.split(count, 1, [&](std::uint64_t first, std::uint64_t n) {
          ASSERT_GT(n, 0u);
          ASSERT_LE(first + n, count);
          for (std::uint64_t i = first; i < first + n; ++i) ++hits[i];
          ++bands;
          std::lock_guard<std::mutex> lk(mu);
          ids.insert(std::this_thread::get_id());
        });
        for (std::uint64_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << "unit " << i;
        const int expect = band_count(count, 1, size);
        EXPECT_EQ(bands.load(), expect);
        EXPECT_EQ(int(ids.size()), expect);  // one thread per band
        EXPECT_EQ(ids.count(std::this_thread::get_id()), 1u);  // the caller runs band 0
      }
    }
  }
}

TEST(Team, ABandsErrorReachesTheCallerAndTheTeamGoesOn) {
  CopyTeam team(4);
  std::atomic<int> ran{0};
  auto fails_on = [&](std::uint64_t bad) {
    return [&, bad](std::uint64_t first, std::uint64_t n) {
      ++ran;
      if (bad >= first && bad < first + n) throw Error(ErrorKind::io, "band " + std::to_string(first));
    };
  };
  for (std::uint64_t bad : {0ull, 50ull, 99ull}) {
    ran = 0;
    try {
      team.split(100, 1, fails_on(bad));
      FAIL() << "no exception";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::io);
      EXPECT_EQ(e.message(), "band " + std::to_string(band_start(100, 4, int(bad / 25))));
    }
    EXPECT_EQ(ran.load(), 4);  // the other bands still ran
  }
  // Two bands throw: the lowest band's error.
  try {
    team.split(100, 1, [](std::uint64_t first, std::uint64_t) {
      if (first > 0) throw std::runtime_error("band " + std::to_string(first));
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "band 25");
  }
  std::atomic<std::uint64_t> sum{0};
  team.split(100, 1, [&](std::uint64_t, std::uint64_t n) { sum += n; });
  EXPECT_EQ(sum.load(), 100u);
}

// A matrix of distinct bytes: element (r, c) of es bytes, each byte a hash of
// its position, so a misplaced or half-copied element shows.
std::vector<unsigned char> pattern(std::uint64_t rows, std::uint64_t ld, std::size_t es, unsigned seed) {
  std::vector<unsigned char> v(std::size_t(rows * ld * es));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<unsigned char>((i * 2654435761u + seed) >> 13);
  return v;
}

// The staged path of the CUDA engine on the host: every tile read by its
// team into a slot, transposed there (what the GPU does), written by its
// team. The output must equal the transpose byte for byte, and the gaps
// between its rows (ld_out > rows) stay as they were.
void staged_round_trip(Shape s, std::size_t es, std::uint64_t ld_in, std::uint64_t ld_out, Shape tile, int team_size) {
  SCOPED_TRACE(to_string(s) + " es " + std::to_string(es) + " tile " + to_string(tile) + " team " +
               std::to_string(team_size));
  std::vector<unsigned char> in = pattern(s.rows, ld_in, es, 7);
  std::vector<unsigned char> out = pattern(s.cols, ld_out, es, 99);  // poison; gaps checked below
  const std::vector<unsigned char> before = out;
  auto src = memory_source(HostMatrix{in.data(), s, es, ld_in, HostMemoryKind::pageable});
  auto dst = memory_sink(HostMatrix{out.data(), s.transposed(), es, ld_out, HostMemoryKind::pageable});
  CopyTeam reader(team_size), writer(team_size);
  std::vector<unsigned char> slot(std::size_t(tile.rows * tile.cols * es)), turned(slot.size());
  for (std::uint64_t r0 = 0; r0 < s.rows; r0 += tile.rows) {
    for (std::uint64_t c0 = 0; c0 < s.cols; c0 += tile.cols) {
      const Tile t{r0, c0, std::min(tile.rows, s.rows - r0), std::min(tile.cols, s.cols - c0)};
      team_read(reader, *src, t, slot.data(), es);
      for (std::uint64_t i = 0; i < t.h; ++i)
        ASSERT_EQ(0, std::memcmp(&slot[std::size_t(i * t.w * es)], &in[std::size_t(((r0 + i) * ld_in + c0) * es)],
                                 std::size_t(t.w * es)))
            << "tile (" << r0 << ", " << c0 << ") row " << i << " as read";
      for (std::uint64_t i = 0; i < t.h; ++i)
        for (std::uint64_t j = 0; j < t.w; ++j)
          std::memcpy(&turned[std::size_t((j * t.h + i) * es)], &slot[std::size_t((i * t.w + j) * es)], es);
      team_write(writer, *dst, t, turned.data(), es);
    }
  }
  for (std::uint64_t r = 0; r < s.cols; ++r) {
    for (std::uint64_t c = 0; c < ld_out; ++c) {
      const unsigned char* got = &out[std::size_t((r * ld_out + c) * es)];
      const unsigned char* want = c < s.rows ? &in[std::size_t((c * ld_in + r) * es)] : &before[std::size_t((r * ld_out + c) * es)];
      ASSERT_EQ(0, std::memcmp(got, want, es)) << "output (" << r << ", " << c << ")";
    }
  }
}

TEST(TeamIo, EveryElementSizeOddShapesAndTeams) {
  // Tiles of several MiB, so the teams split them into bands of odd sizes
  // (a band holds at least kTeamBandBytes); edge tiles are smaller.
  for (std::size_t es : {1, 2, 4, 8, 16}) {
    const std::uint64_t cols = (std::uint64_t(3) << 20) / es / 997 * 3 + 5;  // rows of ~3 KiB x 3
    for (int team : {1, 3, 4}) staged_round_trip({1203, cols}, es, cols + 3, 1203 + 1, {997, cols - 11}, team);
  }
}

TEST(TeamIo, MoreThreadsThanBands) {
  // Three rows of more than kTeamBandBytes each: three bands, five idle helpers.
  const std::size_t es = 16;
  const std::uint64_t cols = kTeamBandBytes / es + 7;
  staged_round_trip({3, cols}, es, cols, 3, {3, cols}, 8);
  // Tiles far below a band: the caller copies them alone.
  staged_round_trip({37, 53}, 4, 60, 41, {5, 7}, 8);
  staged_round_trip({1, 1}, 1, 1, 1, {1, 1}, 4);
}

TEST(TeamIo, ARectangleOutsideTheMatrixIsRefused) {
  std::vector<unsigned char> in(100 * 100);
  std::vector<unsigned char> slot(in.size());
  auto src = memory_source(HostMatrix{in.data(), {100, 100}, 1, 0, HostMemoryKind::pageable});
  CopyTeam team(4);
  try {
    team_read(team, *src, Tile{50, 0, 60, 100}, slot.data(), 1);
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::internal);
    EXPECT_NE(e.message().find("does not fit the 100x100 matrix of host memory"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace gt

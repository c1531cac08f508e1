// The in-place journal (journal.hpp) when what it left is damaged: its
// checksum; damaged journal data (verified against the matrix, never
// trusted); torn and missing headers; an older version's journal; the job's
// refusals and messages, and the plain writer without a journal. Crashes at
// every point of the protocol are in test_journal_crash.cpp, power loss in
// test_journal_powerloss.cpp, whose journal is whose in
// test_journal_identity.cpp.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "gtranspose/engine.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/journal.hpp"
#include "host/job/journal_test_util.hpp"
#include "support/engines.hpp"
#include "support/errors.hpp"
#include "support/reference.hpp"

namespace gt {
namespace {

namespace fs = std::filesystem;
using namespace journal_test;
using test::catch_error;
using test::file_bytes;

// --- the checksum ----------------------------------------------------------------

TEST(JournalHash, SameDigestHoweverCutAndSensitiveToEveryByte) {
  std::mt19937_64 rng(5);
  Bytes data(10007);
  for (auto& b : data) b = static_cast<unsigned char>(rng());
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(7), std::size_t(31), std::size_t(32),
                        std::size_t(33), std::size_t(100), data.size()}) {
    const std::uint64_t whole = journal_detail::hash_bytes(data.data(), n);
    for (std::size_t cut : {std::size_t(1), std::size_t(5), std::size_t(32), std::size_t(37)}) {
      journal_detail::StreamHash h;
      for (std::size_t off = 0; off < n; off += cut) h.update(data.data() + off, std::min(cut, n - off));
      EXPECT_EQ(h.digest(), whole) << "n=" << n << " cut=" << cut;
    }
  }
  const std::uint64_t base = journal_detail::hash_bytes(data.data(), data.size());
  for (std::size_t i = 0; i < data.size(); i += 97) {
    data[i] ^= 1;
    EXPECT_NE(journal_detail::hash_bytes(data.data(), data.size()), base) << "byte " << i;
    data[i] ^= 1;
  }
  // Length counts: a zero byte more is another digest.
  Bytes zeros(64, 0);
  EXPECT_NE(journal_detail::hash_bytes(zeros.data(), 63), journal_detail::hash_bytes(zeros.data(), 64));
}

TEST(JournalHash, RunsAtSeveralGBPerSecond) {
  Bytes data(std::size_t(64) << 20, 0x5A);
  journal_detail::hash_bytes(data.data(), data.size());
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t sink = 0;
  for (int i = 0; i < 4; ++i) sink += journal_detail::hash_bytes(data.data(), data.size());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double gbps = 4.0 * double(data.size()) / s / 1e9;
  RecordProperty("hash_gbps", std::to_string(gbps));
  std::printf("journal checksum: %.1f GB/s (digest %llx)\n", gbps, static_cast<unsigned long long>(sink));
  EXPECT_GT(gbps, 1.0) << "the checksum should not be what limits a journaled run";
}

// --- damaged journal data: verified, never trusted ----------------------------------

using journal_detail::read_journal_view;

void flip_byte(const std::string& path, std::uint64_t off) {
  Bytes b = file_bytes(path);
  ASSERT_LT(off, b.size());
  b[off] ^= 0x40;
  write_file(path, b);
}

bool noted(const RunReport& r, const std::string& what) {
  for (const auto& n : r.notes)
    if (n.find(what) != std::string::npos) return true;
  return false;
}

// Stops a fresh run the k-th time it passes p; returns what its journal says.
journal_detail::JournalView stop_at(const Dir& d, const Case& c, const Bytes& pristine, Point p, std::uint64_t k) {
  ::unlink(journal_path(file_of(d, c)).c_str());  // what an earlier case left
  write_file(file_of(d, c), pristine);
  EXPECT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(p, k)), kCrashed);
  const journal_detail::JournalView v = read_journal_view(journal_path(file_of(d, c)));
  EXPECT_TRUE(v.valid);
  return v;
}

// How a refusal names a batch's pairs (Journal::pairs_text): the journal
// gathers several pairs into a batch (kJournalGroup), so a batch's pairs are
// read from its header, never assumed.
std::string pairs_text(const journal_detail::BatchView& b) {
  return b.count == 1 ? "tile pair " + std::to_string(b.first)
                      : "tile pairs " + std::to_string(b.first) + "-" + std::to_string(b.first + b.count - 1);
}

// A refusal that keeps journal and matrix, and says the journal is damaged.
void expect_damaged(const Dir& d, const Case& c, const std::string& needle, const std::string& what) {
  const std::string file = file_of(d, c), journal = journal_path(file);
  const Bytes before = file_bytes(file);
  const Error e = catch_error([&] { run_job(job_of(d, c, true)); });
  EXPECT_EQ(e.kind(), ErrorKind::input) << what << ": " << e.what();
  EXPECT_NE(std::string(e.what()).find("is damaged"), std::string::npos) << what << ": " << e.what();
  EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << what << ": " << e.what();
  EXPECT_EQ(std::string(e.what()).find("unchanged"), std::string::npos) << what << ": " << e.what();
  EXPECT_TRUE(file_bytes(file) == before) << what << ": a refused resume changed the matrix";
  EXPECT_TRUE(exists(journal)) << what << ": a refused resume removed the journal";
}

TEST(JournalDamage, SavedBatchWithBadDataStartsOverWhileItsTilesAAreUntouched) {
  const Case c{"raw_f32_n37", ".raw", 4, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string journal = journal_path(file_of(d, c));
  // Batch 3's header durable, none of its tiles a written: its data is not
  // needed, so damage there costs nothing (tiles a prove it).
  for (int where : {0, 1, 2}) {  // its first byte, one in the middle, its last
    const auto v = stop_at(d, c, pristine, Point::saved_synced, 3);
    ASSERT_TRUE(v.has_cur && v.cur.first > 0 && v.cur.bytes > 0);
    const std::uint64_t at = where == 0 ? 0 : where == 1 ? v.cur.bytes / 2 : v.cur.bytes - 1;
    flip_byte(journal, v.cur.offset + at);
    const RunReport r = run_job(job_of(d, c, true));
    EXPECT_TRUE(noted(r, "resumed from the journal: " + std::to_string(v.cur.first) + " of"))
        << "batch 2 finishes, batch 3 starts over (from pair " << v.cur.first << ")";
    resume_and_check(d, c, want, "damaged data of an untouched batch at byte " + std::to_string(at));
  }
}

TEST(JournalDamage, SavedBatchWithBadDataAndTilesAWrittenIsRefused) {
  const Case c{"raw_f32_n37", ".raw", 4, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  // Batch 3's tile a written over: its tile b's new content lives only in the journal.
  const auto v = stop_at(d, c, pristine, Point::a_tile, 3);
  ASSERT_TRUE(v.has_cur && v.cur.first > 0);
  flip_byte(journal_path(file_of(d, c)), v.cur.offset + 17);
  expect_damaged(d, c, "tiles a of those pairs", "tiles a written, data damaged");
  EXPECT_NE(catch_error([&] { run_job(job_of(d, c, true)); }).message().find(pairs_text(v.cur) + " "),
            std::string::npos);
}

// A general shape's band (inplace/journal_bands.cpp) whose journal data
// fails its checksum: the matrix decides. 13 x 7 f32 in bands of 3 rows
// and 2 columns; the second band of the rows' shuffle is rows 3-5.
TEST(JournalDamage, GeneralBandWithBadDataIsProvenByTheMatrix) {
  const Case c{"raw_f32_general_13x7", ".raw", 4, 13, 2, 0, 7};
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  // Its header durable, nothing of it in the matrix: the band starts over.
  auto v = stop_at(d, c, pristine, Point::saved_synced, 1);
  ASSERT_EQ(v.cur.first, 3u);
  ASSERT_EQ(v.cur.bytes, 3u * 7 * 4);
  flip_byte(journal, v.cur.offset + 5);
  resume_and_check(d, c, want, "damaged data of an untouched band");
  // Written and flushed: the band is complete, the run goes on after it.
  v = stop_at(d, c, pristine, Point::matrix_flushed, 1);
  ASSERT_EQ(v.cur.first, 3u);
  flip_byte(journal, v.cur.offset + v.cur.bytes - 1);
  resume_and_check(d, c, want, "damaged data of a band already in the matrix");
  // Partly written (one element of the band rewritten by hand): refused,
  // naming the band, the matrix left as it is.
  v = stop_at(d, c, pristine, Point::saved_synced, 1);
  flip_byte(journal, v.cur.offset);
  flip_byte(file, 3 * 7 * 4 + 1);
  expect_damaged(d, c, "its copy of rows 3-5 fails its checksum, and those rows of", "band partly written, data damaged");
  // Its data intact, the same partly written band is simply written again.
  v = stop_at(d, c, pristine, Point::saved_synced, 1);
  flip_byte(file, 3 * 7 * 4 + 1);
  resume_and_check(d, c, want, "a partly written band redone from the journal");
}

TEST(JournalDamage, WrittenBatchWithBadDataIsCompleteWhenItsTilesBSaySo) {
  const Case c{"raw_f64_n37", ".raw", 8, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string journal = journal_path(file_of(d, c));
  // After batch 4's flush, batch 3's tiles b are in the matrix: its data is not needed.
  const auto v = stop_at(d, c, pristine, Point::matrix_flushed, 4);
  ASSERT_TRUE(v.has_prev && v.prev.first > 0);
  flip_byte(journal, v.prev.offset + 5);
  resume_and_check(d, c, want, "damaged data of a batch already in the matrix");
  // Before it, they are not: refused, and the message says which pair.
  const auto w = stop_at(d, c, pristine, Point::saved_synced, 4);
  ASSERT_TRUE(w.has_prev && w.prev.first > 0);
  flip_byte(journal, w.prev.offset + 5);
  expect_damaged(d, c, pairs_text(w.prev) + " fails its checksum", "tiles b not written, data damaged");
}

// The journal's batches: up to kJournalGroup (3) pairs, never across a row of
// tile pairs, so a batch's tiles a lie side by side in one band of rows. 5x5
// tiles: rows of 5, 4, 3, 2 and 1 pairs.
TEST(JournalBatches, GatheredWithinEachRowOfTilePairs) {
  static_assert(kJournalGroup == 3, "the batches below are cut for groups of 3");
  const Case c{"raw_f32_n37", ".raw", 4, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;  // (first, count) of each batch
  for (std::uint64_t k = 0; k < 7; ++k) {
    const auto v = stop_at(d, c, pristine, Point::saved_synced, k);
    ASSERT_TRUE(v.has_cur) << "batch " << k;
    seen.emplace_back(v.cur.first, v.cur.count);
  }
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> want{{0, 3}, {3, 2}, {5, 3}, {8, 1},
                                                                   {9, 3}, {12, 2}, {14, 1}};
  EXPECT_EQ(seen, want);
  resume_and_check(d, c, transposed_pattern_of(c), "after the last batch's header");
}

// The issue's case: bit flips anywhere in the journal's live data, header
// intact. Whatever the crash point, a resume either finishes bit-exact or
// refuses, keeping the matrix as it was; it never reports success on a
// wrong matrix.
TEST(JournalDamage, BitFlipsNeverGiveAWrongMatrix) {
  const Case c{"raw_u16_n37", ".raw", 2, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  std::uint64_t finished = 0, refused = 0;
  for (Point p : {Point::saved_synced, Point::b_tile, Point::a_tile, Point::matrix_flushed}) {
    for (std::uint64_t k : {1, 3, 5}) {  // 15 pairs in 7 batches: each point is hit 6 times or more
      for (int which : {0, 1}) {
        const auto v = stop_at(d, c, pristine, p, k);
        const auto& b = which ? v.prev : v.cur;
        if (!(which ? v.has_prev : v.has_cur) || b.bytes == 0) continue;
        flip_byte(journal, b.offset + (b.bytes * 7 / 13));
        const std::string what = "point " + std::to_string(int(p)) + " #" + std::to_string(k) + (which ? " prev" : " cur");
        const Bytes before = file_bytes(file);
        try {
          run_job(job_of(d, c, true));
          ASSERT_TRUE(read_matrix(d, c) == want) << what << ": resume reported success on a wrong matrix";
          ++finished;
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("is damaged"), std::string::npos) << what << ": " << e.what();
          EXPECT_TRUE(file_bytes(file) == before) << what;
          ++refused;
        }
      }
    }
  }
  std::printf("bit flips in live journal data: %llu resumes finished bit-exact, %llu refused honestly\n",
              static_cast<unsigned long long>(finished), static_cast<unsigned long long>(refused));
  EXPECT_GT(finished, 0u);
  EXPECT_GT(refused, 0u);
}

TEST(JournalTorn, HeaderFallsBackToTheOtherCopy) {
  const Case c{"raw_u16_n37", ".raw", 2, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  // A torn header (written, not synced): the one before it describes the
  // two batches before, whose data the new batch did not touch.
  for (std::uint64_t k : {0, 2, 5}) {
    const auto v = stop_at(d, c, pristine, Point::saved_written, k);
    flip_byte(journal, v.header_offset + 40);
    resume_and_check(d, c, want, "torn header of batch " + std::to_string(k));
  }
}

TEST(JournalTorn, NoValidHeaderNeverClaimsTheMatrixUnchanged) {
  const Case c{"raw_f32_n37", ".raw", 4, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  // Both copies damaged, or the journal cut to 0 or 100 bytes: nothing says
  // how far the run got, and the matrix is partly transposed.
  for (std::uint64_t keep : {std::uint64_t(0), std::uint64_t(100), std::uint64_t(1) << 40}) {
    stop_at(d, c, pristine, Point::b_tile, 2);
    if (keep >> 40) {
      flip_byte(journal, 30);
      flip_byte(journal, 4096 + 30);
    } else {
      Bytes j = file_bytes(journal);
      j.resize(std::size_t(keep));
      write_file(journal, j);
    }
    const Bytes before = file_bytes(file);
    const Error e = catch_error([&] { run_job(job_of(d, c, true)); });
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find("no valid header"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("may be unchanged or partly transposed"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("is unchanged"), std::string::npos) << e.what();
    EXPECT_TRUE(file_bytes(file) == before) << "the matrix changed";
    EXPECT_TRUE(exists(journal)) << "a journal is never removed unless the run finished";
    // Nothing else runs on it either.
    JobOptions out = job_of(d, c, false);
    out.in_place = false;
    out.output = d / "out.raw";
    EXPECT_NE(catch_error([&] { run_job(out); }).message().find("{in_place} {resume}"), std::string::npos);
    ::unlink(journal.c_str());
  }
}

// The version field of a journal's written header slots (0 if none).
std::uint32_t version_of(const std::string& journal) {
  const Bytes j = file_bytes(journal);
  std::uint32_t v = 0;
  for (std::uint64_t slot : {0, 4096}) {
    std::uint32_t was = 0;
    std::memcpy(&was, j.data() + slot + 8, 4);
    if (was) v = was;
  }
  return v;
}

// Rewrites the version of both header slots of a journal (every slot
// written), with its checksum (the last 8 bytes of its size) right again:
// the header as another version wrote it.
void set_version(const std::string& journal, std::uint32_t version) {
  Bytes j = file_bytes(journal);
  for (std::uint64_t slot : {0, 4096}) {
    std::uint32_t was = 0, size = 0;
    std::memcpy(&was, j.data() + slot + 8, 4);
    std::memcpy(&size, j.data() + slot + 12, 4);
    if (was == 0) continue;  // a slot not written yet
    std::memcpy(j.data() + slot + 8, &version, 4);
    const std::uint64_t sum = journal_detail::hash_bytes(j.data() + slot, size - 8);
    std::memcpy(j.data() + slot + size - 8, &sum, 8);
  }
  write_file(journal, j);
}

TEST(JournalTorn, AnOlderVersionsJournalIsNamed) {
  const Case c{"raw_f32_n37", ".raw", 4, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const std::string journal = journal_path(file_of(d, c));
  stop_at(d, c, pristine, Point::b_tile, 2);
  // The same header as version 1 wrote it: its version field is 1 and its
  // checksum (the last 8 bytes of its size) is right.
  set_version(journal, 1);
  const Error e = catch_error([&] { run_job(job_of(d, c, true)); });
  EXPECT_NE(std::string(e.what()).find("another version of gtranspose (journal version 1"), std::string::npos)
      << e.what();
}

// Version 2 journals (before general shapes) have the same header, and a
// square's journal is still written as version 2, so that version's binary
// can resume it; this one resumes it bit-exact.
TEST(JournalTorn, AVersion2JournalStillResumes) {
  const Case c{"raw_f32_n37", ".raw", 4, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const std::string journal = journal_path(file_of(d, c));
  stop_at(d, c, pristine, Point::b_tile, 2);
  EXPECT_EQ(version_of(journal), 2u);
  resume_and_check(d, c, transposed_pattern_of(c), "a version 2 journal");
}

// --- the job's messages ---------------------------------------------------------------

TEST(JournalJob, RefusalsAndMessages) {
  Dir d;
  const Case c{"raw_f32_n40", ".raw", 4, 40, 8};
  create(d, c);
  const std::string file = file_of(d, c), journal = journal_path(file);

  // --resume with nothing to resume; --resume out of place.
  Error e = catch_error([&] { run_job(job_of(d, c, true)); });
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(std::string(e.what()).find("nothing to resume"), std::string::npos) << e.what();
  JobOptions out = job_of(d, c, true);
  out.in_place = false;
  out.output = d / "out.raw";
  e = catch_error([&] { run_job(out); });
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(std::string(e.what()).find("resume"), std::string::npos) << e.what();

  // An error midway (the hook throws as a failing disk would) keeps the
  // journal and says how to finish.
  journal_detail::set_hook([n = 0](Point p) mutable {
    if (p == Point::b_tile && n++ == 5) throw Error(ErrorKind::io, "cannot write m.raw: Input/output error");
  });
  e = catch_error([&] { run_job(job_of(d, c, false)); });
  journal_detail::set_hook(nullptr);
  EXPECT_EQ(e.kind(), ErrorKind::io);
  EXPECT_NE(std::string(e.what()).find("Input/output error"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("resume"), std::string::npos) << e.what();
  EXPECT_TRUE(exists(journal));

  // A journal without --resume: refused, kept, the matrix untouched.
  const Bytes before = file_bytes(file);
  e = catch_error([&] { run_job(job_of(d, c, false)); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_EQ(std::string(e.what()), file + " has a journal from an interrupted in-place run (" + journal +
                                       "): rerun with in_place resume to finish it");
  EXPECT_TRUE(file_bytes(file) == before);
  EXPECT_TRUE(exists(journal));

  // --resume with a budget too small for the journal's tiles: one line naming
  // the --host-mem it needs; with that much, it finishes.
  JobOptions small = job_of(d, c, true);
  small.run.host_mem = 5 * 4 * 4 * c.es;
  e = catch_error([&] { run_job(small); });
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(std::string(e.what()).find("host_mem"), std::string::npos) << e.what();
  EXPECT_NE(std::string(e.what()).find("8x8 tiles"), std::string::npos) << e.what();
  EXPECT_TRUE(exists(journal));
  // A larger budget than the original is fine: the tiles stay 8x8.
  JobOptions large = job_of(d, c, true);
  large.run.host_mem = 64 << 20;
  RunReport r = run_job(large);
  EXPECT_EQ(r.tile_shape.rows, 8u);
  EXPECT_GT(r.stage("journal").bytes, 0u);
  EXPECT_FALSE(exists(journal));
  EXPECT_TRUE(read_matrix(d, c) == transposed_pattern_of(c));
}

// --- a square in bands of whole rows (journal_square.cpp) -------------------------

// Band k's blocks and header durable, its rows then partly written (half
// a row of its new content, as a power loss mid-write leaves it):
// resume rebuilds the band from the journal and the matrix. A damaged copy
// of its diagonal block is refused with the rows it concerns, the matrix and
// the journal kept; the same damage where the band is still untouched starts
// the band over.
TEST(SquareBands, PartlyWrittenBandRebuiltOrRefusedWhereItsBlockIsDamaged) {
  const Case c{"raw_f32_n40_bands", ".raw", 4, 40, 3, 0, 0, true};
  Dir d;
  const Bytes pristine = create(d, c), want = transposed_pattern_of(c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  const std::uint64_t row = c.n * c.es, t = c.block;
  for (std::uint64_t k : {0, 2, 13}) {  // 13: the last band, of one row
    const std::string what = "band " + std::to_string(k);
    const journal_detail::JournalView v = stop_at(d, c, pristine, Point::saved_synced, k);
    ASSERT_TRUE(v.band) << what;
    ASSERT_EQ(v.cur.first, k) << what;
    const Bytes m1 = file_bytes(file), j1 = file_bytes(journal);
    const std::uint64_t last = std::min(c.n, (k + 1) * t) - 1;
    ASSERT_TRUE(std::equal(m1.begin() + std::ptrdiff_t(k * t * row), m1.begin() + std::ptrdiff_t((last + 1) * row),
                           pristine.begin() + std::ptrdiff_t(k * t * row)))
        << what << ": its rows changed before its header was durable";
    Bytes partial = m1;
    std::copy(want.begin() + std::ptrdiff_t(k * t * row), want.begin() + std::ptrdiff_t(k * t * row + row / 2),
              partial.begin() + std::ptrdiff_t(k * t * row));
    // Rebuilt from the journal's blocks and the bands after it.
    write_file(file, partial);
    resume_and_check(d, c, want, what + ", partly written");
    if (HasFatalFailure()) return;
    // Its diagonal block damaged: refused, naming the band's rows.
    write_file(file, partial);
    write_file(journal, j1);
    flip_byte(journal, v.cur.offset + 5);
    expect_damaged(d, c, "rows " + std::to_string(k * t) + "-" + std::to_string(last) + " of ", what);
    // The same damage, the band untouched: it starts over.
    write_file(file, m1);
    resume_and_check(d, c, want, what + ", untouched, damaged block");
    if (HasFatalFailure()) return;
  }
}

// A block an earlier band saved, needed by a band still to come, damaged:
// the resume refuses before it writes anything, naming the block and the
// rows already rewritten; it never reads the block unchecked later.
TEST(SquareBands, DamagedEarlierBlockRefusedBeforeAnyWrite) {
  const Case c{"raw_f32_n40_bands", ".raw", 4, 40, 3, 0, 0, true};
  Dir d;
  const Bytes pristine = create(d, c);
  const std::string journal = journal_path(file_of(d, c));
  for (bool band_untouched : {true, false}) {
    // Band 2 in flight: bands 0 and 1 rewritten. Band 0 took slots 0-13 for
    // its blocks (0, 0..13), so block (0, 5), rows 0-2 x columns 15-17, is slot 5.
    (void)stop_at(d, c, pristine, band_untouched ? Point::saved_synced : Point::b_tile, 2);
    flip_byte(journal, kJournalHeaderBytes + 5 * square_slot_bytes(3, 4) + 7);
    expect_damaged(d, c, "its copy of rows 0-2, columns 15-17 fails its checksum",
                   band_untouched ? "band 2 untouched" : "band 2 written");
    const Error e = catch_error([&] { run_job(job_of(d, c, true)); });
    // Band 2 written before the crash is complete too.
    EXPECT_NE(std::string(e.what()).find(band_untouched ? "rows below 6 are complete" : "rows below 9 are complete"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(std::string(e.what()).find("with resume finish it"), std::string::npos) << e.what();
  }
}

// A square takes bands where its budget holds one, and tile pairs where
// {tile} asks for them or the budget is too small for a band; a resumed run
// keeps its journal's route and band, whatever the budget or {tile} now say.
TEST(SquareBands, RouteByBudgetAndTileKeptOnResume) {
  const Case c{"raw_u16_n64_bands", ".raw", 2, 64, 4, 0, 0, true};
  Dir d;
  const Bytes pristine = create(d, c), want = transposed_pattern_of(c);
  JobOptions o = job_of(d, c, false);
  RunReport r = run_job(o);
  EXPECT_EQ(r.tile_shape.rows, 4u);
  EXPECT_EQ(r.tile_shape.cols, 64u);
  EXPECT_EQ(r.tiles, 16u);
  EXPECT_NE(r.plan.staging.find("bands of 4 whole rows"), std::string::npos) << r.plan.staging;
  EXPECT_TRUE(read_matrix(d, c) == want);
  o.run.tile_elems = 8 * 8;  // {tile}: tile pairs
  r = run_job(o);
  EXPECT_EQ(r.tile_shape.rows, r.tile_shape.cols);
  EXPECT_EQ(r.plan.staging.find("bands of"), std::string::npos) << r.plan.staging;
  EXPECT_TRUE(read_matrix(d, c) == pristine);
  o.run.tile_elems = 0;
  o.run.host_mem = 4096;  // no band fits: tile pairs
  r = run_job(o);
  EXPECT_EQ(r.plan.staging.find("bands of"), std::string::npos) << r.plan.staging;
  EXPECT_TRUE(read_matrix(d, c) == want);
  // Interrupted in its third band, resumed with {tile} and a larger budget:
  // still bands of 4 rows.
  write_file(file_of(d, c), pristine);
  ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(Point::b_tile, 2)), kCrashed);
  JobOptions again = job_of(d, c, true);
  again.run.tile_elems = 8 * 8;
  again.run.host_mem = 64 << 20;
  r = run_job(again);
  EXPECT_EQ(r.tile_shape.rows, 4u);
  EXPECT_NE(r.plan.staging.find("bands of 4 whole rows"), std::string::npos) << r.plan.staging;
  EXPECT_TRUE(read_matrix(d, c) == want);
  EXPECT_FALSE(exists(journal_path(file_of(d, c))));
  // A resumed run's band that the budget cannot hold: refused, naming the
  // {host_mem} that would do, the journal kept.
  write_file(file_of(d, c), pristine);
  ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(Point::b_tile, 2)), kCrashed);
  JobOptions small = job_of(d, c, true);
  small.run.host_mem = 1024;
  const Error e = catch_error([&] { run_job(small); });
  EXPECT_EQ(e.kind(), ErrorKind::usage) << e.what();
  EXPECT_NE(std::string(e.what()).find("bands of 4 rows"), std::string::npos) << e.what();
  EXPECT_TRUE(exists(journal_path(file_of(d, c))));
  resume_and_check(d, c, want, "resumed with the case's budget");
}

TEST(JournalJob, PlainWriterWritesAndFlushes) {
  // Without a journal the engine writes straight to the matrix, once per element, and flushes once.
  Dir d;
  const Case c{"raw_u8_n45", ".raw", 1, 45, 8};
  create(d, c);
  auto m = open_inplace(spec_of(d, c), open_of(c));
  RunOptions o;
  o.host_mem = budget_of(c);
  o.threads = 1;
  RunReport r = test::run_engine_inplace(EngineKind::cpu, *m, o);
  EXPECT_EQ(r.stage("journal").bytes, 0u);
  m.reset();
  EXPECT_TRUE(read_matrix(d, c) == transposed_pattern_of(c));
  EXPECT_EQ(d.entries(), std::vector<std::string>{"m.raw"});
}

}  // namespace
}  // namespace gt

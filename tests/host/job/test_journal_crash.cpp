// The in-place journal (journal.hpp) under crashes: a run stopped at every
// step of the protocol in a forked child, then resumed and compared
// bit-exact with the transpose. Raw, .npy and HDF5 (contiguous, chunked
// without filters), every element size, odd n (edge pairs whose tiles are
// not square), n = 1; rectangles of every route (tall, wide, grid, general:
// the gcd decomposition's bands); a crash during recovery itself; a kill
// while the journal is made; batches of several pairs, as the CUDA engine
// writes them.
// Torn journals, identity checks and the job's messages are in
// test_journal_recovery.cpp.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>
#include <deque>
#include <cstdint>
#include <string>
#include <vector>

#include "gtranspose/engine.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/inplace_writer.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/tiles.hpp"
#include "host/job/journal_test_util.hpp"
#include "support/errors.hpp"
#include "support/reference.hpp"

namespace gt {
namespace {

using namespace journal_test;
using test::catch_error;
using test::file_bytes;
using test::reference_transpose;

// --- a crash at every point of the protocol ----------------------------------------

class JournalCrash : public ::testing::TestWithParam<Case> {};

TEST_P(JournalCrash, AtEveryPointThenResume) {
  const Case& c = GetParam();
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string file = file_of(d, c);

  // An uninterrupted run first: the plan is what the case says.
  const RunReport full = run_job(job_of(d, c, false));
  const bool general = is_general(c);
  BandPlan bands = general ? plan_bands(shape_of(c), c.es, budget_of(c), 0, 1) : BandPlan{};
  if (c.bands) {  // every square block's bands of c.block rows
    const InplaceShape is = plan_inplace_shape(shape_of(c), c.name);
    bands.bands = is.blocks * ((is.side + c.block - 1) / c.block);
  }
  if (general || c.bands)
    ASSERT_EQ(full.tiles, bands.bands) << "the budget does not give the case's bands";
  else
    ASSERT_EQ(full.tile_shape.rows, c.block) << "the budget does not give the case's tiles";
  ASSERT_TRUE(read_matrix(d, c) == want);
  EXPECT_FALSE(exists(journal_path(file)));

  std::uint64_t k = 0;
  for (;; ++k) {
    write_file(file, pristine);
    const int st = in_child([&] { run_job(job_of(d, c, false)); }, crash_at_hit(k));
    if (st == 0) break;  // the run passed fewer than k + 1 points: every one has been tried
    ASSERT_EQ(st, kCrashed) << "crash point " << k;
    if (k <= 1) {
      // Point::marked, Point::created: the journal has no name yet, so there
      // is nothing to resume and nothing left over: the matrix is untouched
      // and a plain run starts over.
      ASSERT_FALSE(exists(journal_path(file))) << c.name << ": a journal before it was named";
      ASSERT_TRUE(read_matrix(d, c) == pattern_of(c))
          << c.name << ": the matrix changed before the journal was named";
      ASSERT_EQ(d.entries(), std::vector<std::string>{"m" + c.ext}) << c.name << ": stray files";
      run_job(job_of(d, c, false));
    }
    resume_and_check(d, c, want, c.name + ", crash at point " + std::to_string(k));
    if (HasFatalFailure()) return;
  }
  if (general || c.bands) {
    // Created, named, marked, begun; per band its data, header written and
    // synced, the band written, the matrix flushed; finish.
    EXPECT_GE(k, 4 + 5 * bands.bands) << "fewer protocol points than expected";
    resume_and_check(d, c, want, c.name + ", uninterrupted");
    return;
  }
  // Created, named, marked, begun; per pair its tile a and tile b; per
  // batch (up to kJournalGroup pairs of one row of tile pairs) its data,
  // header written and synced, the matrix flushed; finish.
  const std::uint64_t side = std::min(c.n, cols_of(c)), t = (side + c.block - 1) / c.block;
  std::uint64_t batches = 0;
  for (std::uint64_t row = 1; row <= t; ++row) batches += (row + kJournalGroup - 1) / kJournalGroup;
  EXPECT_GE(k, 6 + (2 * t * (t + 1) / 2 + 4 * batches) * (std::max(c.n, cols_of(c)) / side))
      << "fewer protocol points than expected";
  resume_and_check(d, c, want, c.name + ", uninterrupted");
}

// A second crash while the first is being recovered, then a third run.
TEST_P(JournalCrash, DuringRecoveryToo) {
  const Case& c = GetParam();
  if (c.n < 10) GTEST_SKIP() << "the single crash test covers the smallest cases";
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  // First crashes inside the second off-diagonal pair's batch (a general
  // shape: its second band), at each step.
  for (Point p : {Point::saved_synced, Point::b_tile, Point::a_tile, Point::matrix_flushed, Point::data_written}) {
    if ((is_general(c) || c.bands) && p == Point::a_tile) continue;  // bands have no tiles a
    write_file(file, pristine);
    ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(p, 1)), kCrashed);
    const Bytes m1 = file_bytes(file), j1 = file_bytes(journal);
    for (std::uint64_t k = 0; k < 8; ++k) {
      write_file(file, m1);
      write_file(journal, j1);
      const int st = in_child([&] { run_job(job_of(d, c, true)); }, crash_at_hit(k));
      ASSERT_TRUE(st == kCrashed || st == 0) << "status " << st;
      resume_and_check(d, c, want,
                       c.name + ", first crash at point " + std::to_string(int(p)) + ", then at " + std::to_string(k));
      if (HasFatalFailure()) return;
      if (st == 0) break;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Formats, JournalCrash,
    ::testing::Values(Case{"raw_u8_n37", ".raw", 1, 37, 8}, Case{"raw_u16_n23", ".raw", 2, 23, 6},
                      Case{"raw_f32_n37", ".raw", 4, 37, 8}, Case{"raw_f64_n21", ".raw", 8, 21, 4},
                      Case{"raw_c128_n19", ".raw", 16, 19, 5}, Case{"raw_f32_n1", ".raw", 4, 1, 1},
                      Case{"raw_u8_n2_one_tile", ".raw", 1, 2, 2}, Case{"npy_f32_n29", ".npy", 4, 29, 8},
                      Case{"npy_c128_n1", ".npy", 16, 1, 1}, Case{"h5_f64_n29_contiguous", ".h5", 8, 29, 8},
                      Case{"h5_u16_n23_chunked", ".h5", 2, 23, 6, 5},
                      // Rectangles: blocks then rows (tall), rows then blocks (wide),
                      // grids of 16 x 16 blocks (rows of blocks, blocks, the whole).
                      Case{"raw_f32_tall_33x11", ".raw", 4, 33, 4, 0, 11}, Case{"npy_u8_wide_9x27", ".npy", 1, 9, 4, 0, 27},
                      Case{"npy_c128_tall_14x7", ".npy", 16, 14, 3, 0, 7}, Case{"raw_u16_wide_1x5", ".raw", 2, 1, 1, 0, 5},
                      Case{"raw_f32_grid_48x32", ".raw", 4, 48, 8, 0, 32}, Case{"npy_u8_grid_32x48", ".npy", 1, 32, 8, 0, 48},
                      // General shapes: gcd 1 (no rotation) and gcd 2, 6 (a rotation
                      // first), bands of a few rows and columns (budget_of).
                      Case{"raw_f32_general_13x7", ".raw", 4, 13, 2, 0, 7},
                      Case{"npy_u16_general_12x18", ".npy", 2, 12, 3, 0, 18},
                      Case{"npy_c128_general_10x4", ".npy", 16, 10, 2, 0, 4},
                      Case{"raw_u8_general_prime_17x11", ".raw", 1, 17, 1, 0, 11},
                      // Squares in bands of whole rows (journal_square.cpp): c.block
                      // rows a band, ceil(n / 16); the last band of n = 17 holds one row.
                      Case{"raw_f32_n37_bands", ".raw", 4, 37, 3, 0, 0, true},
                      Case{"npy_u8_n40_bands", ".npy", 1, 40, 3, 0, 0, true},
                      Case{"npy_u16_n17_bands", ".npy", 2, 17, 2, 0, 0, true},
                      Case{"raw_c128_n19_bands", ".raw", 16, 19, 2, 0, 0, true},
                      Case{"h5_f64_n29_contiguous_bands", ".h5", 8, 29, 2, 0, 0, true},
                      Case{"h5_u16_n23_chunked_bands", ".h5", 2, 23, 2, 5, 0, true},
                      Case{"h5_f32_n40_chunked_bands", ".h5", 4, 40, 3, 7, 0, true},
                      Case{"raw_f32_n1_bands", ".raw", 4, 1, 1, 0, 0, true},
                      // Rectangles whose square blocks go in bands: tall, wide, a grid.
                      Case{"raw_f32_tall_33x11_bands", ".raw", 4, 33, 1, 0, 11, true},
                      Case{"npy_u8_wide_9x27_bands", ".npy", 1, 9, 1, 0, 27, true},
                      Case{"npy_c128_tall_40x20_bands", ".npy", 16, 40, 2, 0, 20, true},
                      Case{"raw_f32_grid_48x32_bands", ".raw", 4, 48, 1, 0, 32, true}),
    // No compressed HDF5 dataset here: HDF5 moves a rewritten compressed
    // chunk and may reuse its old space before its chunk index reaches the
    // disk, so a kill can leave chunks no journal can repair (seen on the
    // GPU machine: "inflate() failed" on resume). README says so.
    [](const ::testing::TestParamInfo<Case>& i) { return i.param.name; });

// A kill while a fresh run makes its journal (the CLI's random kill -9 lands
// there now and then): before the journal has its name the matrix is
// untouched and nothing is left beside it, so a plain run starts over; once
// named, --resume finishes the run. Either way no other file stays behind
// (the journal was once made under a temporary name, which such a kill left
// in the folder for good).
TEST(JournalCreate, KilledWhileTheJournalIsMadeLeavesNoStrayFile) {
  const Case c{"raw_f32_n37", ".raw", 4, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  for (Point p : {Point::marked, Point::created, Point::named, Point::begun}) {
    const std::string what = "killed at point " + std::to_string(int(p));
    write_file(file, pristine);
    ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(p, 0)), kCrashed) << what;
    EXPECT_TRUE(file_bytes(file) == pristine) << what << ": the matrix changed";
    std::vector<std::string> left{"m.raw"};
    if (p != Point::created && p != Point::marked) left.push_back("m.raw.gtjournal");
    EXPECT_EQ(d.entries(), left) << what << ": stray files";
    if (!exists(journal)) run_job(job_of(d, c, false));  // nothing to resume: the plain run again
    resume_and_check(d, c, want, what);
    if (HasFatalFailure()) return;
  }

  // Another run's journal appears while this one makes its own: naming it
  // fails, that journal stays as it was, the matrix is untouched.
  write_file(file, pristine);
  journal_detail::set_hook([&](Point p) {
    if (p == Point::created) write_file(journal, Bytes{'x'});
  });
  const Error e = catch_error([&] { run_job(job_of(d, c, false)); });
  journal_detail::set_hook(nullptr);
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("rerun with in_place resume to finish it"), std::string::npos) << e.what();
  EXPECT_TRUE(file_bytes(journal) == Bytes{'x'}) << "the other journal was overwritten";
  EXPECT_TRUE(file_bytes(file) == pristine) << "the matrix changed";
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"m.raw", "m.raw.gtjournal"})) << "stray files";
}

// Tiles of 4 MiB and more: the journal copies each batch on several threads
// (its data in checksummed chunks, its tiles in row bands). Crashes at a few
// points of that path, then resumed bit-exact.
TEST(JournalThreads, LargeTilesCopiedOnSeveralThreadsCrashAndResume) {
  // 4x4 tiles: ten pairs, five batches of the journal (kJournalGroup pairs
  // at most, within a row of tile pairs), so each point is hit four times.
  const Case c{"raw_f32_n4000", ".raw", 4, 4000, 1024};
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string file = file_of(d, c);
  const RunReport full = run_job(job_of(d, c, false));
  ASSERT_EQ(full.tile_shape.rows, 1024u);
  ASSERT_TRUE(read_matrix(d, c) == want);
  for (Point p : {Point::data_written, Point::saved_synced, Point::a_tile, Point::b_tile, Point::matrix_flushed}) {
    for (std::uint64_t k : {1, 3}) {
      write_file(file, pristine);
      ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(p, k)), kCrashed);
      resume_and_check(d, c, want, "large tiles, crash at point " + std::to_string(int(p)) + " #" + std::to_string(k));
      if (HasFatalFailure()) return;
    }
  }
}

// --- batches of several pairs (the CUDA engine's way) ------------------------------------

// A minimal engine that sends `per_batch` pairs at a time to the writer.
void batched_engine(InplaceMatrix& m, InplaceWriter& w, std::uint64_t host_mem, std::uint64_t per_batch) {
  const std::uint64_t n = m.info().shape.rows;
  const std::size_t es = m.info().elem_size;
  const PairGrid plan = w.required_block() ? PairGrid::with_block(n, w.required_block())
                                              : PairGrid(n, es, host_mem / 4);
  w.begin(plan);
  const std::uint64_t b = plan.block();
  // The writer reads a batch's buffers until batches_kept() more batches
  // are written: they live until then.
  std::deque<std::vector<Bytes>> kept;
  for (std::uint64_t k = w.first_pair(); k < plan.count(); k += per_batch) {
    const std::uint64_t count = std::min(per_batch, plan.count() - k);
    std::vector<Bytes> in_a(count), in_b(count), out_a(count), out_b(count);
    std::vector<PairWrite> batch(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      const TilePair p = plan.pair(k + i);
      in_a[i].resize(b * b * es);
      out_b[i].resize(b * b * es);
      m.read(p.a.r0, p.a.c0, p.a.h, p.a.w, in_a[i].data(), p.a.w);
      reference_transpose(in_a[i].data(), p.a.h, p.a.w, p.a.w, out_b[i].data(), p.a.h, es);
      batch[i] = {k + i, p, nullptr, out_b[i].data()};
      if (!p.diagonal()) {
        in_b[i].resize(b * b * es);
        out_a[i].resize(b * b * es);
        m.read(p.b.r0, p.b.c0, p.b.h, p.b.w, in_b[i].data(), p.b.w);
        reference_transpose(in_b[i].data(), p.b.h, p.b.w, p.b.w, out_a[i].data(), p.b.h, es);
        batch[i].new_a = out_a[i].data();
      }
    }
    w.write_batch(m, batch);
    kept.push_back(std::move(out_a));
    kept.push_back(std::move(out_b));
    while (kept.size() > 2 * std::size_t(w.batches_kept())) kept.pop_front();
  }
  w.finish(m);
}

TEST(JournalBatches, SeveralPairsPerBatchCrashAnywhere) {
  // 300x300 f32 in 128-sided tiles (64 KiB, more than recovery's smallest
  // buffers, so recovery goes in strips): 6 pairs, edge pairs 128x44.
  const Case c{"raw_f32_n300", ".raw", 4, 300, 128};
  const std::uint64_t host_mem = 4 * 128 * 128 * 4;
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string file = file_of(d, c), spec = spec_of(d, c);
  const auto run = [&](ResumeMode mode, std::uint64_t per_batch) {
    auto m = open_inplace(spec, open_of(c));
    auto w = open_inplace_journal(*m, file, mode, 1);  // the smallest recovery buffers
    batched_engine(*m, *w, host_mem, per_batch);
  };
  for (std::uint64_t per_batch : {2, 4, 6}) {
    for (std::uint64_t k = 0;; ++k) {
      write_file(file, pristine);
      const int st = in_child([&] { run(ResumeMode::fresh, per_batch); }, crash_at_hit(k));
      if (st == 0) break;
      ASSERT_EQ(st, kCrashed);
      const std::string what = std::to_string(per_batch) + " pairs a batch, crash at point " + std::to_string(k);
      if (k <= 1) {  // before the journal was named (marked, created): untouched, nothing left, start over
        ASSERT_FALSE(exists(journal_path(file))) << what;
        ASSERT_TRUE(file_bytes(file) == pristine) << what;
        ASSERT_EQ(d.entries(), std::vector<std::string>{"m.raw"}) << what;
        run(ResumeMode::fresh, per_batch);
      }
      if (exists(journal_path(file))) {
        // The resumed run may batch differently: batches only need to be consecutive.
        try {
          run(ResumeMode::resume, per_batch == 6 ? 1 : per_batch + 1);
        } catch (const Error& e) {
          FAIL() << what << ": " << e.what();
        }
      }
      ASSERT_TRUE(read_matrix(d, c) == want) << what;
      ASSERT_EQ(d.entries(), std::vector<std::string>{"m.raw"}) << what;
    }
  }
}

TEST(JournalBatches, WriterRefusesBatchesThatDoNotContinueThePlan) {
  Dir d;
  const Case c{"raw_f32_n40", ".raw", 4, 40, 8};
  create(d, c);
  auto m = open_inplace(spec_of(d, c), open_of(c));
  auto w = open_inplace_journal(*m, file_of(d, c), ResumeMode::fresh);
  const PairGrid plan = PairGrid::with_block(40, 8);
  w->begin(plan);
  Bytes tile(8 * 8 * 4);
  const TilePair p1 = plan.pair(1);
  // Pair 1 before pair 0; a diagonal pair with a new_a; finish() before the end.
  EXPECT_THROW(w->write_batch(*m, {PairWrite{1, p1, tile.data(), tile.data()}}), Error);
  EXPECT_THROW(w->write_batch(*m, {PairWrite{0, plan.pair(0), tile.data(), tile.data()}}), Error);
  EXPECT_THROW(w->finish(*m), Error);
  EXPECT_TRUE(read_matrix(d, c) == pattern_of(c)) << "nothing may be written";
  EXPECT_TRUE(exists(journal_path(file_of(d, c))));
}

}  // namespace
}  // namespace gt

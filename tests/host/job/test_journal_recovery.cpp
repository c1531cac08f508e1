// The in-place journal (journal.hpp) when what it left is damaged or not
// its own: its checksum; torn journal data and torn headers; a journal for
// another file, shape, element size or dataset; the job's refusals and
// messages, and the plain writer without a journal. Crashes at every point
// of the protocol are in test_journal_crash.cpp.
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

// --- torn journal writes ---------------------------------------------------------

// The header copy with the higher sequence number (the latest), and its offset.
std::uint64_t latest_header_offset(const std::string& journal) {
  const Bytes j = file_bytes(journal);
  std::uint64_t seq[2] = {0, 0};
  std::memcpy(&seq[0], j.data() + 16, 8);  // magic 8, version 4, size 4, then seq
  std::memcpy(&seq[1], j.data() + 4096 + 16, 8);
  return seq[1] > seq[0] ? 4096 : 0;
}

void flip_byte(const std::string& path, std::uint64_t off) {
  Bytes b = file_bytes(path);
  ASSERT_LT(off, b.size());
  b[off] ^= 0x40;
  write_file(path, b);
}

TEST(JournalTorn, DataInPhaseSavedMeansTheBatchStartsOver) {
  const Case c{"raw_f32_n37", ".raw", 4, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  // Stop with batch 3's "saved" header durable, then damage its data: the
  // matrix was not touched for that batch, so the run starts it over.
  for (std::uint64_t off : {std::uint64_t(8192), std::uint64_t(8192 + 8 * 8 * 4 - 1), std::uint64_t(8192 + 100)}) {
    write_file(file, pristine);
    ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(Point::saved_synced, 3)), kCrashed);
    flip_byte(journal, off);
    const RunReport r = run_job(job_of(d, c, true));
    bool noted = false;
    for (const auto& n : r.notes) noted = noted || n.find("resumed from the journal: 3 of") != std::string::npos;
    EXPECT_TRUE(noted) << "the run should go on from batch 3";
    resume_and_check(d, c, want, "torn data at " + std::to_string(off));
  }
  // A crash between the data and its header: the latest header (batch 3's
  // "a_written") no longer matches the data area, which tells recovery that
  // batch 3 was complete.
  write_file(file, pristine);
  ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(Point::data_written, 4)), kCrashed);
  resume_and_check(d, c, want, "crash between the data and its header");
}

TEST(JournalTorn, HeaderFallsBackToTheOtherCopy) {
  const Case c{"raw_u16_n37", ".raw", 2, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed_pattern_of(c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  // A torn "a_written" header: the "saved" one before it redoes step 2.
  // A torn "saved" header: the previous batch's "a_written" one, whose data
  // the new batch overwrote, says that batch is complete.
  for (Point p : {Point::a_marked, Point::saved_written}) {
    for (std::uint64_t k : {0, 2, 5}) {
      write_file(file, pristine);
      ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(p, k)), kCrashed);
      flip_byte(journal, latest_header_offset(journal) + 40);
      resume_and_check(d, c, want, "torn header at point " + std::to_string(int(p)) + " of batch " + std::to_string(k));
    }
  }
}

TEST(JournalTorn, BothHeadersBadIsRefusedAndTheMatrixKept) {
  const Case c{"raw_f32_n37", ".raw", 4, 37, 8};
  Dir d;
  create(d, c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(Point::b_tile, 2)), kCrashed);
  flip_byte(journal, 30);
  flip_byte(journal, 4096 + 30);
  const Bytes before = file_bytes(file);
  const Error e = catch_error([&] { run_job(job_of(d, c, true)); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
  EXPECT_TRUE(file_bytes(file) == before) << "the matrix changed";
  EXPECT_TRUE(exists(journal)) << "a journal is never removed unless the run finished";
}

// --- identity -------------------------------------------------------------------------

TEST(JournalIdentity, AnotherFileShapeElementSizeOrDatasetIsRefused) {
  Dir d;
  const Case c{"raw_f32_n40", ".raw", 4, 40, 8};
  create(d, c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(Point::a_tile, 4)), kCrashed);
  const Bytes interrupted = file_bytes(file), j = file_bytes(journal);

  const auto expect_refused = [&](const JobOptions& o, const std::string& needle, const std::string& target) {
    const Bytes before = file_bytes(target);
    const Error e = catch_error([&] { run_job(o); });
    EXPECT_EQ(e.kind(), ErrorKind::input) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    EXPECT_TRUE(file_bytes(target) == before) << needle << ": the matrix changed";
  };

  // Another file with the same content, given the journal.
  const std::string other = d / "other.raw";
  write_file(other, interrupted);
  write_file(journal_path(other), j);
  JobOptions o = job_of(d, c, true);
  o.input = other;
  expect_refused(o, "another file", other);
  fs::remove(journal_path(other));
  fs::remove(other);

  // The same file read with another shape (1600 bytes a row: 80x80 u8 is 6400 bytes too).
  o = job_of(d, c, true);
  o.open.shape = Shape{80, 80};
  o.open.dtype = DType::u8;
  expect_refused(o, "a 40x40 matrix, not 80x80", file);

  // Another element size for the same shape: the matrix as a library user
  // might present it, through the journal directly.
  struct Relabelled : InplaceMatrix {
    MatrixInfo i;
    Location l;
    const MatrixInfo& info() const override { return i; }
    const Location& location() const override { return l; }
    void read(std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, void*, std::uint64_t) override {
      ADD_FAILURE() << "read";
    }
    void write(std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, const void*, std::uint64_t) override {
      ADD_FAILURE() << "write";
    }
    void flush() override { ADD_FAILURE() << "flush"; }
    std::string describe() const override { return "relabelled"; }
  } fake;
  fake.i = info_of({40, 40}, DType::u16);
  fake.l = parse_location(file);
  const Error e = catch_error([&] { (void)open_inplace_journal(fake, file, ResumeMode::resume); });
  EXPECT_NE(std::string(e.what()).find("4-byte elements, not 2-byte"), std::string::npos) << e.what();

  // The right matrix still resumes.
  const Bytes want = transposed_pattern_of(c);
  resume_and_check(d, c, want, "after the refusals");
}

TEST(JournalIdentity, AnotherDatasetOfTheSameFileIsRefused) {
  Dir d;
  const Case c{"h5_f32_n30", ".h5", 4, 30, 8};
  create(d, c);
  // A second dataset /g/y, the same shape, in the same file.
  {
    const Bytes m = pattern_matrix(c.n, c.n, c.es, kSeed + 1);
    hid_t f = H5Fopen(file_of(d, c).c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    hsize_t dims[2] = {c.n, c.n};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t ds = H5Dcreate2(f, "/g/y", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(H5Dwrite(ds, H5T_IEEE_F32LE, H5S_ALL, H5S_ALL, H5P_DEFAULT, m.data()), 0);
    H5Dclose(ds);
    H5Sclose(space);
    H5Fclose(f);
  }
  ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(Point::b_tile, 3)), kCrashed);
  JobOptions o = job_of(d, c, true);
  o.input = file_of(d, c) + ":/g/y";
  const Error e = catch_error([&] { run_job(o); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("dataset /g/x, not /g/y"), std::string::npos) << e.what();
  // /g/y untouched, /g/x finishes.
  auto y = open_source(file_of(d, c) + ":/g/y", {});
  Bytes got(c.n * c.n * c.es);
  y->read(0, 0, c.n, c.n, got.data(), c.n);
  EXPECT_TRUE(got == pattern_matrix(c.n, c.n, c.es, kSeed + 1)) << "/g/y changed";
  y.reset();
  run_job(job_of(d, c, true));
  EXPECT_TRUE(read_matrix(d, c) == transposed_pattern_of(c));
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
                                       "): rerun with resume to finish it");
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

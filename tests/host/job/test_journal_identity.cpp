// Whose journal is whose (journal.hpp): a journal belongs to a file by
// device and inode, whatever path names it. The hostile cases: a run
// interrupted through a symlink and then started through the real name (or
// the other way round), through a hard link in another folder, after a
// rename; a journal for another file, shape, element size or dataset; other
// commands on a file with a pending journal; two runs at once (locks).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/journal.hpp"
#include "host/job/journal_test_util.hpp"
#include "support/errors.hpp"
#include "support/reference.hpp"

namespace gt {
namespace {

namespace fs = std::filesystem;
using namespace journal_test;
using test::catch_error;
using test::file_bytes;

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

// --- any name finds the journal ------------------------------------------------------

const Case kRaw{"raw_f32_n37", ".raw", 4, 37, 8};

JobOptions job_on(const Dir& d, const std::string& path, bool resume) {
  JobOptions o = job_of(d, kRaw, resume);
  o.input = path;
  return o;
}

Bytes read_at(const std::string& path) {
  auto src = open_source(path, open_of(kRaw));
  Bytes out(kRaw.n * kRaw.n * kRaw.es);
  src->read(0, 0, kRaw.n, kRaw.n, out.data(), kRaw.n);
  return out;
}

// Interrupts an in-place run on `first`, then checks that a fresh run
// through `second` is refused (the matrix unchanged by it) and that a
// resumed run through `second` finishes bit-exact and leaves no journal.
void interrupt_then_finish_through(const Dir& d, const std::string& first, const std::string& second,
                                   const std::string& what) {
  write_file(first, pattern_of(kRaw));
  ASSERT_EQ(in_child([&] { run_job(job_on(d, first, false)); }, crash_at_point(Point::b_tile, 3)), kCrashed) << what;
  const Bytes interrupted = file_bytes(first);
  const Error e = catch_error([&] { run_job(job_on(d, second, false)); });
  EXPECT_EQ(e.kind(), ErrorKind::input) << what;
  EXPECT_NE(e.message().find("rerun with {in_place} {resume}"), std::string::npos) << what << ": " << e.what();
  EXPECT_TRUE(file_bytes(first) == interrupted) << what << ": the refused run wrote";
  try {
    run_job(job_on(d, second, true));
  } catch (const Error& err) {
    FAIL() << what << ": resume failed: " << err.what();
  }
  EXPECT_TRUE(read_at(first) == transposed_pattern_of(kRaw)) << what << ": not the transpose";
  EXPECT_TRUE(find_journal(first).empty() && find_journal(second).empty()) << what << ": a journal is left";
  char v[8];
  EXPECT_LT(::getxattr(first.c_str(), "user.gtranspose.journal", v, sizeof v), 0) << what << ": the mark is left";
}

TEST(JournalIdentity, ThroughASymlinkAndTheRealNameAlike) {
  Dir d;
  fs::create_directories(d / "a");
  fs::create_directories(d / "b");
  const std::string real = d / "b/real.raw", link = d / "a/link.raw";
  write_file(real, pattern_of(kRaw));
  fs::create_symlink(real, link);
  EXPECT_EQ(journal_path(link), real + ".gtjournal") << "named after the file, not the link";
  interrupt_then_finish_through(d, link, real, "link, then the real name");
  interrupt_then_finish_through(d, real, link, "real name, then the link");
  std::vector<std::string> in_a;
  for (const auto& e : fs::directory_iterator(d / "a")) in_a.push_back(e.path().filename().string());
  EXPECT_EQ(in_a, std::vector<std::string>{"link.raw"}) << "nothing was made beside the link";
}

TEST(JournalIdentity, ThroughAHardLinkInAnotherFolder) {
  Dir d;
  fs::create_directories(d / "a");
  fs::create_directories(d / "b");
  const std::string one = d / "b/m.raw", two = d / "a/h.raw";
  write_file(one, pattern_of(kRaw));
  fs::create_hard_link(one, two);
  // The journal is named after one name only; the file's mark names it for the other.
  interrupt_then_finish_through(d, two, one, "the link, then the first name");
  interrupt_then_finish_through(d, one, two, "the first name, then the link");
}

struct NoXattrs {
  NoXattrs() { journal_detail::set_xattrs_unsupported(true); }
  ~NoXattrs() { journal_detail::set_xattrs_unsupported(false); }
};

TEST(JournalIdentity, HardLinksWithoutExtendedAttributesAreRefusedInPlace) {
  NoXattrs off;
  Dir d;
  const std::string one = d / "m.raw", two = d / "h.raw";
  write_file(one, pattern_of(kRaw));
  fs::create_hard_link(one, two);
  const Error e = catch_error([&] { run_job(job_on(d, one, false)); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("has 2 names (hard links)"), std::string::npos) << e.what();
  EXPECT_TRUE(file_bytes(one) == pattern_of(kRaw));
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"h.raw", "m.raw"})) << "no journal may be made";
  // One name again: in place goes.
  fs::remove(two);
  run_job(job_on(d, one, false));
  EXPECT_TRUE(read_at(one) == transposed_pattern_of(kRaw));
}

TEST(JournalIdentity, ARenamedFileFindsItsJournal) {
  Dir d;
  fs::create_directories(d / "x");
  for (bool xattrs : {false, true}) {
    SCOPED_TRACE(xattrs ? "with a mark" : "without extended attributes");
    journal_detail::set_xattrs_unsupported(!xattrs);
    const std::string before = d / "m.raw", after = xattrs ? d / "x/moved.raw" : d / "moved.raw";
    write_file(before, pattern_of(kRaw));
    ASSERT_EQ(in_child([&] { run_job(job_on(d, before, false)); }, crash_at_point(Point::a_tile, 2)), kCrashed);
    fs::rename(before, after);
    // Without a mark only a journal beside the file can be found (by its inode).
    EXPECT_EQ(find_journal(after), before + ".gtjournal");
    EXPECT_NE(catch_error([&] { run_job(job_on(d, after, false)); }).message().find("{resume}"), std::string::npos);
    run_job(job_on(d, after, true));
    EXPECT_TRUE(read_at(after) == transposed_pattern_of(kRaw));
    EXPECT_FALSE(exists(before + ".gtjournal"));
    fs::remove(after);
  }
  journal_detail::set_xattrs_unsupported(false);
}

// --- every other command waits for the pending journal ---------------------------------

TEST(JournalPending, OutOfPlaceNeitherReadsNorReplacesAPartlyTransposedFile) {
  Dir d;
  const Bytes pristine = create(d, kRaw);
  const std::string file = file_of(d, kRaw), other = d / "other.raw", out = d / "out.raw";
  write_file(other, pristine);
  ASSERT_EQ(in_child([&] { run_job(job_of(d, kRaw, false)); }, crash_at_point(Point::b_tile, 4)), kCrashed);
  const Bytes interrupted = file_bytes(file);

  JobOptions read = job_of(d, kRaw, false);
  read.in_place = false;
  read.output = out;
  Error e = catch_error([&] { run_job(read); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(e.message().find("cannot read " + file + ": an in-place run on it was interrupted"), std::string::npos)
      << e.what();
  EXPECT_NE(e.message().find("{in_place} {resume}"), std::string::npos) << e.what();
  EXPECT_FALSE(exists(out)) << "an output from a half-transposed matrix";

  JobOptions replace = read;
  replace.input = other;
  replace.output = file;
  replace.sink.force = true;
  e = catch_error([&] { run_job(replace); });
  EXPECT_NE(e.message().find("cannot replace " + file), std::string::npos) << e.what();
  EXPECT_TRUE(file_bytes(file) == interrupted) << "the partly transposed file was replaced";

  run_job(job_of(d, kRaw, true));
  EXPECT_NO_THROW(run_job(read)) << "once finished, it reads";
}

TEST(JournalPending, AStaleMarkDoesNotBlock) {
  Dir d;
  create(d, kRaw);
  const std::string file = file_of(d, kRaw);
  // A mark whose journal is gone (a crash right after the journal's removal).
  const std::string gone = file + ".gtjournal";
  ASSERT_EQ(::setxattr(file.c_str(), "user.gtranspose.journal", gone.data(), gone.size(), 0), 0);
  EXPECT_TRUE(find_journal(file).empty());
  run_job(job_of(d, kRaw, false));
  EXPECT_TRUE(read_matrix(d, kRaw) == transposed_pattern_of(kRaw));
}

// --- one run at a time --------------------------------------------------------------------

TEST(JournalLock, TwoRunsNeverShareAFileTransposedInPlace) {
  Dir d;
  const Bytes pristine = create(d, kRaw);
  const std::string file = file_of(d, kRaw);
  JobOptions read = job_of(d, kRaw, false);
  read.in_place = false;
  read.output = d / "out.raw";
  {
    const FileLock other = lock_file(file, true);  // another process transposing it in place
    ASSERT_TRUE(other.held());
    for (const JobOptions& o : {job_of(d, kRaw, false), read}) {
      const Error e = catch_error([&] { run_job(o); });
      EXPECT_EQ(e.kind(), ErrorKind::input);
      EXPECT_EQ(e.message(), "another gtranspose is transposing " + file + " in place: wait for it to finish");
    }
  }
  {
    const FileLock reader = lock_file(file, false);  // another process reading it
    const Error e = catch_error([&] { run_job(job_of(d, kRaw, false)); });
    EXPECT_NE(e.message().find("another gtranspose is reading " + file), std::string::npos) << e.what();
    EXPECT_NO_THROW(run_job(read)) << "two readers share it";
  }
  EXPECT_TRUE(file_bytes(file) == pristine) << "a refused run wrote";
  run_job(job_of(d, kRaw, false));
  EXPECT_TRUE(read_matrix(d, kRaw) == transposed_pattern_of(kRaw));
}
}  // namespace
}  // namespace gt

// The in-place journal (journal.hpp): a run stopped at every step of the
// protocol, in a forked child that _exit()s right there (what kill -9 leaves:
// the page cache keeps every write that returned, nothing else happens), then
// resumed and compared bit-exact with the transpose. Raw, .npy and HDF5
// (contiguous, chunked without filters), every element size, odd n (edge pairs
// whose tiles are not square), n = 1; a crash during recovery itself; torn
// journal data and torn headers; a journal for another matrix; the job's
// messages; batches of several pairs, as the CUDA engine writes them.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gtranspose/cpu_transpose.hpp"
#include "gtranspose/engine.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/journal.hpp"
#include "host/formats/formats_test_util.hpp"
#include "inplace/journal_detail.hpp"
#include "support/engines.hpp"

namespace gt {
namespace {

namespace fs = std::filesystem;
using journal_detail::Point;
using test::catch_error;
using test::info_of;
using test::MemSource;
using test::pattern_matrix;
using test::transposed;
using Bytes = std::vector<unsigned char>;

constexpr int kCrashed = 42;  // a child's exit status when the hook stopped it
constexpr std::uint64_t kSeed = 77;

// A folder for one test's files, on tmpfs where there is one: the journal
// syncs four times a pair and these tests run thousands of pairs.
class Dir {
 public:
  Dir() {
    std::string base = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : fs::temp_directory_path().string();
    std::string tmpl = base + "/gt-journal-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~Dir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  std::vector<std::string> entries() const {
    std::vector<std::string> r;
    for (const auto& e : fs::directory_iterator(path_)) r.push_back(e.path().filename().string());
    std::sort(r.begin(), r.end());
    return r;
  }

 private:
  std::string path_;
};

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

// Rewrites a file in place (same inode, as the journal's identity wants).
void write_file(const std::string& path, const Bytes& bytes) {
  std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
  if (!f) f.open(path, std::ios::binary | std::ios::out);
  f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  f.close();
  if (!f || ::truncate(path.c_str(), off_t(bytes.size())) != 0) throw std::runtime_error("cannot write " + path);
}

DType dtype_for(std::size_t es) {
  switch (es) {
    case 1: return DType::u8;
    case 2: return DType::u16;
    case 4: return DType::f32;
    case 8: return DType::f64;
    default: return DType::c128;
  }
}

// One matrix to transpose in place.
struct Case {
  std::string name;
  std::string ext;          // ".raw", ".npy", ".h5"
  std::size_t es = 4;
  std::uint64_t n = 37;
  std::uint64_t block = 8;  // the tile side the CPU engine's budget gives
  std::uint64_t chunk = 0;  // HDF5: chunk side (0: contiguous), no filters
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

std::string file_of(const Dir& d, const Case& c) { return d / ("m" + c.ext); }
std::string spec_of(const Dir& d, const Case& c) { return file_of(d, c) + (c.ext == ".h5" ? ":/g/x" : ""); }

OpenOptions open_of(const Case& c) {
  OpenOptions o;
  if (c.ext == ".raw") {
    o.shape = Shape{c.n, c.n};
    o.dtype = dtype_for(c.es);
  }
  return o;
}

// Writes the pattern matrix; returns the file's bytes, to restore it.
Bytes create(const Dir& d, const Case& c) {
  const Bytes m = pattern_matrix(c.n, c.n, c.es, kSeed);
  if (c.ext != ".h5" || c.chunk == 0) {
    MemSource src(info_of({c.n, c.n}, dtype_for(c.es)), m);
    auto sink = create_sink(spec_of(d, c), src, SinkOptions{true});
    sink->write(0, 0, c.n, c.n, m.data(), c.n);  // square: the "transpose" of the shape is the shape
    sink->commit();
  } else {
    const hid_t types[] = {H5T_STD_U8LE, H5T_STD_U16LE, 0, H5T_IEEE_F32LE, 0, 0, 0, H5T_IEEE_F64LE};
    hid_t f = H5Fcreate(file_of(d, c).c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {c.n, c.n}, chunk[2] = {std::min(c.chunk, c.n), std::min(c.chunk + 2, c.n)};
    hid_t space = H5Screate_simple(2, dims, nullptr);
    hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(lcpl, 1);
    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    H5Pset_chunk(dcpl, 2, chunk);
    hid_t ds = H5Dcreate2(f, "/g/x", types[c.es - 1], space, lcpl, dcpl, H5P_DEFAULT);
    EXPECT_GE(H5Dwrite(ds, types[c.es - 1], H5S_ALL, H5S_ALL, H5P_DEFAULT, m.data()), 0);
    H5Dclose(ds);
    H5Pclose(dcpl);
    H5Pclose(lcpl);
    H5Sclose(space);
    H5Fclose(f);
  }
  return read_file(file_of(d, c));
}

Bytes read_matrix(const Dir& d, const Case& c) {
  auto src = open_source(spec_of(d, c), open_of(c));
  Bytes out(c.n * c.n * c.es);
  src->read(0, 0, c.n, c.n, out.data(), c.n);
  return out;
}

// The host budget under which the CPU engine plans c.block-sided tiles
// (plus what an HDF5 chunk cache takes out of it first).
std::uint64_t budget_of(const Case& c) {
  std::uint64_t b = 5 * c.block * c.block * c.es;
  if (c.chunk) b += std::min(c.chunk, c.n) * std::min(c.chunk + 2, c.n) * c.es;
  return b;
}

JobOptions job_of(const Dir& d, const Case& c, bool resume) {
  JobOptions o;
  o.input = spec_of(d, c);
  o.in_place = true;
  o.resume = resume;
  o.open = open_of(c);
  o.engine = EngineChoice::cpu;
  o.run.host_mem = budget_of(c);
  o.run.threads = 1;  // no thread pool in the parent: the children are forked from it
  return o;
}

// Runs fn in a forked child with `hook` installed; returns its exit status
// (kCrashed when the hook stopped it, 0 when fn returned, 3 when it threw).
int in_child(const std::function<void()>& fn, std::function<void(Point)> hook) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    journal_detail::set_hook(std::move(hook));
    int code = 0;
    try {
      fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
      code = 3;
    }
    ::_exit(code);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// A hook that stops the process at its k-th call.
std::function<void(Point)> crash_at_hit(std::uint64_t k) {
  return [k, n = std::uint64_t(0)](Point) mutable {
    if (n++ == k) ::_exit(kCrashed);
  };
}

// A hook that stops the process the k-th time it passes point p.
std::function<void(Point)> crash_at_point(Point p, std::uint64_t k) {
  return [p, k, n = std::uint64_t(0)](Point q) mutable {
    if (q == p && n++ == k) ::_exit(kCrashed);
  };
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Finishes an interrupted run (if the journal survived) and checks the result.
void resume_and_check(const Dir& d, const Case& c, const Bytes& want, const std::string& what) {
  const std::string j = journal_path(file_of(d, c));
  if (exists(j)) {
    try {
      run_job(job_of(d, c, true));
    } catch (const Error& e) {
      FAIL() << what << ": --resume failed: " << e.what();
    }
  }
  EXPECT_FALSE(exists(j)) << what << ": the journal is still there";
  ASSERT_TRUE(read_matrix(d, c) == want) << what << ": not the transpose";
  EXPECT_EQ(d.entries(), std::vector<std::string>{"m" + c.ext}) << what << ": stray files";
}

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

// --- a crash at every point of the protocol ----------------------------------------

class JournalCrash : public ::testing::TestWithParam<Case> {};

TEST_P(JournalCrash, AtEveryPointThenResume) {
  const Case& c = GetParam();
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed(pattern_matrix(c.n, c.n, c.es, kSeed), c.n, c.n, c.es);
  const std::string file = file_of(d, c);

  // An uninterrupted run first: the plan is what the case says.
  const RunReport full = run_job(job_of(d, c, false));
  ASSERT_EQ(full.tile_shape.rows, c.block) << "the budget does not give the case's tiles";
  ASSERT_TRUE(read_matrix(d, c) == want);
  EXPECT_FALSE(exists(journal_path(file)));

  std::uint64_t k = 0;
  for (;; ++k) {
    write_file(file, pristine);
    const int st = in_child([&] { run_job(job_of(d, c, false)); }, crash_at_hit(k));
    if (st == 0) break;  // the run passed fewer than k + 1 points: every one has been tried
    ASSERT_EQ(st, kCrashed) << "crash point " << k;
    if (k == 0) {
      // Point::created: the journal's header is durable but the journal has
      // no name yet, so there is nothing to resume and nothing left over: the
      // matrix is untouched and a plain run starts over.
      ASSERT_FALSE(exists(journal_path(file))) << c.name << ": a journal before it was named";
      ASSERT_TRUE(read_matrix(d, c) == pattern_matrix(c.n, c.n, c.es, kSeed))
          << c.name << ": the matrix changed before the journal was named";
      ASSERT_EQ(d.entries(), std::vector<std::string>{"m" + c.ext}) << c.name << ": stray files";
      run_job(job_of(d, c, false));
    }
    resume_and_check(d, c, want, c.name + ", crash at point " + std::to_string(k));
    if (HasFatalFailure()) return;
  }
  // Created, named, begun, 3 per batch and at least 4 more per off-diagonal pair, finish.
  const std::uint64_t t = (c.n + c.block - 1) / c.block;
  EXPECT_GE(k, 5 + 7 * t * (t + 1) / 2) << "fewer protocol points than expected";
  resume_and_check(d, c, want, c.name + ", uninterrupted");
}

// A second crash while the first is being recovered, then a third run.
TEST_P(JournalCrash, DuringRecoveryToo) {
  const Case& c = GetParam();
  if (c.n < 10) GTEST_SKIP() << "the single crash test covers the smallest cases";
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed(pattern_matrix(c.n, c.n, c.es, kSeed), c.n, c.n, c.es);
  const std::string file = file_of(d, c), journal = journal_path(file);
  // First crashes inside the second off-diagonal pair's batch, at each step.
  for (Point p : {Point::saved_synced, Point::a_tile, Point::a_flushed, Point::a_marked_synced, Point::b_tile}) {
    write_file(file, pristine);
    ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(p, 1)), kCrashed);
    const Bytes m1 = read_file(file), j1 = read_file(journal);
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
                      Case{"h5_u16_n23_chunked", ".h5", 2, 23, 6, 5}),
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
  const Bytes want = transposed(pattern_matrix(c.n, c.n, c.es, kSeed), c.n, c.n, c.es);
  const std::string file = file_of(d, c), journal = journal_path(file);
  for (Point p : {Point::created, Point::named, Point::begun}) {
    const std::string what = "killed at point " + std::to_string(int(p));
    write_file(file, pristine);
    ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(p, 0)), kCrashed) << what;
    EXPECT_TRUE(read_file(file) == pristine) << what << ": the matrix changed";
    std::vector<std::string> left{"m.raw"};
    if (p != Point::created) left.push_back("m.raw.gtjournal");
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
  EXPECT_NE(std::string(e.what()).find("rerun with resume to finish it"), std::string::npos) << e.what();
  EXPECT_TRUE(read_file(journal) == Bytes{'x'}) << "the other journal was overwritten";
  EXPECT_TRUE(read_file(file) == pristine) << "the matrix changed";
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"m.raw", "m.raw.gtjournal"})) << "stray files";
}

// --- torn journal writes ---------------------------------------------------------

// The header copy with the higher sequence number (the latest), and its offset.
std::uint64_t latest_header_offset(const std::string& journal) {
  const Bytes j = read_file(journal);
  std::uint64_t seq[2] = {0, 0};
  std::memcpy(&seq[0], j.data() + 16, 8);  // magic 8, version 4, size 4, then seq
  std::memcpy(&seq[1], j.data() + 4096 + 16, 8);
  return seq[1] > seq[0] ? 4096 : 0;
}

void flip_byte(const std::string& path, std::uint64_t off) {
  Bytes b = read_file(path);
  ASSERT_LT(off, b.size());
  b[off] ^= 0x40;
  write_file(path, b);
}

TEST(JournalTorn, DataInPhaseSavedMeansTheBatchStartsOver) {
  const Case c{"raw_f32_n37", ".raw", 4, 37, 8};
  Dir d;
  const Bytes pristine = create(d, c);
  const Bytes want = transposed(pattern_matrix(c.n, c.n, c.es, kSeed), c.n, c.n, c.es);
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
  const Bytes want = transposed(pattern_matrix(c.n, c.n, c.es, kSeed), c.n, c.n, c.es);
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
  const Bytes before = read_file(file);
  const Error e = catch_error([&] { run_job(job_of(d, c, true)); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("damaged"), std::string::npos) << e.what();
  EXPECT_TRUE(read_file(file) == before) << "the matrix changed";
  EXPECT_TRUE(exists(journal)) << "a journal is never removed unless the run finished";
}

// --- identity -------------------------------------------------------------------------

TEST(JournalIdentity, AnotherFileShapeElementSizeOrDatasetIsRefused) {
  Dir d;
  const Case c{"raw_f32_n40", ".raw", 4, 40, 8};
  create(d, c);
  const std::string file = file_of(d, c), journal = journal_path(file);
  ASSERT_EQ(in_child([&] { run_job(job_of(d, c, false)); }, crash_at_point(Point::a_tile, 4)), kCrashed);
  const Bytes interrupted = read_file(file), j = read_file(journal);

  const auto expect_refused = [&](const JobOptions& o, const std::string& needle, const std::string& target) {
    const Bytes before = read_file(target);
    const Error e = catch_error([&] { run_job(o); });
    EXPECT_EQ(e.kind(), ErrorKind::input) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    EXPECT_TRUE(read_file(target) == before) << needle << ": the matrix changed";
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
  const Bytes want = transposed(pattern_matrix(c.n, c.n, c.es, kSeed), c.n, c.n, c.es);
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
  EXPECT_TRUE(read_matrix(d, c) == transposed(pattern_matrix(c.n, c.n, c.es, kSeed), c.n, c.n, c.es));
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
  const Bytes before = read_file(file);
  e = catch_error([&] { run_job(job_of(d, c, false)); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_EQ(std::string(e.what()), file + " has a journal from an interrupted in-place run (" + journal +
                                       "): rerun with resume to finish it");
  EXPECT_TRUE(read_file(file) == before);
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
  EXPECT_TRUE(read_matrix(d, c) == transposed(pattern_matrix(c.n, c.n, c.es, kSeed), c.n, c.n, c.es));
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
  EXPECT_TRUE(read_matrix(d, c) == transposed(pattern_matrix(c.n, c.n, c.es, kSeed), c.n, c.n, c.es));
  EXPECT_EQ(d.entries(), std::vector<std::string>{"m.raw"});
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
  for (std::uint64_t k = w.first_pair(); k < plan.count(); k += per_batch) {
    const std::uint64_t count = std::min(per_batch, plan.count() - k);
    std::vector<Bytes> in_a(count), in_b(count), out_a(count), out_b(count);
    std::vector<PairWrite> batch(count);
    for (std::uint64_t i = 0; i < count; ++i) {
      const TilePair p = plan.pair(k + i);
      in_a[i].resize(b * b * es);
      out_b[i].resize(b * b * es);
      m.read(p.a.r0, p.a.c0, p.a.h, p.a.w, in_a[i].data(), p.a.w);
      naive_transpose(in_a[i].data(), p.a.h, p.a.w, p.a.w, out_b[i].data(), p.a.h, es);
      batch[i] = {k + i, p, nullptr, out_b[i].data()};
      if (!p.diagonal()) {
        in_b[i].resize(b * b * es);
        out_a[i].resize(b * b * es);
        m.read(p.b.r0, p.b.c0, p.b.h, p.b.w, in_b[i].data(), p.b.w);
        naive_transpose(in_b[i].data(), p.b.h, p.b.w, p.b.w, out_a[i].data(), p.b.h, es);
        batch[i].new_a = out_a[i].data();
      }
    }
    w.write_batch(m, batch);
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
  const Bytes want = transposed(pattern_matrix(c.n, c.n, c.es, kSeed), c.n, c.n, c.es);
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
      if (k == 0) {  // before the journal was named (Point::created): untouched, nothing left, start over
        ASSERT_FALSE(exists(journal_path(file))) << what;
        ASSERT_TRUE(read_file(file) == pristine) << what;
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
  EXPECT_TRUE(read_matrix(d, c) == pattern_matrix(c.n, c.n, c.es, kSeed)) << "nothing may be written";
  EXPECT_TRUE(exists(journal_path(file_of(d, c))));
}

}  // namespace
}  // namespace gt

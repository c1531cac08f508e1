// What the journal tests share (test_journal_crash.cpp,
// test_journal_recovery.cpp): a matrix per case in a raw, .npy or HDF5 file,
// the job that transposes it in place, and runs in a forked child stopped at
// a point of the journal's protocol (what kill -9 leaves: the page cache
// keeps every write that returned, nothing else happens).
#pragma once
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <numeric>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/job.hpp"
#include "gtranspose/journal.hpp"
#include "gtranspose/plan.hpp"
#include "support/mem_source.hpp"
#include "support/reference.hpp"
#include "support/temp_dir.hpp"
#include "testing.hpp"

namespace gt::journal_test {

using journal_detail::Point;
using test::Bytes;
using test::info_of;
using test::MemSource;
using test::pattern_matrix;
using test::write_file;

constexpr int kCrashed = 42;  // a child's exit status when the hook stopped it
constexpr std::uint64_t kSeed = 77;

// A folder for one test's files, on tmpfs where there is one: the journal
// syncs twice a pair and these tests run thousands of pairs.
struct Dir : test::TempDir {
  Dir() : TempDir(Where::memory) {}
};

using test::dtype_for;

// One matrix to transpose in place.
struct Case {
  std::string name;
  std::string ext;          // ".raw", ".npy", ".h5"
  std::size_t es = 4;
  std::uint64_t n = 37;
  std::uint64_t block = 8;  // the tile side the CPU engine's budget gives
  std::uint64_t chunk = 0;  // HDF5: chunk side (0: contiguous), no filters
  std::uint64_t cols = 0;   // a rectangle's columns (n its rows); 0: square
  // A square (a rectangle's square blocks) in bands of whole rows (plan.hpp,
  // SquareBandPlan): `block` is then a band's rows (ceil(side /
  // kSquareBands) takes a budget that holds exactly it). Other squares take
  // tile pairs ({tile} given).
  bool bands = false;
  // A general shape (plan_inplace_shape: InplaceShape::general) has no
  // tiles: `block` is then how many of its longer side's rows or columns a
  // band holds (budget_of), so runs take many bands.
};
inline void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
inline std::uint64_t cols_of(const Case& c) { return c.cols ? c.cols : c.n; }
inline Shape shape_of(const Case& c) { return {c.n, cols_of(c)}; }

// The case's matrix as created, and its transpose: what a finished run leaves.
inline Bytes pattern_of(const Case& c) { return pattern_matrix(c.n, cols_of(c), c.es, kSeed); }
inline Bytes transposed_pattern_of(const Case& c) { return test::transposed(pattern_of(c), c.n, cols_of(c), c.es); }

inline std::string file_of(const Dir& d, const Case& c) { return d / ("m" + c.ext); }
inline std::string spec_of(const Dir& d, const Case& c) { return file_of(d, c) + (c.ext == ".h5" ? ":/g/x" : ""); }

inline OpenOptions open_of(const Case& c) {
  OpenOptions o;
  if (c.ext == ".raw") {
    o.shape = shape_of(c);
    o.dtype = dtype_for(c.es);
  }
  return o;
}

// Writes the pattern matrix; returns the file's bytes, to restore it.
inline Bytes create(const Dir& d, const Case& c) {
  const Bytes m = pattern_of(c);
  if (c.ext != ".h5" || c.chunk == 0) {
    // A sink writes its source's transpose's shape: the source says C x R.
    MemSource src(info_of(shape_of(c).transposed(), dtype_for(c.es)), m);
    auto sink = create_sink(spec_of(d, c), src, SinkOptions{true});
    sink->write(0, 0, c.n, cols_of(c), m.data(), cols_of(c));
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
  return test::file_bytes(file_of(d, c));
}

// The file's matrix as its format says (a finished .npy rectangle says the
// transpose's shape; a raw file is read with the case's).
inline Bytes read_matrix(const Dir& d, const Case& c, Shape* shape = nullptr) {
  auto src = open_source(spec_of(d, c), open_of(c));
  const Shape s = src->info().shape;
  Bytes out(s.rows * s.cols * c.es);
  src->read(0, 0, s.rows, s.cols, out.data(), s.cols);
  if (shape) *shape = s;
  return out;
}

// The file holds the transpose, and (a .npy) says its shape.
inline bool is_transposed(const Dir& d, const Case& c) {
  Shape s;
  const Bytes m = read_matrix(d, c, &s);
  return m == transposed_pattern_of(c) && (c.ext != ".npy" || s == shape_of(c).transposed());
}

inline bool is_general(const Case& c) {
  return plan_inplace_shape(shape_of(c), c.name).kind == InplaceShape::general;
}

// The host budget under which the CPU engine plans c.block-sided tiles
// (plus what an HDF5 chunk cache takes out of it first); for a general
// shape, two band buffers of c.block lines of its longer side.
inline std::uint64_t budget_of(const Case& c) {
  if (is_general(c)) return 2 * c.block * std::max(c.n, cols_of(c)) * c.es;
  const std::uint64_t chunk = c.chunk ? std::min(c.chunk, c.n) * std::min(c.chunk + 2, cols_of(c)) * c.es : 0;
  if (c.bands) {
    const std::uint64_t side = std::gcd(c.n, cols_of(c));  // the square blocks'
    return 4 * c.block * side * c.es + 2 * square_slot_bytes(c.block, c.es) + chunk;
  }
  std::uint64_t b = cpu_journaled_buffers(journal_batches_kept(kJournalGroup)) * c.block * c.block * c.es;
  return b + chunk;
}

inline JobOptions job_of(const Dir& d, const Case& c, bool resume) {
  JobOptions o;
  o.input = spec_of(d, c);
  o.in_place = true;
  o.resume = resume;
  o.open = open_of(c);
  o.engine = EngineChoice::cpu;
  o.run.host_mem = budget_of(c);
  // Squares and square blocks take tile pairs of the case's side unless it
  // is a case of bands.
  if (!c.bands && !is_general(c)) o.run.tile_elems = c.block * c.block;
  o.run.threads = 1;  // no thread pool in the parent: the children are forked from it
  return o;
}

// Runs fn in a forked child with `hook` installed; returns its exit status
// (kCrashed when the hook stopped it, 0 when fn returned, 3 when it threw).
inline int in_child(const std::function<void()>& fn, std::function<void(Point)> hook) {
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
inline std::function<void(Point)> crash_at_hit(std::uint64_t k) {
  return [k, n = std::uint64_t(0)](Point) mutable {
    if (n++ == k) ::_exit(kCrashed);
  };
}

// A hook that stops the process the k-th time it passes point p.
inline std::function<void(Point)> crash_at_point(Point p, std::uint64_t k) {
  return [p, k, n = std::uint64_t(0)](Point q) mutable {
    if (q == p && n++ == k) ::_exit(kCrashed);
  };
}

inline bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

// Finishes an interrupted run (if the journal survived) and checks the result.
inline void resume_and_check(const Dir& d, const Case& c, const Bytes& want, const std::string& what) {
  const std::string j = journal_path(file_of(d, c));
  if (exists(j)) {
    try {
      run_job(job_of(d, c, true));
    } catch (const Error& e) {
      FAIL() << what << ": --resume failed: " << e.what();
    }
  }
  EXPECT_FALSE(exists(j)) << what << ": the journal is still there";
  ASSERT_TRUE(read_matrix(d, c) == want && (want != transposed_pattern_of(c) || is_transposed(d, c)))
      << what << ": not the transpose";
  EXPECT_EQ(d.entries(), std::vector<std::string>{"m" + c.ext}) << what << ": stray files";
}

}  // namespace gt::journal_test

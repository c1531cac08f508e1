// A deterministic mutation test of HDF5 opening and reading: a fixed corpus
// of small valid files (contiguous, chunked, compressed, compact, 16-byte
// elements, attributes of every kind, soft, hard and external links,
// dimension scales and labels), a fixed seed, thousands of byte flips and
// truncations. Each case runs in a child process (fork): opening the
// mutated file, reading it in tiles and writing its transpose to an HDF5
// file must end in a gt::Error of one line, or in data equal bit for bit to
// what HDF5's own H5Dread gives for the same mutated file (checked in a
// second child). A crash, a hang, an internal error or a wrong result
// fails the test, but for one kind of crash: where HDF5's own reading of
// the same attributes (as h5dump -A and h5py do it) crashes too, in a third
// child, the defect is HDF5 1.10's (a damaged global heap); those are
// counted apart, and must stay rare.
//
// GT_HDF5_FUZZ_CASES overrides the number of cases (default 2000);
// GT_HDF5_FUZZ_SAVE=folder keeps the files of failing cases,
// GT_HDF5_FUZZ_FIRST=n starts at case n.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "formats_test_util.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "hdf5_test_util.hpp"

namespace gt::test {
namespace {

// As the CLI: HDF5 runs no shutdown at exit (an abandoned file would crash
// it: gtranspose/format.hpp). Set before any test starts HDF5.
const bool kAsTheCli = (hdf5_no_shutdown_at_exit(), true);

// Deterministic files: no object modification times.
hid_t no_times_dcpl() {
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_obj_track_times(dcpl, 0);
  return dcpl;
}

hid_t make(hid_t file, const char* name, hid_t type, std::vector<hsize_t> dims, hid_t dcpl, const void* data) {
  hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  hid_t lcpl = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(lcpl, 1);
  hid_t d = H5Dcreate2(file, name, type, space, lcpl, dcpl, H5P_DEFAULT);
  EXPECT_GE(d, 0) << name;
  EXPECT_GE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0) << name;
  H5Pclose(lcpl);
  H5Sclose(space);
  return d;
}

void attrs(hid_t obj) {
  hid_t scalar = H5Screate(H5S_SCALAR);
  const double x = 0.5;
  hid_t a = H5Acreate2(obj, "scale", H5T_IEEE_F64BE, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_DOUBLE, &x);
  H5Aclose(a);
  hid_t vstr = H5Tcopy(H5T_C_S1);
  H5Tset_size(vstr, H5T_VARIABLE);
  const char* note = "a note";
  a = H5Acreate2(obj, "note", vstr, scalar, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, vstr, &note);
  H5Aclose(a);
  hsize_t three = 3;
  hid_t vec = H5Screate_simple(1, &three, nullptr);
  const std::int16_t v[3] = {1, -2, 300};
  a = H5Acreate2(obj, "triple", H5T_STD_I16LE, vec, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, H5T_NATIVE_INT16, v);
  H5Aclose(a);
  H5Sclose(vec);
  H5Tclose(vstr);
  H5Sclose(scalar);
}

struct Seed {
  std::string file;
  std::string dataset;
};

// The corpus: each file small (a few KiB), each a different path through
// the reader: contiguous (positioned I/O), chunked (direct chunks),
// compressed (our codecs), compact and 16-byte opaque (the library path).
std::vector<Seed> make_corpus(const TempDir& dir) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::vector<Seed> seeds;
  auto file = [&](const std::string& name) {
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    hid_t f = H5Fcreate((dir / name).c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    H5Pclose(fcpl);
    return f;
  };
  hid_t dcpl = no_times_dcpl();
  {
    const auto m = pattern_matrix(9, 7, 4, 1);
    hid_t f = file("contig.h5");
    hid_t d = make(f, "/x", H5T_STD_I32LE, {9, 7}, dcpl, m.data());
    attrs(d);
    H5Dclose(d);
    H5Fclose(f);
    seeds.push_back({"contig.h5", "/x"});
  }
  {
    const auto m = pattern_matrix(13, 11, 2, 2);
    hid_t f = file("chunked.h5");
    hid_t c = H5Pcopy(dcpl);
    const hsize_t chunk[2] = {4, 3};
    H5Pset_chunk(c, 2, chunk);
    hid_t d = make(f, "/g/x", H5T_STD_U16BE, {13, 11}, c, m.data());
    H5Lcreate_soft("/g/x", f, "/alias", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_hard(f, "/g/x", f, "/hard", H5P_DEFAULT, H5P_DEFAULT);
    H5Lcreate_external("elsewhere.h5", "/y", f, "/ext", H5P_DEFAULT, H5P_DEFAULT);
    H5Dclose(d);
    H5Pclose(c);
    H5Fclose(f);
    seeds.push_back({"chunked.h5", "/g/x"});
  }
  {
    const auto m = pattern_matrix(10, 12, 8, 3);
    hid_t f = file("deflate.h5");
    hid_t c = H5Pcopy(dcpl);
    const hsize_t chunk[2] = {5, 4};
    H5Pset_chunk(c, 2, chunk);
    H5Pset_shuffle(c);
    H5Pset_deflate(c, 4);
    hid_t d = make(f, "/z", H5T_IEEE_F64LE, {10, 12}, c, m.data());
    attrs(d);
    H5Dclose(d);
    H5Pclose(c);
    H5Fclose(f);
    seeds.push_back({"deflate.h5", "/z"});
  }
  {
    const auto m = pattern_matrix(6, 5, 4, 4);
    hid_t f = file("scales.h5");
    hid_t d = make(f, "/v", H5T_IEEE_F32LE, {6, 5}, dcpl, m.data());
    const auto r = pattern_matrix(1, 6, 8, 5), c = pattern_matrix(1, 5, 2, 6);
    hid_t rows = make(f, "/rows", H5T_STD_I64LE, {6}, dcpl, r.data());
    hid_t cols = make(f, "/grid/cols", H5T_STD_U16LE, {5}, dcpl, c.data());
    H5DSset_scale(rows, "rows");
    H5DSset_scale(cols, "cols");
    H5DSattach_scale(d, rows, 0);
    H5DSattach_scale(d, cols, 1);
    H5DSset_label(d, 0, "y");
    H5DSset_label(d, 1, "x");
    H5Dclose(rows);
    H5Dclose(cols);
    H5Dclose(d);
    H5Fclose(f);
    seeds.push_back({"scales.h5", "/v"});
  }
  {
    const auto m = pattern_matrix(4, 6, 1, 7);
    const auto o = pattern_matrix(3, 4, 16, 8);
    hid_t f = file("compact.h5");
    hid_t c = H5Pcopy(dcpl);
    H5Pset_layout(c, H5D_COMPACT);
    hid_t d = make(f, "/c", H5T_STD_U8LE, {4, 6}, c, m.data());
    H5Dclose(d);
    hid_t opaque = H5Tcreate(H5T_OPAQUE, 16);
    H5Tset_tag(opaque, "sixteen bytes");
    d = make(f, "/grp/o", opaque, {3, 4}, dcpl, o.data());
    attrs(d);
    H5Dclose(d);
    H5Tclose(opaque);
    H5Pclose(c);
    H5Fclose(f);
    seeds.push_back({"compact.h5", "/c"});
    seeds.push_back({"compact.h5", "/grp/o"});
  }
  H5Pclose(dcpl);
  return seeds;
}

std::string bytes_of(const std::string& path) { return file_contents(path); }
void put(const std::string& path, const std::string& s) { std::ofstream(path, std::ios::binary).write(s.data(), std::streamsize(s.size())); }

// What a child ended with.
enum Outcome {
  kError = 20,      // a gt::Error of one line: fine
  kDone = 21,       // transposed and committed: the reference decides
  kBigClaim = 22,   // opened, claims a shape too large to compare: its first and last tiles read
  kBadError = 23,   // an internal error, an empty or multi-line message, another exception
  kMatch = 30,      // the reference agrees bit for bit
  kMismatch = 31,   // it does not
  kRefFails = 32,   // HDF5 refuses to read what gtranspose read
  kHdf5Reads = 40,  // HDF5 reads the dataset's and the root's attributes without crashing
  kHdf5Crash = 41,  // ours crashed, and so does HDF5's own attribute read of the same file
};

// Waits for `pid`, which set an alarm on itself (a hang ends by SIGALRM):
// the exit status, or -signal.
int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) return -WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -999;
}
constexpr unsigned kHangSeconds = 20;

// gtranspose's own path over the mutated file: an Outcome.
int run_ours(const std::string& spec, const std::string& out, const std::string& name_file) {
  try {
    auto src = open_source(spec, {});
    const MatrixInfo info = src->info();
    put(name_file, src->location().dataset);
    const std::uint64_t rows = info.shape.rows, cols = info.shape.cols, es = info.elem_size;
    if (rows * cols * es > (4u << 20) || rows > (1u << 20) || cols > (1u << 20)) {
      std::vector<unsigned char> buf(16 * es);
      src->read(0, 0, std::min<std::uint64_t>(4, rows), std::min<std::uint64_t>(4, cols), buf.data(), 4);
      src->read(rows - 1, cols - 1, 1, 1, buf.data(), 1);
      return kBigClaim;
    }
    const auto data = read_tiled(*src, 4, 3);
    auto sink = create_sink(out, *src, {});
    write_tiled(*sink, transposed(data, rows, cols, es), cols, rows, es, 3, 5);
    sink->commit();
    return kDone;
  } catch (const Error& e) {
    const std::string m = e.message();
    if (e.kind() != ErrorKind::internal && !m.empty() && m.find('\n') == std::string::npos) return kError;
    put(name_file, m);
  } catch (const std::exception& e) {
    put(name_file, e.what());
  }
  return kBadError;
}

// The child. It ends by _Exit: with HDF5's shutdown off (as in the CLI)
// exit() would add only the sanitized build's leak check, and on a damaged
// file HDF5 1.10 leaks inside itself (the sanitizer shows allocations in
// libhdf5 alone), which no caller can free. The unmutated corpus runs in
// the test's own process, under that check.
[[noreturn]] void ours(const std::string& spec, const std::string& out, const std::string& name_file) {
  std::_Exit(run_ours(spec, out, name_file));
}

// The second child: HDF5's H5Dread of the same dataset of the mutated file,
// against the transposed output read back.
[[noreturn]] void reference(const std::string& path, const std::string& name, const std::string& out) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  auto read = [](const std::string& p, const std::string& n, std::vector<hsize_t>& dims) {
    std::vector<unsigned char> v;
    hid_t f = H5Fopen(p.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = f < 0 ? -1 : H5Dopen2(f, n.c_str(), H5P_DEFAULT);
    hid_t t = d < 0 ? -1 : H5Dget_type(d), s = d < 0 ? -1 : H5Dget_space(d);
    dims.assign(2, 0);
    if (s >= 0 && H5Sget_simple_extent_ndims(s) == 2 && H5Sget_simple_extent_dims(s, dims.data(), nullptr) == 2) {
      v.resize(dims[0] * dims[1] * H5Tget_size(t));
      if (H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0) v.clear();
    }
    return v;
  };
  std::vector<hsize_t> din, dout;
  const auto want = read(path, name, din);
  const auto got = read(out, name, dout);
  if (want.empty()) std::_Exit(kRefFails);
  const std::size_t es = want.size() / (din[0] * din[1]);
  std::_Exit(dout[0] == din[1] && dout[1] == din[0] && got == transposed(want, din[0], din[1], es) ? kMatch : kMismatch);
}

// A third child, for a case where ours crashed: what every HDF5 reader
// (h5ls -r, h5dump -A, h5py's attrs) does with the file: its links walked,
// each attribute of the root and of the dataset read through its native type. Where HDF5 itself
// crashes there too (1.10's global heap reads trust a damaged heap: a
// memcpy past its end in H5HG_read), the crash is HDF5's, not gtranspose's.
[[noreturn]] void hdf5_itself(const std::string& path, const std::string& name) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  // The walk of every link (h5ls -r), as finding the only 2-D dataset does.
  if (f >= 0)
    H5Lvisit(f, H5_INDEX_NAME, H5_ITER_INC, [](hid_t, const char*, const H5L_info_t*, void*) -> herr_t { return 0; },
             nullptr);
  for (const std::string& obj : {std::string("/"), name}) {
    hid_t o = f < 0 ? -1 : H5Oopen(f, obj.c_str(), H5P_DEFAULT);
    H5O_info_t oi{};
    if (o < 0 || H5Oget_info(o, &oi) < 0) continue;
    for (hsize_t k = 0; k < oi.num_attrs && k < 64; ++k) {
      hid_t a = H5Aopen_by_idx(o, ".", H5_INDEX_NAME, H5_ITER_INC, k, H5P_DEFAULT, H5P_DEFAULT);
      hid_t t = a < 0 ? -1 : H5Aget_type(a), s = a < 0 ? -1 : H5Aget_space(a);
      hid_t m = t < 0 ? -1 : H5Tget_native_type(t, H5T_DIR_DEFAULT);
      const hssize_t n = s < 0 ? -1 : H5Sget_simple_extent_npoints(s);
      if (m >= 0 && n > 0 && n < (1 << 20)) {
        std::vector<unsigned char> buf(std::size_t(n) * H5Tget_size(m) + 64);
        if (H5Aread(a, m, buf.data()) >= 0 && H5Tdetect_class(m, H5T_VLEN) > 0) H5Dvlen_reclaim(m, s, H5P_DEFAULT, buf.data());
      }
    }
  }
  std::_Exit(kHdf5Reads);
}

TEST(Hdf5Fuzz, MutatedFilesFailCleanlyOrReadBitExact) {
  TempDir dir(TempDir::Where::memory);  // each case's commit syncs
  const std::vector<Seed> seeds = make_corpus(dir);
  std::vector<std::string> originals;
  for (const Seed& s : seeds) originals.push_back(bytes_of(dir / s.file));
  for (const Seed& s : seeds) {  // the unmutated corpus transposes, bit for bit
    SCOPED_TRACE(s.file + ":" + s.dataset);
    auto src = open_source(dir / s.file + ":" + s.dataset, {});
    const auto data = read_tiled(*src, 4, 3);
    transpose_to(*src, dir / "ok.h5");
    const auto back = h5_read_all(dir / "ok.h5", s.dataset);
    EXPECT_EQ(back, transposed(data, src->info().shape.rows, src->info().shape.cols, src->info().elem_size));
    std::remove((dir / "ok.h5").c_str());
  }
  const char* env = std::getenv("GT_HDF5_FUZZ_CASES");
  const int cases = env ? std::atoi(env) : 2000;
  std::map<int, int> count;
  int failures = 0;
  const std::string mutated = dir / "m.h5", out = dir / "out.h5", name_file = dir / "name.txt";
  // GT_HDF5_FUZZ_FIRST=n starts at case n (to look at one case again).
  const char* first_env = std::getenv("GT_HDF5_FUZZ_FIRST");
  const int first = first_env ? std::atoi(first_env) : 0;
  for (int i = first; i < first + cases; ++i) {
    const std::size_t k = std::size_t(i) % seeds.size();
    std::mt19937_64 rng(0x9e3779b97f4a7c15ull ^ std::uint64_t(i));
    std::string bytes = originals[k];
    std::string how;
    if (rng() % 8 == 0) {
      bytes.resize(rng() % bytes.size());
      how = "truncated to " + std::to_string(bytes.size());
    } else {
      for (int n = 1 + int(rng() % 4); n > 0; --n) {
        const std::size_t at = rng() % bytes.size();
        bytes[at] = char(static_cast<unsigned char>(bytes[at]) ^ (1 + rng() % 255));
        how += "flip@" + std::to_string(at) + " ";
      }
    }
    put(mutated, bytes);
    std::remove(out.c_str());
    put(name_file, "");
    // Half the cases name the dataset, half let gtranspose find the only 2-D one.
    const std::string spec = (i / seeds.size()) % 2 ? mutated : mutated + ":" + seeds[k].dataset;
    pid_t pid = fork();
    if (pid == 0) {
      alarm(kHangSeconds);
      ours(spec, out, name_file);
    }
    int rc = wait_for(pid);
    if (rc == kDone) {
      pid = fork();
      if (pid == 0) {
        alarm(kHangSeconds);
        reference(mutated, file_contents(name_file), out);
      }
      rc = wait_for(pid);
    }
    if (rc < 0) {  // a crash: HDF5's own, or ours?
      const std::string name = file_contents(name_file).empty() ? seeds[k].dataset : file_contents(name_file);
      pid = fork();
      if (pid == 0) {
        alarm(kHangSeconds);
        hdf5_itself(mutated, name);
      }
      if (wait_for(pid) < 0) rc = kHdf5Crash;
    }
    ++count[rc];
    if (rc != kError && rc != kBigClaim && rc != kMatch && rc != kHdf5Crash) {
      ++failures;
      ADD_FAILURE() << "case " << i << " (" << seeds[k].file << ", " << how << "): "
                    << (rc == -SIGALRM ? "hang" : rc < 0 ? "signal " + std::to_string(-rc) : "outcome " + std::to_string(rc))
                    << " " << file_contents(name_file);
      // GT_HDF5_FUZZ_SAVE=folder keeps the failing files to look at.
      if (const char* keep = std::getenv("GT_HDF5_FUZZ_SAVE"))
        put(std::string(keep) + "/failed-" + std::to_string(i) + "-" + std::to_string(k) + ".h5", bytes);
      if (failures > 20) break;
    }
  }
  std::string summary;
  for (const auto& [rc, n] : count) summary += " " + std::to_string(rc) + ":" + std::to_string(n);
  std::printf("%d mutated HDF5 files; outcomes (20 error, 22 big claim, 30 bit-exact, 41 HDF5's own crash):%s\n",
              cases, summary.c_str());
  // HDF5's own crashes stay rare: a crash of ours cannot hide among them.
  EXPECT_LE(count[kHdf5Crash], cases / 200) << summary;
  // The mutations must reach both ends: clean errors and bit-exact reads.
  EXPECT_GT(count[kError], cases / 20) << summary;
  EXPECT_GT(count[kMatch], cases / 20) << summary;
}

}  // namespace
}  // namespace gt::test

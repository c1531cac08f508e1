// What gtranspose writes, and what it must never overwrite: the --json
// report gets the checks OUT gets; the commit replaces only what --force
// allowed (a file that appears during the run is kept, and of two runs
// without --force exactly one succeeds); an output's name must say its
// format; an input is known by its content; a name as long as the folder
// allows works; and nothing printed carries a terminal's control codes.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "cli/cli_util.hpp"

using cli::expect_error;
using cli::expect_transposed;
using cli::generate;
using cli::gtgen;
using cli::gtranspose;
using cli::Result;
using cli::TempDir;
using cli::why;

namespace {

bool is_link(const std::string& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// An HDF5 file with a 2-D f32 dataset /x of `rows` x `cols` holding i*cols + j,
// after a user block of `user_block` bytes (0: none), under any name.
void write_hdf5(const std::string& path, hsize_t rows, hsize_t cols, hsize_t user_block = 0) {
  hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
  if (user_block) H5Pset_userblock(fcpl, user_block);
  hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
  hsize_t dims[2] = {rows, cols};
  hid_t space = H5Screate_simple(2, dims, nullptr);
  hid_t d = H5Dcreate2(f, "/x", H5T_IEEE_F32LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<float> v(rows * cols);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i);
  H5Dwrite(d, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
  H5Dclose(d);
  H5Sclose(space);
  H5Fclose(f);
  H5Pclose(fcpl);
}

// Element (i, j) of a transposed write_hdf5 matrix read back from raw f32.
float transposed_at(const std::string& raw, hsize_t rows, hsize_t cols, hsize_t i, hsize_t j) {
  float v;
  const std::string s = gt::test::file_contents(raw);
  std::memcpy(&v, s.data() + (i * rows + j) * 4, 4);
  (void)cols;
  return v;
}

}  // namespace

TEST(JsonReport, NeverAFileTheRunReadsOrWrites) {
  TempDir d;
  generate(d / "in.npy", "30x20", "f32");
  const auto before = cli::file_hash(d / "in.npy");
  // The audit: --json in.npy left the report in in.npy; --json out.npy replaced the result.
  expect_error(gtranspose({d / "in.npy", d / "out.npy", "--engine", "cpu", "--json", d / "in.npy", "--force"}), 2,
               "names " + d / "in.npy");
  expect_error(gtranspose({d / "in.npy", d / "out.npy", "--engine", "cpu", "--json", d / "out.npy"}), 2,
               "which this run reads or writes");
  expect_error(gtranspose({d / "in.npy", d / "out.npy", "--engine", "cpu", "--json", d.path() + "/./out.npy"}), 2,
               "--json");
  generate(d / "sq.npy", "16x16", "f32");
  const auto sq = cli::file_hash(d / "sq.npy");
  expect_error(gtranspose({d / "sq.npy", "--in-place", "--engine", "cpu", "--json", d / "sq.npy", "--force"}), 2,
               "names " + d / "sq.npy");
  expect_error(gtranspose({d / "sq.npy", "--in-place", "--engine", "cpu", "--json", d / "sq.npy.gtjournal"}), 2,
               "--json");
  EXPECT_EQ(cli::file_hash(d / "in.npy"), before);
  EXPECT_EQ(cli::file_hash(d / "sq.npy"), sq);
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"in.npy", "sq.npy"}));
}

TEST(JsonReport, SpecialFilesAndLinksAreRefused) {
  TempDir d;
  generate(d / "in.npy", "30x20", "f32");
  ASSERT_EQ(::mkfifo((d / "fifo").c_str(), 0644), 0);
  cli::write_file(d / "target.json", "precious");
  ASSERT_EQ(::symlink((d / "target.json").c_str(), (d / "link.json").c_str()), 0);
  ASSERT_EQ(::symlink((d / "nowhere.json").c_str(), (d / "dangling.json").c_str()), 0);
  cli::Limits lim;
  lim.timeout_ms = 20000;
  expect_error(gtranspose({d / "in.npy", d / "a.npy", "--engine", "cpu", "--json", d / "fifo", "--force"}, lim), 1,
               "not a regular file");
  expect_error(gtranspose({d / "in.npy", d / "a.npy", "--engine", "cpu", "--json", "/dev/null", "--force"}), 1,
               "not a regular file");
  expect_error(gtranspose({d / "in.npy", d / "a.npy", "--engine", "cpu", "--json", d / "link.json", "--force"}), 1,
               "is a symbolic link");
  expect_error(gtranspose({d / "in.npy", d / "a.npy", "--engine", "cpu", "--json", d / "dangling.json", "--force"}), 1,
               "is a symbolic link");
  // As root, --json /dev/stdout with stdout a regular file (as here) replaced the system's link.
  expect_error(gtranspose({d / "in.npy", d / "a.npy", "--engine", "cpu", "--json", "/dev/stdout", "--force"}), 1,
               "--json");
  EXPECT_TRUE(is_link("/dev/stdout"));
  struct stat st {};
  ASSERT_EQ(::lstat((d / "fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_TRUE(is_link(d / "link.json"));
  EXPECT_EQ(gt::test::file_contents(d / "target.json"), "precious");
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"dangling.json", "fifo", "in.npy", "link.json", "target.json"}));
}

TEST(JsonReport, DashIsStdoutAndAnExistingFileNeedsForce) {
  TempDir d;
  generate(d / "in.npy", "30x20", "f32");
  Result r = gtranspose({d / "in.npy", d / "a.npy", "--engine", "cpu", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_EQ(r.out.rfind("{\n", 0), 0u) << "stdout is the JSON alone\n" << why(r);
  EXPECT_NE(r.out.find("\"schema\": 1"), std::string::npos) << why(r);
  EXPECT_NE(r.out.find("\"shape\": [\n      30,\n      20\n    ]"), std::string::npos) << why(r);
  EXPECT_NE(r.err.find("GB/s"), std::string::npos) << "the text report goes to stderr\n" << why(r);
  EXPECT_FALSE(gt::test::file_contents(d / "a.npy").empty());
  Result b = gtranspose({"--bench", "--engine", "cpu", "--shape", "64x48", "--reps", "1", "--json", "-", "-q"});
  ASSERT_EQ(b.exit_code, 0) << why(b);
  EXPECT_NE(b.out.find("\"rows\""), std::string::npos) << why(b);
  cli::write_file(d / "r.json", "old report");
  expect_error(gtranspose({d / "in.npy", d / "b.npy", "--engine", "cpu", "--json", d / "r.json"}), 1,
               "exists: use --force to replace it");
  EXPECT_EQ(gt::test::file_contents(d / "r.json"), "old report");
  Result f = gtranspose({d / "in.npy", d / "b.npy", "--engine", "cpu", "--json", d / "r.json", "--force", "-q"});
  ASSERT_EQ(f.exit_code, 0) << why(f);
  EXPECT_NE(gt::test::file_contents(d / "r.json").find("\"engine\": \"cpu\""), std::string::npos);
  // --force means the report's file in place and in a bench, and nothing without --json.
  expect_error(gtranspose({d / "in.npy", "--in-place", "--engine", "cpu", "--force"}), 2, "drop --force");
  expect_error(gtranspose({"--bench", "--engine", "cpu", "--force"}), 2, "drop --force");
}

// Another program creates OUT while the run is going: the commit keeps it.
TEST(Commit, AnOutputThatAppearsDuringTheRunIsKept) {
  TempDir d;
  generate(d / "a.raw", "4096x4096", "f32");  // 64 MiB: long enough to create OUT meanwhile
  Result r;
  std::thread run([&] {
    r = gtranspose({d / "a.raw", d / "b.raw", "--shape", "4096x4096", "--dtype", "f32", "--engine", "cpu",
                    "--host-mem", "1M", "--threads", "1"});
  });
  // The run checks OUT first thing, then creates its temporary: create OUT
  // as soon as that appears (a fixed sleep was too long on a fast machine).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (d.entries().size() < 2 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  cli::write_file(d / "b.raw", "someone else's");
  run.join();
  ASSERT_FALSE(r.out.find("GB/s") != std::string::npos && r.exit_code == 0)
      << "the run ended before b.raw was created: make it longer\n" << why(r);
  expect_error(r, 1, "appeared while the run was going");
  EXPECT_NE(r.err.find("use --force to replace it"), std::string::npos) << why(r);
  EXPECT_EQ(gt::test::file_contents(d / "b.raw"), "someone else's");
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"a.raw", "b.raw"})) << "the temporary was left behind";
}

TEST(Commit, OfTwoRunsWithoutForceExactlyOneSucceeds) {
  TempDir d;
  generate(d / "a.npy", "1024x768", "f32");
  for (int round = 0; round < 4; ++round) {
    const std::string out = d / ("out" + std::to_string(round) + ".npy");
    Result r1, r2;
    std::thread t1([&] { r1 = gtranspose({d / "a.npy", out, "--engine", "cpu", "--host-mem", "512K", "-q"}); });
    std::thread t2([&] { r2 = gtranspose({d / "a.npy", out, "--engine", "cpu", "--host-mem", "512K", "-q"}); });
    t1.join();
    t2.join();
    EXPECT_EQ((r1.exit_code == 0) + (r2.exit_code == 0), 1) << why(r1) << "\n" << why(r2);
    const Result& lost = r1.exit_code == 0 ? r2 : r1;
    EXPECT_EQ(lost.exit_code, 1) << why(lost);
    EXPECT_TRUE(lost.err.find("appeared while the run was going") != std::string::npos ||
                lost.err.find("exists: use --force") != std::string::npos)
        << why(lost);
    expect_transposed(out, 3);
  }
  EXPECT_EQ(d.entries().size(), 5u) << "a temporary was left behind";
}

TEST(Formats, AnOutputsNameMustSayItsFormat) {
  TempDir d;
  generate(d / "a.npy", "30x20", "f32");
  // The audit's names, all once written as headerless raw bytes with exit 0.
  for (const char* name : {"out.nc", "out.zarr", "out.h5ad", "out.npz", "out.hdf", "out"}) {
    SCOPED_TRACE(name);
    Result r = gtranspose({d / "a.npy", d / name, "--engine", "cpu"});
    expect_error(r, 2, "names no format gtranspose writes: name it .h5 or .hdf5 (HDF5), .npy (NumPy), .raw, .bin or "
                       ".dat (raw bytes), or give --format raw, npy or hdf5");
  }
  EXPECT_EQ(d.entries(), std::vector<std::string>{"a.npy"});
  for (const char* name : {"o.bin", "o.dat", "O.RAW"}) {
    Result r = gtranspose({d / "a.npy", d / name, "--engine", "cpu", "-q"});
    ASSERT_EQ(r.exit_code, 0) << why(r);
    expect_transposed(d / name, 3, {"--shape", "20x30", "--dtype", "f32"});
  }
  // --format: the output's format whatever its name, and an unknown one is refused.
  Result r = gtranspose({d / "a.npy", d / "t.weird", "--engine", "cpu", "--format", "npy", "-q"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_EQ(gt::test::file_contents(d / "t.weird").rfind("\x93NUMPY", 0), 0u);
  Result w = gtranspose({d / "a.npy", d / "t.data", "--engine", "cpu", "--format", "raw", "-q"});
  ASSERT_EQ(w.exit_code, 0) << why(w);
  EXPECT_EQ(gt::test::file_contents(d / "t.data").size(), 30u * 20 * 4);
  expect_error(gtranspose({d / "a.npy", d / "t.x", "--format", "zarr"}), 2, "unknown --format 'zarr'");
}

TEST(Formats, InputsAreKnownByTheirContent) {
  TempDir d;
  // A netCDF-4 file is HDF5 by content: as IN and with the dataset syntax.
  write_hdf5(d / "v.nc", 6, 5);
  Result r = gtranspose({d / "v.nc:/x", d / "t1.raw", "--engine", "cpu", "-q"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  Result s = gtranspose({d / "v.nc", d / "t2.raw", "--engine", "cpu", "-q"});
  ASSERT_EQ(s.exit_code, 0) << why(s);
  EXPECT_EQ(cli::file_hash(d / "t1.raw"), cli::file_hash(d / "t2.raw"));
  EXPECT_EQ(transposed_at(d / "t1.raw", 6, 5, 4, 2), float(2 * 5 + 4));
  expect_error(gtranspose({d / "v.nc:/nope", d / "t3.raw", "--engine", "cpu"}), 1, "/x");
  // HDF5 after a 512-byte user block, named .bin: still HDF5 (the signature at 512).
  write_hdf5(d / "ub.bin", 3, 7, 512);
  Result u = gtranspose({d / "ub.bin", d / "t4.raw", "--engine", "cpu", "-q"});
  ASSERT_EQ(u.exit_code, 0) << why(u);
  EXPECT_EQ(transposed_at(d / "t4.raw", 3, 7, 6, 1), float(1 * 7 + 6));
  // A NumPy file named .dat is NumPy.
  generate(d / "n.npy", "9x4", "i16", 5);
  std::filesystem::rename(d / "n.npy", d / "n.dat");
  Result n = gtranspose({d / "n.dat", d / "t5.npy", "--engine", "cpu", "-q"});
  ASSERT_EQ(n.exit_code, 0) << why(n);
  expect_transposed(d / "t5.npy", 5);
}

// A legal name of 254 bytes: the temporary beside it must not be longer than the folder takes.
TEST(Names, TheLongestLegalOutputNameWorks) {
  TempDir d;
  generate(d / "a.npy", "40x30", "f64");
  for (const char* ext : {".npy", ".raw", ".h5"}) {
    SCOPED_TRACE(ext);
    const std::string name = std::string(254 - std::strlen(ext), 'n') + ext;
    Result r = gtranspose({d / "a.npy", d / name, "--engine", "cpu", "-q"});
    ASSERT_EQ(r.exit_code, 0) << why(r);
    if (std::string(ext) == ".raw") expect_transposed(d / name, 3, {"--shape", "30x40", "--dtype", "f64"});
    else expect_transposed(d / name, 3);
    std::filesystem::remove(d / name);
  }
  EXPECT_EQ(d.entries(), std::vector<std::string>{"a.npy"});
}

TEST(Messages, NothingPrintedCarriesControlCharacters) {
  TempDir d;
  // A file name and header bytes with an OSC retitle and a CSI clear screen (and a C1 CSI).
  const std::string evil = "a\x1b]0;owned\x07\x1b[2J\xc2\x9b" "1m.npy";
  Result m = gtranspose({d / evil, d / "o.npy", "--engine", "cpu"});
  expect_error(m, 1, "\\x1b]0;owned\\x07\\x1b[2J\\x9b1m.npy");
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), '\x1b[2J': 1}";
  dict.resize(118, ' ');
  dict += '\n';
  cli::write_file(d / "h.npy", std::string("\x93NUMPY\x01\x00", 8) + char(dict.size()) + '\0' + dict + std::string(16, 'x'));
  Result h = gtranspose({d / "h.npy", d / "o.npy", "--engine", "cpu"});
  expect_error(h, 1, "unknown keys '\\x1b[2J'");
  // A report naming such a file, on stdout and in --json - alike.
  generate(d / "ok.npy", "4x3", "f32");
  std::filesystem::rename(d / "ok.npy", d / evil);
  Result r = gtranspose({d / evil, d / "o.npy", "--engine", "cpu", "--json", "-"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  for (const std::string* s : {&m.err, &h.err, &r.out, &r.err})
    for (unsigned char c : *s) ASSERT_TRUE(c == '\n' || (c >= 0x20 && c != 0x7f)) << int(c) << " in " << *s;
  EXPECT_EQ(r.out.find("\xc2\x9b"), std::string::npos) << r.out;
}

// End-to-end tests of the gtranspose command line on generated files: every
// format, out of place and in place, with a small --host-mem so that the
// out-of-core path really runs, and every bad input the tool must refuse.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <algorithm>

#include "cli/cli_util.hpp"
#include "support/gpu.hpp"

using cli::expect_error;
using cli::expect_transposed;
using cli::generate;
using cli::gtgen;
using cli::gtranspose;
using cli::Result;
using cli::TempDir;
using cli::why;

namespace {

struct Case {
  std::string ext, dtype, shape;
};
void PrintTo(const Case& c, std::ostream* os) { *os << c.ext << " " << c.dtype << " " << c.shape; }

}  // namespace

class OutOfPlace : public ::testing::TestWithParam<Case> {};

TEST_P(OutOfPlace, TransposesUnderASmallBudget) {
  const Case& c = GetParam();
  TempDir d;
  const std::string in = d / ("in" + c.ext), out = d / ("out" + c.ext);
  generate(in, c.shape, c.dtype, 11);
  auto before = cli::file_hash(in);
  std::vector<std::string> args{in, out, "--engine", "cpu", "--host-mem", "1M", "--threads", "2"};
  std::vector<std::string> raw;
  if (c.ext == ".raw") {
    raw = {"--shape", c.shape, "--dtype", c.dtype};
    args.insert(args.end(), raw.begin(), raw.end());
  }
  Result r = gtranspose(args);
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("GB/s"), std::string::npos) << why(r);
  EXPECT_EQ(cli::file_hash(in), before) << "input changed";
  if (c.ext == ".raw") {
    auto x = c.shape.find('x');
    raw = {"--shape", c.shape.substr(x + 1) + "x" + c.shape.substr(0, x), "--dtype", c.dtype};
  }
  expect_transposed(out, 11, raw);
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"in" + c.ext, "out" + c.ext})) << "stray files";
}

INSTANTIATE_TEST_SUITE_P(Formats, OutOfPlace,
                         ::testing::Values(Case{".raw", "u8", "1031x769"}, Case{".raw", "f16", "700x1300"},
                                           Case{".raw", "f32", "613x1201"}, Case{".raw", "f64", "1x40000"},
                                           Case{".raw", "c128", "40000x1"}, Case{".raw", "c128", "257x263"},
                                           Case{".npy", "i8", "999x1001"}, Case{".npy", "i32", "640x480"},
                                           Case{".npy", "c64", "301x511"}, Case{".h5", "u16", "333x777"},
                                           Case{".h5", "f64", "500x300"}, Case{".h5", "c128", "129x67"},
                                           Case{".h5", "f32", "1x1"}));

class InPlace : public ::testing::TestWithParam<Case> {};

TEST_P(InPlace, TransposesSquareInItsFile) {
  const Case& c = GetParam();
  TempDir d;
  const std::string f = d / ("m" + c.ext);
  generate(f, c.shape, c.dtype, 5);
  std::vector<std::string> args{f, "--in-place", "--engine", "cpu", "--host-mem", "1M"};
  std::vector<std::string> raw;
  if (c.ext == ".raw") raw = {"--shape", c.shape, "--dtype", c.dtype};
  args.insert(args.end(), raw.begin(), raw.end());
  Result r = gtranspose(args);
  ASSERT_EQ(r.exit_code, 0) << why(r);
  expect_transposed(f, 5, raw);
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"m" + c.ext}));
}

INSTANTIATE_TEST_SUITE_P(Formats, InPlace,
                         ::testing::Values(Case{".raw", "u8", "1025x1025"}, Case{".raw", "f32", "700x700"},
                                           Case{".raw", "c128", "129x129"}, Case{".npy", "u16", "513x513"},
                                           Case{".npy", "f64", "1x1"}, Case{".h5", "f32", "611x611"},
                                           Case{".h5", "i64", "2x2"}));

TEST(Cli, HdfDatasetPathsAndJsonReport) {
  TempDir d;
  generate(d / "a.h5:/grp/x", "90x70", "f32", 2);
  Result r = gtranspose({d / "a.h5:/grp/x", d / "b.h5:/out/xT", "--engine", "cpu", "--json", d / "r.json"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  expect_transposed(d / "b.h5:/out/xT", 2);
  std::string j = gt::test::file_contents(d / "r.json");
  for (const char* key : {"\"engine\": \"cpu\"", "\"dataset\": \"/grp/x\"", "\"dataset\": \"/out/xT\"", "\"wall_s\"", "\"stages\""})
    EXPECT_NE(j.find(key), std::string::npos) << key << "\n" << j;
  // Without a dataset path in OUT the input's name is kept.
  Result k = gtranspose({d / "a.h5", d / "c.h5", "--engine", "cpu", "-q"});
  ASSERT_EQ(k.exit_code, 0) << why(k);
  EXPECT_TRUE(k.out.empty()) << "--quiet printed: " << k.out;
  expect_transposed(d / "c.h5:/grp/x", 2);
}

TEST(Cli, CrossFormat) {
  TempDir d;
  generate(d / "a.npy", "123x45", "f64", 9);
  Result r = gtranspose({d / "a.npy", d / "b.h5", "--engine", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  expect_transposed(d / "b.h5", 9);
  Result s = gtranspose({d / "b.h5", d / "c.raw", "--engine", "cpu"});
  ASSERT_EQ(s.exit_code, 0) << why(s);
  Result v = gtgen({"--verify", d / "c.raw", "--seed", "9", "--shape", "123x45", "--dtype", "f64", "-q"});
  EXPECT_EQ(v.exit_code, 0) << why(v);
}

// ---- bad input: one line, the right code, input untouched, nothing left ----

TEST(BadInput, MissingInput) {
  TempDir d;
  expect_error(gtranspose({d / "nope.npy", d / "out.npy"}), 1, "nope.npy");
  EXPECT_TRUE(d.entries().empty());
}

TEST(BadInput, InputIsAFolder) {
  TempDir d;
  std::filesystem::create_directory(d / "dir.npy");
  expect_error(gtranspose({d / "dir.npy", d / "out.npy"}), 1, "dir.npy");
}

TEST(BadInput, NoSuchDataset) {
  TempDir d;
  generate(d / "a.h5:/x", "4x5", "f32");
  auto before = cli::file_hash(d / "a.h5");
  Result r = gtranspose({d / "a.h5:/y", d / "b.h5"});
  expect_error(r, 1, "/x");
  EXPECT_EQ(cli::file_hash(d / "a.h5"), before);
  EXPECT_EQ(d.entries(), std::vector<std::string>{"a.h5"});
}

TEST(BadInput, RawSizeMismatch) {
  TempDir d;
  cli::write_file(d / "a.raw", std::string(1001, 'x'));
  Result r = gtranspose({d / "a.raw", d / "b.raw", "--shape", "10x10", "--dtype", "f32"});
  expect_error(r, 1, "1001");
  // The library's {shape} and {dtype}, spelled as this program's flags.
  expect_error(r, 1, "but --shape 10x10 --dtype f32 needs 400 bytes: check --shape and --dtype");
  EXPECT_EQ(d.entries(), std::vector<std::string>{"a.raw"});
}

TEST(BadInput, RawWithoutShape) {
  TempDir d;
  cli::write_file(d / "a.raw", std::string(400, 'x'));
  expect_error(gtranspose({d / "a.raw", d / "b.raw"}), 2, "needs --shape ROWSxCOLS and --dtype T (--shape and --dtype are missing");
}

TEST(BadInput, OptionsContradictTheHeader) {
  TempDir d;
  generate(d / "a.npy", "8x9", "f32");
  expect_error(gtranspose({d / "a.npy", d / "b.npy", "--shape", "9x8"}), 2,
               "--shape 9x8 does not match " + d / "a.npy" + ", which is 8x9: leave --shape out");
  expect_error(gtranspose({d / "a.npy", d / "b.npy", "--dtype", "i32"}), 2, "leave --dtype out");
  EXPECT_EQ(d.entries(), std::vector<std::string>{"a.npy"});
}

TEST(BadInput, TruncatedNpyHeader) {
  TempDir d;
  cli::write_file(d / "a.npy", std::string("\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortr", 30));
  expect_error(gtranspose({d / "a.npy", d / "b.npy"}), 1, "a.npy");
  EXPECT_EQ(d.entries(), std::vector<std::string>{"a.npy"});
}

TEST(BadInput, NotANpyFile) {
  TempDir d;
  cli::write_file(d / "a.npy", "this is not numpy data at all, just text\n");
  expect_error(gtranspose({d / "a.npy", d / "b.npy"}), 1, "a.npy");
}

TEST(BadInput, UnsupportedDtype) {
  TempDir d;
  cli::write_file(d / "a.raw", std::string(64, 'x'));
  expect_error(gtranspose({d / "a.raw", d / "b.raw", "--shape", "4x4", "--dtype", "f128"}), 2, "f128");
}

TEST(BadInput, OutputEqualsInput) {
  TempDir d;
  generate(d / "a.npy", "8x8", "f32");
  auto before = cli::file_hash(d / "a.npy");
  expect_error(gtranspose({d / "a.npy", d / "a.npy"}), 2, "--in-place");
  expect_error(gtranspose({d / "a.npy", d.path() + "/./a.npy"}), 2, "--in-place");
  EXPECT_EQ(cli::file_hash(d / "a.npy"), before);
}

// Raw and .npy files of any shape go in place (test_cli_journal.cpp,
// Journal.RectanglesInPlace); an HDF5 dataset only when square.
TEST(BadInput, InPlaceNonSquareHdf5) {
  TempDir d;
  generate(d / "a.h5", "8x9", "f32");
  auto before = cli::file_hash(d / "a.h5");
  expect_error(gtranspose({d / "a.h5", "--in-place"}), 1, "in-place needs a square matrix");
  EXPECT_EQ(cli::file_hash(d / "a.h5"), before);
}

TEST(BadInput, ExistingOutputNeedsForce) {
  TempDir d;
  generate(d / "a.npy", "8x9", "f32");
  cli::write_file(d / "b.npy", "precious");
  expect_error(gtranspose({d / "a.npy", d / "b.npy", "--engine", "cpu"}), 1, "exists: use --force to replace it");
  EXPECT_EQ(gt::test::file_contents(d / "b.npy"), "precious");
  Result r = gtranspose({d / "a.npy", d / "b.npy", "--engine", "cpu", "--force"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  expect_transposed(d / "b.npy", 3);
}

TEST(BadInput, UnwritableOutputFolder) {
  TempDir d;
  generate(d / "a.npy", "8x9", "f32");
  expect_error(gtranspose({d / "a.npy", d / "no/such/dir/b.npy", "--engine", "cpu"}), 1, "b.npy");
  cli::write_file(d / "file", "x");
  expect_error(gtranspose({d / "a.npy", d / "file/b.npy", "--engine", "cpu"}), 1, "b.npy");
}

TEST(BadInput, BadSizesAndOptions) {
  expect_error(gtranspose({"a.raw", "b.raw", "--host-mem", "12Q"}), 2, "12Q");
  expect_error(gtranspose({"a.raw", "b.raw", "--host-mem", "99999999999999999999"}), 2, "too large");
  expect_error(gtranspose({"a.raw", "b.raw", "--shape", "10x0", "--dtype", "f32"}), 2, "10x0");
  expect_error(gtranspose({"a.raw", "b.raw", "--engine", "tpu"}), 2, "tpu");
  expect_error(gtranspose({"a.raw", "b.raw", "--no-such-flag"}), 2, "--no-such-flag");
  expect_error(gtranspose({"a.raw", "b.raw", "--in-place"}), 2, "--in-place");
  expect_error(gtranspose({"a.raw"}), 2, "output");
}

TEST(BadInput, FullDiskLeavesNothing) {
  // RLIMIT_FSIZE makes every write past 256 KiB fail (EFBIG), like a full disk.
  for (std::string ext : {".raw", ".npy", ".h5"}) {
    TempDir d;
    generate(d / ("a" + ext), "700x700", "f32");
    std::vector<std::string> args{d / ("a" + ext), d / ("b" + ext), "--engine", "cpu", "--host-mem", "1M"};
    if (ext == ".raw") args.insert(args.end(), {"--shape", "700x700", "--dtype", "f32"});
    cli::Limits lim;
    lim.file_size = 256 << 10;
    Result r = gtranspose(args, lim);
    EXPECT_EQ(r.exit_code, 1) << why(r);
    EXPECT_EQ(d.entries(), std::vector<std::string>{"a" + ext}) << ext << ": output left behind\n" << why(r);
  }
}

TEST(Signals, InterruptRemovesPartialOutput) {
  TempDir d;
  // Big enough to still be running when the signal lands (192 MiB, tiny tiles).
  generate(d / "a.raw", "8192x6144", "f32");
  for (int sig : {SIGINT, SIGTERM}) {
    cli::Limits lim;
    lim.signal_after_ms = 300;
    lim.signal = sig;
    Result r = gtranspose({d / "a.raw", d / "b.raw", "--shape", "8192x6144", "--dtype", "f32", "--engine", "cpu",
                           "--host-mem", "1M", "--threads", "1"},
                          lim);
    EXPECT_EQ(r.signal, sig) << "expected death by signal " << sig << "\n" << why(r);
    EXPECT_EQ(d.entries(), std::vector<std::string>{"a.raw"}) << why(r);
  }
}

TEST(Signals, HangupIgnoredUnderNohupStaysIgnored) {
  TempDir d;
  generate(d / "a.raw", "4096x2048", "f32");
  cli::Limits lim;
  lim.signal_after_ms = 100;
  lim.signal = SIGHUP;
  lim.ignore_sighup = true;
  Result r = gtranspose({d / "a.raw", d / "b.raw", "--shape", "4096x2048", "--dtype", "f32", "--engine", "cpu",
                         "--host-mem", "1M", "--threads", "1", "-q"},
                        lim);
  ASSERT_EQ(r.exit_code, 0) << why(r);
  expect_transposed(d / "b.raw", 3, {"--shape", "2048x4096", "--dtype", "f32"});
}

TEST(Signals, InterruptInPlaceSaysTheFileIsPartlyTransposed) {
  TempDir d;
  generate(d / "m.raw", "8192x8192", "f32");
  cli::Limits lim;
  // Late enough that a loaded machine (ctest -j2 beside a build) has started
  // the run and its handlers (at 300 ms the CUDA build was once killed
  // before, silently); the run, 256 MiB through 1 MiB, lasts many seconds.
  lim.signal_after_ms = 1000;
  Result r = gtranspose({d / "m.raw", "--in-place", "--shape", "8192x8192", "--dtype", "f32", "--engine", "cpu",
                         "--host-mem", "1M", "--threads", "1"},
                        lim);
  ASSERT_EQ(r.signal, SIGINT) << why(r);
  EXPECT_NE(r.err.find("partly transposed"), std::string::npos) << why(r);
}

TEST(BadInput, JsonPathCheckedBeforeAnyWork) {
  TempDir d;
  generate(d / "a.npy", "30x20", "f32");
  auto before = cli::file_hash(d / "a.npy");
  expect_error(gtranspose({d / "a.npy", d / "b.npy", "--engine", "cpu", "--json", d / "no/such/r.json"}), 1,
               "r.json");
  EXPECT_EQ(d.entries(), std::vector<std::string>{"a.npy"}) << "output written although --json cannot be";
  expect_error(gtranspose({d / "a.npy", "--in-place", "--engine", "cpu", "--json", d.path()}), 1, "is a folder");
  Result r = gtranspose({d / "a.npy", d / "b.npy", "--engine", "cpu", "--json", d / "r.json", "-q"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_EQ(cli::file_hash(d / "a.npy"), before);
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"a.npy", "b.npy", "r.json"}));
}

TEST(BadInput, HeaderClaimingAnOverflowingShapeIsAnInputError) {
  TempDir d;
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967297), }";
  dict.resize(128 - 10 - 1, ' ');
  dict += '\n';
  std::string file = std::string("\x93NUMPY\x01\x00", 8) + char(dict.size() & 0xff) + char(dict.size() >> 8) + dict;
  cli::write_file(d / "huge.npy", file + std::string(64, 'x'));
  expect_error(gtranspose({d / "huge.npy", d / "b.npy"}), 1, "huge.npy");
}

TEST(BadInput, NonRegularOutputAndBigEndianRaw) {
  TempDir d;
  generate(d / "a.npy", "3x4", "f32");
  expect_error(gtranspose({d / "a.npy", "/dev/null", "--force", "--engine", "cpu"}), 1, "not a regular file");
  // A big-endian .npy (written by hand: '>f4', 3x2) cannot go to raw, which has no byte order.
  std::string dict = "{'descr': '>f4', 'fortran_order': False, 'shape': (3, 2), }";
  dict.resize(128 - 10 - 1, ' ');
  dict += '\n';
  cli::write_file(d / "be.npy", std::string("\x93NUMPY\x01\x00", 8) + char(dict.size()) + '\0' + dict +
                                    std::string(24, '\x41'));
  expect_error(gtranspose({d / "be.npy", d / "be.raw", "--engine", "cpu"}), 1, "big-endian");
  Result r = gtranspose({d / "be.npy", d / "be_t.npy", "--engine", "cpu", "-q"});
  EXPECT_EQ(r.exit_code, 0) << why(r);
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"a.npy", "be.npy", "be_t.npy"}));
}

TEST(BadInput, OptionsThatWouldBeIgnoredAreRefused) {
  TempDir d;
  generate(d / "a.npy", "3x2", "f32");
  expect_error(gtranspose({d / "a.npy", d / "b.npy", "--reps", "5"}), 2, "--reps");
  expect_error(gtranspose({d / "a.npy", d / "b.npy", "--sweep"}), 2, "--sweep");
  expect_error(gtranspose({d / "a.npy", d / "b.npy", "--kernel", "bogus"}), 2, "bogus");
  EXPECT_EQ(d.entries(), std::vector<std::string>{"a.npy"});
}

// A compressed HDF5 dataset stored as one big chunk: HDF5 must hold the
// decompressed chunk (and its compressed copy) outside the engine's buffers,
// so that memory comes out of --host-mem, or the run is refused up front.
TEST(Budget, CompressedHdf5ChunksCountAgainstHostMem) {
  TempDir d;
  const hsize_t n = 1024;
  std::vector<double> data(n * n);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = double((i * 2654435761u) % 1000003) * 0.25;
  hid_t file = H5Fcreate((d / "c.h5").c_str(), H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT);
  hsize_t dims[2] = {n, n};
  hid_t space = H5Screate_simple(2, dims, nullptr);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, dims);
  H5Pset_deflate(dcpl, 1);
  hid_t ds = H5Dcreate2(file, "/x", H5T_IEEE_F64LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ASSERT_GE(H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()), 0);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);

  // One 8 MiB chunk: a tile of it in and one out (16 MiB), and one codec
  // thread a side, each with two buffers of a chunk (and deflate's bound):
  // just over 48 MiB (chunked and compressed alike for the output).
  Result small = gtranspose({d / "c.h5", d / "t.h5", "--engine", "cpu", "--host-mem", "48M"});
  expect_error(small, 2, "--host-mem");
  EXPECT_NE(small.err.find("a tile of one chunk in and one out, one codec thread's buffers a side"), std::string::npos)
      << why(small);
  EXPECT_EQ(d.entries(), std::vector<std::string>{"c.h5"});
  Result r = gtranspose({d / "c.h5", d / "t.h5", "--engine", "cpu", "--host-mem", "80M"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("HDF5 chunk threads: one pool of 1 decoding and encoding"), std::string::npos) << why(r);
  EXPECT_NE(r.out.find("HDF5 read: direct chunks, deflate(1)"), std::string::npos) << why(r);
  EXPECT_NE(r.out.find("HDF5 write: direct chunks, deflate(1)"), std::string::npos) << why(r);
  // Within the budget over the baseline of a tiny run (its RSS includes HDF5's own 16 MiB).
  Result tiny = gtranspose({std::string(GT_DATASETS_DIR) + "/small.npy", d / "s.npy", "--engine", "cpu", "-q"});
  EXPECT_LE(r.max_rss, tiny.max_rss + (80u << 20) + (6u << 20))
      << "peak " << (r.max_rss >> 20) << " MiB, baseline " << (tiny.max_rss >> 20) << " MiB";
  std::vector<double> back(n * n);
  hid_t f2 = H5Fopen((d / "t.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d2 = H5Dopen2(f2, "/x", H5P_DEFAULT);
  ASSERT_GE(H5Dread(d2, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
  H5Dclose(d2);
  H5Fclose(f2);
  for (hsize_t i = 0; i < n; i += 37)
    for (hsize_t j = 0; j < n; j += 41) ASSERT_EQ(back[j * n + i], data[i * n + j]) << i << "," << j;
}

TEST(Budget, PeakResidentMemoryStaysWithinHostMem) {
  TempDir d;
  generate(d / "tiny.raw", "4x4", "f32");
  generate(d / "a.raw", "4096x4096", "f32");  // 64 MiB
  Result base = gtranspose({d / "tiny.raw", d / "tiny_t.raw", "--shape", "4x4", "--dtype", "f32", "--engine", "cpu",
                            "--host-mem", "8M"});
  ASSERT_EQ(base.exit_code, 0) << why(base);
  Result r = gtranspose({d / "a.raw", d / "b.raw", "--shape", "4096x4096", "--dtype", "f32", "--engine", "cpu",
                         "--host-mem", "8M"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  const std::uint64_t budget = 8 << 20, slack = 6 << 20;
  EXPECT_LE(r.max_rss, base.max_rss + budget + slack)
      << "peak RSS " << (r.max_rss >> 20) << " MiB vs baseline " << (base.max_rss >> 20) << " MiB + 8 MiB budget";
  expect_transposed(d / "b.raw", 3, {"--shape", "4096x4096", "--dtype", "f32"});
}

TEST(Cli, EngineCudaWithoutGpuSaysSo) {
  GT_SKIP_WITH_GPU("this test is for machines without one");
  expect_error(gtranspose({"--bench", "--engine", "cuda", "--shape", "64x64", "--reps", "1", "--kernel", "copy"}), 1,
               "--engine cuda");
}

TEST(Cli, AutoFallsBackToCpuWithNotice) {
  GT_SKIP_WITH_GPU("auto picks cuda there");
  TempDir d;
  generate(d / "a.npy", "30x20", "f32");
  Result r = gtranspose({d / "a.npy", d / "b.npy"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("using the CPU engine"), std::string::npos) << why(r);
}

TEST(Cli, CpuBenchReportsRatioToMemcpy) {
  Result r = gtranspose({"--bench", "--engine", "cpu", "--shape", "512x384", "--dtype", "f32", "--reps", "3"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("memcpy"), std::string::npos) << why(r);
  EXPECT_NE(r.out.find("cpu-blocked"), std::string::npos) << why(r);
}

TEST(Cli, HelpAndVersion) {
  Result h = gtranspose({"--help"});
  EXPECT_EQ(h.exit_code, 0);
  EXPECT_NE(h.out.find("--in-place"), std::string::npos);
  Result v = gtranspose({"--version"});
  EXPECT_EQ(v.exit_code, 0);
  EXPECT_NE(v.out.find("gtranspose"), std::string::npos);
}

TEST(Cli, DemoDatasetTransposes) {
  TempDir d;
  Result r = gtranspose({std::string(GT_DATASETS_DIR) + "/demo.h5", d / "demo_T.h5", "--engine", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  expect_transposed(d / "demo_T.h5", 7);
}

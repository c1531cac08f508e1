// Raw and .npy sources, sinks and in-place matrices.
#include <gtest/gtest.h>

#include <cstring>

#include "formats_test_util.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "testing.hpp"

namespace gt::test {
namespace {

OpenOptions raw_opts(Shape s, DType t) {
  OpenOptions o;
  o.shape = s;
  o.dtype = t;
  return o;
}

std::string ext_of(Format f) { return f == Format::npy ? ".npy" : ".raw"; }

// source (memory) -> sink (file) -> source (file): byte-exact transposes.
void round_trip(const TempDir& dir, Format f, Shape s, DType t, ByteOrder order, std::uint64_t seed) {
  SCOPED_TRACE(std::string(format_name(f)) + " " + dtype_name(t) + " " + to_string(s) + " seed " +
               std::to_string(seed));
  const std::size_t es = dtype_size(t);
  MemSource src(info_of(s, t, order), pattern_matrix(s.rows, s.cols, es, seed));
  const std::string out = dir / (std::string("rt_") + dtype_name(t) + "_" + to_string(s) + ext_of(f));
  auto sink = create_sink(out, src, {});
  ASSERT_EQ(sink->info().shape, s.transposed());
  const auto expect = transposed(src.data(), s.rows, s.cols, es);
  write_tiled(*sink, expect, s.cols, s.rows, es);
  sink->commit();
  auto back = open_source(out, f == Format::raw ? raw_opts(s.transposed(), t) : OpenOptions{});
  ASSERT_EQ(back->info().shape, s.transposed());
  ASSERT_EQ(back->info().elem_size, es);
  EXPECT_EQ(back->info().dtype, std::optional<DType>(t));
  EXPECT_EQ(back->info().order, es == 1 ? ByteOrder::not_applicable : order);
  EXPECT_EQ(read_tiled(*back), expect);
  EXPECT_EQ(read_tiled(*back, 1000, 1000), expect);  // whole rows in one read
}

TEST(RawNpy, RoundTripEveryDtype) {
  TempDir dir;
  std::uint64_t seed = 11;
  for (DType t : all_dtypes()) {
    round_trip(dir, Format::raw, {13, 7}, t, ByteOrder::little, seed++);
    if (t != DType::bf16) round_trip(dir, Format::npy, {13, 7}, t, ByteOrder::little, seed++);
  }
}

TEST(RawNpy, RoundTripShapes) {
  TempDir dir;
  const Shape shapes[] = {{1, 1}, {1, 97}, {89, 1}, {31, 37}, {64, 64}};
  std::uint64_t seed = 100;
  for (Shape s : shapes)
    for (Format f : {Format::raw, Format::npy})
      for (DType t : {DType::u8, DType::f32, DType::c128}) round_trip(dir, f, s, t, ByteOrder::little, seed++);
}

TEST(RawNpy, BigEndianNpyRoundTripKeepsOrder) {
  TempDir dir;
  round_trip(dir, Format::npy, {9, 5}, DType::i32, ByteOrder::big, 7);
  round_trip(dir, Format::npy, {9, 5}, DType::c64, ByteOrder::big, 8);
  auto src = open_source(dir / "rt_i32_9x5.npy", {});
  EXPECT_NE(src->describe().find("'>i4'"), std::string::npos) << src->describe();
}

TEST(RawNpy, BFloat16HasNoNumPyName) {
  TempDir dir;
  MemSource src(info_of({3, 4}, DType::bf16), pattern_matrix(3, 4, 2, 1));
  Error e = catch_error([&] { (void)create_sink(dir / "out.npy", src, {}); });
  EXPECT_EQ(e.kind(), ErrorKind::output);
  EXPECT_NE(std::string(e.what()).find("bfloat16"), std::string::npos) << e.what();
  EXPECT_TRUE(dir.entries().empty());
}

TEST(RawNpy, HeaderIsNumPys) {
  // What np.save(np.zeros((3, 4), '<f4')) writes, NumPy 1.24.
  std::string h = fmt::make_npy_header("<f4", 3, 4);
  ASSERT_EQ(h.size(), 128u);
  EXPECT_EQ(h.substr(0, 10), std::string("\x93NUMPY\x01\x00\x76\x00", 10));
  EXPECT_EQ(h.substr(10, 59), "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }");
  EXPECT_EQ(h.find_first_not_of(' ', 69), 127u);
  EXPECT_EQ(h.back(), '\n');
  // A 20-digit row count still fits 1.0 and stays 64-aligned.
  std::string big = fmt::make_npy_header("<c16", 12345678901234567890ull, 3);
  EXPECT_EQ(big.size() % 64, 0u);
  EXPECT_EQ(big[6], 1);
}

TEST(RawNpy, ReadsVersions1To3) {
  TempDir dir;
  const auto data = pattern_matrix(5, 6, 4, 3);
  for (int major : {1, 2, 3}) {
    const std::string path = dir / ("v" + std::to_string(major) + ".npy");
    write_file(path, npy_bytes(major, "{'descr': '<u4', 'fortran_order': False, 'shape': (5, 6), }", data, 16));
    auto src = open_source(path, {});
    EXPECT_EQ(src->info().shape, (Shape{5, 6}));
    EXPECT_EQ(src->info().dtype, std::optional<DType>(DType::u32));
    EXPECT_EQ(read_tiled(*src), data) << "version " << major;
  }
}

TEST(RawNpy, DictSyntaxVariants) {
  TempDir dir;
  const auto data = pattern_matrix(2, 3, 8, 4);
  // Double quotes, different key order, no trailing comma, Python 2 long suffix.
  write_file(dir / "a.npy", npy_bytes(1, "{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \">f8\"}", data));
  auto src = open_source(dir / "a.npy", {});
  EXPECT_EQ(src->info().shape, (Shape{2, 3}));
  EXPECT_EQ(src->info().dtype, std::optional<DType>(DType::f64));
  EXPECT_EQ(src->info().order, ByteOrder::big);
  EXPECT_EQ(read_tiled(*src), data);
}

TEST(RawNpy, VoidAndBoolKeepTheirDescr) {
  TempDir dir;
  for (auto [descr, es] : {std::pair{"|V16", 16}, {"|V2", 2}, {"|b1", 1}}) {
    const auto data = pattern_matrix(4, 3, es, 9);
    write_file(dir / "v.npy", npy_bytes(1, std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (4, 3), }", data));
    auto src = open_source(dir / "v.npy", {});
    EXPECT_EQ(src->info().elem_size, std::size_t(es));
    EXPECT_FALSE(src->info().dtype.has_value());
    auto sink = create_sink(dir / "vt.npy", *src, {SinkOptions{true}});
    write_tiled(*sink, transposed(data, 4, 3, es), 3, 4, es);
    sink->commit();
    const std::string out = file_contents(dir / "vt.npy");
    EXPECT_NE(out.find(std::string("'descr': '") + descr + "'"), std::string::npos) << out.substr(0, 80);
    auto back = open_source(dir / "vt.npy", {});
    EXPECT_EQ(read_tiled(*back), transposed(data, 4, 3, es));
    // Raw takes the bytes; HDF5 stores them as h5py would (bool enum, opaque void).
    auto raw = create_sink(dir / "vt.raw", *src, {SinkOptions{true}});
    write_tiled(*raw, transposed(data, 4, 3, es), 3, 4, es);
    raw->commit();
    const auto t = transposed(data, 4, 3, es);
    EXPECT_EQ(file_contents(dir / "vt.raw"), std::string(t.begin(), t.end()));
    auto h5 = create_sink(dir / "vt.h5", *src, {SinkOptions{true}});
    write_tiled(*h5, transposed(data, 4, 3, es), 3, 4, es);
    h5->commit();
    auto h5back = open_source(dir / "vt.h5", {});
    EXPECT_EQ(h5back->info().elem_size, std::size_t(es));
    EXPECT_NE(h5back->describe().find(es == 1 ? "1-byte enum" : "-byte opaque"), std::string::npos) << h5back->describe();
    EXPECT_EQ(read_tiled(*h5back), transposed(data, 4, 3, es));
  }
}

TEST(RawNpy, FortranOrderIsHonoured) {
  TempDir dir;
  const std::uint64_t R = 7, C = 11;
  const std::size_t es = 2;
  const auto logical = pattern_matrix(R, C, es, 21);
  // Column-major bytes of the logical matrix are the row-major transpose.
  write_file(dir / "f.npy", npy_bytes(1, "{'descr': '<f2', 'fortran_order': True, 'shape': (7, 11), }",
                                      transposed(logical, R, C, es)));
  auto src = open_source(dir / "f.npy", {});
  ASSERT_EQ(src->info().shape, (Shape{R, C}));
  EXPECT_NE(src->describe().find("Fortran"), std::string::npos);
  EXPECT_EQ(read_tiled(*src), logical);
  EXPECT_EQ(read_tiled(*src, 3, 100), logical);
  EXPECT_EQ(read_tiled(*src, 100, 2), logical);
  // Its transpose written to .npy is C order with the same descr.
  auto sink = create_sink(dir / "ft.npy", *src, {});
  write_tiled(*sink, transposed(logical, R, C, es), C, R, es);
  sink->commit();
  auto back = open_source(dir / "ft.npy", {});
  EXPECT_EQ(back->info().shape, (Shape{C, R}));
  EXPECT_EQ(read_tiled(*back), transposed(logical, R, C, es));
  EXPECT_NE(file_contents(dir / "ft.npy").find("'descr': '<f2', 'fortran_order': False"), std::string::npos);
}

TEST(RawNpy, FortranOrderInPlace) {
  TempDir dir;
  const std::uint64_t N = 9;
  const auto logical = pattern_matrix(N, N, 8, 5);
  write_file(dir / "sq.npy", npy_bytes(1, "{'descr': '<i8', 'fortran_order': True, 'shape': (9, 9), }",
                                       transposed(logical, N, N, 8)));
  {
    auto m = open_inplace(dir / "sq.npy", {});
    EXPECT_EQ(read_tiled(*m), logical);
    write_tiled(*m, transposed(logical, N, N, 8), N, N, 8, 4, 4);
    m->flush();
  }
  auto src = open_source(dir / "sq.npy", {});
  EXPECT_EQ(read_tiled(*src), transposed(logical, N, N, 8));
}

TEST(RawNpy, InPlaceRawAndNpy) {
  TempDir dir;
  const std::uint64_t N = 17;
  const auto data = pattern_matrix(N, N, 4, 6);
  write_file(dir / "sq.raw", data);
  MemSource mem(info_of({N, N}, DType::f32), transposed(data, N, N, 4));
  {
    auto s = create_sink(dir / "sq.npy", mem, {});
    write_tiled(*s, data, N, N, 4);
    s->commit();
  }
  for (std::string name : {"sq.raw", "sq.npy"}) {
    auto opts = name == "sq.raw" ? raw_opts({N, N}, DType::f32) : OpenOptions{};
    {
      auto m = open_inplace(dir / name, opts);
      EXPECT_EQ(read_tiled(*m), data);
      write_tiled(*m, transposed(data, N, N, 4), N, N, 4, 6, 5);
      m->flush();
    }
    auto src = open_source(dir / name, opts);
    EXPECT_EQ(read_tiled(*src), transposed(data, N, N, 4)) << name;
  }
}

TEST(RawNpy, InPlaceTakesEveryShape) {
  // R = kC, and any other shape (10 x 25: the gcd decomposition's bands).
  TempDir dir;
  write_file(dir / "r.raw", pattern_matrix(10, 25, 1, 1));
  const auto general = open_inplace(dir / "r.raw", raw_opts({10, 25}, DType::u8));
  EXPECT_EQ(general->info().shape, (Shape{10, 25}));
  write_file(dir / "t.raw", pattern_matrix(10, 20, 1, 1));
  EXPECT_NO_THROW((void)open_inplace(dir / "t.raw", raw_opts({10, 20}, DType::u8)));
}

TEST(RawNpy, RawNeedsShapeAndDtype) {
  TempDir dir;
  write_file(dir / "a.bin", pattern_matrix(4, 4, 1, 1));
  OpenOptions only_shape;
  only_shape.shape = Shape{4, 4};
  Error e = catch_error([&] { (void)open_source(dir / "a.bin", only_shape); });
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(std::string(e.what()).find("dtype is missing"), std::string::npos) << e.what();
  e = catch_error([&] { (void)open_source(dir / "a.bin", {}); });
  // The library names its parameters, never a program's flags: what() spells
  // them plainly, and message() keeps the placeholders a program spells its way.
  EXPECT_NE(std::string(e.what()).find("needs shape ROWSxCOLS and dtype T (shape and dtype are missing"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("{shape} ROWSxCOLS and {dtype} T"), std::string::npos) << e.message();
}

TEST(RawNpy, RawSizeMismatch) {
  TempDir dir;
  write_file(dir / "a.raw", pattern_matrix(10, 10, 4, 1));
  Error e = catch_error([&] { (void)open_source(dir / "a.raw", raw_opts({10, 20}, DType::f32)); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  const std::string m = e.what();
  EXPECT_NE(m.find("holds 400 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("needs 800 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("check shape and dtype"), std::string::npos) << m;
  EXPECT_NE(e.message().find("but {shape} 10x20 {dtype} f32 needs"), std::string::npos) << e.message();
}

TEST(RawNpy, MissingInput) {
  TempDir dir;
  Error e = catch_error([&] { (void)open_source(dir / "nope.npy", {}); });
  EXPECT_EQ(e.kind(), ErrorKind::input);
  EXPECT_NE(std::string(e.what()).find("No such file"), std::string::npos) << e.what();
  e = catch_error([&] { (void)open_source(dir.path() + "/.", raw_opts({1, 1}, DType::u8)); });
  EXPECT_NE(std::string(e.what()).find("folder"), std::string::npos) << e.what();
}

struct BadNpy {
  const char* label;
  std::string bytes;
  const char* message;
};

TEST(RawNpy, MalformedHeadersRejected) {
  TempDir dir;
  const auto d12 = pattern_matrix(3, 4, 1, 2);
  const std::string good = npy_bytes(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 4), }", d12);
  std::string long_claim = good.substr(0, 10);
  long_claim[8] = char(0xff);
  long_claim[9] = char(0x7f);
  const std::vector<BadNpy> cases = {
      {"bad magic", "PK\x03\x04 not numpy at all, really", "not a NumPy .npy file"},
      {"empty", "", "is empty"},
      {"truncated preamble", good.substr(0, 7), "truncated"},
      {"truncated header", good.substr(0, 40), "truncated"},
      {"header length past EOF", long_claim + "{'descr': '|u1'}", "header claims 32767 bytes"},
      {"version 4", std::string("\x93NUMPY\x04\x00", 8) + good.substr(8), "version 4.0"},
      {"not a dict", npy_bytes(1, "['descr', 'u1']", d12), "expected a dict"},
      {"unclosed", npy_bytes(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 4", d12), "malformed .npy header"},
      {"garbage", npy_bytes(1, "{'descr': |u1}", d12), "malformed .npy header"},
      {"missing shape", npy_bytes(1, "{'descr': '|u1', 'fortran_order': False}", d12), "'shape' is missing"},
      {"unknown key", npy_bytes(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (3, 4), 'x': 1}", d12),
       "unknown keys 'x'"},
      {"shape not tuple", npy_bytes(1, "{'descr': '|u1', 'fortran_order': False, 'shape': 12}", d12),
       "'shape' is 12, not a tuple"},
      {"negative extent", npy_bytes(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (-3, 4)}", d12),
       "'shape' holds -3, which is not a size NumPy takes"},
      {"fortran not bool", npy_bytes(1, "{'descr': '|u1', 'fortran_order': 0, 'shape': (3, 4)}", d12),
       "'fortran_order' is 0, not True or False"},
      {"3-D", npy_bytes(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (1, 3, 4), }", d12),
       "is 3-D (shape (1, 3, 4)): gtranspose needs a 2-D matrix"},
      {"1-D", npy_bytes(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (12,), }", d12), "is 1-D (shape (12,))"},
      {"empty matrix", npy_bytes(1, "{'descr': '|u1', 'fortran_order': False, 'shape': (0, 4), }", {}), "is empty"},
      {"unicode", npy_bytes(1, "{'descr': '<U3', 'fortran_order': False, 'shape': (1, 1), }", d12),
       "element type '<U3' (12 bytes per element, 3 characters of 4 bytes)"},
      {"odd void", npy_bytes(1, "{'descr': '|V3', 'fortran_order': False, 'shape': (2, 2), }", d12),
       "element type '|V3' (3 bytes per element)"},
      {"structured", npy_bytes(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3, 1), }", d12),
       "structured array"},
      {"short data", npy_bytes(1, "{'descr': '<i2', 'fortran_order': False, 'shape': (3, 4), }", d12),
       "the file is truncated"},
      {"extra data", npy_bytes(1, "{'descr': '|i1', 'fortran_order': False, 'shape': (3, 3), }", d12),
       "extra bytes at the end"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.label);
    write_file(dir / "bad.npy", c.bytes);
    Error e = catch_error([&] { (void)open_source(dir / "bad.npy", {}); });
    EXPECT_EQ(e.kind(), ErrorKind::input);
    EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.npy"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
  }
  write_file(dir / "good.npy", good);
  EXPECT_EQ(read_tiled(*open_source(dir / "good.npy", {})), d12);
}

TEST(RawNpy, OptionsMustAgreeWithHeader) {
  TempDir dir;
  write_file(dir / "a.npy", npy_bytes(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }",
                                      pattern_matrix(3, 4, 4, 1)));
  Error e = catch_error([&] { (void)open_source(dir / "a.npy", raw_opts({4, 3}, DType::f32)); });
  EXPECT_EQ(e.kind(), ErrorKind::usage);
  EXPECT_NE(std::string(e.what()).find("shape 4x3 does not match"), std::string::npos) << e.what();
  EXPECT_NE(e.message().find("leave {shape} out"), std::string::npos) << e.message();
  OpenOptions wrong_type;
  wrong_type.dtype = DType::i32;
  e = catch_error([&] { (void)open_source(dir / "a.npy", wrong_type); });
  EXPECT_NE(std::string(e.what()).find("dtype i32 does not match"), std::string::npos) << e.what();
  EXPECT_EQ(std::string(e.what()).find("--"), std::string::npos) << e.what();
  EXPECT_NO_THROW(open_source(dir / "a.npy", raw_opts({3, 4}, DType::f32)));
}

TEST(RawNpy, OffsetsAre64Bit) {
  // 3e9 x 70000 elements of 16 bytes: far past 2^32 and 2^63/2^32.
  const std::uint64_t r = 3'000'000'000ull, c = 65'537, cols = 70'000;
  const unsigned __int128 expect = (unsigned __int128)(r * cols + c) * 16 + 128;
  EXPECT_EQ(fmt::element_offset(128, r, c, cols, 16), std::uint64_t(expect));
  EXPECT_THROW(fmt::element_offset(0, 1ull << 40, 0, 1ull << 30, 1), Error);
  EXPECT_THROW(fmt::element_offset(0, 1ull << 40, 0, 1ull << 20, 16), Error);
}

TEST(RawNpy, MoreThan2To32ElementsSparse) {
  // A 70000 x 70000 u8 matrix (4.9e9 elements) as a sparse file: only the
  // touched pages cost disk, but every offset is beyond 32 bits.
  TempDir dir;
  const Shape s{70000, 70000};
  MemSource tiny(info_of(s.transposed(), DType::u8), {});
  fmt::set_preallocation_enabled(false);
  std::unique_ptr<Sink> sink;
  try {
    sink = create_sink(dir / "big.npy", tiny, {});
  } catch (...) {
    fmt::set_preallocation_enabled(true);
    throw;
  }
  fmt::set_preallocation_enabled(true);
  // The last block holds the last element, so the file reaches its full size.
  const auto block = pattern_matrix(3, 5, 1, 77);
  sink->write(69997, 69995, 3, 5, block.data(), 5);
  sink->write(0, 0, 3, 5, block.data(), 5);
  sink->commit();
  auto src = open_source(dir / "big.npy", {});
  ASSERT_EQ(src->info().shape, s);
  std::vector<unsigned char> back(3 * 8, 0);
  src->read(69997, 69995, 3, 5, back.data(), 8);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(0, std::memcmp(&back[i * 8], &block[i * 5], 5)) << "row " << i;
  std::vector<unsigned char> full_rows(2 * 70000);
  src->read(69998, 0, 2, 70000, full_rows.data(), 70000);
  EXPECT_EQ(0, std::memcmp(&full_rows[69995], &block[5], 5));
  EXPECT_EQ(0, std::memcmp(&full_rows[70000 + 69995], &block[10], 5));
}

TEST(RawNpy, NumPyReadsOurFilesAndWeReadNumPys) {
  if (!have_python_module("numpy")) GTEST_SKIP() << "/usr/bin/python3 has no numpy: interop not checked";
  TempDir dir;
  // NumPy writes a few arrays, including Fortran order and big-endian.
  ASSERT_EQ(0, run_python(dir,
                          "import numpy as np, sys\n"
                          "d = sys.argv[1]\n"
                          "a = (np.arange(35 * 23, dtype='<i8') * 2654435761 % 1000003).reshape(35, 23)\n"
                          "np.save(d + '/c.npy', a)\n"
                          "np.save(d + '/f.npy', np.asfortranarray(a.astype('>f4')))\n"
                          "np.save(d + '/z.npy', (a + 1j * a[::-1]).astype('<c16'))\n"
                          "np.save(d + '/b.npy', a % 3 == 0)\n"));
  for (std::string name : {"c", "f", "z", "b"}) {
    SCOPED_TRACE(name);
    auto src = open_source(dir / (name + ".npy"), {});
    ASSERT_EQ(src->info().shape, (Shape{35, 23}));
    const std::size_t es = src->info().elem_size;
    auto data = read_tiled(*src, 8, 5);
    auto sink = create_sink(dir / (name + "T.npy"), *src, {});
    write_tiled(*sink, transposed(data, 35, 23, es), 23, 35, es);
    sink->commit();
  }
  EXPECT_EQ(0, run_python(dir,
                          "import numpy as np, sys\n"
                          "d = sys.argv[1]\n"
                          "for n in 'cfzb':\n"
                          "    a = np.load(d + '/' + n + '.npy'); t = np.load(d + '/' + n + 'T.npy')\n"
                          "    assert t.dtype == a.dtype, (n, t.dtype, a.dtype)\n"
                          "    assert t.flags.c_contiguous and t.shape == (23, 35), n\n"
                          "    assert (t == a.T).all(), n\n"
                          "    assert open(d + '/' + n + 'T.npy', 'rb').read(10)[6] == 1\n"));
}

}  // namespace
}  // namespace gt::test

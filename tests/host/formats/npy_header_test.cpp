// The .npy header read exactly as NumPy reads it: the cases an audit found
// gtranspose reading differently (versions, backslashes, a vertical tab as
// the last newline, '|f8' and 'f4'), nesting deep enough to overflow a
// recursive parser, the sizes of str and bytes types, and header bytes that
// must never reach a terminal unescaped. Each expectation is NumPy 1.24's.
#include <gtest/gtest.h>

#include <string>

#include "formats_test_util.hpp"
#include "gtranspose/error.hpp"
#include "testing.hpp"

namespace gt::test {
namespace {

const std::string kName = "h.npy";

// The header of a format version `major` file: its dict parsed as
// open_source parses it, its element resolved. Throws gt::Error.
fmt::NpyHeader parse(const std::string& text, int major = 1) { return fmt::parse_npy_dict(text, major, kName); }

std::string dict(const std::string& descr, const std::string& shape = "(3, 4)", const std::string& fortran = "False") {
  return "{'descr': " + descr + ", 'fortran_order': " + fortran + ", 'shape': " + shape + ", }";
}

std::string error_of(const std::string& text, int major = 1) {
  try {
    (void)fmt::npy_element(parse(text, major), kName);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::input) << e.what();
    return e.what();
  }
  return "";
}

TEST(NpyHeader, OnlyVersionsOneTwoAndThreeDotZero) {
  const std::vector<unsigned char> data(12, 7);
  for (int major : {1, 2, 3}) {
    const std::string f = npy_bytes(major, dict("'|u1'"), data);
    const auto* p = reinterpret_cast<const unsigned char*>(f.data());
    EXPECT_EQ(fmt::parse_npy_preamble(p, 12, f.size(), kName).major, major);
  }
  // NumPy's _check_version: (1, 0), (2, 0), (3, 0) and nothing else.
  for (auto [major, minor] : {std::pair{1, 5}, {1, 255}, {2, 1}, {4, 0}, {0, 0}, {255, 255}}) {
    std::string f = npy_bytes(1, dict("'|u1'"), data);
    f[6] = char(major);
    f[7] = char(minor);
    const auto* p = reinterpret_cast<const unsigned char*>(f.data());
    const Error e = catch_error([&] { (void)fmt::parse_npy_preamble(p, 12, f.size(), kName); });
    EXPECT_NE(std::string(e.what()).find("version " + std::to_string(major) + "." + std::to_string(minor) +
                                         ": NumPy reads versions 1.0, 2.0 and 3.0 only"),
              std::string::npos)
        << e.what();
  }
}

TEST(NpyHeader, BackslashesAreEscapesAsInPython) {
  EXPECT_EQ(parse(dict("'\\x3cf4'")).type.str, "<f4");   // \x3c is '<'
  EXPECT_EQ(parse(dict("'\\074f4'")).type.str, "<f4");   // octal
  EXPECT_EQ(parse(dict("'\\u003ef8'")).type.str, ">f8");  // \u in a str
  EXPECT_EQ(parse(dict("'<f\\\n4'")).type.str, "<f4");   // a line continuation inside the string
  EXPECT_EQ(parse(dict("r'<f4'")).type.str, "<f4");
  EXPECT_EQ(parse(dict("'<' 'f4'")).type.str, "<f4");    // adjacent literals are one
  // An unknown escape keeps its backslash: '<f\q4' is no dtype.
  EXPECT_NE(error_of(dict("'<f\\q4'")).find("which is not a NumPy data type"), std::string::npos);
  EXPECT_NE(error_of(dict("'\\x3'")).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(dict("b'<f4'")).find("not a data type"), std::string::npos);
  EXPECT_NE(error_of(dict("f'<f4'")).find("f-string"), std::string::npos);
}

TEST(NpyHeader, OnlyPythonWhitespaceEndsTheHeader) {
  const std::string d = dict("'<f4'");
  EXPECT_EQ(parse(d + "   \n").shape, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_NO_THROW((void)parse(d + "\x0c\n"));     // form feed is Python whitespace
  EXPECT_NO_THROW((void)parse(d + "\r\n"));
  EXPECT_NO_THROW((void)parse(d + "  # a comment\n"));
  EXPECT_NO_THROW((void)parse(d));                // no final newline: NumPy does not need one
  for (const char* tail : {"\x0b", "\x0b\n", "\x1c\n", "\x85", ";\n", "\n  x\n"})
    EXPECT_NE(error_of(d + tail).find("malformed .npy header"), std::string::npos) << tail;
  // A last line of spaces alone: NumPy's filter for 1.0 and 2.0 dropped it
  // on Python 3.11 and refuses it on 3.12; 3.0 has no filter. Refused for all.
  for (int major : {1, 2, 3})
    EXPECT_NE(error_of(d + "\n  ", major).find("unexpected indent"), std::string::npos) << major;
  // A count of one: NumPy 1.x read '1f4' as f4, 2.x as a subarray of one.
  const std::string one = error_of(dict("'1f4'"));
  EXPECT_NE(one, "") << "1f4 was read as a plain type";
}

TEST(NpyHeader, DescrsAsNumPyReadsThem) {
  struct Case {
    const char* descr;
    const char* str;
    ByteOrder order;
  } cases[] = {
      {"'|f8'", "<f8", ByteOrder::little},   {"'f4'", "<f4", ByteOrder::little},  {"'=f4'", "<f4", ByteOrder::little},
      {"'>f4'", ">f4", ByteOrder::big},      {"'>i1'", "|i1", ByteOrder::not_applicable},
      {"'d'", "<f8", ByteOrder::little},     {"'float32'", "<f4", ByteOrder::little},
      {"'?'", "|b1", ByteOrder::not_applicable}, {"'<b1'", "|b1", ByteOrder::not_applicable},
      {"'f 4'", "<f4", ByteOrder::little},   {"'()>f8'", ">f8", ByteOrder::big},
      {"'f4,'", "<f4", ByteOrder::little},   {"'c'", "|S1", ByteOrder::not_applicable},
      {"'<M8[ns]'", "<M8[ns]", ByteOrder::little}, {"'>m8'", ">m8", ByteOrder::big},
      {"'<U4'", "<U4", ByteOrder::little},   {"'|S4'", "|S4", ByteOrder::not_applicable},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.descr);
    const fmt::NpyHeader h = parse(dict(c.descr));
    EXPECT_EQ(h.type.str, c.str);
    EXPECT_EQ(h.type.order, c.order);
    EXPECT_NO_THROW((void)fmt::npy_element(h, kName));
  }
  for (const char* bad : {"'<float32'", "'f3'", "'i16'", "'<<f4'", "'f4 '", "'M4'", "'<'", "'|()<f4'", "'M8[ns'"})
    EXPECT_NE(error_of(dict(bad)).find("which is not a NumPy data type"), std::string::npos) << bad;
  // A type NumPy takes but gtranspose does not move is refused as such.
  EXPECT_NE(error_of(dict("'2f4'")).find("subarray"), std::string::npos);
  EXPECT_NE(error_of(dict("'f4,i4'")).find("structured"), std::string::npos);
  EXPECT_NE(error_of(dict("'O'")).find("Python objects"), std::string::npos);
}

TEST(NpyHeader, StrAndBytesSizesAreTheirBytes) {
  // '<U4' is four UCS-4 characters, 16 bytes; '|S4' four bytes: both move.
  EXPECT_EQ(fmt::npy_element(parse(dict("'<U4'")), kName).elem_size, 16u);
  EXPECT_EQ(fmt::npy_element(parse(dict("'|S4'")), kName).elem_size, 4u);
  EXPECT_EQ(fmt::npy_element(parse(dict("'<U1'")), kName).elem_size, 4u);
  EXPECT_NE(error_of(dict("'<U3'")).find("(12 bytes per element, 3 characters of 4 bytes)"), std::string::npos);
  EXPECT_NE(error_of(dict("'|S3'")).find("(3 bytes per element)"), std::string::npos);
  EXPECT_NE(error_of(dict("'<c32'")).find("(32 bytes per element)"), std::string::npos);
}

TEST(NpyHeader, NestingPastPythonsLimitIsAnErrorNotACrash) {
  // 22,000 brackets fit the 64 KiB of a version 1.0 header; a recursive
  // parser overflowed its stack on them. Python allows 200 levels.
  const std::string deep = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'x': " + std::string(22000, '[') +
                           std::string(22000, ']') + "}";
  EXPECT_NE(error_of(deep).find("too many nested brackets"), std::string::npos);
  auto nested = [](int n) {
    return "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), 'x': " + std::string(std::size_t(n), '[') +
           std::string(std::size_t(n), ']') + "}";
  };
  // The dict is one level: 199 more make 200, which parse (and then the
  // unknown key is refused); 200 more are one too many, as in Python.
  EXPECT_NE(error_of(nested(199)).find("unknown keys 'x'"), std::string::npos);
  EXPECT_NE(error_of(nested(200)).find("too many nested brackets"), std::string::npos);
  EXPECT_NE(error_of("{'descr': " + std::string(30000, '(')).find("malformed"), std::string::npos);
}

TEST(NpyHeader, LiteralsAsLiteralEvalTakesThem) {
  EXPECT_EQ(parse("{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \">f8\"}").shape,
            (std::vector<std::uint64_t>{2, 3}));  // Python 2's long suffix, dropped for 1.0 and 2.0
  EXPECT_NE(error_of("{'shape': (2L, 3L), 'fortran_order': False, 'descr': '>f8'}", 3).find("malformed"),
            std::string::npos);  // ... but not for 3.0
  EXPECT_EQ(parse(dict("'<f4'", "(True, 0x10)")).shape, (std::vector<std::uint64_t>{1, 16}));  // bool is an int
  EXPECT_EQ(parse(dict("'<f4'", "(+3, (4))")).shape, (std::vector<std::uint64_t>{3, 4}));
  EXPECT_TRUE(parse(dict("'<f4'", "(3, 4)", "(True)")).fortran_order);
  EXPECT_EQ(parse("({'descr': '<i4', 'fortran_order': False, 'shape': (1_000, 2), 'descr': '<f8'})").type.str, "<f8");
  EXPECT_NE(error_of(dict("'<f4'", "(3, 4)", "1")).find("'fortran_order' is 1"), std::string::npos);
  EXPECT_NE(error_of(dict("'<f4'", "(3, --4)")).find("malformed"), std::string::npos);
  EXPECT_NE(error_of(dict("'<f4'", "(03, 4)")).find("leading zeros"), std::string::npos);
  EXPECT_NE(error_of(dict("'<f4'", "(3.0, 4)")).find("'shape' holds a float"), std::string::npos);
  EXPECT_NE(error_of(dict("'<f4'", "(-3, 4)")).find("not a size NumPy takes"), std::string::npos);
  EXPECT_NE(error_of(dict("'<f4'", "(9223372036854775808, 1)")).find("not a size NumPy takes"), std::string::npos);
  EXPECT_NE(error_of("{'descr': '<f4', 'fortran_order': False, [1]: 2, 'shape': (3, 4)}").find("unhashable"),
            std::string::npos);
  // Version 3.0 is UTF-8: a str may hold any character, bytes that are not UTF-8 are refused.
  EXPECT_EQ(error_of(dict("'<f4'") + " # \xc3\xa9", 3), "");
  EXPECT_NE(error_of(dict("'<f4'") + " # \xe9", 3).find("not UTF-8"), std::string::npos);
}

TEST(NpyHeader, HeaderBytesReachMessagesEscaped) {
  // An unknown key that would retitle a terminal (OSC) and clear it (CSI).
  const std::string evil = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), '\x1b]0;owned\x07\x1b[2J': 1}";
  const std::string msg = error_of(evil);
  EXPECT_NE(msg.find("'\\x1b]0;owned\\x07\\x1b[2J'"), std::string::npos) << msg;
  for (char c : msg) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f) << int(c);
  // A descr with a C1 control (U+009B, CSI) in a version 3.0 (UTF-8) header.
  const std::string c1 = error_of(dict("'<f4\xc2\x9b'"), 3);
  EXPECT_NE(c1.find("'<f4\\x9b'"), std::string::npos) << c1;
  // The malformed text itself is shown escaped.
  const std::string raw = error_of("{'descr': '<f4'\x1b[31m");
  EXPECT_EQ(raw.find('\x1b'), std::string::npos) << raw;
}

TEST(NpyHeader, StrBytesAndDatetimesTranspose) {
  TempDir dir;
  for (const char* descr : {"|S4", "<U2", "<M8[ns]", ">m8[s]", "|S16"}) {
    SCOPED_TRACE(descr);
    fmt::NpyType t;
    ASSERT_TRUE(fmt::resolve_npy_dtype(descr, &t));
    const std::size_t es = std::size_t(t.itemsize);
    const auto data = pattern_matrix(5, 3, es, 9);
    write_file(dir / "in.npy", npy_bytes(1, dict("'" + std::string(descr) + "'", "(5, 3)"), data));
    auto src = open_source(dir / "in.npy", {});
    EXPECT_EQ(src->native_type().npy_descr, descr);
    auto sink = create_sink(dir / "out.npy", *src, SinkOptions{true});
    write_tiled(*sink, transposed(data, 5, 3, es), 3, 5, es);
    sink->commit();
    auto back = open_source(dir / "out.npy", {});
    EXPECT_EQ(back->native_type().npy_descr, descr);
    EXPECT_EQ(read_tiled(*back), transposed(data, 5, 3, es));
  }
}

}  // namespace
}  // namespace gt::test

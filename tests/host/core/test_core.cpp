// Sizes, shapes, dtypes, temporary outputs and the report: the small pieces
// every command line and engine leans on.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "gtranspose/error.hpp"
#include "gtranspose/plan.hpp"
#include "gtranspose/report.hpp"
#include "gtranspose/sizes.hpp"
#include "gtranspose/tempfile.hpp"
#include "gtranspose/types.hpp"

namespace {

template <class F>
gt::ErrorKind kind_of(F f) {
  try {
    f();
  } catch (const gt::Error& e) {
    return e.kind();
  }
  return gt::ErrorKind::internal;
}

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

}  // namespace

TEST(Sizes, SuffixesAreBinary) {
  EXPECT_EQ(gt::parse_size("0"), 0u);
  EXPECT_EQ(gt::parse_size("4096"), 4096u);
  EXPECT_EQ(gt::parse_size("64K"), 64u << 10);
  EXPECT_EQ(gt::parse_size("64KiB"), 64u << 10);
  EXPECT_EQ(gt::parse_size("512m"), 512u << 20);
  EXPECT_EQ(gt::parse_size("8GiB"), 8ull << 30);
  EXPECT_EQ(gt::parse_size("8 GB"), 8ull << 30);
  EXPECT_EQ(gt::parse_size("1.5G"), 3ull << 29);
  EXPECT_EQ(gt::parse_size("2T"), 2ull << 40);
  EXPECT_EQ(gt::parse_size("16777215T"), 16777215ull << 40);
}

TEST(Sizes, RejectsGarbageAndOverflow) {
  for (const char* bad : {"", "G", "12Q", "-5", "1.2.3", "abc", "16777216T", "99999999999999999999", "1e5"})
    EXPECT_EQ(kind_of([&] { (void)gt::parse_size(bad); }), gt::ErrorKind::usage) << bad;
}

TEST(Sizes, CheckedArithmetic) {
  EXPECT_EQ(gt::checked_mul(1ull << 32, 1ull << 31, "x"), 1ull << 63);
  EXPECT_EQ(kind_of([] { (void)gt::checked_mul(1ull << 32, 1ull << 32, "x"); }), gt::ErrorKind::usage);
  EXPECT_EQ(kind_of([] { (void)gt::checked_add(~0ull, 1, "x"); }), gt::ErrorKind::usage);
  EXPECT_EQ(gt::format_bytes(512), "512 B");
  EXPECT_EQ(gt::format_bytes(3ull << 29), "1.50 GiB");
  EXPECT_GE(gt::default_host_budget(), 64ull << 20);
}

TEST(Shapes, ParseAndSixtyFourBitExtents) {
  EXPECT_EQ(gt::parse_shape("1000x2000"), (gt::Shape{1000, 2000}));
  EXPECT_EQ(gt::parse_shape("3X50000000"), (gt::Shape{3, 50000000}));
  EXPECT_EQ(gt::parse_shape("7,9"), (gt::Shape{7, 9}));
  gt::Shape big = gt::parse_shape("50000x50000");
  EXPECT_EQ(big.elems(), 2500000000ull);  // more than 2^31 is ordinary
  EXPECT_EQ(gt::parse_shape("4294967296x2").elems(), 1ull << 33);
  for (const char* bad : {"10", "10x", "x10", "0x5", "5x0", "axb", "10x10x10", "4294967296x4294967296"})
    EXPECT_EQ(kind_of([&] { (void)gt::parse_shape(bad); }), gt::ErrorKind::usage) << bad;
  gt::MatrixInfo m{{4294967296ull, 4294967295ull}, 16, gt::DType::c128};
  EXPECT_EQ(kind_of([&] { (void)m.bytes(); }), gt::ErrorKind::usage);
}

TEST(DTypes, NamesSizesAliases) {
  const std::pair<const char*, std::size_t> all[] = {{"i8", 1},  {"u8", 1},  {"i16", 2}, {"u16", 2}, {"f16", 2},
                                                     {"bf16", 2}, {"i32", 4}, {"u32", 4}, {"f32", 4}, {"i64", 8},
                                                     {"u64", 8}, {"f64", 8}, {"c64", 8}, {"c128", 16}};
  for (auto [name, size] : all) {
    auto t = gt::parse_dtype(name);
    ASSERT_TRUE(t) << name;
    EXPECT_EQ(gt::dtype_size(*t), size) << name;
    EXPECT_STREQ(gt::dtype_name(*t), name);
    EXPECT_TRUE(gt::supported_elem_size(size));
  }
  EXPECT_EQ(gt::parse_dtype("float32"), gt::DType::f32);
  EXPECT_EQ(gt::parse_dtype("F64"), gt::DType::f64);
  EXPECT_FALSE(gt::parse_dtype("f128"));
  EXPECT_FALSE(gt::supported_elem_size(3));
  EXPECT_NE(gt::dtype_names().find("c128"), std::string::npos);
}

TEST(Errors, UsageIsExitTwoOthersOne) {
  EXPECT_EQ(gt::Error(gt::ErrorKind::usage, "x").exit_code(), 2);
  for (auto k : {gt::ErrorKind::input, gt::ErrorKind::output, gt::ErrorKind::io, gt::ErrorKind::no_device,
                 gt::ErrorKind::cuda, gt::ErrorKind::cancelled})
    EXPECT_EQ(gt::Error(k, "x").exit_code(), 1);
}

TEST(TempPath, RemovedUnlessCommitted) {
  char tmpl[] = "/tmp/gtcore-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::string final_path = dir + "/out.raw";
  std::string tmp;
  {
    gt::TempPath t(final_path);
    tmp = t.path();
    EXPECT_EQ(tmp.rfind(dir + "/.out.raw.gt-tmp-", 0), 0u) << tmp;
    std::ofstream(tmp) << "partial";
    EXPECT_TRUE(exists(tmp));
  }
  EXPECT_FALSE(exists(tmp));
  EXPECT_FALSE(exists(final_path));
  {
    gt::TempPath t(final_path);
    std::ofstream(t.path()) << "done";
    t.commit();
    EXPECT_TRUE(t.committed());
  }
  EXPECT_TRUE(exists(final_path));
  {
    // The signal-path cleanup removes live temporaries and nothing else.
    gt::TempPath t(dir + "/other.raw");
    std::ofstream(t.path()) << "partial";
    gt::remove_temp_files_signal_safe();
    EXPECT_FALSE(exists(t.path()));
    EXPECT_TRUE(exists(final_path));
  }
  std::remove(final_path.c_str());
  ::rmdir(dir.c_str());
}

// The commit replaces a file under the final name only when allowed: one
// that appeared meanwhile (another run, another program) is kept.
TEST(TempPath, CommitReplacesOnlyWhatItWasAllowedTo) {
  char tmpl[] = "/tmp/gtcore-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string final_path = dir + "/out.raw";
  std::string tmp;
  {
    gt::TempPath t(final_path);
    tmp = t.path();
    std::ofstream(t.path()) << "mine";
    std::ofstream(final_path) << "theirs";
    try {
      t.commit();
      ADD_FAILURE() << "commit replaced a file it was not allowed to";
    } catch (const gt::Error& e) {
      EXPECT_EQ(e.kind(), gt::ErrorKind::output);
      EXPECT_NE(e.message().find("appeared while the run was going"), std::string::npos) << e.message();
      EXPECT_NE(e.message().find("use {force} to replace it"), std::string::npos) << e.message();
    }
    EXPECT_FALSE(t.committed());
  }
  EXPECT_FALSE(exists(tmp));
  std::ifstream in(final_path);
  std::string got;
  in >> got;
  EXPECT_EQ(got, "theirs");
  {
    gt::TempPath t(final_path, gt::Replace::yes);
    std::ofstream(t.path()) << "forced";
    t.commit();
  }
  std::ifstream in2(final_path);
  in2 >> got;
  EXPECT_EQ(got, "forced");
  // A final name as long as the folder takes: the temporary's name is cut to fit.
  const std::string longest = dir + "/" + std::string(255, 'x');
  {
    gt::TempPath t(longest);
    EXPECT_LE(t.path().size() - dir.size() - 1, 255u) << t.path();
    std::ofstream(t.path()) << "long";
    EXPECT_TRUE(exists(t.path()));
    t.commit();
  }
  EXPECT_TRUE(exists(longest));
  std::remove(longest.c_str());
  std::remove(final_path.c_str());
  ::rmdir(dir.c_str());
}

TEST(Report, TextAndJson) {
  gt::RunReport r;
  r.engine = "cpu";
  r.mode = "out-of-place";
  r.input = "in \"a\".raw";
  r.output = "out.raw";
  r.shape = {1000, 2000};
  r.elem_size = 4;
  r.bytes = 8000000;
  r.wall_s = 0.5;
  r.stage("read").busy_s = 0.1;
  r.stage("read").bytes = 8000000;
  r.stage("read").busy_s += 0.1;
  EXPECT_EQ(r.stages.size(), 1u);
  EXPECT_DOUBLE_EQ(r.gbps(), 0.016);
  std::string t = gt::format_report(r);
  EXPECT_NE(t.find("1000x2000 -> 2000x1000"), std::string::npos) << t;
  EXPECT_NE(t.find("0.02 GB/s"), std::string::npos) << t;
  // Schema 1 (the CLI tests parse real reports field by field): a report
  // with no file has its matrices in memory, described by the report.
  std::string j = gt::report_json(r);
  EXPECT_NE(j.find("\"schema\": 1"), std::string::npos) << j;
  EXPECT_NE(j.find("\"description\": \"in \\\"a\\\".raw\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"format\": \"memory\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"name\": \"read\""), std::string::npos) << j;
  EXPECT_NE(j.find("\"rate_bytes_per_s\": 16000000.0"), std::string::npos) << j;
  // A C1 control (CSI) in a path leaves escaped, and bytes that are not
  // UTF-8 do not make the document invalid.
  r.output = "o\xc2\x9b[2Jut\xff.raw";
  j = gt::report_json(r);
  EXPECT_NE(j.find("o\\u009b[2Jut\\ufffd.raw"), std::string::npos) << j;
  EXPECT_EQ(gt::json_escape("a\nb\x01"), "a\\nb\\u0001");
  // DEL and C1 controls too: a report printed with --json - reaches a terminal.
  EXPECT_EQ(gt::json_escape("x\x7f\xc2\x9by\xc3\xa9"), "x\\u007f\\u009by\xc3\xa9");
  // The host memory line: the budget against what it covers, the process beside it.
  gt::RunReport m;
  m.host_mem_budget = 16 << 20;
  m.host_buffers = 12 << 20;
  m.host_reserved = 2 << 20;
  m.host_mem_peak = 36 << 20;
  m.host_rss_start = 20 << 20;
  const std::string mt = gt::format_report(m);
  EXPECT_NE(mt.find("host memory: buffers 12.00 MiB + formats' caches 2.00 MiB of 16.00 MiB budget; process peak "
                    "36.00 MiB resident (20.00 MiB before the run"),
            std::string::npos)
      << mt;
}

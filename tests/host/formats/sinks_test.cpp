// Behaviour every format shares: locations, same_file, and the life of an
// output (temporary name, --force, no partial file on any failure).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <functional>
#include <thread>

#include "formats_test_util.hpp"
#include "gtranspose/error.hpp"
#include "gtranspose/format.hpp"
#include "testing.hpp"

namespace gt::test {
namespace {

const char* kFormats[] = {"raw", "npy", "h5"};

TEST(Location, FormatByExtensionAndDatasetSuffix) {
  struct Case {
    const char* spec;
    const char* path;
    const char* dataset;
    Format format;
  };
  const Case cases[] = {
      {"in.h5", "in.h5", "", Format::hdf5},
      {"IN.H5:/grp/x", "IN.H5", "/grp/x", Format::hdf5},
      {"dir/f.hdf5:x", "dir/f.hdf5", "/x", Format::hdf5},
      {"f.HDF5:", "f.HDF5", "", Format::hdf5},
      {"weird:name.h5", "weird:name.h5", "", Format::hdf5},
      {"a:b.bin", "a:b.bin", "", Format::raw},
      {"x.npy", "x.npy", "", Format::npy},
      {"X.NpY", "X.NpY", "", Format::npy},
      {"dir.h5/m.npy", "dir.h5/m.npy", "", Format::npy},
      {"data.raw", "data.raw", "", Format::raw},
      {"noext", "noext", "", Format::raw},
  };
  for (const auto& c : cases) {
    Location l = parse_location(c.spec);
    EXPECT_EQ(l.path, c.path) << c.spec;
    EXPECT_EQ(l.dataset, c.dataset) << c.spec;
    EXPECT_EQ(l.format, c.format) << c.spec;
  }
  EXPECT_STREQ(format_name(Format::raw), "raw");
  EXPECT_STREQ(format_name(Format::npy), "npy");
  EXPECT_STREQ(format_name(Format::hdf5), "hdf5");
}

TEST(Location, SameFile) {
  TempDir dir;
  write_file(dir / "a.raw", std::string("abc"));
  write_file(dir / "b.raw", std::string("abc"));
  ASSERT_EQ(0, ::mkdir((dir / "sub").c_str(), 0755));
  ASSERT_EQ(0, ::link((dir / "a.raw").c_str(), (dir / "hard.raw").c_str()));
  ASSERT_EQ(0, ::symlink((dir / "a.raw").c_str(), (dir / "soft.raw").c_str()));
  EXPECT_TRUE(same_file(dir / "a.raw", dir.path() + "/./a.raw"));
  EXPECT_TRUE(same_file(dir / "a.raw", dir / "hard.raw"));
  EXPECT_TRUE(same_file(dir / "soft.raw", dir / "a.raw"));
  EXPECT_TRUE(same_file(dir / "sub/../a.raw", dir / "a.raw"));
  EXPECT_FALSE(same_file(dir / "a.raw", dir / "b.raw"));
  // The second does not exist yet: compare normalised paths.
  EXPECT_TRUE(same_file(dir / "new.raw", dir / "sub/../new.raw"));
  EXPECT_FALSE(same_file(dir / "new.raw", dir / "sub/new.raw"));
  EXPECT_FALSE(same_file(dir / "a.raw", dir / "new.raw"));
  // Dataset suffixes name places inside one file.
  EXPECT_TRUE(same_file(dir / "x.h5:/a", dir / "x.h5:/b"));
}

std::unique_ptr<MemSource> source_of(Shape s, DType t, std::uint64_t seed) {
  return std::make_unique<MemSource>(info_of(s, t), pattern_matrix(s.rows, s.cols, dtype_size(t), seed));
}

void fill(Sink& sink, const MemSource& src) {
  const auto& s = src.info().shape;
  const std::size_t es = src.info().elem_size;
  write_tiled(sink, transposed(src.data(), s.rows, s.cols, es), s.cols, s.rows, es, 16, 16);
}

// Opens a committed output again (a raw one with the sink's shape and dtype).
std::unique_ptr<Source> open_output(const std::string& out, const Sink& sink) {
  OpenOptions o;
  if (parse_location(out).format == Format::raw) {
    o.shape = sink.info().shape;
    o.dtype = sink.info().dtype;
  }
  return open_source(out, o);
}

TEST(Sinks, ExistingOutputNeedsForce) {
  TempDir dir;
  auto src = source_of({8, 6}, DType::i16, 3);
  for (const char* ext : kFormats) {
    SCOPED_TRACE(ext);
    const std::string out = dir / (std::string("out.") + ext);
    write_file(out, std::string("previous contents"));
    Error e = catch_error([&] { (void)create_sink(out, *src, {}); });
    EXPECT_EQ(e.kind(), ErrorKind::output);
    EXPECT_EQ(std::string(e.what()), out + " exists: use force to replace it");
    EXPECT_EQ(e.message(), out + " exists: use {force} to replace it");
    EXPECT_EQ(file_contents(out), "previous contents");
    {
      // Forced but abandoned: the old file survives untouched.
      auto sink = create_sink(out, *src, {true});
      fill(*sink, *src);
    }
    EXPECT_EQ(file_contents(out), "previous contents");
    auto sink = create_sink(out, *src, {true});
    fill(*sink, *src);
    sink->commit();
    auto back = open_output(out, *sink);
    EXPECT_EQ(read_tiled(*back), transposed(src->data(), 8, 6, 2));
    EXPECT_EQ(dir.entries().size(), 1u);
    std::remove(out.c_str());
  }
}

// Each format's source names its own element type for the sinks (the .npy
// descr, the HDF5 dataset); a raw file and memory have none to give.
TEST(Sinks, NativeTypeIsTheSourcesOwn) {
  TempDir dir;
  auto src = source_of({8, 6}, DType::i16, 3);
  EXPECT_EQ(src->native_type().npy_descr, "");
  EXPECT_EQ(src->native_type().hdf5_dataset, -1);
  for (const char* ext : kFormats) {
    SCOPED_TRACE(ext);
    const std::string out = dir / (std::string("out.") + ext);
    auto sink = create_sink(out, *src, {});
    fill(*sink, *src);
    sink->commit();
    const NativeType t = open_output(out, *sink)->native_type();
    EXPECT_EQ(t.npy_descr, std::string(ext) == "npy" ? "<i2" : "");
    if (std::string(ext) == "h5") EXPECT_GE(t.hdf5_dataset, 0);
    else EXPECT_EQ(t.hdf5_dataset, -1);
  }
}

TEST(Sinks, AbandonedSinkLeavesNothing) {
  TempDir dir;
  auto src = source_of({40, 30}, DType::f64, 5);
  for (const char* ext : kFormats) {
    SCOPED_TRACE(ext);
    {
      auto sink = create_sink(dir / (std::string("out.") + ext), *src, {});
      // The data goes to a hidden temporary beside the output, never to the output name.
      auto names = dir.entries();
      ASSERT_EQ(names.size(), 1u);
      EXPECT_EQ(names[0].rfind(std::string(".out.") + ext + ".gt-tmp-", 0), 0u) << names[0];
      fill(*sink, *src);
    }
    EXPECT_TRUE(dir.entries().empty());
  }
}

TEST(Sinks, OutputsArePreallocated) {
  TempDir dir;
  auto src = source_of({300, 200}, DType::u32, 6);
  for (const char* ext : {"raw", "npy"}) {
    auto sink = create_sink(dir / (std::string("p.") + ext), *src, {});
    auto names = dir.entries();
    ASSERT_EQ(names.size(), 1u);
    struct stat st;
    ASSERT_EQ(0, ::stat((dir / names[0]).c_str(), &st));
    const std::uint64_t expect = 300 * 200 * 4 + (std::string(ext) == "npy" ? 128 : 0);
    EXPECT_EQ(std::uint64_t(st.st_size), expect) << ext;
    EXPECT_GE(std::uint64_t(st.st_blocks) * 512, 300u * 200 * 4) << ext << ": blocks reserved";
  }
}

TEST(Sinks, UnwritableDestinations) {
  TempDir dir;
  auto src = source_of({4, 4}, DType::u8, 7);
  write_file(dir / "plainfile", std::string("x"));
  ASSERT_EQ(0, ::mkdir((dir / "folder.raw").c_str(), 0755));
  for (const char* ext : kFormats) {
    SCOPED_TRACE(ext);
    Error e = catch_error([&] { (void)create_sink(dir / (std::string("missing/out.") + ext), *src, {}); });
    EXPECT_EQ(e.kind(), ErrorKind::output);
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
    e = catch_error([&] { (void)create_sink(dir / (std::string("plainfile/out.") + ext), *src, {}); });
    EXPECT_EQ(e.kind(), ErrorKind::output);
    EXPECT_NE(std::string(e.what()).find("is not a folder"), std::string::npos) << e.what();
  }
  Error e = catch_error([&] { (void)create_sink(dir / "folder.raw", *src, {true}); });
  EXPECT_NE(std::string(e.what()).find("is a folder"), std::string::npos) << e.what();
}

TEST(Sinks, ReadOnlyFolder) {
  TempDir dir;
  auto src = source_of({4, 4}, DType::u8, 7);
  if (::geteuid() == 0) GTEST_SKIP() << "running as root: a read-only folder is still writable";
  ASSERT_EQ(0, ::mkdir((dir / "ro").c_str(), 0555));
  for (const char* ext : kFormats) {
    Error p = catch_error([&] { (void)create_sink(dir / (std::string("ro/out.") + ext), *src, {}); });
    EXPECT_EQ(p.kind(), ErrorKind::output);
    EXPECT_NE(std::string(p.what()).find("Permission denied"), std::string::npos) << p.what();
  }
}

// Runs `body` in a child whose files may not grow past `limit` bytes (the
// kernel then fails writes with EFBIG, as a full disk fails them with
// ENOSPC); returns what the child reports.
std::string in_limited_child(std::uint64_t limit, const std::function<std::string()>& body) {
  int p[2];
  if (::pipe(p) != 0) return "pipe failed";
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(p[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit rl{limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &rl);
    std::string r;
    try {
      r = body();
    } catch (const Error& e) {
      r = std::string(e.kind() == ErrorKind::io ? "io: " : "other kind: ") + e.what();
    } catch (const std::exception& e) {
      r = std::string("std::exception: ") + e.what();
    }
    if (::write(p[1], r.data(), r.size()) < 0) _exit(2);
    _exit(0);
  }
  ::close(p[1]);
  std::string r;
  char buf[512];
  ssize_t n;
  while ((n = ::read(p[0], buf, sizeof buf)) > 0) r.append(buf, std::size_t(n));
  ::close(p[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) r += " (child died)";
  return r;
}

TEST(Sinks, WriteFailureMidwayLeavesNoOutput) {
  TempDir dir;
  auto src = source_of({512, 512}, DType::f32, 9);  // 1 MiB, far past the 64 KiB limit
  for (const char* ext : kFormats)
    for (bool prealloc : {true, false}) {
      SCOPED_TRACE(std::string(ext) + (prealloc ? " preallocated" : " not preallocated"));
      const std::string out = dir / (std::string("full.") + ext);
      std::string r = in_limited_child(64 << 10, [&] {
        fmt::set_preallocation_enabled(prealloc);
        auto sink = create_sink(out, *src, {});
        fill(*sink, *src);
        sink->commit();
        return std::string("committed");
      });
      EXPECT_EQ(r.rfind("io: ", 0), 0u) << r;
      EXPECT_NE(r.find("File too large"), std::string::npos) << r;
      EXPECT_NE(r.find(out), std::string::npos) << r;
      EXPECT_TRUE(dir.entries().empty()) << "left behind: " << dir.entries().front();
    }
}

TEST(Sinks, Hdf5FromAnotherThreadStaysQuiet) {
  TempDir dir;
  auto src = source_of({30, 20}, DType::i64, 10);
  {
    auto sink = create_sink(dir / "t.h5:/m", *src, {});
    std::thread([&] { fill(*sink, *src); }).join();
    sink->commit();
  }
  // A failing HDF5 call in a fresh thread throws, and HDF5 prints nothing.
  testing::internal::CaptureStderr();
  std::string msg;
  std::thread([&] {
    try {
      (void)open_source(dir / "t.h5:/nope", {});
    } catch (const Error& e) {
      msg = e.what();
    }
  }).join();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(msg.find("has no dataset /nope"), std::string::npos) << msg;
  EXPECT_EQ(err, "");
  auto back = open_source(dir / "t.h5", {});
  std::vector<unsigned char> got;
  std::thread([&] { got = read_tiled(*back); }).join();
  EXPECT_EQ(got, transposed(src->data(), 30, 20, 8));
}

}  // namespace
}  // namespace gt::test

// Compressed HDF5 end to end, as a user meets it: h5py (with Debian's lz4
// and blosc plugins through hdf5plugin) writes chunked inputs with each
// pipeline, for every element size, chunks that do not divide the extents,
// chunks of one row and of one column; gtranspose transposes them through
// its own codecs; h5py reads every output back (bit for bit, same filters
// in the same order, transposed chunks) and h5dump reads it too. The report
// names the path, codec, threads and compression ratio.
//
// zstd is not here: Debian has no zstd HDF5 plugin for h5py or h5dump; it is
// checked in process against the HDF Group's filter in
// tests/host/formats/hdf5_codecs_test.cpp.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cli/cli_util.hpp"

namespace cli {
namespace {

std::string slurp(const std::string& path) {
  std::string s;
  if (FILE* f = std::fopen(path.c_str(), "rb")) {
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    std::fclose(f);
  }
  return s;
}

bool python_has(const char* modules) {
  return std::system((std::string("/usr/bin/python3 -c 'import ") + modules + "' >/dev/null 2>&1").c_str()) == 0;
}

int python(const TempDir& d, const std::string& code) {
  write_file(d / "s.py", code);
  return std::system(("/usr/bin/python3 " + (d / "s.py") + " " + d.path() + " >" + (d / "py.log") + " 2>&1").c_str());
}

// name -> h5py keyword arguments (hdf5plugin's filters where Debian has the plugin).
const char* kMake = R"(
import sys, h5py, numpy as np
try:
    import hdf5plugin
except ImportError:
    hdf5plugin = None
d = sys.argv[1]
pipes = {
    'gzip': dict(compression='gzip', compression_opts=4),
    'shuffle_gzip': dict(compression='gzip', compression_opts=1, shuffle=True),
    'gzip_fletcher': dict(compression='gzip', shuffle=True, fletcher32=True),
    'szip': dict(compression='szip', compression_opts=('nn', 8)),
    'chunked': dict(),
}
if hdf5plugin is not None and h5py.h5z.filter_avail(32004):
    pipes['lz4'] = dict(hdf5plugin.LZ4())
if hdf5plugin is not None and h5py.h5z.filter_avail(32001):
    pipes['blosc'] = dict(hdf5plugin.Blosc(cname='lz4', clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE))
dtypes = ['<u1', '<i2', '<f4', '<f8', '<c16']
shapes = [((37, 29), (8, 5)), ((23, 41), (1, 41)), ((41, 23), (41, 1))]
rng = np.random.default_rng(5)
names = []
for p, kw in pipes.items():
    for dt in dtypes:
        if p == 'szip' and np.dtype(dt).itemsize > 8:
            continue  # szip takes at most 64-bit pixels
        for k, (shape, chunks) in enumerate(shapes):
            n = f'{p}-{dt[1:]}-{k}'
            # Half smooth (compressible), half random bytes (stored with optional filters skipped).
            if k % 2 == 0:
                a = (np.arange(shape[0] * shape[1]).reshape(shape) // 3).astype(dt)
            else:
                a = np.frombuffer(rng.bytes(shape[0] * shape[1] * np.dtype(dt).itemsize), dtype=dt).reshape(shape)
            with h5py.File(f'{d}/{n}.h5', 'w') as f:
                f.create_dataset('x', data=a, chunks=chunks, **kw)
            names.append(n)
open(f'{d}/names.txt', 'w').write('\n'.join(names))
)";

const char* kCheck = R"(
import sys, h5py, numpy as np
try:
    import hdf5plugin
except ImportError:
    pass
d = sys.argv[1]
bad = 0
for n in open(f'{d}/names.txt').read().split():
    with h5py.File(f'{d}/{n}.h5', 'r') as f, h5py.File(f'{d}/{n}-T.h5', 'r') as g:
        a, t = f['x'], g['x']
        ok = (t.dtype == a.dtype and t.shape == a.shape[::-1] and t.chunks == a.chunks[::-1]
              and list(t._filters) == list(a._filters)
              and t[()].tobytes() == np.ascontiguousarray(a[()].T).tobytes())
        if not ok:
            bad += 1
            print('MISMATCH', n, t.dtype, a.dtype, t.shape, t.chunks, a.chunks, t._filters, a._filters)
print('checked', bad)
sys.exit(1 if bad else 0)
)";

TEST(CliHdf5Codecs, H5pyAndH5dumpReadEveryOutputBitExact) {
  if (!python_has("h5py, numpy")) GTEST_SKIP() << "/usr/bin/python3 has no h5py: interop not checked";
  TempDir d;
  ASSERT_EQ(0, python(d, kMake)) << slurp(d / "py.log");
  const std::string list = slurp(d / "names.txt");
  std::vector<std::string> names;
  for (std::size_t p = 0; p < list.size();) {
    std::size_t e = list.find('\n', p);
    if (e == std::string::npos) e = list.size();
    names.push_back(list.substr(p, e - p));
    p = e + 1;
  }
  // 5 pipelines always (4 element sizes for szip), plus lz4 and blosc where installed.
  ASSERT_GE(names.size(), 5u * 5 * 3 - 3);
  const bool h5dump = std::system("command -v h5dump >/dev/null 2>&1") == 0;
  for (const std::string& n : names) {
    SCOPED_TRACE(n);
    Result r = gtranspose({d / (n + ".h5"), d / (n + "-T.h5"), "--engine", "cpu"});
    ASSERT_EQ(r.exit_code, 0) << why(r);
    // Every pipeline here is one of ours: the direct path ran, and says so
    // (unless CMake did not find a codec's library: then the report says that).
    const bool lacking = r.out.find("this build has none") != std::string::npos;
    EXPECT_NE(r.out.find(lacking ? "HDF5 read: through the HDF5 library" : "HDF5 read: direct chunks"), std::string::npos)
        << why(r);
    EXPECT_NE(r.out.find(lacking ? "HDF5 write: through the HDF5 library" : "HDF5 write: direct chunks"),
              std::string::npos)
        << why(r);
    if (n.rfind("chunked", 0) != 0 && !lacking) {
      EXPECT_NE(r.out.find("codec threads"), std::string::npos) << why(r);
      EXPECT_NE(r.out.find(":1)"), std::string::npos) << why(r);  // the compression ratio
      EXPECT_NE(r.out.find("encode"), std::string::npos) << why(r);
    }
    if (h5dump) {
      EXPECT_EQ(0, std::system(("h5dump " + (d / (n + "-T.h5")) + " >/dev/null 2>&1").c_str())) << "h5dump";
    }
  }
  EXPECT_EQ(0, python(d, kCheck)) << slurp(d / "py.log");
}

}  // namespace
}  // namespace cli

namespace cli {
namespace {

// gt-gen makes the benchmark's inputs without h5py: chunked, filtered,
// smooth (compressible) values that still verify by position; and measures a
// file's own codecs (the benchmark's reference rate).
TEST(CliHdf5Codecs, GenWritesCompressedSmoothInputsAndBenchesTheirCodecs) {
  TempDir d;
  for (const char* filters : {"shuffle,gzip=4", "shuffle,zstd=3", "lz4", "szip,fletcher32", "blosc=5"}) {
    SCOPED_TRACE(filters);
    const std::string f = d / "in.h5";
    Result g = gtgen({f, "--shape", "300x200", "--dtype", "f64", "--values", "smooth", "--chunk", "64x48", "--filters",
                      filters, "--force", "--seed", "3"});
    ASSERT_EQ(g.exit_code, 0) << why(g);
    Result ok = gtgen({"--verify", f, "--values", "smooth", "--seed", "3"});
    EXPECT_EQ(ok.exit_code, 0) << why(ok);
    // The check is real: the other values, or another seed, do not match.
    EXPECT_EQ(gtgen({"--verify", f, "--seed", "3", "-q"}).exit_code, 1);
    EXPECT_EQ(gtgen({"--verify", f, "--values", "smooth", "--seed", "4", "-q"}).exit_code, 1);
    Result t = gtranspose({f, d / "out.h5", "--engine", "cpu", "--force"});
    ASSERT_EQ(t.exit_code, 0) << why(t);
    EXPECT_EQ(gtgen({"--verify", d / "out.h5", "--values", "smooth", "--transposed", "--seed", "3"}).exit_code, 0);
    // A build without one of the codecs' libraries (the GPU machine has no
    // c-blosc headers) reads such a file through HDF5's own plugin, writes a
    // contiguous output and says why; its codec bench says what to install.
    if (t.out.find("this build has none") != std::string::npos) {
      EXPECT_NE(t.out.find("cannot encode here"), std::string::npos) << why(t);
      Result b = gtgen({"--bench-codecs", f, "--threads", "2"});
      EXPECT_EQ(b.exit_code, 2) << why(b);
      EXPECT_NE(b.err.find("this build has none (install"), std::string::npos) << why(b);
      continue;
    }
    // Tiles smaller than a chunk: the output's chunks are written in parts
    // through HDF5's pipeline (for zstd, our codec registered with HDF5,
    // which has no zstd of its own here), and still read back exactly.
    Result part = gtranspose({f, d / "part.h5", "--engine", "cpu", "--force", "--tile", "1000"});
    ASSERT_EQ(part.exit_code, 0) << why(part);
    EXPECT_NE(part.out.find("through the HDF5 library (writes of part of a chunk)"), std::string::npos) << why(part);
    EXPECT_EQ(gtgen({"--verify", d / "part.h5", "--values", "smooth", "--transposed", "--seed", "3"}).exit_code, 0);
    Result b = gtgen({"--bench-codecs", f, "--threads", "2"});
    ASSERT_EQ(b.exit_code, 0) << why(b);
    EXPECT_NE(b.out.find("chunks 64x48, 25 of 25 measured"), std::string::npos) << b.out;
    EXPECT_NE(b.out.find("\"threads\": 1"), std::string::npos) << b.out;
    EXPECT_NE(b.out.find("\"threads\": 2"), std::string::npos) << b.out;
  }
  // Smooth values compress; the pattern does not.
  ASSERT_EQ(gtgen({d / "s.h5", "--shape", "512x512", "--values", "smooth", "--chunk", "128x128", "--filters", "shuffle,gzip=4"})
                .exit_code,
            0);
  ASSERT_EQ(gtgen({d / "p.h5", "--shape", "512x512", "--chunk", "128x128", "--filters", "shuffle,gzip=4"}).exit_code, 0);
  EXPECT_LT(fs::file_size(d / "s.h5") * 3, fs::file_size(d / "p.h5") * 2);
  Result bad = gtgen({d / "x.h5", "--shape", "8x8", "--chunk", "4x4", "--filters", "brotli"});
  EXPECT_EQ(bad.exit_code, 2) << why(bad);
  EXPECT_NE(bad.err.find("unknown filter 'brotli'"), std::string::npos) << why(bad);
  Result nochunk = gtgen({d / "y.h5", "--shape", "8x8", "--filters", "gzip"});
  EXPECT_EQ(nochunk.exit_code, 2) << why(nochunk);
}

}  // namespace
}  // namespace cli

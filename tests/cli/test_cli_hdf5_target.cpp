// FILE.h5:/dataset naming an existing HDF5 file adds the dataset to it, as
// h5copy does: the rest of the file stays bit for bit, {force} replaces
// that one dataset, and an interrupted or killed run leaves no dataset of
// that name. HDF5 output errors (file-size limit, full disk, a damaged
// input's absurd claims) end with exit 1, one line, and nothing at OUT.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "cli/cli_util.hpp"

namespace cli {
namespace {



// target.h5 with datasets of every kind beside each other, and digest.py,
// which prints every object's path, type, shape, bytes and attributes but
// those named on its command line: "the rest of the file" before and after.
const char* kMakeTarget = R"(
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f'{d}/target.h5', 'w') as f:
    f.attrs['owner'] = 'someone else'
    f.create_dataset('keep/contig', data=np.arange(50, dtype='<f8').reshape(5, 10))
    f.create_dataset('keep/chunked', data=np.arange(300, dtype='>i4').reshape(20, 15), chunks=(7, 4), compression='gzip', shuffle=True)
    s = f.create_dataset('keep/str', data=np.array([b'a', b'bc']))
    s.attrs['note'] = 'kept'
    f['keep/soft'] = h5py.SoftLink('/keep/contig')
    f.create_dataset('aT', data=np.zeros((2, 2), dtype='u1'))
)";
const char* kDigest = R"(
import sys, h5py, hashlib
d, skip = sys.argv[1], set(sys.argv[3:])
out = []
def visit(name, obj):
    if name in skip: return
    line = [name, type(obj).__name__]
    if isinstance(obj, h5py.Dataset):
        line += [str(obj.dtype), str(obj.shape), str(obj.chunks), str(obj.compression), hashlib.sha1(obj[()].tobytes()).hexdigest()]
    line += [f'{k}={obj.attrs[k]!r}' for k in sorted(obj.attrs)]
    out.append(' '.join(line))
with h5py.File(sys.argv[2], 'r') as f:
    out.append('root ' + ' '.join(f'{k}={f.attrs[k]!r}' for k in sorted(f.attrs)))
    f.visititems(visit)
    out.append('soft -> ' + f.get('keep/soft', getlink=True).path)
print('\n'.join(out))
)";

std::string digest(const TempDir& d, const std::string& file, const std::string& skip = "") {
  write_file(d / "digest.py", kDigest);
  const int rc = std::system(
      (test_python() + " " + (d / "digest.py") + " " + d.path() + " " + file + " " + skip + " >" + (d / "digest.txt") + " 2>&1").c_str());
  EXPECT_EQ(rc, 0) << gt::test::file_contents(d / "digest.txt");
  return gt::test::file_contents(d / "digest.txt");
}

// The transposed dataset in `file` equals the transpose of `in` bit for bit.
void expect_dataset(const TempDir& d, const std::string& in, const std::string& file, const std::string& name) {
  EXPECT_EQ(0, run_python(d, R"(
import sys, h5py, numpy as np
_, d, i, o, n = sys.argv
with h5py.File(i, 'r') as fi, h5py.File(o, 'r') as fo:
    (src,) = [v for v in fi.values() if isinstance(v, h5py.Dataset) and v.ndim == 2]
    t = fo[n]
    assert t.dtype == src.dtype and t.shape == src.shape[::-1], (t.dtype, t.shape)
    assert t[()].tobytes() == np.ascontiguousarray(src[()].T).tobytes()
)", in + " " + file + " " + name))
      << python_log(d);
}

TEST(CliHdf5Target, AddsToAnExistingFileAndKeepsTheRest) {
  GT_REQUIRE_PYTHON_MODULES("h5py, numpy", "python3-h5py");
  TempDir d;
  ASSERT_EQ(0, run_python(d, kMakeTarget)) << python_log(d);
  generate(d / "a.h5", "37x23", "u16", 5);
  const std::string before = digest(d, d / "target.h5", "aT");
  // Added under a new name, in a group that does not exist yet.
  Result r = gtranspose({d / "a.h5", d / "target.h5:/new/aT", "--engine", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("added to the file"), std::string::npos) << why(r);
  expect_dataset(d, d / "a.h5", d / "target.h5", "/new/aT");
  EXPECT_EQ(digest(d, d / "target.h5", "aT new new/aT"), before);
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"a.h5", "digest.py", "digest.txt", "py.log", "s.py", "target.h5"}));

  // A dataset of that name: refused without --force, the file byte for byte as it was.
  const std::uint64_t bytes = file_hash(d / "target.h5");
  r = gtranspose({d / "a.h5", d / "target.h5:/aT", "--engine", "cpu"});
  expect_error(r, 1, "use --force to replace that dataset");
  EXPECT_EQ(file_hash(d / "target.h5"), bytes);
  // A group there is never replaced, --force or not.
  r = gtranspose({d / "a.h5", d / "target.h5:/keep", "--engine", "cpu", "--force"});
  expect_error(r, 1, "is not a dataset");
  EXPECT_EQ(file_hash(d / "target.h5"), bytes);

  // --force replaces that dataset alone (chunked and compressed this time).
  generate(d / "b.h5", "64x48", "f64", 9);
  r = gtranspose({d / "b.h5", d / "target.h5:/aT", "--engine", "cpu", "--force"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("replacing the dataset of that name"), std::string::npos) << why(r);
  expect_dataset(d, d / "b.h5", d / "target.h5", "/aT");
  EXPECT_EQ(digest(d, d / "target.h5", "aT new new/aT"), before);

  // The input's own file: refused (HDF5 opens a file once per process,
  // read-only for the input), saying how to get there.
  r = gtranspose({d / "a.h5", d / "a.h5:/aT", "--engine", "cpu"});
  expect_error(r, 2, "copy it in with h5copy");

  // A file that is not HDF5 is never added to.
  write_file(d / "plain.h5", "not hdf5");
  r = gtranspose({d / "a.h5", d / "plain.h5:/x", "--engine", "cpu", "--force"});
  expect_error(r, 1, "is not an HDF5 file");
  EXPECT_EQ(gt::test::file_contents(d / "plain.h5"), "not hdf5");
}

// Interrupted (SIGINT) and killed (SIGKILL) while adding a dataset: no
// dataset of that name, the rest of the file as it was, the file readable.
TEST(CliHdf5Target, InterruptedOrKilledLeavesNoPartialDataset) {
  GT_REQUIRE_PYTHON_MODULES("h5py, numpy", "python3-h5py");
  TempDir d;
  ASSERT_EQ(0, run_python(d, kMakeTarget)) << python_log(d);
  // 256 MiB through 2M of budget on one thread: seconds, so the signal at
  // 300 ms lands mid-run (64 MiB ended before 400 ms on an idle machine).
  generate(d / "big.h5", "8192x8192", "f32", 2);
  const std::string before = digest(d, d / "target.h5");
  for (int sig : {SIGINT, SIGKILL}) {
    SCOPED_TRACE(sig);
    for (const char* name : {"/aT", "/fresh"}) {
      Limits lim;
      lim.signal_after_ms = 300;
      lim.signal = sig;
      Result r = gtranspose({d / "big.h5", d / "target.h5:" + name, "--engine", "cpu", "--force", "--host-mem", "2M",
                             "--threads", "1", "-q"},
                            lim);
      ASSERT_EQ(r.signal, sig) << "still running when the signal landed?\n" << why(r);
      // /aT is still the old one, /fresh is not there, nothing else changed.
      EXPECT_EQ(digest(d, d / "target.h5"), before) << name;
    }
  }
}

// z.h5: a.h5's values (seed 4) in gzip-compressed 64x48 chunks, written by
// gt-gen (h5repack is not on every machine the tests run on).
static void chunked_gzip_copy(const TempDir& d) {
  Result g = gtgen({d / "z.h5", "--shape", "600x500", "--dtype", "f32", "--seed", "4", "--chunk", "64x48",
                    "--filters", "gzip=1", "-q"});
  ASSERT_EQ(g.exit_code, 0) << why(g);
}

// HDF5 output errors: exit 1, one line (the OS reason in it), no
// temporary or partial file, and no crash at exit in HDF5's shutdown.
TEST(CliHdf5Target, OutputErrorsExitOneCleanly) {
  TempDir d;
  generate(d / "a.h5", "600x500", "f32", 4);
  chunked_gzip_copy(d);
  // RLIMIT_FSIZE: a new file, contiguous and chunked, and a file added to.
  for (const char* in : {"a.h5", "z.h5"}) {
    Limits lim;
    lim.file_size = 200 << 10;
    Result r = gtranspose({d / in, d / "out.h5", "--engine", "cpu", "--host-mem", "8M"}, lim);
    expect_error(r, 1, "File too large");
    EXPECT_EQ(d.entries(), (std::vector<std::string>{"a.h5", "z.h5"})) << why(r);
  }
  // A file added to: refused or failed, it keeps what it held, and opens.
  for (const char* in : {"a.h5", "z.h5"}) {
    ASSERT_EQ(0, std::system(("cp " + (d / "z.h5") + " " + (d / "t.h5")).c_str()));
    Limits lim;
    lim.file_size = fs::file_size(d / "t.h5") + (64 << 10);
    Result r = gtranspose({d / in, d / "t.h5:/added", "--engine", "cpu", "--host-mem", "8M"}, lim);
    expect_error(r, 1, "File too large");
    // It opens and its dataset is intact (gt-gen reads it through HDF5);
    // where HDF5's tools are installed (CI), h5ls and h5diff say the same.
    Result v = gtgen({"--verify", d / "t.h5:/data", "--seed", "4", "-q"});
    EXPECT_EQ(v.exit_code, 0) << why(v);
    if (std::system("command -v h5ls >/dev/null 2>&1 && command -v h5diff >/dev/null 2>&1") == 0) {
      Result ls = run("/bin/sh", {"-c", "h5ls " + (d / "t.h5")});
      EXPECT_EQ(ls.exit_code, 0) << why(ls);
      EXPECT_EQ(ls.out.find("added"), std::string::npos) << ls.out;
      Result same = run("/bin/sh", {"-c", "h5diff " + (d / "z.h5") + " " + (d / "t.h5")});
      EXPECT_EQ(same.exit_code, 0) << why(same);
    }
  }
}

// A full disk for real: a 1 MiB tmpfs in a mount namespace of its own
// (unshare, as root or as a user with user namespaces).
TEST(CliHdf5Target, FullDiskExitsOneCleanly) {
  if (std::system("unshare -rm true >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no mount namespace here (unshare -rm): FullDisk covered by OutputErrorsExitOneCleanly's limit";
  TempDir d;
  generate(d / "a.h5", "600x500", "f32", 4);
  chunked_gzip_copy(d);
  fs::create_directory(d / "mnt");
  for (const char* in : {"a.h5", "z.h5"}) {
    SCOPED_TRACE(in);
    const std::string script = "mount -t tmpfs -o size=1m tmpfs " + (d / "mnt") + " && " + GT_CLI_PATH + " " +
                               (d / in) + " " + (d / "mnt/out.h5") + " --engine cpu --host-mem 8M 2>" + (d / "err.txt") +
                               "; echo \"rc=$?\"; ls -A " + (d / "mnt");
    Result r = run("/usr/bin/unshare", {"-rm", "sh", "-c", script});
    const std::string err = gt::test::file_contents(d / "err.txt");
    EXPECT_EQ(r.out, "rc=1\n") << "exit 1 and nothing left on the full disk expected\n" << why(r) << err;
    EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  }
}

// A damaged input: a dataset whose dataspace claims an absurd shape (its
// dimensions patched in the file), and a dataset whose object header is
// overwritten. Exit 1, one line that says the file is damaged, nothing at OUT.
TEST(CliHdf5Target, DamagedInputsSayDamaged) {
  GT_REQUIRE_PYTHON_MODULES("h5py, numpy", "python3-h5py");
  TempDir d;
  ASSERT_EQ(0, run_python(d, R"(
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f'{d}/big.h5', 'w') as f:
    f.create_dataset('g', data=np.arange(3 * 5, dtype='u1').reshape(3, 5))
raw = bytearray(open(f'{d}/big.h5', 'rb').read())
dims = (3).to_bytes(8, 'little') + (5).to_bytes(8, 'little')
at = raw.find(dims)
raw[at:at + 32] = (3 << 28).to_bytes(8, 'little') + (5 << 28).to_bytes(8, 'little') + raw[at + 16:at + 32]
open(f'{d}/big.h5', 'wb').write(raw)
with h5py.File(f'{d}/hdr.h5', 'w') as f:
    f.create_dataset('g', data=np.arange(3 * 5, dtype='u1').reshape(3, 5))
    addr = f['g'].id.get_offset()
    header = h5py.h5o.get_info(f['g'].id).addr
raw = bytearray(open(f'{d}/hdr.h5', 'rb').read())
raw[header:header + 16] = b'\xff' * 16
open(f'{d}/hdr.h5', 'wb').write(raw)
)")) << python_log(d);
  Result r = gtranspose({d / "big.h5", d / "out.h5", "--engine", "cpu"});
  expect_error(r, 1, "is damaged: dataset /g in " + (d / "big.h5") + " claims shape 805306368x1342177280");
  EXPECT_FALSE(fs::exists(d / "out.h5"));
  r = gtranspose({d / "hdr.h5:/g", d / "out.h5", "--engine", "cpu"});
  expect_error(r, 1, "is damaged");
  EXPECT_EQ(r.err.find("has no dataset"), std::string::npos) << why(r);
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"big.h5", "hdr.h5", "py.log", "s.py"}));
}

// A filter this HDF5 has no plugin for (lzf: h5py carries its own, the
// HDF5 library has none on Debian) is named, with what to install, not
// reported as a failed dlopen; nothing is left at OUT.
TEST(CliHdf5Target, MissingFilterNamedWithWhatToInstall) {
  GT_REQUIRE_PYTHON_MODULES("h5py, numpy", "python3-h5py");
  TempDir d;
  ASSERT_EQ(0, run_python(d, R"(
import sys, h5py, numpy as np
d = sys.argv[1]
with h5py.File(f'{d}/lzf.h5', 'w') as f:
    f.create_dataset('x', data=np.arange(40 * 30, dtype='<u4').reshape(40, 30), chunks=(8, 8), compression='lzf')
)")) << python_log(d);
  Result probe = run("/bin/sh", {"-c", "h5dump -d /x " + (d / "lzf.h5") + " >/dev/null 2>&1"});
  ASSERT_NE(probe.exit_code, 0) << "this HDF5 reads lzf (a plugin is installed): the test needs a filter it lacks";
  Result r = gtranspose({d / "lzf.h5", d / "out.h5", "--engine", "cpu"});
  expect_error(r, 1, "uses HDF5 filter 32000 (lzf), which this HDF5 cannot decode: install the lzf plugin");
  EXPECT_NE(r.err.find("HDF5_PLUGIN_PATH"), std::string::npos) << why(r);
  EXPECT_EQ(r.err.find("dlopen"), std::string::npos) << why(r);
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"lzf.h5", "py.log", "s.py"}));
}

}  // namespace
}  // namespace cli

// Crash safety end to end: an in-place run killed with SIGKILL at random
// moments (and its resumed run killed again), then finished with --resume and
// checked against the pattern with gt-gen --verify; the journal is gone
// afterwards. Also the refusals: a journal without --resume, --resume with
// nothing to resume or out of place, and what an interrupt says.
//
// The random kill times come from a seed printed with every failure; set
// GT_JOURNAL_SEED to replay one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>

#include "cli/cli_util.hpp"
#include "support/gpu.hpp"

using cli::expect_error;
using cli::gtgen;
using cli::gtranspose;
using cli::Result;
using cli::TempDir;
using cli::why;

namespace {

// 2000x2000 f32 (16 MB) under --host-mem 1M: 128-sided tiles, 136 pairs, each
// with its own journal batch and syncs, so a run lasts long enough to be
// killed anywhere in it.
const std::string kShape = "2000x2000";
const std::vector<std::string> kRaw{"--shape", kShape, "--dtype", "f32"};
constexpr int kSeed = 9;

bool exists(const std::string& path) { return cli::fs::exists(cli::fs::symlink_status(path)); }

std::vector<std::string> inplace_args(const std::string& file, const std::string& engine, bool resume) {
  std::vector<std::string> a{file, "--in-place", "--engine", engine, "--host-mem", "1M", "-q"};
  if (engine == "cuda") a.insert(a.end(), {"--device-mem", "1M"});
  if (resume) a.push_back("--resume");
  a.insert(a.end(), kRaw.begin(), kRaw.end());
  return a;
}

// Whether `file` holds the pattern (transposed or not).
bool holds_pattern(const std::string& file, bool transposed) {
  std::vector<std::string> a{"--verify", file, "--seed", std::to_string(kSeed), "-q"};
  if (transposed) a.push_back("--transposed");
  a.insert(a.end(), kRaw.begin(), kRaw.end());
  return gtgen(a).exit_code == 0;
}

std::uint64_t test_seed() {
  if (const char* s = std::getenv("GT_JOURNAL_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

// Starts gtranspose and kills it (SIGKILL) as soon as `journal` exists:
// true when it died that way, with its journal there.
bool kill_once_journaled(const std::vector<std::string>& args, const std::string& journal) {
  std::vector<char*> argv{const_cast<char*>(GT_CLI_PATH)};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    ::dup2(null, 0), ::dup2(null, 1), ::dup2(null, 2);
    ::execv(GT_CLI_PATH, argv.data());
    ::_exit(127);
  }
  int status = 0;
  bool seen = false;
  for (int i = 0; i < 40000 && !seen; ++i) {
    seen = exists(journal);
    if (!seen && ::waitpid(pid, &status, WNOHANG) == pid) return false;
    if (!seen) ::usleep(250);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  return seen && WIFSIGNALED(status);
}

// Kills in-place runs of `engine` at random moments, `trials` times over,
// and finishes each with --resume.
void kill_and_resume(const std::string& engine, int trials) {
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE("GT_JOURNAL_SEED=" + std::to_string(seed) + " (set it to replay these kill times)");
  std::mt19937_64 rng(seed);
  TempDir d;
  const std::string f = d / "m.raw", journal = f + ".gtjournal";

  // An uninterrupted run: it works, leaves nothing behind, and times the kills.
  ASSERT_EQ(gtgen({f, "--shape", kShape, "--dtype", "f32", "--seed", std::to_string(kSeed)}).exit_code, 0);
  const auto t0 = std::chrono::steady_clock::now();
  Result full = gtranspose(inplace_args(f, engine, false));
  const int run_ms = int(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  ASSERT_EQ(full.exit_code, 0) << why(full);
  ASSERT_TRUE(holds_pattern(f, true));
  ASSERT_EQ(d.entries(), std::vector<std::string>{"m.raw"});

  for (int t = 0; t < trials; ++t) {
    SCOPED_TRACE("trial " + std::to_string(t));
    ASSERT_EQ(gtgen({f, "--shape", kShape, "--dtype", "f32", "--seed", std::to_string(kSeed), "--force"}).exit_code, 0);
    // The first kill anywhere in the run (from before the journal exists to
    // after it is removed); up to two more in the resumed runs.
    bool done = false, original = true;
    std::string kills;  // what each kill left, for the checks after the loop
    for (int kill = 0; kill < 3 && !done; ++kill) {
      cli::Limits lim;
      lim.signal = SIGKILL;
      lim.signal_after_ms = int(rng() % std::uint64_t(std::max(1, kill == 0 ? run_ms + run_ms / 5 : run_ms / 2)));
      const bool resume = exists(journal);
      Result r = gtranspose(inplace_args(f, engine, resume), lim);
      SCOPED_TRACE("kill " + std::to_string(kill) + " after " + std::to_string(lim.signal_after_ms) + " ms");
      kills += (kills.empty() ? "" : ", ") + std::string(resume ? "--resume " : "") + "killed after " +
               std::to_string(lim.signal_after_ms) + " ms: " +
               (r.signal != SIGKILL ? "had ended" : exists(journal) ? "journal" : "no journal");
      if (r.signal != SIGKILL) {
        ASSERT_EQ(r.exit_code, 0) << why(r);
        done = true;
        break;
      }
      if (!exists(journal)) {
        // Killed before the journal was made (the file is untouched) or
        // after it was removed (the file is complete).
        if (holds_pattern(f, true)) done = true;
        else ASSERT_TRUE(original && holds_pattern(f, false)) << "no journal, and the file is neither before nor after";
      } else {
        original = false;
      }
    }
    SCOPED_TRACE("runs: " + kills);
    if (!done) {
      Result r = gtranspose(inplace_args(f, engine, exists(journal)));
      ASSERT_EQ(r.exit_code, 0) << why(r);
    }
    ASSERT_TRUE(holds_pattern(f, true)) << "not the transpose after --resume";
    ASSERT_FALSE(exists(journal)) << "the journal outlived the run";
    ASSERT_EQ(d.entries(), std::vector<std::string>{"m.raw"}) << "stray files";
  }
}

}  // namespace

TEST(Journal, KillNineAtRandomMomentsThenResumeCpu) { kill_and_resume("cpu", 6); }

TEST(Journal, KillNineAtRandomMomentsThenResumeCuda) {
  GT_SKIP_WITHOUT_GPU();
  kill_and_resume("cuda", 4);
}

TEST(Journal, RefusalsSayWhatToDo) {
  TempDir d;
  const std::string f = d / "m.raw", journal = f + ".gtjournal";
  ASSERT_EQ(gtgen({f, "--shape", kShape, "--dtype", "f32", "--seed", std::to_string(kSeed)}).exit_code, 0);

  // Nothing to resume (exit 2); --resume out of place (exit 2).
  expect_error(gtranspose(inplace_args(f, "cpu", true)), 2, "nothing to resume");
  std::vector<std::string> out{f, d / "t.raw", "--resume", "--engine", "cpu"};
  out.insert(out.end(), kRaw.begin(), kRaw.end());
  expect_error(gtranspose(out), 2, "--resume");
  EXPECT_EQ(d.entries(), std::vector<std::string>{"m.raw"});

  // Interrupted by SIGINT: the message says --resume finishes it.
  cli::Limits lim;
  // 50 ms after the journal appears: some pairs done (each costs syncs), not
  // all (136 pairs); a fixed 300 ms from the start came before the journal
  // on a loaded machine.
  lim.signal_once_exists = journal;
  lim.signal_after_ms = 50;
  std::vector<std::string> args = inplace_args(f, "cpu", false);
  args.insert(args.end(), {"--threads", "1"});
  Result r = gtranspose(args, lim);
  ASSERT_EQ(r.signal, SIGINT) << why(r);
  ASSERT_TRUE(exists(journal)) << "interrupted before the journal was made: raise signal_after_ms\n" << why(r);
  EXPECT_NE(r.err.find("partly transposed"), std::string::npos) << why(r);
  EXPECT_NE(r.err.find("--resume"), std::string::npos) << why(r);

  // A journal without --resume: refused (exit 1), file and journal kept.
  const auto before = cli::file_hash(f);
  expect_error(gtranspose(inplace_args(f, "cpu", false)), 1, "rerun with --in-place --resume to finish it");
  EXPECT_EQ(cli::file_hash(f), before) << "the matrix changed";
  EXPECT_TRUE(exists(journal));
  // A GPU named outright where there is none: refused before recovery
  // writes to the file (auto resolves once the files are open, this first).
  if (!gt::test::have_gpu()) {
    expect_error(gtranspose(inplace_args(f, "cuda", true)), 1, "--engine cuda");
    EXPECT_EQ(cli::file_hash(f), before) << "the recovery ran before the engine was refused";
    EXPECT_TRUE(exists(journal));
  }

  // Finish it; --chunk does not change a resumed run's tiles.
  std::vector<std::string> chunked = inplace_args(f, "cpu", true);
  chunked.insert(chunked.end(), {"--chunk", "64"});
  chunked.erase(std::find(chunked.begin(), chunked.end(), "-q"));
  Result c = gtranspose(chunked);
  ASSERT_EQ(c.exit_code, 0) << why(c);
  EXPECT_NE(c.out.find("resumed from the journal"), std::string::npos) << why(c);
  EXPECT_NE(c.out.find("tiles of 64x64"), std::string::npos) << why(c);  // --host-mem 1M's, not --chunk's
  EXPECT_TRUE(holds_pattern(f, true));
  EXPECT_EQ(d.entries(), std::vector<std::string>{"m.raw"});

  // A journal whose bands need more than --host-mem: one line naming the
  // --host-mem it needs, and with that it finishes.
  ASSERT_EQ(gtgen({f, "--shape", kShape, "--dtype", "f32", "--seed", std::to_string(kSeed), "--force"}).exit_code, 0);
  std::vector<std::string> big{f, "--in-place", "--engine", "cpu", "--host-mem", "64M"};
  big.insert(big.end(), kRaw.begin(), kRaw.end());
  ASSERT_TRUE(kill_once_journaled(big, journal)) << "the run ended before its journal was seen";
  std::vector<std::string> small = inplace_args(f, "cpu", true);
  // (A square in bands: 125 rows a band, ceil(2000 / 16).)
  expect_error(gtranspose(small), 2, "moves bands of 125 rows");
  expect_error(gtranspose(small), 2, ": resume with --host-mem ");
  EXPECT_TRUE(exists(journal));
  big.push_back("--resume");
  Result b = gtranspose(big);
  ASSERT_EQ(b.exit_code, 0) << why(b);
  EXPECT_TRUE(holds_pattern(f, true));
  EXPECT_EQ(d.entries(), std::vector<std::string>{"m.raw"});
}

// A rectangle in place end to end: a 2:1 raw file and a 1:3 .npy, a grid,
// general shapes (gcd 2, gcd 1), each transposed and checked with gt-gen; a
// budget that holds no band is one line naming the one that would, the
// file untouched.
TEST(Journal, RectanglesInPlace) {
  TempDir d;
  const std::string f = d / "r.raw", n = d / "w.npy";
  ASSERT_EQ(gtgen({f, "--shape", "600x300", "--dtype", "f32", "--seed", "4"}).exit_code, 0);
  Result r = gtranspose({f, "--in-place", "--shape", "600x300", "--dtype", "f32", "--engine", "cpu", "--host-mem", "1M"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("2 square blocks of 300"), std::string::npos) << why(r);
  EXPECT_EQ(gtgen({"--verify", f, "--transposed", "--shape", "300x600", "--dtype", "f32", "--seed", "4", "-q"}).exit_code, 0);
  ASSERT_EQ(gtgen({n, "--shape", "50x150", "--dtype", "u16", "--seed", "5"}).exit_code, 0);
  r = gtranspose({n, "--in-place", "--engine", "cpu", "-q"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_EQ(gtgen({"--verify", n, "--transposed", "--seed", "5", "-q"}).exit_code, 0) << "the header says 150x50";
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"r.raw", "w.npy"}));

  // A grid: 96x144 shares 48, so 2 x 3 blocks of 48 (the shape a 3000x2000 file takes).
  const std::string g = d / "g.raw";
  ASSERT_EQ(gtgen({g, "--shape", "96x144", "--dtype", "f64", "--seed", "6"}).exit_code, 0);
  r = gtranspose({g, "--in-place", "--shape", "96x144", "--dtype", "f64", "--engine", "cpu", "--host-mem", "1M"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("6 square blocks of 48 (2 x 3)"), std::string::npos) << why(r);
  EXPECT_EQ(gtgen({"--verify", g, "--transposed", "--shape", "144x96", "--dtype", "f64", "--seed", "6", "-q"}).exit_code, 0);
  std::filesystem::remove(g);

  // General shapes (no grid: gcd 2, gcd 1): the gcd decomposition in bands.
  const std::string odd = d / "odd.raw";
  ASSERT_EQ(gtgen({odd, "--shape", "6x4", "--dtype", "f32", "--seed", "1"}).exit_code, 0);
  r = gtranspose({odd, "--in-place", "--shape", "6x4", "--dtype", "f32", "--engine", "cpu"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("the gcd decomposition (gcd 2): a rotation of every column, a shuffle inside every row, a "
                       "shuffle inside every column"),
            std::string::npos)
      << why(r);
  EXPECT_EQ(gtgen({"--verify", odd, "--transposed", "--shape", "4x6", "--dtype", "f32", "--seed", "1", "-q"}).exit_code, 0);
  std::filesystem::remove(odd);
  const std::string big = d / "big.raw";
  ASSERT_EQ(gtgen({big, "--shape", "1000x999", "--dtype", "f32", "--seed", "7"}).exit_code, 0);
  // The dry run's plan: 2 passes in 16 bands of 131 rows or columns; the
  // journal writes the matrix once a pass and holds two bands.
  r = gtranspose({big, "--in-place", "--shape", "1000x999", "--dtype", "f32", "--engine", "cpu", "--host-mem", "1M",
                  "--threads", "2", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("bands of 131 whole rows and of 131 whole columns"), std::string::npos) << why(r);
  EXPECT_NE(r.out.find("journal writes 7.62 MiB over the run; its file holds at most 1.01 MiB"), std::string::npos)
      << why(r);
  EXPECT_NE(r.out.find("2 passes over the file in 16 bands"), std::string::npos) << why(r);
  r = gtranspose({big, "--in-place", "--shape", "1000x999", "--dtype", "f32", "--engine", "cpu", "--host-mem", "1M"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_NE(r.out.find("shuffle columns"), std::string::npos) << why(r);
  EXPECT_NE(r.out.find("16 journal syncs, 16 matrix flushes"), std::string::npos) << why(r);
  EXPECT_EQ(gtgen({"--verify", big, "--transposed", "--shape", "999x1000", "--dtype", "f32", "--seed", "7", "-q"}).exit_code,
            0);
  const std::string p = d / "p.npy";
  ASSERT_EQ(gtgen({p, "--shape", "13x7", "--dtype", "u16", "--seed", "8"}).exit_code, 0);
  r = gtranspose({p, "--in-place", "--engine", "cpu", "-q"});
  ASSERT_EQ(r.exit_code, 0) << why(r);
  EXPECT_EQ(gtgen({"--verify", p, "--transposed", "--seed", "8", "-q"}).exit_code, 0) << "the header says 7x13";
  // A budget that holds no band: one line, the file untouched, no journal.
  const auto before = cli::file_hash(big);
  expect_error(gtranspose({big, "--in-place", "--shape", "999x1000", "--dtype", "f32", "--host-mem", "4K"}), 2,
               "in place, a 999x1000 matrix of 4-byte elements moves in bands of whole rows and columns, and "
               "--host-mem 4K holds no two of them: give --host-mem 8K or more");
  EXPECT_EQ(cli::file_hash(big), before);
  EXPECT_EQ(d.entries(), (std::vector<std::string>{"big.raw", "p.npy", "r.raw", "w.npy"}));
}

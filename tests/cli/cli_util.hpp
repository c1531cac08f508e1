// Runs the gtranspose and gt-gen binaries as a user would and captures what
// they print, their exit status and their peak memory.
#pragma once
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "support/temp_dir.hpp"

namespace cli {

namespace fs = std::filesystem;
using gt::test::TempDir;
using gt::test::write_file;

struct Result {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  bool timed_out = false;
  std::string out, err;
  std::uint64_t max_rss = 0;  // bytes
  std::string cmdline;
};

struct Limits {
  std::uint64_t file_size = 0;  // RLIMIT_FSIZE in bytes (0: none); the program must cope with SIGXFSZ itself
  int signal_after_ms = -1;     // send `signal` this long after start
  // Or once this path exists (a run under way, however loaded the machine),
  // and then signal_after_ms (if >= 0) later.
  std::string signal_once_exists;
  int signal = SIGINT;
  bool ignore_sighup = false;   // start the child as nohup does
  int timeout_ms = -1;          // SIGKILL the child if it runs longer (Result::timed_out): a hang fails, not blocks
};

inline Result run(const std::string& exe, const std::vector<std::string>& args, const Limits& lim = {}) {
  Result r;
  r.cmdline = exe;
  for (const auto& a : args) r.cmdline += " " + a;
  char out_tmpl[] = "/tmp/gtcli-outXXXXXX", err_tmpl[] = "/tmp/gtcli-errXXXXXX";
  int fo = mkstemp(out_tmpl), fe = mkstemp(err_tmpl);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fo, 1);
    dup2(fe, 2);
    int devnull = open("/dev/null", O_RDONLY);
    dup2(devnull, 0);
    if (lim.file_size) {
      struct rlimit rl {lim.file_size, lim.file_size};
      setrlimit(RLIMIT_FSIZE, &rl);
    }
    if (lim.ignore_sighup) signal(SIGHUP, SIG_IGN);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(exe.c_str()));
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(exe.c_str(), argv.data());
    _exit(127);
  }
  int status = 0;
  struct rusage ru {};
  bool reaped = false;
  if (!lim.signal_once_exists.empty()) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(lim.signal_once_exists) && std::chrono::steady_clock::now() < end &&
           !(reaped = wait4(pid, &status, WNOHANG, &ru) == pid))
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (!reaped && lim.signal_after_ms >= 0) std::this_thread::sleep_for(std::chrono::milliseconds(lim.signal_after_ms));
    if (!reaped) kill(pid, lim.signal);
  } else if (lim.signal_after_ms >= 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(lim.signal_after_ms));
    kill(pid, lim.signal);
  }
  if (reaped) {
  } else if (lim.timeout_ms >= 0) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(lim.timeout_ms);
    while (wait4(pid, &status, WNOHANG, &ru) == 0) {
      if (std::chrono::steady_clock::now() > end) {
        r.timed_out = true;
        kill(pid, SIGKILL);
        wait4(pid, &status, 0, &ru);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  } else {
    wait4(pid, &status, 0, &ru);
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.max_rss = std::uint64_t(ru.ru_maxrss) * 1024;
  close(fo);
  close(fe);
  r.out = gt::test::file_contents(out_tmpl);
  r.err = gt::test::file_contents(err_tmpl);
  unlink(out_tmpl);
  unlink(err_tmpl);
  return r;
}

// What a failing assertion prints: the command and everything it said.
inline std::string why(const Result& r) {
  return "command: " + r.cmdline + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

inline Result gtranspose(const std::vector<std::string>& args, const Limits& lim = {}) {
  return run(GT_CLI_PATH, args, lim);
}
inline Result gtgen(const std::vector<std::string>& args) { return run(GT_GEN_PATH, args); }

inline void generate(const std::string& path, const std::string& shape, const std::string& dtype, int seed = 3) {
  Result g = gtgen({path, "--shape", shape, "--dtype", dtype, "--seed", std::to_string(seed)});
  ASSERT_EQ(g.exit_code, 0) << why(g);
}

inline void expect_transposed(const std::string& path, int seed, const std::vector<std::string>& raw_args = {}) {
  std::vector<std::string> args{"--verify", path, "--transposed", "--seed", std::to_string(seed), "-q"};
  args.insert(args.end(), raw_args.begin(), raw_args.end());
  Result v = gtgen(args);
  EXPECT_EQ(v.exit_code, 0) << why(v);
}

// One error line (plus nothing else), the right exit code, and a message.
inline void expect_error(const Result& r, int code, const std::string& needle) {
  EXPECT_EQ(r.exit_code, code) << why(r);
  EXPECT_NE(r.err.find(needle), std::string::npos) << "expected '" << needle << "' in stderr\n" << why(r);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << "expected one line\n" << why(r);
  EXPECT_EQ(r.err.rfind("gtranspose: ", 0), 0u) << why(r);
}

// The Python the interop tests run: $GT_PYTHON, else the first of python3 on
// the PATH and /usr/bin/python3 (the distribution's, which has what
// scripts/setup.sh installs) that imports `modules`; "" if none does. (The
// GPU machine's h5py is in a venv's python3, first on its PATH.)
inline std::string python_with(const std::string& modules) {
  std::vector<std::string> cands;
  if (const char* e = std::getenv("GT_PYTHON")) cands.push_back(e);
  cands.push_back("python3");
  cands.push_back("/usr/bin/python3");
  for (const auto& py : cands)
    if (std::system((py + " -c 'import " + modules + "' >/dev/null 2>&1").c_str()) == 0) return py;
  return "";
}
inline std::string test_python() {
  static const std::string py = [] {
    const std::string p = python_with("h5py, numpy");
    return p.empty() ? std::string("/usr/bin/python3") : p;
  }();
  return py;
}

// Where no Python has what a test needs: a failure, since scripts/setup.sh
// installs it; a skip only where GT_TEST_PYTHON_OPTIONAL=1 says the machine
// cannot install anything (scripts/gpu-check.sh sets it on the GPU machine).
#define GT_REQUIRE_INSTALLED(ok, what, what_to_install)                                                     \
  do {                                                                                                         \
    if (!(ok)) {                                                                                               \
      const char* opt = std::getenv("GT_TEST_PYTHON_OPTIONAL");                                                \
      if (opt && std::string(opt) == "1") GTEST_SKIP() << (what) << " missing, and this machine installs nothing"; \
      FAIL() << (what) << " missing: run scripts/setup.sh (" << (what_to_install) << ")";                      \
    }                                                                                                          \
  } while (0)
#define GT_REQUIRE_PYTHON_MODULES(modules, what_to_install) \
  GT_REQUIRE_INSTALLED(!::cli::python_with(modules).empty(), std::string("a python3 with ") + (modules), what_to_install)

// Runs `code` with test_python(), argv[1] = the folder, then `args`; its
// exit status. What it printed goes to py.log (python_log) for failures.
inline int run_python(const TempDir& d, const std::string& code, const std::string& args = "") {
  write_file(d / "s.py", code);
  return std::system(
      (test_python() + " " + (d / "s.py") + " " + d.path() + " " + args + " >" + (d / "py.log") + " 2>&1").c_str());
}
inline std::string python_log(const TempDir& d) { return gt::test::file_contents(d / "py.log"); }

// FNV-1a of a file's bytes: "input untouched" checks.
inline std::uint64_t file_hash(const std::string& path) {
  const std::string s = gt::test::file_contents(path);
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h ^ s.size();
}

}  // namespace cli

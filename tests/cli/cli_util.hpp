// Runs the gtranspose and gt-gen binaries as a user would and captures what
// they print, their exit status and their peak memory.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace cli {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::string out, err;
  std::uint64_t max_rss = 0;  // bytes
  std::string cmdline;
};

struct Limits {
  std::uint64_t file_size = 0;  // RLIMIT_FSIZE in bytes (0: none); the program must cope with SIGXFSZ itself
  int signal_after_ms = -1;     // send `signal` this long after start
  int signal = SIGINT;
  bool ignore_sighup = false;   // start the child as nohup does
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

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
  if (lim.signal_after_ms >= 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(lim.signal_after_ms));
    kill(pid, lim.signal);
  }
  int status = 0;
  struct rusage ru {};
  wait4(pid, &status, 0, &ru);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  r.max_rss = std::uint64_t(ru.ru_maxrss) * 1024;
  close(fo);
  close(fe);
  r.out = slurp(out_tmpl);
  r.err = slurp(err_tmpl);
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

// A fresh folder per test, removed afterwards.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/gtcli-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }
  // Names of the entries in the folder, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(path_)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }

 private:
  std::string path_;
};

// FNV-1a of a file's bytes: "input untouched" checks.
inline std::uint64_t file_hash(const std::string& path) {
  std::string s = slurp(path);
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h ^ s.size();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << bytes;
}

}  // namespace cli

// Files for tests: a fresh folder per test, removed with everything in it,
// and whole-file reads and writes.
#pragma once
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace gt::test {

class TempDir {
 public:
  // Where the folder lives: under $TMPDIR (or /tmp), or on tmpfs (/dev/shm)
  // where it is writable, for tests that sync thousands of times.
  enum class Where { tmp, memory };

  explicit TempDir(Where where = Where::tmp) {
    namespace fs = std::filesystem;
    const std::string base = where == Where::memory && ::access("/dev/shm", W_OK) == 0
                                 ? std::string("/dev/shm")
                                 : fs::temp_directory_path().string();
    std::string tmpl = base + "/gt-test-XXXXXX";
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed in " + base);
    path_ = tmpl;
  }
  ~TempDir() {
    namespace fs = std::filesystem;
    std::error_code ec;
    // A test may have made the folder read-only: give it back before removing.
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  const std::string& path() const { return path_; }
  // The names in the folder, sorted (to prove that nothing was left behind).
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  std::string path_;
};

// A whole file ("" or empty when it cannot be read).
inline std::string file_contents(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
inline std::vector<unsigned char> file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<unsigned char>(std::istreambuf_iterator<char>(f), {});
}

// Writes `n` bytes as the whole of `path`, rewriting an existing file in
// place (the same inode, as the journal's identity check wants); throws when
// it cannot.
inline void write_file(const std::string& path, const void* data, std::size_t n) {
  {
    std::fstream f(path, std::ios::binary | std::ios::in | std::ios::out);
    if (!f) f.open(path, std::ios::binary | std::ios::out);
    f.write(static_cast<const char*>(data), std::streamsize(n));
    if (!f) throw std::runtime_error("cannot write " + path);
  }
  std::error_code ec;
  std::filesystem::resize_file(path, n, ec);
  if (ec) throw std::runtime_error("cannot truncate " + path + ": " + ec.message());
}
inline void write_file(const std::string& path, const std::string& bytes) {
  write_file(path, bytes.data(), bytes.size());
}
inline void write_file(const std::string& path, const std::vector<unsigned char>& bytes) {
  write_file(path, bytes.data(), bytes.size());
}

}  // namespace gt::test

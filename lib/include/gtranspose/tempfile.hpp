// Temporary outputs: written under a temporary name beside the final one,
// renamed only when complete, removed on failure, and removable from a
// program's signal handler.
#pragma once
#include <string>

namespace gt {

// Owns a temporary path "<dir>/.<name>.gt-tmp-<pid>-<n>" beside `final_path`.
// The path is registered so that remove_temp_files_signal_safe() can unlink
// it from a signal handler. The destructor unlinks the file unless commit()
// renamed it.
class TempPath {
 public:
  explicit TempPath(const std::string& final_path);
  ~TempPath();
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;

  const std::string& path() const { return tmp_; }
  const std::string& final_path() const { return final_; }
  // rename(tmp, final) and fsync of the folder; throws gt::Error(output).
  void commit();
  bool committed() const { return committed_; }

 private:
  std::string final_;
  std::string tmp_;
  int slot_ = -1;
  bool committed_ = false;
};

// Unlinks every registered temporary file. Async-signal-safe: only unlink(2)
// on preallocated storage. The library installs no signal handler of its
// own; a program's handler calls this (tool/signals.cpp does).
void remove_temp_files_signal_safe() noexcept;

}  // namespace gt

// Temporary outputs: written under a temporary name beside the final one,
// renamed only when complete, removed on failure, and removable from a
// program's signal handler.
#pragma once
#include <string>

namespace gt {

// Whether a commit may replace a file that exists under the final name by
// then. Without it the commit is a no-replace rename: a file that appeared
// there while the run was going (another run, another program) is kept and
// the commit fails, so two runs that both started without {force} cannot
// both "succeed".
enum class Replace : bool { no = false, yes = true };

// Owns a temporary path "<dir>/.<name>.gt-tmp-<pid>-<n>" beside `final_path`
// (<name> shortened where the whole would pass the folder's name limit, so a
// final name of any legal length works). The path is registered so that
// remove_temp_files_signal_safe() can unlink it from a signal handler. The
// destructor unlinks the file unless commit() renamed it.
class TempPath {
 public:
  explicit TempPath(const std::string& final_path, Replace replace = Replace::no);
  ~TempPath();
  TempPath(const TempPath&) = delete;
  TempPath& operator=(const TempPath&) = delete;

  const std::string& path() const { return tmp_; }
  const std::string& final_path() const { return final_; }
  // Moves the temporary to the final name (rename(2) with Replace::yes,
  // renameat2(RENAME_NOREPLACE), or link(2) and unlink(2) where the file
  // system lacks it, otherwise) and syncs the folder. Throws gt::Error(output)
  // when it cannot, naming {force} when a file is in the way.
  void commit();
  bool committed() const { return committed_; }

 private:
  std::string final_;
  std::string tmp_;
  Replace replace_;
  int slot_ = -1;
  bool committed_ = false;
};

// Unlinks every registered temporary file. Async-signal-safe: only unlink(2)
// on preallocated storage. The library installs no signal handler of its
// own; a program's handler calls this (tool/signals.cpp does).
void remove_temp_files_signal_safe() noexcept;

}  // namespace gt

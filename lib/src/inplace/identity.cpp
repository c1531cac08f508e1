// Which journal belongs to which file, whatever path names it, and the locks
// that keep two runs off one file (journal.hpp says why each piece exists).
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cstring>

#include "inplace/journal_internal.hpp"

namespace gt {
namespace journal_impl {

namespace {

bool no_xattr_errno(int e) { return e == ENOTSUP || e == EOPNOTSUPP || e == ENOSYS; }

// The device and inode a journal's header names, or nullopt where no header
// copy is valid.
std::optional<HeaderPrefix> owner_of(const std::string& journal) {
  fmt::Fd fd(::open(journal.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return std::nullopt;
  std::optional<HeaderPrefix> best;
  for (std::uint64_t slot = 0; slot < 2; ++slot) {
    unsigned char buf[kSlotBytes];
    std::size_t got = 0;
    try {
      got = read_slot(fd.get(), slot, buf, journal);
    } catch (const Error&) {
      continue;
    }
    if (auto p = valid_prefix(buf, got); p && (!best || p->seq > best->seq)) best = p;
  }
  return best;
}

bool same_file(const HeaderPrefix& p, const struct stat& st) {
  return p.dev == std::uint64_t(st.st_dev) && p.ino == std::uint64_t(st.st_ino);
}

const char* kSuffix = ".gtjournal";

}  // namespace

std::string canonical_path(const std::string& path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

bool marks_supported(const std::string& matrix) {
  if (xattrs_disabled()) return false;
  char v[1];
  return ::getxattr(matrix.c_str(), kMarkName, v, 0) >= 0 || !no_xattr_errno(errno);
}

std::string read_mark(const std::string& matrix) {
  if (xattrs_disabled()) return "";
  char buf[PATH_MAX + 1];
  const ssize_t n = ::getxattr(matrix.c_str(), kMarkName, buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, std::size_t(n)) : std::string();
}

bool set_mark(const std::string& matrix, const std::string& journal) {
  if (xattrs_disabled()) return false;
  if (::setxattr(matrix.c_str(), kMarkName, journal.data(), journal.size(), 0) == 0) {
    fmt::log_io(fmt::IoEvent::marked(matrix, journal));
    return true;
  }
  if (no_xattr_errno(errno)) return false;
  throw_errno(ErrorKind::io, "cannot mark " + matrix + " with its journal " + journal);
}

void clear_mark(const std::string& matrix, const std::string& journal) {
  // Only our own mark: another run's journal may be named there by now.
  if (read_mark(matrix) != journal) return;
  if (::removexattr(matrix.c_str(), kMarkName) == 0) fmt::log_io(fmt::IoEvent::marked(matrix, ""));
}

}  // namespace journal_impl

using namespace journal_impl;

std::string find_journal(const std::string& matrix_path) {
  struct stat st {};
  if (::stat(matrix_path.c_str(), &st) != 0) return "";
  const std::string canonical = journal_path(matrix_path);
  const std::string mark = read_mark(matrix_path);
  // Named after the file (any symlink resolves to it), named by its mark (a
  // hard link, a rename), named after the path as given (older versions).
  for (const std::string& c : {canonical, mark, matrix_path + kSuffix}) {
    if (c.empty() || !fmt::path_exists(c)) continue;
    const std::optional<HeaderPrefix> owner = owner_of(c);
    if (owner ? same_file(*owner, st) : c == canonical || c == mark) return c;
  }
  // Beside the file under another name (renamed where no mark was kept).
  const std::string dir = paths::dir_of(canonical_path(matrix_path));
  if (DIR* d = ::opendir(dir.c_str())) {
    std::string found;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() <= std::strlen(kSuffix) || name.compare(name.size() - std::strlen(kSuffix), std::string::npos, kSuffix) != 0)
        continue;
      const std::string c = dir + "/" + name;
      if (const auto owner = owner_of(c); owner && same_file(*owner, st)) {
        found = c;
        break;
      }
    }
    ::closedir(d);
    if (!found.empty()) return found;
  }
  return "";
}

void refuse_if_pending(const std::string& path, const std::string& role) {
  const std::string j = find_journal(path);
  if (j.empty()) return;
  throw Error(ErrorKind::input, "cannot " + role + " " + path + ": an in-place run on it was interrupted and its journal " +
                                    j + " is pending, so it is partly transposed; finish that run first ({in_place} "
                                    "{resume} on " + path + ")");
}

FileLock& FileLock::operator=(FileLock&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the description releases its lock
}

FileLock lock_file(const std::string& path, bool exclusive) {
  // An open-file-description lock: it conflicts with other processes' (and
  // other descriptions') locks of its kind, never with flock(), which the
  // HDF5 library takes on its own descriptor of the same file.
  fmt::Fd fd(::open(path.c_str(), (exclusive ? O_RDWR : O_RDONLY) | O_CLOEXEC));
  if (!fd) throw_errno(ErrorKind::input, "cannot open " + path + " to lock it");
  struct flock fl {};
  fl.l_type = exclusive ? F_WRLCK : F_RDLCK;
  fl.l_whence = SEEK_SET;
  FileLock lock;
  if (::fcntl(fd.get(), F_OFD_SETLK, &fl) == 0) {
    lock.fd_ = fd.release();
    return lock;
  }
  if (errno != EAGAIN && errno != EACCES) return lock;  // no such locks here (ENOLCK, EINVAL): go on unlocked
  struct flock other {};
  other.l_type = F_WRLCK;
  other.l_whence = SEEK_SET;
  const bool writer = ::fcntl(fd.get(), F_OFD_GETLK, &other) != 0 || other.l_type == F_WRLCK;
  if (writer)
    throw Error(ErrorKind::input, "another gtranspose is transposing " + path + " in place: wait for it to finish");
  throw Error(ErrorKind::input, "another gtranspose is reading " + path + ": wait for it to finish before transposing it in place");
}

}  // namespace gt

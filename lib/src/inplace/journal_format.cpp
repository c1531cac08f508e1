// The journal's on-disk header (journal_internal.hpp).
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "inplace/journal_internal.hpp"

namespace gt::journal_impl {

std::uint64_t header_sum(const Header& h) { return journal_detail::hash_bytes(&h, offsetof(Header, header_sum)); }

bool valid(const Header& h) {
  return std::memcmp(h.magic, kMagic, sizeof kMagic) == 0 && h.version == kVersion && h.size == sizeof(Header) &&
         h.header_sum == header_sum(h);
}

std::string shape_text(std::uint64_t n) { return std::to_string(n) + "x" + std::to_string(n); }

std::string dataset_text(const Header& h) {
  return std::string(h.dataset, strnlen(h.dataset, kNameBytes)) + (h.dataset_len >= kNameBytes ? "..." : "");
}

std::string mismatch(const Header& j, const Header& now) {
  if (j.n != now.n) return "a " + shape_text(j.n) + " matrix, not " + shape_text(now.n);
  if (j.elem_size != now.elem_size)
    return std::to_string(j.elem_size) + "-byte elements, not " + std::to_string(now.elem_size) + "-byte";
  if (j.format != now.format)
    return std::string("a ") + format_name(Format(j.format)) + " file, not " + format_name(Format(now.format));
  if (j.dataset_hash != now.dataset_hash || j.dataset_len != now.dataset_len)
    return "dataset " + dataset_text(j) + ", not " + dataset_text(now);
  // A device number may change across a reboot; the matrix then still lies
  // on its journal's device, as it did.
  const bool same_device = j.dev == now.dev || (j.dev == j.folder_dev && now.dev == now.folder_dev);
  if (!same_device || j.ino != now.ino)
    return "another file (device " + std::to_string(j.dev) + " inode " + std::to_string(j.ino) + ", now device " +
           std::to_string(now.dev) + " inode " + std::to_string(now.ino) + ")";
  if (Format(j.format) != Format::hdf5 && j.file_size != now.file_size)
    return "a file of " + std::to_string(j.file_size) + " bytes, now " + std::to_string(now.file_size);
  return "";
}

bool pread_exact(int fd, void* buf, std::uint64_t n, std::uint64_t off, const std::string& name) {
  auto p = static_cast<unsigned char*>(buf);
  while (n) {
    const ssize_t got = ::pread(fd, p, std::size_t(std::min<std::uint64_t>(n, 1u << 30)), off_t(off));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw_errno(ErrorKind::io, "cannot read the journal " + name);
    }
    if (got == 0) return false;
    p += got;
    n -= std::uint64_t(got);
    off += std::uint64_t(got);
  }
  return true;
}

void sync_folder(const std::string& path) {
  const std::string dir = paths::dir_of(path);
  fmt::Fd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!d) throw_errno(ErrorKind::io, "cannot open the folder " + dir + " to make the journal durable");
  if (::fsync(d.get()) != 0 && errno != EINVAL && errno != ENOTSUP)  // some file systems cannot sync folders
    throw_errno(ErrorKind::io, "cannot flush the folder " + dir + " to disk");
}

}  // namespace gt::journal_impl

// The journal's on-disk header and its checksums of data (journal_internal.hpp).
#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "engine/cpu/thread_pool.hpp"
#include "inplace/journal_internal.hpp"

namespace gt::journal_impl {

std::uint64_t header_sum(const Header& h) { return journal_detail::hash_bytes(&h, offsetof(Header, header_sum)); }

bool valid(const Header& h) {
  return std::memcmp(h.p.magic, kMagic, sizeof kMagic) == 0 && h.p.version >= kOldestVersion && h.p.version <= kVersion && h.p.size == sizeof(Header) &&
         h.header_sum == header_sum(h);
}

std::optional<HeaderPrefix> valid_prefix(const unsigned char* slot, std::size_t n) {
  HeaderPrefix p{};
  if (n < sizeof p) return std::nullopt;
  std::memcpy(&p, slot, sizeof p);
  // Every version ends its header with the checksum of the bytes before it.
  if (std::memcmp(p.magic, kMagic, sizeof kMagic) != 0 || p.size < sizeof p + 8 || p.size > n) return std::nullopt;
  std::uint64_t sum = 0;
  std::memcpy(&sum, slot + p.size - 8, 8);
  if (sum != journal_detail::hash_bytes(slot, p.size - 8)) return std::nullopt;
  return p;
}

std::uint64_t sum_of_sums(const std::vector<std::uint64_t>& sums) {
  return journal_detail::hash_bytes(sums.data(), sums.size() * sizeof(std::uint64_t));
}

std::uint64_t chunked_digest(const unsigned char* p, std::uint64_t n, int threads) {
  const std::uint64_t chunks = (n + kHashChunk - 1) / kHashChunk;
  std::vector<std::uint64_t> sums(std::size_t(chunks), 0);
  const int t = int(std::max<std::uint64_t>(1, std::min<std::uint64_t>(std::uint64_t(std::max(1, threads)), chunks)));
  cpu::ThreadPool::shared().run(t, [&](int w) {
    for (std::uint64_t c = std::uint64_t(w); c < chunks; c += std::uint64_t(t))
      sums[std::size_t(c)] = journal_detail::hash_bytes(p + c * kHashChunk,
                                                        std::size_t(std::min(kHashChunk, n - c * kHashChunk)));
  });
  return sum_of_sums(sums);
}

std::string shape_text(std::uint64_t n) { return std::to_string(n) + "x" + std::to_string(n); }

std::string dataset_text(const Header& h) {
  return std::string(h.dataset, strnlen(h.dataset, kNameBytes)) + (h.dataset_len >= kNameBytes ? "..." : "");
}

std::string mismatch(const Header& jh, const Header& nowh) {
  const HeaderPrefix& j = jh.p;
  const HeaderPrefix& now = nowh.p;
  if (j.n != now.n || jh.cols != nowh.cols)
    return "a " + to_string(Shape{j.n, jh.cols}) + " matrix, not " + to_string(Shape{now.n, nowh.cols});
  if (j.elem_size != now.elem_size)
    return std::to_string(j.elem_size) + "-byte elements, not " + std::to_string(now.elem_size) + "-byte";
  if (j.format != now.format)
    return std::string("a ") + format_name(Format(j.format)) + " file, not " + format_name(Format(now.format));
  if (jh.dataset_hash != nowh.dataset_hash || jh.dataset_len != nowh.dataset_len)
    return "dataset " + dataset_text(jh) + ", not " + dataset_text(nowh);
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

std::size_t read_slot(int fd, std::uint64_t slot, unsigned char* buf, const std::string& name) {
  std::memset(buf, 0, kSlotBytes);
  std::size_t got = 0;
  while (got < kSlotBytes) {
    const ssize_t n = ::pread(fd, buf + got, kSlotBytes - got, off_t(slot * kSlotBytes + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(ErrorKind::io, "cannot read the journal " + name);
    if (n == 0) break;
    got += std::size_t(n);
  }
  return got;
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
  fmt::IoEvent e;
  e.kind = fmt::IoEvent::folder_sync;
  e.path = dir;
  fmt::log_io(e);
}

}  // namespace gt::journal_impl

namespace gt::journal_detail {

JournalView read_journal_view(const std::string& journal) {
  using namespace journal_impl;
  JournalView v;
  fmt::Fd fd(::open(journal.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) return v;
  std::optional<Header> best;
  for (std::uint64_t slot = 0; slot < 2; ++slot) {
    unsigned char buf[kSlotBytes];
    Header h{};
    if (read_slot(fd.get(), slot, buf, journal) < sizeof h) continue;
    std::memcpy(&h, buf, sizeof h);
    if (valid(h) && (!best || h.p.seq > best->p.seq)) best = h;
  }
  if (!best) return v;
  const auto batch = [](const BatchRecord& b) { return BatchView{b.first, b.count, b.offset, b.bytes}; };
  v.valid = true;
  v.header_offset = (best->p.seq & 1) * kSlotBytes;
  v.done = best->done;
  v.has_prev = best->p.phase & kHasPrev;
  v.has_cur = best->p.phase & kHasCur;
  v.band = best->p.phase & kBand;
  v.prev = batch(best->prev);
  v.cur = batch(best->cur);
  return v;
}

}  // namespace gt::journal_detail

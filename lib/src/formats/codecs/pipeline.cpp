#include "formats/codecs/pipeline.hpp"

#include <algorithm>
#include <utility>

namespace gt::codecs {

std::optional<Pipeline> Pipeline::make(const std::vector<FilterSpec>& filters, std::string* why) {
  Pipeline p;
  for (const FilterSpec& f : filters) {
    std::unique_ptr<Codec> c = make_codec(f, why);
    if (!c) return std::nullopt;
    p.codecs_.push_back(std::move(c));
    p.optional_.push_back(f.optional());
  }
  return p;
}

std::string Pipeline::names() const {
  std::string s;
  for (const auto& c : codecs_) s += (s.empty() ? "" : "+") + c->name();
  return s.empty() ? "none" : s;
}

bool Pipeline::compresses() const {
  for (const auto& c : codecs_)
    if (c->compresses()) return true;
  return false;
}

std::size_t Pipeline::buffer_bytes(std::size_t chunk_bytes) const {
  std::size_t size = chunk_bytes, most = chunk_bytes;
  for (const auto& c : codecs_) {
    size = c->encode_bound(size);
    most = std::max(most, size);
  }
  return most;
}

std::size_t Pipeline::state_bytes(std::size_t chunk_bytes) const {
  std::size_t n = 0;
  for (const auto& c : codecs_) n += c->state_bytes(chunk_bytes);
  return n;
}

void Pipeline::prepare(WorkBuffers& w, std::size_t chunk_bytes) const {
  const std::size_t n = buffer_bytes(chunk_bytes);
  if (w.a.size() != n) w.a.assign(n, 0);
  if (w.b.size() != n && !codecs_.empty()) w.b.assign(n, 0);
}

Coded Pipeline::decode(WorkBuffers& w, std::size_t n, unsigned mask, std::size_t chunk_bytes) const {
  std::uint8_t* cur = w.a.data();
  std::uint8_t* other = w.b.data();
  const std::size_t cap = w.a.size();
  for (std::size_t k = codecs_.size(); k-- > 0;) {
    if (mask & (1u << k)) continue;
    const Codec& c = *codecs_[k];
    if (c.in_place()) {
      n = c.decode(cur, n, cur, cap);
    } else {
      n = c.decode(cur, n, other, cap);
      std::swap(cur, other);
    }
  }
  if (n != chunk_bytes)
    throw CodecError("the filters decode it to " + std::to_string(n) + " bytes, not the chunk's " +
                     std::to_string(chunk_bytes) + " (corrupt data)");
  return {cur, n, 0};
}

Coded Pipeline::encode(WorkBuffers& w, std::size_t chunk_bytes) const {
  std::uint8_t* cur = w.a.data();
  std::uint8_t* other = w.b.data();
  std::size_t n = chunk_bytes;
  unsigned mask = 0;
  for (std::size_t k = 0; k < codecs_.size(); ++k) {
    const Codec& c = *codecs_[k];
    const std::size_t got = c.encode(cur, n, c.in_place() ? cur : other);
    if (got == 0) {
      if (!optional_[k]) throw CodecError(c.name() + " cannot encode this chunk, and the filter is mandatory");
      mask |= 1u << k;
      continue;
    }
    n = got;
    if (!c.in_place()) std::swap(cur, other);
  }
  return {cur, n, mask};
}

}  // namespace gt::codecs

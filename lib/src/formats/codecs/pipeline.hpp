// A dataset's filter pipeline over one chunk, with the buffers one codec
// thread works in. HDF5 applies the filters in order when writing and in
// reverse when reading; a chunk's filter mask (bit i) says which filters
// were skipped for that chunk (an optional filter that could not encode it).
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "formats/codecs/codec.hpp"

namespace gt::codecs {

// Two buffers one thread decodes or encodes a chunk in, turn about.
struct WorkBuffers {
  std::vector<std::uint8_t> a, b;
};

// Where a decoded or encoded chunk ended up.
struct Coded {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  unsigned mask = 0;  // encoding: the filters skipped for this chunk
};

class Pipeline {
 public:
  // The pipeline of `filters` (in HDF5's order), or nullopt with `why`
  // naming the first filter that is not one of ours.
  static std::optional<Pipeline> make(const std::vector<FilterSpec>& filters, std::string* why);
  bool empty() const { return codecs_.empty(); }
  // True when a filter compresses (Codec::compresses).
  bool compresses() const;
  // "shuffle+deflate(4)", or "none".
  std::string names() const;
  // The size each of the two work buffers needs for chunks of
  // `chunk_bytes`: the largest any stage makes (an encoder's bound).
  std::size_t buffer_bytes(std::size_t chunk_bytes) const;
  // The codecs' own state one thread holds for chunks of `chunk_bytes`.
  std::size_t state_bytes(std::size_t chunk_bytes) const;
  // Sizes `w` for chunks of `chunk_bytes`.
  void prepare(WorkBuffers& w, std::size_t chunk_bytes) const;
  // Decodes the stored chunk in w.a (n bytes, filters `mask` skipped) into
  // a chunk of exactly `chunk_bytes`. Throws CodecError.
  Coded decode(WorkBuffers& w, std::size_t n, unsigned mask, std::size_t chunk_bytes) const;
  // Encodes the chunk in w.a (chunk_bytes) for storage; an optional filter
  // that cannot encode it is skipped (its bit set in the mask). Throws
  // CodecError when a mandatory one cannot.
  Coded encode(WorkBuffers& w, std::size_t chunk_bytes) const;

 private:
  std::vector<std::shared_ptr<const Codec>> codecs_;
  std::vector<bool> optional_;
};

}  // namespace gt::codecs

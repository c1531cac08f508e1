// The codecs of HDF5's filter pipeline, ours to run on many threads: each
// filter a Codec that encodes or decodes one whole chunk, exactly as HDF5's
// own filter (or the registered plugin) does, so that either side can read
// what the other wrote. The HDF5 format (formats/hdf5/chunks.cpp) runs them;
// the engines never see a compressed byte.
//
//   deflate.cpp    1      zlib format; libdeflate where the build found it
//   shuffle.cpp    2      byte shuffle
//   fletcher32.cpp 3      HDF5's Fletcher-32 checksum, appended
//   szip.cpp       4      libaec's szip interface, HDF5's framing
//   blosc.cpp      32001  c-blosc 1, the blosc plugin's framing
//   lz4.cpp        32004  liblz4, the lz4 plugin's block framing
//   zstd.cpp       32015  libzstd, one frame per chunk
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gt::codecs {

// HDF5's filter ids (H5Zpublic.h and the registered filter list).
constexpr unsigned kDeflate = 1, kShuffle = 2, kFletcher32 = 3, kSzip = 4;
constexpr unsigned kBlosc = 32001, kLz4 = 32004, kZstd = 32015;

// One filter of a dataset's pipeline as H5Pget_filter2 gives it.
struct FilterSpec {
  unsigned id = 0;
  unsigned flags = 0;             // H5Z_FLAG_OPTIONAL (0x1) or mandatory
  std::vector<unsigned> values;   // the filter's client data (cd_values)
  bool optional() const { return flags & 0x1u; }
};

// Data a codec cannot decode (corrupt, truncated, or larger than its chunk).
class CodecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Codec {
 public:
  virtual ~Codec() = default;
  // "deflate(4)", "shuffle", "zstd(3)", ...
  virtual std::string name() const = 0;
  // The most bytes encode() writes for n input bytes.
  virtual std::size_t encode_bound(std::size_t n) const = 0;
  // Encodes n bytes of `in` into `out` (room for encode_bound(n)); the bytes
  // written, or 0 when this filter cannot encode this chunk (HDF5 then
  // stores an optional filter's chunk without it, and fails a mandatory one).
  virtual std::size_t encode(const std::uint8_t* in, std::size_t n, std::uint8_t* out) const = 0;
  // Decodes n bytes of `in` into `out` (room for `cap`); the bytes written.
  // Throws CodecError for data it cannot decode or that would exceed cap.
  virtual std::size_t decode(const std::uint8_t* in, std::size_t n, std::uint8_t* out, std::size_t cap) const = 0;
  // True when in == out is allowed (fletcher32 only appends or strips).
  virtual bool in_place() const { return false; }
  // True for a compressor (deflate, zstd, lz4, szip, blosc), whose rate
  // bounds a run; false for shuffle and fletcher32, which move bytes at
  // memory speed.
  virtual bool compresses() const { return true; }
  // Host memory one thread's state for this codec holds (compressor tables,
  // contexts kept per thread) for chunks of `chunk_bytes`: counted in the
  // host budget with the thread's buffers.
  virtual std::size_t state_bytes(std::size_t chunk_bytes) const { return 0; }
  // The size the n encoded bytes at `in` decode to, where the encoding
  // records it (zstd, lz4, szip, blosc headers); 0 where it does not.
  virtual std::size_t decoded_size(const std::uint8_t* in, std::size_t n) const { return 0; }
};

// The codec for `f`, or null with `why` saying what is missing ("filter
// 32000 is not one of gtranspose's codecs", "this build has no libzstd").
std::unique_ptr<Codec> make_codec(const FilterSpec& f, std::string* why);

// The codecs this build has, for messages: "deflate (libdeflate), shuffle, ...".
std::string available_codecs();

// --- the codecs' factories (one per file) ------------------------------------------
std::unique_ptr<Codec> make_deflate(const FilterSpec& f, std::string* why);
std::unique_ptr<Codec> make_shuffle(const FilterSpec& f, std::string* why);
std::unique_ptr<Codec> make_fletcher32(const FilterSpec& f, std::string* why);
std::unique_ptr<Codec> make_szip(const FilterSpec& f, std::string* why);
std::unique_ptr<Codec> make_blosc(const FilterSpec& f, std::string* why);
std::unique_ptr<Codec> make_lz4(const FilterSpec& f, std::string* why);
std::unique_ptr<Codec> make_zstd(const FilterSpec& f, std::string* why);

// What a codec's factory returns where the build lacks its library: null,
// with `why` naming the package to install.
std::unique_ptr<Codec> missing_library(std::string* why, const char* codec, const char* package);

// HDF5's Fletcher-32 of n bytes (H5_checksum_fletcher32).
std::uint32_t fletcher32(const std::uint8_t* data, std::size_t n);

}  // namespace gt::codecs

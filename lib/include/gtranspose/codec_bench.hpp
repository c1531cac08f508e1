// The reference rate for compressed HDF5: how fast this machine's cores run
// a dataset's own filter pipeline on its own chunks, with nothing else in
// the way (no file I/O, no transpose). Every stored chunk (up to a cap) is
// read into memory once, then decoded and encoded again with the same
// filters, first on one thread and then on several. "One core's rate times
// the cores" is what the direct chunk path is measured against
// (scripts/bench-files.sh; issue 11's targets).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gtranspose/types.hpp"

namespace gt {

struct CodecBenchRow {
  int threads = 0;
  double decode_s = 0, encode_s = 0;  // wall time of each pass over every chunk
  std::uint64_t raw_bytes = 0;        // decoded bytes (whole chunks)
  std::uint64_t stored_bytes = 0;     // as stored in the file (decode) / as we encode them (encode)
  std::uint64_t encoded_bytes = 0;
  // MB/s (1e6 bytes) of decoded data: decoding, encoding, and both in turn
  // (the rate of a transpose that decodes and encodes every byte once).
  double decode_mbps() const { return decode_s > 0 ? double(raw_bytes) / decode_s / 1e6 : 0; }
  double encode_mbps() const { return encode_s > 0 ? double(raw_bytes) / encode_s / 1e6 : 0; }
  double both_mbps() const { return decode_s + encode_s > 0 ? double(raw_bytes) / (decode_s + encode_s) / 1e6 : 0; }
};

struct CodecBench {
  std::string dataset;    // "HDF5 dataset /x (f32, ...) in f.h5"
  std::string pipeline;   // "shuffle+deflate(4)"
  Shape chunk;
  std::uint64_t chunks = 0, chunks_total = 0;  // measured, and in the dataset
  std::vector<CodecBenchRow> rows;             // 1 thread, then `threads`
};

// Measures the codecs of the HDF5 dataset at `spec` ("f.h5[:/x]") on 1 and on
// `threads` threads (0: the hardware's). At most `max_stored` bytes of
// chunks are read (the first ones in row-major order). Throws gt::Error: not
// chunked, a filter gtranspose has no codec for, damaged chunks.
[[nodiscard]] CodecBench bench_codecs(const std::string& spec, int threads, std::uint64_t max_stored);

// The table and the JSON line the CLI prints.
std::string format_codec_bench(const CodecBench& b);
std::string codec_bench_json(const CodecBench& b);

}  // namespace gt

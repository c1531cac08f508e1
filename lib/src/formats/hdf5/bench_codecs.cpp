// bench_codecs (codec_bench.hpp): a dataset's filter pipeline on its own
// chunks, in memory, on 1 and N threads.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "formats/codecs/pool.hpp"
#include "formats/hdf5/chunks.hpp"
#include "formats/internal.hpp"
#include "formats/plain_io.hpp"
#include "gtranspose/codec_bench.hpp"
#include "gtranspose/format.hpp"
#include "gtranspose/machine.hpp"
#include "gtranspose/report.hpp"

namespace gt {
namespace {

struct Stored {
  std::vector<std::uint8_t> bytes;
  unsigned mask = 0;
};

CodecBenchRow run_pass(const codecs::Pipeline& p, const std::vector<Stored>& chunks, std::size_t chunk_bytes,
                       int threads) {
  CodecBenchRow row;
  row.threads = threads;
  codecs::WorkerPool pool(threads);
  std::vector<codecs::WorkBuffers> bufs(static_cast<std::size_t>(threads));
  for (auto& w : bufs) p.prepare(w, chunk_bytes);  // allocated outside the timing
  std::atomic<std::uint64_t> encoded{0};
  using Clock = std::chrono::steady_clock;
  // Decode every chunk, then decode-and-encode every chunk: the encode pass's
  // time less the decode pass's is the encoding alone (no decoded copy of
  // the whole dataset is kept).
  auto t0 = Clock::now();
  pool.run(chunks.size(), [&](std::size_t k, int w) {
    std::copy(chunks[k].bytes.begin(), chunks[k].bytes.end(), bufs[std::size_t(w)].a.begin());
    (void)p.decode(bufs[std::size_t(w)], chunks[k].bytes.size(), chunks[k].mask, chunk_bytes);
  });
  auto t1 = Clock::now();
  pool.run(chunks.size(), [&](std::size_t k, int w) {
    codecs::WorkBuffers& b = bufs[std::size_t(w)];
    std::copy(chunks[k].bytes.begin(), chunks[k].bytes.end(), b.a.begin());
    const codecs::Coded d = p.decode(b, chunks[k].bytes.size(), chunks[k].mask, chunk_bytes);
    std::copy(d.data, d.data + d.size, b.a.begin());
    encoded += p.encode(b, chunk_bytes).size;
  });
  auto t2 = Clock::now();
  const double dec = std::chrono::duration<double>(t1 - t0).count(), both = std::chrono::duration<double>(t2 - t1).count();
  row.decode_s = dec;
  row.encode_s = std::max(0.0, both - dec);
  row.raw_bytes = chunks.size() * chunk_bytes;
  for (const auto& c : chunks) row.stored_bytes += c.bytes.size();
  row.encoded_bytes = encoded;
  return row;
}

}  // namespace

CodecBench bench_codecs(const std::string& spec, int threads, std::uint64_t max_stored) {
  using namespace fmt::h5;
  CodecBench b;
  auto src = open_source(spec, {});
  b.dataset = src->describe();
  const Location& loc = src->location();
  if (loc.format != Format::hdf5) throw Error(ErrorKind::usage, spec + " is not an HDF5 file: codecs are HDF5's");
  quiet();
  Hid file = check(H5Fopen(loc.path.c_str(), H5F_ACC_RDONLY, strong_close_fapl().get()), ErrorKind::input,
                   "cannot open " + loc.path);
  Hid dset = check(H5Dopen2(file.get(), loc.dataset.c_str(), H5P_DEFAULT), ErrorKind::input, "cannot open " + loc.dataset);
  Hid dcpl = check(H5Dget_create_plist(dset.get()), ErrorKind::input, "cannot read the layout of " + loc.dataset);
  hsize_t cd[2] = {0, 0};
  if (H5Pget_layout(dcpl.get()) != H5D_CHUNKED || H5Pget_chunk(dcpl.get(), 2, cd) != 2)
    throw Error(ErrorKind::usage, b.dataset + " is not chunked: it has no codecs to measure");
  std::vector<codecs::FilterSpec> specs;
  std::string why;
  std::optional<codecs::Pipeline> p;
  if (!filters_of(dcpl.get(), specs, &why) || !(p = codecs::Pipeline::make(specs, &why)))
    throw Error(ErrorKind::usage, b.dataset + ": " + why);
  b.pipeline = p->names();
  b.chunk = {cd[0], cd[1]};
  const Shape shape = src->info().shape;
  const std::size_t chunk_bytes = std::size_t(cd[0] * cd[1] * src->info().elem_size);
  const std::uint64_t base = chunk_address_base(file.get());
  fmt::Fd fd = fmt::open_existing(loc.path, false, loc.path);
  std::vector<Stored> chunks;
  std::uint64_t total = 0;
  for (hsize_t r = 0; r < shape.rows; r += cd[0])
    for (hsize_t c = 0; c < shape.cols; c += cd[1]) {
      ++b.chunks_total;
      hsize_t off[2] = {r, c}, size = 0;
      unsigned mask = 0;
      haddr_t addr = HADDR_UNDEF;
      if (H5Dget_chunk_info_by_coord(dset.get(), off, &mask, &addr, &size) < 0 || addr == HADDR_UNDEF ||
          total + size > max_stored)
        continue;
      Stored s;
      s.bytes.resize(std::size_t(size));
      s.mask = mask;
      fmt::pread_full(fd.get(), s.bytes.data(), size, base + addr, loc.path);
      total += size;
      chunks.push_back(std::move(s));
    }
  H5Eclear2(H5E_DEFAULT);
  b.chunks = chunks.size();
  if (chunks.empty()) throw Error(ErrorKind::input, b.dataset + " has no stored chunks to measure");
  const int n = threads > 0 ? threads : int(usable_cores());
  try {
    b.rows.push_back(run_pass(*p, chunks, chunk_bytes, 1));
    if (n > 1) b.rows.push_back(run_pass(*p, chunks, chunk_bytes, n));
  } catch (const codecs::CodecError& e) {
    throw Error(ErrorKind::input, b.dataset + ": " + e.what());
  }
  return b;
}

std::string format_codec_bench(const CodecBench& b) {
  std::ostringstream o;
  char line[256];
  o << "codecs of " << b.dataset << ": " << b.pipeline << ", chunks " << to_string(b.chunk) << ", " << b.chunks << " of "
    << b.chunks_total << " measured\n";
  o << "  threads   decode MB/s   encode MB/s   both MB/s   ratio\n";
  for (const auto& r : b.rows) {
    std::snprintf(line, sizeof line, "  %7d   %11.1f   %11.1f   %9.1f   %.2f:1\n", r.threads, r.decode_mbps(),
                  r.encode_mbps(), r.both_mbps(), r.encoded_bytes ? double(r.raw_bytes) / double(r.encoded_bytes) : 0.0);
    o << line;
  }
  return o.str();
}

std::string codec_bench_json(const CodecBench& b) {
  std::ostringstream o;
  o << "{\"dataset\": \"" << json_escape(b.dataset) << "\", \"pipeline\": \"" << json_escape(b.pipeline)
    << "\", \"chunks\": " << b.chunks << ", \"rows\": [";
  for (std::size_t i = 0; i < b.rows.size(); ++i) {
    const auto& r = b.rows[i];
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%s{\"threads\": %d, \"decode_mbps\": %.2f, \"encode_mbps\": %.2f, \"both_mbps\": %.2f, "
                  "\"raw_bytes\": %llu, \"stored_bytes\": %llu, \"encoded_bytes\": %llu}",
                  i ? ", " : "", r.threads, r.decode_mbps(), r.encode_mbps(), r.both_mbps(),
                  (unsigned long long)r.raw_bytes, (unsigned long long)r.stored_bytes,
                  (unsigned long long)r.encoded_bytes);
    o << buf;
  }
  o << "]}";
  return o.str();
}

}  // namespace gt

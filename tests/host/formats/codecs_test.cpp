// The HDF5 filters' codecs on their own: every codec round-trips every
// element size, odd lengths and incompressible data; fletcher32 and shuffle
// give exactly the bytes HDF5's own filters store; damaged data is an error
// (CodecError), never a crash or a write past the buffer. Their use inside
// HDF5 files, both ways against HDF5's pipeline, is in hdf5_codecs_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "testing.hpp"

namespace gt::test {
namespace {

using codecs::FilterSpec;

// Compressible data with an element structure (a smooth float-like ramp in
// the low bytes, constant high bytes) and random data, n bytes.
std::vector<std::uint8_t> sample(std::size_t n, std::size_t es, bool random, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  std::mt19937 rng(seed);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t e = i / es, b = i % es;
    v[i] = random ? std::uint8_t(rng()) : std::uint8_t(b == 0 ? e * 7 : b == 1 ? e / 37 : 0x40 + b);
  }
  return v;
}

// Every codec this build has, with the parameters HDF5 would store for an
// es-byte element type.
std::vector<FilterSpec> specs_for(std::size_t es, std::size_t chunk_bytes) {
  std::vector<FilterSpec> s = {
      {codecs::kDeflate, 0, {0}},  {codecs::kDeflate, 0, {4}}, {codecs::kDeflate, 0, {9}},
      {codecs::kShuffle, 0, {unsigned(es)}}, {codecs::kFletcher32, 0, {}},
      {codecs::kZstd, 0, {3}},     {codecs::kZstd, 0, {unsigned(-5)}},
      {codecs::kLz4, 0, {0}},      {codecs::kLz4, 0, {1000}}, {codecs::kLz4, 0, {0, 9}},
      // blosc: revision, format, typesize, chunk bytes, level, shuffle, compressor (blosclz, lz4, zstd)
      {codecs::kBlosc, 0, {2, 2, unsigned(es), unsigned(chunk_bytes), 5, 1, 0}},
      {codecs::kBlosc, 0, {2, 2, unsigned(es), unsigned(chunk_bytes), 9, 2, 1}},
      {codecs::kBlosc, 0, {2, 2, unsigned(es), unsigned(chunk_bytes), 3, 0, 4}},
  };
  // szip: little-endian, nearest-neighbour (0x80 | 0x20 | 0x4 ...) as HDF5's set_local leaves it.
  if (es <= 8) s.push_back({codecs::kSzip, 0, {0x80 | 0x20 | 0x4, 8, unsigned(es * 8), 256}});
  return s;
}

TEST(Codecs, RoundTripEveryCodecAndElementSize) {
  int ran = 0;
  for (std::size_t es : {1, 2, 4, 8, 16}) {
    for (std::size_t elems : {1, 7, 1000, 4099}) {
      const std::size_t n = elems * es;
      for (const FilterSpec& f : specs_for(es, n)) {
        std::string why;
        const auto c = codecs::make_codec(f, &why);
        if (!c) {
          // Only a codec whose library CMake did not find may be missing.
          EXPECT_NE(why.find("this build has none"), std::string::npos) << f.id << ": " << why;
          continue;
        }
        for (bool random : {false, true}) {
          SCOPED_TRACE(c->name() + " es " + std::to_string(es) + " n " + std::to_string(n) + (random ? " random" : " smooth"));
          const auto in = sample(n, es, random, unsigned(n + es));
          std::vector<std::uint8_t> enc(c->encode_bound(n) + 16, 0xEE);
          const std::size_t m = c->encode(in.data(), n, enc.data());
          if (f.id == codecs::kSzip && m == 0) {
            continue;  // szip declines what it cannot shrink (an optional filter)
          }
          ASSERT_GT(m, 0u);
          ASSERT_LE(m, c->encode_bound(n));
          for (std::size_t k = c->encode_bound(n); k < enc.size(); ++k) {
            ASSERT_EQ(enc[k], 0xEE) << "wrote past the bound";
          }
          const std::size_t recorded = c->decoded_size(enc.data(), m);
          if (recorded) {
            EXPECT_EQ(recorded, n);
          }
          std::vector<std::uint8_t> out(n + 8, 0xDD);
          ASSERT_EQ(c->decode(enc.data(), m, out.data(), n), n);
          EXPECT_TRUE(std::equal(in.begin(), in.end(), out.begin()));
          for (std::size_t k = n; k < out.size(); ++k) {
            ASSERT_EQ(out[k], 0xDD) << "decoded past the chunk";
          }
          ++ran;
        }
      }
    }
  }
  // deflate, shuffle and fletcher32 are always built: 5 sizes x 4 lengths x 5 specs x 2 data.
  EXPECT_GE(ran, 200);
}

TEST(Codecs, ShuffleAndFletcherAreHdf5sBytes) {
  // Shuffle of three 4-byte elements and two leftover bytes (H5Zshuffle.c).
  const std::vector<std::uint8_t> in = {0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23, 98, 99};
  const auto sh = codecs::make_codec({codecs::kShuffle, 0, {4}}, nullptr);
  std::vector<std::uint8_t> out(in.size());
  ASSERT_EQ(sh->encode(in.data(), in.size(), out.data()), in.size());
  EXPECT_EQ(out, (std::vector<std::uint8_t>{0, 10, 20, 1, 11, 21, 2, 12, 22, 3, 13, 23, 98, 99}));
  // Fletcher-32 over big-endian 16-bit words, an odd last byte as a high
  // byte; sums reduced every 360 words. Values computed by hand for "abcde":
  // words 0x6162, 0x6364, 0x6500.
  const std::uint8_t abc[] = {'a', 'b', 'c', 'd', 'e'};
  std::uint32_t s1 = 0x6162, s2 = s1;
  s1 += 0x6364, s2 += s1;
  s1 += 0x6500, s2 += s1;
  s1 = (s1 & 0xffff) + (s1 >> 16), s2 = (s2 & 0xffff) + (s2 >> 16);
  EXPECT_EQ(codecs::fletcher32(abc, 5), (s2 << 16) | s1);
}

// The vectorised shuffle (4-byte elements, 16 at a time) against H5Zshuffle.c's
// definition: byte b of element i at b*n + i, leftover bytes last as they were;
// every element size, lengths around the 16-element blocks and leftover bytes.
TEST(Codecs, ShuffleMatchesHdf5sDefinitionAtEveryLength) {
  for (std::size_t es : {2, 3, 4, 8, 16}) {
    const auto sh = codecs::make_codec({codecs::kShuffle, 0, {unsigned(es)}}, nullptr);
    ASSERT_TRUE(sh);
    for (std::size_t elems : {2, 15, 16, 17, 31, 32, 33, 1000, 65536 + 5}) {
      for (std::size_t tail : {std::size_t(0), std::size_t(1), es - 1}) {
        if (tail >= es) continue;
        SCOPED_TRACE("es " + std::to_string(es) + " elems " + std::to_string(elems) + " tail " + std::to_string(tail));
        const std::size_t n = elems * es + tail;
        const auto in = sample(n, 1, true, unsigned(n));
        std::vector<std::uint8_t> want(n);
        for (std::size_t i = 0; i < elems; ++i)
          for (std::size_t b = 0; b < es; ++b) want[b * elems + i] = in[i * es + b];
        for (std::size_t k = elems * es; k < n; ++k) want[k] = in[k];
        std::vector<std::uint8_t> got(n), back(n);
        ASSERT_EQ(sh->encode(in.data(), n, got.data()), n);
        ASSERT_EQ(got, want);
        ASSERT_EQ(sh->decode(got.data(), n, back.data(), n), n);
        ASSERT_EQ(back, in);
      }
    }
  }
}

TEST(Codecs, Fletcher32AcceptsTheOldSwappedSumAndRejectsDamage) {
  const auto f = codecs::make_codec({codecs::kFletcher32, 0, {}}, nullptr);
  auto data = sample(1000, 4, true, 3);
  std::vector<std::uint8_t> buf(1004);
  std::copy(data.begin(), data.end(), buf.begin());
  ASSERT_EQ(f->encode(buf.data(), 1000, buf.data()), 1004u);
  std::vector<std::uint8_t> out(1000);
  EXPECT_EQ(f->decode(buf.data(), 1004, out.data(), 1000), 1000u);
  // HDF5 before 1.6.3 stored the sum with the bytes of each half swapped.
  std::swap(buf[1000], buf[1001]);
  std::swap(buf[1002], buf[1003]);
  EXPECT_EQ(f->decode(buf.data(), 1004, out.data(), 1000), 1000u);
  buf[17] ^= 0x40;
  EXPECT_THROW(f->decode(buf.data(), 1004, out.data(), 1000), codecs::CodecError);
}

// Damaged input: a byte flipped, the data cut short, or a header claiming
// more than the chunk. Every codec either throws CodecError or (where the
// format carries no check) decodes something of the right size; none
// writes past its buffer or crashes.
TEST(Codecs, DamagedDataIsAnErrorNotACrash) {
  const std::size_t es = 4, n = 4096 * es;
  const auto in = sample(n, es, false, 9);
  int errors = 0;
  for (const FilterSpec& f : specs_for(es, n)) {
    const auto c = codecs::make_codec(f, nullptr);
    if (!c || f.id == codecs::kShuffle) continue;  // not in this build; a permutation: any bytes are valid  // a permutation: any bytes are valid
    std::vector<std::uint8_t> enc(c->encode_bound(n));
    const std::size_t m = c->encode(in.data(), n, enc.data());
    ASSERT_GT(m, 0u) << c->name();
    std::mt19937 rng(unsigned(f.id));
    for (int trial = 0; trial < 40; ++trial) {
      std::vector<std::uint8_t> bad(enc.begin(), enc.begin() + std::ptrdiff_t(m));
      std::size_t len = m;
      if (trial % 4 == 0) len = rng() % m;  // cut short
      else bad[rng() % m] ^= std::uint8_t(1 + rng() % 255);
      std::vector<std::uint8_t> out(n + 64, 0xDD);
      try {
        const std::size_t got = c->decode(bad.data(), len, out.data(), n);
        EXPECT_LE(got, n) << c->name();
      } catch (const codecs::CodecError&) {
        ++errors;
      }
      for (std::size_t k = n; k < out.size(); ++k) {
        ASSERT_EQ(out[k], 0xDD) << c->name() << " wrote past its buffer";
      }
    }
    // A header or frame that claims more than the chunk.
    std::vector<std::uint8_t> out(n / 2);
    if (f.id != codecs::kFletcher32) {
      EXPECT_THROW(c->decode(enc.data(), m, out.data(), out.size()), codecs::CodecError) << c->name();
    }
  }
  EXPECT_GT(errors, 100);
}

TEST(Codecs, PipelineHonoursTheFilterMaskAndOptionalFilters) {
  const std::size_t es = 8, n = 512 * es;
  const std::vector<FilterSpec> specs = {{codecs::kShuffle, 1, {unsigned(es)}}, {codecs::kDeflate, 1, {4}},
                                         {codecs::kFletcher32, 0, {}}};
  std::string why;
  const auto p = codecs::Pipeline::make(specs, &why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->names(), "shuffle+deflate(4)+fletcher32");
  codecs::WorkBuffers w;
  p->prepare(w, n);
  EXPECT_EQ(w.a.size(), p->buffer_bytes(n));
  const auto in = sample(n, es, false, 4);
  std::copy(in.begin(), in.end(), w.a.begin());
  const codecs::Coded e = p->encode(w, n);
  EXPECT_EQ(e.mask, 0u);
  std::vector<std::uint8_t> stored(e.data, e.data + e.size);
  std::copy(stored.begin(), stored.end(), w.a.begin());
  codecs::Coded d = p->decode(w, stored.size(), 0, n);
  EXPECT_TRUE(std::equal(in.begin(), in.end(), d.data));
  // A chunk stored with deflate skipped (mask bit 1): shuffled bytes and a checksum.
  const auto sh = codecs::make_codec(specs[0], nullptr);
  const auto fl = codecs::make_codec(specs[2], nullptr);
  std::vector<std::uint8_t> raw(n + 4);
  sh->encode(in.data(), n, raw.data());
  fl->encode(raw.data(), n, raw.data());
  std::copy(raw.begin(), raw.end(), w.a.begin());
  d = p->decode(w, raw.size(), 0x2, n);
  EXPECT_TRUE(std::equal(in.begin(), in.end(), d.data));
  // The wrong size after decoding is damage, named as such.
  std::copy(raw.begin(), raw.end(), w.a.begin());
  EXPECT_THROW(p->decode(w, raw.size(), 0x2, n + es), codecs::CodecError);
  // A filter that is not ours names itself.
  EXPECT_FALSE(codecs::Pipeline::make({{32000, 1, {}}}, &why));
  EXPECT_NE(why.find("32000"), std::string::npos) << why;
}

}  // namespace
}  // namespace gt::test

namespace gt::test {
namespace {

// One pool serves both sides of a run: groups from two callers at once run
// to completion, a writer's wait_released() returns once each job has
// copied its input (before the slow part), and a group's error reaches only
// the caller that waits on it, with the group's other jobs counted off.
TEST(CodecPool, GroupsFromTwoCallersReleaseEarlyAndKeepTheirErrors) {
  const auto pool = codecs::WorkerPool::shared(3);
  EXPECT_EQ(codecs::WorkerPool::shared(3), pool);  // the same threads for a source and a sink
  EXPECT_NE(codecs::WorkerPool::shared(2), pool);
  std::atomic<int> copied{0}, encoded{0}, decoded{0};
  std::atomic<bool> go{false};
  auto enc = pool->submit(6, [&](std::size_t, int worker) {
    EXPECT_GE(worker, 0);
    EXPECT_LT(worker, 3);
    ++copied;
    codecs::WorkerPool::release_input();
    while (!go) std::this_thread::yield();  // the slow part, after the input is no longer read
    ++encoded;
  });
  std::thread reader([&] {
    pool->run(5, [&](std::size_t, int) { ++decoded; });
  });
  // Three threads hold three encodes in their slow part: the other three
  // have not copied yet, so the writer would still be waiting.
  while (copied < 3) std::this_thread::yield();
  EXPECT_FALSE(pool->finished(*enc));
  go = true;
  pool->wait_released(*enc);
  EXPECT_EQ(copied, 6);
  reader.join();
  EXPECT_EQ(decoded, 5);
  pool->wait(*enc);
  EXPECT_EQ(encoded, 6);

  std::atomic<int> ran{0};
  auto bad = pool->submit(50, [&](std::size_t k, int) {
    ++ran;
    if (k == 0) throw std::runtime_error("chunk 0 is damaged");
  });
  pool->run(4, [](std::size_t, int) {});  // another caller's group is not failed by it
  EXPECT_THROW(
      {
        try {
          pool->wait(*bad);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "chunk 0 is damaged");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_LE(ran, 50);
  EXPECT_NO_THROW(pool->wait(*bad));  // rethrown once
}

}  // namespace
}  // namespace gt::test

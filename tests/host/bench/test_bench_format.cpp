// The bench table and JSON: every row shows, notes survive quoting, and the
// JSON is well formed (checked by a small strict parser, not by substrings).
#include <gtest/gtest.h>

#include <cctype>
#include <limits>
#include <map>
#include <stdexcept>
#include <memory>
#include <string>
#include <vector>

#include "gtranspose/bench.hpp"

namespace {

// A strict JSON value tree, enough to walk what bench_json writes.
struct Json {
  enum Type { null, boolean, number, string, array, object } type = null;
  bool b = false;
  double n = 0;
  std::string s;
  std::vector<Json> items;
  std::map<std::string, Json> fields;
};

class Parser {
 public:
  explicit Parser(const std::string& t) : t_(t) {}
  Json parse() {
    Json v = value();
    ws();
    if (i_ != t_.size()) fail("trailing characters");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) {
    throw std::runtime_error("JSON: " + why + " at offset " + std::to_string(i_));
  }
  void ws() {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\n' || t_[i_] == '\t' || t_[i_] == '\r')) ++i_;
  }
  bool eat(const char* lit) {
    const std::string l(lit);
    if (t_.compare(i_, l.size(), l) != 0) return false;
    i_ += l.size();
    return true;
  }
  Json value() {
    ws();
    if (i_ >= t_.size()) fail("unexpected end");
    Json v;
    const char c = t_[i_];
    if (c == '{') {
      v.type = Json::object;
      ++i_;
      ws();
      if (t_[i_] == '}') return ++i_, v;
      for (;;) {
        ws();
        Json k = value();
        if (k.type != Json::string) fail("object key is not a string");
        ws();
        if (!eat(":")) fail("expected ':'");
        if (v.fields.count(k.s)) fail("duplicate key " + k.s);
        v.fields[k.s] = value();
        ws();
        if (eat("}")) return v;
        if (!eat(",")) fail("expected ',' or '}'");
      }
    }
    if (c == '[') {
      v.type = Json::array;
      ++i_;
      ws();
      if (t_[i_] == ']') return ++i_, v;
      for (;;) {
        v.items.push_back(value());
        ws();
        if (eat("]")) return v;
        if (!eat(",")) fail("expected ',' or ']'");
      }
    }
    if (c == '"') {
      v.type = Json::string;
      ++i_;
      for (;;) {
        if (i_ >= t_.size()) fail("unterminated string");
        const char d = t_[i_++];
        if (d == '"') return v;
        if (static_cast<unsigned char>(d) < 0x20) fail("raw control character in string");
        if (d != '\\') {
          v.s += d;
          continue;
        }
        const char e = t_[i_++];
        switch (e) {
          case '"': v.s += '"'; break;
          case '\\': v.s += '\\'; break;
          case '/': v.s += '/'; break;
          case 'n': v.s += '\n'; break;
          case 't': v.s += '\t'; break;
          case 'r': v.s += '\r'; break;
          case 'b': v.s += '\b'; break;
          case 'f': v.s += '\f'; break;
          case 'u': {
            const std::string hex = t_.substr(i_, 4);
            if (hex.size() != 4) fail("short \\u escape");
            v.s += static_cast<char>(std::stoi(hex, nullptr, 16));
            i_ += 4;
            break;
          }
          default: fail("bad escape");
        }
      }
    }
    if (eat("true")) return v.type = Json::boolean, v.b = true, v;
    if (eat("false")) return v.type = Json::boolean, v;
    if (eat("null")) return v;
    const std::size_t start = i_;
    if (t_[i_] == '-') ++i_;
    if (i_ >= t_.size() || !std::isdigit(static_cast<unsigned char>(t_[i_]))) fail("expected a value");
    while (i_ < t_.size() && (std::isdigit(static_cast<unsigned char>(t_[i_])) || t_[i_] == '.' || t_[i_] == 'e' ||
                              t_[i_] == 'E' || t_[i_] == '+' || t_[i_] == '-'))
      ++i_;
    v.type = Json::number;
    v.n = std::stod(t_.substr(start, i_ - start));
    return v;
  }

  const std::string& t_;
  std::size_t i_ = 0;
};

gt::BenchResult sample() {
  gt::BenchResult r;
  r.device = "NVIDIA H100 80GB HBM3";
  r.reference = "cudaMemcpy D2D";
  r.seed = 18446744073709551615ull;  // the largest seed must print exactly
  gt::BenchRow ref;
  ref.name = "cudaMemcpy D2D";
  ref.dtype = "f32";
  ref.shape = {16384, 16384};
  ref.median_ms = 0.7182;
  ref.min_ms = 0.7101;
  ref.max_ms = 0.7301;
  ref.gbps = 2990.5;
  ref.pct_of_copy = 100;
  ref.verified = true;
  gt::BenchRow padded = ref;
  padded.name = "padded";
  padded.config = "32x8";
  padded.median_ms = 0.75;
  padded.gbps = 2863.3;
  padded.pct_of_copy = 95.7;
  gt::BenchRow wrong = padded;
  wrong.name = "naive-row";
  wrong.config = "";
  wrong.verified = false;
  wrong.note = "WRONG: 3 mismatches, first at out(1, 2) \"quoted\" back\\slash\nnew line\ttab";
  gt::BenchRow skip;
  skip.name = "single-thread";
  skip.dtype = "f32";
  skip.shape = {16384, 16384};
  skip.note = "skipped: single-thread is limited to 1M elements";
  gt::BenchRow small = ref;
  small.shape = {256, 256};
  small.note = "timed 40 launches per event pair";
  r.rows = {ref, padded, wrong, skip, small};
  return r;
}

TEST(BenchFormat, TableHasEveryRowAndTheHeader) {
  const gt::BenchResult r = sample();
  const std::string t = gt::format_bench(r);
  EXPECT_NE(t.find("NVIDIA H100 80GB HBM3"), std::string::npos) << t;
  EXPECT_NE(t.find("18446744073709551615"), std::string::npos) << t;
  for (const char* col : {"kernel", "dtype", "shape", "config", "median ms", "GB/s", "% of copy", "verified", "note"})
    EXPECT_NE(t.find(col), std::string::npos) << col;
  for (const auto& row : r.rows) EXPECT_NE(t.find(row.name), std::string::npos) << row.name;
  EXPECT_NE(t.find("16384x16384"), std::string::npos);
  EXPECT_NE(t.find("32x8"), std::string::npos);
  EXPECT_NE(t.find("2863.3"), std::string::npos);
  EXPECT_NE(t.find("95.7"), std::string::npos);
  EXPECT_NE(t.find("skipped: single-thread is limited to 1M elements"), std::string::npos);
  EXPECT_NE(t.find(" NO "), std::string::npos) << "a failed verification must stand out";
}

TEST(BenchFormat, TableColumnsLineUp) {
  const std::string t = gt::format_bench(sample());
  // Every data line of the first size puts its GB/s figure's end at the same column.
  std::vector<std::string> lines;
  for (std::size_t p = 0, q; (q = t.find('\n', p)) != std::string::npos; p = q + 1) lines.push_back(t.substr(p, q - p));
  ASSERT_GE(lines.size(), 5u);
  const std::size_t end_ref = lines[2].find("2990.5") + 6, end_pad = lines[3].find("2863.3") + 6;
  EXPECT_EQ(end_ref, end_pad) << t;
}

TEST(BenchFormat, SkippedRowsShowDashesNotZeros) {
  const std::string t = gt::format_bench(sample());
  const std::size_t a = t.find("single-thread");
  const std::string line = t.substr(a, t.find('\n', a) - a);
  EXPECT_EQ(line.find("0.0000"), std::string::npos) << line;
  EXPECT_NE(line.find(" - "), std::string::npos) << line;
}

TEST(BenchFormat, EachSizeStartsAfterABlankLine) {
  const std::string t = gt::format_bench(sample());
  EXPECT_NE(t.find("\n\ncudaMemcpy D2D"), std::string::npos) << t;
}

TEST(BenchJson, ParsesAndKeepsEveryField) {
  const gt::BenchResult r = sample();
  const std::string j = gt::bench_json(r);
  Json root;
  ASSERT_NO_THROW(root = Parser(j).parse()) << j;
  ASSERT_EQ(root.type, Json::object);
  EXPECT_EQ(root.fields.at("device").s, r.device);
  EXPECT_EQ(root.fields.at("reference").s, "cudaMemcpy D2D");
  EXPECT_NE(j.find("\"seed\": 18446744073709551615"), std::string::npos) << "seed digits must be exact";
  const Json& rows = root.fields.at("rows");
  ASSERT_EQ(rows.type, Json::array);
  ASSERT_EQ(rows.items.size(), r.rows.size());
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    const auto& f = rows.items[i].fields;
    for (const char* key : {"name", "dtype", "rows", "cols", "shape", "bytes", "config", "ran", "median_ms", "min_ms",
                            "max_ms", "gbps", "pct_of_copy", "verified", "note"})
      EXPECT_EQ(f.count(key), 1u) << "row " << i << " lacks " << key;
    EXPECT_EQ(f.at("name").s, r.rows[i].name);
    EXPECT_EQ(f.at("note").s, r.rows[i].note) << "escaping must round-trip";
    EXPECT_EQ(f.at("verified").b, r.rows[i].verified);
    EXPECT_EQ(f.at("rows").n, double(r.rows[i].shape.rows));
    EXPECT_DOUBLE_EQ(f.at("gbps").n, r.rows[i].gbps);
  }
  EXPECT_EQ(rows.items[0].fields.at("bytes").n, 16384.0 * 16384 * 4);
  EXPECT_EQ(rows.items[1].fields.at("config").s, "32x8");
  EXPECT_FALSE(rows.items[3].fields.at("ran").b);
  EXPECT_TRUE(rows.items[0].fields.at("ran").b);
}

TEST(BenchJson, NonFiniteNumbersBecomeNull) {
  gt::BenchResult r = sample();
  r.rows[1].pct_of_copy = std::numeric_limits<double>::infinity();
  r.rows[1].max_ms = std::numeric_limits<double>::quiet_NaN();
  const std::string j = gt::bench_json(r);
  Json root;
  ASSERT_NO_THROW(root = Parser(j).parse()) << j;
  EXPECT_EQ(root.fields.at("rows").items[1].fields.at("pct_of_copy").type, Json::null);
  EXPECT_EQ(root.fields.at("rows").items[1].fields.at("max_ms").type, Json::null);
}

TEST(BenchJson, RandomSweepKeepsEveryShapeAndTheStatus) {
  gt::BenchResult r = sample();
  r.shape_rows = r.rows;  // the sweep's per-shape rows, beside the summary
  r.rows[0].status = gt::RowStatus::ok;
  r.rows[3].status = gt::RowStatus::skipped;
  const std::string j = gt::bench_json(r);
  Json root;
  ASSERT_NO_THROW(root = Parser(j).parse()) << j;
  ASSERT_EQ(root.fields.at("shape_rows").items.size(), r.shape_rows.size());
  EXPECT_EQ(root.fields.at("rows").items[0].fields.at("status").s, "ok");
  EXPECT_EQ(root.fields.at("rows").items[3].fields.at("status").s, "skipped");
  EXPECT_EQ(root.fields.count("shape_rows"), 1u);
  // Without a sweep there is no shape_rows field.
  EXPECT_EQ(Parser(gt::bench_json(sample())).parse().fields.count("shape_rows"), 0u);
}

TEST(BenchJson, EmptyResultIsStillValid) {
  gt::BenchResult r;
  const std::string j = gt::bench_json(r);
  Json root;
  ASSERT_NO_THROW(root = Parser(j).parse()) << j;
  EXPECT_TRUE(root.fields.at("rows").items.empty());
  EXPECT_EQ(root.fields.at("device").s, "");
}

}  // namespace

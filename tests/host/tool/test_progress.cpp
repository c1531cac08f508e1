// The progress line fits every terminal width (so it never wraps and leaves
// debris), keeps the most useful fields as the width shrinks, and says the
// time left.
#include <gtest/gtest.h>

#include <string>

#include "progress.hpp"

namespace {

using gt::tool::Progress;

TEST(Progress, FitsEveryWidth) {
  for (unsigned w = 1; w <= 200; ++w)
    for (double f : {0.0, 0.013, 0.5, 0.999, 1.0})
      for (const char* stage : {"", "transpose", "transpose block 12 of 13"}) {
        const std::uint64_t total = 8ull << 30, done = std::uint64_t(f * double(total));
        const std::string s = Progress::line(done, total, 12.5, w, stage);
        ASSERT_LE(s.size(), w) << "width " << w << ": '" << s << "'";
        ASSERT_FALSE(s.empty()) << "width " << w;
        for (char c : s) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "a control character in '" << s << "'";
      }
}

TEST(Progress, DropsTheBarThenTheBytesAsTheWidthShrinks) {
  const std::uint64_t total = 4ull << 30, done = 1ull << 30;  // a quarter, at 1 GiB per 2 s
  const std::string wide = Progress::line(done, total, 2.0, 120);
  EXPECT_EQ(wide.front(), '[');
  EXPECT_NE(wide.find("25.0%"), std::string::npos) << wide;
  EXPECT_NE(wide.find("1.00 GiB / 4.00 GiB"), std::string::npos) << wide;
  EXPECT_NE(wide.find("GB/s"), std::string::npos) << wide;
  EXPECT_NE(wide.find("ETA 6s"), std::string::npos) << wide;  // 3 GiB left at 0.5 GiB/s
  const std::string mid = Progress::line(done, total, 2.0, 45);  // the bar stays, the bytes go
  EXPECT_EQ(mid.find("GiB /"), std::string::npos) << mid;
  EXPECT_EQ(mid.front(), '[') << mid;
  EXPECT_NE(mid.find("ETA 6s"), std::string::npos) << mid;
  const std::string barless = Progress::line(done, total, 2.0, 30);  // too narrow for a bar worth having
  EXPECT_EQ(barless.find('['), std::string::npos) << barless;
  EXPECT_NE(barless.find("GB/s"), std::string::npos) << barless;
  const std::string narrow = Progress::line(done, total, 2.0, 16);
  EXPECT_NE(narrow.find("25.0%"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("ETA"), std::string::npos) << narrow;
}

TEST(Progress, TheStageLeadsAndGoesLast) {
  const std::uint64_t total = 4ull << 30, done = 1ull << 30;
  const std::string stage = "transpose block 1 of 2";
  const std::string wide = Progress::line(done, total, 2.0, 120, stage);
  EXPECT_EQ(wide.rfind(stage + ": [", 0), 0u) << wide;
  EXPECT_NE(wide.find("1.00 GiB / 4.00 GiB"), std::string::npos) << wide;
  EXPECT_NE(wide.find("ETA 6s"), std::string::npos) << wide;
  // 45 columns: no room for the bar beside the name; the name, the share and the ETA stay.
  const std::string mid = Progress::line(done, total, 2.0, 45, stage);
  EXPECT_EQ(mid.rfind(stage + ": ", 0), 0u) << mid;
  EXPECT_EQ(mid.find('['), std::string::npos) << mid;
  EXPECT_NE(mid.find("25.0%"), std::string::npos) << mid;
  EXPECT_NE(mid.find("ETA 6s"), std::string::npos) << mid;
  // Too narrow for the name: the line without it, as before.
  EXPECT_EQ(Progress::line(done, total, 2.0, 30, stage), Progress::line(done, total, 2.0, 30));
}

TEST(Progress, EtaInMinutesAndHours) {
  const std::uint64_t total = 1000ull << 30;
  EXPECT_NE(Progress::line(total / 100, total, 10, 120).find("ETA 16m30s"), std::string::npos);
  EXPECT_NE(Progress::line(total / 1000, total, 10, 120).find("ETA 2h46m"), std::string::npos);
  EXPECT_NE(Progress::line(0, total, 10, 120).find("ETA ?"), std::string::npos);
}

}  // namespace

// VERP return paths: what crmd makes it reads back; nothing else passes (another message's
// or contact's token, a changed MAC, another domain, another secret).
#include "src/mail/verp.h"

#include <gtest/gtest.h>

namespace crmd::mail {
namespace {

const std::string kVerpSecret(32, 'k');

TEST(Verp, ReturnPathReadsBackInAnyCase) {
  VerpAddresses v(kVerpSecret, "bounces.example.com");
  VerpRef ref{.kind = 'c', .owner_id = 12, .contact_id = 345};
  std::string rp = v.ReturnPath(ref);
  EXPECT_EQ(rp.rfind("bounce+c12-345-", 0), 0u) << rp;
  EXPECT_EQ(rp.substr(rp.find('@')), "@bounces.example.com");
  EXPECT_EQ(v.Parse(rp), ref);
  std::string upper = rp;
  for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(v.Parse(upper), ref);
  EXPECT_EQ(v.Parse("<" + rp + ">"), ref);
  for (char kind : {'s', 'a', 'o'}) {
    VerpRef other{.kind = kind, .owner_id = 7, .contact_id = 8};
    EXPECT_EQ(v.Parse(v.ReturnPath(other)), other);
  }
}

TEST(Verp, ForgedTokensAreNotAttributed) {
  VerpAddresses v(kVerpSecret, "bounces.example.com");
  std::string rp = v.ReturnPath({.kind = 'c', .owner_id = 12, .contact_id = 345});
  std::string mac = rp.substr(rp.rfind('-') + 1, rp.find('@') - rp.rfind('-') - 1);
  // The same MAC on another contact or campaign.
  EXPECT_FALSE(v.Parse("bounce+c12-346-" + mac + "@bounces.example.com"));
  EXPECT_FALSE(v.Parse("bounce+c13-345-" + mac + "@bounces.example.com"));
  EXPECT_FALSE(v.Parse("bounce+s12-345-" + mac + "@bounces.example.com"));
  std::string flipped = rp;
  flipped[rp.find('@') - 1] = flipped[rp.find('@') - 1] == 'a' ? 'b' : 'a';
  EXPECT_FALSE(v.Parse(flipped));
  EXPECT_FALSE(v.Parse(rp.substr(0, rp.find('@')) + "@other.example.com"));
  EXPECT_FALSE(VerpAddresses(std::string(32, 'x'), "bounces.example.com").Parse(rp));
  for (const char* bad : {"", "bounce@bounces.example.com", "bounce+@bounces.example.com",
                          "bounce+c-1-x@bounces.example.com", "bounce+x1-2-abc@bounces.example.com",
                          "bounce+c1--2-abc@bounces.example.com", "news@bounces.example.com"})
    EXPECT_FALSE(v.Parse(bad)) << bad;
}

}  // namespace
}  // namespace crmd::mail

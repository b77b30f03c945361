// The SSRF guard's address classification (src/http/client.cc), including IPv6 forms that
// carry an IPv4 address.
#include <gtest/gtest.h>

#include "src/http/client.h"

namespace crmd::http {
namespace {

TEST(PrivateAddress, PrivateLoopbackAndSpecialRangesAreRefused) {
  for (const char* ip :
       {"127.0.0.1",  "10.1.2.3",        "172.16.0.1",     "192.168.1.1",      "169.254.169.254",
        "100.64.0.1", "0.0.0.0",         "224.0.0.1",      "255.255.255.255",  "::1",
        "::",         "fe80::1",         "fd00::1",        "::ffff:127.0.0.1", "::127.0.0.1",
        "::8.8.8.8",  "64:ff9b::7f00:1", "64:ff9b::a00:1", "2002:7f00:1::",    "2002:c0a8:101::"})
    EXPECT_TRUE(IsPrivateAddress(ip)) << ip;
}

TEST(PrivateAddress, PublicAddressesAreAllowed) {
  for (const char* ip : {"8.8.8.8", "1.1.1.1", "2001:4860:4860::8888", "64:ff9b::808:808",
                         "2002:808:808::", "::ffff:8.8.8.8"})
    EXPECT_FALSE(IsPrivateAddress(ip)) << ip;
}

}  // namespace
}  // namespace crmd::http

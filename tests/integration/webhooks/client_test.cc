// crmd's outbound HTTP client as a webhook receiver sees it.
#include "src/http/client.h"

#include <gtest/gtest.h>

#include "tests/integration/webhooks/receiver.h"

namespace crmd::webhooktest {
namespace {

TEST(OutboundClient, HostCarriesTheNonDefaultPort_Rfc9110_7_2) {
  Receiver receiver;
  auto client = http::MakeHttpClient();
  auto r =
      client->Send({.method = "POST", .url = receiver.url(), .body = "{}", .allow_private = true});
  ASSERT_TRUE(r) << r.error().message;
  auto got = receiver.requests();
  ASSERT_EQ(got.size(), 1u);
  std::string port = receiver.url().substr(std::string("http://127.0.0.1:").size());
  port = port.substr(0, port.find('/'));
  EXPECT_EQ(got[0].Header("Host").value_or(""), "127.0.0.1:" + port);
}

}  // namespace
}  // namespace crmd::webhooktest

#include "src/rest/router.h"

#include <gtest/gtest.h>

namespace crmd::rest {
namespace {

RestRouter Sample() {
  RestRouter r;
  auto h = [](RestContext&) { return http::Response::Empty(200); };
  r.Add({"POST", "/contact", Access::kKey, true, h});
  r.Add({"GET", "/contact/{email}", Access::kKey, false, h});
  r.Add({"DELETE", "/contact/delete/{email}", Access::kKey, false, h});
  return r;
}

TEST(RestRouter, CapturesRawSegments) {
  auto r = Sample();
  auto m = r.Find("GET", "/contact/a%40b.com");
  ASSERT_NE(m.route, nullptr);
  EXPECT_EQ(m.params.at("email"), "a%40b.com");
}

TEST(RestRouter, WrongMethodListsAllowed) {
  auto r = Sample();
  auto m = r.Find("PUT", "/contact");
  EXPECT_EQ(m.route, nullptr);
  EXPECT_EQ(m.allow, "POST");
}

TEST(RestRouter, UnknownPathAndEmptyCaptureDoNotMatch) {
  auto r = Sample();
  EXPECT_TRUE(r.Find("GET", "/nope").allow.empty());
  EXPECT_EQ(r.Find("GET", "/contact/").route, nullptr);
  EXPECT_EQ(r.Find("GET", "/contact/x/y").route, nullptr);
  ASSERT_NE(r.Find("DELETE", "/contact/delete/x").route, nullptr);
}

}  // namespace
}  // namespace crmd::rest

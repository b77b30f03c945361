// multipart/form-data as an import upload sends it (RFC 7578).
#include "src/core/multipart.h"

#include <gtest/gtest.h>

namespace crmd::http {
namespace {

TEST(Multipart, BoundaryFromTheContentType_Rfc7578_4_1) {
  EXPECT_EQ(MultipartBoundary("multipart/form-data; boundary=----x1"), "----x1");
  EXPECT_EQ(MultipartBoundary("Multipart/Form-Data; boundary=\"a b\""), "a b");
  EXPECT_FALSE(MultipartBoundary("text/csv"));
  EXPECT_FALSE(MultipartBoundary("multipart/form-data"));
}

TEST(Multipart, PartsWithNamesFileNamesAndContentThatLooksLikeABoundary_Rfc7578_4_2) {
  std::string body =
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"tag\"\r\n\r\n"
      "fair\r\n"
      "--XyZ\r\n"
      "Content-Disposition: form-data; name=\"file\"; filename=\"people.csv\"\r\n"
      "Content-Type: text/csv\r\n\r\n"
      "email\r\n--XyZnot-a-boundary@example.com\r\n"
      "\r\n--XyZ--\r\n";
  auto parts = ParseMultipartForm(body, "XyZ");
  ASSERT_TRUE(parts);
  ASSERT_EQ(parts->size(), 2u);
  EXPECT_EQ((*parts)[0].name, "tag");
  EXPECT_FALSE((*parts)[0].filename);
  EXPECT_EQ((*parts)[0].content, "fair");
  EXPECT_EQ((*parts)[1].name, "file");
  EXPECT_EQ((*parts)[1].filename, "people.csv");
  EXPECT_EQ((*parts)[1].content, "email\r\n--XyZnot-a-boundary@example.com\r\n");
}

TEST(Multipart, RefusesABodyWithoutItsClosingBoundaryOrADisposition) {
  EXPECT_FALSE(
      ParseMultipartForm("--b\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nx", "b"));
  EXPECT_FALSE(ParseMultipartForm("--b\r\nContent-Type: text/plain\r\n\r\nx\r\n--b--", "b"));
  EXPECT_FALSE(ParseMultipartForm("no boundary here", "b"));
}

}  // namespace
}  // namespace crmd::http

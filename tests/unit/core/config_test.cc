// io_threads: 0 (the default) means one I/O thread per core; a negative count is refused
// with a message that names the key.
#include <gtest/gtest.h>

#include "src/core/config.h"

namespace crmd {
namespace {

TEST(Config, IoThreadsDefaultsToOnePerCoreAndRefusesANegativeCount) {
  Config c;
  EXPECT_EQ(c.io_threads, 0);
  EXPECT_TRUE(c.Validate()) << c.Validate().error().message;
  ASSERT_TRUE(c.Set("io_threads", "3"));
  EXPECT_EQ(c.io_threads, 3);
  EXPECT_TRUE(c.Validate());
  ASSERT_TRUE(c.Set("io_threads", "-1"));
  auto refused = c.Validate();
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("io_threads"), std::string::npos);
}

}  // namespace
}  // namespace crmd

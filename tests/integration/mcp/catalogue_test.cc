// STYLE.md §6: the registered tools and the schema files under schemas/tools/ are the same
// set (descriptors themselves are checked by ToolRegistry::Register at start-up).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/core/embedded.h"
#include "tests/support/test_server.h"

namespace crmd::testing {
namespace {

TEST(ToolCatalogue, RegisteredToolsMatchSchemaFiles) {
  TestServer server;
  std::set<std::string> files;
  for (const auto& f : embedded::All()) {
    std::string_view p = f.path;
    if (p.rfind("tools/", 0) == 0 && p.size() > 11 && p.substr(p.size() - 5) == ".json") {
      files.insert(std::string(p.substr(6, p.size() - 11)));
    }
  }
  auto names = server.app().services().tools->Names();
  std::set<std::string> registered(names.begin(), names.end());
  for (const auto& f : files)
    EXPECT_TRUE(registered.count(f)) << "schemas/tools/" << f << ".json has no handler";
  for (const auto& r : registered) EXPECT_TRUE(files.count(r)) << r << " has no schemas/tools file";
}

}  // namespace
}  // namespace crmd::testing

// The migrations embedded in the binary: one file per version in each engine, and the
// same versions, under the same names, in both. Two branches that each add "the next"
// migration collide on its number, and Migrate() would then apply only one of the two:
// this test is what catches that at merge time.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "src/core/embedded.h"

namespace crmd::store {
namespace {

std::map<int, std::vector<std::string>> Versions(const std::string& prefix) {
  std::map<int, std::vector<std::string>> out;
  for (const auto& f : embedded::All()) {
    if (f.path.rfind(prefix, 0) != 0 || f.path.size() < prefix.size() + 9) continue;
    std::string name(f.path.substr(prefix.size()));
    if (name.substr(name.size() - 4) != ".sql") continue;
    out[std::stoi(name.substr(0, 4))].push_back(name);
  }
  return out;
}

TEST(Migrations, EachVersionHasOneFileAndBothEnginesHaveTheSameVersions) {
  auto sqlite = Versions("db/sqlite/");
  auto postgres = Versions("db/postgres/");
  ASSERT_FALSE(sqlite.empty());
  for (const auto* engine : {&sqlite, &postgres}) {
    for (const auto& [version, files] : *engine) {
      EXPECT_EQ(files.size(), 1u) << "version " << version << " is shared by " << files.size()
                                  << " files, e.g. " << files[0] << " and " << files.back();
    }
  }
  ASSERT_EQ(sqlite.size(), postgres.size());
  for (const auto& [version, files] : sqlite) {
    ASSERT_TRUE(postgres.count(version)) << files[0] << " has no PostgreSQL twin";
    EXPECT_EQ(postgres[version][0], files[0])
        << "the twins of version " << version << " differ in name";
  }
}

}  // namespace
}  // namespace crmd::store

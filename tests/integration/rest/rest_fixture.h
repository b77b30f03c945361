#pragma once
// Shared helpers for the REST integration tests: a TestServer plus API keys.
#include <gtest/gtest.h>

#include <string>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/governance/api_keys.h"
#include "tests/support/test_server.h"

namespace crmd::resttest {

inline constexpr const char* kBase = "/api/crm/v1";
// The path of a REST resource, e.g. Url("/contacts").
inline std::string Url(const std::string& p) { return std::string(kBase) + p; }

inline std::string NewKey(crmd::testing::TestServer& server,
                          governance::ApiKeyRole role = governance::ApiKeyRole::kIntegration,
                          const std::string& name = "test") {
  auto k = server.app().services().governance->api_keys->Create(name, role);
  EXPECT_TRUE(k.has_value());
  return k ? k->secret : std::string();
}

inline http::Headers Bearer(const std::string& key) { return {{"Authorization", "Bearer " + key}}; }

inline bool IsProblem(const http::ClientResponse& r) {
  return r.Header("Content-Type").value_or("") == "application/problem+json";
}

}  // namespace crmd::resttest

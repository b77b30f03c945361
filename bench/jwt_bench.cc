// Access-token signing and verification per second: verification runs on every /mcp
// request, so its cost is the bearer guard's floor.
#include <benchmark/benchmark.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "auth/jwt.h"
#include "auth/token_service.h"
#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/store/db.h"

namespace crmd::auth {
namespace {

AccessTokenClaims Claims() {
  return {.issuer = "https://crm.example",
          .audience = "https://crm.example/mcp",
          .subject = "1",
          .client_id = "c",
          .scope = "contacts:read contacts:write",
          .issued_at = 1'760'000'000,
          .expires_at = 1'760'003'600,
          .jti = "jti"};
}

void BM_MintEs256(benchmark::State& state) {
  auto key = EcKey::Generate();
  auto payload = ToJson(Claims());
  for (auto _ : state) benchmark::DoNotOptimize(SignEs256Jws(*key, "kid", "at+jwt", payload));
}
BENCHMARK(BM_MintEs256);

void BM_ParseAndVerifyEs256(benchmark::State& state) {
  auto key = EcKey::Generate();
  auto token = *SignEs256Jws(*key, "kid", "at+jwt", ToJson(Claims()));
  for (auto _ : state) {
    auto jws = ParseEs256Jws(token);
    benchmark::DoNotOptimize(key->Verify(jws->signing_input, jws->signature));
  }
}
BENCHMARK(BM_ParseAndVerifyEs256);

// The full guard path for a token seen before (the usual case: a client sends the same
// token on every call): the verified-token cache, expiry, trusted kid, in-memory revocation
// set, no signature check and no DB. Compare with BM_ParseAndVerifyEs256 (a first sight).
void BM_TokenServiceVerify(benchmark::State& state) {
  spdlog::set_level(spdlog::level::warn);
  std::string dir = (std::filesystem::temp_directory_path() / "crmd-bench-XXXXXX").string();
  if (!mkdtemp(dir.data())) {
    state.SkipWithError("mkdtemp");
    return;
  }
  {
    auto db = store::Open("sqlite:" + dir + "/b.db");
    SystemClock clock;
    SecureRandom random;
    TokenService tokens({.issuer = "https://crm.example", .resource = "https://crm.example/mcp"},
                        **db, clock, random);
    auto t =
        tokens.IssueAccessToken({.subject = "1", .client_id = "c", .scopes = {"contacts:read"}});
    for (auto _ : state) benchmark::DoNotOptimize(tokens.Verify(t->token));
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_TokenServiceVerify);

}  // namespace
}  // namespace crmd::auth

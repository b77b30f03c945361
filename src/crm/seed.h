#pragma once
// Fake but realistic CRM data for demos, load tests and benchmarks (`crmctl seed`).
// Writes rows directly in batches (one transaction per batch), bypassing the outbox and
// audit: seeded data is not a business event. Deterministic for a given seed.
#include <cstdint>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm {

struct SeedOptions {
  int64_t contacts = 1000;
  int lists = 8;
  int tags = 12;
  // Rows per transaction. Small on purpose: a transaction's cost grows faster than its
  // size (docs/performance.md).
  int batch = 100;
  uint32_t seed = 42;
  int64_t now = 0;  // unix seconds; contacts are spread over the year before it
};

struct SeedReport {
  int64_t contacts = 0;
  int64_t lists = 0;
  int64_t tags = 0;
  int64_t memberships = 0;
};

Result<SeedReport> Seed(store::Database& db, const SeedOptions& options);

}  // namespace crmd::crm

#pragma once
// The three domain rooms built the way the composition root builds them (src/app/
// domain_wiring.cc), for tests that drive services without a server: governance, the
// contact book with marketing's usage hooks, marketing.
#include <memory>
#include <string>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/crm/services.h"
#include "src/governance/services.h"
#include "src/marketing/services.h"
#include "src/marketing/usage.h"
#include "src/store/db.h"

namespace crmd::testing {

struct Domain {
  marketing::MarketingUsage usage;
  std::unique_ptr<governance::Services> governance;
  std::unique_ptr<crm::Services> crm;
  std::unique_ptr<marketing::Services> marketing;
};

inline Result<std::unique_ptr<Domain>> MakeDomain(store::Database& db, Clock& clock, Random& random,
                                                  crm::Resolver* resolver = nullptr) {
  auto d = std::make_unique<Domain>();
  auto g = governance::MakeServices({.db = &db, .clock = &clock, .random = &random});
  if (!g) return Fail(g.error());
  d->governance = std::move(*g);
  auto c = crm::MakeServices(*d->governance, {.db = &db,
                                              .clock = &clock,
                                              .random = &random,
                                              .resolver = resolver,
                                              .usage = &d->usage,
                                              .contact_exit = &d->usage,
                                              // 32 bytes; the server's is a random secret
                                              .suppression_key = std::string(32, 'k')});
  if (!c) return Fail(c.error());
  d->crm = std::move(*c);
  auto m = marketing::MakeServices(*d->governance, *d->crm);
  if (!m) return Fail(m.error());
  d->marketing = std::move(*m);
  return d;
}

}  // namespace crmd::testing

// The domain's three rooms, each built on the ones before it: governance, the contact
// book (with marketing's usage hooks and the system DNS resolver), marketing.
#include "src/app/services.h"
#include "src/app/wiring.h"

namespace crmd::app {

Status BuildDomain(App::Services& s) {
  auto governance = governance::MakeServices({.db = s.db.get(),
                                              .clock = s.clock.get(),
                                              .random = s.random.get(),
                                              // Approval links point at this server's console.
                                              .approval_url_base = s.config.Issuer(),
                                              .metrics = s.metrics.get()});
  if (!governance) return Fail(governance.error());
  s.governance = std::move(*governance);

  s.resolver = crm::MakeSystemResolver();
  s.marketing_usage = std::make_unique<marketing::MarketingUsage>();
  auto crm = crm::MakeServices(*s.governance, {.db = s.db.get(),
                                               .clock = s.clock.get(),
                                               .random = s.random.get(),
                                               .resolver = s.resolver.get(),
                                               .usage = s.marketing_usage.get(),
                                               .contact_exit = s.marketing_usage.get()});
  if (!crm) return Fail(crm.error());
  s.crm = std::move(*crm);

  auto marketing = marketing::MakeServices(*s.governance, *s.crm);
  if (!marketing) return Fail(marketing.error());
  s.marketing = std::move(*marketing);
  return Ok();
}

}  // namespace crmd::app

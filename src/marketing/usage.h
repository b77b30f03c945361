#pragma once
// Where campaigns and automations use a list or a tag: the marketing implementation of
// crm::UsageSource (get_list / get_tag "used by", and dependency checks before delete_list
// / delete_tag). Blocking uses: an active automation (trigger or step), or a scheduled or
// sending campaign (audience or exclusion). Drafts, paused and finished records are listed
// but do not block. Stateless and thread-safe; reads only through the given Conn.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/crm/contact_exit.h"
#include "src/crm/usage.h"
#include "src/store/db.h"

namespace crmd::marketing {

// kind: "list" | "tag". Indexed lookups (campaign_audience_ref, automation_refs_ref).
Result<std::vector<crm::Usage>> FindMarketingUses(store::Conn& c, const std::string& kind,
                                                  int64_t id);

// Closes what a deleted contact leaves open: pending campaign recipients count as
// skipped, active automation and sequence runs as exited (indexed by contact_id).
Status CloseMarketingOfContact(store::Conn& c, int64_t contact_id);

// What CloseMarketingOfContact would close (the same three indexed lookups).
Result<crm::OpenMarketing> OpenMarketingOfContact(store::Conn& c, int64_t contact_id);

class MarketingUsage final : public crm::UsageSource, public crm::ContactExit {
 public:
  Result<crm::OpenMarketing> OpenFor(store::Conn& conn, int64_t contact_id) override {
    return OpenMarketingOfContact(conn, contact_id);
  }
  Status BeforeContactDeleted(store::Conn& conn, int64_t contact_id) override {
    return CloseMarketingOfContact(conn, contact_id);
  }
  Result<std::vector<crm::Usage>> ListUsage(store::Conn& conn, int64_t list_id) override {
    return FindMarketingUses(conn, "list", list_id);
  }
  Result<std::vector<crm::Usage>> TagUsage(store::Conn& conn, int64_t tag_id) override {
    return FindMarketingUses(conn, "tag", tag_id);
  }
};

}  // namespace crmd::marketing

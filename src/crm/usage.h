#pragma once
// Where a list or tag is used by marketing objects (campaign audiences and exclusions,
// automation triggers and steps). crm depends only on this interface; the marketing
// module implements it and the composition root hands it to crm::Services.
// Implementations must be thread-safe and must only read through the given Conn (they
// run inside the caller's transaction).
#include <cstdint>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm {

struct Usage {
  std::string kind;  // "campaign" | "automation"
  int64_t id = 0;
  std::string name;
  std::string status;     // the user's status, e.g. "draft", "scheduled", "active"
  std::string role;       // "audience" | "exclusion" | "trigger" | "step"
  bool blocking = false;  // true when deleting the list/tag would break it (active
                          // automation, scheduled or sending campaign)
};

class UsageSource {
 public:
  virtual ~UsageSource() = default;
  virtual Result<std::vector<Usage>> ListUsage(store::Conn& conn, int64_t list_id) = 0;
  virtual Result<std::vector<Usage>> TagUsage(store::Conn& conn, int64_t tag_id) = 0;
};

}  // namespace crmd::crm

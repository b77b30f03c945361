#pragma once
// Lists and tags: named groups of contacts with a description, a member count and the
// places they are used (UsageSource, implemented by marketing). Both share one
// implementation parameterised by GroupKind; tags.h names the tag flavour.
// Thread-safe.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/crm/contacts.h"
#include "src/crm/usage.h"
#include "src/governance/actor.h"
#include "src/governance/confirmations.h"
#include "src/store/db.h"

namespace crmd::crm {

enum class GroupKind { kList, kTag };

struct Group {
  int64_t id = 0;
  std::string name;
  std::string description;
  int64_t revision = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  int64_t member_count = 0;
  // Lists only: shown, with the description, to its members on the preference page behind
  // every message's unsubscribe link (docs/mail.md).
  std::optional<bool> is_public;
  std::optional<std::vector<Usage>> usage;  // filled by Get
};
nlohmann::json ToJson(const Group& g);
nlohmann::json ToJson(const Usage& u);

struct GroupPage {
  std::vector<Group> items;
  std::optional<std::string> next_cursor;
};

struct GroupServiceOptions {
  GroupKind kind = GroupKind::kList;
  store::Database* db = nullptr;
  Clock* clock = nullptr;
  governance::AuditLog* audit = nullptr;
  governance::Idempotency* idempotency = nullptr;
  Outbox* outbox = nullptr;
  UsageSource* usage = nullptr;  // may be null: no usage known
};

inline constexpr size_t kMaxGroupNameLength = 100;

// Finds a list/tag by id or name inside the caller's transaction; a missing name is
// created when create_missing (tags named on a contact). kNotFound otherwise. For use
// inside another service's transaction (Write when create_missing, else Read or Write).
Result<NamedRef> ResolveGroupIn(store::Conn& conn, GroupKind kind, const Ref& ref,
                                bool create_missing, int64_t now);
inline constexpr size_t kMaxDescriptionLength = 1000;

class GroupService {
 public:
  explicit GroupService(GroupServiceOptions options);
  GroupService(const GroupService&) = delete;
  GroupService& operator=(const GroupService&) = delete;

  GroupKind kind() const { return o_.kind; }
  const char* noun() const;  // "list" | "tag"

  // Ordered by name; `query` is a case-sensitive name prefix.
  Result<GroupPage> List(const std::string& query, const std::string& cursor, int limit);
  Result<Group> Get(const Ref& ref);  // with member_count and usage
  // For use inside another service's transaction (Read or Write).
  Result<Group> GetIn(store::Conn& conn, const Ref& ref, bool with_usage);
  // kAlreadyExists when the name is taken. `is_public` is for lists only (kInvalidArgument
  // on a tag).
  Result<Group> Create(const governance::Actor& actor, const std::string& name,
                       const std::string& description, const std::string& idempotency_key = "",
                       std::optional<bool> is_public = std::nullopt);
  Result<Group> Update(const governance::Actor& actor, int64_t id, int64_t expected_revision,
                       const std::optional<std::string>& name,
                       const std::optional<std::string>& description,
                       std::optional<bool> is_public = std::nullopt);

  // The confirmation action "delete_list" / "delete_tag": args {"id": n}.
  governance::ActionSpec DeleteAction();

 private:
  const GroupServiceOptions o_;
};

}  // namespace crmd::crm

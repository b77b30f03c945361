#pragma once
// The skeleton that campaigns, automations and sequences share: each is a revisioned row
// with a status, loaded by id (a 404 naming its kind), created once per idempotency key,
// checked against the revision a caller read, and audited with its status. A service
// keeps one RevisionedRows for its aggregate and adds only what is its own (fields,
// rules, transitions). Thread-safe (all state is in the database).
#include <array>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/governance/audit.h"
#include "src/marketing/common.h"
#include "src/store/db.h"

namespace crmd::marketing {

// The wire names of a status enum, both ways.
template <typename Enum, size_t N>
struct StatusNames {
  std::array<std::pair<Enum, const char*>, N> names;

  // The name of `s`; the first name for a value not listed.
  const char* Name(Enum s) const {
    for (const auto& [v, n] : names)
      if (v == s) return n;
    return names.front().second;
  }
  std::optional<Enum> Parse(std::string_view s) const {
    for (const auto& [v, n] : names)
      if (s == n) return v;
    return std::nullopt;
  }
};

// T has `id`, `revision` and `status`; `kind` is its noun in messages and the audit log
// ("campaign"); `load` is the repository's find (nullopt when there is no such row), and
// may add what the service shows with the row.
template <typename T>
class RevisionedRows {
 public:
  using Load = std::function<Result<std::optional<T>>(store::Conn&, int64_t)>;
  using StatusName = std::function<const char*(const T&)>;

  RevisionedRows(const char* kind, Load load, StatusName status_name, store::Database& db,
                 AuditSink audit, governance::Idempotency* idempotency)
      : kind_(kind),
        load_(std::move(load)),
        status_name_(std::move(status_name)),
        db_(db),
        audit_(std::move(audit)),
        idempotency_(idempotency) {}

  Error NotFound(int64_t id) const {
    return Error::NotFound(std::string(kind_) + " " + std::to_string(id) + " not found");
  }

  // The row, or kNotFound "<kind> <id> not found".
  Result<T> LoadOr404(store::Conn& c, int64_t id) const {
    auto row = load_(c, id);
    if (!row) return Fail(row.error());
    if (!*row) return Fail(NotFound(id));
    return std::move(**row);
  }

  // LoadOr404 in a read transaction of its own.
  Result<T> Get(int64_t id) const {
    return db_.Read([&](store::Conn& c) { return LoadOr404(c, id); });
  }

  // kRevisionConflict unless `row` is at `expected` (0: any revision).
  Status CheckRevision(const T& row, int64_t expected) const {
    if (expected != 0 && row.revision != expected) {
      return Fail(Errc::kRevisionConflict, "expected_revision " + std::to_string(expected) +
                                               " is stale; the " + kind_ + " is at revision " +
                                               std::to_string(row.revision));
    }
    return Ok();
  }

  // An audit row for `action` on `row`, with its status, in the caller's transaction.
  Status Audit(store::Conn& c, const governance::Actor& actor, const char* action, const T& row,
               std::optional<int64_t> revision_before) const {
    if (!audit_) return Ok();
    return audit_(c, actor,
                  governance::AuditEntry{.action = action,
                                         .target_type = kind_,
                                         .target_ids = {row.id},
                                         .revision_before = revision_before,
                                         .revision_after = row.revision,
                                         .details = {{"status", status_name_(row)}}});
  }

  // In a write transaction of its own: `create_in(c)` once per idempotency key (a repeat
  // from the same client within the window answers the row first created, as it is now);
  // `operation` names the key's scope ("create_campaign").
  Result<T> Create(const governance::Actor& actor, const std::string& operation,
                   const std::string& idempotency_key,
                   const std::function<Result<T>(store::Conn&)>& create_in) {
    return db_.Write([&](store::Conn& c) -> Result<T> {
      std::optional<T> made;
      auto id =
          CreateOnce(c, idempotency_, actor, operation, idempotency_key, [&]() -> Result<int64_t> {
            auto x = create_in(c);
            if (!x) return Fail(x.error());
            made = std::move(*x);
            return made->id;
          });
      if (!id) return Fail(id.error());
      if (made) return std::move(*made);
      return LoadOr404(c, *id);
    });
  }

 private:
  const char* const kind_;
  const Load load_;
  const StatusName status_name_;
  store::Database& db_;
  const AuditSink audit_;
  governance::Idempotency* const idempotency_;
};

}  // namespace crmd::marketing

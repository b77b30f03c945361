#pragma once
// The suppression list (docs/crm.md "Suppression list"): addresses and domains that crmd
// never makes `subscribed` and never mails, whatever a contact row says. It outlives the
// contacts: deleting a contact that was unsubscribed, bounced or complained erases the
// contact and keeps its entry, so the next form, import, webhook or assistant call does not
// bring the address back.
//
// An address is kept only as a keyed hash, the hex HMAC-SHA256 of the normalised address
// (NormalizeEmail) under a server secret, so an erased person's entry does not hold the
// address in clear and cannot be reversed by hashing guesses without that secret. A domain
// is kept in clear (its ASCII form); it matches addresses at exactly that domain.
//
// Entered by the contact service (a move to unsubscribed, bounced or complained, the
// deletion of such a contact), by hand (Add, Remove: crmctl, REST, console; audited), and
// lifted only by Remove or by the person's own confirmed double opt-in (LiftIn; a domain's
// entry is never lifted that way).
//
// The contact service checks it on every path that creates or re-subscribes a contact
// (ContactService::SuppressedIn answers the same as CheckIn); the send paths skip what it
// holds. Thread-safe; the key is immutable.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/store/db.h"

namespace crmd::governance {
class AuditLog;
}

namespace crmd::crm {

inline constexpr const char* kSuppressionReasons[] = {"hard_bounce", "complaint", "unsubscribed",
                                                      "erased", "manual"};
bool IsSuppressionReason(std::string_view reason);
// The reason a contact status stands for: bounced -> hard_bounce, complained -> complaint,
// unsubscribed -> unsubscribed; "" for pending and subscribed.
std::string_view SuppressionReasonFor(std::string_view status);

struct Suppression {
  int64_t id = 0;
  std::string address_hash;  // an address's entry: hex HMAC-SHA256 of the normalised address
  std::string domain;        // a domain's entry: the ASCII domain
  std::string reason;        // one of kSuppressionReasons
  std::string source;        // how it came, e.g. "unsubscribe link", "crmctl"; never the address
  std::optional<int64_t> contact_id;  // the live contact that holds the address, if any
  int64_t created_at = 0;
  bool is_domain() const { return !domain.empty(); }
};

// An entry as listed: with the address of the live contact it points at ("" when none
// does, e.g. the contact was erased).
struct ListedSuppression {
  Suppression entry;
  std::string email;
};

// {"id", "kind": "address"|"domain", "domain" (or null), "email" (the live contact's, or
// null), "contact_id" (or null), "reason", "source", "created_at"}. The hash is not shown.
nlohmann::json ToJson(const Suppression& s, const std::string& email = "");
// Why a message to a suppressed address was skipped, for the send logs: "address
// suppressed (complaint)" or "domain example.org suppressed (manual)".
std::string SuppressedSkip(const Suppression& s);
// A refusal to make a suppressed address subscribed (kSuppressed): which entry, why, and
// what lifts it.
Error SuppressedError(const Suppression& s);

// An entry made by hand: an address or a domain (exactly one), the reason, and where the
// administrator acted.
struct SuppressionInput {
  std::string email;
  std::string domain;
  std::string reason = "manual";
  std::string source;  // "crmctl", "api_key:3", "console:<user id>", ...
};
// A value typed or read from a file: with an '@' inside it is an address; "@example.org"
// and "example.org" are domains. Surrounding blanks and quotes are dropped.
SuppressionInput SuppressionInputFromText(std::string_view value, std::string reason,
                                          std::string source);
// The entry for one input: a new one (created), or the one the address or domain already
// had (left as it was).
struct AddedSuppression {
  Suppression entry;
  bool created = false;
};

struct SuppressionFilter {
  std::optional<std::string> reason;
  std::optional<std::string> kind;  // "address" | "domain"
};
struct SuppressionPage {
  std::vector<ListedSuppression> items;
  std::optional<std::string> next_cursor;
};

// What an import of many inputs did: per outcome counts, and the inputs refused (their
// index in the batch and why).
struct SuppressionImport {
  int64_t added = 0, existing = 0, invalid = 0;
  std::vector<std::pair<size_t, std::string>> refused;
};

struct SuppressionListOptions {
  store::Database* db = nullptr;
  Clock* clock = nullptr;
  governance::AuditLog* audit = nullptr;
  // The HMAC key: the server secret "suppression_address_v1" (src/app/shared_secrets.h),
  // the same on every node and kept for good; at least 32 bytes.
  std::string key;
};

class SuppressionList {
 public:
  explicit SuppressionList(SuppressionListOptions options);
  SuppressionList(const SuppressionList&) = delete;
  SuppressionList& operator=(const SuppressionList&) = delete;

  // The stored form of a normalised address: hex HMAC-SHA256 under the key.
  std::string AddressHash(std::string_view normalized_email) const;

  // The entry that applies to `email` (normalised first): the address's own, else its
  // domain's; nullopt when none does. kInvalidArgument when it is not an address.
  Result<std::optional<Suppression>> Check(std::string_view email);
  // The same inside a caller's transaction. REQUIRES: `normalized_email` is normalised.
  Result<std::optional<Suppression>> CheckIn(store::Conn& c, std::string_view normalized_email);
  // Of many normalised addresses, those an entry applies to (their own or their domain's),
  // in a few statements: an import asks once for a batch, then CheckIn for the few hits.
  Result<std::unordered_set<std::string>> SuppressedAmongIn(
      store::Conn& c, const std::vector<std::string>& normalized_emails);

  Result<Suppression> Get(int64_t id);
  // Keyset pages by id (cursor: next_cursor of the previous page); limit 1..500.
  Result<SuppressionPage> List(const SuppressionFilter& filter, const std::string& cursor,
                               int limit);

  // By hand: audited. An address or domain that already has an entry answers that entry
  // (created false) and changes nothing. kInvalidArgument naming "email", "domain" or
  // "reason".
  Result<AddedSuppression> Add(const governance::Actor& actor, const SuppressionInput& in);
  // Several at once (crmctl suppression import), in one transaction; one audit row.
  Result<SuppressionImport> AddMany(const governance::Actor& actor,
                                    const std::vector<SuppressionInput>& in);
  // An administrator's explicit removal: audited; answers the entry removed.
  Result<Suppression> Remove(const governance::Actor& actor, int64_t id);

  // In the caller's transaction (the contact service's writes):
  // Enters the address for `reason` unless it has an entry already; an entry for a weaker
  // reason takes the stronger one (complaint > hard_bounce > unsubscribed > erased >
  // manual). `source` is stored without the address in it. `contact_id`: the live contact
  // that holds the address.
  Status EnterIn(store::Conn& c, std::string_view normalized_email, std::string_view reason,
                 std::string_view source, std::optional<int64_t> contact_id);
  // The contact now holds `normalized_email` (created, or its address changed): the
  // address's entry points at it. Answers the entry that applies (CheckIn).
  Result<std::optional<Suppression>> AttachIn(store::Conn& c, int64_t contact_id,
                                              std::string_view normalized_email);
  // The contact no longer holds the address its entry points at.
  Status DetachIn(store::Conn& c, int64_t contact_id);
  // The person confirmed a double opt-in for this address: its own entry goes (audited as
  // lift_suppression by `actor`). kSuppressed when its domain is suppressed (that entry
  // stays: only an administrator lifts it).
  Status LiftIn(store::Conn& c, const governance::Actor& actor, std::string_view normalized_email,
                int64_t contact_id);

  // Enters the contacts that were unsubscribed, bounced or complained before the list
  // existed (table suppression_backfill, migration 0071), `batch` per transaction, until
  // none is left; answers how many it entered. Idempotent; any node may run it.
  Result<int64_t> Backfill(int batch = 500);

 private:
  // `in` read into an entry (its hash or domain, reason, source) and the normalised
  // address (empty for a domain).
  struct Parsed {
    Suppression entry;
    std::string email;
  };
  Result<Parsed> Parse(const SuppressionInput& in) const;
  Result<AddedSuppression> AddIn(store::Conn& c, const SuppressionInput& in);

  const SuppressionListOptions o_;
};

}  // namespace crmd::crm

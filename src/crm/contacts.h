#pragma once
// The contact service: the one place contacts change, for every face (MCP tools, REST,
// forms, incoming webhooks, crmctl). Each change: validates the email (EmailValidator,
// mode from settings), enforces the status machine (status.h), bumps the revision,
// writes outbox events and an audit row in the SAME transaction.
//
// Two flavours of each write: a self-contained one (opens its own transaction) and an
// `...In(Conn&, ...)` one that composes into a caller's transaction (forms, automations).
// The In-variants take an EmailVerdict, so DNS lookups happen before the transaction
// (ValidateEmail()), never while it holds the write lock.
// Thread-safe.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <variant>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/crm/email_validation.h"
#include "src/crm/suppression.h"
#include "src/governance/actor.h"
#include "src/governance/confirmations.h"
#include "src/store/db.h"

namespace crmd::governance {
class AuditLog;
}
namespace crmd::governance {
class Idempotency;
}
namespace crmd::governance {
class SettingsService;
}

namespace crmd::crm {

class ContactExit;
class Outbox;

inline constexpr size_t kMaxCustomFieldsBytes = 16 * 1024;
inline constexpr size_t kMaxCustomFieldsKeys = 50;
inline constexpr size_t kMaxBulkItems = 500;
inline constexpr size_t kMaxDeleteItems = 100;

// A list or tag named by id or by name.
using Ref = std::variant<int64_t, std::string>;
// Parses a JSON array of ids/names; kInvalidArgument naming `field`.
Result<std::vector<Ref>> ParseRefs(const nlohmann::json& j, const std::string& field);

struct NamedRef {
  int64_t id = 0;
  std::string name;
};

struct Contact {
  int64_t id = 0;
  std::string email;
  std::string first_name;
  std::string last_name;
  std::string phone;
  std::string status;
  std::string type;
  std::string source;
  nlohmann::json custom_fields = nlohmann::json::object();
  int64_t revision = 0;
  int64_t created_at = 0;
  int64_t updated_at = 0;
  std::vector<NamedRef> tags;  // filled by Get*, not by List
  std::vector<NamedRef> lists;
};
// Full form (with tags/lists); `compact` omits custom_fields and memberships.
nlohmann::json ToJson(const Contact& c, bool compact = false);
// Appends DumpJson(ToJson(c, compact), replace): the same bytes, written without building
// the tree (a get_contact answer's largest part; docs/performance.md).
// `with_source`: the compact form with "source" too (a contact.created event's data).
void AppendJson(std::string& out, const Contact& c, bool compact = false, bool with_source = false);

// Fields of a create/update/upsert. Absent optionals leave the field unchanged.
struct ContactInput {
  std::optional<std::string> email;
  std::optional<std::string> first_name;
  std::optional<std::string> last_name;
  std::optional<std::string> phone;
  std::optional<std::string> status;  // through the state machine on existing contacts
  std::optional<std::string> type;
  std::optional<std::string> source;  // only set on create
  // Merged into the existing object; a key with null value removes it.
  std::optional<nlohmann::json> custom_fields;
  std::vector<Ref> tags;   // added (tags named but missing are created)
  std::vector<Ref> lists;  // added (must exist)
  bool consent = false;    // explicit consent, for unsubscribed -> subscribed
  // The person's own signup (a form): a suppressed address is not refused but left pending
  // (a new contact gets the double opt-in email), so that only their confirmation lifts
  // the suppression (docs/crm.md "Suppression list").
  bool signup = false;
};
// Reads the tool/REST JSON shape {email, first_name, ..., tags, lists, consent};
// kInvalidArgument naming the field.
Result<ContactInput> ContactInputFromJson(const nlohmann::json& j);

struct ContactFilter {
  std::optional<std::string> status;
  std::optional<std::string> type;
  std::optional<std::string> source;
  std::optional<Ref> tag;
  std::optional<Ref> list;
  std::optional<std::string> query;     // prefix of email, first name or last name
  std::optional<int64_t> created_from;  // unix seconds, inclusive
  std::optional<int64_t> created_to;    // unix seconds, exclusive
};

struct ContactPage {
  std::vector<Contact> items;  // compact (no memberships)
  std::optional<std::string> next_cursor;
};

struct UpsertResult {
  Contact contact;
  bool created = false;
  bool changed = false;
};

struct BulkItemResult {
  size_t index = 0;
  std::string outcome;  // "created" | "updated" | "unchanged" | "failed"
  std::optional<int64_t> id;
  std::string email;
  std::optional<Error> error;
};

struct MembershipChange {
  int64_t contact_id = 0;
  std::vector<NamedRef> changed;  // the tags/lists actually added or removed
  int64_t revision = 0;
};

struct ContactServiceOptions {
  store::Database* db = nullptr;
  Clock* clock = nullptr;
  EmailValidator* validator = nullptr;
  governance::SettingsService* settings = nullptr;
  Outbox* outbox = nullptr;
  governance::AuditLog* audit = nullptr;
  governance::Idempotency* idempotency = nullptr;
  ContactExit* exit = nullptr;              // may be null: nothing outside crm to close on deletion
  SuppressionList* suppressions = nullptr;  // may be null: no suppression list (unit tests)
};

// The data of a contact.* event (outbox and webhooks): id, email, status and type.
nlohmann::json ContactEventData(const Contact& c);

// How ContactService::InsertNewIn runs (private to the contact book). `inserted`, when
// given, says whether the contact's row went in before a failure (so the error came after
// it). `read_back` false: the answer's contact is as inserted, without its memberships.
// `unsuppressed`: the caller found in this transaction that no suppression entry applies
// to the address (not asked again). `double_opt_in`: the settings' value, when the caller
// read it in this transaction. `groups`: the names of the groups the input's tags and
// lists name by id (an import's batch knows them), so they are not read again.
struct KnownGroups {
  std::unordered_map<int64_t, std::string> tags, lists;
};
struct NewContactWay {
  bool* inserted = nullptr;
  bool read_back = true;
  bool unsuppressed = false;
  std::optional<bool> double_opt_in;
  const KnownGroups* groups = nullptr;
  bool audit = true;  // false: the caller records the creation (an import, once a batch)
};

// Where a person's own act came from (a form submission, a confirmation click): kept as
// consent evidence (contact_records_repo::AddConsentRecord).
struct ConsentOrigin {
  std::string ip_address;
  std::string user_agent;
};

class ContactService {
 public:
  explicit ContactService(ContactServiceOptions options);
  ContactService(const ContactService&) = delete;
  ContactService& operator=(const ContactService&) = delete;

  // Reads.
  Result<Contact> Get(int64_t id);
  Result<Contact> GetByEmail(std::string_view email);  // normalises first
  Result<Contact> GetIn(store::Conn& conn, int64_t id);
  Result<ContactPage> List(const ContactFilter& filter, const std::string& cursor, int limit);

  // The suppression entry that applies to a normalised address (its own, else its
  // domain's), nullopt when none does: what every path that creates or re-subscribes a
  // contact asks (SuppressionList::CheckIn), for callers that write contacts themselves
  // (imports). Inside a caller's transaction.
  Result<std::optional<Suppression>> SuppressedIn(store::Conn& conn,
                                                  std::string_view normalized_email);
  // Of many normalised addresses, those an entry applies to, in a few statements (an
  // import's batch; SuppressionList::SuppressedAmongIn).
  Result<std::unordered_set<std::string>> SuppressedAmongIn(
      store::Conn& conn, const std::vector<std::string>& normalized_emails);
  // A bounce or complaint reported for an address no contact holds (it was deleted, or
  // never imported): the address is entered for `reason` (hard_bounce or complaint) all
  // the same, so that no later path makes it subscribed. Inside a caller's transaction.
  Status SuppressAddressIn(store::Conn& conn, std::string_view normalized_email,
                           std::string_view reason, std::string_view source);

  // Runs the validation service with the mode from settings (may do DNS; call outside a
  // transaction). The verdict is needed by the In-variants.
  EmailVerdict ValidateEmail(std::string_view email);

  // Creates; kAlreadyExists when the email is taken. With a non-empty idempotency_key a
  // repeat from the same actor/client within 24 h returns the first result.
  Result<Contact> Create(const governance::Actor& actor, const ContactInput& in,
                         const std::string& idempotency_key = "");
  // Add-or-update by email (REST POST /v1/contact, forms).
  Result<UpsertResult> Upsert(const governance::Actor& actor, const ContactInput& in);
  Result<UpsertResult> UpsertIn(store::Conn& conn, const governance::Actor& actor,
                                const ContactInput& in, const EmailVerdict& verdict);
  // A new contact for an import (import_batch.cc) that has found in this transaction no
  // contact holding the address and no suppression entry applying to it (SuppressedIn),
  // read the settings' double_opt_in, and resolved the row's tags and lists to ids of groups
  // that exist: what UpsertIn does for a new address, without asking any of that again or
  // reading the contact back. A refusal of the input (kInvalidArgument) comes before
  // anything is written, so the caller needs no savepoint. Answers the contact's id.
  // `groups` names the groups of the row's tags and lists. No audit row: the import
  // records its batch's creations in one (AuditImportIn).
  Result<int64_t> CreateForImportIn(store::Conn& conn, const governance::Actor& actor,
                                    const ContactInput& in, const EmailVerdict& verdict,
                                    bool double_opt_in, const KnownGroups& groups);
  // The audit row of the contacts an import's batch created with CreateForImportIn:
  // action import_contacts, their ids as its targets, `import_id` in its details.
  Status AuditImportIn(store::Conn& conn, const governance::Actor& actor, int64_t import_id,
                       const std::vector<int64_t>& created);
  // Up to kMaxBulkItems in ONE transaction; each item in a savepoint, so one failure
  // leaves the others applied.
  Result<std::vector<BulkItemResult>> UpsertBulk(const governance::Actor& actor,
                                                 const std::vector<ContactInput>& items);

  // kRevisionConflict when expected_revision is stale. The email may change (validated).
  Result<Contact> Update(const governance::Actor& actor, int64_t id, int64_t expected_revision,
                         const ContactInput& in);
  // The state machine's only entry for a single status change.
  Result<Contact> SetStatus(const governance::Actor& actor, int64_t id, const std::string& status,
                            bool consent, std::optional<int64_t> expected_revision,
                            const std::string& reason = "");
  Result<Contact> SetStatusIn(store::Conn& conn, const governance::Actor& actor, int64_t id,
                              const std::string& status, bool consent,
                              const std::string& reason = "");

  // The person confirmed their double opt-in (the link of the confirmation email): a
  // pending contact becomes subscribed with consent, and its address's suppression entry,
  // if any, is lifted (audited). A subscribed contact is answered as it is. kNotFound when
  // the contact is gone; kInvalidTransition when it is neither pending nor subscribed;
  // kSuppressed when its domain is suppressed.
  Result<Contact> ConfirmOptIn(int64_t id, const std::string& request_id,
                               const ConsentOrigin& origin = {});

  // Memberships for several contacts; only actual changes emit events and bump revisions.
  Result<std::vector<MembershipChange>> AddTags(const governance::Actor& actor,
                                                const std::vector<int64_t>& contact_ids,
                                                const std::vector<Ref>& tags);
  Result<std::vector<MembershipChange>> RemoveTags(const governance::Actor& actor,
                                                   const std::vector<int64_t>& contact_ids,
                                                   const std::vector<Ref>& tags);
  Result<std::vector<MembershipChange>> AddToLists(const governance::Actor& actor,
                                                   const std::vector<int64_t>& contact_ids,
                                                   const std::vector<Ref>& lists);
  Result<std::vector<MembershipChange>> RemoveFromLists(const governance::Actor& actor,
                                                        const std::vector<int64_t>& contact_ids,
                                                        const std::vector<Ref>& lists);
  // In-transaction forms (apply a form's configured tags/lists).
  Result<MembershipChange> ApplyMembershipsIn(store::Conn& conn, const governance::Actor& actor,
                                              int64_t contact_id, bool tags, bool add,
                                              const std::vector<Ref>& refs);

  // Permanent deletion. Deleting via a tool goes through the confirmation service
  // (action "delete_contacts"); REST deletes by email directly.
  Result<nlohmann::json> DeleteIn(store::Conn& conn, const governance::Actor& actor,
                                  const std::vector<int64_t>& ids);
  Result<nlohmann::json> DeleteByEmail(const governance::Actor& actor, std::string_view email);
  // The confirmation action "delete_contacts": args {"ids": [..]} (1..100).
  governance::ActionSpec DeleteAction();

 private:
  // The insert half of UpsertIn/Create: the contact, its event, memberships, audit.
  // kAlreadyExists when the email is taken (nothing written).
  // REQUIRES: `verdict` valid (RequireValid) and `in` checked (CheckInput).
  Result<UpsertResult> InsertNewIn(store::Conn& c, const governance::Actor& actor,
                                   const ContactInput& in, const EmailVerdict& verdict,
                                   const NewContactWay& way = {});
  // The update half of UpsertIn/Update: fields, status (state machine), memberships,
  // events, audit. `new_email` (normalised, validated) replaces the email when non-empty.
  Result<UpsertResult> UpdateExistingIn(store::Conn& c, const governance::Actor& actor,
                                        Contact before, const ContactInput& in,
                                        const std::string& new_email, const std::string& action);
  Result<std::vector<MembershipChange>> ApplyMemberships(const governance::Actor& actor,
                                                         const std::vector<int64_t>& ids,
                                                         const std::vector<Ref>& refs, bool tags,
                                                         bool add);
  // Field checks shared by every write.
  Status CheckInput(const ContactInput& in);
  // The suppression list's word before `k` is written holding k.email with k.status (a
  // creation, or an update that changes the address or makes it subscribed): kSuppressed
  // when that would make a suppressed address subscribed or send it a confirmation email
  // (*confirm_by_email, creations only; may be null). The person's own signup (in.signup)
  // of an address whose own entry applies is held instead: k.status becomes `held` and
  // *confirm_by_email tells whether the confirmation goes out. Answers the entry that
  // applies (nullopt: none).
  Result<std::optional<Suppression>> GateSubscribed(store::Conn& c, const ContactInput& in,
                                                    Contact& k, const std::string& held,
                                                    bool* confirm_by_email);
  // After `k` was written with a status that stands for a suppression reason (unsubscribed,
  // bounced, complained): its address is entered, with `why` as the source.
  Status SuppressForStatusIn(store::Conn& c, const governance::Actor& actor, const Contact& k,
                             const std::string& why);

  const ContactServiceOptions o_;
  friend class ContactServiceTestPeer;
};

}  // namespace crmd::crm

#pragma once
// SQL for contacts and their memberships, inside a caller's transaction. No rules here
// (those are in ContactService); only rows in, rows out, with bound parameters.
// Promises: InsertContact answers kAlreadyExists for a taken email; UpdateContact writes
// only at the expected revision. Stateless; any thread, with its own Conn.
// REQUIRES: lookups inside Database::Read or Write; every write inside Database::Write.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"
#include "src/crm/contacts.h"
#include "src/store/db.h"

namespace crmd::crm::contacts_repo {

Result<std::optional<Contact>> FindContact(store::Conn& c, int64_t id);
// The contact with its tags and lists (as LoadMemberships fills them) in one statement,
// for Database::ReadStatement: the contact row first, then tags, then lists, each by name.
Result<std::optional<Contact>> FindContactWithMemberships(store::Conn& c, int64_t id);
Result<std::optional<Contact>> FindContactByEmail(store::Conn& c, const std::string& email);
// Fills tags and lists (ordered by name).
Status LoadMemberships(store::Conn& c, Contact* contact);
// Inserts and answers the id; kAlreadyExists when the email is taken.
Result<int64_t> InsertContact(store::Conn& c, const Contact& contact);
// The highest contact id in the table (0 when empty).
Result<int64_t> MaxContactId(store::Conn& c);
// Writes every field of `contact` (its revision included) when the row still has
// `expected_revision`; false when it does not. `before`, the row at that revision, when
// the caller has it: if its status and type are the contact's, the UPDATE leaves those
// columns out, so that neither counters trigger fires (on SQLite a statement that fires a
// trigger copies every page it touches into a statement journal first).
Result<bool> UpdateContact(store::Conn& c, const Contact& contact, int64_t expected_revision,
                           const Contact* before = nullptr);
// Bumps revision and updated_at (membership changes); answers the new revision.
Result<int64_t> TouchContact(store::Conn& c, int64_t id, int64_t now);
Result<bool> DeleteContact(store::Conn& c, int64_t id);

// tags = true: contact_tags, else contact_lists. True when a row was added/removed.
Result<bool> AddMembership(store::Conn& c, bool tags, int64_t contact_id, int64_t group_id,
                           int64_t now);
Result<bool> RemoveMembership(store::Conn& c, bool tags, int64_t contact_id, int64_t group_id);

struct ResolvedFilter {
  const ContactFilter* filter;
  std::optional<int64_t> tag_id;
  std::optional<int64_t> list_id;
  // filter->query matches at least kCommonQueryMatches contacts (QueryIsCommon): test each
  // contact in id order instead of collecting every match. ListContacts sets it.
  bool query_is_common = false;
};
inline constexpr int64_t kCommonQueryMatches = 5000;
// Whether the name/email prefix `query` matches at least kCommonQueryMatches contacts.
Result<bool> QueryIsCommon(store::Conn& c, const std::string& query);
// Keyset page: ids > after_id, ascending, at most `limit` rows (compact contacts).
Result<std::vector<Contact>> ListContacts(store::Conn& c, const ResolvedFilter& f, int64_t after_id,
                                          int limit);
// The SQL and parameters ListContacts runs (for EXPLAIN QUERY PLAN tests). `columns`
// replaces its select list; unordered, without ORDER BY and LIMIT (`limit` unused): the
// rows in any order, which a query around it can read as they come.
std::pair<std::string, std::vector<store::Value>> ListContactsSql(const ResolvedFilter& f,
                                                                  int64_t after_id, int limit,
                                                                  std::string_view columns = {},
                                                                  bool ordered = true);

// The custom field keys of every contact `f` selects, read by the engine from the stored
// JSON (json_each, jsonb_object_keys) in one statement: an export's header, without
// decoding each contact here.
Result<std::set<std::string>> CustomFieldKeys(store::Conn& c, const ResolvedFilter& f);

// The tag and list names of the contacts with ids in [from_id, to_id] (an export's page),
// in no particular order: (contact id, is_list, name).
struct MembershipName {
  int64_t contact_id = 0;
  bool list = false;
  std::string name;
};
Result<std::vector<MembershipName>> MembershipNamesInRange(store::Conn& c, int64_t from_id,
                                                           int64_t to_id);

}  // namespace crmd::crm::contacts_repo

#include "src/crm/contacts_repo.h"

#include <algorithm>

#include "src/core/text.h"

namespace crmd::crm::contacts_repo {
namespace {

constexpr const char* kColumns =
    "c.id, c.email, c.first_name, c.last_name, c.phone, c.status, c.type, c.source, "
    "c.custom_fields, c.revision, c.created_at, c.updated_at";

// The kColumns of `r`, starting at column `at`; its texts are moved out of the row.
Contact FromRow(store::Row& r, size_t at = 0) {
  Contact c;
  c.id = r.Int(at + 0);
  c.email = r.TakeStr(at + 1);
  c.first_name = r.TakeStr(at + 2);
  c.last_name = r.TakeStr(at + 3);
  c.phone = r.TakeStr(at + 4);
  c.status = r.TakeStr(at + 5);
  c.type = r.TakeStr(at + 6);
  c.source = r.TakeStr(at + 7);
  // Most contacts have no custom fields: "{}" needs no parser (a parse of it was a tenth of
  // the contact read).
  std::string fields = r.TakeStr(at + 8);
  if (fields == "{}")
    c.custom_fields = nlohmann::json::object();
  else
    c.custom_fields = nlohmann::json::parse(fields, nullptr, false);
  if (!c.custom_fields.is_object()) c.custom_fields = nlohmann::json::object();
  c.revision = r.Int(at + 9);
  c.created_at = r.Int(at + 10);
  c.updated_at = r.Int(at + 11);
  return c;
}

Result<std::optional<Contact>> FindWhere(store::Conn& c, const std::string& where, store::Value v) {
  auto row = c.QueryOne(std::string("SELECT ") + kColumns + " FROM contacts c WHERE " + where,
                        {std::move(v)});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Contact>{};
  return std::optional<Contact>(FromRow(**row));
}

// Upper bound for a prefix range: every string starting with `p` sorts below it
// (U+10FFFF is the largest code point; valid UTF-8 for PostgreSQL too).
std::string PrefixEnd(const std::string& p) { return p + "\xF4\x8F\xBF\xBF"; }

// A contact's tags and lists, each in the byte order of its names (then ids), sorted here
// rather than by the statement: SQLite's ORDER BY ran a sorter over every row (about a
// tenth of get_contact's SQLite work), and the order is the same on both engines whatever
// PostgreSQL's collation.
void SortMemberships(Contact& contact) {
  auto by_name = [](const NamedRef& a, const NamedRef& b) {
    return a.name != b.name ? a.name < b.name : a.id < b.id;
  };
  std::sort(contact.tags.begin(), contact.tags.end(), by_name);
  std::sort(contact.lists.begin(), contact.lists.end(), by_name);
}

}  // namespace

Result<std::optional<Contact>> FindContact(store::Conn& c, int64_t id) {
  return FindWhere(c, "c.id = ?", id);
}

Result<std::optional<Contact>> FindContactWithMemberships(store::Conn& c, int64_t id) {
  // Kind 0: the contact (kColumns); 1: a tag; 2: a list, as (kind, id, name) with the
  // contact's other columns null, in no particular order. Every branch names the same
  // contact id.
  static const std::string kSql = [] {
    std::string nulls;
    for (int i = 0; i < 10; ++i) nulls += ", NULL";
    return std::string("SELECT 0, ") + kColumns + " FROM contacts c WHERE c.id = ? " +
           "UNION ALL SELECT 1, t.id, t.name" + nulls +
           " FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = ? " +
           "UNION ALL SELECT 2, l.id, l.name" + nulls +
           " FROM contact_lists cl JOIN lists l ON l.id = cl.list_id WHERE cl.contact_id = ?"
           " AND cl.state = 'subscribed'";
  }();
  auto rows = c.Query(kSql, {id, id, id});
  if (!rows) return Fail(rows.error());
  auto head = std::find_if(rows->begin(), rows->end(), [](const auto& r) { return r.Int(0) == 0; });
  if (head == rows->end()) return std::optional<Contact>{};
  Contact contact = FromRow(*head, 1);
  for (const auto& r : *rows) {
    if (r.Int(0) == 0) continue;
    (r.Int(0) == 1 ? contact.tags : contact.lists).push_back({r.Int(1), r.Str(2)});
  }
  SortMemberships(contact);
  return std::optional<Contact>(std::move(contact));
}

Result<std::optional<Contact>> FindContactByEmail(store::Conn& c, const std::string& email) {
  return FindWhere(c, "c.email = ?", email);
}

Status LoadMemberships(store::Conn& c, Contact* contact) {
  // Tags (kind 0) and lists (kind 1) in one statement: each statement is a round trip on
  // PostgreSQL and a third of get_contact's SQLite work.
  auto rows = c.Query(
      "SELECT 0, t.id, t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id "
      "WHERE ct.contact_id = ? "
      "UNION ALL "
      "SELECT 1, l.id, l.name FROM contact_lists cl JOIN lists l ON l.id = cl.list_id "
      "WHERE cl.contact_id = ? AND cl.state = 'subscribed'",
      {contact->id, contact->id});
  if (!rows) return Fail(rows.error());
  contact->tags.clear();
  contact->lists.clear();
  for (const auto& r : *rows)
    (r.Int(0) == 0 ? contact->tags : contact->lists).push_back({r.Int(1), r.Str(2)});
  SortMemberships(*contact);
  return Ok();
}

Result<int64_t> MaxContactId(store::Conn& c) {
  auto row = c.QueryOne("SELECT COALESCE(MAX(id), 0) FROM contacts");
  if (!row) return Fail(row.error());
  return *row ? (*row)->Int(0) : 0;
}

// Whether the engine writes a new contact's counters itself: PostgreSQL's trigger does
// (migration 0053); on SQLite the insert adds to them (migration 0059: a trigger costs the
// insert a statement journal of every page it touches).
static bool TriggersCountContacts(const store::Conn& c) {
  return c.dialect() == store::Dialect::kPostgres;
}

Result<int64_t> InsertContact(store::Conn& c, const Contact& k) {
  // A taken email inserts nothing instead of failing the statement, so the transaction
  // stays usable on PostgreSQL too (the caller may look the other contact up).
  static const store::NewIdInsert insert(
      "contacts",
      "INSERT INTO contacts (id, email, first_name, last_name, phone, status, type, source, "
      "custom_fields, revision, created_at, updated_at) VALUES (",
      ", ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (email) DO NOTHING");
  auto id = insert.Run(c, {k.email, k.first_name, k.last_name, k.phone, k.status, k.type, k.source,
                           k.custom_fields.dump(), k.revision, k.created_at, k.updated_at});
  if (!id) return Fail(id.error());
  if (!*id)
    return Fail(Errc::kAlreadyExists, "a contact with email " + k.email + " already exists");
  if (TriggersCountContacts(c)) return **id;
  // The rows the trigger of 0053 wrote, in the same transaction, gathered by the
  // connection: the group commit's batch writes each row once for all its creates
  // (Conn::AddTo).
  static const std::string totals =
      "INSERT INTO contact_totals (dim, val, n) VALUES (?, ?, ?) "
      "ON CONFLICT (dim, val) DO UPDATE SET n = contact_totals.n + excluded.n";
  static const std::string daily =
      "INSERT INTO contact_daily (day, status, source, n) VALUES (?, ?, ?, ?) "
      "ON CONFLICT (day, status, source) DO UPDATE SET n = contact_daily.n + excluded.n";
  for (auto [sql, key] :
       {std::pair{&totals, std::vector<store::Value>{std::string("status"), k.status}},
        std::pair{&totals, std::vector<store::Value>{std::string("type"), k.type}},
        std::pair{&daily, std::vector<store::Value>{k.created_at / 86400, k.status, k.source}}})
    if (auto st = c.AddTo(*sql, std::move(key), 1); !st) return Fail(st.error());
  return **id;
}

Result<bool> UpdateContact(store::Conn& c, const Contact& k, int64_t expected_revision,
                           const Contact* before) {
  // At `expected_revision` the row is `before` (every change of a contact bumps its
  // revision), so with the same status and type those columns need no writing, and the
  // triggers "AFTER UPDATE OF status, type, ..." do not fire.
  if (before && before->status == k.status && before->type == k.type) {
    auto n = c.Exec(
        "UPDATE contacts SET email = ?, first_name = ?, last_name = ?, phone = ?, "
        "custom_fields = ?, revision = ?, updated_at = ? WHERE id = ? AND revision = ?",
        {k.email, k.first_name, k.last_name, k.phone, k.custom_fields.dump(), k.revision,
         k.updated_at, k.id, expected_revision});
    if (!n) return Fail(n.error());
    return *n == 1;
  }
  // The update's trigger moves the counters from the old row's status, type and source;
  // the connection writes this transaction's gathered adds first (Conn::AddTo).
  auto n = c.Exec(
      "UPDATE contacts SET email = ?, first_name = ?, last_name = ?, phone = ?, status = ?, "
      "type = ?, custom_fields = ?, revision = ?, updated_at = ? WHERE id = ? AND revision = ?",
      {k.email, k.first_name, k.last_name, k.phone, k.status, k.type, k.custom_fields.dump(),
       k.revision, k.updated_at, k.id, expected_revision});
  if (!n) return Fail(n.error());
  return *n == 1;
}

Result<int64_t> TouchContact(store::Conn& c, int64_t id, int64_t now) {
  auto row = c.QueryOne(
      "UPDATE contacts SET revision = revision + 1, updated_at = ? WHERE id = ? RETURNING revision",
      {now, id});
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::NotFound("contact " + std::to_string(id) + " not found"));
  return (*row)->Int(0);
}

Result<bool> DeleteContact(store::Conn& c, int64_t id) {
  auto n = c.Exec("DELETE FROM contacts WHERE id = ?", {id});
  if (!n) return Fail(n.error());
  return *n == 1;
}

Result<bool> AddMembership(store::Conn& c, bool tags, int64_t contact_id, int64_t group_id,
                           int64_t now) {
  auto n =
      c.Exec(tags ? "INSERT INTO contact_tags (contact_id, tag_id, created_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (contact_id, tag_id) DO NOTHING"
                  : "INSERT INTO contact_lists (contact_id, list_id, created_at) VALUES (?, ?, ?) "
                    "ON CONFLICT (contact_id, list_id) DO NOTHING",
             {contact_id, group_id, now});
  if (!n) return Fail(n.error());
  return *n == 1;
}

Result<bool> RemoveMembership(store::Conn& c, bool tags, int64_t contact_id, int64_t group_id) {
  auto n = c.Exec(tags ? "DELETE FROM contact_tags WHERE contact_id = ? AND tag_id = ?"
                       : "DELETE FROM contact_lists WHERE contact_id = ? AND list_id = ? "
                         "AND state = 'subscribed'",
                  {contact_id, group_id});
  if (!n) return Fail(n.error());
  return *n == 1;
}

std::pair<std::string, std::vector<store::Value>> ListContactsSql(const ResolvedFilter& rf,
                                                                  int64_t after_id, int limit,
                                                                  std::string_view columns,
                                                                  bool ordered) {
  const ContactFilter& f = *rf.filter;
  std::string sql =
      "SELECT " + std::string(columns.empty() ? kColumns : columns) + " FROM contacts c";
  std::vector<store::Value> params;
  // A membership filter drives the scan: its (group, contact) index is walked in contact
  // order, so ORDER BY that column LIMIT n stops after n rows. Ordering by c.id instead
  // made SQLite join every member and sort them (100 ms for a tag of 1M contacts).
  std::string key = "c.id";
  if (rf.tag_id) {
    sql += " JOIN contact_tags ft ON ft.contact_id = c.id AND ft.tag_id = ?";
    params.push_back(*rf.tag_id);
    key = "ft.contact_id";
  }
  if (rf.list_id) {
    sql +=
        " JOIN contact_lists fl ON fl.contact_id = c.id AND fl.list_id = ?"
        " AND fl.state = 'subscribed'";
    params.push_back(*rf.list_id);
    if (!rf.tag_id) key = "fl.contact_id";
  }
  // With a date range, "+c.id" keeps the planner off the rowid range
  // (which would walk the whole table) and on the name/email/created_at indexes; the
  // few matching rows are then sorted by id.
  bool selective_index = f.created_from || f.created_to;
  std::string where =
      " WHERE " + std::string(selective_index && key == "c.id" ? "+" : "") + key + " > ?";
  params.push_back(after_id);
  if (f.status) {
    where += " AND c.status = ?";
    params.push_back(*f.status);
  }
  if (f.type) {
    where += " AND c.type = ?";
    params.push_back(*f.type);
  }
  if (f.source) {
    where += " AND c.source = ?";
    params.push_back(*f.source);
  }
  if (f.created_from) {
    where += " AND c.created_at >= ?";
    params.push_back(*f.created_from);
  }
  if (f.created_to) {
    where += " AND c.created_at < ?";
    params.push_back(*f.created_to);
  }
  if (f.query) {
    std::string q = text::AsciiLower(*f.query);
    if (rf.query_is_common) {
      // Many contacts match: walking contacts in id order and testing each finds a page
      // after a few hundred rows, where collecting every match first would not.
      where +=
          " AND ((c.email >= ? AND c.email < ?) "
          "OR (lower(c.first_name) >= ? AND lower(c.first_name) < ?) "
          "OR (lower(c.last_name) >= ? AND lower(c.last_name) < ?))";
    } else {
      // Few match: one indexed range per column, unioned (an OR would let the planner
      // scan), then sorted by id.
      where +=
          " AND c.id IN (SELECT id FROM contacts WHERE email >= ? AND email < ? "
          "UNION SELECT id FROM contacts WHERE lower(first_name) >= ? AND lower(first_name) < ? "
          "UNION SELECT id FROM contacts WHERE lower(last_name) >= ? AND lower(last_name) < ?)";
    }
    for (int i = 0; i < 3; ++i) {
      params.push_back(q);
      params.push_back(PrefixEnd(q));
    }
  }
  sql += where;
  if (!ordered) return {sql, params};
  sql += " ORDER BY " + key + " LIMIT ?";
  params.push_back(static_cast<int64_t>(limit));
  return {sql, params};
}

Result<bool> QueryIsCommon(store::Conn& c, const std::string& query) {
  // Counts matches up to kCommonQueryMatches through the same index ranges, email first:
  // its index covers the count, while SQLite (3.40) reads the table row for each entry of
  // an index on lower(name). Stops as soon as the cap is reached.
  std::string q = text::AsciiLower(query);
  std::string end = PrefixEnd(q);
  int64_t seen = 0;
  for (const char* column : {"email", "lower(first_name)", "lower(last_name)"}) {
    auto row = c.QueryOne(std::string("SELECT COUNT(*) FROM (SELECT 1 FROM contacts WHERE ") +
                              column + " >= ? AND " + column + " < ? LIMIT ?) m",
                          {q, end, kCommonQueryMatches - seen});
    if (!row) return Fail(row.error());
    seen += (*row)->Int(0);
    if (seen >= kCommonQueryMatches) return true;
  }
  return false;
}

Result<std::vector<Contact>> ListContacts(store::Conn& c, const ResolvedFilter& f, int64_t after_id,
                                          int limit) {
  ResolvedFilter rf = f;
  if (f.filter->query) {
    auto common = QueryIsCommon(c, *f.filter->query);
    if (!common) return Fail(common.error());
    rf.query_is_common = *common;
  }
  auto [sql, params] = ListContactsSql(rf, after_id, limit);
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::vector<Contact> out;
  out.reserve(rows->size());
  for (auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<std::set<std::string>> CustomFieldKeys(store::Conn& c, const ResolvedFilter& f) {
  ResolvedFilter rf = f;
  if (f.filter->query) {
    auto common = QueryIsCommon(c, *f.filter->query);
    if (!common) return Fail(common.error());
    rf.query_is_common = *common;
  }
  // Unordered and unlimited, the subquery is read as it comes (SQLite flattens it into the
  // join); ordered and limited it was materialised whole first (140 MiB at 1,000,000).
  auto [inner, params] = ListContactsSql(rf, 0, 0, "c.custom_fields AS custom_fields", false);
  const bool pg = c.dialect() == store::Dialect::kPostgres;
  std::string sql = pg ? "SELECT DISTINCT k FROM (" + inner +
                             ") s, jsonb_object_keys(s.custom_fields::jsonb) k "
                             "WHERE s.custom_fields <> '{}'"
                       : "SELECT DISTINCT j.key FROM (" + inner +
                             ") s, json_each(s.custom_fields) j "
                             "WHERE s.custom_fields <> '{}'";
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  std::set<std::string> out;
  for (const auto& r : *rows) out.insert(r.Str(0));
  return out;
}

Result<std::vector<MembershipName>> MembershipNamesInRange(store::Conn& c, int64_t from_id,
                                                           int64_t to_id) {
  // Both memberships' primary keys start with contact_id: two range scans.
  auto rows = c.Query(
      "SELECT ct.contact_id, 0, t.name FROM contact_tags ct JOIN tags t ON t.id = ct.tag_id "
      "WHERE ct.contact_id >= ? AND ct.contact_id <= ? "
      "UNION ALL "
      "SELECT cl.contact_id, 1, l.name FROM contact_lists cl JOIN lists l ON l.id = cl.list_id "
      "WHERE cl.contact_id >= ? AND cl.contact_id <= ?",
      {from_id, to_id, from_id, to_id});
  if (!rows) return Fail(rows.error());
  std::vector<MembershipName> out;
  out.reserve(rows->size());
  for (auto& r : *rows) out.push_back({r.Int(0), r.Int(1) == 1, r.TakeStr(2)});
  return out;
}

}  // namespace crmd::crm::contacts_repo

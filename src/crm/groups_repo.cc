#include "src/crm/groups_repo.h"

#include <string_view>

namespace crmd::crm::groups_repo {
namespace {

// Table names come from the kind, never from input.
struct Tables {
  const char* groups;      // lists | tags
  const char* members;     // contact_lists | contact_tags
  const char* member_key;  // list_id | tag_id
  const char* is_public;   // lists' public column; tags have none
};
const Tables& T(GroupKind k) {
  static const Tables kList{"lists", "contact_lists", "list_id", "public"};
  static const Tables kTag{"tags", "contact_tags", "tag_id", "0"};
  return k == GroupKind::kList ? kList : kTag;
}

std::string Sql(GroupKind k, std::string_view pattern) {
  // Substitutes {g} {m} {k} {p} with this kind's table/column names.
  std::string out;
  const Tables& t = T(k);
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '{' && i + 2 < pattern.size() && pattern[i + 2] == '}') {
      char c = pattern[i + 1];
      out += c == 'g' ? t.groups : c == 'm' ? t.members : c == 'p' ? t.is_public : t.member_key;
      i += 2;
    } else {
      out.push_back(pattern[i]);
    }
  }
  return out;
}

// The kind column of group_member_counts (members per status, kept by triggers, migration
// 0053): member_count reads those few rows instead of counting memberships.
std::string KindName(GroupKind k) { return k == GroupKind::kList ? "list" : "tag"; }

Group FromRow(const store::Row& r) {
  return Group{.id = r.Int(0),
               .name = r.Str(1),
               .description = r.Str(2),
               .revision = r.Int(3),
               .created_at = r.Int(4),
               .updated_at = r.Int(5)};
}

Result<std::optional<NamedRef>> OneRef(Result<std::optional<store::Row>> row) {
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<NamedRef>{};
  return std::optional<NamedRef>(NamedRef{(*row)->Int(0), (*row)->Str(1)});
}

}  // namespace

Result<std::optional<NamedRef>> FindRefById(store::Conn& c, GroupKind kind, int64_t id) {
  return OneRef(c.QueryOne(Sql(kind, "SELECT id, name FROM {g} WHERE id = ?"), {id}));
}

Result<std::optional<NamedRef>> FindRefByName(store::Conn& c, GroupKind kind,
                                              const std::string& name) {
  return OneRef(c.QueryOne(Sql(kind, "SELECT id, name FROM {g} WHERE name = ?"), {name}));
}

Result<std::optional<Group>> Find(store::Conn& c, GroupKind kind, int64_t id) {
  auto row = c.QueryOne(
      Sql(kind,
          "SELECT id, name, description, revision, created_at, updated_at, "
          "(SELECT COALESCE(SUM(n), 0) FROM group_member_counts WHERE kind = ? AND group_id = ?), "
          "{p} FROM {g} WHERE id = ?"),
      {KindName(kind), id, id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<Group>{};
  Group g = FromRow(**row);
  g.member_count = (*row)->Int(6);
  if (kind == GroupKind::kList) g.is_public = (*row)->Int(7) != 0;
  return std::optional<Group>(std::move(g));
}

Result<std::vector<Group>> ListByName(store::Conn& c, GroupKind kind, const std::string& after,
                                      const std::string& prefix, int64_t limit) {
  // Keyset on the unique name index; the prefix is a range on the same index.
  auto rows =
      c.Query(Sql(kind,
                  "SELECT g.id, g.name, g.description, g.revision, g.created_at, g.updated_at, "
                  "(SELECT COALESCE(SUM(m.n), 0) FROM group_member_counts m WHERE m.kind = ? "
                  "AND m.group_id = g.id), {p} FROM {g} g "
                  "WHERE g.name > ? AND g.name >= ? AND g.name < ? ORDER BY g.name LIMIT ?"),
              {KindName(kind), after, prefix, prefix + "\xF4\x8F\xBF\xBF", limit});
  if (!rows) return Fail(rows.error());
  std::vector<Group> out;
  for (const auto& r : *rows) {
    Group g = FromRow(r);
    g.member_count = r.Int(6);
    if (kind == GroupKind::kList) g.is_public = r.Int(7) != 0;
    out.push_back(std::move(g));
  }
  return out;
}

Result<int64_t> Insert(store::Conn& c, GroupKind kind, const std::string& name,
                       const std::string& description, int64_t now) {
  return c.InsertReturningId(
      Sql(kind,
          "INSERT INTO {g} (id, name, description, revision, created_at, updated_at) VALUES (" +
              store::NextIdSql(Sql(kind, "{g}")) + ", ?, ?, 1, ?, ?) RETURNING id"),
      {name, description, now, now});
}

Result<bool> Update(store::Conn& c, GroupKind kind, int64_t id, const std::string& name,
                    const std::string& description, int64_t now, int64_t expected_revision) {
  auto n = c.Exec(Sql(kind,
                      "UPDATE {g} SET name = ?, description = ?, revision = revision + 1, "
                      "updated_at = ? WHERE id = ? AND revision = ?"),
                  {name, description, now, id, expected_revision});
  if (!n) return Fail(n.error());
  return *n == 1;
}

Status SetListPublic(store::Conn& c, int64_t id, bool is_public) {
  auto n = c.Exec("UPDATE lists SET public = ? WHERE id = ?", {int64_t{is_public ? 1 : 0}, id});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<int64_t> DeleteMemberships(store::Conn& c, GroupKind kind, int64_t id) {
  return c.Exec(Sql(kind, "DELETE FROM {m} WHERE {k} = ?"), {id});
}

Status Delete(store::Conn& c, GroupKind kind, int64_t id) {
  auto d = c.Exec(Sql(kind, "DELETE FROM {g} WHERE id = ?"), {id});
  if (!d) return Fail(d.error());
  return Ok();
}

}  // namespace crmd::crm::groups_repo

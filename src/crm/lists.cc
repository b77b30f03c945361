#include "src/crm/lists.h"

#include "src/core/crypto.h"
#include "src/crm/groups_repo.h"
#include "src/governance/audit.h"
#include "src/governance/idempotency.h"

namespace crmd::crm {

using nlohmann::json;

namespace {

const char* Noun(GroupKind k) { return k == GroupKind::kList ? "list" : "tag"; }

Status CheckName(const std::string& name, const char* noun) {
  if (name.empty() || name.size() > kMaxGroupNameLength)
    return Fail(Errc::kInvalidArgument, std::string(noun) + " name must be 1 to 100 characters");
  return Ok();
}

Status CheckDescription(const std::string& d) {
  if (d.size() > kMaxDescriptionLength)
    return Fail(Errc::kInvalidArgument, "description is too long (at most 1000 characters)");
  return Ok();
}

Status CheckPublic(GroupKind k, const std::optional<bool>& is_public) {
  if (is_public && k != GroupKind::kList)
    return Fail(Errc::kInvalidArgument, "public applies to lists only");
  return Ok();
}

std::string EncodeNameCursor(const std::string& name) {
  return crypto::Base64UrlEncode("n:" + name);
}

Result<std::string> DecodeNameCursor(const std::string& cursor) {
  if (cursor.empty()) return std::string();
  auto raw = crypto::Base64UrlDecode(cursor);
  if (!raw || raw->rfind("n:", 0) != 0)
    return Fail(Errc::kInvalidArgument, "cursor is not valid; pass next_cursor unchanged");
  return raw->substr(2);
}

}  // namespace

json ToJson(const Usage& u) {
  return {{"kind", u.kind},     {"id", u.id},     {"name", u.name},
          {"status", u.status}, {"role", u.role}, {"blocking", u.blocking}};
}

json ToJson(const Group& g) {
  json j = {{"id", g.id},
            {"name", g.name},
            {"description", g.description},
            {"member_count", g.member_count},
            {"revision", g.revision},
            {"created_at", FormatRfc3339(g.created_at)},
            {"updated_at", FormatRfc3339(g.updated_at)}};
  if (g.is_public) j["public"] = *g.is_public;
  if (g.usage) {
    j["used_by"] = json::array();
    for (const auto& u : *g.usage) j["used_by"].push_back(ToJson(u));
  }
  return j;
}

Result<NamedRef> ResolveGroupIn(store::Conn& c, GroupKind kind, const Ref& ref, bool create_missing,
                                int64_t now) {
  const char* noun = Noun(kind);
  if (auto id = std::get_if<int64_t>(&ref)) {
    auto row = groups_repo::FindRefById(c, kind, *id);
    if (!row) return Fail(row.error());
    if (!*row)
      return Fail(Error::NotFound(std::string(noun) + " " + std::to_string(*id) + " not found"));
    return **row;
  }
  const std::string& name = std::get<std::string>(ref);
  auto row = groups_repo::FindRefByName(c, kind, name);
  if (!row) return Fail(row.error());
  if (*row) return **row;
  if (!create_missing)
    return Fail(Error::NotFound(std::string(noun) + " \"" + name + "\" not found"));
  if (auto st = CheckName(name, noun); !st) return Fail(st.error());
  auto id = groups_repo::Insert(c, kind, name, "", now);
  if (!id) return Fail(id.error());
  return NamedRef{*id, name};
}

GroupService::GroupService(GroupServiceOptions options) : o_(options) {}

const char* GroupService::noun() const { return Noun(o_.kind); }

Result<GroupPage> GroupService::List(const std::string& query, const std::string& cursor,
                                     int limit) {
  if (limit <= 0) limit = 25;
  if (limit > 100) limit = 100;
  auto after = DecodeNameCursor(cursor);
  if (!after) return Fail(after.error());
  return o_.db->Read([&](store::Conn& c) -> Result<GroupPage> {
    // Keyset on the unique name index; the prefix is a range on the same index.
    auto rows = groups_repo::ListByName(c, o_.kind, *after, query, static_cast<int64_t>(limit + 1));
    if (!rows) return Fail(rows.error());
    GroupPage page;
    page.items = std::move(*rows);
    if (page.items.size() > static_cast<size_t>(limit)) {
      page.items.resize(limit);
      page.next_cursor = EncodeNameCursor(page.items.back().name);
    }
    return page;
  });
}

Result<Group> GroupService::GetIn(store::Conn& c, const Ref& ref, bool with_usage) {
  auto r = ResolveGroupIn(c, o_.kind, ref, false, 0);
  if (!r) return Fail(r.error());
  auto row = groups_repo::Find(c, o_.kind, r->id);
  if (!row) return Fail(row.error());
  if (!*row) return Fail(Error::NotFound(std::string(noun()) + " not found"));
  Group g = std::move(**row);
  if (with_usage) {
    g.usage = std::vector<Usage>{};
    if (o_.usage) {
      auto u =
          o_.kind == GroupKind::kList ? o_.usage->ListUsage(c, g.id) : o_.usage->TagUsage(c, g.id);
      if (!u) return Fail(u.error());
      g.usage = std::move(*u);
    }
  }
  return g;
}

Result<Group> GroupService::Get(const Ref& ref) {
  return o_.db->Read([&](store::Conn& c) { return GetIn(c, ref, true); });
}

Result<Group> GroupService::Create(const governance::Actor& actor, const std::string& name,
                                   const std::string& description,
                                   const std::string& idempotency_key,
                                   std::optional<bool> is_public) {
  if (auto st = CheckName(name, noun()); !st) return Fail(st.error());
  if (auto st = CheckPublic(o_.kind, is_public); !st) return Fail(st.error());
  if (auto st = CheckDescription(description); !st) return Fail(st.error());
  std::string scope = governance::IdempotencyScope(actor, std::string("create_") + noun());
  return o_.db->Write([&](store::Conn& c) -> Result<Group> {
    auto insert = [&]() -> Result<nlohmann::json> {
      int64_t now = o_.clock->NowUnix();
      auto id = groups_repo::Insert(c, o_.kind, name, description, now);
      if (!id) {
        if (id.error().code == Errc::kAlreadyExists)
          return Fail(Errc::kAlreadyExists,
                      std::string("a ") + noun() + " named \"" + name + "\" already exists");
        return Fail(id.error());
      }
      if (is_public && *is_public)
        if (auto st = groups_repo::SetListPublic(c, *id, true); !st) return Fail(st.error());
      if (auto st = o_.audit->Record(c, actor,
                                     {.action = std::string("create_") + noun(),
                                      .target_type = noun(),
                                      .target_ids = {*id},
                                      .revision_after = 1});
          !st)
        return Fail(st.error());
      return nlohmann::json{{"id", *id}};
    };
    auto answer = o_.idempotency->Once(c, scope, idempotency_key, insert);
    if (!answer) return Fail(answer.error());
    return GetIn(c, Ref{answer->value("id", int64_t{0})}, false);
  });
}

Result<Group> GroupService::Update(const governance::Actor& actor, int64_t id,
                                   int64_t expected_revision,
                                   const std::optional<std::string>& name,
                                   const std::optional<std::string>& description,
                                   std::optional<bool> is_public) {
  if (auto st = CheckPublic(o_.kind, is_public); !st) return Fail(st.error());
  if (name)
    if (auto st = CheckName(*name, noun()); !st) return Fail(st.error());
  if (description)
    if (auto st = CheckDescription(*description); !st) return Fail(st.error());
  return o_.db->Write([&](store::Conn& c) -> Result<Group> {
    auto cur = GetIn(c, Ref{id}, false);
    if (!cur) return Fail(cur.error());
    if (cur->revision != expected_revision)
      return Fail(Errc::kRevisionConflict, std::string(noun()) + " " + std::to_string(id) +
                                               " is at revision " + std::to_string(cur->revision) +
                                               ", not " + std::to_string(expected_revision) +
                                               "; read it again");
    std::string new_name = name.value_or(cur->name);
    std::string new_desc = description.value_or(cur->description);
    bool public_changes = is_public && is_public != cur->is_public;
    if (new_name == cur->name && new_desc == cur->description && !public_changes) return cur;
    auto n =
        groups_repo::Update(c, o_.kind, id, new_name, new_desc, o_.clock->NowUnix(), cur->revision);
    if (!n) {
      if (n.error().code == Errc::kAlreadyExists)
        return Fail(Errc::kAlreadyExists,
                    std::string("a ") + noun() + " named \"" + new_name + "\" already exists");
      return Fail(n.error());
    }
    if (!*n) return Fail(Errc::kRevisionConflict, "changed meanwhile; read it again");
    if (public_changes)
      if (auto st = groups_repo::SetListPublic(c, id, *is_public); !st) return Fail(st.error());
    if (auto st = o_.audit->Record(c, actor,
                                   {.action = std::string("update_") + noun(),
                                    .target_type = noun(),
                                    .target_ids = {id},
                                    .revision_before = cur->revision,
                                    .revision_after = cur->revision + 1});
        !st)
      return Fail(st.error());
    return GetIn(c, Ref{id}, false);
  });
}

governance::ActionSpec GroupService::DeleteAction() {
  std::string action = std::string("delete_") + noun();
  std::string scope = o_.kind == GroupKind::kList ? "lists:delete" : "tags:delete";
  return governance::ActionSpec{
      .name = action,
      .scope = scope,
      .preview = [this, action](store::Conn& c, const json& args) -> Result<governance::Preview> {
        if (!args.is_object() || !args.contains("id") || !args["id"].is_number_integer())
          return Fail(Errc::kInvalidArgument, "id must be an integer");
        auto g = GetIn(c, Ref{args["id"].get<int64_t>()}, true);
        if (!g) return Fail(g.error());
        governance::Preview p;
        p.revisions[std::string(noun()) + ":" + std::to_string(g->id)] = g->revision;
        for (const auto& u : *g->usage) {
          if (!u.blocking) continue;
          p.blockers.push_back(
              {.kind = u.kind,
               .id = u.id,
               .name = u.name,
               .reason = u.status + " " + u.kind + " uses this " + noun() + " as " + u.role});
        }
        p.preview = {{"action", action},
                     {noun(), ToJson(*g)},
                     {"effect", std::string("permanently deletes the ") + noun() +
                                    " and removes it from its " + std::to_string(g->member_count) +
                                    " contacts (the contacts themselves stay)"}};
        return p;
      },
      .execute = [this, action](store::Conn& c, const json& args,
                                const governance::Actor& actor) -> Result<json> {
        int64_t id = args["id"].get<int64_t>();
        auto g = GetIn(c, Ref{id}, false);
        if (!g) return Fail(g.error());
        // Memberships go with it (ON DELETE CASCADE); no per-contact events (docs/crm.md).
        auto n = groups_repo::DeleteMemberships(c, o_.kind, id);
        if (!n) return Fail(n.error());
        if (auto d = groups_repo::Delete(c, o_.kind, id); !d) return Fail(d.error());
        if (auto st =
                o_.audit->Record(c, actor,
                                 {.action = action,
                                  .target_type = noun(),
                                  .target_ids = {id},
                                  .revision_before = g->revision,
                                  .details = {{"name", g->name}, {"memberships_removed", *n}}});
            !st)
          return Fail(st.error());
        return json{{"deleted", {{"id", id}, {"name", g->name}}}, {"memberships_removed", *n}};
      },
  };
}

}  // namespace crmd::crm

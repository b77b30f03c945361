#include "src/crm/list_preferences.h"

#include <algorithm>

#include "src/crm/contacts_repo.h"
#include "src/crm/events.h"
#include "src/crm/optin_emails_repo.h"

namespace crmd::crm {

using nlohmann::json;

namespace {

constexpr const char* kPublicMembershipsSql =
    "SELECT l.id, l.name, l.description, cl.state FROM contact_lists cl "
    "JOIN lists l ON l.id = cl.list_id WHERE cl.contact_id = ? AND l.public = 1 "
    "ORDER BY l.name";

Result<Contact> RequireContact(store::Conn& c, int64_t id) {
  auto k = contacts_repo::FindContact(c, id);
  if (!k) return Fail(k.error());
  if (!*k) return Fail(Error::NotFound("contact " + std::to_string(id) + " not found"));
  return std::move(**k);
}

Result<std::vector<ListPreference>> PublicMemberships(store::Conn& c, int64_t contact_id) {
  auto rows = c.Query(kPublicMembershipsSql, {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<ListPreference> out;
  for (const auto& r : *rows)
    out.push_back({.list_id = r.Int(0),
                   .name = r.Str(1),
                   .description = r.Str(2),
                   .subscribed = r.Str(3) == "subscribed"});
  return out;
}

}  // namespace

Result<std::vector<ListPreference>> ListPreferences::Get(int64_t contact_id) {
  return o_.db->Read([&](store::Conn& c) -> Result<std::vector<ListPreference>> {
    if (auto k = RequireContact(c, contact_id); !k) return Fail(k.error());
    return PublicMemberships(c, contact_id);
  });
}

Result<bool> ListPreferences::MoveIn(store::Conn& c, const Contact& k, const NamedRef& list,
                                     const char* to, const char* from) {
  std::string sql =
      "UPDATE contact_lists SET state = ?, updated_at = ? WHERE contact_id = ? AND list_id = ? ";
  std::vector<store::Value> params{std::string(to), o_.clock->NowUnix(), k.id, list.id};
  if (from) {
    sql += "AND state = ?";
    params.emplace_back(std::string(from));
  } else {
    sql += "AND state <> ?";
    params.emplace_back(std::string(to));
  }
  auto n = c.Exec(sql, params);
  if (!n) return Fail(n.error());
  if (*n != 1) return false;
  json data = ContactEventData(k);
  data["list"] = {{"id", list.id}, {"name", list.name}};
  bool joined = std::string_view(to) == "subscribed";
  if (auto e = o_.outbox->Append(c, joined ? events::kListAdded : events::kListRemoved, k.id, data);
      !e)
    return Fail(e.error());
  return true;
}

Result<std::vector<NamedRef>> ListPreferences::Set(
    const governance::Actor& actor, int64_t contact_id,
    const std::vector<ListPreferenceChoice>& choices) {
  return o_.db->Write([&](store::Conn& c) -> Result<std::vector<NamedRef>> {
    auto k = RequireContact(c, contact_id);
    if (!k) return Fail(k.error());
    auto page = PublicMemberships(c, contact_id);
    if (!page) return Fail(page.error());
    std::vector<NamedRef> changed;
    json left = json::array(), joined = json::array();
    for (const ListPreference& p : *page) {
      auto choice = std::find_if(choices.begin(), choices.end(),
                                 [&](const auto& x) { return x.list_id == p.list_id; });
      if (choice == choices.end() || choice->subscribed == p.subscribed) continue;
      NamedRef list{p.list_id, p.name};
      auto moved = choice->subscribed ? MoveIn(c, *k, list, "subscribed", nullptr)
                                      : MoveIn(c, *k, list, "unsubscribed", "subscribed");
      if (!moved) return Fail(moved.error());
      if (!*moved) continue;
      changed.push_back(list);
      (choice->subscribed ? joined : left).push_back(p.list_id);
    }
    if (changed.empty()) return changed;
    auto rev = contacts_repo::TouchContact(c, contact_id, o_.clock->NowUnix());
    if (!rev) return Fail(rev.error());
    if (auto a = o_.audit->Record(c, actor,
                                  {.action = "set_list_preferences",
                                   .target_type = "contact",
                                   .target_ids = {contact_id},
                                   .revision_before = k->revision,
                                   .revision_after = *rev,
                                   .details = {{"left", left}, {"joined", joined}}});
        !a)
      return Fail(a.error());
    return changed;
  });
}

Result<bool> ListPreferences::RejoinByFormIn(store::Conn& c, int64_t contact_id,
                                             const std::vector<int64_t>& list_ids) {
  if (!o_.settings || list_ids.empty()) return false;
  auto s = o_.settings->SharedIn(c);
  if (!s) return Fail(s.error());
  if (!(*s)->document.value("double_opt_in", false)) return false;
  int64_t now = o_.clock->NowUnix();
  bool any = false;
  for (int64_t id : list_ids) {
    // A list it left, or one it is not on: either waits for the confirmation. A list it
    // is on (or already waits for) stays as it is.
    auto n = c.Exec(
        "INSERT INTO contact_lists (contact_id, list_id, created_at, state, updated_at) "
        "VALUES (?, ?, ?, 'pending', ?) ON CONFLICT (contact_id, list_id) DO UPDATE "
        "SET state = 'pending', updated_at = excluded.updated_at "
        "WHERE contact_lists.state = 'unsubscribed'",
        {contact_id, id, now, now});
    if (!n) return Fail(n.error());
    any = any || *n == 1;
  }
  if (any)
    if (auto st = optin_emails_repo::Rearm(c, contact_id, now); !st) return Fail(st.error());
  return any;
}

Result<std::vector<NamedRef>> ListPreferences::ConfirmPending(const governance::Actor& actor,
                                                              int64_t contact_id) {
  return o_.db->Write([&](store::Conn& c) { return ConfirmPendingIn(c, actor, contact_id); });
}

Result<std::vector<NamedRef>> ListPreferences::ConfirmPendingIn(store::Conn& c,
                                                                const governance::Actor& actor,
                                                                int64_t contact_id) {
  auto rows = c.Query(
      "SELECT l.id, l.name FROM contact_lists cl JOIN lists l ON l.id = cl.list_id "
      "WHERE cl.contact_id = ? AND cl.state = 'pending' ORDER BY l.id",
      {contact_id});
  if (!rows) return Fail(rows.error());
  std::vector<NamedRef> changed;
  if (rows->empty()) return changed;
  auto k = RequireContact(c, contact_id);
  if (!k) return Fail(k.error());
  json joined = json::array();
  for (const auto& r : *rows) {
    NamedRef list{r.Int(0), r.Str(1)};
    auto moved = MoveIn(c, *k, list, "subscribed", "pending");
    if (!moved) return Fail(moved.error());
    if (!*moved) continue;
    changed.push_back(list);
    joined.push_back(list.id);
  }
  if (changed.empty()) return changed;
  auto rev = contacts_repo::TouchContact(c, contact_id, o_.clock->NowUnix());
  if (!rev) return Fail(rev.error());
  if (auto a = o_.audit->Record(c, actor,
                                {.action = "confirm_list_rejoin",
                                 .target_type = "contact",
                                 .target_ids = {contact_id},
                                 .revision_before = k->revision,
                                 .revision_after = *rev,
                                 .details = {{"joined", joined}}});
      !a)
    return Fail(a.error());
  return changed;
}

}  // namespace crmd::crm

// ContactService: updates, status changes, memberships and deletion (creation and reads
// are in contacts.cc).
#include "src/crm/contact_exit.h"
#include "src/crm/contact_status.h"
#include "src/crm/contacts.h"
#include "src/crm/contacts_repo.h"
#include "src/crm/events.h"
#include "src/crm/lists.h"
#include "src/crm/outbox.h"
#include "src/governance/audit.h"

namespace crmd::crm {

using nlohmann::json;

namespace {

Result<Contact> Require(store::Conn& c, int64_t id) {
  auto k = contacts_repo::FindContact(c, id);
  if (!k) return Fail(k.error());
  if (!*k) return Fail(Error::NotFound("contact " + std::to_string(id) + " not found"));
  return std::move(**k);
}

}  // namespace

Result<Contact> ContactService::Update(const governance::Actor& actor, int64_t id,
                                       int64_t expected_revision, const ContactInput& in) {
  std::string new_email;
  if (in.email) {
    EmailVerdict v = ValidateEmail(*in.email);
    if (!v.valid) {
      std::string reasons;
      for (const auto& r : v.reasons) reasons += (reasons.empty() ? "" : ", ") + r;
      return Fail(Errc::kInvalidArgument, "email is not valid (" + reasons + ")");
    }
    new_email = v.normalized;
  }
  if (auto st = CheckInput(in); !st) return Fail(st.error());
  return o_.db->Write([&](store::Conn& c) -> Result<Contact> {
    auto k = Require(c, id);
    if (!k) return Fail(k.error());
    if (k->revision != expected_revision)
      return Fail(Errc::kRevisionConflict, "contact " + std::to_string(id) + " is at revision " +
                                               std::to_string(k->revision) + ", not " +
                                               std::to_string(expected_revision) +
                                               "; read it again and reapply the change");
    auto r = UpdateExistingIn(c, actor, std::move(*k), in, new_email, "update_contact");
    if (!r) return Fail(r.error());
    return std::move(r->contact);
  });
}

Result<Contact> ContactService::SetStatusIn(store::Conn& c, const governance::Actor& actor,
                                            int64_t id, const std::string& status, bool consent,
                                            const std::string& reason) {
  auto k = Require(c, id);
  if (!k) return Fail(k.error());
  auto st = CheckTransition({.from = k->status, .to = status, .consent = consent});
  if (!st) return Fail(st.error());
  if (k->status != status && status == "subscribed") {
    // Consent given to someone else is not the person's own confirmation: a suppressed
    // address is made subscribed only after the entry is lifted (ConfirmOptIn, or an
    // administrator's removal).
    auto hit = SuppressedIn(c, k->email);
    if (!hit) return Fail(hit.error());
    if (*hit) return Fail(SuppressedError(**hit));
  }
  if (k->status != status) {
    Contact next = *k;
    next.status = status;
    next.revision = k->revision + 1;
    next.updated_at = o_.clock->NowUnix();
    auto ok = contacts_repo::UpdateContact(c, next, k->revision);
    if (!ok) return Fail(ok.error());
    if (!*ok) return Fail(Errc::kRevisionConflict, "the contact changed meanwhile; retry");
    json data = ContactEventData(next);
    data["from"] = k->status;
    data["to"] = status;
    if (!reason.empty()) data["reason"] = reason;
    if (auto e = o_.outbox->Append(c, events::kStatusUpdated, id, data); !e) return Fail(e.error());
    if (auto e =
            SuppressForStatusIn(c, actor, next, reason.empty() ? "set_contact_status" : reason);
        !e)
      return Fail(e.error());
    if (auto a = o_.audit->Record(c, actor,
                                  {.action = "set_contact_status",
                                   .target_type = "contact",
                                   .target_ids = {id},
                                   .revision_before = k->revision,
                                   .revision_after = next.revision,
                                   .details = {{"from", k->status},
                                               {"to", status},
                                               {"consent", consent},
                                               {"reason", reason}}});
        !a)
      return Fail(a.error());
  }
  return GetIn(c, id);
}

Result<Contact> ContactService::SetStatus(const governance::Actor& actor, int64_t id,
                                          const std::string& status, bool consent,
                                          std::optional<int64_t> expected_revision,
                                          const std::string& reason) {
  return o_.db->Write([&](store::Conn& c) -> Result<Contact> {
    if (expected_revision) {
      auto k = Require(c, id);
      if (!k) return Fail(k.error());
      if (k->revision != *expected_revision)
        return Fail(Errc::kRevisionConflict, "contact " + std::to_string(id) + " is at revision " +
                                                 std::to_string(k->revision) + "; read it again");
    }
    return SetStatusIn(c, actor, id, status, consent, reason);
  });
}

Result<MembershipChange> ContactService::ApplyMembershipsIn(store::Conn& c,
                                                            const governance::Actor& actor,
                                                            int64_t contact_id, bool tags, bool add,
                                                            const std::vector<Ref>& refs) {
  auto k = Require(c, contact_id);
  if (!k) return Fail(k.error());
  int64_t now = o_.clock->NowUnix();
  MembershipChange out{.contact_id = contact_id, .revision = k->revision};
  for (const Ref& ref : refs) {
    // Adding a tag by a new name creates it; lists must exist; removal needs existence.
    auto g = ResolveGroupIn(c, tags ? GroupKind::kTag : GroupKind::kList, ref, tags && add, now);
    if (!g) return Fail(g.error());
    auto changed = add ? contacts_repo::AddMembership(c, tags, contact_id, g->id, now)
                       : contacts_repo::RemoveMembership(c, tags, contact_id, g->id);
    if (!changed) return Fail(changed.error());
    if (!*changed) continue;
    out.changed.push_back(*g);
    json data = ContactEventData(*k);
    data[tags ? "tag" : "list"] = {{"id", g->id}, {"name", g->name}};
    auto type = tags ? (add ? events::kTagAdded : events::kTagRemoved)
                     : (add ? events::kListAdded : events::kListRemoved);
    if (auto e = o_.outbox->Append(c, type, contact_id, data); !e) return Fail(e.error());
  }
  if (!out.changed.empty()) {
    auto rev = contacts_repo::TouchContact(c, contact_id, now);
    if (!rev) return Fail(rev.error());
    out.revision = *rev;
  }
  return out;
}

namespace {

const char* MembershipAction(bool tags, bool add) {
  if (tags) return add ? "add_contact_tags" : "remove_contact_tags";
  return add ? "add_contact_to_lists" : "remove_contact_from_lists";
}

}  // namespace

#define CRMD_MEMBERSHIP_METHOD(Name, tags, add)                                               \
  Result<std::vector<MembershipChange>> ContactService::Name(const governance::Actor& actor,  \
                                                             const std::vector<int64_t>& ids, \
                                                             const std::vector<Ref>& refs) {  \
    return ApplyMemberships(actor, ids, refs, tags, add);                                     \
  }
CRMD_MEMBERSHIP_METHOD(AddTags, true, true)
CRMD_MEMBERSHIP_METHOD(RemoveTags, true, false)
CRMD_MEMBERSHIP_METHOD(AddToLists, false, true)
CRMD_MEMBERSHIP_METHOD(RemoveFromLists, false, false)
#undef CRMD_MEMBERSHIP_METHOD

Result<std::vector<MembershipChange>> ContactService::ApplyMemberships(
    const governance::Actor& actor, const std::vector<int64_t>& ids, const std::vector<Ref>& refs,
    bool tags, bool add) {
  if (ids.empty() || ids.size() > kMaxDeleteItems)
    return Fail(Errc::kInvalidArgument, "contact_ids must hold 1 to 100 ids");
  if (refs.empty()) return Fail(Errc::kInvalidArgument, tags ? "tags is empty" : "lists is empty");
  return o_.db->Write([&](store::Conn& c) -> Result<std::vector<MembershipChange>> {
    std::vector<MembershipChange> out;
    std::vector<int64_t> touched;
    for (int64_t id : ids) {
      auto ch = ApplyMembershipsIn(c, actor, id, tags, add, refs);
      if (!ch) return Fail(ch.error());
      if (!ch->changed.empty()) touched.push_back(id);
      out.push_back(std::move(*ch));
    }
    if (!touched.empty()) {
      json names = json::array();
      for (const Ref& r : refs)
        names.push_back(std::holds_alternative<int64_t>(r) ? json(std::get<int64_t>(r))
                                                           : json(std::get<std::string>(r)));
      auto a = o_.audit->Record(c, actor,
                                {.action = MembershipAction(tags, add),
                                 .target_type = "contact",
                                 .target_ids = touched,
                                 .details = {{tags ? "tags" : "lists", names}}});
      if (!a) return Fail(a.error());
    }
    return out;
  });
}

Result<json> ContactService::DeleteIn(store::Conn& c, const governance::Actor& actor,
                                      const std::vector<int64_t>& ids) {
  json deleted = json::array();
  std::vector<int64_t> done;
  for (int64_t id : ids) {
    auto k = contacts_repo::FindContact(c, id);
    if (!k) return Fail(k.error());
    if (!*k) continue;  // already gone: deletion is idempotent
    if (o_.exit)
      if (auto st = o_.exit->BeforeContactDeleted(c, id); !st) return Fail(st.error());
    // The contact's data goes; that its address unsubscribed, bounced or complained stays
    // (normally entered when the status was set; contacts older than the list enter here).
    if (auto st = SuppressForStatusIn(c, actor, **k, "contact deleted"); !st)
      return Fail(st.error());
    auto ok = contacts_repo::DeleteContact(c, id);
    if (!ok) return Fail(ok.error());
    if (!*ok) continue;
    if (auto e = o_.outbox->Append(c, events::kContactDeleted, id, ContactEventData(**k)); !e)
      return Fail(e.error());
    deleted.push_back({{"id", id}, {"email", (**k).email}});
    done.push_back(id);
  }
  if (!done.empty()) {
    auto a = o_.audit->Record(
        c, actor, {.action = "delete_contacts", .target_type = "contact", .target_ids = done});
    if (!a) return Fail(a.error());
  }
  return json{{"deleted_count", done.size()}, {"deleted", deleted}};
}

Result<json> ContactService::DeleteByEmail(const governance::Actor& actor, std::string_view email) {
  auto n = NormalizeEmail(email);
  std::string key = n ? *n : std::string(email);
  return o_.db->Write([&](store::Conn& c) -> Result<json> {
    auto k = contacts_repo::FindContactByEmail(c, key);
    if (!k) return Fail(k.error());
    if (!*k) return Fail(Error::NotFound("no contact with email " + key));
    return DeleteIn(c, actor, {(**k).id});
  });
}

namespace {

Result<std::vector<int64_t>> IdsArg(const json& args) {
  if (!args.is_object() || !args.contains("ids") || !args["ids"].is_array())
    return Fail(Errc::kInvalidArgument, "ids must be an array of contact ids");
  std::vector<int64_t> ids;
  for (const auto& x : args["ids"]) {
    if (!x.is_number_integer()) return Fail(Errc::kInvalidArgument, "ids must be integers");
    int64_t id = x.get<int64_t>();
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  if (ids.empty() || ids.size() > kMaxDeleteItems)
    return Fail(Errc::kInvalidArgument, "ids must hold 1 to 100 contact ids");
  return ids;
}

}  // namespace

governance::ActionSpec ContactService::DeleteAction() {
  return governance::ActionSpec{
      .name = "delete_contacts",
      .scope = "contacts:delete",
      .preview = [this](store::Conn& c, const json& args) -> Result<governance::Preview> {
        auto ids = IdsArg(args);
        if (!ids) return Fail(ids.error());
        governance::Preview p;
        json contacts = json::array();
        std::vector<int64_t> missing;
        for (int64_t id : *ids) {
          auto k = contacts_repo::FindContact(c, id);
          if (!k) return Fail(k.error());
          if (!*k) {
            missing.push_back(id);
            continue;
          }
          if (auto st = contacts_repo::LoadMemberships(c, &**k); !st) return Fail(st.error());
          json item = ToJson(**k, true);
          item["tag_count"] = (**k).tags.size();
          item["list_count"] = (**k).lists.size();
          if (o_.exit) {  // what the deletion ends in campaigns, automations, sequences
            auto open = o_.exit->OpenFor(c, id);
            if (!open) return Fail(open.error());
            item["pending_campaign_sends"] = open->pending_campaign_sends;
            item["active_automation_runs"] = open->active_automation_runs;
            item["active_sequence_enrolments"] = open->active_sequence_enrolments;
          }
          contacts.push_back(item);
          p.revisions["contact:" + std::to_string(id)] = (**k).revision;
        }
        if (!missing.empty()) {
          std::string s;
          for (int64_t id : missing) s += (s.empty() ? "" : ", ") + std::to_string(id);
          return Fail(Error::NotFound("contacts not found: " + s));
        }
        p.preview = {{"action", "delete_contacts"},
                     {"count", contacts.size()},
                     {"contacts", contacts},
                     {"effect",
                      "permanently deletes these contacts with their tag and list memberships; "
                      "their pending campaign sends are skipped and their automation runs and "
                      "sequence enrolments end (exited); the addresses of those unsubscribed, "
                      "bounced or complained stay on the suppression list (as keyed hashes); "
                      "this cannot be undone"}};
        return p;
      },
      .execute = [this](store::Conn& c, const json& args,
                        const governance::Actor& actor) -> Result<json> {
        auto ids = IdsArg(args);
        if (!ids) return Fail(ids.error());
        return DeleteIn(c, actor, *ids);
      },
  };
}

}  // namespace crmd::crm

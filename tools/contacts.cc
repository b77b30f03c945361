#include "tools/contacts.h"

#include "src/crm/contact_status.h"
#include "tools/common.h"

namespace crmd::tools {

using nlohmann::json;

namespace {

json Warnings(const crm::EmailVerdict& v) {
  json w = json::array();
  if (v.disposable) w.push_back("disposable_domain");
  if (v.role_account) w.push_back("role_account");
  for (const auto& r : v.reasons)
    if (r.rfind("dns:", 0) == 0) w.push_back(r);
  return w;
}

// revision_conflict carries the current record so the model can retry at once.
mcp::ToolOutcome ContactFailure(crm::ContactService& contacts, const Error& e, int64_t id) {
  json details;
  if (e.code == Errc::kRevisionConflict) {
    if (auto cur = contacts.Get(id)) details = {{"current", crm::ToJson(*cur)}};
  }
  return FailWith(e, details);
}

mcp::ToolOutcome ListContacts(marketing::Services& s, const json& args) {
  crm::ContactFilter f;
  f.status = OptString(args, "status");
  f.type = OptString(args, "type");
  f.source = OptString(args, "source");
  f.tag = OptRef(args, "tag");
  f.list = OptRef(args, "list");
  f.query = OptString(args, "query");
  if (auto a = OptString(args, "created_after")) {
    auto t = ParseRfc3339(*a);
    if (!t) return FailWith(t.error());
    f.created_from = *t;
  }
  if (auto b = OptString(args, "created_before")) {
    auto t = ParseRfc3339(*b);
    if (!t) return FailWith(t.error());
    f.created_to = *t;
  }
  auto page = s.crm.contacts->List(f, OptString(args, "cursor").value_or(""), Limit(args));
  if (!page) return FailWith(page.error());
  json items = json::array();
  for (const auto& c : page->items) items.push_back(crm::ToJson(c, true));
  return mcp::ToolOutcome::Ok(PageJson(std::move(items), page->next_cursor));
}

mcp::ToolOutcome GetContact(marketing::Services& s, const json& args) {
  Result<crm::Contact> r;
  if (auto id = OptInt(args, "id"))
    r = s.crm.contacts->Get(*id);
  else if (auto email = OptString(args, "email"))
    r = s.crm.contacts->GetByEmail(*email);
  else
    return FailWith(Error::Invalid("give id or email"));
  if (!r) return FailWith(r.error());
  // Whether the address is on the suppression list, and why (null: it is not).
  auto suppression = s.crm.suppressions->Check(r->email);
  if (!suppression) return FailWith(suppression.error());
  // Written straight to text: the tree ToJson builds cost a fifth of the call.
  std::string text = "{\"contact\":";
  crm::AppendJson(text, *r);
  text.append(",\"suppression\":");
  text.append(*suppression ? crm::ToJson(**suppression).dump() : "null");
  // include ["history"]: a page of the contact's timeline, most recent first.
  if (args.contains("include") && args["include"].is_array()) {
    bool history = false;
    for (const auto& v : args["include"]) history = history || v == "history";
    if (history) {
      auto page = s.contact_history->Timeline(
          r->id, OptString(args, "history_cursor").value_or(""),
          static_cast<int>(
              OptInt(args, "history_limit").value_or(marketing::kHistoryDefaultLimit)));
      if (!page) return FailWith(page.error());
      text.append(",\"history\":");
      text.append(
          json{{"items", std::move(page->items)},
               {"next_cursor", page->next_cursor ? json(*page->next_cursor) : json(nullptr)}}
              .dump());
    }
  }
  text.push_back('}');
  return mcp::ToolOutcome::OkText(std::move(text));
}

mcp::ToolOutcome CreateContact(marketing::Services& s, const mcp::ToolContext& ctx,
                               const json& args) {
  auto in = crm::ContactInputFromJson(args);
  if (!in) return FailWith(in.error());
  in->source = in->source.value_or("mcp");
  auto r =
      s.crm.contacts->Create(ActorFrom(ctx), *in, OptString(args, "idempotency_key").value_or(""));
  if (!r) {
    std::optional<int64_t> existing;
    if (r.error().code == Errc::kAlreadyExists) {
      if (auto c = s.crm.contacts->GetByEmail(*in->email)) existing = c->id;
    }
    return FailDuplicate(r.error(), existing, "update_contact");
  }
  // Flags only (no DNS again): the verdict that let it in.
  crm::EmailVerdict v = s.crm.email_validator->Validate(r->email, crm::ValidationMode::kSyntax);
  return mcp::ToolOutcome::Ok({{"contact", crm::ToJson(*r)}, {"warnings", Warnings(v)}});
}

mcp::ToolOutcome UpdateContact(marketing::Services& s, const mcp::ToolContext& ctx,
                               const json& args) {
  json fields = args;
  fields.erase("id");
  fields.erase("expected_revision");
  auto in = crm::ContactInputFromJson(fields);
  if (!in) return FailWith(in.error());
  in->source.reset();  // the source records where a contact came from; not editable
  int64_t id = args.value("id", int64_t{0});
  auto r =
      s.crm.contacts->Update(ActorFrom(ctx), id, args.value("expected_revision", int64_t{0}), *in);
  if (!r) return ContactFailure(*s.crm.contacts, r.error(), id);
  return mcp::ToolOutcome::Ok({{"contact", crm::ToJson(*r)}});
}

mcp::ToolOutcome UpsertBulk(marketing::Services& s, const mcp::ToolContext& ctx, const json& args) {
  std::vector<crm::ContactInput> items;
  json pre_failed = json::array();
  const json& contacts = args.at("contacts");
  std::vector<std::optional<Error>> parse_errors(contacts.size());
  std::vector<size_t> index_of;  // position in `items` -> position in `contacts`
  for (size_t i = 0; i < contacts.size(); ++i) {
    auto in = crm::ContactInputFromJson(contacts[i]);
    if (!in) {
      parse_errors[i] = in.error();
      continue;
    }
    in->source = in->source.value_or("mcp");
    index_of.push_back(i);
    items.push_back(std::move(*in));
  }
  auto r = s.crm.contacts->UpsertBulk(ActorFrom(ctx), items);
  if (!r) return FailWith(r.error());
  std::vector<json> results(contacts.size());
  int created = 0, updated = 0, unchanged = 0, failed = 0;
  for (size_t i = 0; i < contacts.size(); ++i) {
    if (parse_errors[i]) {
      results[i] = {{"index", i},
                    {"outcome", "failed"},
                    {"email", contacts[i].value("email", "")},
                    {"error", ErrorJson(*parse_errors[i])}};
      ++failed;
    }
  }
  for (const auto& item : *r) {
    size_t i = index_of[item.index];
    json j = {{"index", i}, {"outcome", item.outcome}, {"email", item.email}};
    if (item.id) j["id"] = *item.id;
    if (item.error) j["error"] = ErrorJson(*item.error);
    if (item.outcome == "created")
      ++created;
    else if (item.outcome == "updated")
      ++updated;
    else if (item.outcome == "unchanged")
      ++unchanged;
    else
      ++failed;
    results[i] = std::move(j);
  }
  return mcp::ToolOutcome::Ok({{"results", results},
                               {"created", created},
                               {"updated", updated},
                               {"unchanged", unchanged},
                               {"failed", failed}});
}

mcp::ToolOutcome SetStatus(marketing::Services& s, const mcp::ToolContext& ctx, const json& args) {
  int64_t id = args.value("id", int64_t{0});
  auto before = s.crm.contacts->Get(id);
  if (!before) return FailWith(before.error());
  auto r = s.crm.contacts->SetStatus(ActorFrom(ctx), id, args.value("status", ""),
                                     args.value("consent", false),
                                     OptInt(args, "expected_revision"), args.value("reason", ""));
  if (!r) {
    json details;
    if (r.error().code == Errc::kInvalidTransition)
      details = {{"from", before->status}, {"allowed", crm::AllowedTargets(before->status, true)}};
    if (r.error().code == Errc::kRevisionConflict) details = {{"current", crm::ToJson(*before)}};
    return FailWith(r.error(), details);
  }
  return mcp::ToolOutcome::Ok({{"contact", crm::ToJson(*r)},
                               {"previous_status", before->status},
                               {"changed", before->status != r->status}});
}

using MembershipFn = Result<std::vector<crm::MembershipChange>> (crm::ContactService::*)(
    const governance::Actor&, const std::vector<int64_t>&, const std::vector<crm::Ref>&);

mcp::ToolOutcome Memberships(marketing::Services& s, const mcp::ToolContext& ctx, const json& args,
                             const char* refs_key, MembershipFn fn) {
  auto refs = crm::ParseRefs(args.value(refs_key, json::array()), refs_key);
  if (!refs) return FailWith(refs.error());
  auto r = ((*s.crm.contacts).*fn)(ActorFrom(ctx), Ids(args, "contact_ids"), *refs);
  if (!r) return FailWith(r.error());
  json results = json::array();
  int changed = 0;
  for (const auto& ch : *r) {
    json names = json::array();
    for (const auto& g : ch.changed) names.push_back({{"id", g.id}, {"name", g.name}});
    if (!ch.changed.empty()) ++changed;
    results.push_back(
        {{"contact_id", ch.contact_id}, {"changed", names}, {"revision", ch.revision}});
  }
  return mcp::ToolOutcome::Ok({{"results", results}, {"contacts_changed", changed}});
}

}  // namespace

Status RegisterContactTools(mcp::ToolRegistry& registry, marketing::Services& services) {
  marketing::Services* s = &services;
  auto simple = [s](mcp::ToolOutcome (*fn)(marketing::Services&, const json&)) {
    return [s, fn](const mcp::ToolContext&, const json& args) { return fn(*s, args); };
  };
  auto with_ctx =
      [s](mcp::ToolOutcome (*fn)(marketing::Services&, const mcp::ToolContext&, const json&)) {
        return [s, fn](const mcp::ToolContext& ctx, const json& args) { return fn(*s, ctx, args); };
      };
  auto membership = [s](const char* key, MembershipFn fn) {
    return [s, key, fn](const mcp::ToolContext& ctx, const json& args) {
      return Memberships(*s, ctx, args, key, fn);
    };
  };
  std::vector<std::pair<std::string, mcp::ToolHandler>> tools = {
      {"list_contacts", simple(ListContacts)},
      {"get_contact", simple(GetContact)},
      {"create_contact", with_ctx(CreateContact)},
      {"update_contact", with_ctx(UpdateContact)},
      {"upsert_contacts_bulk", with_ctx(UpsertBulk)},
      {"set_contact_status", with_ctx(SetStatus)},
      {"add_contact_tags", membership("tags", &crm::ContactService::AddTags)},
      {"remove_contact_tags", membership("tags", &crm::ContactService::RemoveTags)},
      {"add_contact_to_lists", membership("lists", &crm::ContactService::AddToLists)},
      {"remove_contact_from_lists", membership("lists", &crm::ContactService::RemoveFromLists)},
      {"delete_contacts",
       [s](const mcp::ToolContext& ctx, const json& args) {
         return FromConfirm(s->governance.confirmations->Request(ActorFrom(ctx), "delete_contacts",
                                                                 {{"ids", Ids(args, "ids")}}));
       }},
      {"validate_email",
       [s](const mcp::ToolContext&, const json& args) {
         auto v = s->crm.contacts->ValidateEmail(args.value("email", ""));
         return mcp::ToolOutcome::Ok(crm::ToJson(v));
       }},
  };
  for (auto& [name, handler] : tools)
    if (auto st = registry.Register(name, std::move(handler)); !st) return st;
  return Ok();
}

}  // namespace crmd::tools

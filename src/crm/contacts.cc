#include "src/crm/contacts.h"

#include "src/core/crypto.h"
#include "src/core/json_write.h"
#include "src/crm/contact_status.h"
#include "src/crm/contacts_repo.h"
#include "src/crm/events.h"
#include "src/crm/lists.h"
#include "src/crm/optin_emails_repo.h"
#include "src/crm/outbox.h"
#include "src/governance/audit.h"
#include "src/governance/idempotency.h"
#include "src/governance/settings.h"

namespace crmd::crm {

using nlohmann::json;

namespace {

constexpr size_t kMaxNameLength = 100;
constexpr size_t kMaxPhoneLength = 40;
constexpr size_t kMaxSourceLength = 100;
constexpr size_t kMaxCustomKeyLength = 64;

json RefJson(const NamedRef& r) {
  json j(json::value_t::object);
  j.get_ref<json::object_t&>().emplace("id", r.id);
  j.get_ref<json::object_t&>().emplace("name", r.name);
  return j;
}

Status CheckString(const std::optional<std::string>& v, const char* field, size_t max) {
  if (v && v->size() > max)
    return Fail(Errc::kInvalidArgument,
                std::string(field) + " is too long (at most " + std::to_string(max) + ")");
  return Ok();
}

// Merges custom fields (null deletes a key) and enforces the caps.
Result<json> MergeCustomFields(const json& base, const json& patch) {
  if (!patch.is_object()) return Fail(Errc::kInvalidArgument, "custom_fields must be an object");
  json out = base.is_object() ? base : json::object();
  for (const auto& [k, v] : patch.items()) {
    if (k.empty() || k.size() > kMaxCustomKeyLength)
      return Fail(Errc::kInvalidArgument, "custom_fields keys must be 1 to 64 characters");
    if (v.is_null())
      out.erase(k);
    else
      out[k] = v;
  }
  if (out.size() > kMaxCustomFieldsKeys)
    return Fail(Errc::kInvalidArgument, "custom_fields has more than 50 keys");
  if (out.dump().size() > kMaxCustomFieldsBytes)
    return Fail(Errc::kInvalidArgument, "custom_fields is larger than 16 KiB");
  return out;
}

std::string EncodeIdCursor(int64_t id) {
  return crypto::Base64UrlEncode("c:" + std::to_string(id));
}

Result<int64_t> DecodeIdCursor(const std::string& cursor) {
  if (cursor.empty()) return 0;
  auto raw = crypto::Base64UrlDecode(cursor);
  if (!raw || raw->rfind("c:", 0) != 0)
    return Fail(Errc::kInvalidArgument, "cursor is not valid; pass next_cursor unchanged");
  try {
    return std::stoll(raw->substr(2));
  } catch (...) {
    return Fail(Errc::kInvalidArgument, "cursor is not valid; pass next_cursor unchanged");
  }
}

Result<std::optional<std::string>> OptString(const json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::optional<std::string>{};
  if (!j[key].is_string())
    return Fail(Errc::kInvalidArgument, std::string(key) + " must be a string");
  return std::optional<std::string>(j[key].get<std::string>());
}

}  // namespace

json ContactEventData(const Contact& c) {
  return {{"id", c.id}, {"email", c.email}, {"status", c.status}, {"type", c.type}};
}

json ToJson(const Contact& c, bool compact) {
  // Members are emplaced into the object directly: an initializer list builds a two-element
  // array per member first (an allocation and a copy each), and this runs for every contact
  // of every answer (docs/performance.md).
  json j(json::value_t::object);
  auto& o = j.get_ref<json::object_t&>();
  o.emplace("id", c.id);
  o.emplace("email", c.email);
  o.emplace("first_name", c.first_name);
  o.emplace("last_name", c.last_name);
  o.emplace("status", c.status);
  o.emplace("type", c.type);
  o.emplace("revision", c.revision);
  o.emplace("created_at", FormatRfc3339(c.created_at));
  if (compact) return j;
  o.emplace("phone", c.phone);
  o.emplace("source", c.source);
  o.emplace("custom_fields", c.custom_fields);
  o.emplace("updated_at", FormatRfc3339(c.updated_at));
  auto refs = [](const std::vector<NamedRef>& v) {
    json::array_t arr;
    arr.reserve(v.size());
    for (const auto& r : v) arr.push_back(RefJson(r));
    return arr;
  };
  o.emplace("tags", refs(c.tags));
  o.emplace("lists", refs(c.lists));
  return j;
}

void AppendJson(std::string& out, const Contact& c, bool compact, bool with_source) {
  // Members in the order ToJson's object writes them (its keys are sorted).
  auto member = [&out](std::string_view key, bool first = false) {
    if (!first) out.push_back(',');
    out.push_back('"');
    out.append(key);
    out.append("\":");
  };
  auto text = [&](std::string_view key, std::string_view value, bool first = false) {
    member(key, first);
    AppendJsonString(out, value);
  };
  auto refs = [&](std::string_view key, const std::vector<NamedRef>& v) {
    member(key);
    out.push_back('[');
    for (size_t i = 0; i < v.size(); ++i) {
      out.append(i ? ",{\"id\":" : "{\"id\":");
      AppendJsonInt(out, v[i].id);
      out.append(",\"name\":");
      AppendJsonString(out, v[i].name);
      out.push_back('}');
    }
    out.push_back(']');
  };
  out.push_back('{');
  text("created_at", FormatRfc3339(c.created_at), true);
  if (!compact) {
    member("custom_fields");
    crmd::AppendJson(out, c.custom_fields);
  }
  text("email", c.email);
  text("first_name", c.first_name);
  member("id");
  AppendJsonInt(out, c.id);
  text("last_name", c.last_name);
  if (!compact) {
    refs("lists", c.lists);
    text("phone", c.phone);
  }
  member("revision");
  AppendJsonInt(out, c.revision);
  if (!compact || with_source) text("source", c.source);
  text("status", c.status);
  if (!compact) refs("tags", c.tags);
  text("type", c.type);
  if (!compact) text("updated_at", FormatRfc3339(c.updated_at));
  out.push_back('}');
}

Result<ContactInput> ContactInputFromJson(const json& j) {
  if (!j.is_object()) return Fail(Errc::kInvalidArgument, "contact must be an object");
  ContactInput in;
  struct Field {
    const char* key;
    std::optional<std::string>* dst;
  };
  for (Field f :
       {Field{"email", &in.email}, Field{"first_name", &in.first_name},
        Field{"last_name", &in.last_name}, Field{"phone", &in.phone}, Field{"status", &in.status},
        Field{"type", &in.type}, Field{"source", &in.source}}) {
    auto v = OptString(j, f.key);
    if (!v) return Fail(v.error());
    *f.dst = *v;
  }
  if (j.contains("custom_fields") && !j["custom_fields"].is_null()) {
    if (!j["custom_fields"].is_object())
      return Fail(Errc::kInvalidArgument, "custom_fields must be an object");
    in.custom_fields = j["custom_fields"];
  }
  auto tags = ParseRefs(j.value("tags", json()), "tags");
  if (!tags) return Fail(tags.error());
  in.tags = std::move(*tags);
  auto lists = ParseRefs(j.value("lists", json()), "lists");
  if (!lists) return Fail(lists.error());
  in.lists = std::move(*lists);
  if (j.contains("consent")) {
    if (!j["consent"].is_boolean())
      return Fail(Errc::kInvalidArgument, "consent must be a boolean");
    in.consent = j["consent"].get<bool>();
  }
  return in;
}

ContactService::ContactService(ContactServiceOptions options) : o_(options) {}

Result<Contact> ContactService::GetIn(store::Conn& conn, int64_t id) {
  auto c = contacts_repo::FindContact(conn, id);
  if (!c) return Fail(c.error());
  if (!*c) return Fail(Error::NotFound("contact " + std::to_string(id) + " not found"));
  if (auto st = contacts_repo::LoadMemberships(conn, &**c); !st) return Fail(st.error());
  return std::move(**c);
}

Result<Contact> ContactService::Get(int64_t id) {
  // One statement, its own snapshot: no transaction around it (Database::ReadStatement).
  return o_.db->ReadStatement([&](store::Conn& c) -> Result<Contact> {
    auto found = contacts_repo::FindContactWithMemberships(c, id);
    if (!found) return Fail(found.error());
    if (!*found) return Fail(Error::NotFound("contact " + std::to_string(id) + " not found"));
    return std::move(**found);
  });
}

Result<Contact> ContactService::GetByEmail(std::string_view email) {
  auto n = NormalizeEmail(email);
  std::string key = n ? *n : std::string(email);
  return o_.db->Read([&](store::Conn& c) -> Result<Contact> {
    auto k = contacts_repo::FindContactByEmail(c, key);
    if (!k) return Fail(k.error());
    if (!*k) return Fail(Error::NotFound("no contact with email " + key));
    if (auto st = contacts_repo::LoadMemberships(c, &**k); !st) return Fail(st.error());
    return std::move(**k);
  });
}

Result<ContactPage> ContactService::List(const ContactFilter& filter, const std::string& cursor,
                                         int limit) {
  if (limit <= 0) limit = 25;
  if (limit > 100) limit = 100;
  auto after = DecodeIdCursor(cursor);
  if (!after) return Fail(after.error());
  if (filter.status && !IsValidStatus(*filter.status))
    return Fail(Errc::kInvalidArgument, "status filter is not a known status");
  if (filter.type && !IsValidContactType(*filter.type))
    return Fail(Errc::kInvalidArgument, "type filter must be lead or customer");
  auto read = [&](store::Conn& c) -> Result<ContactPage> {
    contacts_repo::ResolvedFilter rf{.filter = &filter};
    if (filter.tag) {
      auto t = ResolveGroupIn(c, GroupKind::kTag, *filter.tag, false, 0);
      if (!t) return Fail(t.error());
      rf.tag_id = t->id;
    }
    if (filter.list) {
      auto l = ResolveGroupIn(c, GroupKind::kList, *filter.list, false, 0);
      if (!l) return Fail(l.error());
      rf.list_id = l->id;
    }
    auto rows = contacts_repo::ListContacts(c, rf, *after, limit + 1);
    if (!rows) return Fail(rows.error());
    ContactPage page;
    if (rows->size() > static_cast<size_t>(limit)) {
      rows->resize(limit);
      page.next_cursor = EncodeIdCursor(rows->back().id);
    }
    page.items = std::move(*rows);
    return page;
  };
  // Without a tag, a list or a text query to resolve first, the page is one statement
  // (contacts_repo::ListContacts): read without a transaction around it (Database::ReadStatement).
  if (!filter.tag && !filter.list && !filter.query) return o_.db->ReadStatement(read);
  return o_.db->Read(read);
}

EmailVerdict ContactService::ValidateEmail(std::string_view email) {
  auto mode = ParseValidationMode(o_.settings ? o_.settings->EmailValidationMode() : "syntax");
  return o_.validator->Validate(email, mode ? *mode : ValidationMode::kSyntax);
}

namespace {

Status RequireValid(const EmailVerdict& v) {
  if (v.valid) return Ok();
  std::string reasons;
  for (const auto& r : v.reasons) reasons += (reasons.empty() ? "" : ", ") + r;
  return Fail(Errc::kInvalidArgument, "email is not valid (" + reasons + ")");
}

}  // namespace

// Applies memberships of `in` to a contact and emits their events. Answers whether
// anything changed.
// ContactEventData(k) with the group as "tag" or "list", dumped: the bytes
// Outbox::Append writes for it (its keys in the order nlohmann's object sorts them).
static std::string MembershipEventJson(const Contact& k, bool tag, const NamedRef& g) {
  std::string out;
  out.reserve(128 + k.email.size() + g.name.size());
  auto group = [&] {
    out.append(tag ? ",\"tag\":{\"id\":" : ",\"list\":{\"id\":");
    AppendJsonInt(out, g.id);
    out.append(",\"name\":");
    AppendJsonString(out, g.name);
    out.push_back('}');
  };
  out.append("{\"email\":");
  AppendJsonString(out, k.email);
  out.append(",\"id\":");
  AppendJsonInt(out, k.id);
  if (!tag) group();
  out.append(",\"status\":");
  AppendJsonString(out, k.status);
  if (tag) group();
  out.append(",\"type\":");
  AppendJsonString(out, k.type);
  out.push_back('}');
  return out;
}

// The group a membership names: from `known` when it names it by an id known there, else
// resolved (a missing tag is created).
static Result<NamedRef> MembershipGroupIn(store::Conn& c, bool tags, const Ref& ref,
                                          const KnownGroups* known, int64_t now) {
  if (const auto* id = std::get_if<int64_t>(&ref); id && known) {
    const auto& names = tags ? known->tags : known->lists;
    if (auto it = names.find(*id); it != names.end()) return NamedRef{*id, it->second};
  }
  return ResolveGroupIn(c, tags ? GroupKind::kTag : GroupKind::kList, ref, tags, now);
}

static Result<bool> AddMembershipsIn(store::Conn& c, Outbox& outbox, const Contact& k,
                                     const ContactInput& in, int64_t now,
                                     const KnownGroups* known = nullptr) {
  bool changed = false;
  for (bool tags : {true, false}) {
    for (const Ref& ref : tags ? in.tags : in.lists) {
      auto g = MembershipGroupIn(c, tags, ref, known, now);
      if (!g) return Fail(g.error());
      auto added = contacts_repo::AddMembership(c, tags, k.id, g->id, now);
      if (!added) return Fail(added.error());
      if (!*added) continue;
      changed = true;
      if (auto st = outbox.AppendSerialized(c, tags ? events::kTagAdded : events::kListAdded, k.id,
                                            MembershipEventJson(k, tags, *g));
          !st)
        return Fail(st.error());
    }
  }
  return changed;
}

Status ContactService::CheckInput(const ContactInput& in) {
  for (auto [v, f, m] : {std::tuple{&in.first_name, "first_name", kMaxNameLength},
                         std::tuple{&in.last_name, "last_name", kMaxNameLength},
                         std::tuple{&in.phone, "phone", kMaxPhoneLength},
                         std::tuple{&in.source, "source", kMaxSourceLength}})
    if (auto st = CheckString(*v, f, m); !st) return st;
  if (in.type && !IsValidContactType(*in.type))
    return Fail(Errc::kInvalidArgument, "type must be lead or customer");
  if (in.status && !IsValidStatus(*in.status))
    return Fail(Errc::kInvalidArgument,
                "status must be pending, subscribed, unsubscribed, bounced or complained");
  return Ok();
}

Result<UpsertResult> ContactService::UpsertIn(store::Conn& c, const governance::Actor& actor,
                                              const ContactInput& in, const EmailVerdict& verdict) {
  if (auto st = RequireValid(verdict); !st) return Fail(st.error());
  if (auto st = CheckInput(in); !st) return Fail(st.error());
  auto existing = contacts_repo::FindContactByEmail(c, verdict.normalized);
  if (!existing) return Fail(existing.error());
  if (!*existing) return InsertNewIn(c, actor, in, verdict);
  return UpdateExistingIn(c, actor, std::move(**existing), in, "", "upsert_contact");
}

Result<int64_t> ContactService::CreateForImportIn(store::Conn& c, const governance::Actor& actor,
                                                  const ContactInput& in,
                                                  const EmailVerdict& verdict, bool double_opt_in,
                                                  const KnownGroups& groups) {
  if (auto st = RequireValid(verdict); !st) return Fail(st.error());
  if (auto st = CheckInput(in); !st) return Fail(st.error());
  bool inserted = false;
  auto r = InsertNewIn(c, actor, in, verdict,
                       {.inserted = &inserted,
                        .read_back = false,
                        .unsuppressed = true,
                        .double_opt_in = double_opt_in,
                        .groups = &groups,
                        .audit = false});
  if (!r) {
    // After the insert only crmd's own failures remain (the groups are ids that exist).
    if (inserted && r.error().code != Errc::kInternal && r.error().code != Errc::kUnavailable)
      return Fail(Error::Internal("import row failed after its insert: " + r.error().message));
    return Fail(r.error());
  }
  return r->contact.id;
}

Status ContactService::AuditImportIn(store::Conn& c, const governance::Actor& actor,
                                     int64_t import_id, const std::vector<int64_t>& created) {
  if (created.empty()) return Ok();
  return o_.audit->Record(c, actor,
                          {.action = "import_contacts",
                           .target_type = "contact",
                           .target_ids = created,
                           .revision_after = 1,
                           .details = {{"import_id", import_id}}});
}

Result<UpsertResult> ContactService::InsertNewIn(store::Conn& c, const governance::Actor& actor,
                                                 const ContactInput& in,
                                                 const EmailVerdict& verdict,
                                                 const NewContactWay& way) {
  int64_t now = o_.clock->NowUnix();
  UpsertResult out;
  Contact k;
  k.email = verdict.normalized;
  k.first_name = in.first_name.value_or("");
  k.last_name = in.last_name.value_or("");
  k.phone = in.phone.value_or("");
  bool double_opt_in = way.double_opt_in.value_or(false);
  if (o_.settings && !way.double_opt_in) {
    auto s = o_.settings->SharedIn(c);
    if (s) double_opt_in = (*s)->document.value("double_opt_in", false);
  }
  // Without an explicit status, double opt-in decides (docs/crm.md).
  k.status = in.status.value_or(double_opt_in ? "pending" : "subscribed");
  bool confirm_by_email = !in.status && k.status == "pending";
  // A suppressed address is never created subscribed nor sent a confirmation, except a
  // signup of one, which waits for the person's confirmation (docs/crm.md "Suppression
  // list").
  auto suppressed = way.unsuppressed ? Result<std::optional<Suppression>>(std::nullopt)
                                     : GateSubscribed(c, in, k, "pending", &confirm_by_email);
  if (!suppressed) return Fail(suppressed.error());
  k.type = in.type.value_or("lead");
  k.source = in.source.value_or(actor.kind);
  if (in.custom_fields) {
    auto cf = MergeCustomFields(json::object(), *in.custom_fields);
    if (!cf) return Fail(cf.error());
    k.custom_fields = std::move(*cf);
  }
  k.revision = 1;
  k.created_at = k.updated_at = now;
  auto id = contacts_repo::InsertContact(c, k);
  if (!id) {
    if (id.error().code == Errc::kAlreadyExists)
      return Fail(Errc::kAlreadyExists, "a contact with email " + k.email + " already exists");
    return Fail(id.error());
  }
  k.id = *id;
  if (way.inserted) *way.inserted = true;
  // The compact contact with its source, written straight to its bytes (the same as
  // ToJson(k, true) with "source" added, dumped; in the writer's turn, docs/performance.md).
  std::string data;
  data.reserve(256);
  AppendJson(data, k, /*compact=*/true, /*with_source=*/true);
  if (auto st = o_.outbox->AppendSerialized(c, events::kContactCreated, k.id, std::move(data)); !st)
    return Fail(st.error());
  // A signup left pending by double opt-in gets its confirmation email, queued in this
  // transaction and sent by the job loop (docs/mail.md, "Double opt-in").
  if (confirm_by_email)
    if (auto st = optin_emails_repo::Enqueue(c, k.id, now); !st) return Fail(st.error());
  if (*suppressed && !(*suppressed)->is_domain())  // the entry now points at this contact
    if (auto st = o_.suppressions->AttachIn(c, k.id, k.email); !st) return Fail(st.error());
  if (auto st = SuppressForStatusIn(c, actor, k, "create_contact"); !st) return Fail(st.error());
  auto m = AddMembershipsIn(c, *o_.outbox, k, in, now, way.groups);
  if (!m) return Fail(m.error());
  out.created = out.changed = true;
  if (way.audit)
    if (auto st = o_.audit->Record(c, actor,
                                   {.action = "create_contact",
                                    .target_type = "contact",
                                    .target_ids = {k.id},
                                    .revision_after = k.revision});
        !st)
      return Fail(st.error());
  if (!way.read_back || (in.tags.empty() && in.lists.empty())) {
    // Nothing in this transaction changed the row since it was inserted as `k`.
    out.contact = std::move(k);
    return out;
  }
  auto full = GetIn(c, k.id);  // with its memberships
  if (!full) return Fail(full.error());
  out.contact = std::move(*full);
  return out;
}

Result<UpsertResult> ContactService::UpdateExistingIn(store::Conn& c,
                                                      const governance::Actor& actor,
                                                      Contact before, const ContactInput& in,
                                                      const std::string& new_email,
                                                      const std::string& action) {
  // Existing contact: fields, status through the state machine, then memberships.
  int64_t now = o_.clock->NowUnix();
  UpsertResult out;
  Contact k = before;
  json changes = json::object();
  if (!new_email.empty() && new_email != k.email) {
    auto taken = contacts_repo::FindContactByEmail(c, new_email);
    if (!taken) return Fail(taken.error());
    if (*taken)
      return Fail(Errc::kAlreadyExists, "another contact (id " + std::to_string((**taken).id) +
                                            ") already has email " + new_email);
    changes["email"] = {{"from", k.email}, {"to", new_email}};
    k.email = new_email;
  }
  auto set = [&](const char* field, std::string& dst, const std::optional<std::string>& v) {
    if (v && *v != dst) {
      changes[field] = {{"from", dst}, {"to", *v}};
      dst = *v;
    }
  };
  set("first_name", k.first_name, in.first_name);
  set("last_name", k.last_name, in.last_name);
  set("phone", k.phone, in.phone);
  set("type", k.type, in.type);
  if (in.custom_fields) {
    auto cf = MergeCustomFields(k.custom_fields, *in.custom_fields);
    if (!cf) return Fail(cf.error());
    if (*cf != k.custom_fields) {
      changes["custom_fields"] = {{"from", k.custom_fields}, {"to", *cf}};
      k.custom_fields = std::move(*cf);
    }
  }
  bool status_changed = false;
  if (in.status && *in.status != k.status) {
    auto st = CheckTransition({.from = k.status, .to = *in.status, .consent = in.consent});
    if (!st) return Fail(st.error());
    status_changed = true;
    k.status = *in.status;
  }
  // A new address, or a move to subscribed, asks the suppression list: a suppressed address
  // is never made subscribed (a signup's status stays where it was).
  if (k.email != before.email && o_.suppressions) {
    if (auto st = o_.suppressions->DetachIn(c, k.id); !st) return Fail(st.error());
    if (auto st = o_.suppressions->AttachIn(c, k.id, k.email); !st) return Fail(st.error());
  }
  if (k.status == "subscribed" && (k.email != before.email || status_changed)) {
    if (auto gate = GateSubscribed(c, in, k, before.status, nullptr); !gate)
      return Fail(gate.error());
    status_changed = k.status != before.status;
  }
  if (!changes.empty() || status_changed) {
    k.revision = before.revision + 1;
    k.updated_at = now;
    auto ok = contacts_repo::UpdateContact(c, k, before.revision, &before);
    if (!ok) return Fail(ok.error());
    if (!*ok) return Fail(Errc::kRevisionConflict, "the contact changed meanwhile; retry");
    if (!changes.empty()) {
      json data = ContactEventData(k);
      data["changes"] = changes;
      if (auto st = o_.outbox->Append(c, events::kContactUpdated, k.id, data); !st)
        return Fail(st.error());
    }
    if (status_changed) {
      json data = ContactEventData(k);
      data["from"] = before.status;
      data["to"] = k.status;
      if (auto st = o_.outbox->Append(c, events::kStatusUpdated, k.id, data); !st)
        return Fail(st.error());
      if (auto st = SuppressForStatusIn(c, actor, k, action); !st) return Fail(st.error());
    }
  }
  auto m = AddMembershipsIn(c, *o_.outbox, k, in, now);
  if (!m) return Fail(m.error());
  if (*m && changes.empty() && !status_changed) {
    auto rev = contacts_repo::TouchContact(c, k.id, now);
    if (!rev) return Fail(rev.error());
  }
  out.changed = *m || !changes.empty() || status_changed;
  auto full = GetIn(c, k.id);
  if (!full) return Fail(full.error());
  out.contact = std::move(*full);
  if (out.changed) {
    if (auto st = o_.audit->Record(
            c, actor,
            {.action = action,
             .target_type = "contact",
             .target_ids = {k.id},
             .revision_before = before.revision,
             .revision_after = out.contact.revision,
             .details = {{"changed", changes.size()}, {"status_changed", status_changed}}});
        !st)
      return Fail(st.error());
  }
  return out;
}

Result<Contact> ContactService::Create(const governance::Actor& actor, const ContactInput& in,
                                       const std::string& idempotency_key) {
  if (!in.email) return Fail(Errc::kInvalidArgument, "email is required");
  EmailVerdict v = ValidateEmail(*in.email);  // before the transaction: may do DNS
  std::string scope = governance::IdempotencyScope(actor, "create_contact");
  return o_.db->Write([&](store::Conn& c) -> Result<Contact> {
    std::optional<Contact> made;
    auto insert = [&]() -> Result<nlohmann::json> {
      if (auto st = RequireValid(v); !st) return Fail(st.error());
      // Inserted straight away: a taken email inserts nothing (contacts_repo::InsertContact). Only
      // a create that failed before its row went in looks the email up, so that a taken
      // email is still the answer before any other refusal of the input (as when the
      // lookup came first), with the holder's id in the message.
      bool inserted = false;
      auto refused = [&](const Error& e) -> Error {
        if (inserted) return e;
        auto taken = contacts_repo::FindContactByEmail(c, v.normalized);
        if (!taken || !*taken) return e;
        return Error{Errc::kAlreadyExists, "a contact with email " + v.normalized +
                                               " already exists (id " +
                                               std::to_string((**taken).id) + ")"};
      };
      if (auto st = CheckInput(in); !st) return Fail(refused(st.error()));
      auto r = InsertNewIn(c, actor, in, v, {.inserted = &inserted});
      if (!r) return Fail(refused(r.error()));
      made = std::move(r->contact);
      return nlohmann::json{{"contact_id", made->id}};
    };
    auto answer = o_.idempotency->Once(c, scope, idempotency_key, insert);
    if (!answer) return Fail(answer.error());
    if (made) return std::move(*made);
    return GetIn(c, answer->value("contact_id", int64_t{0}));
  });
}

Result<UpsertResult> ContactService::Upsert(const governance::Actor& actor,
                                            const ContactInput& in) {
  if (!in.email) return Fail(Errc::kInvalidArgument, "email is required");
  EmailVerdict v = ValidateEmail(*in.email);
  return o_.db->Write([&](store::Conn& c) { return UpsertIn(c, actor, in, v); });
}

Result<std::vector<BulkItemResult>> ContactService::UpsertBulk(
    const governance::Actor& actor, const std::vector<ContactInput>& items) {
  if (items.size() > kMaxBulkItems)
    return Fail(Errc::kInvalidArgument, "at most 500 contacts per call");
  std::vector<EmailVerdict> verdicts;
  verdicts.reserve(items.size());
  for (const auto& in : items) verdicts.push_back(ValidateEmail(in.email.value_or("")));
  return o_.db->Write([&](store::Conn& c) -> Result<std::vector<BulkItemResult>> {
    std::vector<BulkItemResult> out;
    for (size_t i = 0; i < items.size(); ++i) {
      BulkItemResult r{.index = i, .email = verdicts[i].normalized};
      if (r.email.empty()) r.email = items[i].email.value_or("");
      // A savepoint per item: a failed item leaves no trace, the others stay.
      if (auto sp = c.Exec("SAVEPOINT bulk_item"); !sp) return Fail(sp.error());
      auto u = UpsertIn(c, actor, items[i], verdicts[i]);
      if (u) {
        r.outcome = u->created ? "created" : (u->changed ? "updated" : "unchanged");
        r.id = u->contact.id;
        if (auto rel = c.Exec("RELEASE SAVEPOINT bulk_item"); !rel) return Fail(rel.error());
      } else {
        if (u.error().code == Errc::kInternal || u.error().code == Errc::kUnavailable)
          return Fail(u.error());
        r.outcome = "failed";
        r.error = u.error();
        if (auto rb = c.Exec("ROLLBACK TO SAVEPOINT bulk_item"); !rb) return Fail(rb.error());
        if (auto rel = c.Exec("RELEASE SAVEPOINT bulk_item"); !rel) return Fail(rel.error());
      }
      out.push_back(std::move(r));
    }
    return out;
  });
}

}  // namespace crmd::crm

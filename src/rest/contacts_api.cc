// Contact endpoints: POST /contact (add or update by email), GET /contact/{email},
// DELETE /contact/delete/{email}, with any enabled API key; they go through the same
// ContactService as the tools: email validation, the status machine, outbox events and
// the audit log. GET /contact/{email}/export, with an admin key only: everything kept
// about one person (marketing::ContactHistory, docs/crm.md "Each person's own data").
#include <cctype>

#include "src/crm/contacts.h"
#include "src/crm/services.h"
#include "src/marketing/services.h"
#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {
namespace {

governance::Actor KeyActor(const RestContext& ctx) {
  return {.kind = "api_key",
          .subject = ctx.key ? std::to_string(ctx.key->id) : "",
          .client_id = "",
          .request_id = ctx.req.request_id};
}

// The {email} path segment: percent-decoded ('+' stays a plus: it is common in local
// parts), then normalised by the service.
std::optional<std::string> EmailParam(const RestContext& ctx) {
  auto decoded = http::PercentDecode(ctx.Param("email"), false);
  if (!decoded || decoded->empty()) return std::nullopt;
  return decoded;
}

constexpr const char* kContactMembers[] = {"email",         "first_name", "last_name", "phone",
                                           "status",        "type",       "tags",      "lists",
                                           "custom_fields", "consent"};

// A list named in the body that does not exist is a problem with the body, not a missing
// resource at this URL; a refused status change is about the status member.
const ErrorMeaning kUpsertMeaning{.not_found_in_body = true, .transition_field = "status"};

// The {email} of the path names the contact: a malformed one names nothing.
ErrorMeaning ByEmail(const std::string& email) {
  return {.not_found_detail = "no contact with email " + email, .invalid_is_not_found = true};
}

}  // namespace

void AddContactRoutes(RestRouter& router, const RestDeps& deps) {
  crm::ContactService* contacts = deps.crm->contacts.get();

  router.Add(
      {"POST", "/contact", Access::kKey, true,
       [contacts, base = RestBasePath(*deps.config)](RestContext& ctx) {
         std::vector<FieldError> errors;
         for (const auto& [k, v] : ctx.body.items()) {
           bool known = false;
           for (const char* m : kContactMembers) known = known || k == m;
           if (!known) errors.push_back({k, "unknown_field", "is not a contact field"});
         }
         if (!ctx.body.contains("email")) errors.push_back({"email", "required", "is required"});
         if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
         auto in = crm::ContactInputFromJson(ctx.body);
         if (!in) return ProblemFromError(ctx.req, in.error(), kUpsertMeaning);
         if (!in->source) in->source = "api";
         auto r = contacts->Upsert(KeyActor(ctx), *in);
         if (!r) return ProblemFromError(ctx.req, r.error(), kUpsertMeaning);
         auto full = contacts->Get(r->contact.id);
         if (!full) return ProblemFromError(ctx.req, full.error());
         auto body = crm::ToJson(*full);
         auto resp = Reply(r->created ? 201 : 200, {{"created", r->created}, {"contact", body}});
         if (r->created)
           resp.Set("Location", base + "/contact/" + http::PercentEncode(full->email));
         return resp;
       }});

  router.Add({"GET", "/contact/{email}", Access::kKey, false, [contacts](RestContext& ctx) {
                auto email = EmailParam(ctx);
                if (!email) return NotFound(ctx.req, "no contact with that email");
                auto c = contacts->GetByEmail(*email);
                if (!c) return ProblemFromError(ctx.req, c.error(), ByEmail(*email));
                return Reply(200, {{"contact", crm::ToJson(*c)}});
              }});

  if (deps.marketing) {
    marketing::ContactHistory* history = deps.marketing->contact_history.get();
    router.Add(
        {"GET", "/contact/{email}/export", Access::kAdmin, false, [history](RestContext& ctx) {
           auto email = EmailParam(ctx);
           if (!email) return NotFound(ctx.req, "no contact with that email");
           auto doc = history->ExportByEmail(*email);
           if (!doc) return ProblemFromError(ctx.req, doc.error(), ByEmail(*email));
           http::Response r = Reply(200, *doc);
           r.Set("Content-Disposition", "attachment; filename=\"contact-export.json\"");
           return r;
         }});
  }

  router.Add(
      {"DELETE", "/contact/delete/{email}", Access::kKey, false, [contacts](RestContext& ctx) {
         auto email = EmailParam(ctx);
         if (!email) return NotFound(ctx.req, "no contact with that email");
         auto before = contacts->GetByEmail(*email);
         if (!before) return ProblemFromError(ctx.req, before.error(), ByEmail(*email));
         auto removed = contacts->DeleteByEmail(KeyActor(ctx), *email);
         if (!removed) return ProblemFromError(ctx.req, removed.error(), ByEmail(*email));
         return Reply(200, {{"deleted", true}, {"contact", crm::ToJson(*before)}});
       }});
}

}  // namespace crmd::rest

// Contact endpoints: POST /contact (add or update by email), GET /contact/{email},
// DELETE /contact/delete/{email}. Any enabled API key. They go through the same
// ContactService as the tools: email validation, the status machine, outbox events and
// the audit log.
#include <cctype>

#include "src/crm/contacts.h"
#include "src/crm/services.h"
#include "src/rest/helpers.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {
namespace {

crm::Actor KeyActor(const RestContext& ctx) {
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

constexpr const char* kContactMembers[] = {"email", "first_name", "last_name", "phone",
                                           "status", "type", "tags", "lists",
                                           "custom_fields", "consent"};

http::Response ContactError(const RestContext& ctx, const Error& e) {
  if (e.code == Errc::kInvalidArgument) return InvalidFromError(ctx.req, e);
  if (e.code == Errc::kInvalidTransition)
    return Problem(ctx.req, {.status = 409, .code = "invalid_transition", .detail = e.message,
                             .errors = {{"status", "invalid_transition", e.message}}});
  // A list named in the body that does not exist is a problem with the body, not a
  // missing resource at this URL.
  if (e.code == Errc::kNotFound) {
    bool tag = e.message.rfind("tag", 0) == 0;
    return Problem(ctx.req, {.status = 422, .code = "validation_failed", .detail = e.message,
                             .errors = {{tag ? "tags" : "lists", tag ? "unknown_tag" : "unknown_list",
                                         e.message}}});
  }
  return ProblemFromError(ctx.req, e);
}

}  // namespace

void AddContactRoutes(RestRouter& router, const RestDeps& deps) {
  crm::ContactService* contacts = deps.crm->contacts.get();

  router.Add({"POST", "/contact", Access::kKey, true,
              [contacts, base = RestBasePath(*deps.config)](RestContext& ctx) {
    std::vector<FieldError> errors;
    for (const auto& [k, v] : ctx.body.items()) {
      bool known = false;
      for (const char* m : kContactMembers) known = known || k == m;
      if (!known) errors.push_back({k, "unknown_field", "is not a contact field"});
    }
    if (!ctx.body.contains("email"))
      errors.push_back({"email", "required", "is required"});
    if (!errors.empty()) return Invalid(ctx.req, std::move(errors));
    auto in = crm::ContactInputFromJson(ctx.body);
    if (!in) return ContactError(ctx, in.error());
    if (!in->source) in->source = "api";
    auto r = contacts->Upsert(KeyActor(ctx), *in);
    if (!r) return ContactError(ctx, r.error());
    auto full = contacts->Get(r->contact.id);
    if (!full) return ProblemFromError(ctx.req, full.error());
    auto body = crm::ToJson(*full);
    auto resp = Reply(r->created ? 201 : 200, {{"created", r->created}, {"contact", body}});
    if (r->created) resp.Set("Location", base + "/contact/" + http::PercentEncode(full->email));
    return resp;
  }});

  router.Add({"GET", "/contact/{email}", Access::kKey, false, [contacts](RestContext& ctx) {
    auto email = EmailParam(ctx);
    if (!email) return NotFound(ctx.req, "no contact with that email");
    auto c = contacts->GetByEmail(*email);
    if (!c) {
      if (c.error().code == Errc::kNotFound || c.error().code == Errc::kInvalidArgument)
        return NotFound(ctx.req, "no contact with email " + *email);
      return ProblemFromError(ctx.req, c.error());
    }
    return Reply(200, {{"contact", crm::ToJson(*c)}});
  }});

  router.Add({"DELETE", "/contact/delete/{email}", Access::kKey, false,
              [contacts](RestContext& ctx) {
                auto email = EmailParam(ctx);
                if (!email) return NotFound(ctx.req, "no contact with that email");
                auto before = contacts->GetByEmail(*email);
                if (!before) {
                  if (before.error().code == Errc::kNotFound ||
                      before.error().code == Errc::kInvalidArgument)
                    return NotFound(ctx.req, "no contact with email " + *email);
                  return ProblemFromError(ctx.req, before.error());
                }
                auto removed = contacts->DeleteByEmail(KeyActor(ctx), *email);
                if (!removed) {
                  if (removed.error().code == Errc::kNotFound)
                    return NotFound(ctx.req, "no contact with email " + *email);
                  return ProblemFromError(ctx.req, removed.error());
                }
                return Reply(200, {{"deleted", true}, {"contact", crm::ToJson(*before)}});
              }});
}

}  // namespace crmd::rest

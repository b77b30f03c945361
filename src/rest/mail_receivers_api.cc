// Provider event receivers (docs/mail.md "Provider event receivers"):
//   POST /mail/events/mailgun | postmark | sendgrid | ses   public: the provider's own
//                                                      signature or credentials authenticate it
//   GET    /admin/mail-receivers                       admin keys
//   GET    /admin/mail-receivers/{provider}
//   PUT    /admin/mail-receivers/{provider}            create or change (keys never answered)
//   DELETE /admin/mail-receivers/{provider}
// Thin handlers over marketing::MailReceivers, as crmctl uses it.
#include "src/core/json_parse.h"
#include "src/marketing/services.h"
#include "src/rest/helpers.h"
#include "src/rest/ip_limiter.h"
#include "src/rest/rest_api.h"

namespace crmd::rest {
namespace {

// Requests a minute one client address may send to one provider's receiver, before the
// signature is checked (each costs a database read): generous, since providers send in
// bursts from few addresses.
constexpr int kReceiverRequestsPerMinute = 1200;

// 429 with Retry-After once `ip` has sent its minute's share to `provider`.
std::optional<http::Response> Throttled(IpLimiter& limiter, const RestContext& ctx,
                                        std::string_view provider) {
  int wait = limiter.Hit(ctx.req.remote_ip + "|" + std::string(provider));
  if (!wait) return std::nullopt;
  return Problem(ctx.req, {.status = 429,
                           .code = "rate_limited",
                           .detail = "too many requests from this address; try again later",
                           .retry_after_s = wait});
}

using ProviderReceiveFn =
    Result<nlohmann::json> (marketing::MailReceivers::*)(const marketing::ReceiverRequest&);

RestRoute ProviderReceiverRoute(marketing::MailReceivers* receivers, const char* provider,
                                ProviderReceiveFn receive, std::shared_ptr<IpLimiter> limiter) {
  RestRoute route{"POST", std::string("/mail/events/") + provider, Access::kPublic, true,
                  [receivers, receive, limiter, provider](RestContext& ctx) {
                    if (auto refused = Throttled(*limiter, ctx, provider)) return *refused;
                    auto done = (receivers->*receive)(
                        {.raw_body = ctx.req.body,
                         .body = &ctx.body,
                         .authorization = ctx.req.Header("Authorization"),
                         .signature_header = ctx.req.Header(mail::kSendGridSignatureHeader),
                         .timestamp_header = ctx.req.Header(mail::kSendGridTimestampHeader),
                         .request_id = ctx.req.request_id});
                    if (!done)
                      return ProblemFromError(ctx.req, done.error(),
                                              {.unauthenticated_code = "invalid_signature"});
                    return Reply(200, *done);
                  }};
  // Receiving is idempotent by the provider's event ids, and a key here is never the
  // caller's to choose.
  route.idempotency = false;
  route.json_array = std::string_view(provider) == "sendgrid";
  return route;
}

// SNS posts its JSON as text/plain, so this route reads the body itself: the same size
// limit and strict parse as every JSON route, whatever the content type says.
RestRoute SesReceiverRoute(marketing::MailReceivers* receivers, const Config* config,
                           std::shared_ptr<IpLimiter> limiter) {
  RestRoute route{
      "POST", "/mail/events/ses", Access::kPublic, false,
      [receivers, config, limiter](RestContext& ctx) {
        if (auto refused = Throttled(*limiter, ctx, "ses")) return *refused;
        if (ctx.req.body.size() > config->rest_max_body_bytes)
          return Problem(ctx.req,
                         {.status = 413,
                          .code = "payload_too_large",
                          .detail = "the body is larger than " +
                                    std::to_string(config->rest_max_body_bytes) + " bytes"});
        ParsedJson parsed = ParseJsonStrict(ctx.req.body);
        if (!parsed || !parsed.value.is_object())
          return Problem(ctx.req, {.status = 400,
                                   .code = "malformed_json",
                                   .detail = "the body must be an SNS message (a JSON object)"});
        ctx.body = std::move(parsed.value);
        auto done = receivers->ReceiveSes(
            {.raw_body = ctx.req.body, .body = &ctx.body, .request_id = ctx.req.request_id});
        if (!done)
          return ProblemFromError(ctx.req, done.error(),
                                  {.unauthenticated_code = "invalid_signature"});
        return Reply(200, *done);
      }};
  route.idempotency = false;
  return route;
}

std::optional<std::string> ProviderParam(const RestContext& ctx) {
  const std::string& p = ctx.Param("provider");
  if (!marketing::MailReceivers::KnownProvider(p)) return std::nullopt;
  return p;
}

}  // namespace

void AddMailReceiverRoutes(RestRouter& router, const RestDeps& deps) {
  marketing::MailReceivers* receivers = deps.marketing->receivers.get();
  using M = marketing::MailReceivers;
  auto limiter = std::make_shared<IpLimiter>(kReceiverRequestsPerMinute, *deps.clock);
  router.Add(ProviderReceiverRoute(receivers, "mailgun", &M::ReceiveMailgun, limiter));
  router.Add(ProviderReceiverRoute(receivers, "postmark", &M::ReceivePostmark, limiter));
  router.Add(ProviderReceiverRoute(receivers, "sendgrid", &M::ReceiveSendGrid, limiter));
  router.Add(SesReceiverRoute(receivers, deps.config, limiter));

  router.Add({"GET", "/admin/mail-receivers", Access::kAdmin, false, [receivers](RestContext& ctx) {
                auto list = receivers->List();
                if (!list) return ProblemFromError(ctx.req, list.error());
                nlohmann::json out = nlohmann::json::array();
                for (const auto& r : *list) out.push_back(marketing::ToJson(r));
                return Reply(200, {{"mail_receivers", std::move(out)}});
              }});

  router.Add({"GET", "/admin/mail-receivers/{provider}", Access::kAdmin, false,
              [receivers](RestContext& ctx) {
                auto p = ProviderParam(ctx);
                if (!p) return NotFound(ctx.req, "no such provider");
                auto r = receivers->Get(*p);
                if (!r) return ProblemFromError(ctx.req, r.error());
                return Reply(200, marketing::ToJson(*r));
              }});

  router.Add({"PUT", "/admin/mail-receivers/{provider}", Access::kAdmin, true,
              [receivers](RestContext& ctx) {
                auto p = ProviderParam(ctx);
                if (!p) return NotFound(ctx.req, "no such provider");
                auto in = marketing::MailReceiverInputFromJson(*p, ctx.body);
                if (!in) return ProblemFromError(ctx.req, in.error());
                auto r = receivers->Configure(*p, *in);
                if (!r) return ProblemFromError(ctx.req, r.error());
                return Reply(200, marketing::ToJson(*r));
              }});

  router.Add({"DELETE", "/admin/mail-receivers/{provider}", Access::kAdmin, false,
              [receivers](RestContext& ctx) {
                auto p = ProviderParam(ctx);
                if (!p) return NotFound(ctx.req, "no such provider");
                if (auto s = receivers->Delete(*p); !s) return ProblemFromError(ctx.req, s.error());
                return Reply(200, {{"deleted", *p}});
              }});
}

}  // namespace crmd::rest

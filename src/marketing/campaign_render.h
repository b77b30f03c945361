#pragma once
// A campaign's message for one recipient: merge tags filled, sender resolved, the
// per-recipient unsubscribe link (RFC 8058 one-click), a stable Message-ID, and open and
// click tracking when the campaign asks for them. Used by the send loop (src/jobs) and by
// the activation preview, so that what the preview shows is what is sent.
//
// CampaignTemplates is parsed once per campaign revision and is immutable and thread-safe.
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "src/core/result.h"
#include "src/mail/merge.h"
#include "src/mail/message.h"
#include "src/mail/unsubscribe.h"
#include "src/marketing/campaigns.h"

namespace crmd::marketing {

// What a message needs from the server around it.
struct MailContext {
  std::string public_base_url;   // without a trailing slash; every link starts with it
  mail::Mailbox default_sender;  // settings' sender, else mail_from
  const mail::LinkTokens* links = nullptr;
  int64_t link_ttl_s = 400 * 24 * 3600;  // unsubscribe links work for more than a year
  std::string company_address;           // {{company_address}}: settings' postal address
};

// The sender of a message without its own: settings' sender (from_email, from_name) when
// set, else `configured` (mail_from).
mail::Mailbox DefaultSender(const nlohmann::json& settings, const mail::Mailbox& configured);
// The sender's postal address: settings company_address, else business.address.
std::string CompanyAddress(const nlohmann::json& settings);
// What a message takes from the settings document: the default sender and the address.
void ApplySettings(MailContext& ctx, const nlohmann::json& settings);

// The recipient's fields a message may use.
struct MailRecipient {
  int64_t contact_id = 0;
  std::string email, first_name, last_name, phone;
  std::string custom_fields_json = "{}";  // JSON object; strings, numbers and booleans merge
};

// Link purposes (mail::LinkTokens) of campaign messages.
inline constexpr std::string_view kOpenPurpose = "open";
inline constexpr std::string_view kClickPurpose = "click";

// The unsubscribe, open and click links of a message (paths under public_base_url).
std::string UnsubscribeUrl(const MailContext& ctx, int64_t contact_id, int64_t campaign_id);

class CampaignTemplates {
 public:
  // Fails (kInvalidArgument naming the field) when a merge tag is unknown or malformed.
  static Result<CampaignTemplates> Parse(const Campaign& campaign);

  // The message to `to` in send round `round`. Message-ID = f(campaign, round, address).
  Result<mail::Message> Build(const MailRecipient& to, int64_t round, const MailContext& ctx) const;

  const Campaign& campaign() const { return campaign_; }

 private:
  Campaign campaign_;
  mail::MergeTemplate subject_, preheader_, html_, text_;
  bool has_text_ = false;
};

// A message outside campaigns (an automation's send_email step, a sequence email, the
// double opt-in confirmation): merge tags of subject and bodies filled for the recipient,
// the sender (ctx.default_sender when from.address is empty), the Message-ID
// MakeMessageId(send_id, address) -- stable, so that a retry after a crash can be
// de-duplicated -- and, with `unsubscribe`, the per-recipient List-Unsubscribe link.
struct SimpleEmail {
  std::string subject, html_body, text_body;
  mail::Mailbox from;
  std::string send_id;  // e.g. "a3r17s2": automation 3, run 17, step 2
  bool unsubscribe = true;
  std::vector<std::pair<std::string, std::string>> extra_headers;
  bool merge = true;                      // false: subject and bodies are final text, not templates
  const EmailTemplate* layout = nullptr;  // the template the bodies fill (merge only)
};
// Fails (kInvalidArgument naming the field) when a merge tag is unknown or malformed.
Result<mail::Message> BuildSimpleMessage(const SimpleEmail& e, const MailRecipient& to,
                                         const MailContext& ctx);

// A rendered message as a preview shows it: from, to, subject, preheader, text, html
// (html cut at 64 KiB, with html_truncated).
nlohmann::json MessagePreviewJson(const mail::Message& m);

// Merge values of a recipient (email, names, phone, custom.<key>, unsubscribe_url).
mail::MergeValues MergeValuesFor(const MailRecipient& to, std::string unsubscribe_url);
// The same with what the server adds (company_address).
mail::MergeValues MergeValuesFor(const MailRecipient& to, std::string unsubscribe_url,
                                 const MailContext& ctx);

// The Message-ID's send id for a campaign round: "c<id>r<round>".
std::string CampaignSendId(int64_t campaign_id, int64_t round);

// Rewrites every href="http(s)://..." of `html` (except the unsubscribe link) to a signed
// redirect <base>/t/c/<token>?u=<url>; the token binds the URL, so the redirect goes only
// where the message pointed. A link that a merge value filled in part (`filled`, from
// MergeTemplate::RenderHtml) is left as it is: crmd signs only URLs its sender wrote, never
// one a stranger put in a custom field (which would make /t/c/ an open redirect).
std::string TrackClicks(std::string_view html, const MailRecipient& to, int64_t campaign_id,
                        const MailContext& ctx, std::string_view unsubscribe_url,
                        const std::vector<mail::MergeSpan>& filled = {});

}  // namespace crmd::marketing

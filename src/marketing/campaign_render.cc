#include "src/marketing/campaign_render.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/core/http_types.h"

namespace crmd::marketing {

namespace {

// The right-hand side of a Message-ID: the sender's domain, or, when that is not ASCII (an
// internationalized domain, which a Message-ID may not carry), the default sender's.
std::string MessageIdDomain(std::string_view from, std::string_view default_from) {
  for (std::string_view address : {from, default_from}) {
    auto at = address.rfind('@');
    std::string_view domain = at == address.npos ? std::string_view() : address.substr(at + 1);
    if (!domain.empty() &&
        std::all_of(domain.begin(), domain.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
      return std::string(domain);
  }
  return "localhost";
}

// &amp; in an attribute value is a literal & in the URL.
std::string UnescapeAmp(std::string_view v) {
  std::string out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (v.compare(i, 5, "&amp;") == 0) {
      out += '&';
      i += 4;
    } else {
      out += v[i];
    }
  }
  return out;
}

// A header's text on one line: every run of control characters (a line break from a CSV
// import or a form, a tab) and spaces becomes one space, none at either end. Contact data
// is kept as it was given; only what goes into a header is folded, so that one stray
// newline in a name does not make its contact impossible to email.
std::string OneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool gap = false;
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (c < 0x20 || c == 0x7f || c == ' ') {
      gap = true;
      continue;
    }
    if (gap && !out.empty()) out += ' ';
    gap = false;
    out += ch;
  }
  return out;
}

mail::Mailbox RecipientMailbox(const MailRecipient& to) {
  std::string name = to.first_name;
  if (!to.last_name.empty()) name += (name.empty() ? "" : " ") + to.last_name;
  return {OneLine(name), to.email};
}

}  // namespace

mail::Mailbox DefaultSender(const nlohmann::json& settings, const mail::Mailbox& configured) {
  if (settings.is_object() && settings.contains("sender") && settings["sender"].is_object()) {
    const auto& sender = settings["sender"];
    std::string email = sender.value("from_email", "");
    if (!email.empty()) return {sender.value("from_name", ""), email};
  }
  return configured;
}

std::string CompanyAddress(const nlohmann::json& settings) {
  if (!settings.is_object()) return {};
  if (auto it = settings.find("company_address");
      it != settings.end() && it->is_string() && !it->get_ref<const std::string&>().empty())
    return it->get<std::string>();
  if (auto it = settings.find("business"); it != settings.end() && it->is_object())
    return it->value("address", "");
  return {};
}

void ApplySettings(MailContext& ctx, const nlohmann::json& settings) {
  ctx.default_sender = DefaultSender(settings, ctx.default_sender);
  ctx.company_address = CompanyAddress(settings);
}

nlohmann::json MessagePreviewJson(const mail::Message& m) {
  constexpr size_t kMaxHtml = 64 * 1024;
  nlohmann::json j = {{"from", {{"name", m.from.name}, {"email", m.from.address}}},
                      {"to", {{"name", m.to.name}, {"email", m.to.address}}},
                      {"subject", m.subject},
                      {"preheader", m.preheader},
                      {"text", m.text ? *m.text : mail::HtmlToText(m.html)},
                      {"html", m.html.size() > kMaxHtml ? m.html.substr(0, kMaxHtml) : m.html},
                      {"html_truncated", m.html.size() > kMaxHtml},
                      {"message_id", m.message_id}};
  return j;
}

std::string CampaignSendId(int64_t campaign_id, int64_t round) {
  return "c" + std::to_string(campaign_id) + "r" + std::to_string(round);
}

std::string UnsubscribeUrl(const MailContext& ctx, int64_t contact_id, int64_t campaign_id) {
  return ctx.public_base_url + "/u/" +
         ctx.links->Issue(contact_id, mail::kUnsubscribePurpose, ctx.link_ttl_s, campaign_id);
}

mail::MergeValues MergeValuesFor(const MailRecipient& to, std::string unsubscribe_url) {
  // A name or a phone number is one line, whatever came in with it ("John\n").
  mail::MergeValues v{{"email", to.email},
                      {"first_name", OneLine(to.first_name)},
                      {"last_name", OneLine(to.last_name)},
                      {"phone", OneLine(to.phone)},
                      {"unsubscribe_url", std::move(unsubscribe_url)}};
  auto custom = nlohmann::json::parse(to.custom_fields_json, nullptr, false);
  if (custom.is_object()) {
    for (const auto& [key, value] : custom.items()) {
      if (value.is_string())
        v["custom." + key] = value.get<std::string>();
      else if (value.is_number() || value.is_boolean())
        v["custom." + key] = value.dump();
    }
  }
  return v;
}

mail::MergeValues MergeValuesFor(const MailRecipient& to, std::string unsubscribe_url,
                                 const MailContext& ctx) {
  mail::MergeValues v = MergeValuesFor(to, std::move(unsubscribe_url));
  v["company_address"] = ctx.company_address;
  return v;
}

std::string TrackClicks(std::string_view html, const MailRecipient& to, int64_t campaign_id,
                        const MailContext& ctx, std::string_view unsubscribe_url,
                        const std::vector<mail::MergeSpan>& filled) {
  auto merged = [&](size_t begin, size_t end) {
    return std::any_of(filled.begin(), filled.end(),
                       [&](const mail::MergeSpan& s) { return s.begin < end && begin < s.end; });
  };
  std::string out;
  out.reserve(html.size() + 256);
  size_t pos = 0;
  while (true) {
    size_t h = html.find("href=", pos);
    if (h == html.npos || h + 5 >= html.size()) break;
    char quote = html[h + 5];
    if (quote != '"' && quote != '\'') {
      out.append(html.substr(pos, h + 5 - pos));
      pos = h + 5;
      continue;
    }
    size_t start = h + 6;
    size_t end = html.find(quote, start);
    if (end == html.npos) break;
    std::string url = UnescapeAmp(html.substr(start, end - start));
    out.append(html.substr(pos, start - pos));
    bool web = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
    if (web && url != unsubscribe_url && url.rfind(ctx.public_base_url + "/u/", 0) != 0 &&
        !merged(start, end)) {
      std::string token =
          ctx.links->Issue(to.contact_id, kClickPurpose, ctx.link_ttl_s, campaign_id, url);
      out += ctx.public_base_url + "/t/c/" + token + "?u=" + http::PercentEncode(url);
    } else {
      out.append(html.substr(start, end - start));
    }
    pos = end;
  }
  out.append(html.substr(pos));
  return out;
}

Result<CampaignTemplates> CampaignTemplates::Parse(const Campaign& campaign) {
  CampaignTemplates t;
  t.campaign_ = campaign;
  auto parse = [](const char* field, const std::string& source,
                  mail::MergeTemplate& into) -> Status {
    auto parsed = mail::MergeTemplate::Parse(source);
    if (!parsed)
      return Fail(Errc::kInvalidArgument, std::string(field) + ": " + parsed.error().message);
    into = std::move(*parsed);
    return Ok();
  };
  if (auto s = parse("subject", campaign.subject, t.subject_); !s) return Fail(s.error());
  if (auto s = parse("preheader", campaign.preheader, t.preheader_); !s) return Fail(s.error());
  // The body in its template's slot; a text-only campaign still gets an HTML part.
  auto bodies = WrapInLayout(campaign.layout ? &*campaign.layout : nullptr, campaign.html_body,
                             campaign.text_body);
  if (!bodies) return Fail(bodies.error());
  if (auto s = parse("html_body", bodies->html, t.html_); !s) return Fail(s.error());
  t.has_text_ = bodies->text.has_value();
  if (t.has_text_)
    if (auto s = parse("text_body", *bodies->text, t.text_); !s) return Fail(s.error());
  return t;
}

Result<mail::Message> CampaignTemplates::Build(const MailRecipient& to, int64_t round,
                                               const MailContext& ctx) const {
  const Campaign& k = campaign_;
  std::string unsubscribe = UnsubscribeUrl(ctx, to.contact_id, k.id);
  mail::MergeValues values = MergeValuesFor(to, unsubscribe, ctx);
  mail::Message m;
  m.from = k.from_email.empty() ? ctx.default_sender : mail::Mailbox{k.from_name, k.from_email};
  if (m.from.name.empty() && k.from_email.empty()) m.from.name = ctx.default_sender.name;
  m.to = RecipientMailbox(to);
  m.subject = OneLine(subject_.RenderText(values));
  m.preheader = preheader_.RenderText(values);
  std::vector<mail::MergeSpan> filled;
  m.html = html_.RenderHtml(values, &filled);
  if (has_text_) m.text = text_.RenderText(values);
  if (k.track_clicks) m.html = TrackClicks(m.html, to, k.id, ctx, unsubscribe, filled);
  if (k.track_opens) {
    std::string pixel = "<img src=\"" + ctx.public_base_url + "/t/o/" +
                        ctx.links->Issue(to.contact_id, kOpenPurpose, ctx.link_ttl_s, k.id) +
                        "\" width=\"1\" height=\"1\" alt=\"\" style=\"display:block;border:0\">";
    size_t body_end = m.html.rfind("</body>");
    if (body_end == std::string::npos)
      m.html += pixel;
    else
      m.html.insert(body_end, pixel);
  }
  m.message_id = mail::MakeMessageId(CampaignSendId(k.id, round), to.email,
                                     MessageIdDomain(m.from.address, ctx.default_sender.address));
  m.list_unsubscribe = {unsubscribe};
  m.one_click_unsubscribe = mail::SupportsOneClick(unsubscribe);
  m.extra_headers = {{"X-Crmd-Campaign", std::to_string(k.id)},
                     {"Feedback-ID", std::to_string(k.id) + ":campaign:crmd"}};
  return m;
}

Result<mail::Message> BuildSimpleMessage(const SimpleEmail& e, const MailRecipient& to,
                                         const MailContext& ctx) {
  std::string unsubscribe = e.unsubscribe ? UnsubscribeUrl(ctx, to.contact_id, 0) : "";
  mail::MergeValues values = MergeValuesFor(to, unsubscribe, ctx);
  auto render = [&](const char* field, const std::string& source, bool html,
                    std::string& out) -> Status {
    if (!e.merge) {
      out = source;
      return Ok();
    }
    auto parsed = mail::MergeTemplate::Parse(source);
    if (!parsed)
      return Fail(Errc::kInvalidArgument, std::string(field) + ": " + parsed.error().message);
    out = html ? parsed->RenderHtml(values) : parsed->RenderText(values);
    return Ok();
  };
  mail::Message m;
  m.from = e.from.address.empty() ? ctx.default_sender : e.from;
  if (m.from.name.empty() && e.from.address.empty()) m.from.name = ctx.default_sender.name;
  m.to = RecipientMailbox(to);
  if (auto s = render("subject", e.subject, false, m.subject); !s) return Fail(s.error());
  m.subject = OneLine(m.subject);
  auto bodies = WrapInLayout(e.merge ? e.layout : nullptr, e.html_body, e.text_body);
  if (!bodies) return Fail(bodies.error());
  if (auto s = render("html_body", bodies->html, true, m.html); !s) return Fail(s.error());
  if (bodies->text) {
    std::string text;
    if (auto s = render("text_body", *bodies->text, false, text); !s) return Fail(s.error());
    m.text = std::move(text);
  }
  m.message_id = mail::MakeMessageId(e.send_id, to.email,
                                     MessageIdDomain(m.from.address, ctx.default_sender.address));
  if (e.unsubscribe) {
    m.list_unsubscribe = {unsubscribe};
    m.one_click_unsubscribe = mail::SupportsOneClick(unsubscribe);
  }
  m.extra_headers = e.extra_headers;
  return m;
}

}  // namespace crmd::marketing

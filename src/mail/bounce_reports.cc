#include "src/mail/bounce_reports.h"

#include <utility>

#include "src/core/crypto.h"
#include "src/core/text.h"

namespace crmd::mail {
namespace {

using FieldList = std::vector<std::pair<std::string, std::string>>;  // lower-case name, value

struct MimeEntity {
  FieldList headers;
  std::string_view body;
};

std::string_view TrimWs(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// The next line of `rest` without its CR LF or LF; `rest` moves past it.
std::string_view NextLine(std::string_view& rest) {
  auto nl = rest.find('\n');
  std::string_view line = rest.substr(0, nl);
  rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// Header fields up to the first empty line (folded lines unfolded), then the body.
MimeEntity ParseEntity(std::string_view raw) {
  MimeEntity e;
  std::string_view rest = raw;
  while (!rest.empty()) {
    std::string_view line = NextLine(rest);
    if (line.empty()) break;
    if ((line.front() == ' ' || line.front() == '\t') && !e.headers.empty()) {
      e.headers.back().second += " " + std::string(TrimWs(line));
      continue;
    }
    auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    e.headers.emplace_back(text::AsciiLower(TrimWs(line.substr(0, colon))),
                           std::string(TrimWs(line.substr(colon + 1))));
  }
  e.body = rest;
  return e;
}

std::string Get(const FieldList& f, std::string_view name) {
  for (const auto& [k, v] : f)
    if (k == name) return v;
  return "";
}

std::string MediaType(std::string_view content_type) {
  return text::AsciiLower(TrimWs(content_type.substr(0, content_type.find(';'))));
}

// A Content-Type parameter's value (name case-insensitive, quotes removed).
std::string Param(std::string_view ct, std::string_view name) {
  constexpr auto npos = std::string_view::npos;
  size_t i = ct.find(';');
  while (i != npos) {
    size_t eq = ct.find('=', i + 1);
    if (eq == npos) return "";
    std::string key = text::AsciiLower(TrimWs(ct.substr(i + 1, eq - i - 1)));
    size_t v = eq + 1;
    while (v < ct.size() && (ct[v] == ' ' || ct[v] == '\t')) ++v;
    std::string value;
    if (v < ct.size() && ct[v] == '"') {
      size_t close = std::min(ct.find('"', v + 1), ct.size());
      value = std::string(ct.substr(v + 1, close - v - 1));
      i = close < ct.size() ? ct.find(';', close) : npos;
    } else {
      i = ct.find(';', v);
      value = std::string(TrimWs(ct.substr(v, i == npos ? npos : i - v)));
    }
    if (key == name) return value;
  }
  return "";
}

// The body parts between "--boundary" lines, up to "--boundary--".
std::vector<std::string_view> Parts(std::string_view body, const std::string& boundary) {
  std::vector<std::string_view> out;
  const std::string delimiter = "--" + boundary;
  std::string_view rest = body;
  const char* start = nullptr;
  while (!rest.empty()) {
    const char* line_start = rest.data();
    std::string_view line = TrimWs(NextLine(rest));
    if (line.substr(0, delimiter.size()) != delimiter) continue;
    if (start) out.emplace_back(start, line_start - start);
    if (line.substr(delimiter.size(), 2) == "--") return out;
    start = rest.data();
  }
  return out;
}

// Blank-line separated groups of fields (RFC 3464 §2.1: per-message, then per-recipient).
std::vector<FieldList> FieldGroups(std::string_view body) {
  std::vector<FieldList> out;
  std::string_view rest = body;
  while (!rest.empty()) {
    while (!rest.empty() && (rest.front() == '\r' || rest.front() == '\n')) rest.remove_prefix(1);
    if (rest.empty()) break;
    MimeEntity group = ParseEntity(rest);
    if (!group.headers.empty()) out.push_back(std::move(group.headers));
    if (group.body.size() == rest.size()) break;
    rest = group.body;
  }
  return out;
}

// "rfc822; ada@example.com" -> "ada@example.com"; "Ada <ada@example.com>" -> the address.
std::string AddressOf(std::string_view value) {
  if (auto semi = value.find(';'); semi != std::string_view::npos) value = value.substr(semi + 1);
  auto lt = value.find('<');
  if (lt != std::string_view::npos) {
    auto gt = value.find('>', lt);
    value = value.substr(lt + 1, gt == std::string_view::npos ? gt : gt - lt - 1);
  }
  return std::string(TrimWs(value));
}

ProviderEventKind DsnKind(const std::string& action, const std::string& status) {
  if (action == "failed" && status.rfind("5.", 0) == 0) return ProviderEventKind::kHardBounce;
  if (action == "delayed" || (action == "failed" && status.rfind("4.", 0) == 0))
    return ProviderEventKind::kSoftBounce;
  if (action == "failed") return ProviderEventKind::kHardBounce;  // no usable Status
  if (action == "delivered" || action == "relayed" || action == "expanded")
    return ProviderEventKind::kDelivered;
  return ProviderEventKind::kIgnored;
}

void ReadDeliveryStatus(std::string_view body, BounceReport& r) {
  auto groups = FieldGroups(body);
  for (size_t i = 1; i < groups.size(); ++i) {
    const FieldList& g = groups[i];
    std::string action = text::AsciiLower(Get(g, "action"));
    if (action.empty()) continue;
    r.action = action;
    r.status = std::string(TrimWs(Get(g, "status").substr(0, Get(g, "status").find(' '))));
    r.diagnostic = Get(g, "diagnostic-code");
    r.recipient = AddressOf(Get(g, "final-recipient"));
    if (r.recipient.empty()) r.recipient = AddressOf(Get(g, "original-recipient"));
    r.kind = DsnKind(r.action, r.status);
    return;
  }
}

void ReadFeedbackReport(std::string_view body, BounceReport& r) {
  FieldList f = ParseEntity(body).headers;
  r.kind = ProviderEventKind::kComplaint;
  r.diagnostic = Get(f, "feedback-type");
  r.recipient = AddressOf(Get(f, "original-rcpt-to"));
  if (auto from = AddressOf(Get(f, "original-mail-from")); !from.empty())
    r.return_path_candidates.push_back(from);
}

void ReadReturnedMessage(std::string_view body, BounceReport& r) {
  FieldList f = ParseEntity(body).headers;
  r.original_message_id = std::string(TrimWs(Get(f, "message-id")));
  if (auto rp = AddressOf(Get(f, "return-path")); !rp.empty())
    r.return_path_candidates.push_back(rp);
}

}  // namespace

MailSummary SummaryOf(std::string_view raw) {
  MimeEntity top = ParseEntity(raw);
  auto cut = [](std::string v) { return v.size() > 200 ? v.substr(0, 200) : v; };
  MailSummary m{.id = std::string(TrimWs(Get(top.headers, "message-id"))),
                .subject = cut(Get(top.headers, "subject")),
                .from = cut(Get(top.headers, "from"))};
  if (m.id.empty()) m.id = "sha256:" + crypto::Sha256Hex(raw);
  return m;
}

Result<BounceReport> ParseBounceReport(std::string_view raw) {
  MimeEntity top = ParseEntity(raw);
  const std::string content_type = Get(top.headers, "content-type");
  BounceReport r;
  r.report_type = text::AsciiLower(Param(content_type, "report-type"));
  const std::string boundary = Param(content_type, "boundary");
  if (MediaType(content_type) != "multipart/report" || boundary.empty() ||
      (r.report_type != "delivery-status" && r.report_type != "feedback-report"))
    return Fail(Errc::kInvalidArgument, "not a delivery status notification or feedback report");
  r.report_id = SummaryOf(raw).id;
  for (const char* h : {"delivered-to", "x-original-to", "envelope-to", "to"})
    if (auto a = AddressOf(Get(top.headers, h)); !a.empty()) r.return_path_candidates.push_back(a);
  bool read_report = false;
  for (std::string_view part : Parts(top.body, boundary)) {
    MimeEntity e = ParseEntity(part);
    const std::string type = MediaType(Get(e.headers, "content-type"));
    if (type == "message/delivery-status" || type == "message/global-delivery-status") {
      ReadDeliveryStatus(e.body, r);
      read_report = r.report_type == "delivery-status";
    } else if (type == "message/feedback-report") {
      ReadFeedbackReport(e.body, r);
      read_report = r.report_type == "feedback-report";
    } else if (type == "message/rfc822" || type == "text/rfc822-headers" ||
               type == "message/global" || type == "message/global-headers") {
      ReadReturnedMessage(e.body, r);
    }
  }
  if (!read_report)
    return Fail(Errc::kInvalidArgument, "the report has no " + r.report_type + " part");
  return r;
}

}  // namespace crmd::mail

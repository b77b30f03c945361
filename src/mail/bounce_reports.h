#pragma once
// Reports that come back to the bounce mailbox (docs/mail.md, "Bounce mailbox"): delivery
// status notifications (RFC 3464: multipart/report; report-type=delivery-status) and
// complaint reports in the Abuse Reporting Format (RFC 5965: multipart/report;
// report-type=feedback-report). Plain text in, plain values out: nothing here knows of
// contacts, campaigns or the database (thread-safe, stateless).
//
// A DSN's first recipient block decides: Action failed with a 5.x.x Status is a hard
// bounce; Action delayed, or failed with a 4.x.x Status, a soft bounce; delivered,
// relayed and expanded are accepted without effect. A feedback report is a complaint.
#include <string>
#include <string_view>
#include <vector>

#include "src/core/result.h"
#include "src/mail/provider_events.h"

namespace crmd::mail {

struct BounceReport {
  // The report's own Message-ID (as written, with its angle brackets), or
  // "sha256:<hex>" of the whole mail when it has none: the same mail, the same id.
  std::string report_id;
  ProviderEventKind kind = ProviderEventKind::kIgnored;
  std::string report_type;  // delivery-status | feedback-report
  std::string action;       // DSN Action (lower case); "" for a feedback report
  std::string status;       // DSN Status, e.g. "5.1.1"; "" for a feedback report
  std::string diagnostic;   // DSN Diagnostic-Code, or the feedback report's Feedback-Type
  std::string recipient;    // Final-Recipient / Original-Rcpt-To, when given
  // The Message-ID of the message the report is about (from the returned message or its
  // headers), when given.
  std::string original_message_id;
  // Addresses that may be crmd's VERP return path, most telling first: where the report
  // was delivered (Delivered-To, X-Original-To, Envelope-To, To), the feedback report's
  // Original-Mail-From, the returned message's Return-Path.
  std::vector<std::string> return_path_candidates;
};

// What an operator sees of any mail: its id (as BounceReport::report_id), Subject and From
// (each at most 200 bytes).
struct MailSummary {
  std::string id, subject, from;
};
MailSummary SummaryOf(std::string_view raw);

// kInvalidArgument ("not a delivery status notification or feedback report") when `raw`
// (an RFC 5322 message, CRLF or LF line endings) is not a multipart/report of either type
// with its report part.
Result<BounceReport> ParseBounceReport(std::string_view raw);

}  // namespace crmd::mail

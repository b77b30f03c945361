// crmctl campaign: a campaign's delivery counts, its per-recipient log, and the resend to
// the undelivered (shown first; done only with --yes).
#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "src/app/cli/commands.h"
#include "src/marketing/campaign_delivery.h"
#include "src/marketing/services.h"

namespace crmd::app::cli {

namespace {

constexpr const char* kUsage =
    "campaign report ID | campaign recipients ID [--status pending|sent|failed|skipped] "
    "[--limit N] [--cursor C] | campaign recipients ID --csv | campaign activate ID [--yes] | "
    "campaign resend ID [--yes]";

}  // namespace

int CampaignCommand(Context& ctx, const Args& args) {
  if (args.size() < 2) return Usage(kUsage);
  auto id = ParseId(args[1]);
  if (!id) return Usage(kUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  marketing::Services& marketing = *(*s)->marketing;
  const std::string& verb = args[0];
  if (verb == "report") {
    auto report = marketing.reports->CampaignReport(*id);
    if (!report) return PrintError(report.error(), "crmctl campaign report");
    PrintJson(*report);
    return 0;
  }
  if (verb == "recipients" && std::find(args.begin(), args.end(), "--csv") != args.end()) {
    auto rows = marketing.recipients_csv->WriteAll(*id, [](std::string_view bytes) {
      return std::fwrite(bytes.data(), 1, bytes.size(), stdout) == bytes.size();
    });
    if (!rows) return PrintError(rows.error(), "crmctl campaign recipients");
    if (std::fflush(stdout) != 0) return PrintError({Errc::kUnavailable, "could not write", {}});
    return 0;
  }
  if (verb == "recipients") {
    auto limit = IntFlag(args, "limit", 100);
    if (!limit || *limit < 1 || *limit > 500) return Usage(kUsage);
    auto page =
        marketing.delivery->Recipients(*id, Flag(args, "status").value_or(""),
                                       Flag(args, "cursor").value_or(""), static_cast<int>(*limit));
    if (!page) return PrintError(page.error(), "crmctl campaign recipients");
    std::printf("%-10s  %-32s  %-8s  %-5s  %-8s  %s\n", "contact", "email", "status", "round",
                "code", "reason");
    for (const auto& r : page->items) {
      std::printf("%-10lld  %-32s  %-8s  %-5lld  %-8s  %s\n", static_cast<long long>(r.contact_id),
                  r.email.c_str(), r.status.c_str(), static_cast<long long>(r.round),
                  r.smtp_code ? std::to_string(*r.smtp_code).c_str() : "-",
                  r.reason.value_or("").c_str());
    }
    if (page->next_cursor) std::printf("next: --cursor %s\n", page->next_cursor->c_str());
    return 0;
  }
  if (verb == "resend" || verb == "activate") {
    // The operator's confirmation is --yes: without it, the preview only.
    bool yes = false;
    for (const auto& a : args) yes = yes || a == "--yes";
    governance::Actor actor{.kind = "cli", .subject = "crmctl"};
    bool resend = verb == "resend";
    auto out = marketing::RunCampaignAction(
        marketing,
        resend ? marketing::CampaignAction::kResend : marketing::CampaignAction::kActivate, actor,
        *id, yes);
    if (!out)
      return PrintError(out.error(),
                        resend ? "crmctl campaign resend" : "crmctl campaign activate");
    PrintJson(*out);
    if (!yes) {
      std::fprintf(stderr, "nothing was changed: run again with --yes to %s\n", verb.c_str());
      return 1;
    }
    return 0;
  }
  return Usage(kUsage);
}

}  // namespace crmd::app::cli

// crmctl mail receiver ...: the provider event receivers (docs/mail.md "Provider event
// receivers"). Keys and passwords are read from files or stdin ("-"), never from the
// command line, where the process list would show them; no output ever holds one.
#include "src/marketing/mail_receivers.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "src/app/cli/commands.h"
#include "src/mail/mailbox_client.h"
#include "src/marketing/bounce_mailbox.h"

namespace crmd::app::cli {
namespace {

constexpr const char* kReceiverUsage =
    "mail receiver set <mailgun|postmark|sendgrid|ses> [--signing-key-file F] [--username U]\n"
    "       [--password-file F] [--public-key-file F] [--topic-arn ARN] [--enable|--disable]\n"
    "       (F: a file, or - for stdin) | list | show <provider> | enable <provider> |\n"
    "       disable <provider> | delete <provider> |\n"
    "       mailbox [--limit N]   (the bounce mailbox and the mails it could not attribute)";

// A secret from a file or stdin, without surrounding whitespace (a trailing newline).
Result<std::string> ReadSecretFile(const std::string& path) {
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path);
    if (!in) return Fail(Errc::kInvalidArgument, "cannot read " + path);
    text << in.rdbuf();
  }
  std::string s = text.str();
  size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  if (b == std::string::npos) return Fail(Errc::kInvalidArgument, path + " is empty");
  return s.substr(b, e - b + 1);
}

// The options of `set` after the provider; an error names the bad option.
Result<marketing::MailReceiverInput> SetOptions(const Args& rest) {
  marketing::MailReceiverInput in;
  for (size_t i = 0; i < rest.size(); ++i) {
    const std::string& o = rest[i];
    if (o == "--enable" || o == "--disable") {
      in.enabled = o == "--enable";
      continue;
    }
    if (i + 1 >= rest.size()) return Fail(Errc::kInvalidArgument, "unknown option " + o);
    const std::string& v = rest[++i];
    if (o == "--username") {
      in.username = v;
      continue;
    }
    if (o == "--topic-arn") {
      in.topic_arn = v;
      continue;
    }
    std::optional<std::string>* target = o == "--signing-key-file"  ? &in.signing_key
                                         : o == "--password-file"   ? &in.password
                                         : o == "--public-key-file" ? &in.public_key
                                                                    : nullptr;
    if (!target) return Fail(Errc::kInvalidArgument, "unknown option " + o);
    auto secret = ReadSecretFile(v);
    if (!secret) return Fail(secret.error());
    *target = std::move(*secret);
  }
  return in;
}

}  // namespace

// crmctl mail mailbox: the configuration (the URL without its password) and the mails left
// in the bounce mailbox because they could not be attributed, newest first.
int MailboxCommand(Context& ctx, Services& s, const Args& args) {
  int limit = 50;
  if (args.size() == 3 && args[1] == "--limit") {
    auto n = ParseId(args[2]);
    if (!n || *n > 1000) return PrintError(Error::Invalid("--limit must be 1 to 1000"));
    limit = static_cast<int>(*n);
  } else if (args.size() != 1) {
    return Usage(kReceiverUsage);
  }
  auto rows = s.db->Read([&](store::Conn& c) -> Result<nlohmann::json> {
    auto n = marketing::bounce_mailbox_repo::Count(c);
    if (!n) return Fail(n.error());
    auto list = marketing::bounce_mailbox_repo::List(c, limit);
    if (!list) return Fail(list.error());
    nlohmann::json items = nlohmann::json::array();
    for (const auto& u : *list) items.push_back(marketing::ToJson(u));
    return nlohmann::json{{"unattributed_count", *n}, {"unattributed", std::move(items)}};
  });
  if (!rows) return PrintError(rows.error());
  const Config& cfg = ctx.config();
  nlohmann::json out = {
      {"bounce_domain",
       cfg.bounce_domain.empty() ? nlohmann::json() : nlohmann::json(cfg.bounce_domain)},
      {"mailbox", cfg.bounce_mailbox_url.empty()
                      ? nlohmann::json()
                      : nlohmann::json(mail::RedactedMailboxUrl(cfg.bounce_mailbox_url))},
      {"poll_seconds", cfg.bounce_poll_seconds}};
  out.update(*rows);
  PrintJson(out);
  return 0;
}

int MailCommand(Context& ctx, const Args& args) {
  if (args.empty() || (args[0] != "receiver" && args[0] != "mailbox") ||
      (args[0] == "receiver" && args.size() < 2))
    return Usage(kReceiverUsage);
  auto s = ctx.services();
  if (!s) return PrintError(s.error());
  if (args[0] == "mailbox") return MailboxCommand(ctx, **s, args);
  marketing::MailReceivers& receivers = *(*s)->marketing->receivers;
  const std::string& verb = args[1];
  if (verb == "list" && args.size() == 2) {
    auto list = receivers.List();
    if (!list) return PrintError(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : *list) out.push_back(marketing::ToJson(r));
    PrintJson(out);
    return 0;
  }
  if (args.size() < 3) return Usage(kReceiverUsage);
  const std::string& provider = args[2];
  if (!marketing::MailReceivers::KnownProvider(provider))
    return PrintError(Error::Invalid("provider must be mailgun, postmark, sendgrid or ses"));
  Result<marketing::MailReceiver> done = Fail(Errc::kInvalidArgument, "");
  if (verb == "set") {
    auto in = SetOptions(Args(args.begin() + 3, args.end()));
    if (!in) return PrintError(in.error());
    done = receivers.Configure(provider, *in);
  } else if ((verb == "enable" || verb == "disable") && args.size() == 3) {
    done = receivers.Configure(provider, {.enabled = verb == "enable"});
  } else if (verb == "show" && args.size() == 3) {
    done = receivers.Get(provider);
  } else if (verb == "delete" && args.size() == 3) {
    if (auto st = receivers.Delete(provider); !st) return PrintError(st.error());
    PrintJson({{"deleted", provider}});
    return 0;
  } else {
    return Usage(kReceiverUsage);
  }
  if (!done) return PrintError(done.error());
  PrintJson(marketing::ToJson(*done));
  return 0;
}

}  // namespace crmd::app::cli

#include "src/app/cli/crmctl.h"

#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "src/app/cli/commands.h"
#include "src/core/config.h"

namespace crmd::app {
namespace {

using cli::Args;

struct Entry {
  const char* usage;
  std::function<int(cli::Context&, const Args&)> run;
};

std::map<std::string, Entry> Commands() {
  std::map<std::string, Entry> c;
  c["migrate"] = {"migrate                      apply pending database migrations",
                  cli::MigrateCommand};
  c["user"] = {
      "user create <email> [--role viewer|editor|administrator | --admin] | password <email> |\n"
      "       role <email> viewer|editor|administrator | disable <email> | enable <email> |\n"
      "       delete <email> | list   (password: one line on stdin)",
      cli::UserCommand};
  c["client"] = {"client list | revoke <client_id> | grant-scopes <client_id> \"<scopes>\"",
                 cli::ClientCommand};
  c["grant"] = {"grant list [--client <client_id>] | revoke <grant_id>", cli::GrantCommand};
  c["contacts"] = {
      "contacts import FILE|- [--list=L] [--tag=T] [--status=pending|subscribed] [--consent=NOTE]\n"
      "       [--existing=update|skip] [--events=true|false] [--dry_run=true|false]\n"
      "       [--delimiter=comma|semicolon|tab] [--map=column=field,...] | import-errors ID\n"
      "       | export [--status S] ... > contacts.csv | show EMAIL [--all]",
      cli::ContactsCommand};
  c["consent"] = {"consent list | revoke <client_id> <user_email>", cli::ConsentCommand};
  c["seed"] = {"seed [--contacts N] [--lists N] [--tags N] [--seed S]  fake contacts, lists, tags",
               cli::SeedCommand};
  c["contacts"] = {
      "contacts export [--status S] [--type T] [--source S] [--tag T] [--list L] [--query Q]\n"
      "       [--created_after TIME] [--created_before TIME]   the contacts as CSV on stdout",
      cli::ContactsCommand};
  c["campaign"] = {
      "campaign report|recipients|activate|resend ID [--yes]   delivery counts, per-recipient log, "
      "send\n       campaign recipients ID --csv   every recipient and its final state as CSV",
      cli::CampaignCommand};
  c["backup"] = {
      "backup <file>                online consistent copy of a SQLite database (crmd may run)",
      cli::BackupCommand};
  c["restore"] = {"restore <file> --yes         put a backup back (stop crmd first)",
                  cli::RestoreCommand};
  c["settings"] = {
      "settings show | settings approval-policy show|set JSON|reset   the settings; who approves\n"
      "       settings company-address [TEXT]   the postal address in email footers\n"
      "       settings test-recipients [ADDRESS|@DOMAIN ...]   who else may get test sends\n"
      "       settings presend-thresholds [JSON]   the pre-send check's audience thresholds",
      cli::SettingsCommand};
  c["suppression"] = {
      "suppression add <email|domain> [--reason R] | remove <id> | list [--reason R]\n"
      "       [--kind address|domain] [--email ADDRESS] | import <file> [--reason R]\n"
      "       (addresses and domains never mailed nor made subscribed again)",
      cli::SuppressionCommand};
  c["audit"] = {"audit [--limit N]            newest audit log rows (who changed what)",
                cli::AuditCommand};
  c["apikey"] = {"apikey create <name> [--admin]|list|enable <id>|disable <id>|delete <id>",
                 cli::ApiKeyCommand};
  c["form"] = {"form create <file.json> | update <id> <file.json> | list | get <id> | delete <id>",
               cli::FormCommand};
  c["template"] = {
      "template list | show <id> | create --name N --html FILE [--text FILE] |\n"
      "       update <id> --revision R [--name N] [--html FILE] [--text FILE] | delete <id>\n"
      "       (email templates: layouts with a {{content}} slot)",
      cli::TemplateCommand};
  c["webhook"] = {
      "webhook create <url> <event,...|all> | list | enable <id> | disable <id> | "
      "delete <id> | deliveries [<endpoint_id>] | attempts <delivery_id> | "
      "redeliver <delivery_id>",
      cli::WebhookCommand};
  c["hook"] = {
      "hook create <name> <mapping JSON> [<applies JSON>] [--hmac-secret S] | list | "
      "enable <id> | disable <id> | delete <id>   (incoming webhooks)",
      cli::HookCommand};
  c["mail"] = {
      "mail receiver set <mailgun|postmark|sendgrid|ses> [--signing-key-file F] [--username U]\n"
      "       [--password-file F] [--public-key-file F] [--topic-arn ARN] [--enable|--disable] |\n"
      "       list |\n"
      "       show|enable|disable|delete <provider>   (provider event receivers) |\n"
      "       mail mailbox [--limit N]   (the bounce mailbox: mails it could not attribute)",
      cli::MailCommand};
  c["copy"] = {
      "copy --from sqlite:PATH --to DATABASE_URL [--batch N] [--resync] [--verify-only]  "
      "move the site to another database (resumable, verified)",
      cli::CopyCommand};
  return c;
}

}  // namespace

int CrmctlMain(int argc, char** argv) {
  Args rest;
  std::vector<std::string> warnings;
  auto cfg = LoadConfig(argc, argv, &rest, &warnings);
  if (!cfg) {
    std::fprintf(stderr, "crmctl: %s\n", cfg.error().message.c_str());
    return 2;
  }
  for (const auto& w : warnings) std::fprintf(stderr, "crmctl: warning: %s\n", w.c_str());
  auto commands = Commands();
  if (rest.empty() || rest[0] == "help" || rest[0] == "--help") {
    std::printf("usage: crmctl [--database_url=URL] [--config=FILE] <command> [args]\n\n");
    for (auto& [name, e] : commands) std::printf("  %s\n", e.usage);
    return rest.empty() ? 2 : 0;
  }
  auto it = commands.find(rest[0]);
  if (it == commands.end()) {
    std::fprintf(stderr, "crmctl: unknown command %s (try crmctl help)\n", rest[0].c_str());
    return 2;
  }
  // `crmctl <command> --help` shows the command's usage and does nothing else.
  for (size_t i = 1; i < rest.size(); ++i) {
    if (rest[i] == "--help" || rest[i] == "-h") {
      std::printf("usage: crmctl [--database_url=URL] [--config=FILE] %s\n", it->second.usage);
      return 0;
    }
  }
  // Only `contacts` takes options of the --name=value shape; for any other command such a
  // word after the command is a config flag crmd does not know (a typo), refused as one.
  if (rest[0] != "contacts") {
    for (size_t i = 1; i < rest.size(); ++i) {
      if (rest[i].rfind("--", 0) == 0 && rest[i].find('=') != std::string::npos) {
        std::fprintf(stderr, "crmctl: unknown config key: %s\n",
                     rest[i].substr(2, rest[i].find('=') - 2).c_str());
        return 2;
      }
    }
  }
  cli::Context ctx(std::move(*cfg));
  return it->second.run(ctx, Args(rest.begin() + 1, rest.end()));
}

}  // namespace crmd::app

#pragma once
// crmctl's commands, one file per group. Each takes the words after its name (see cli.h
// for the exit codes) and calls the services of `ctx`, which builds them on first use.
#include "src/app/cli/cli.h"
#include "src/app/cli/services.h"

namespace crmd::app::cli {

int MigrateCommand(Context& ctx, const Args& args);   // migrate.cc
int UserCommand(Context& ctx, const Args& args);      // users.cc
int ClientCommand(Context& ctx, const Args& args);    // clients.cc
int GrantCommand(Context& ctx, const Args& args);     // grants.cc
int ConsentCommand(Context& ctx, const Args& args);   // consents.cc
int SeedCommand(Context& ctx, const Args& args);      // seed.cc
int AuditCommand(Context& ctx, const Args& args);     // audit.cc
int ApiKeyCommand(Context& ctx, const Args& args);    // apikeys.cc
int FormCommand(Context& ctx, const Args& args);      // forms.cc
int WebhookCommand(Context& ctx, const Args& args);   // webhooks.cc
int HookCommand(Context& ctx, const Args& args);      // hooks.cc
int CopyCommand(Context& ctx, const Args& args);      // copy.cc
int CampaignCommand(Context& ctx, const Args& args);  // campaigns.cc
int BackupCommand(Context& ctx, const Args& args);    // backup.cc
int RestoreCommand(Context& ctx, const Args& args);   // backup.cc
int SettingsCommand(Context& ctx, const Args& args);  // settings.cc
int ContactsCommand(Context& ctx, const Args& args);  // contacts.cc

int SuppressionCommand(Context& ctx, const Args& args);  // suppressions.cc
int MailCommand(Context& ctx, const Args& args);         // mail_receivers.cc
int TemplateCommand(Context& ctx, const Args& args);     // templates.cc

}  // namespace crmd::app::cli

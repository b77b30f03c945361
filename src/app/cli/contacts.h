// crmctl contacts: import and show (contacts.cc), export (contacts_export.cc).
#pragma once

#include "src/app/cli/commands.h"

namespace crmd::app::cli {

inline constexpr const char* kContactsUsage =
    "contacts import FILE|- [--list=L] [--tag=T] [--status=pending|subscribed] "
    "[--consent=NOTE] [--existing=update|skip] [--events=true|false] [--dry_run=true|false] "
    "[--delimiter=comma|semicolon|tab] [--map=column=field,...]\n"
    "       contacts import-errors ID\n"
    "       contacts show EMAIL [--all]\n"
    "       contacts export [--status S] [--type lead|customer] [--source S] [--tag ID|NAME] "
    "[--list ID|NAME] [--query PREFIX] [--created_after TIME] [--created_before TIME] "
    "> contacts.csv";

// crmctl contacts export: the filtered contacts as CSV on stdout.
int ExportContacts(Context& ctx, const Args& args);

}  // namespace crmd::app::cli

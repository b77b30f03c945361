#pragma once
// crmctl commands of the REST/webhooks module: apikey, form, webhook, hook. Each takes the
// arguments after its command word, prints to stdout/stderr and returns the exit code
// (0 ok, 1 failure, 2 usage). Secrets are printed once, at creation, and nowhere else.
#include <string>
#include <vector>

#include "src/core/config.h"

namespace crmd::rest {

int ApiKeyCommand(const Config& config, const std::vector<std::string>& args);
// crmctl form create <file.json> | update <id> <file.json> | list | get <id> | delete <id>
int FormCommand(const Config& config, const std::vector<std::string>& args);
int WebhookCommand(const Config& config, const std::vector<std::string>& args);
int HookCommand(const Config& config, const std::vector<std::string>& args);

}  // namespace crmd::rest

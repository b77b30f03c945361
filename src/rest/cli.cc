#include "src/rest/cli.h"

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/crm/api_keys.h"
#include "src/crm/forms.h"
#include "src/rest/helpers.h"
#include "src/store/db.h"

namespace crmd::rest {
namespace {

int PrintError(const Error& e) {
  std::fprintf(stderr, "crmctl: %s\n", e.message.c_str());
  if (!e.detail.empty()) std::fprintf(stderr, "  %s\n", e.detail.c_str());
  return 1;
}

int Usage(const char* text) {
  std::fprintf(stderr, "usage: crmctl %s\n", text);
  return 2;
}

void PrintJson(const nlohmann::json& j) { std::printf("%s\n", j.dump(2).c_str()); }

struct Env {
  std::unique_ptr<store::Database> db;
  SystemClock clock;
  SecureRandom random;
};

Result<std::unique_ptr<Env>> OpenEnv(const Config& config) {
  auto db = store::Open(config.database_url, 1);
  if (!db) return Fail(db.error());
  auto env = std::make_unique<Env>();
  env->db = std::move(*db);
  return env;
}

}  // namespace

int ApiKeyCommand(const Config& config, const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "apikey create <name> [--admin] | list | enable <id> | disable <id> | delete <id>";
  if (args.empty()) return Usage(kUsage);
  auto env = OpenEnv(config);
  if (!env) return PrintError(env.error());
  crm::ApiKeys keys(*(*env)->db, (*env)->clock, (*env)->random);
  const std::string& verb = args[0];
  if (verb == "create") {
    if (args.size() < 2) return Usage(kUsage);
    bool admin = args.size() > 2 && args[2] == "--admin";
    auto created = keys.Create(args[1], admin ? crm::ApiKeyRole::kAdmin : crm::ApiKeyRole::kIntegration);
    if (!created) return PrintError(created.error());
    auto j = crm::ApiKeyJson(created->key);
    j["key"] = created->secret;
    PrintJson(j);
    std::fprintf(stderr, "Store the key now: it is not shown again.\n");
    return 0;
  }
  if (verb == "list") {
    auto list = keys.List();
    if (!list) return PrintError(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& k : *list) out.push_back(crm::ApiKeyJson(k));
    PrintJson(out);
    return 0;
  }
  if (verb == "enable" || verb == "disable" || verb == "delete") {
    if (args.size() < 2) return Usage(kUsage);
    auto id = ParseId(args[1]);
    if (!id) return Usage(kUsage);
    if (verb == "delete") {
      if (auto st = keys.Delete(*id); !st) return PrintError(st.error());
      std::printf("deleted API key %lld\n", static_cast<long long>(*id));
      return 0;
    }
    auto key = keys.SetEnabled(*id, verb == "enable");
    if (!key) return PrintError(key.error());
    PrintJson(crm::ApiKeyJson(*key));
    return 0;
  }
  return Usage(kUsage);
}

namespace {

// A form definition from a JSON file ("-" reads stdin).
Result<nlohmann::json> ReadJsonFile(const std::string& path) {
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path);
    if (!in) return Fail(Errc::kInvalidArgument, "cannot read " + path);
    text << in.rdbuf();
  }
  auto j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded()) return Fail(Errc::kInvalidArgument, path + " is not valid JSON");
  return j;
}

int PrintFormError(const Error& e) {
  std::fprintf(stderr, "crmctl: %s\n", e.message.c_str());
  auto all = nlohmann::json::parse(e.detail, nullptr, false);
  if (all.is_array())
    for (const auto& x : all)
      std::fprintf(stderr, "  %s: %s\n", x.value("field", "").c_str(), x.value("message", "").c_str());
  return 1;
}

}  // namespace

int FormCommand(const Config& config, const std::vector<std::string>& args) {
  constexpr const char* kUsage =
      "form create <file.json> | update <id> <file.json> | list | get <id> | delete <id>";
  if (args.empty()) return Usage(kUsage);
  auto env = OpenEnv(config);
  if (!env) return PrintError(env.error());
  crm::FormRepo forms(*(*env)->db, (*env)->clock, nullptr);
  const std::string& verb = args[0];
  if (verb == "create" && args.size() == 2) {
    auto def = ReadJsonFile(args[1]);
    if (!def) return PrintError(def.error());
    auto f = forms.Create(*def);
    if (!f) return PrintFormError(f.error());
    PrintJson(crm::ToJson(*f));
    return 0;
  }
  if (verb == "update" && args.size() == 3) {
    auto id = ParseId(args[1]);
    if (!id) return Usage(kUsage);
    auto def = ReadJsonFile(args[2]);
    if (!def) return PrintError(def.error());
    auto f = forms.Update(*id, *def);
    if (!f) return PrintFormError(f.error());
    PrintJson(crm::ToJson(*f));
    return 0;
  }
  if (verb == "list" && args.size() == 1) {
    auto list = forms.List();
    if (!list) return PrintError(list.error());
    nlohmann::json out = nlohmann::json::array();
    for (const auto& f : *list)
      out.push_back({{"id", f.id}, {"name", f.name}, {"require_key", f.require_key},
                     {"fields", f.fields.size()}, {"generated_contacts", f.generated_contacts}});
    PrintJson(out);
    return 0;
  }
  if ((verb == "get" || verb == "delete") && args.size() == 2) {
    auto id = ParseId(args[1]);
    if (!id) return Usage(kUsage);
    if (verb == "delete") {
      if (auto st = forms.Delete(*id); !st) return PrintError(st.error());
      std::printf("deleted form %lld\n", static_cast<long long>(*id));
      return 0;
    }
    auto f = forms.Get(*id);
    if (!f) return PrintError(f.error());
    PrintJson(crm::ToJson(*f));
    return 0;
  }
  return Usage(kUsage);
}

}  // namespace crmd::rest

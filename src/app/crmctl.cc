#include "src/app/crmctl.h"

#include <cstdio>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "auth/clients.h"
#include "auth/consent.h"
#include "auth/scopes.h"
#include "auth/token_store.h"
#include "auth/users.h"
#include "src/core/clock.h"
#include "src/core/config.h"
#include "src/rest/cli.h"
#include "src/store/db.h"
#include "src/core/clock.h"
#include "src/crm/audit.h"
#include "src/crm/seed.h"
#include "src/crm/marketing.h"
#include "src/crm/services.h"
#include "src/core/random.h"

namespace crmd::app {
namespace {

using Args = std::vector<std::string>;
using Command = std::function<int(const Config&, const Args&)>;

int Migrate(const Config& cfg, const Args&) {
  auto db = store::Open(cfg.database_url, 1);  // Open() applies pending migrations
  if (!db) {
    std::fprintf(stderr, "crmctl: %s %s\n", db.error().message.c_str(), db.error().detail.c_str());
    return 1;
  }
  std::printf("migrations applied\n");
  return 0;
}

// --- authz commands: users, OAuth clients, grants, consents ---

std::unique_ptr<store::Database> OpenOrDie(const Config& cfg) {
  auto db = store::Open(cfg.database_url, 1);
  if (!db) {
    std::fprintf(stderr, "crmctl: %s %s\n", db.error().message.c_str(), db.error().detail.c_str());
    return nullptr;
  }
  return std::move(*db);
}

int Report(const Error& e) {
  std::fprintf(stderr, "crmctl: %s\n", e.message.empty() ? e.detail.c_str() : e.message.c_str());
  return 1;
}

// Reads one line from stdin (the password), without echo when stdin is a terminal's
// pipe; trailing CR/LF removed.
std::string ReadPasswordLine() {
  std::string line;
  std::getline(std::cin, line);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

int UserCmd(const Config& cfg, const Args& a) {
  if (a.empty()) return 2;
  auto db = OpenOrDie(cfg);
  if (!db) return 1;
  SystemClock clock;
  auth::Users users(*db, clock);
  if (a[0] == "create" && a.size() >= 2) {
    bool admin = a.size() >= 3 && a[2] == "--admin";
    auto u = users.Create(a[1], ReadPasswordLine(), admin);
    if (!u) return Report(u.error());
    std::printf("created user %s%s (id %lld)\n", u->email.c_str(), admin ? " [admin]" : "",
                static_cast<long long>(u->id));
    return 0;
  }
  if (a[0] == "password" && a.size() == 2) {
    if (auto st = users.SetPassword(a[1], ReadPasswordLine()); !st) return Report(st.error());
    std::printf("password changed for %s\n", a[1].c_str());
    return 0;
  }
  if (a[0] == "list") {
    auto list = users.List();
    if (!list) return Report(list.error());
    for (const auto& u : *list)
      std::printf("%lld\t%s\t%s\t%s\n", static_cast<long long>(u.id), u.email.c_str(),
                  u.is_admin ? "admin" : "-", FormatRfc3339(u.created_at).c_str());
    return 0;
  }
  std::fprintf(stderr, "usage: crmctl user create <email> [--admin] | password <email> | list\n");
  return 2;
}

int ClientCmd(const Config& cfg, const Args& a) {
  auto db = OpenOrDie(cfg);
  if (!db) return 1;
  SystemClock clock;
  auth::ClientStore clients(*db, clock);
  if (!a.empty() && a[0] == "list") {
    auto list = clients.List();
    if (!list) return Report(list.error());
    for (const auto& c : *list) {
      std::string uris;
      for (const auto& u : c.redirect_uris) uris += (uris.empty() ? "" : ",") + u;
      std::printf("%s\t%s\t%s\t%s\t%s\t%s%s\n", c.client_id.c_str(), c.source.c_str(),
                  c.token_endpoint_auth_method.c_str(), c.client_name.value_or("-").c_str(), uris.c_str(),
                  c.revoked ? "revoked" : "active",
                  c.allowed_scopes ? ("\tallowed_scopes=" + *c.allowed_scopes).c_str() : "");
    }
    return 0;
  }
  if (a.size() == 2 && a[0] == "revoke") {
    if (auto st = clients.Revoke(a[1]); !st) return Report(st.error());
    std::printf("revoked client %s and its grants\n", a[1].c_str());
    return 0;
  }
  if (a.size() == 3 && a[0] == "grant-scopes") {
    auto scopes = auth::ParseScope(a[2]);
    if (!scopes) return Report(scopes.error());
    auto client = clients.Find(a[1]);
    if (!client) return Report(client.error());
    if (!*client) return Report(Error::NotFound("unknown client"));
    if (!(*client)->AllowsGrant("client_credentials"))
      std::fprintf(stderr, "crmctl: note: client %s is not registered for client_credentials\n", a[1].c_str());
    if (auto st = clients.SetAllowedScopes(a[1], auth::JoinScope(*scopes)); !st) return Report(st.error());
    std::printf("client %s may now use: %s\n", a[1].c_str(), auth::JoinScope(*scopes).c_str());
    return 0;
  }
  std::fprintf(stderr, "usage: crmctl client list | revoke <client_id> | grant-scopes <client_id> \"<scopes>\"\n");
  return 2;
}

int GrantCmd(const Config& cfg, const Args& a) {
  auto db = OpenOrDie(cfg);
  if (!db) return 1;
  SystemClock clock;
  if (!a.empty() && a[0] == "list") {
    std::optional<std::string> client;
    if (a.size() == 3 && a[1] == "--client") client = a[2];
    auto rows = db->Read([&](store::Conn& c) {
      std::string sql =
          "SELECT g.grant_id, g.client_id, COALESCE(u.email, '-'), g.scope, g.created_at, g.revoked_at "
          "FROM grants g LEFT JOIN users u ON u.id = g.user_id ";
      if (client) return c.Query(sql + "WHERE g.client_id = ? ORDER BY g.created_at", {*client});
      return c.Query(sql + "ORDER BY g.created_at");
    });
    if (!rows) return Report(rows.error());
    for (const auto& r : *rows)
      std::printf("%s\t%s\t%s\t%s\t%s\t%s\n", r.Str(0).c_str(), r.Str(1).c_str(), r.Str(2).c_str(),
                  r.Str(3).c_str(), FormatRfc3339(r.Int(4)).c_str(),
                  r.IsNull(5) ? "active" : ("revoked " + FormatRfc3339(r.Int(5))).c_str());
    return 0;
  }
  if (a.size() == 2 && a[0] == "revoke") {
    auto n = db->Write([&](store::Conn& c) -> Result<int64_t> {
      auto found = c.QueryOne("SELECT 1 FROM grants WHERE grant_id = ?", {a[1]});
      if (!found) return Fail(found.error());
      if (!*found) return Fail(Errc::kNotFound, "unknown grant");
      if (auto st = auth::RevokeGrant(c, a[1], clock.NowUnix()); !st) return Fail(st.error());
      return 1;
    });
    if (!n) return Report(n.error());
    std::printf("revoked grant %s and its tokens\n", a[1].c_str());
    return 0;
  }
  std::fprintf(stderr, "usage: crmctl grant list [--client <client_id>] | revoke <grant_id>\n");
  return 2;
}

int ConsentCmd(const Config& cfg, const Args& a) {
  auto db = OpenOrDie(cfg);
  if (!db) return 1;
  SystemClock clock;
  auth::Consents consents(*db, clock);
  if (!a.empty() && a[0] == "list") {
    auto list = consents.List();
    if (!list) return Report(list.error());
    for (const auto& c : *list)
      std::printf("%s\t%s\t%s\t%s\t%s\n", c.client_id.c_str(), c.user_email.c_str(), c.scope.c_str(),
                  FormatRfc3339(c.created_at).c_str(),
                  c.revoked_at ? ("revoked " + FormatRfc3339(*c.revoked_at)).c_str() : "active");
    return 0;
  }
  if (a.size() == 3 && a[0] == "revoke") {
    auth::Users users(*db, clock);
    auto user = users.FindByEmail(a[2]);
    if (!user) return Report(user.error());
    if (!*user) return Report(Error::NotFound("unknown user"));
    auto n = consents.Revoke(a[1], (*user)->id);
    if (!n) return Report(n.error());
    std::printf("revoked %lld consent(s) of %s for %s, and its grants\n", static_cast<long long>(*n),
                (*user)->email.c_str(), a[1].c_str());
    return 0;
  }
  std::fprintf(stderr, "usage: crmctl consent list | revoke <client_id> <user_email>\n");
  return 2;
}

// --- crm (contacts helper): seed, audit ---
// Reads "--name N" or "--name=N" from args; `fallback` when absent. -1 on a malformed number.
int64_t IntFlag(const Args& args, const std::string& name, int64_t fallback) {
  for (size_t i = 0; i < args.size(); ++i) {
    std::string v;
    if (args[i] == "--" + name && i + 1 < args.size()) v = args[i + 1];
    else if (args[i].rfind("--" + name + "=", 0) == 0) v = args[i].substr(name.size() + 3);
    else continue;
    try {
      return std::stoll(v);
    } catch (...) {
      return -1;
    }
  }
  return fallback;
}

int SeedCommand(const Config& cfg, const Args& args) {
  int64_t contacts = IntFlag(args, "contacts", 1000);
  if (contacts < 0) {
    std::fprintf(stderr, "crmctl seed: --contacts needs a number\n");
    return 2;
  }
  auto db = store::Open(cfg.database_url, 1);
  if (!db) {
    std::fprintf(stderr, "crmctl: %s %s\n", db.error().message.c_str(), db.error().detail.c_str());
    return 1;
  }
  SystemClock clock;
  auto r = crm::Seed(**db, {.contacts = contacts,
                            .lists = static_cast<int>(IntFlag(args, "lists", 8)),
                            .tags = static_cast<int>(IntFlag(args, "tags", 12)),
                            .seed = static_cast<uint32_t>(IntFlag(args, "seed", 42)),
                            .now = clock.NowUnix()});
  if (!r) {
    std::fprintf(stderr, "crmctl seed: %s %s\n", r.error().message.c_str(), r.error().detail.c_str());
    return 1;
  }
  std::printf("seeded %lld contacts, %lld lists, %lld tags, %lld memberships\n",
              static_cast<long long>(r->contacts), static_cast<long long>(r->lists),
              static_cast<long long>(r->tags), static_cast<long long>(r->memberships));
  // Campaigns, automations and sequences over the seeded lists and tags.
  SecureRandom random;
  auto services = crm::MakeServices({.db = db->get(), .clock = &clock, .random = &random});
  if (!services) {
    std::fprintf(stderr, "crmctl seed: %s\n", services.error().message.c_str());
    return 1;
  }
  if (auto st = crm::InstallMarketing(**services); !st) {
    std::fprintf(stderr, "crmctl seed: %s\n", st.error().message.c_str());
    return 1;
  }
  if (auto st = crm::SeedMarketing(**services, crm::Actor{.kind = "cli", .subject = "crmctl"}); !st) {
    std::fprintf(stderr, "crmctl seed: %s %s\n", st.error().message.c_str(), st.error().detail.c_str());
    return 1;
  }
  std::printf("seeded campaigns, automations and sequences\n");
  return 0;
}

int AuditCommand(const Config& cfg, const Args& args) {
  int64_t limit = IntFlag(args, "limit", 50);
  if (limit <= 0) {
    std::fprintf(stderr, "crmctl audit: --limit needs a positive number\n");
    return 2;
  }
  auto db = store::Open(cfg.database_url, 1);
  if (!db) {
    std::fprintf(stderr, "crmctl: %s %s\n", db.error().message.c_str(), db.error().detail.c_str());
    return 1;
  }
  SystemClock clock;
  crm::AuditLog audit(&clock);
  auto rows = (*db)->Read([&](store::Conn& c) { return audit.Recent(c, static_cast<int>(limit)); });
  if (!rows) {
    std::fprintf(stderr, "crmctl audit: %s\n", rows.error().message.c_str());
    return 1;
  }
  std::printf("%-20s  %-8s  %-24s  %-20s  %-26s  %-18s  %s\n", "when", "via", "subject", "client",
              "action", "target", "revision");
  for (const auto& r : *rows) {
    std::string ids;
    for (auto id : r.entry.target_ids) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    std::string rev = (r.entry.revision_before ? std::to_string(*r.entry.revision_before) : "-") +
                      "->" + (r.entry.revision_after ? std::to_string(*r.entry.revision_after) : "-");
    std::printf("%-20s  %-8s  %-24s  %-20s  %-26s  %-18s  %s\n", FormatRfc3339(r.occurred_at).c_str(),
                r.actor.kind.c_str(), r.actor.subject.c_str(), r.actor.client_id.c_str(),
                r.entry.action.c_str(), (r.entry.target_type + ":" + ids).c_str(), rev.c_str());
  }
  return 0;
}

struct Entry {
  const char* usage;
  Command run;
};

std::map<std::string, Entry> Commands() {
  std::map<std::string, Entry> c;
  c["migrate"] = {"migrate                      apply pending database migrations", Migrate};
  // --- module commands (each module adds its own below) ---
  c["user"] = {"user create <email> [--admin] | password <email> | list   (password: one line on stdin)",
               UserCmd};
  c["client"] = {"client list | revoke <client_id> | grant-scopes <client_id> \"<scopes>\"", ClientCmd};
  c["grant"] = {"grant list [--client <client_id>] | revoke <grant_id>", GrantCmd};
  c["consent"] = {"consent list | revoke <client_id> <user_email>", ConsentCmd};
  c["seed"] = {"seed [--contacts N] [--lists N] [--tags N] [--seed S]  fake contacts, lists, tags", SeedCommand};
  c["audit"] = {"audit [--limit N]            newest audit log rows (who changed what)", AuditCommand};

  c["apikey"] = {"apikey create <name> [--admin]|list|enable <id>|disable <id>|delete <id>",
                 rest::ApiKeyCommand};
  c["form"] = {"form create <file.json> | update <id> <file.json> | list | get <id> | delete <id>",
               rest::FormCommand};
  c["webhook"] = {"webhook create <url> <event,...|all> | list | enable <id> | disable <id> | "
                  "delete <id> | deliveries [<endpoint_id>] | attempts <delivery_id> | "
                  "redeliver <delivery_id>",
                  rest::WebhookCommand};
  c["hook"] = {"hook create <name> <mapping JSON> [<applies JSON>] [--hmac-secret S] | list | "
               "enable <id> | disable <id> | delete <id>   (incoming webhooks)",
               rest::HookCommand};
  return c;
}

}  // namespace

int CrmctlMain(int argc, char** argv) {
  Args rest;
  auto cfg = LoadConfig(argc, argv, &rest);
  if (!cfg) {
    std::fprintf(stderr, "crmctl: %s\n", cfg.error().message.c_str());
    return 2;
  }
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
  return it->second.run(*cfg, Args(rest.begin() + 1, rest.end()));
}

}  // namespace crmd::app

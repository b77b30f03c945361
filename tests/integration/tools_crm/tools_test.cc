// Every CRM tool (contacts, lists, tags, settings, confirm_action) through /mcp: the
// success path with its effect read back through other tools, a scope refusal (HTTP 403
// insufficient_scope naming the scope, nothing written), a schema violation (a tool error
// naming the field, nothing written) and, where the tool takes an id, not_found.
#include <functional>
#include <ostream>
#include <set>

#include "src/app/services.h"
#include "tests/integration/tools_crm/fixture.h"

namespace crmd::testing {
namespace {

using nlohmann::json;

using Setup = std::function<json(CrmTools&, McpClient&)>;
using Verify = std::function<void(CrmTools&, McpClient&, const json& args, const json& out)>;

struct ToolCase {
  std::string tool;
  // The scope whose absence is a 403; for confirm_action the pending action's scope.
  std::string scope;
  // Makes the records the call needs; returns valid arguments.
  Setup setup;
  // Asserts the call's real effect, reading it back through other tools.
  Verify verify;
  json invalid;  // violates the input schema
  std::string invalid_field;
  // Arguments naming a record that does not exist (other records may be made first);
  // empty when the tool takes no id.
  Setup missing;
  std::string missing_code = "not_found";
  // Instead of `missing`, for a tool that reports a missing record per item.
  std::function<void(CrmTools&, McpClient&)> missing_check;
};

// gtest prints a failing parameter with this instead of its bytes.
void PrintTo(const ToolCase& c, std::ostream* os) { *os << c.tool; }

// Helpers reachable from the case lambdas (they only see CrmTools&).
class Tools : public CrmTools {
 public:
  using CrmTools::Count;
  using CrmTools::Err;
  using CrmTools::FindContact;
  using CrmTools::NewContact;
  using CrmTools::NewList;
  using CrmTools::NewTag;
  using CrmTools::Ok;
  using CrmTools::Preview;
};
Tools& T(CrmTools& t) { return static_cast<Tools&>(t); }

json Names(const json& items, const char* key = "name") {
  json out = json::array();
  for (const auto& x : items) out.push_back(x.value(key, ""));
  return out;
}

json Read(CrmTools& t, McpClient& c, const std::string& tool, const json& args) {
  return T(t).Ok(c, tool, args);
}

json ByEmail(CrmTools& t, McpClient& c, const std::string& email) {
  return Read(t, c, "get_contact", {{"email", email}})["contact"];
}

int64_t RevisionOf(CrmTools& t, McpClient& c, const std::string& getter, const std::string& noun,
                   int64_t id) {
  return Read(t, c, getter, {{"id", id}})[noun].value("revision", int64_t{0});
}

Setup Args(json args) {
  return [args](CrmTools&, McpClient&) { return args; };
}

// The group tools are the same for lists and tags; `noun` is list or tag.
std::vector<ToolCase> GroupCases(const std::string& noun) {
  const std::string plural = noun + "s";
  const std::string member_tool = noun == "list" ? "add_contact_to_lists" : "add_contact_tags";
  auto add_member = [member_tool, plural](CrmTools& t, McpClient& c, int64_t contact, int64_t g) {
    Read(t, c, member_tool, {{"contact_ids", {contact}}, {plural, {g}}});
  };
  auto create = [noun](CrmTools& t, McpClient& c, const std::string& name) {
    return noun == "list" ? T(t).NewList(c, name) : T(t).NewTag(c, name);
  };
  return {
      {"list_" + plural,
       plural + ":read",
       [=](CrmTools& t, McpClient& c) {
         int64_t a1 = create(t, c, "alpha-1");
         create(t, c, "alpha-2");
         create(t, c, "beta");
         add_member(t, c, T(t).NewContact(c, "member@example.com"), a1);
         return json{{"query", "alpha"}, {"limit", 1}};
       },
       [=](CrmTools& t, McpClient& c, const json& args, const json& out) {
         ASSERT_EQ(out["items"].size(), 1u) << out.dump();
         EXPECT_EQ(out["items"][0]["name"], "alpha-1");
         EXPECT_EQ(out["items"][0]["member_count"], 1);
         ASSERT_TRUE(out["next_cursor"].is_string()) << out.dump();
         json next = args;
         next["cursor"] = out["next_cursor"];
         json p2 = Read(t, c, "list_" + plural, next);
         EXPECT_EQ(Names(p2["items"]), json::array({"alpha-2"}));
         EXPECT_TRUE(p2["next_cursor"].is_null()) << p2.dump();
         EXPECT_EQ(Names(Read(t, c, "list_" + plural, json::object())["items"]),
                   json::array({"alpha-1", "alpha-2", "beta"}));
       },
       {{"limit", 0}},
       "limit",
       nullptr},
      {"get_" + noun,
       plural + ":read",
       [=](CrmTools& t, McpClient& c) {
         int64_t g = create(t, c, "Partners");
         add_member(t, c, T(t).NewContact(c, "partner@example.com"), g);
         // A draft user of the group: reported in used_by, not blocking.
         if (noun == "list") {
           Read(t, c, "create_campaign", {{"name", "Promo"}, {"audience", {{"lists", {g}}}}});
         } else {
           Read(t, c, "create_automation",
                {{"name", "Promo"}, {"trigger", {{"type", "tag_added"}, {"tag_id", g}}}});
         }
         return json{{"id", g}};
       },
       [=](CrmTools& t, McpClient& c, const json& args, const json& out) {
         const json& g = out[noun];
         EXPECT_EQ(g["id"], args["id"]);
         EXPECT_EQ(g["name"], "Partners");
         EXPECT_EQ(g["member_count"], 1);
         ASSERT_EQ(g["used_by"].size(), 1u) << out.dump();
         EXPECT_EQ(g["used_by"][0]["kind"], noun == "list" ? "campaign" : "automation");
         EXPECT_EQ(g["used_by"][0]["name"], "Promo");
         EXPECT_EQ(g["used_by"][0]["role"], noun == "list" ? "audience" : "trigger");
         EXPECT_EQ(g["used_by"][0]["blocking"], false);
         EXPECT_EQ(Read(t, c, "get_" + noun, {{"name", "Partners"}})[noun]["id"], args["id"]);
       },
       {{"id", 0}},
       "id",
       Args({{"id", 999999}})},
      {"create_" + noun,
       plural + ":write",
       Args({{"name", "Fresh"}, {"description", "new one"}}),
       [=](CrmTools& t, McpClient& c, const json&, const json& out) {
         json got = Read(t, c, "get_" + noun, {{"name", "Fresh"}})[noun];
         EXPECT_EQ(got["id"], out[noun]["id"]);
         EXPECT_EQ(got["description"], "new one");
         EXPECT_EQ(got["member_count"], 0);
         EXPECT_EQ(Names(Read(t, c, "list_" + plural, json::object())["items"]),
                   json::array({"Fresh"}));
       },
       {{"name", ""}},
       "name",
       nullptr},
      {"update_" + noun,
       plural + ":write",
       [=](CrmTools& t, McpClient& c) {
         int64_t g = create(t, c, "Before");
         return json{{"id", g},
                     {"expected_revision", RevisionOf(t, c, "get_" + noun, noun, g)},
                     {"name", "After"},
                     {"description", "renamed"}};
       },
       [=](CrmTools& t, McpClient& c, const json& args, const json& out) {
         EXPECT_EQ(out[noun]["revision"], args["expected_revision"].get<int64_t>() + 1);
         json got = Read(t, c, "get_" + noun, {{"name", "After"}})[noun];
         EXPECT_EQ(got["id"], args["id"]);
         EXPECT_EQ(got["description"], "renamed");
         EXPECT_EQ(got["revision"], out[noun]["revision"]);
         T(t).Err(c, "get_" + noun, {{"name", "Before"}}, "not_found");
       },
       {{"id", 1}, {"expected_revision", 0}},
       "expected_revision",
       Args({{"id", 999999}, {"expected_revision", 1}})},
      {"delete_" + noun,
       plural + ":delete",
       [=](CrmTools& t, McpClient& c) {
         int64_t g = create(t, c, "Doomed");
         add_member(t, c, T(t).NewContact(c, "doomed-member@example.com"), g);
         return json{{"id", g}};
       },
       [=](CrmTools& t, McpClient& c, const json& args, const json& out) {
         EXPECT_EQ(out["status"], "confirmation_required");
         EXPECT_EQ(out["preview"][noun]["member_count"], 1) << out.dump();
         EXPECT_EQ(Read(t, c, "get_" + noun, args)[noun]["name"], "Doomed");  // still there
         json done =
             Read(t, c, "confirm_action", {{"confirmation_token", out["confirmation_token"]}});
         EXPECT_EQ(done["status"], "done");
         EXPECT_EQ(done["result"]["memberships_removed"], 1);
         T(t).Err(c, "get_" + noun, args, "not_found");
         json member = ByEmail(t, c, "doomed-member@example.com");  // the contact stays
         EXPECT_EQ(member[plural].size(), 0u) << member.dump();
       },
       {{"id", "seven"}},
       "id",
       Args({{"id", 999999}})},
  };
}

std::vector<ToolCase> ContactCases() {
  return {
      {"list_contacts",
       "contacts:read",
       [](CrmTools& t, McpClient& c) {
         T(t).NewContact(c, "ann@example.com", {{"tags", {"vip"}}});
         T(t).NewContact(c, "bob@example.com");
         T(t).NewContact(c, "cat@example.com", {{"tags", {"vip"}}, {"status", "unsubscribed"}});
         return json{{"tag", "vip"}, {"status", "subscribed"}};
       },
       [](CrmTools& t, McpClient& c, const json&, const json& out) {
         EXPECT_EQ(Names(out["items"], "email"), json::array({"ann@example.com"}));
         EXPECT_TRUE(out["next_cursor"].is_null());
         EXPECT_EQ(Names(Read(t, c, "list_contacts", {{"tag", "vip"}})["items"], "email"),
                   json::array({"ann@example.com", "cat@example.com"}));
         EXPECT_EQ(Read(t, c, "list_contacts", json::object())["items"].size(), 3u);
       },
       {{"status", "spam"}},
       "status",
       Args({{"tag", 999999}})},
      {"get_contact",
       "contacts:read",
       [](CrmTools& t, McpClient& c) {
         T(t).NewList(c, "News");
         return json{{"id", T(t).NewContact(
                                c, "jane@example.com",
                                {{"first_name", "Jane"}, {"tags", {"vip"}}, {"lists", {"News"}}})}};
       },
       [](CrmTools& t, McpClient& c, const json& args, const json& out) {
         const json& k = out["contact"];
         EXPECT_EQ(k["id"], args["id"]);
         EXPECT_EQ(k["email"], "jane@example.com");
         EXPECT_EQ(k["first_name"], "Jane");
         EXPECT_EQ(Names(k["tags"]), json::array({"vip"}));
         EXPECT_EQ(Names(k["lists"]), json::array({"News"}));
         EXPECT_EQ(ByEmail(t, c, "JANE@example.com")["id"], args["id"]);
       },
       {{"id", "seven"}},
       "id",
       Args({{"id", 999999}})},
      {"create_contact",
       "contacts:write",
       [](CrmTools& t, McpClient& c) {
         T(t).NewList(c, "Customers");
         return json{{"email", "New.Person@Example.com"},
                     {"first_name", "New"},
                     {"type", "customer"},
                     {"tags", {"fresh"}},
                     {"lists", {"Customers"}}};
       },
       [](CrmTools& t, McpClient& c, const json&, const json& out) {
         EXPECT_EQ(out["contact"]["email"], "new.person@example.com");
         json k = ByEmail(t, c, "new.person@example.com");
         EXPECT_EQ(k["id"], out["contact"]["id"]);
         EXPECT_EQ(k["first_name"], "New");
         EXPECT_EQ(k["type"], "customer");
         EXPECT_EQ(k["status"], "subscribed");
         EXPECT_EQ(k["source"], "mcp");
         EXPECT_EQ(Read(t, c, "get_tag", {{"name", "fresh"}})["tag"]["member_count"], 1);
         EXPECT_EQ(Read(t, c, "get_list", {{"name", "Customers"}})["list"]["member_count"], 1);
       },
       {{"first_name", "No email"}},
       "email",
       Args({{"email", "orphan@example.com"}, {"lists", {999999}}})},
      {"update_contact",
       "contacts:write",
       [](CrmTools& t, McpClient& c) {
         int64_t id = T(t).NewContact(c, "upd@example.com", {{"first_name", "Old"}});
         return json{{"id", id},
                     {"expected_revision", RevisionOf(t, c, "get_contact", "contact", id)},
                     {"first_name", "New"},
                     {"custom_fields", {{"plan", "pro"}}}};
       },
       [](CrmTools& t, McpClient& c, const json& args, const json& out) {
         int64_t rev = args["expected_revision"].get<int64_t>() + 1;
         EXPECT_EQ(out["contact"]["revision"], rev);
         json k = Read(t, c, "get_contact", {{"id", args["id"]}})["contact"];
         EXPECT_EQ(k["first_name"], "New");
         EXPECT_EQ(k["custom_fields"]["plan"], "pro");
         EXPECT_EQ(k["revision"], rev);
       },
       {{"id", 1}},
       "expected_revision",
       Args({{"id", 999999}, {"expected_revision", 1}})},
      {"upsert_contacts_bulk",
       "contacts:write",
       [](CrmTools& t, McpClient& c) {
         T(t).NewContact(c, "old@example.com", {{"first_name", "Before"}});
         return json{{"contacts",
                      {{{"email", "old@example.com"}, {"first_name", "After"}},
                       {{"email", "fresh@example.com"}, {"first_name", "Fresh"}}}}};
       },
       [](CrmTools& t, McpClient& c, const json&, const json& out) {
         EXPECT_EQ(out["created"], 1);
         EXPECT_EQ(out["updated"], 1);
         EXPECT_EQ(out["failed"], 0);
         EXPECT_EQ(out["results"][0]["outcome"], "updated");
         EXPECT_EQ(out["results"][1]["outcome"], "created");
         EXPECT_EQ(ByEmail(t, c, "old@example.com")["first_name"], "After");
         json fresh = ByEmail(t, c, "fresh@example.com");
         EXPECT_EQ(fresh["id"], out["results"][1]["id"]);
         EXPECT_EQ(fresh["first_name"], "Fresh");
       },
       {{"contacts", {{{"first_name", "No email"}}}}},
       "contacts.0.email",
       nullptr,
       "",
       // Per item: the missing list fails that item only, and leaves no contact behind.
       [](CrmTools& t, McpClient& c) {
         json out = Read(t, c, "upsert_contacts_bulk",
                         {{"contacts",
                           {{{"email", "m@example.com"}, {"lists", {999999}}},
                            {{"email", "ok@example.com"}}}}});
         EXPECT_EQ(out["failed"], 1);
         EXPECT_EQ(out["created"], 1);
         EXPECT_EQ(out["results"][0]["error"]["code"], "not_found") << out.dump();
         T(t).Err(c, "get_contact", {{"email", "m@example.com"}}, "not_found");
         EXPECT_EQ(ByEmail(t, c, "ok@example.com")["id"], out["results"][1]["id"]);
       }},
      {"set_contact_status",
       "contacts:write",
       [](CrmTools& t, McpClient& c) {
         return json{{"id", T(t).NewContact(c, "st@example.com")},
                     {"status", "unsubscribed"},
                     {"reason", "asked by email"}};
       },
       [](CrmTools& t, McpClient& c, const json& args, const json& out) {
         EXPECT_EQ(out["previous_status"], "subscribed");
         EXPECT_EQ(out["changed"], true);
         EXPECT_EQ(Read(t, c, "get_contact", {{"id", args["id"]}})["contact"]["status"],
                   "unsubscribed");
         EXPECT_EQ(
             Names(Read(t, c, "list_contacts", {{"status", "unsubscribed"}})["items"], "email"),
             json::array({"st@example.com"}));
       },
       {{"id", 1}, {"status", "spam"}},
       "status",
       Args({{"id", 999999}, {"status", "unsubscribed"}})},
      {"add_contact_tags",
       "contacts:write",
       [](CrmTools& t, McpClient& c) {
         int64_t a = T(t).NewContact(c, "a@example.com");
         int64_t b = T(t).NewContact(c, "b@example.com");
         return json{{"contact_ids", {a, b}}, {"tags", {"hot"}}};  // a new name makes the tag
       },
       [](CrmTools& t, McpClient& c, const json& args, const json& out) {
         EXPECT_EQ(out["contacts_changed"], 2);
         EXPECT_EQ(Read(t, c, "get_tag", {{"name", "hot"}})["tag"]["member_count"], 2);
         json a = Read(t, c, "get_contact", {{"id", args["contact_ids"][0]}})["contact"];
         EXPECT_EQ(Names(a["tags"]), json::array({"hot"}));
         EXPECT_EQ(Read(t, c, "list_contacts", {{"tag", "hot"}})["items"].size(), 2u);
       },
       {{"contact_ids", json::array()}, {"tags", {"x"}}},
       "contact_ids",
       Args({{"contact_ids", {999999}}, {"tags", {"hot"}}})},
      {"remove_contact_tags",
       "contacts:write",
       [](CrmTools& t, McpClient& c) {
         int64_t a = T(t).NewContact(c, "a@example.com", {{"tags", {"cold", "keep"}}});
         return json{{"contact_ids", {a}}, {"tags", {"cold"}}};
       },
       [](CrmTools& t, McpClient& c, const json& args, const json& out) {
         EXPECT_EQ(out["contacts_changed"], 1);
         EXPECT_EQ(Names(out["results"][0]["changed"]), json::array({"cold"}));
         json a = Read(t, c, "get_contact", {{"id", args["contact_ids"][0]}})["contact"];
         EXPECT_EQ(Names(a["tags"]), json::array({"keep"}));
         EXPECT_EQ(Read(t, c, "get_tag", {{"name", "cold"}})["tag"]["member_count"], 0);
       },
       {{"contact_ids", {1}}},
       "tags",
       [](CrmTools& t, McpClient& c) {
         return json{{"contact_ids", {T(t).NewContact(c, "x@example.com")}}, {"tags", {999999}}};
       }},
      {"add_contact_to_lists",
       "contacts:write",
       [](CrmTools& t, McpClient& c) {
         int64_t l = T(t).NewList(c, "Weekly");
         return json{{"contact_ids", {T(t).NewContact(c, "w@example.com")}}, {"lists", {l}}};
       },
       [](CrmTools& t, McpClient& c, const json& args, const json& out) {
         EXPECT_EQ(out["contacts_changed"], 1);
         EXPECT_EQ(Read(t, c, "get_list", {{"name", "Weekly"}})["list"]["member_count"], 1);
         EXPECT_EQ(
             Names(Read(t, c, "list_contacts", {{"list", args["lists"][0]}})["items"], "email"),
             json::array({"w@example.com"}));
         EXPECT_EQ(Names(ByEmail(t, c, "w@example.com")["lists"]), json::array({"Weekly"}));
       },
       {{"contact_ids", {"one"}}, {"lists", {1}}},
       "contact_ids.0",
       [](CrmTools& t, McpClient& c) {
         return json{{"contact_ids", {T(t).NewContact(c, "x@example.com")}}, {"lists", {999999}}};
       }},
      {"remove_contact_from_lists",
       "contacts:write",
       [](CrmTools& t, McpClient& c) {
         int64_t l = T(t).NewList(c, "Monthly");
         T(t).NewList(c, "Other");
         int64_t a = T(t).NewContact(c, "m@example.com", {{"lists", {"Monthly", "Other"}}});
         return json{{"contact_ids", {a}}, {"lists", {l}}};
       },
       [](CrmTools& t, McpClient& c, const json&, const json& out) {
         EXPECT_EQ(out["contacts_changed"], 1);
         EXPECT_EQ(Read(t, c, "get_list", {{"name", "Monthly"}})["list"]["member_count"], 0);
         EXPECT_EQ(Names(ByEmail(t, c, "m@example.com")["lists"]), json::array({"Other"}));
       },
       {{"contact_ids", {1}}, {"lists", {1}}, {"extra", true}},
       "extra",
       [](CrmTools& t, McpClient& c) {
         return json{{"contact_ids", {999999}}, {"lists", {T(t).NewList(c, "Real")}}};
       }},
      {"delete_contacts",
       "contacts:delete",
       [](CrmTools& t, McpClient& c) {
         int64_t a = T(t).NewContact(c, "d1@example.com", {{"tags", {"t"}}});
         int64_t b = T(t).NewContact(c, "d2@example.com");
         T(t).NewContact(c, "survivor@example.com");
         return json{{"ids", {a, b}}};
       },
       [](CrmTools& t, McpClient& c, const json& args, const json& out) {
         EXPECT_EQ(out["status"], "confirmation_required");
         EXPECT_EQ(out["preview"]["count"], 2) << out.dump();
         for (const auto& id : args["ids"]) EXPECT_FALSE(T(t).FindContact(c, id).is_null());
         json done =
             Read(t, c, "confirm_action", {{"confirmation_token", out["confirmation_token"]}});
         EXPECT_EQ(done["result"]["deleted_count"], 2) << done.dump();
         for (const auto& id : args["ids"]) EXPECT_TRUE(T(t).FindContact(c, id).is_null()) << id;
         EXPECT_EQ(Names(Read(t, c, "list_contacts", json::object())["items"], "email"),
                   json::array({"survivor@example.com"}));
         EXPECT_EQ(Read(t, c, "get_tag", {{"name", "t"}})["tag"]["member_count"], 0);
       },
       {{"ids", json::array()}},
       "ids",
       Args({{"ids", {999999}}})},
      {"validate_email",
       "contacts:read",
       Args({{"email", "Someone@Example.COM"}}),
       [](CrmTools& t, McpClient& c, const json&, const json& out) {
         EXPECT_EQ(out["valid"], true) << out.dump();
         EXPECT_EQ(out["normalized"], "someone@example.com");
         EXPECT_EQ(Read(t, c, "validate_email", {{"email", "not-an-address"}})["valid"], false);
         json flags = Read(t, c, "validate_email", {{"email", "admin@mailinator.com"}});
         EXPECT_EQ(flags["disposable"], true);
         EXPECT_EQ(flags["role_account"], true);
         // Validation writes nothing.
         T(t).Err(c, "get_contact", {{"email", "someone@example.com"}}, "not_found");
       },
       {{"email", 5}},
       "email",
       nullptr},
  };
}

std::vector<ToolCase> SettingsAndConfirmCases() {
  return {
      {"get_settings",
       "settings:read",
       [](CrmTools& t, McpClient& c) {
         int64_t rev = Read(t, c, "get_settings", json::object()).value("revision", int64_t{0});
         Read(t, c, "update_settings",
              {{"expected_revision", rev}, {"settings", {{"sender", {{"from_name", "Acme"}}}}}});
         return json::object();
       },
       [](CrmTools& t, McpClient&, const json&, const json& out) {
         EXPECT_EQ(out["settings"]["sender"]["from_name"], "Acme") << out.dump();
         EXPECT_EQ(out["settings"]["email_validation_mode"], "syntax");
         EXPECT_EQ(out["revision"], T(t).Count("SELECT revision FROM settings"));
       },
       {{"verbose", true}},
       "verbose",
       nullptr},
      {"update_settings",
       "settings:write",
       [](CrmTools& t, McpClient& c) {
         int64_t rev = Read(t, c, "get_settings", json::object()).value("revision", int64_t{0});
         return json{{"expected_revision", rev},
                     {"settings", {{"double_opt_in", true}, {"sender", {{"from_name", "Shop"}}}}}};
       },
       [](CrmTools& t, McpClient& c, const json& args, const json& out) {
         EXPECT_EQ(out["revision"], args["expected_revision"].get<int64_t>() + 1);
         json got = Read(t, c, "get_settings", json::object());
         EXPECT_EQ(got["revision"], out["revision"]);
         EXPECT_EQ(got["settings"]["double_opt_in"], true);
         EXPECT_EQ(got["settings"]["sender"]["from_name"], "Shop");
         // Double opt-in now governs new contacts.
         int64_t id = T(t).NewContact(c, "optin@example.com");
         EXPECT_EQ(Read(t, c, "get_contact", {{"id", id}})["contact"]["status"], "pending");
       },
       {{"expected_revision", 1}, {"settings", {{"email_validation_mode", "smtp"}}}},
       "settings.email_validation_mode",
       nullptr},
      {"confirm_action",
       "tags:delete",
       [](CrmTools& t, McpClient& c) {
         int64_t tag = T(t).NewTag(c, "Gone");
         T(t).NewContact(c, "tagged@example.com", {{"tags", {"Gone"}}});
         return json{{"confirmation_token", T(t).Preview(c, "delete_tag", {{"id", tag}})}};
       },
       [](CrmTools& t, McpClient& c, const json&, const json& out) {
         EXPECT_EQ(out["status"], "done");
         EXPECT_EQ(out["action"], "delete_tag");
         EXPECT_EQ(out["result"]["deleted"]["name"], "Gone") << out.dump();
         T(t).Err(c, "get_tag", {{"name", "Gone"}}, "not_found");
         EXPECT_EQ(ByEmail(t, c, "tagged@example.com")["tags"].size(), 0u);
       },
       {{"confirmation_token", "short"}},
       "confirmation_token",
       Args({{"confirmation_token", std::string(43, 'x')}}),
       "confirmation_invalid"},
  };
}

std::vector<ToolCase> Cases() {
  std::vector<ToolCase> all = ContactCases();
  for (auto& c : GroupCases("list")) all.push_back(std::move(c));
  for (auto& c : GroupCases("tag")) all.push_back(std::move(c));
  for (auto& c : SettingsAndConfirmCases()) all.push_back(std::move(c));
  return all;
}

class EveryCrmTool : public Tools, public ::testing::WithParamInterface<ToolCase> {};

TEST_P(EveryCrmTool, RefusesWithoutScopeSucceedsRejectsBadArgumentsAndReportsNotFound) {
  const ToolCase& tc = GetParam();
  auto c = Client();
  json args = tc.setup(*this, *c);

  // The scope refusal first, while the same arguments would still succeed.
  json before = Fingerprint();
  auto weak = ClientWithout(tc.scope);
  auto refused = weak->CallTool(tc.tool, args);
  EXPECT_EQ(refused.status, 403) << tc.tool << ": " << refused.raw;
  if (refused.body.contains("error")) {
    EXPECT_EQ(refused.body["error"]["data"].value("required_scope", ""), tc.scope) << refused.raw;
  } else {
    ADD_FAILURE() << tc.tool << ": a refusal is a JSON-RPC error: " << refused.raw;
  }
  auto challenge = refused.Header("WWW-Authenticate");
  EXPECT_TRUE(challenge && challenge->find("scope=\"" + tc.scope + "\"") != std::string::npos)
      << tc.tool << ": " << (challenge ? std::string(*challenge) : "no challenge");
  EXPECT_EQ(Fingerprint(), before) << tc.tool << " wrote something without its scope";

  json out = Ok(*c, tc.tool, args);
  ASSERT_FALSE(out.is_null()) << tc.tool;
  tc.verify(*this, *c, args, out);

  before = Fingerprint();
  json err = Err(*c, tc.tool, tc.invalid, "validation_failed");
  EXPECT_EQ(err.value("field", ""), tc.invalid_field) << tc.tool << ": " << err.dump();
  EXPECT_EQ(Fingerprint(), before) << tc.tool << " wrote something for invalid arguments";

  if (tc.missing) {
    json missing = tc.missing(*this, *c);
    before = Fingerprint();
    Err(*c, tc.tool, missing, tc.missing_code);
    EXPECT_EQ(Fingerprint(), before) << tc.tool << " wrote something for a missing record";
  }
  if (tc.missing_check) tc.missing_check(*this, *c);
}

INSTANTIATE_TEST_SUITE_P(Crm, EveryCrmTool, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<ToolCase>& i) { return i.param.tool; });

bool IsMarketingScope(const std::string& scope) {
  for (const char* area : {"campaigns:", "automations:", "sequences:", "reports:"})
    if (scope.rfind(area, 0) == 0) return true;
  return false;
}

// A tool added to the server outside marketing fails here until it has a case above.
TEST_F(Tools, CasesCoverEveryRegisteredNonMarketingTool) {
  std::set<std::string> covered;
  for (const auto& c : Cases()) {
    EXPECT_TRUE(covered.insert(c.tool).second) << c.tool << " has two cases";
    EXPECT_FALSE(c.invalid_field.empty()) << c.tool << " needs a schema violation";
  }
  const mcp::ToolRegistry& registry = *server_.app().services().tools;
  std::set<std::string> crm;
  for (const auto& name : registry.Names()) {
    const json* d = registry.Descriptor(name);
    ASSERT_NE(d, nullptr) << name;
    std::string scope = d->value("scope", "");
    if (IsMarketingScope(scope)) continue;
    crm.insert(name);
    // The case's scope is the tool's own (confirm_action has none of its own).
    for (const auto& c : Cases()) {
      if (c.tool == name && !scope.empty()) {
        EXPECT_EQ(c.scope, scope) << name;
      }
    }
  }
  EXPECT_EQ(covered, crm);
  EXPECT_EQ(crm.size(), 25u);

  // And the server lists them all over /mcp.
  auto client = Client();
  std::set<std::string> listed;
  for (const auto& t : client->ListAllTools()) listed.insert(t.value("name", ""));
  for (const auto& name : covered) EXPECT_TRUE(listed.count(name)) << name;
}

TEST_F(Tools, AnIntegerWrittenWithAZeroFractionIsAnInteger) {
  // JSON Schema's "integer" is any number with no fractional part (draft-07 and 2020-12):
  // a client whose encoder writes 7.0 (Python floats, some model tool-call encoders) gets
  // what its own validation of the published inputSchema promised.
  auto c = Client();
  int64_t id = NewContact(*c, "whole@example.com");
  json got = Ok(*c, "get_contact", {{"id", static_cast<double>(id)}});
  EXPECT_EQ(got["contact"]["id"], id) << got.dump();
  json page = Ok(*c, "list_contacts", {{"limit", 5.0}});
  EXPECT_EQ(page["items"].size(), 1u) << page.dump();
  // A fraction is still refused, naming the field, and so is a whole number past int64.
  json err = Err(*c, "get_contact", {{"id", static_cast<double>(id) + 0.5}}, "validation_failed");
  EXPECT_EQ(err["field"], "id") << err.dump();
  Err(*c, "list_contacts", {{"limit", 1e300}}, "validation_failed");
}

}  // namespace
}  // namespace crmd::testing

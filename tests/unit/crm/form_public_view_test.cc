// What a form shows to anyone (crm::ToPublicJson, docs/rest.md "Forms"): the renderer's
// fields and, for the honeypot, a name of its own that is never the configured one.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "src/crm/forms.h"

namespace crmd::crm {
namespace {

Form TrappedForm(const std::string& public_id) {
  Form f;
  f.id = 7;
  f.public_id = public_id;
  f.name = "Footer";
  f.fields = {{.name = "email", .type = "Email", .label = "Email", .required = true},
              {.name = "homepage", .type = "Input", .label = "Homepage"},
              {.name = "fax", .type = "Input", .label = "Fax"}};
  f.applies.tags = {"internal-tag"};
  f.applies.lists = {"Internal list"};
  f.display_rules = {{"after_submit", "redirect"}};
  f.allowed_origins = {"https://shop.example"};
  f.honeypot_field = "website";
  f.generated_contacts = 12;
  return f;
}

TEST(FormPublicView, TheHoneypotsPublicNameIsNeverTheTrapNorAField) {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    char hex[33];
    std::snprintf(hex, sizeof hex, "%032x", i * 2654435761u);
    Form f = TrappedForm(std::string("frm_") + hex);
    std::string name = f.PublicHoneypotName();
    ASSERT_FALSE(name.empty());
    EXPECT_NE(name, "website");
    for (const auto& field : f.fields) EXPECT_NE(name, field.name);
    EXPECT_EQ(f.PublicHoneypotName(), name);  // stable for the form
    EXPECT_TRUE(f.IsHoneypot(name));
    EXPECT_TRUE(f.IsHoneypot("website"));
    EXPECT_FALSE(f.IsHoneypot("email"));
    seen.insert(name);
  }
  EXPECT_GT(seen.size(), 3u);  // forms do not all share one name
  Form plain = TrappedForm("frm_" + std::string(32, 'a'));
  plain.honeypot_field.clear();
  EXPECT_EQ(plain.PublicHoneypotName(), "");
  EXPECT_FALSE(plain.IsHoneypot("website"));
  EXPECT_FALSE(plain.IsHoneypot(""));
}

TEST(FormPublicView, ThePublicDocumentHoldsOnlyWhatARendererNeeds) {
  Form f = TrappedForm("frm_" + std::string(32, 'b'));
  nlohmann::json j = ToPublicJson(f);
  std::set<std::string> members;
  for (const auto& [k, v] : j.items()) members.insert(k);
  EXPECT_EQ(members, (std::set<std::string>{"id", "name", "fields", "extra_input"}));
  EXPECT_EQ(j["id"], f.public_id);
  EXPECT_EQ(j["fields"].size(), 3u);
  const std::string text = j.dump();
  for (const char* hidden :
       {"internal-tag", "Internal list", "redirect", "shop.example", "website", "\"id\":7", "12"})
    EXPECT_EQ(text.find(hidden), std::string::npos) << hidden << " in " << text;
}

TEST(FormPublicView, PublicIdsHaveOneShape) {
  EXPECT_TRUE(IsFormPublicId("frm_0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsFormPublicId("frm_0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(IsFormPublicId("frm_0123456789abcdef0123456789abcde"));
  EXPECT_FALSE(IsFormPublicId("12"));
  EXPECT_FALSE(IsFormPublicId("frm_../../0123456789abcdef012345678"));
  EXPECT_FALSE(IsFormPublicId(""));
}

}  // namespace
}  // namespace crmd::crm

// crm::ListPreferences, on SQLite and (pg.) PostgreSQL: leaving a list on the preference
// page keeps its membership row in state 'unsubscribed'; the tools, upserts and forms do
// not add the contact back; a form with double opt-in makes it 'pending' and the
// confirmation joins it again; only public lists the contact is on can be changed.
#include "src/crm/list_preferences.h"

#include "src/crm/contacts_repo.h"
#include "tests/unit/crm/fixture.h"

namespace crmd::crm {
namespace {

using nlohmann::json;

class ListPrefs : public testing::CrmFixture {
 protected:
  int64_t NewList(const std::string& name, bool is_public) {
    auto l = s->lists->Create(alice, name, "about " + name, "", is_public);
    EXPECT_TRUE(l) << (l ? "" : l.error().message);
    EXPECT_EQ(l ? l->is_public : std::nullopt, std::optional<bool>(is_public));
    return l ? l->id : 0;
  }
  std::string State(int64_t contact, int64_t list) {
    auto r = db->Read([&](store::Conn& c) -> Result<std::string> {
      auto row = c.QueryOne("SELECT state FROM contact_lists WHERE contact_id = ? AND list_id = ?",
                            {contact, list});
      if (!row) return Fail(row.error());
      return *row ? (*row)->Str(0) : std::string("none");
    });
    return r.value_or("error");
  }
  std::vector<std::string> ListNames(int64_t contact) {
    auto k = s->contacts->Get(contact);
    std::vector<std::string> out;
    if (k)
      for (const auto& l : k->lists) out.push_back(l.name);
    return out;
  }
  int64_t CountEvents(const std::string& type, int64_t contact) {
    int64_t n = 0;
    for (const auto& e : Events())
      if (e.event_type == type && e.contact_id == contact) ++n;
    return n;
  }
};

TEST_F(ListPrefs, LeavingIsRememberedAndTheToolsAndUpsertsDoNotAddTheContactBack) {
  int64_t weekly = NewList("Weekly", true);
  int64_t offers = NewList("Offers", true);
  int64_t hidden = NewList("Hidden", false);
  ContactInput in;
  in.lists = {Ref{weekly}, Ref{offers}, Ref{hidden}};
  Contact ada = MakeContact("ada@example.com", in);

  auto page = s->list_preferences->Get(ada.id);
  ASSERT_TRUE(page);
  ASSERT_EQ(page->size(), 2u);  // public lists only, by name
  EXPECT_EQ((*page)[0].name, "Offers");
  EXPECT_EQ((*page)[1].description, "about Weekly");
  EXPECT_TRUE((*page)[1].subscribed);

  // A choice for the hidden list is ignored: it is not on the page.
  auto changed = s->list_preferences->Set(alice, ada.id,
                                          {{.list_id = weekly, .subscribed = false},
                                           {.list_id = offers, .subscribed = true},
                                           {.list_id = hidden, .subscribed = false}});
  ASSERT_TRUE(changed) << changed.error().message;
  ASSERT_EQ(changed->size(), 1u);
  EXPECT_EQ((*changed)[0].id, weekly);
  EXPECT_EQ(State(ada.id, weekly), "unsubscribed");
  EXPECT_EQ(State(ada.id, hidden), "subscribed");
  EXPECT_EQ(ListNames(ada.id), std::vector<std::string>({"Hidden", "Offers"}));
  EXPECT_EQ(CountEvents("contact.list_removed", ada.id), 1);
  auto weekly_group = s->lists->Get(Ref{weekly});
  ASSERT_TRUE(weekly_group);
  EXPECT_EQ(weekly_group->member_count, 0);

  // The tool adds nothing and reports no change; nor does an update naming the list.
  auto added = s->contacts->AddToLists(alice, {ada.id}, {Ref{weekly}});
  ASSERT_TRUE(added);
  EXPECT_TRUE((*added)[0].changed.empty());
  auto cur = s->contacts->Get(ada.id);
  ASSERT_TRUE(cur);
  ContactInput again;
  again.lists = {Ref{std::string("Weekly")}};
  ASSERT_TRUE(s->contacts->Update(alice, ada.id, cur->revision, again));
  EXPECT_EQ(State(ada.id, weekly), "unsubscribed");
  EXPECT_EQ(CountEvents("contact.list_added", ada.id), 3);  // the three at creation only

  // Removing from the list keeps the memory: only members are removed.
  auto removed = s->contacts->RemoveFromLists(alice, {ada.id}, {Ref{weekly}});
  ASSERT_TRUE(removed);
  EXPECT_TRUE((*removed)[0].changed.empty());
  EXPECT_EQ(State(ada.id, weekly), "unsubscribed");

  // The page itself can switch it on again.
  auto back = s->list_preferences->Set(alice, ada.id, {{.list_id = weekly, .subscribed = true}});
  ASSERT_TRUE(back);
  EXPECT_EQ(back->size(), 1u);
  EXPECT_EQ(State(ada.id, weekly), "subscribed");
  EXPECT_EQ(CountEvents("contact.list_added", ada.id), 4);
}

TEST_F(ListPrefs, AFormRejoinsALeftListOnlyThroughTheDoubleOptInConfirmation) {
  int64_t weekly = NewList("Weekly", true);
  ContactInput in;
  in.lists = {Ref{weekly}};
  Contact ada = MakeContact("ada@example.com", in);
  ASSERT_TRUE(s->list_preferences->Set(alice, ada.id, {{.list_id = weekly, .subscribed = false}}));
  auto form =
      s->forms->Create({{"name", "signup"},
                        {"fields", {{{"name", "email"}, {"type", "Email"}, {"required", true}}}},
                        {"applies", {{"lists", {"Weekly"}}}}});
  ASSERT_TRUE(form) << form.error().message;
  governance::Actor visitor{.kind = "form", .subject = "form"};

  // Without double opt-in: the left list stays left.
  ASSERT_TRUE(s->forms->Submit(visitor, *form, {{"email", "ada@example.com"}}, false));
  EXPECT_EQ(State(ada.id, weekly), "unsubscribed");

  // With it: pending, a confirmation email queued; the confirmation joins it again.
  UpdateSettings({{"double_opt_in", true}});
  ASSERT_TRUE(s->forms->Submit(visitor, *form, {{"email", "ada@example.com"}}, false));
  EXPECT_EQ(State(ada.id, weekly), "pending");
  EXPECT_TRUE(ListNames(ada.id).empty());
  auto queued = db->Read([&](store::Conn& c) -> Result<int64_t> {
    auto row = c.QueryOne(
        "SELECT COUNT(*) FROM optin_emails WHERE contact_id = ? AND status = 'pending'", {ada.id});
    if (!row) return Fail(row.error());
    return (*row)->Int(0);
  });
  ASSERT_TRUE(queued);
  EXPECT_EQ(*queued, 1);
  auto joined = s->list_preferences->ConfirmPending(alice, ada.id);
  ASSERT_TRUE(joined) << joined.error().message;
  ASSERT_EQ(joined->size(), 1u);
  EXPECT_EQ(State(ada.id, weekly), "subscribed");
  EXPECT_EQ(ListNames(ada.id), std::vector<std::string>({"Weekly"}));
}

TEST_F(ListPrefs, AStrangersFormAddsAnExistingContactToAListOnlyThroughItsConfirmation) {
  int64_t weekly = NewList("Weekly", true);
  int64_t offers = NewList("Offers", true);
  ContactInput in;
  in.lists = {Ref{weekly}};
  Contact ada = MakeContact("ada@example.com", in);
  auto form =
      s->forms->Create({{"name", "offers"},
                        {"fields", {{{"name", "email"}, {"type", "Email"}, {"required", true}}}},
                        {"applies", {{"lists", {"Offers"}}}}});
  ASSERT_TRUE(form) << form.error().message;
  governance::Actor visitor{.kind = "form", .subject = "form"};

  // Without double opt-in an anonymous submission adds nothing to an existing contact.
  ASSERT_TRUE(s->forms->Submit(visitor, *form, {{"email", "ada@example.com"}}, false));
  EXPECT_EQ(State(ada.id, offers), "none");
  EXPECT_EQ(ListNames(ada.id), std::vector<std::string>({"Weekly"}));

  // With it, the list waits for Ada's confirmation; the list she is on stays as it is.
  UpdateSettings({{"double_opt_in", true}});
  ASSERT_TRUE(s->forms->Submit(visitor, *form, {{"email", "ada@example.com"}}, false));
  EXPECT_EQ(State(ada.id, offers), "pending");
  EXPECT_EQ(State(ada.id, weekly), "subscribed");
  EXPECT_EQ(ListNames(ada.id), std::vector<std::string>({"Weekly"}));
  auto joined = s->list_preferences->ConfirmPending(alice, ada.id);
  ASSERT_TRUE(joined) << joined.error().message;
  ASSERT_EQ(joined->size(), 1u);
  EXPECT_EQ((*joined)[0].name, "Offers");
  EXPECT_EQ(State(ada.id, offers), "subscribed");

  // A keyed submission (the site's own backend) adds the list at once, as before.
  UpdateSettings({{"double_opt_in", false}});
  int64_t news = NewList("News", true);
  auto keyed_form =
      s->forms->Create({{"name", "news"},
                        {"fields", {{{"name", "email"}, {"type", "Email"}, {"required", true}}}},
                        {"applies", {{"lists", {"News"}}}}});
  ASSERT_TRUE(keyed_form) << keyed_form.error().message;
  ASSERT_TRUE(s->forms->Submit(visitor, *keyed_form, {{"email", "ada@example.com"}}, true));
  EXPECT_EQ(State(ada.id, news), "subscribed");
}

TEST_F(ListPrefs, PublicIsForListsOnly) {
  auto tag = s->tags->Create(alice, "vip", "", "", true);
  ASSERT_FALSE(tag);
  EXPECT_EQ(tag.error().code, Errc::kInvalidArgument);
  int64_t weekly = NewList("Weekly", false);
  auto cur = s->lists->Get(Ref{weekly});
  ASSERT_TRUE(cur);
  auto made_public =
      s->lists->Update(alice, weekly, cur->revision, std::nullopt, std::nullopt, true);
  ASSERT_TRUE(made_public) << made_public.error().message;
  EXPECT_EQ(made_public->is_public, std::optional<bool>(true));
  EXPECT_EQ(made_public->revision, cur->revision + 1);
}

}  // namespace
}  // namespace crmd::crm

#pragma once
// A real crmd with an admin key and subscribed contacts, for the provider event receiver
// suites (POST /mail/events/<provider>): configure a receiver over REST, read what the
// database recorded.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "src/app/app.h"
#include "src/app/services.h"
#include "src/crm/contacts.h"
#include "tests/integration/rest/rest_fixture.h"

namespace crmd::resttest {

struct ReceiverFixture {
  ReceiverFixture()
      : admin(NewKey(server, governance::ApiKeyRole::kAdmin, "admin")),
        key(NewKey(server, governance::ApiKeyRole::kIntegration, "app")) {}

  static int64_t Now() {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  http::ClientResponse Configure(const std::string& provider, const nlohmann::json& body) {
    auto h = Bearer(admin);
    h.emplace_back("Content-Type", "application/json");
    return server.Send("PUT", Url("/admin/mail-receivers/" + provider), body.dump(), h);
  }

  // A subscribed contact; answers its id.
  int64_t Subscriber(const std::string& email) {
    auto r =
        server.PostJson(Url("/contact"), {{"email", email}, {"status", "subscribed"}}, Bearer(key));
    EXPECT_EQ(r.status, 201) << r.body;
    return crmd::testing::JsonBody(r)["contact"].value("id", int64_t{0});
  }
  std::string StatusOf(const std::string& email) {
    auto c = server.app().services().crm->contacts->GetByEmail(email);
    return c ? c->status : "(none)";
  }
  // The reason of the suppression entry for `email`, or "" when there is none.
  std::string SuppressedFor(const std::string& email) {
    auto r = server.Get(Url("/suppressions?email=" + email), Bearer(admin));
    EXPECT_EQ(r.status, 200) << r.body;
    auto items = crmd::testing::JsonBody(r)["suppressions"];
    return items.empty() ? "" : items[0].value("reason", "");
  }
  int64_t Count(const std::string& sql) {
    auto n = server.app().services().db->Read([&](store::Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne(sql);
      if (!row) return Fail(row.error());
      return *row ? (*row)->Int(0) : int64_t{0};
    });
    EXPECT_TRUE(n.has_value());
    return n.value_or(-1);
  }
  int64_t ProcessedEvents() { return Count("SELECT COUNT(*) FROM mail_receiver_events"); }
  int64_t SoftBounces(int64_t contact_id) {
    return Count("SELECT COALESCE(SUM(bounces), 0) FROM contact_soft_bounces WHERE contact_id = " +
                 std::to_string(contact_id));
  }
  int64_t Suppressions() { return Count("SELECT COUNT(*) FROM suppressions"); }

  crmd::testing::TestServer server;
  std::string admin;
  std::string key;
};

}  // namespace crmd::resttest

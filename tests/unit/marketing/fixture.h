#pragma once
// A fresh migrated SQLite database with a small, known set of contacts, lists and tags,
// for the marketing unit tests.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "src/crm/contacts.h"
#include "src/crm/contacts_repo.h"
#include "src/governance/actor.h"
#include "src/store/db.h"
#include "tests/support/fake_clock.h"
#include "tests/support/test_server.h"

namespace crmd::crm::testing {

class MarketingDb : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = std::make_unique<crmd::testing::ScratchDatabase>(dir_.path() + "/m.db", false,
                                                                /*migrated=*/true);
    auto db = store::Open(scratch_->url(), 2);
    ASSERT_TRUE(db.has_value()) << db.error().detail;
    db_ = std::move(*db);
  }

  // Rows of the contacts module's tables (schemas/db/sqlite/0010_crm.sql), written directly
  // or through its repository, so that these tests do not depend on the contact services.
  int64_t AddList(const std::string& name) {
    return Insert("INSERT INTO lists (name, created_at, updated_at) VALUES (?, 0, 0) RETURNING id",
                  {name});
  }
  int64_t AddTag(const std::string& name) {
    return Insert("INSERT INTO tags (name, created_at, updated_at) VALUES (?, 0, 0) RETURNING id",
                  {name});
  }
  int64_t AddContact(const std::string& email, const std::string& status = "subscribed",
                     int64_t created_at = 1'760'000'000, const std::string& type = "lead",
                     const std::string& source = "form") {
    // Through the repository's insert, which also counts the contact (migration 0059).
    auto id = db_->Write([&](store::Conn& c) {
      return contacts_repo::InsertContact(c, Contact{.email = email,
                                                     .status = status,
                                                     .type = type,
                                                     .source = source,
                                                     .revision = 1,
                                                     .created_at = created_at,
                                                     .updated_at = created_at});
    });
    EXPECT_TRUE(id.has_value()) << id.error().detail;
    return id.value_or(0);
  }
  void InList(int64_t contact, int64_t list) {
    Exec("INSERT INTO contact_lists (contact_id, list_id, created_at) VALUES (?, ?, 0)",
         {contact, list});
  }
  void Tagged(int64_t contact, int64_t tag) {
    Exec("INSERT INTO contact_tags (contact_id, tag_id, created_at) VALUES (?, ?, 0)",
         {contact, tag});
  }
  int64_t Insert(const std::string& sql, std::vector<store::Value> params) {
    auto id = db_->Write([&](store::Conn& c) { return c.InsertReturningId(sql, params); });
    EXPECT_TRUE(id.has_value()) << id.error().detail;
    return id.value_or(0);
  }
  void Exec(const std::string& sql, std::vector<store::Value> params) {
    auto n = db_->Write([&](store::Conn& c) { return c.Exec(sql, params); });
    EXPECT_TRUE(n.has_value()) << n.error().detail;
  }
  int64_t Count(const std::string& sql, std::vector<store::Value> params = {}) {
    auto n = db_->Read([&](store::Conn& c) -> Result<int64_t> {
      auto row = c.QueryOne(sql, params);
      if (!row) return Fail(row.error());
      return (*row)->Int(0);
    });
    EXPECT_TRUE(n.has_value());
    return n.value_or(-1);
  }

  crmd::testing::TempDir dir_;

  std::unique_ptr<crmd::testing::ScratchDatabase> scratch_;
  std::unique_ptr<store::Database> db_;
  FakeClock clock_{1'760'000'000};
  governance::Actor actor_{.kind = "system", .subject = "test", .client_id = "", .request_id = ""};
};

}  // namespace crmd::crm::testing

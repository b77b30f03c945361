// GET /contacts/export over loopback: the columns as the REST API names the fields, RFC
// 4180 quoting, the formula guard, the list_contacts filters, pages with a next link, and
// who may export.
#include <gtest/gtest.h>

#include <map>

#include "src/crm/seed.h"
#include "src/crm/services.h"
#include "tests/integration/rest/rest_fixture.h"
#include "tests/support/raw_http.h"

namespace crmd::resttest {
namespace {

using crmd::testing::JsonBody;
using crmd::testing::TestServer;
using nlohmann::json;

using Csv = std::vector<std::vector<std::string>>;

// An RFC 4180 reader for the tests: quoted cells with doubled quotes and line breaks,
// records ending in CRLF. Fails the test on a malformed file.
Csv ParseCsv(const std::string& text) {
  Csv out;
  std::vector<std::string> record;
  std::string cell;
  size_t i = 0;
  bool quoted = false, started = false;
  while (i < text.size()) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cell += '"';
        i += 2;
      } else if (c == '"') {
        quoted = false;
        ++i;
      } else {
        cell += c;
        ++i;
      }
      continue;
    }
    if (c == '"' && cell.empty()) {
      quoted = started = true;
      ++i;
    } else if (c == ',') {
      record.push_back(std::move(cell));
      cell.clear();
      ++i;
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      record.push_back(std::move(cell));
      cell.clear();
      out.push_back(std::move(record));
      record.clear();
      i += 2;
    } else {
      EXPECT_NE(c, '\n') << "a bare LF ends no record (RFC 4180 2.1)";
      EXPECT_NE(c, '"') << "a quote inside an unquoted cell";
      cell += c;
      ++i;
    }
  }
  (void)started;
  EXPECT_TRUE(record.empty() && cell.empty()) << "the last record has no CRLF";
  return out;
}

// The rows of a CSV by their email column, each as column name -> cell.
std::map<std::string, std::map<std::string, std::string>> ByEmail(const Csv& csv) {
  std::map<std::string, std::map<std::string, std::string>> out;
  if (csv.empty()) return out;
  for (size_t r = 1; r < csv.size(); ++r) {
    EXPECT_EQ(csv[r].size(), csv[0].size()) << "row " << r;
    for (size_t c = 0; c < csv[0].size() && c < csv[r].size(); ++c)
      out[csv[r][0]][csv[0][c]] = csv[r][c];
  }
  return out;
}

class RestExport : public ::testing::Test {
 protected:
  void SetUp() override {
    admin_ = NewKey(server_, governance::ApiKeyRole::kAdmin);
    key_ = NewKey(server_);
    auto& lists = *server_.app().services().crm->lists;
    for (const char* n : {"Newsletter", "Offers"})
      ASSERT_TRUE(lists.Create({.kind = "cli"}, n, ""));
    Add({{"email", "ada@example.com"},
         {"first_name", "Ada"},
         {"last_name", "Lovelace, Countess"},
         {"phone", "+44 20 7946 0000"},
         {"status", "subscribed"},
         {"type", "customer"},
         {"tags", {"vip", "founder"}},
         {"lists", {"Offers", "Newsletter"}},
         {"custom_fields",
          {{"company", "Analytical \"Engines\"\nLtd"}, {"seats", 3}, {"active", true}}}});
    Add({{"email", "mallory@example.com"},
         {"first_name", "=HYPERLINK(\"https://evil.example\",\"click\")"},
         {"last_name", "@SUM(1+1)"},
         {"status", "pending"},
         {"custom_fields", {{"note", "-2+3"}, {"company", "\tTab"}}}});
    Add({{"email", "bob@example.com"}, {"status", "unsubscribed"}, {"tags", {"vip"}}});
  }
  void Add(const json& body) {
    auto r = server_.PostJson(Url("/contact"), body, Bearer(key_));
    ASSERT_EQ(r.status, 201) << r.body;
  }
  http::ClientResponse Export(const std::string& query = "") {
    return server_.Get(Url("/contacts/export") + (query.empty() ? "" : "?" + query),
                       Bearer(admin_));
  }

  TestServer server_;
  std::string admin_, key_;
};

TEST_F(RestExport, ColumnsAreTheRestFieldNamesThenEachCustomField) {
  auto r = Export();
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.Header("Content-Type").value_or(""), "text/csv; charset=utf-8");
  EXPECT_NE(r.Header("Content-Disposition").value_or("").find("contacts.csv"), std::string::npos);
  EXPECT_FALSE(r.Header("Link").has_value());
  Csv csv = ParseCsv(r.body);
  ASSERT_EQ(csv.size(), 4u) << r.body;
  EXPECT_EQ(csv[0],
            (std::vector<std::string>{"email", "first_name", "last_name", "phone", "status", "type",
                                      "lists", "tags", "active", "company", "note", "seats"}));
  auto rows = ByEmail(csv);
  auto& ada = rows["ada@example.com"];
  EXPECT_EQ(ada["first_name"], "Ada");
  EXPECT_EQ(ada["last_name"], "Lovelace, Countess");
  EXPECT_EQ(ada["status"], "subscribed");
  EXPECT_EQ(ada["type"], "customer");
  EXPECT_EQ(ada["lists"], "Newsletter|Offers");
  EXPECT_EQ(ada["tags"], "founder|vip");
  EXPECT_EQ(ada["company"], "Analytical \"Engines\"\nLtd");
  EXPECT_EQ(ada["seats"], "3");
  EXPECT_EQ(ada["active"], "true");
  EXPECT_EQ(ada["note"], "");
  EXPECT_EQ(rows["bob@example.com"]["tags"], "vip");
  EXPECT_EQ(rows["bob@example.com"]["lists"], "");
}

TEST_F(RestExport, CellsASpreadsheetWouldRunAreNeutralised) {
  auto r = Export();
  ASSERT_EQ(r.status, 200) << r.body;
  auto rows = ByEmail(ParseCsv(r.body));
  auto& m = rows["mallory@example.com"];
  EXPECT_EQ(m["first_name"], "'=HYPERLINK(\"https://evil.example\",\"click\")");
  EXPECT_EQ(m["last_name"], "'@SUM(1+1)");
  EXPECT_EQ(m["note"], "'-2+3");
  EXPECT_EQ(m["company"], "'\tTab");
  EXPECT_EQ(rows["ada@example.com"]["phone"], "'+44 20 7946 0000");
  // No cell of the file starts with a formula character, quoted or not.
  for (const auto& row : ParseCsv(r.body))
    for (const auto& cell : row)
      if (!cell.empty()) {
        EXPECT_EQ(std::string("=+-@\t\r").find(cell[0]), std::string::npos) << cell;
      }
}

TEST_F(RestExport, FiltersAreThoseOfListContacts) {
  auto only = [&](const std::string& query) {
    auto r = Export(query);
    EXPECT_EQ(r.status, 200) << query << ": " << r.body;
    std::vector<std::string> emails;
    for (const auto& [email, row] : ByEmail(ParseCsv(r.body))) emails.push_back(email);
    return emails;
  };
  EXPECT_EQ(only("status=subscribed"), (std::vector<std::string>{"ada@example.com"}));
  EXPECT_EQ(only("tag=vip"), (std::vector<std::string>{"ada@example.com", "bob@example.com"}));
  EXPECT_EQ(only("list=Newsletter&type=customer"), (std::vector<std::string>{"ada@example.com"}));
  EXPECT_EQ(only("query=mal"), (std::vector<std::string>{"mallory@example.com"}));
  EXPECT_EQ(only("created_after=2000-01-01T00:00:00Z").size(), 3u);
  EXPECT_TRUE(only("created_before=2000-01-01").empty());
  // The custom columns are those of the contacts the filter selects.
  auto header = [&](const std::string& query) { return ParseCsv(Export(query).body).at(0); };
  const std::vector<std::string> fixed(std::begin(crm::kExportColumns),
                                       std::end(crm::kExportColumns));
  EXPECT_EQ(header("status=unsubscribed"), fixed);
  auto vip = fixed;
  vip.insert(vip.end(), {"active", "company", "seats"});
  EXPECT_EQ(header("tag=vip"), vip);
  auto mallory = fixed;
  mallory.insert(mallory.end(), {"company", "note"});
  EXPECT_EQ(header("query=mal"), mallory);
  // The header row is there even when nothing matches.
  auto none = Export("status=complained");
  EXPECT_EQ(ParseCsv(none.body).size(), 1u) << none.body;
}

TEST_F(RestExport, BadParametersAreProblemsNamingThem) {
  struct Case {
    std::string query, field;
  } cases[] = {{"colour=red", "colour"},
               {"status=happy", ""},
               {"tag=nope", "tag"},
               {"list=nope", "list"},
               {"created_after=yesterday", "created_after"},
               {"limit=0", "limit"},
               {"cursor=zzz", ""}};
  for (const auto& c : cases) {
    auto r = Export(c.query);
    EXPECT_EQ(r.status, 422) << c.query << ": " << r.body;
    EXPECT_TRUE(IsProblem(r)) << c.query;
    if (!c.field.empty()) {
      EXPECT_EQ(JsonBody(r)["errors"][0]["field"], c.field) << r.body;
    }
  }
}

TEST_F(RestExport, OnlyAnAdminKeyExports) {
  EXPECT_EQ(server_.Get(Url("/contacts/export")).status, 401);
  auto r = server_.Get(Url("/contacts/export"), Bearer(key_));
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_TRUE(IsProblem(r));
}

TEST_F(RestExport, PagesFollowTheNextLinkAndConcatenateToTheWholeFile) {
  for (int i = 0; i < 7; ++i) Add({{"email", "p" + std::to_string(i) + "@example.com"}});
  std::string whole = Export().body;
  std::string joined;
  std::string next = Url("/contacts/export?limit=3");
  int pages = 0;
  while (!next.empty() && pages < 20) {
    auto r = server_.Get(next, Bearer(admin_));
    ASSERT_EQ(r.status, 200) << r.body;
    joined += r.body;
    ++pages;
    auto link = r.Header("Link");
    next.clear();
    if (link) {
      ASSERT_EQ(link->front(), '<');
      next = std::string(link->substr(1, link->find('>') - 1));
      EXPECT_EQ(next.rfind(Url("/contacts/export?"), 0), 0u) << next;
      EXPECT_NE(link->find("rel=\"next\""), std::string::npos);
      EXPECT_TRUE(r.Header("Crmd-Next-Cursor").has_value());
    }
  }
  EXPECT_EQ(pages, 4);  // 10 contacts, 3 a page
  EXPECT_EQ(joined, whole);
}

// Without limit or cursor the whole export is one answer, streamed in chunks as its pages
// are read: the same bytes as the pages following their links.
TEST_F(RestExport, WithoutALimitTheWholeFileIsOneStreamedAnswer) {
  auto seeded =
      crm::Seed(*server_.app().services().db, {.contacts = 12000, .batch = 2000, .seed = 7});
  ASSERT_TRUE(seeded) << seeded.error().message;
  std::string paged;
  std::string next = Url("/contacts/export?limit=100000");
  for (int pages = 0; !next.empty() && pages < 5; ++pages) {
    auto r = server_.Get(next, Bearer(admin_));
    ASSERT_EQ(r.status, 200) << r.body;
    paged += r.body;
    next.clear();
    if (auto link = r.Header("Link")) next = std::string(link->substr(1, link->find('>') - 1));
  }
  ASSERT_GT(paged.size(), 0u);

  testing::RawConnection c(testing::PortOf(server_.base_url()));
  c.Send("GET /api/crm/v1/contacts/export HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " +
         admin_ + "\r\n\r\n");
  auto r = c.Read(std::chrono::seconds(60));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->Header("Transfer-Encoding").value_or(""), "chunked");
  EXPECT_FALSE(r->Header("Link"));
  EXPECT_EQ(r->Header("Content-Type").value_or(""), "text/csv; charset=utf-8");
  EXPECT_GE(r->chunks, 3u);  // 12,003 rows in pages of 5,000
  EXPECT_EQ(r->body, paged);
  EXPECT_EQ(ParseCsv(r->body).size(), 12004u);  // the header row and every contact
}

}  // namespace
}  // namespace crmd::resttest

#include "src/crm/seed.h"

#include <random>
#include <string>
#include <vector>

#include "src/crm/contacts_repo.h"
#include "src/crm/groups_repo.h"
#include "src/crm/lists.h"

namespace crmd::crm {
namespace {

constexpr const char* kFirst[] = {
    "James",  "Mary",      "Robert",  "Patricia", "John",    "Jennifer", "Michael", "Linda",
    "David",  "Elizabeth", "William", "Barbara",  "Richard", "Susan",    "Joseph",  "Jessica",
    "Thomas", "Sarah",     "Carlos",  "Karen",    "Ana",     "Lucas",    "Sofia",   "Mateo",
    "Emma",   "Noah",      "Olivia",  "Liam",     "Mia",     "Amelia",   "Yuki",    "Hiroshi",
    "Aisha",  "Omar",      "Fatima",  "Ivan",     "Olga",    "Lars",     "Ingrid",  "Priya",
    "Arjun",  "Chen",      "Mei",     "Kwame",    "Zanele",  "Diego",    "Lucia"};
constexpr const char* kLast[] = {
    "Smith",     "Johnson",  "Williams",  "Brown",   "Jones",    "Garcia",   "Miller",   "Davis",
    "Rodriguez", "Martinez", "Hernandez", "Lopez",   "Gonzalez", "Wilson",   "Anderson", "Thomas",
    "Taylor",    "Moore",    "Jackson",   "Martin",  "Lee",      "Perez",    "Thompson", "White",
    "Harris",    "Sanchez",  "Clark",     "Ramirez", "Lewis",    "Robinson", "Walker",   "Young",
    "Allen",     "King",     "Wright",    "Scott",   "Torres",   "Nguyen",   "Hill",     "Flores",
    "Muller",    "Schmidt",  "Rossi",     "Tanaka",  "Sato",     "Kim",      "Park",     "Singh",
    "Patel",     "Okafor",   "Mensah",    "Novak",   "Larsen"};
constexpr const char* kDomains[] = {"example.com",  "example.org",  "example.net",
                                    "mail.example", "corp.example", "shop.example"};
constexpr const char* kLists[] = {"Newsletter",      "Customers",    "Leads 2026", "Webinar",
                                  "Product updates", "Beta testers", "Partners",   "Events",
                                  "Churned",         "VIP"};
constexpr const char* kTags[] = {"vip",        "hot-lead",   "cold-lead", "trial",    "paying",
                                 "churn-risk", "webinar",    "ebook",     "referral", "enterprise",
                                 "smb",        "newsletter", "support",   "partner",  "event"};
constexpr const char* kSources[] = {"form:1", "form:2", "api", "import", "mcp", "webhook"};

template <size_t N>
const char* Pick(std::mt19937& rng, const char* const (&arr)[N]) {
  return arr[std::uniform_int_distribution<size_t>(0, N - 1)(rng)];
}

Result<std::vector<int64_t>> EnsureGroups(store::Database& db, GroupKind kind,
                                          const char* const* names, int count, int64_t now) {
  return db.Write([&](store::Conn& c) -> Result<std::vector<int64_t>> {
    std::vector<int64_t> ids;
    for (int i = 0; i < count; ++i) {
      std::string name = names[i];
      auto found = groups_repo::FindRefByName(c, kind, name);
      if (!found) return Fail(found.error());
      if (*found) {
        ids.push_back((*found)->id);
        continue;
      }
      auto id = groups_repo::Insert(c, kind, name, "Seeded " + name, now);
      if (!id) return Fail(id.error());
      ids.push_back(*id);
    }
    return ids;
  });
}

}  // namespace

Result<SeedReport> Seed(store::Database& db, const SeedOptions& o) {
  SeedReport report;
  std::mt19937 rng(o.seed);
  int lists = std::min<int>(o.lists, std::size(kLists));
  int tags = std::min<int>(o.tags, std::size(kTags));
  auto list_ids = EnsureGroups(db, GroupKind::kList, kLists, lists, o.now);
  if (!list_ids) return Fail(list_ids.error());
  auto tag_ids = EnsureGroups(db, GroupKind::kTag, kTags, tags, o.now);
  if (!tag_ids) return Fail(tag_ids.error());
  report.lists = static_cast<int64_t>(list_ids->size());
  report.tags = static_cast<int64_t>(tag_ids->size());

  // Email uniqueness across repeated seeds: a run tag from the seed and the current max id.
  auto base = db.Read([](store::Conn& c) { return contacts_repo::MaxContactId(c); });
  if (!base) return Fail(base.error());

  std::discrete_distribution<int> status_dist({10, 70, 12, 5, 3});
  const char* kStatus[] = {"pending", "subscribed", "unsubscribed", "bounced", "complained"};
  for (int64_t done = 0; done < o.contacts;) {
    int64_t n = std::min<int64_t>(o.batch, o.contacts - done);
    // The callback may run twice (store/db.h): it draws from a copy of the generator and
    // counts into a total of its own, both kept once the batch is committed.
    const std::mt19937 start = rng;
    std::mt19937 gen;
    int64_t memberships = 0;
    auto st = db.Write([&](store::Conn& c) -> Result<int64_t> {
      gen = start;
      memberships = 0;
      for (int64_t i = 0; i < n; ++i) {
        int64_t seq = *base + done + i + 1;
        std::string first = Pick(gen, kFirst), last = Pick(gen, kLast);
        std::string email =
            first + "." + last + "." + std::to_string(seq) + "@" + Pick(gen, kDomains);
        for (auto& ch : email) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
        int64_t created = o.now - std::uniform_int_distribution<int64_t>(0, 365 * 86400)(gen);
        Contact k;
        k.email = email;
        k.first_name = first;
        k.last_name = last;
        k.phone = "+1 555 " + std::to_string(1000000 + seq % 9000000);
        k.status = kStatus[status_dist(gen)];
        k.type = std::uniform_int_distribution<int>(0, 3)(gen) == 0 ? "customer" : "lead";
        k.source = Pick(gen, kSources);
        k.revision = 1;
        k.created_at = k.updated_at = created;
        auto id = contacts_repo::InsertContact(c, k);
        if (!id) return Fail(id.error());
        if (!list_ids->empty()) {
          int64_t l =
              (*list_ids)[std::uniform_int_distribution<size_t>(0, list_ids->size() - 1)(gen)];
          auto added = contacts_repo::AddMembership(c, /*tags=*/false, *id, l, created);
          if (!added) return Fail(added.error());
          memberships += *added ? 1 : 0;
        }
        int ntags = std::uniform_int_distribution<int>(0, 2)(gen);
        for (int t = 0; t < ntags && !tag_ids->empty(); ++t) {
          int64_t tag =
              (*tag_ids)[std::uniform_int_distribution<size_t>(0, tag_ids->size() - 1)(gen)];
          auto added = contacts_repo::AddMembership(c, /*tags=*/true, *id, tag, created);
          if (!added) return Fail(added.error());
          memberships += *added ? 1 : 0;
        }
      }
      return n;
    });
    if (!st) return Fail(st.error());
    rng = gen;
    report.memberships += memberships;
    done += n;
    report.contacts += n;
  }
  return report;
}

}  // namespace crmd::crm

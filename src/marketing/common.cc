#include "src/marketing/common.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "src/core/clock.h"
#include "src/core/crypto.h"
#include "src/crm/contacts.h"
#include "src/governance/idempotency.h"

namespace crmd::marketing {

Result<int64_t> CreateOnce(store::Conn& c, governance::Idempotency* idempotency,
                           const governance::Actor& actor, const std::string& operation,
                           const std::string& key, const std::function<Result<int64_t>()>& create) {
  if (!idempotency || key.empty()) return create();
  auto answer = idempotency->Once(c, governance::IdempotencyScope(actor, operation), key,
                                  [&]() -> Result<nlohmann::json> {
                                    auto id = create();
                                    if (!id) return Fail(id.error());
                                    return nlohmann::json{{"id", *id}};
                                  });
  if (!answer) return Fail(answer.error());
  if (answer->contains("id") && (*answer)["id"].is_number_integer())
    return (*answer)["id"].get<int64_t>();
  // Answers remembered by the tool face before the services owned this kept the whole tool
  // result, {"<kind>": {"id": ...}}; they age out within the window.
  for (const auto& [k, v] : answer->items())
    if (v.is_object() && v.contains("id") && v["id"].is_number_integer())
      return v["id"].get<int64_t>();
  return Fail(Error::Internal("idempotency answer without an id: " + answer->dump()));
}

std::string EncodeIdCursor(int64_t last_id) {
  return crypto::Base64UrlEncode("id:" + std::to_string(last_id));
}

Result<int64_t> DecodeIdCursor(std::string_view cursor) {
  if (cursor.empty()) return int64_t{0};
  auto raw = crypto::Base64UrlDecode(cursor);
  if (!raw || raw->rfind("id:", 0) != 0 || raw->size() < 4 || raw->size() > 22) {
    return Fail(Errc::kInvalidArgument, "cursor: not a cursor returned by this tool");
  }
  int64_t id = 0;
  for (char ch : raw->substr(3)) {
    if (!std::isdigit(static_cast<unsigned char>(ch))) {
      return Fail(Errc::kInvalidArgument, "cursor: not a cursor returned by this tool");
    }
    id = id * 10 + (ch - '0');
  }
  return id;
}

int ClampLimit(std::optional<int64_t> limit) {
  if (!limit || *limit <= 0) return kDefaultPageSize;
  return static_cast<int>(std::min<int64_t>(*limit, kMaxPageSize));
}

namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::optional<int64_t> ParseRfc3339(std::string_view s) {
  int y, mo, d;
  if (!Digits(s, 0, 4, &y) || s.size() < 10 || s[4] != '-' || !Digits(s, 5, 2, &mo) ||
      s[7] != '-' || !Digits(s, 8, 2, &d)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return std::nullopt;
  int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  if (s.size() == 10) return days * 86400;
  int h, mi, se;
  if (s.size() < 20 || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !Digits(s, 11, 2, &h) ||
      s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' || !Digits(s, 17, 2, &se)) {
    return std::nullopt;
  }
  if (h > 23 || mi > 59 || se > 60) return std::nullopt;
  size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    size_t start = pos;
    while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) ++pos;
    if (pos == start) return std::nullopt;
  }
  int64_t offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!Digits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !Digits(s, pos + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset = (oh * 3600 + om * 60) * (s[pos] == '+' ? 1 : -1);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  return days * 86400 + h * 3600 + mi * 60 + std::min(se, 59) - offset;
}

nlohmann::json TimeJson(std::optional<int64_t> unix_seconds) {
  if (!unix_seconds) return nullptr;
  return FormatRfc3339(*unix_seconds);
}

Result<std::vector<int64_t>> IdArray(const nlohmann::json& j, const char* key) {
  std::vector<int64_t> out;
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return out;
  const auto& a = j[key];
  if (!a.is_array())
    return Fail(Errc::kInvalidArgument, std::string(key) + ": must be an array of ids");
  for (const auto& v : a) {
    if (!v.is_number_integer() || v.get<int64_t>() <= 0) {
      return Fail(Errc::kInvalidArgument, std::string(key) + ": ids are positive integers");
    }
    int64_t id = v.get<int64_t>();
    if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(id);
  }
  return out;
}

Result<std::string> WhyNotMailed(store::Conn& c, crm::ContactService& contacts,
                                 const std::string& status, const std::string& email) {
  if (status != kSubscribedStatus) return "contact is " + status;
  auto hit = contacts.SuppressedIn(c, email);
  if (!hit) return Fail(hit.error());
  return *hit ? crm::SuppressedSkip(**hit) : std::string();
}

}  // namespace crmd::marketing

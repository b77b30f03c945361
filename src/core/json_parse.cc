#include "src/core/json_parse.h"

#include <locale.h>

#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "src/core/utf8.h"

namespace crmd {

namespace {

using json = nlohmann::json;

// A recursive-descent parser of RFC 8259 JSON that builds nlohmann::json values in place.
// It accepts exactly what nlohmann's own parser accepts (in strict mode, a UTF-8 byte order
// mark at the start included) and builds the same value, number types included: a
// non-negative integer is unsigned, a negative one signed, one too large for 64 bits and
// any number with a fraction or an exponent a double; a number that overflows a double is
// refused. tests/fuzz/json_strict_fuzz.cc checks that equivalence. (nlohmann's SAX lexer,
// one virtual-free but per-character call with its bookkeeping, was 8,000 of the 12,400
// instructions of a tools/call body; docs/performance.md.)
// The first problem stops the parse, as it would have stopped nlohmann's: a container
// opened deeper than `max_depth`, or a member name its object already has (checked as
// soon as the name is read), or anything else that is not JSON.
class Parser {
 public:
  // The parser recurses once per open container: `max_depth` is capped so that no caller
  // can ask for a stack deeper than kMaxRecursion frames.
  static constexpr int kMaxRecursion = 1000;
  Parser(std::string_view text, int max_depth, ParsedJson& out)
      : p_(text.data()),
        end_(text.data() + text.size()),
        max_depth_(max_depth < kMaxRecursion ? max_depth : kMaxRecursion),
        out_(out) {}

  bool Document(json& root) {
    if (end_ - p_ >= 1 && static_cast<unsigned char>(*p_) == 0xEF) {
      if (end_ - p_ < 3 || static_cast<unsigned char>(p_[1]) != 0xBB ||
          static_cast<unsigned char>(p_[2]) != 0xBF)
        return Syntax();
      p_ += 3;
    }
    SkipSpace();
    if (!Value(root, 0)) return false;
    SkipSpace();
    return p_ == end_ || Syntax();
  }

 private:
  bool Syntax() {
    if (out_.problem == JsonProblem::kNone) {
      out_.problem = JsonProblem::kSyntax;
      out_.detail = "the body is not valid JSON";
    }
    return false;
  }

  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  bool Literal(const char* word, size_t n) {
    if (static_cast<size_t>(end_ - p_) < n || std::memcmp(p_, word, n) != 0) return Syntax();
    p_ += n;
    return true;
  }

  // `depth`: the containers open around this value (the top-level one is at depth 0).
  bool Value(json& out, int depth) {
    if (p_ == end_) return Syntax();
    switch (*p_) {
      case '{':
        return Object(out, depth);
      case '[':
        return Array(out, depth);
      case '"': {
        std::string s;
        if (!String(s)) return false;
        out = std::move(s);
        return true;
      }
      case 't':
        if (!Literal("true", 4)) return false;
        out = true;
        return true;
      case 'f':
        if (!Literal("false", 5)) return false;
        out = false;
        return true;
      case 'n':
        if (!Literal("null", 4)) return false;
        out = nullptr;
        return true;
      default:
        return Number(out);
    }
  }

  bool Open(int depth) {
    if (depth < max_depth_) return true;
    out_.problem = JsonProblem::kTooDeep;
    out_.detail = "the document is nested deeper than " + std::to_string(max_depth_) + " levels";
    return false;
  }

  bool Object(json& out, int depth) {
    if (!Open(depth)) return false;
    ++p_;  // '{'
    out = json::object();
    auto& members = out.get_ref<json::object_t&>();
    SkipSpace();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return true;
    }
    while (true) {
      if (p_ == end_ || *p_ != '"') return Syntax();
      std::string name;
      if (!String(name)) return false;
      // try_emplace leaves `name` alone when the member is already there.
      auto [it, inserted] = members.try_emplace(std::move(name));
      if (!inserted) {
        out_.problem = JsonProblem::kDuplicateKey;
        out_.detail = "member \"" + it->first + "\" appears twice in one object";
        return false;
      }
      SkipSpace();
      if (p_ == end_ || *p_ != ':') return Syntax();
      ++p_;
      SkipSpace();
      if (!Value(it->second, depth + 1)) return false;
      SkipSpace();
      if (p_ == end_) return Syntax();
      if (*p_ == ',') {
        ++p_;
        SkipSpace();
        continue;
      }
      if (*p_ != '}') return Syntax();
      ++p_;
      return true;
    }
  }

  bool Array(json& out, int depth) {
    if (!Open(depth)) return false;
    ++p_;  // '['
    out = json::array();
    auto& items = out.get_ref<json::array_t&>();
    SkipSpace();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return true;
    }
    while (true) {
      items.emplace_back();
      if (!Value(items.back(), depth + 1)) return false;
      SkipSpace();
      if (p_ == end_) return Syntax();
      if (*p_ == ',') {
        ++p_;
        SkipSpace();
        continue;
      }
      if (*p_ != ']') return Syntax();
      ++p_;
      return true;
    }
  }

  static int Hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // Four hex digits after "\u"; -1 if they are not.
  int FourHex() {
    if (end_ - p_ < 4) return -1;
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      const int h = Hex(p_[i]);
      if (h < 0) return -1;
      v = v * 16 + h;
    }
    p_ += 4;
    return v;
  }

  static void PutUtf8(std::string& s, uint32_t cp) {
    if (cp < 0x80) {
      s.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      s.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      s.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      s.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      s.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  // One escape after its backslash.
  bool Escape(std::string& s) {
    if (p_ == end_) return Syntax();
    const char c = *p_++;
    switch (c) {
      case '"':
        s.push_back('"');
        return true;
      case '\\':
        s.push_back('\\');
        return true;
      case '/':
        s.push_back('/');
        return true;
      case 'b':
        s.push_back('\b');
        return true;
      case 'f':
        s.push_back('\f');
        return true;
      case 'n':
        s.push_back('\n');
        return true;
      case 'r':
        s.push_back('\r');
        return true;
      case 't':
        s.push_back('\t');
        return true;
      case 'u':
        break;
      default:
        return Syntax();
    }
    const int first = FourHex();
    if (first < 0) return Syntax();
    uint32_t cp = static_cast<uint32_t>(first);
    if (cp == 0) {
      out_.problem = JsonProblem::kNulCharacter;
      out_.detail = "a string contains \\u0000 (NUL), which is not accepted";
      return false;
    }
    if (cp >= 0xDC00 && cp <= 0xDFFF) return Syntax();  // a low surrogate alone
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      // A high surrogate: a low one must follow, as "\uDC00".."\uDFFF".
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return Syntax();
      p_ += 2;
      const int second = FourHex();
      if (second < 0xDC00 || second > 0xDFFF) return Syntax();
      cp = 0x10000 + ((cp - 0xD800) << 10) + (static_cast<uint32_t>(second) - 0xDC00);
    }
    PutUtf8(s, cp);
    return true;
  }

  // A string from its opening quote; `s` gets its value.
  bool String(std::string& s) {
    ++p_;  // '"'
    // The common case, printable ASCII up to the closing quote, is copied in one go.
    const char* run = p_;
    while (p_ < end_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        s.append(run, p_);
        ++p_;
        return true;
      }
      if (c == '\\') {
        s.append(run, p_);
        ++p_;
        if (!Escape(s)) return false;
        run = p_;
        continue;
      }
      if (c < 0x20) return Syntax();  // a control character must be escaped
      if (c < 0x80) {
        ++p_;
        continue;
      }
      const size_t n = Utf8Sequence(std::string_view(p_, static_cast<size_t>(end_ - p_)), 0);
      if (n == 0) return Syntax();
      p_ += n;
    }
    return Syntax();  // no closing quote
  }

  // -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
  bool Number(json& out) {
    const char* start = p_;
    const auto digits = [&] {
      const char* from = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      return p_ > from;
    };
    if (p_ < end_ && *p_ == '-') ++p_;
    if (p_ == end_) return Syntax();
    if (*p_ == '0') {
      ++p_;
    } else if (*p_ >= '1' && *p_ <= '9') {
      digits();
    } else {
      return Syntax();
    }
    bool integral = true;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      if (!digits()) return Syntax();
      integral = false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return Syntax();
      integral = false;
    }
    if (integral) {
      if (*start == '-') {
        int64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc{}) {
          out = static_cast<json::number_integer_t>(v);
          return true;
        }
      } else {
        uint64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc{}) {
          out = static_cast<json::number_unsigned_t>(v);
          return true;
        }
      }
      // Too large for 64 bits: a double, as nlohmann makes it.
    }
    // strtod in the C locale, as nlohmann reads a number (its result for an underflow
    // included); one too large for a double is refused, as nlohmann refuses it.
    static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", static_cast<locale_t>(0));
    const std::string token(start, p_);
    const double v = strtod_l(token.c_str(), nullptr, c_locale);
    if (!std::isfinite(v)) return Syntax();
    out = static_cast<json::number_float_t>(v);
    return true;
  }

  const char* p_;
  const char* const end_;
  const int max_depth_;
  ParsedJson& out_;
};

}  // namespace

ParsedJson ParseJsonStrict(std::string_view text, int max_depth) {
  ParsedJson out;
  json value;
  Parser parser(text, max_depth, out);
  if (!parser.Document(value)) {
    if (out.problem == JsonProblem::kNone) {  // not reached: every failure says why
      out.problem = JsonProblem::kSyntax;
      out.detail = "the body is not valid JSON";
    }
    return out;
  }
  out.value = std::move(value);
  return out;
}

}  // namespace crmd

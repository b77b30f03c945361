#include "src/core/json_parse.h"

#include <utility>
#include <vector>

namespace crmd {

namespace {

using json = nlohmann::json;

// nlohmann's SAX events, building the document as its own DOM parser does, and refusing a
// container nested too deep or a member name an open object already has. The first
// problem stops the parse. (The DOM parser with a callback had built and then discarded
// values, and kept a set of names per object: 27,000 instructions for a 150-byte body.)
class StrictBuilder {
 public:
  StrictBuilder(json& root, int max_depth, ParsedJson& out)
      : root_(root), max_depth_(max_depth), out_(out) {}

  bool null() { return Put(nullptr); }
  bool boolean(bool v) { return Put(v); }
  bool number_integer(json::number_integer_t v) { return Put(v); }
  bool number_unsigned(json::number_unsigned_t v) { return Put(v); }
  bool number_float(json::number_float_t v, const json::string_t&) { return Put(v); }
  bool string(json::string_t& v) { return Put(std::move(v)); }
  bool binary(json::binary_t& v) { return Put(std::move(v)); }

  bool start_object(std::size_t) { return Open(json::value_t::object); }
  bool start_array(std::size_t) { return Open(json::value_t::array); }
  bool end_object() { return Close(); }
  bool end_array() { return Close(); }

  bool key(json::string_t& name) {
    auto& members = open_.back()->get_ref<json::object_t&>();
    // try_emplace leaves `name` alone when the member is already there.
    auto [it, inserted] = members.try_emplace(std::move(name));
    if (!inserted) {
      out_.problem = JsonProblem::kDuplicateKey;
      out_.detail = "member \"" + it->first + "\" appears twice in one object";
      return false;
    }
    member_ = &it->second;
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    syntax_error_ = true;
    return false;
  }

  bool syntax_error() const { return syntax_error_; }

 private:
  // The place of the next value: the root, the array's new last element, or the member
  // whose name came last.
  template <typename V>
  json* Place(V&& v) {
    if (open_.empty()) {
      root_ = json(std::forward<V>(v));
      return &root_;
    }
    json* top = open_.back();
    if (top->is_array()) {
      auto& items = top->get_ref<json::array_t&>();
      items.emplace_back(std::forward<V>(v));
      return &items.back();
    }
    *member_ = json(std::forward<V>(v));
    return member_;
  }

  template <typename V>
  bool Put(V&& v) {
    Place(std::forward<V>(v));
    return true;
  }

  bool Open(json::value_t type) {
    // As deep as the containers already open: the top-level one is at depth 0.
    if (static_cast<int>(open_.size()) >= max_depth_) {
      out_.problem = JsonProblem::kTooDeep;
      out_.detail = "the document is nested deeper than " + std::to_string(max_depth_) + " levels";
      return false;
    }
    open_.push_back(Place(type));
    return true;
  }

  bool Close() {
    open_.pop_back();
    return true;
  }

  json& root_;
  const int max_depth_;
  ParsedJson& out_;
  std::vector<json*> open_;
  json* member_ = nullptr;
  bool syntax_error_ = false;
};

}  // namespace

ParsedJson ParseJsonStrict(std::string_view text, int max_depth) {
  ParsedJson out;
  json value;
  StrictBuilder builder(value, max_depth, out);
  // nlohmann's lexer ends the input at a NUL byte and would take `{"a":1}\0junk` for
  // `{"a":1}`; JSON allows none outside strings, and inside them only escaped.
  const bool has_nul = text.find('\0') != std::string_view::npos;
  const bool ok =
      !has_nul && json::sax_parse(text, &builder, json::input_format_t::json, /*strict=*/true);
  if (out.problem != JsonProblem::kNone) return out;
  if (!ok || builder.syntax_error()) {
    out.problem = JsonProblem::kSyntax;
    out.detail = "the body is not valid JSON";
    return out;
  }
  out.value = std::move(value);
  return out;
}

}  // namespace crmd

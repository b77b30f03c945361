#include "src/mcp/registry.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "src/mcp/data_block.h"
#include "src/mcp/json_schema.h"
#include "tests/unit/mcp/tool_error.h"

namespace crmd::mcp {
namespace {

using testing::ErrorOf;

using nlohmann::json;

json EchoDescriptor(const std::string& name = "echo", const std::string& scope = "contacts:read") {
  return json{
      {"name", name},
      {"title", "Echo"},
      {"description", "Echoes its argument."},
      {"scope", scope},
      {"annotations", {{"readOnlyHint", true}}},
      {"inputSchema",
       {{"type", "object"},
        {"properties",
         {{"email", {{"type", "string"}, {"pattern", "^[^@]+@[^@]+$"}}},
          {"count", {{"type", "integer"}, {"minimum", 1}}},
          {"items",
           {{"type", "array"},
            {"items", {{"type", "object"}, {"properties", {{"id", {{"type", "integer"}}}}}}}}}}},
        {"required", {"email"}},
        {"additionalProperties", false}}},
      {"outputSchema",
       {{"type", "object"},
        {"properties", {{"email", {{"type", "string"}}}}},
        {"required", {"email"}}}},
  };
}

ToolHandler Echo() {
  return [](const ToolContext&, const json& args) {
    return ToolOutcome::Ok(json{{"email", args["email"]}});
  };
}

Principal WithScopes(std::set<std::string> scopes) {
  Principal p;
  p.subject = "u1";
  p.client_id = "c1";
  p.scopes = std::move(scopes);
  return p;
}

json CallParams(const std::string& name, json args) {
  return json{{"name", name}, {"arguments", std::move(args)}};
}

class RegistryTest : public ::testing::Test {
 protected:
  RegistryTest() { EXPECT_TRUE(registry_.RegisterDescriptor(EchoDescriptor(), Echo())); }
  CallOutcome Call(const json& params, std::set<std::string> scopes = {"contacts:read"}) {
    Principal p = WithScopes(std::move(scopes));
    ToolContext ctx{p, "req-1", "sess-1"};
    return registry_.Call(ctx, params);
  }
  ToolRegistry registry_;
};

TEST_F(RegistryTest, SuccessCarriesStructuredContentAndTextBlock_McpTools_StructuredContent) {
  auto o = Call(CallParams("echo", {{"email", "a@b.c"}}));
  ASSERT_EQ(o.kind, CallOutcome::Kind::kResult);
  EXPECT_EQ(o.result["isError"], false);
  EXPECT_EQ(o.result["structuredContent"]["email"], "a@b.c");
  ASSERT_EQ(o.result["content"].size(), 1u);
  EXPECT_EQ(o.result["content"][0]["type"], "text");
  EXPECT_EQ(mcp::ParseDataText(o.result["content"][0]["text"].get<std::string>()).value_or(json()),
            o.result["structuredContent"]);
}

TEST_F(RegistryTest, UnknownToolIsInvalidParams_McpTools_ErrorHandling) {
  auto o = Call(CallParams("nope", json::object()));
  ASSERT_EQ(o.kind, CallOutcome::Kind::kRpcError);
  EXPECT_EQ(o.rpc_error.code, jsonrpc::kInvalidParams);
  EXPECT_NE(o.rpc_error.message.find("Unknown tool"), std::string::npos);
}

TEST_F(RegistryTest, MissingNameOrNonObjectArgumentsIsInvalidParams) {
  EXPECT_EQ(Call(json{{"arguments", json::object()}}).rpc_error.code, jsonrpc::kInvalidParams);
  EXPECT_EQ(Call(json{{"name", "echo"}, {"arguments", json::array()}}).rpc_error.code,
            jsonrpc::kInvalidParams);
}

TEST_F(RegistryTest, MissingRequiredFieldIsToolErrorNamingField) {
  auto o = Call(CallParams("echo", json::object()));
  ASSERT_EQ(o.kind, CallOutcome::Kind::kResult);
  EXPECT_EQ(o.result["isError"], true);
  const json& err = ErrorOf(o.result);
  EXPECT_EQ(err["code"], "validation_failed");
  EXPECT_EQ(err["field"], "email");
  EXPECT_EQ(err["message"].get<std::string>().rfind("/email: ", 0), 0u) << err.dump();
}

TEST_F(RegistryTest, WrongTypeNamesNestedField) {
  auto o = Call(CallParams("echo", {{"email", "a@b.c"}, {"items", {{{"id", "x"}}}}}));
  const json& err = ErrorOf(o.result);
  EXPECT_EQ(o.result["isError"], true);
  EXPECT_EQ(err["field"], "items.0.id") << err.dump();
}

TEST_F(RegistryTest, PatternAndMinimumAndExtraPropertyAreReported) {
  EXPECT_EQ(ErrorOf(Call(CallParams("echo", {{"email", "nope"}})).result)["field"], "email");
  EXPECT_EQ(ErrorOf(Call(CallParams("echo", {{"email", "a@b"}, {"count", 0}})).result)["field"],
            "count");
  EXPECT_EQ(ErrorOf(Call(CallParams("echo", {{"email", "a@b"}, {"extra", 1}})).result)["field"],
            "extra");
}

TEST_F(RegistryTest, HandlerDoesNotRunOnInvalidArguments) {
  ToolRegistry r;
  int calls = 0;
  ASSERT_TRUE(r.RegisterDescriptor(EchoDescriptor("counted"), [&](const ToolContext&, const json&) {
    ++calls;
    return ToolOutcome::Ok(json{{"email", "x"}});
  }));
  Principal p = WithScopes({"contacts:read"});
  r.Call({p, "", ""}, CallParams("counted", {{"count", 2}}));
  EXPECT_EQ(calls, 0);
}

TEST_F(RegistryTest, MissingScopeIsInsufficientScopeBeforeValidation_Rfc6750_3_1) {
  auto o = Call(CallParams("echo", json::object()), {"lists:read"});
  ASSERT_EQ(o.kind, CallOutcome::Kind::kInsufficientScope);
  EXPECT_EQ(o.required_scope, "contacts:read");
}

TEST_F(RegistryTest, EmptyScopeNeedsNoScope) {
  ASSERT_TRUE(registry_.RegisterDescriptor(EchoDescriptor("open", ""), Echo()));
  auto o = Call(CallParams("open", {{"email", "a@b"}}), {});
  EXPECT_EQ(o.kind, CallOutcome::Kind::kResult);
  EXPECT_EQ(o.result["isError"], false);
}

TEST_F(RegistryTest, HandlerPermissionDeniedWithRequiredScopeBecomesInsufficientScope) {
  ASSERT_TRUE(registry_.RegisterDescriptor(
      EchoDescriptor("confirm", ""), [](const ToolContext&, const json&) {
        return ToolOutcome::Fail({Errc::kPermissionDenied, "needs delete", ""},
                                 json{{"required_scope", "contacts:delete"}});
      }));
  auto o = Call(CallParams("confirm", {{"email", "a@b"}}));
  ASSERT_EQ(o.kind, CallOutcome::Kind::kInsufficientScope);
  EXPECT_EQ(o.required_scope, "contacts:delete");
}

TEST_F(RegistryTest, BusinessFailureIsToolErrorWithCodeAndDetails) {
  ASSERT_TRUE(
      registry_.RegisterDescriptor(EchoDescriptor("conflict"), [](const ToolContext&, const json&) {
        return ToolOutcome::Fail({Errc::kRevisionConflict, "stale revision", "internal"},
                                 json{{"current", {{"revision", 4}}}});
      }));
  auto o = Call(CallParams("conflict", {{"email", "a@b"}}));
  ASSERT_EQ(o.kind, CallOutcome::Kind::kResult);
  EXPECT_EQ(o.result["isError"], true);
  const json& err = ErrorOf(o.result);
  EXPECT_EQ(err["code"], "revision_conflict");
  EXPECT_EQ(err["message"], "stale revision");
  EXPECT_EQ(err["details"]["current"]["revision"], 4);
  EXPECT_EQ(o.result["content"][0]["text"].get<std::string>().find("internal"), std::string::npos);
}

TEST_F(RegistryTest, InternalFailureHidesDetail) {
  ASSERT_TRUE(
      registry_.RegisterDescriptor(EchoDescriptor("broken"), [](const ToolContext&, const json&) {
        return ToolOutcome::Fail(Error::Internal("db password=hunter2"));
      }));
  auto o = Call(CallParams("broken", {{"email", "a@b"}}));
  EXPECT_EQ(o.result["isError"], true);
  EXPECT_EQ(o.result.dump().find("hunter2"), std::string::npos);
}

TEST_F(RegistryTest, HandlerExceptionIsInternalErrorWithoutDetail) {
  ASSERT_TRUE(registry_.RegisterDescriptor(EchoDescriptor("throws"),
                                           [](const ToolContext&, const json&) -> ToolOutcome {
                                             throw std::runtime_error("secret detail");
                                           }));
  auto o = Call(CallParams("throws", {{"email", "a@b"}}));
  ASSERT_EQ(o.kind, CallOutcome::Kind::kRpcError);
  EXPECT_EQ(o.rpc_error.code, jsonrpc::kInternalError);
  EXPECT_EQ(o.rpc_error.message.find("secret"), std::string::npos);
}

TEST_F(RegistryTest, OutputSchemaMismatchIsGenericToolError) {
  ASSERT_TRUE(
      registry_.RegisterDescriptor(EchoDescriptor("liar"), [](const ToolContext&, const json&) {
        return ToolOutcome::Ok(json{{"email", 42}});
      }));
  auto o = Call(CallParams("liar", {{"email", "a@b"}}));
  ASSERT_EQ(o.kind, CallOutcome::Kind::kResult);
  EXPECT_EQ(o.result["isError"], true);
  EXPECT_EQ(ErrorOf(o.result)["code"], "internal");
}

TEST_F(RegistryTest, OutputValidationCanBeTurnedOff) {
  ToolRegistry r(ToolRegistryOptions{.validate_output = false});
  ASSERT_TRUE(r.RegisterDescriptor(EchoDescriptor("liar"), [](const ToolContext&, const json&) {
    return ToolOutcome::Ok(json{{"email", 42}});
  }));
  Principal p = WithScopes({"contacts:read"});
  auto o = r.Call({p, "", ""}, CallParams("liar", {{"email", "a@b"}}));
  EXPECT_EQ(o.result["isError"], false);
}

// A result given as text (ToolOutcome::OkText): a tree like any other by default; kept
// as text for the endpoint when materialize_text_results is off, and checked against the
// outputSchema either way when validation is on.
TEST_F(RegistryTest, ResultGivenAsTextIsATreeOrStaysTextForTheAnswer) {
  auto as_text = [](std::string text) {
    return [text](const ToolContext&, const json&) { return ToolOutcome::OkText(text); };
  };
  Principal p = WithScopes({"contacts:read"});
  for (bool materialize : {true, false}) {
    for (bool validate : {true, false}) {
      SCOPED_TRACE(std::string(materialize ? "tree" : "text") + (validate ? ", checked" : ""));
      ToolRegistry r(ToolRegistryOptions{.validate_output = validate,
                                         .materialize_text_results = materialize});
      ASSERT_TRUE(r.RegisterDescriptor(EchoDescriptor("texter"), as_text(R"({"email":"t@x.y"})")));
      ASSERT_TRUE(r.RegisterDescriptor(EchoDescriptor("liar"), as_text(R"({"email":42})")));
      ASSERT_TRUE(r.RegisterDescriptor(EchoDescriptor("garbler"), as_text(R"({"email":)")));
      auto o = r.Call({p, "", ""}, CallParams("texter", {{"email", "a@b"}}));
      ASSERT_EQ(o.kind, CallOutcome::Kind::kResult);
      EXPECT_EQ(o.result["isError"], false);
      EXPECT_EQ(o.structured_in_text, !materialize);
      EXPECT_EQ(o.text_is_structured, materialize);
      if (materialize) {
        EXPECT_EQ(o.result["content"][0]["text"], DataText(R"({"email":"t@x.y"})"));
        EXPECT_EQ(o.result["structuredContent"], json({{"email", "t@x.y"}}));
      } else {
        // The text alone: the endpoint writes content and structuredContent from it.
        EXPECT_EQ(o.structured_text, R"({"email":"t@x.y"})");
        EXPECT_FALSE(o.result.contains("content"));
        EXPECT_FALSE(o.result.contains("structuredContent"));
      }
      // Against the schema, or not JSON at all: a generic tool error when checked.
      for (const char* bad : {"liar", "garbler"}) {
        auto b = r.Call({p, "", ""}, CallParams(bad, {{"email", "a@b"}}));
        ASSERT_EQ(b.kind, CallOutcome::Kind::kResult);
        const bool caught = validate || (materialize && std::string(bad) == "garbler");
        EXPECT_EQ(b.result["isError"], caught) << bad;
        if (caught) {
          EXPECT_EQ(ErrorOf(b.result)["code"], "internal") << bad;
        }
      }
    }
  }
}

TEST(RegistryRegistration, RefusesMalformedDescriptors) {
  ToolRegistry r;
  json d = EchoDescriptor();
  d.erase("inputSchema");
  EXPECT_FALSE(r.RegisterDescriptor(d, Echo()));
  d = EchoDescriptor();
  d["inputSchema"] = {{"type", "string"}};
  EXPECT_FALSE(r.RegisterDescriptor(d, Echo()));
  d = EchoDescriptor("bad name");
  EXPECT_FALSE(r.RegisterDescriptor(d, Echo()));
  d = EchoDescriptor();
  d["inputSchema"]["properties"]["email"]["pattern"] = "([";
  EXPECT_FALSE(r.RegisterDescriptor(d, Echo()));
  d = EchoDescriptor();
  d["inputSchema"]["properties"]["email"]["type"] = 5;
  EXPECT_FALSE(r.RegisterDescriptor(d, Echo()));
  EXPECT_TRUE(r.RegisterDescriptor(EchoDescriptor(), Echo()));
  EXPECT_FALSE(r.RegisterDescriptor(EchoDescriptor(), Echo())) << "duplicate";
  EXPECT_EQ(r.size(), 1u);
}

TEST(RegistryRegistration, RegisterFailsWhenSchemaFileIsMissing) {
  ToolRegistry r;
  auto s = r.Register("no_such_tool_xyz", Echo());
  ASSERT_FALSE(s);
  EXPECT_NE(s.error().message.find("no_such_tool_xyz.json"), std::string::npos);
}

TEST(RegistryList, PaginatesWithOpaqueCursor_McpPagination) {
  ToolRegistry r(ToolRegistryOptions{.page_size = 2});
  for (const char* n : {"e", "a", "d", "c", "b"})
    ASSERT_TRUE(r.RegisterDescriptor(EchoDescriptor(n), Echo()));
  std::vector<std::string> seen;
  json params = json::object();
  for (int page = 0; page < 5; ++page) {
    auto l = r.List(params);
    ASSERT_FALSE(l.error);
    for (const auto& t : l.result["tools"]) {
      seen.push_back(t["name"]);
      EXPECT_FALSE(t.contains("scope"));
      EXPECT_TRUE(t.contains("inputSchema"));
    }
    if (!l.result.contains("nextCursor")) break;
    params = {{"cursor", l.result["nextCursor"]}};
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c", "d", "e"}));
}

TEST(RegistryList, InvalidCursorIsInvalidParams) {
  ToolRegistry r;
  ASSERT_TRUE(r.RegisterDescriptor(EchoDescriptor(), Echo()));
  auto l = r.List(json{{"cursor", "!!not-a-cursor"}});
  ASSERT_TRUE(l.error);
  EXPECT_EQ(l.error->code, jsonrpc::kInvalidParams);
  EXPECT_TRUE(r.List(json{{"cursor", 3}}).error);
}

TEST(JsonSchema, RootViolationHasEmptyPointer) {
  auto s = CompiledSchema::Compile(json{{"type", "object"}});
  ASSERT_TRUE(s);
  auto v = (*s)->Validate(json::array());
  ASSERT_TRUE(v);
  EXPECT_EQ(v->pointer, "");
  EXPECT_EQ(v->message.rfind("(root): ", 0), 0u);
  EXPECT_FALSE((*s)->Validate(json::object()));
}

// Every App of a process registers the same tools: a schema compiled before is shared, and
// judges documents as its first compilation did. A schema that fails to compile is refused
// every time, never remembered as compiled.
TEST(JsonSchema, TheSameSchemaCompiledTwiceSharesOneCompilation) {
  const json schema = {{"type", "object"},
                       {"properties", {{"email", {{"type", "string"}, {"pattern", "^[^@]+@"}}}}},
                       {"required", {"email"}},
                       {"additionalProperties", false}};
  auto a = CompiledSchema::Compile(schema);
  auto b = CompiledSchema::Compile(json::parse(schema.dump()));
  ASSERT_TRUE(a && b);
  EXPECT_TRUE((*a)->SharesCompilationWith(**b));
  for (const auto* s : {a->get(), b->get()}) {
    EXPECT_FALSE(s->Validate(json{{"email", "a@b"}}));
    auto v = s->Validate(json{{"email", "nobody"}});
    ASSERT_TRUE(v);
    EXPECT_EQ(v->pointer, "/email");
    EXPECT_TRUE(s->Validate(json{{"email", "a@b"}, {"extra", 1}}));
  }
  auto other = CompiledSchema::Compile(json{{"type", "object"}, {"required", {"name"}}});
  ASSERT_TRUE(other);
  EXPECT_FALSE((*other)->SharesCompilationWith(**a));
  EXPECT_FALSE((*other)->Validate(json{{"email", "x"}, {"name", "n"}}));
  EXPECT_TRUE((*other)->Validate(json{{"email", "a@b"}}));

  const json bad_pattern = {{"type", "object"},
                            {"properties", {{"x", {{"type", "string"}, {"pattern", "(["}}}}}};
  const json malformed = {{"type", "object"}, {"properties", {{"x", {{"type", 7}}}}}};
  for (int i = 0; i < 2; ++i) {
    EXPECT_FALSE(CompiledSchema::Compile(bad_pattern)) << "attempt " << i;
    EXPECT_FALSE(CompiledSchema::Compile(malformed)) << "attempt " << i;
  }
}

}  // namespace
}  // namespace crmd::mcp

-- wrk script: authenticated MCP tools/call on one session.
-- Environment: CRMD_TOKEN, CRMD_SESSION, CRMD_TOOL (default get_contact), CRMD_ARGS (JSON;
-- every %UNIQUE% in it becomes a value unique to the request, e.g. for create_contact),
-- CRMD_RUN (a prefix that keeps %UNIQUE% distinct across runs).
local token = os.getenv("CRMD_TOKEN")
local session = os.getenv("CRMD_SESSION")  -- unset or empty: no session header (stateless peers)
if session == "" then session = nil end
local tool = os.getenv("CRMD_TOOL") or "get_contact"
local args = os.getenv("CRMD_ARGS") or '{"id":1}'
local counter = 0
local run = os.getenv("CRMD_RUN") or "r"
local threads = 0
local thread_list = {}

setup = function(thread)
  threads = threads + 1
  thread:set("tid", threads)
  table.insert(thread_list, thread)
end

request = function()
  counter = counter + 1
  local body = string.format(
    '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}',
    counter, tool, (string.gsub(args, "%%UNIQUE%%", run .. "-" .. tostring(tid or 0) .. "-" .. counter)))
  local headers = {
    ["Content-Type"] = "application/json",
    ["Accept"] = "application/json, text/event-stream",
    ["Authorization"] = "Bearer " .. token,
    ["Mcp-Session-Id"] = session,
    ["MCP-Protocol-Version"] = "2025-11-25",
  }
  return wrk.format("POST", "/mcp", headers, body)
end

-- A global, not a local: every wrk thread runs its own copy of this script, and done()
-- (in the main one) adds up the threads' counts with thread:get.
errors = 0
response = function(status, headers, body)
  if status ~= 200 or string.find(body, '"isError":true', 1, true) then
    errors = errors + 1
  end
end

done = function(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(thread_list) do total = total + (thread:get("errors") or 0) end
  io.write(string.format("non-200 or tool errors: %d\n", total))
  io.write(string.format("p50 %.2f ms, p99 %.2f ms\n", latency:percentile(50) / 1000,
                         latency:percentile(99) / 1000))
end

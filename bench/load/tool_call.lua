-- wrk script: authenticated MCP tools/call on one session.
-- Environment: CRMD_TOKEN, CRMD_SESSION, CRMD_TOOL (default get_contact), CRMD_ARGS (JSON;
-- every %UNIQUE% in it becomes a value unique to the request, e.g. for create_contact),
-- CRMD_RUN (a prefix that keeps %UNIQUE% distinct across runs), CRMD_CHECK_EACH.
--
-- Each request has its own JSON-RPC id. The request's head and the constant parts of its
-- body are built once (init); a request only joins them with its id (and %UNIQUE%). Without
-- CRMD_CHECK_EACH=1 there is no response() function, so wrk hands no answer to Lua: wrk
-- itself counts answers that are not 2xx, and bench/compare.sh counts tool errors from
-- the server's own counters (crmd's /metrics, the SDK server's /stats). With
-- CRMD_CHECK_EACH=1 every answer is checked here (status 200 and no "isError":true) and
-- done() prints the count; on two cores that costs wrk CPU the server then lacks
-- (docs/performance.md, "The load generator's share").
local token = os.getenv("CRMD_TOKEN")
local session = os.getenv("CRMD_SESSION")  -- unset or empty: no session header (stateless peers)
if session == "" then session = nil end
local tool = os.getenv("CRMD_TOOL") or "get_contact"
local args = os.getenv("CRMD_ARGS") or '{"id":1}'
local run = os.getenv("CRMD_RUN") or "r"
local check_each = os.getenv("CRMD_CHECK_EACH") == "1"
local counter = 0
local threads = 0
local thread_list = {}
local head, parts, body_end

setup = function(thread)
  threads = threads + 1
  thread:set("tid", threads)
  table.insert(thread_list, thread)
end

init = function()
  head = "POST /mcp HTTP/1.1\r\nHost: " .. wrk.host .. ":" .. wrk.port .. "\r\n" ..
         "Content-Type: application/json\r\n" ..
         "Accept: application/json, text/event-stream\r\n" ..
         "Authorization: Bearer " .. token .. "\r\n" ..
         (session and ("Mcp-Session-Id: " .. session .. "\r\n") or "") ..
         "MCP-Protocol-Version: 2025-11-25\r\n"
  -- The arguments split at each %UNIQUE%: none, or the pieces to join per request.
  local rest, pieces = args, {}
  while true do
    local at = string.find(rest, "%UNIQUE%", 1, true)
    if not at then break end
    table.insert(pieces, string.sub(rest, 1, at - 1))
    rest = string.sub(rest, at + 8)
  end
  if #pieces > 0 then
    table.insert(pieces, rest)
    parts = pieces
  end
  body_end = ',"method":"tools/call","params":{"name":"' .. tool .. '","arguments":' .. args .. '}}'
end

request = function()
  counter = counter + 1
  local body
  if parts then
    -- Each %UNIQUE% becomes <run>-<thread>-<n>.
    local unique = run .. "-" .. tostring(tid or 0) .. "-" .. counter
    body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":{"name":"' ..
           tool .. '","arguments":' .. table.concat(parts, unique) .. '}}'
  else
    body = '{"jsonrpc":"2.0","id":' .. counter .. body_end
  end
  return head .. "Content-Length: " .. #body .. "\r\n\r\n" .. body
end

-- A global, not a local: every wrk thread runs its own copy of this script, and done()
-- (in the main one) adds up the threads' counts with thread:get.
errors = 0
if check_each then
  response = function(status, headers, body)
    if status ~= 200 or string.find(body, '"isError":true', 1, true) then
      errors = errors + 1
    end
  end
end

done = function(summary, latency, requests)
  if check_each then
    local total = 0
    for _, thread in ipairs(thread_list) do total = total + (thread:get("errors") or 0) end
    io.write(string.format("non-200 or tool errors: %d\n", total))
  end
  io.write(string.format("p50 %.2f ms, p99 %.2f ms\n", latency:percentile(50) / 1000,
                         latency:percentile(99) / 1000))
end

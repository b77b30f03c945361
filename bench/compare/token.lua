-- wrk script: the OAuth token endpoint, client_credentials with HTTP Basic client
-- authentication (form-encoded body), for bench/compare.sh.
-- Environment: TOKEN_PATH (e.g. /oauth/token), TOKEN_BASIC (base64 of id:secret),
-- TOKEN_BODY (the form, e.g. grant_type=client_credentials&scope=...&resource=...).
local path = os.getenv("TOKEN_PATH")
local basic = os.getenv("TOKEN_BASIC")
local body = os.getenv("TOKEN_BODY")
local thread_list = {}

setup = function(thread)
  table.insert(thread_list, thread)
end

request = function()
  return wrk.format("POST", path, {
    ["Content-Type"] = "application/x-www-form-urlencoded",
    ["Authorization"] = "Basic " .. basic,
  }, body)
end

-- Global: each wrk thread has its own copy; done() adds them up with thread:get.
errors = 0
response = function(status, headers, resp)
  if status ~= 200 or not string.find(resp, '"access_token"', 1, true) then
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

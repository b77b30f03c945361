# crmd_pch(<target> [BEAST]): precompile the heavy third-party headers every TU uses.
function(crmd_pch target)
  if(NOT CRMD_PCH)
    return()
  endif()
  set(headers <string> <vector> <map> <unordered_map> <memory> <functional> <optional>
              <chrono> <mutex> <nlohmann/json.hpp> <tl/expected.hpp> <spdlog/spdlog.h>)
  if("BEAST" IN_LIST ARGN)
    list(APPEND headers <boost/beast/core.hpp> <boost/beast/http.hpp> <boost/asio.hpp>
                        <boost/beast/ssl.hpp>)
  endif()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()

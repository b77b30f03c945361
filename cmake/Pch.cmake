# crmd_pch(<target> [BEAST|TEST]): precompile the heavy third-party headers every TU uses.
# One header set, so one precompiled header: crmd_core makes it and every other target
# reuses it (each target had made its own identical copy, about 4.5 s of CPU each, 39 of
# them); the Beast/Asio set of src/http is its own, and so is the tests' set: the same
# headers and GoogleTest/GoogleMock (2.3 s of CPU in each of some 130 sanitized test TUs),
# made by crmd_test_support and reused by every test binary.
function(crmd_pch target)
  if(NOT CRMD_PCH)
    return()
  endif()
  set(headers <string> <vector> <map> <unordered_map> <memory> <functional> <optional>
              <chrono> <mutex> <nlohmann/json.hpp> <tl/expected.hpp> <spdlog/spdlog.h>)
  if("BEAST" IN_LIST ARGN)
    list(APPEND headers <boost/beast/core.hpp> <boost/beast/http.hpp> <boost/asio.hpp>
                        <boost/beast/ssl.hpp>)
    target_precompile_headers(${target} PRIVATE ${headers})
  elseif("TEST" IN_LIST ARGN)
    if(target STREQUAL "crmd_test_support")
      target_precompile_headers(${target} PRIVATE ${headers} <gtest/gtest.h> <gmock/gmock.h>)
    else()
      target_precompile_headers(${target} REUSE_FROM crmd_test_support)
    endif()
  elseif(target STREQUAL "crmd_core" OR NOT TARGET crmd_core)
    target_precompile_headers(${target} PRIVATE ${headers})
  else()
    target_precompile_headers(${target} REUSE_FROM crmd_core)
  endif()
endfunction()

# crmd_embed_directory(<target> <dir> [NAMESPACE <ns>]): a static library exposing every file
# under <dir> through <ns>::Find("relative/path") and <ns>::All(), by default
# crmd::embedded (see src/core/embedded.h; another namespace declares the same two
# functions, e.g. src/console/templates.h).
function(crmd_embed_directory target dir)
  cmake_parse_arguments(E "" "NAMESPACE" "" ${ARGN})
  if(NOT E_NAMESPACE)
    set(E_NAMESPACE crmd::embedded)
  endif()
  file(GLOB_RECURSE files CONFIGURE_DEPENDS RELATIVE ${dir} ${dir}/*.json ${dir}/*.sql ${dir}/*.yaml ${dir}/*.txt ${dir}/*.html ${dir}/*.mustache ${dir}/*.css ${dir}/*.js)
  set(out ${CMAKE_BINARY_DIR}/generated/${target}.cc)
  set(abs_files "")
  foreach(f ${files})
    list(APPEND abs_files ${dir}/${f})
  endforeach()
  string(REPLACE ";" "|" files_arg "${files}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DDIR=${dir} -DOUT=${out} "-DFILES=${files_arg}" -DNAMESPACE=${E_NAMESPACE} -P ${CMAKE_SOURCE_DIR}/cmake/EmbedGen.cmake
    DEPENDS ${abs_files} ${CMAKE_SOURCE_DIR}/cmake/EmbedGen.cmake
    COMMENT "Embedding ${dir}"
    VERBATIM)
  add_library(${target} STATIC ${out})
  target_include_directories(${target} PUBLIC ${CMAKE_SOURCE_DIR})
endfunction()

# crmd_embed_directory(<target> <dir>): a static library exposing every file under <dir>
# through crmd::embedded::Find("relative/path") (see src/core/embedded.h).
function(crmd_embed_directory target dir)
  file(GLOB_RECURSE files CONFIGURE_DEPENDS RELATIVE ${dir} ${dir}/*.json ${dir}/*.sql ${dir}/*.yaml ${dir}/*.txt ${dir}/*.html)
  set(out ${CMAKE_BINARY_DIR}/generated/${target}.cc)
  set(abs_files "")
  foreach(f ${files})
    list(APPEND abs_files ${dir}/${f})
  endforeach()
  string(REPLACE ";" "|" files_arg "${files}")
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DDIR=${dir} -DOUT=${out} "-DFILES=${files_arg}" -P ${CMAKE_SOURCE_DIR}/cmake/EmbedGen.cmake
    DEPENDS ${abs_files} ${CMAKE_SOURCE_DIR}/cmake/EmbedGen.cmake
    COMMENT "Embedding ${dir}"
    VERBATIM)
  add_library(${target} STATIC ${out})
  target_include_directories(${target} PUBLIC ${CMAKE_SOURCE_DIR})
endfunction()

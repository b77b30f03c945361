# The Debian package (CPack DEB): crmd and crmctl, the systemd unit, a commented config
# file and the docs. `cpack -G DEB` in the build directory writes crmd_<version>_<arch>.deb
# (docs/operations.md); tests/package/deb_test.sh builds and inspects it.
include(GNUInstallDirs)
install(TARGETS crmd crmctl RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/packaging/crmd.service DESTINATION /lib/systemd/system)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/crmd.json DESTINATION /etc/crmd)
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/operations.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME crmd)
set(CPACK_PACKAGE_VENDOR "crmd")
set(CPACK_PACKAGE_CONTACT "crmd maintainers <crmd@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "CRM and email-marketing server with an OAuth-secured MCP tool server")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${PROJECT_SOURCE_DIR}/packaging/postinst ${PROJECT_SOURCE_DIR}/packaging/postrm
    ${PROJECT_SOURCE_DIR}/packaging/conffiles)
# packaging/conffiles: /etc/crmd/crmd.json, so that an upgrade keeps the operator's edits.
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# A package from a sanitized build (the test command's build-test) is for the package test
# only: its version says so and sorts before the release (0.1.0~asan < 0.1.0), so a real
# package always upgrades over it; shlibdeps adds the sanitizer runtimes it needs.
if(CRMD_SANITIZE)
  string(REPLACE "," "+" crmd_sanitize_tag "${CRMD_SANITIZE}")
  string(REPLACE "address" "asan" crmd_sanitize_tag "${crmd_sanitize_tag}")
  string(REPLACE "undefined" "ubsan" crmd_sanitize_tag "${crmd_sanitize_tag}")
  set(CPACK_DEBIAN_PACKAGE_VERSION "${PROJECT_VERSION}~${crmd_sanitize_tag}")
  string(APPEND CPACK_PACKAGE_DESCRIPTION_SUMMARY " (sanitized test build, not for production)")
  # Uncompressed: its binaries are several hundred MB, and gzip took over a minute of the
  # test run (package_deb: 85 s sanitized, 5 s plain).
  set(CPACK_DEBIAN_COMPRESSION_TYPE none)
endif()
include(CPack)

# packaging/install.cmake - what `cmake --install build --prefix P` puts
# where, and the Debian package `cpack -G DEB` makes of it (docs/install.md).
#
#   P/bin/cagec, P/bin/cagerun, P/bin/cage-launch (Linux)
#   P/libexec/cage/cage-lookup     cagerun's name-service lookups (its
#                                  getaddrinfo, getpwnam), found from bin/
#                                  by the relative path ../libexec/cage
#   P/libexec/cage/cage-lint       lint's verdict on cagerun's layers,
#                                  found the same way
#   P/share/cage/stdlib/           the standard library, found from bin/ by
#                                  the relative path ../share/cage/stdlib
#   P/share/man/man1/cagec.1.gz, cagerun.1.gz, P/share/man/man5/cage.5.gz
#   P/share/doc/cage/              README.md, docs/*.md, examples/
#
# Included from the top-level CMakeLists.txt after the targets exist.

set(CAGE_PROGRAMS cagec)
if(TARGET cagerun)
  list(APPEND CAGE_PROGRAMS cagerun)
endif()
# The launcher's client runs cagerun from its own folder when it falls back.
if(TARGET cage-launch)
  list(APPEND CAGE_PROGRAMS cage-launch)
endif()
install(TARGETS ${CAGE_PROGRAMS} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS cage-lookup cage-lint RUNTIME DESTINATION ${CMAKE_INSTALL_LIBEXECDIR}/cage)
# The library is data the programs read; 0644 files in 0755 directories, so
# that stdlib_dir.c trusts it (writable by its owner only).
install(DIRECTORY ${CMAKE_SOURCE_DIR}/stdlib/ DESTINATION ${CMAKE_INSTALL_DATADIR}/cage/stdlib
  FILE_PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
  DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
    WORLD_READ WORLD_EXECUTE
  FILES_MATCHING PATTERN "*.cage")
# Man pages are installed gzip-compressed, as Debian policy asks (-n: no
# name or time stamp inside, so the package is reproducible).
find_program(GZIP gzip REQUIRED)
set(CAGE_MAN_GZ)
foreach(page cagec.1 cagerun.1 cage.5)
  set(gz ${CMAKE_BINARY_DIR}/man/${page}.gz)
  add_custom_command(OUTPUT ${gz}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/man
    COMMAND sh -c "\"$0\" -9n -c \"$1\" > \"$2\"" ${GZIP} ${CMAKE_SOURCE_DIR}/docs/man/${page} ${gz}
    DEPENDS ${CMAKE_SOURCE_DIR}/docs/man/${page}
    COMMENT "gzip docs/man/${page}" VERBATIM)
  list(APPEND CAGE_MAN_GZ ${gz})
  string(REGEX REPLACE ".*\\.([0-9])$" "\\1" section ${page})
  install(FILES ${gz} DESTINATION ${CMAKE_INSTALL_MANDIR}/man${section})
endforeach()
add_custom_target(cage_man_pages ALL DEPENDS ${CAGE_MAN_GZ})
install(FILES ${CMAKE_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
file(GLOB CAGE_DOC_PAGES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/docs/*.md)
install(FILES ${CAGE_DOC_PAGES} DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY ${CMAKE_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples
  FILES_MATCHING PATTERN "*.cage")

# ---- Debian package: cpack -G DEB (run in the build directory) ----
set(CPACK_PACKAGE_NAME cage)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "sandbox policy compiler and runtime for AI coding agents")
set(CPACK_PACKAGE_DESCRIPTION
  "cagec compiles .cage policies (a small declarative language) to Seatbelt
profiles, proxy rule tables and Linux sandbox plans, lints and formats them.
cagerun runs a command inside a policy on Linux: Landlock, seccomp,
namespaces and a host-filtering HTTP(S) proxy.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CAGE_DEB_MAINTAINER "cage developers <cage@example.invalid>" CACHE STRING
  "Maintainer field of the Debian package")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${CAGE_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
# Depends is computed from the programs' shared libraries by dpkg-shlibdeps
# (Debian's dpkg-dev); without it Depends must be given by hand, since a
# package that claims no dependencies would install and then fail to run.
find_program(DPKG_SHLIBDEPS dpkg-shlibdeps)
if(DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
else()
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "" CACHE STRING "Depends of the Debian package (no dpkg-shlibdeps)")
  if(NOT CPACK_DEBIAN_PACKAGE_DEPENDS)
    message(STATUS "dpkg-shlibdeps not found: cpack -G DEB needs -DCPACK_DEBIAN_PACKAGE_DEPENDS=...")
  endif()
endif()
set(CPACK_GENERATOR DEB)
set(CPACK_STRIP_FILES OFF)
include(CPack)

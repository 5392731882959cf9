# Installing: `cmake --install` into a prefix that is then moved, and the
# Debian package from `cpack -G DEB` used in a clean root (chroot), each
# without the source tree (testsuite/install/install.sh); the man pages
# checked by groff and man for warnings.
add_test(NAME install/package COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install/install.sh
  ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
set_tests_properties(install/package PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
find_program(GROFF groff)
if(GROFF)
  add_test(NAME install/man-pages COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/install/man.sh
    ${CMAKE_SOURCE_DIR})
  set_tests_properties(install/man-pages PROPERTIES TIMEOUT 60)
else()
  message(WARNING "groff not found: the install/man-pages test is not registered")
endif()

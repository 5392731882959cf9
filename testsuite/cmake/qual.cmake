# The Linux sandbox's qualification suite (testsuite/qual/README.md): every
# case shows an operation working without cagerun, then refused under it.
# Registered twice: as whoever runs CTest (root in CI), and as the
# unprivileged user cage-test that .ci/deps creates (when CTest runs as
# root; otherwise both run as the current user).
if(TARGET cagerun AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(CAGE_QUAL ${CMAKE_CURRENT_SOURCE_DIR}/qual/qual.sh)
  add_test(NAME qual/root COMMAND sh ${CAGE_QUAL}
    $<TARGET_FILE:cagerun> $<TARGET_FILE:cagec> ${CMAKE_SOURCE_DIR})
  add_test(NAME qual/user COMMAND sh ${CAGE_QUAL} --user cage-test
    $<TARGET_FILE:cagerun> $<TARGET_FILE:cagec> ${CMAKE_SOURCE_DIR})
  set_tests_properties(qual/root qual/user PROPERTIES TIMEOUT 600)
endif()

# The create guard (testsuite/qual/guard.sh): names a policy denies but
# Landlock cannot cover, attacked every way a shell or a C program can
# create a name, and ordinary work compared with and without cagerun.
if(TARGET cagerun AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(CAGE_GUARD ${CMAKE_CURRENT_SOURCE_DIR}/qual/guard.sh)
  add_test(NAME qual/guard-root COMMAND sh ${CAGE_GUARD}
    $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  add_test(NAME qual/guard-user COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/as_user.sh
    cage-test sh ${CAGE_GUARD} $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  set_tests_properties(qual/guard-root qual/guard-user PROPERTIES TIMEOUT 600)
endif()

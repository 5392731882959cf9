# The launch-time git discovery (runtime/gitscan/): its configuration
# reader compared with git itself (testsuite/gitscan/parser.sh), and the
# qualification of what it protects, as root and as cage-test
# (testsuite/gitscan/qual.sh), and its kept walk (testsuite/gitscan/keep.sh).
add_executable(gs_dump ${CMAKE_CURRENT_SOURCE_DIR}/gitscan/gs_dump.c)
target_link_libraries(gs_dump PRIVATE cage)
add_test(NAME gitscan/parser COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/gitscan/parser.sh
  $<TARGET_FILE:gs_dump> ${CMAKE_SOURCE_DIR})
set_tests_properties(gitscan/parser PROPERTIES TIMEOUT 120)
if(TARGET cagerun AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(CAGE_GSQUAL ${CMAKE_CURRENT_SOURCE_DIR}/gitscan/qual.sh)
  add_test(NAME gitscan/qual-root COMMAND sh ${CAGE_GSQUAL} $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  add_test(NAME gitscan/qual-user COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/as_user.sh
    cage-test sh ${CAGE_GSQUAL} $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  set_tests_properties(gitscan/qual-root gitscan/qual-user PROPERTIES TIMEOUT 300)
  # The kept walk never finds less than a fresh one (gitscan/keep.sh).
  set(CAGE_GSKEEP ${CMAKE_CURRENT_SOURCE_DIR}/gitscan/keep.sh)
  add_test(NAME gitscan/keep-root COMMAND sh ${CAGE_GSKEEP} $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  add_test(NAME gitscan/keep-user COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/as_user.sh
    cage-test sh ${CAGE_GSKEEP} $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  set_tests_properties(gitscan/keep-root gitscan/keep-user PROPERTIES TIMEOUT 120)
endif()

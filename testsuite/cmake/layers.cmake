# cagerun's layers, trust, --pin, --show, --shell and skip-permission flags,
# driving the real binary (testsuite/layers/layers_test.sh), and cagerun's
# command line against docs/cagerun.md (testsuite/layers/cli_test.sh).
if(TARGET cagerun)
  add_test(NAME layers/cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/layers/cli_test.sh
    $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  set_tests_properties(layers/cli PROPERTIES TIMEOUT 120)
endif()
if(TARGET cagerun AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME layers/run COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/layers/layers_test.sh
    $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  set_tests_properties(layers/run PROPERTIES TIMEOUT 600)
endif()

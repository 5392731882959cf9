# cagec's command line: statuses, hostile inputs, atomic output, --help vs docs.
add_test(NAME cli/cagec COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cli/cli_test.sh
  $<TARGET_FILE:cagec> ${CMAKE_SOURCE_DIR})
set_tests_properties(cli/cagec PROPERTIES TIMEOUT 300)

# Proxy table: cagec --emit table / --dump-table end to end, the lookup
# benchmark as a smoke test, and the libFuzzer target when CAGE_FUZZ=ON.
add_test(NAME cpt/cli
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cpt/cli.sh $<TARGET_FILE:cagec> ${CMAKE_CURRENT_BINARY_DIR}/cpt-cli)
set_tests_properties(cpt/cli PROPERTIES TIMEOUT 60)

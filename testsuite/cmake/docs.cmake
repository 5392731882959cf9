# The documents match the tools (testsuite/docs/docs_check.py): every
# ```cage block in README.md and docs/ compiles and is formatted, README.md
# starts with its title and the two commands, every command and option the
# documents and man pages show exists in the programs' --help. The
# self-test proves each check reports a planted mistake.
find_program(PYTHON3 python3)
if(PYTHON3 AND TARGET cagerun)
  add_test(NAME docs/match-tools COMMAND ${PYTHON3} ${CMAKE_CURRENT_SOURCE_DIR}/docs/docs_check.py
    $<TARGET_FILE:cagec> $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  add_test(NAME docs/match-tools-self-test COMMAND ${PYTHON3}
    ${CMAKE_CURRENT_SOURCE_DIR}/docs/docs_check.py --self-test
    $<TARGET_FILE:cagec> $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  set_tests_properties(docs/match-tools docs/match-tools-self-test PROPERTIES TIMEOUT 300)
endif()

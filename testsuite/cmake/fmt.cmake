# cagec fmt: the command line, and every shipped policy (examples/, stdlib/)
# already in canonical form. The list is a glob, so files added later are
# checked too (CONFIGURE_DEPENDS re-globs on every build).
add_test(NAME fmt/cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fmt/cli_test.sh $<TARGET_FILE:cagec>
  ${CMAKE_SOURCE_DIR})
set_tests_properties(fmt/cli PROPERTIES TIMEOUT 120)

file(GLOB_RECURSE CAGE_FMT_SHIPPED CONFIGURE_DEPENDS
  ${CMAKE_SOURCE_DIR}/examples/*.cage ${CMAKE_SOURCE_DIR}/stdlib/*.cage)
if(CAGE_FMT_SHIPPED)
  add_test(NAME fmt/shipped-files-formatted
    COMMAND $<TARGET_FILE:cagec> fmt --check ${CAGE_FMT_SHIPPED})
  set_tests_properties(fmt/shipped-files-formatted PROPERTIES TIMEOUT 120)
endif()

# The cage-fmt hook of .pre-commit-hooks.yaml, run by the real pre-commit.
find_program(CAGE_FMT_PRE_COMMIT pre-commit)
find_program(CAGE_FMT_GIT git)
if(CAGE_FMT_PRE_COMMIT AND CAGE_FMT_GIT)
  add_test(NAME fmt/pre-commit COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/fmt/precommit.sh
    $<TARGET_FILE:cagec> ${CMAKE_SOURCE_DIR})
  set_tests_properties(fmt/pre-commit PROPERTIES TIMEOUT 300)
else()
  message(WARNING "pre-commit or git not found: the fmt/pre-commit test is not registered")
endif()

# sbpl_golden.cmake - every example compiles, and its SBPL profile equals the
# golden file in testsuite/golden/ byte for byte. Regenerate after an
# intended change with: CAGE_UPDATE_GOLDEN=1 ctest -R golden/ (then review
# `git diff testsuite/golden`).
# Every example is compiled with the same home (--home /Users/alice) and
# workspace, so the goldens do not depend on who runs the tests.
# Every file in examples/ is covered: a new example without a golden fails
# (run with CAGE_UPDATE_GOLDEN=1 once to create it).
file(GLOB CAGE_GOLDEN_EXAMPLE_FILES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.cage)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/golden)
foreach(example ${CAGE_GOLDEN_EXAMPLE_FILES})
  get_filename_component(name ${example} NAME_WE)
  add_test(NAME golden/${name}
    COMMAND ${CMAKE_COMMAND}
      -DCAGEC=$<TARGET_FILE:cagec>
      -DSRC_DIR=${CMAKE_SOURCE_DIR}
      -DPOLICY=examples/${name}.cage
      -DGOLDEN=${CMAKE_CURRENT_SOURCE_DIR}/golden/${name}.sb
      -DOUT=${CMAKE_CURRENT_BINARY_DIR}/golden/${name}.sb
      -DDEFINE=workspace=/Users/alice/src/app
      -P ${CMAKE_CURRENT_SOURCE_DIR}/golden/check_golden.cmake)
endforeach()

# Every standard library module compiles to SBPL on its own (the examples
# above cover most of them only together).
file(GLOB_RECURSE CAGE_STD_MODULES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/stdlib/std/*.cage)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/stdlib_check)
foreach(mod ${CAGE_STD_MODULES})
  file(RELATIVE_PATH rel ${CMAKE_SOURCE_DIR}/stdlib ${mod})
  string(REGEX REPLACE "\\.cage$" "" import_name "${rel}")
  string(REPLACE "/" "_" stem "${import_name}")
  set(check ${CMAKE_CURRENT_BINARY_DIR}/stdlib_check/${stem}.cage)
  file(WRITE ${check} "cage 1\nimport \"${import_name}\"\n")
  add_test(NAME stdlib/${import_name}
    COMMAND $<TARGET_FILE:cagec> ${check} --home /Users/alice --emit sbpl)
  set_tests_properties(stdlib/${import_name} PROPERTIES PASS_REGULAR_EXPRESSION ";; end of profile")
endforeach()

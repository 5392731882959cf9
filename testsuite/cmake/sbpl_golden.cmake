# sbpl_golden.cmake - every example compiles, and its SBPL profile equals the
# golden file in testsuite/golden/ byte for byte. Regenerate after an
# intended change with: CAGE_UPDATE_GOLDEN=1 ctest -R golden/ (then review
# `git diff testsuite/golden`).
# Every example is compiled with the same home (--home /Users/alice) and
# workspace, so the goldens do not depend on who runs the tests.
set(CAGE_GOLDEN_EXAMPLES claude-code codex go-offline layered monitor-first)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/golden)
foreach(name ${CAGE_GOLDEN_EXAMPLES})
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

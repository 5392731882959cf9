# sbpl_golden.cmake - every example compiles, and its SBPL profile equals the
# golden file in testsuite/golden/ byte for byte. Regenerate after an
# intended change with: CAGE_UPDATE_GOLDEN=1 ctest -R golden/ (then review
# `git diff testsuite/golden`).
# Every example is compiled with the same home (--home /Users/alice) and
# workspace, so the goldens do not depend on who runs the tests. --emit sbpl
# implies --target macos, so they do not depend on the host either.
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
      -DARGS=--emit\;sbpl\;--home\;/Users/alice
      -P ${CMAKE_CURRENT_SOURCE_DIR}/golden/check_golden.cmake)
endforeach()

# The same examples compiled for Linux, as IR: what each rule means there
# (the Linux launcher enforces this rule list). Home /home/alice.
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/golden/linux)
foreach(example ${CAGE_GOLDEN_EXAMPLE_FILES})
  get_filename_component(name ${example} NAME_WE)
  add_test(NAME golden/linux/${name}
    COMMAND ${CMAKE_COMMAND}
      -DCAGEC=$<TARGET_FILE:cagec>
      -DSRC_DIR=${CMAKE_SOURCE_DIR}
      -DPOLICY=examples/${name}.cage
      -DGOLDEN=${CMAKE_CURRENT_SOURCE_DIR}/golden/linux/${name}.ir
      -DOUT=${CMAKE_CURRENT_BINARY_DIR}/golden/linux/${name}.ir
      -DDEFINE=workspace=/home/alice/src/app
      -DARGS=--target\;linux\;--emit\;ir\;--home\;/home/alice
      -P ${CMAKE_CURRENT_SOURCE_DIR}/golden/check_golden.cmake)
endforeach()


# The standard library: its layout (portable vs. platform modules, both
# platforms complete, Linux modules within what Landlock enforces), and
# every module compiled on its own for each target: to SBPL for macOS, to IR
# for Linux (the examples cover most modules only together).
include(${CMAKE_CURRENT_SOURCE_DIR}/stdlib/modules.cmake)
add_test(NAME stdlib/layout COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/stdlib/layout.sh
  $<TARGET_FILE:cagec> ${CMAKE_SOURCE_DIR})
set_tests_properties(stdlib/layout PROPERTIES TIMEOUT 120)

cage_stdlib_modules(CAGE_STD_MODULES)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/stdlib_check)
foreach(import_name ${CAGE_STD_MODULES})
  string(REPLACE "/" "_" stem "${import_name}")
  set(check ${CMAKE_CURRENT_BINARY_DIR}/stdlib_check/${stem}.cage)
  # beside std/guard, which declares the param workspace that it and the
  # agent modules (which import it) need
  file(WRITE ${check} "cage 1\nimport \"${import_name}\"\nimport \"std/guard\"\n")
  add_test(NAME stdlib/macos/${import_name}
    COMMAND $<TARGET_FILE:cagec> ${check} --home /Users/alice -D workspace=/Users/alice/src/app
      --emit sbpl)
  set_tests_properties(stdlib/macos/${import_name} PROPERTIES PASS_REGULAR_EXPRESSION ";; end of profile")
  add_test(NAME stdlib/linux/${import_name}
    COMMAND $<TARGET_FILE:cagec> ${check} --target linux --home /home/alice
      -D workspace=/home/alice/src/app --emit ir)
  set_tests_properties(stdlib/linux/${import_name} PROPERTIES PASS_REGULAR_EXPRESSION "^# cage ir 1; target linux;")
endforeach()

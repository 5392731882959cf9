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
  # -p POLICY --task FILE: what a task layer on a policy may do, as root
  # and as the unprivileged cage-test.
  add_test(NAME layers/task-on-policy COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/layers/task_policy.sh
    $<TARGET_FILE:cagerun>)
  add_test(NAME layers/task-on-policy/user COMMAND sh
    ${CMAKE_CURRENT_SOURCE_DIR}/linux/as_user.sh cage-test
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/layers/task_policy.sh $<TARGET_FILE:cagerun>)
  set_tests_properties(layers/task-on-policy layers/task-on-policy/user PROPERTIES TIMEOUT 300)
  # The command layer: fixture installs laid out as nvm, fnm, Homebrew,
  # npx, bun, pnpm and the native installer lay them out start in the
  # layered form; a directory others may write and a deny over the package
  # are 125. As root and as cage-test.
  add_test(NAME layers/command COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/layers/command_test.sh
    $<TARGET_FILE:cagerun>)
  add_test(NAME layers/command/user COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/as_user.sh cage-test
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/layers/command_test.sh $<TARGET_FILE:cagerun>)
  set_tests_properties(layers/command layers/command/user PROPERTIES TIMEOUT 300)
  # Version managers' shims in the command layer: asdf, mise and volta
  # fixture homes; the version each manager would pick runs, its install
  # tree and shims stay read-only inside; 125 naming the file otherwise.
  # As root and as cage-test.
  add_test(NAME layers/shims COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/layers/shims_test.sh
    $<TARGET_FILE:cagerun>)
  add_test(NAME layers/shims/user COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/as_user.sh cage-test
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/layers/shims_test.sh $<TARGET_FILE:cagerun>)
  set_tests_properties(layers/shims layers/shims/user PROPERTIES TIMEOUT 300)
endif()

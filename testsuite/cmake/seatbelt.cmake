# The Seatbelt launcher where there is no Seatbelt: `cagerun --backend
# seatbelt` goes through plan, lease and proxy and fails closed, the
# command never running (testsuite/seatbelt/failclosed.sh). On a Mac the
# real checks are testsuite/macos/qual.sh, registered below: there a
# profile Seatbelt cannot load or launch fails the test, never skips it.
if(APPLE AND TARGET cagerun)
  add_test(NAME macos/qual COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/macos/qual.sh
    $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  set_tests_properties(macos/qual PROPERTIES TIMEOUT 600)
endif()
# The installed Linux cagerun has no Seatbelt launcher (it would link the
# SBPL emitter): cagerun_sbx is cagerun with it (CAGE_RUN_SEATBELT), a test
# program only. That cagerun itself refuses the backend is checked too.
if(NOT APPLE AND TARGET cagerun)
  add_executable(cagerun_sbx ${CMAKE_SOURCE_DIR}/runtime/cagerun_main.c)
  target_compile_definitions(cagerun_sbx PRIVATE CAGE_RUN_SEATBELT)
  target_link_libraries(cagerun_sbx PRIVATE cage)
  add_test(NAME seatbelt/fail-closed
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/seatbelt/failclosed.sh $<TARGET_FILE:cagerun_sbx>)
  set_tests_properties(seatbelt/fail-closed PROPERTIES TIMEOUT 120)
  if(TARGET cagerun_portable)
    add_test(NAME seatbelt/fail-closed/portable-proxy
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/seatbelt/failclosed.sh $<TARGET_FILE:cagerun_portable>)
    set_tests_properties(seatbelt/fail-closed/portable-proxy PROPERTIES TIMEOUT 120)
  endif()
endif()

# The steps after the plan (exec, the proxy serving the command, statuses,
# signals, clean-up) need something to exec: cagerun_fakesbx is cagerun
# built with SBX_SANDBOX_EXEC pointing at testsuite/seatbelt/fake-sandbox-
# exec.sh, which records what it gets and runs the command unsandboxed.
# A test program only; nothing is installed from it.
if(NOT APPLE AND TARGET cagerun)
  add_executable(cagerun_fakesbx ${CMAKE_SOURCE_DIR}/runtime/cagerun_main.c
    ${CMAKE_SOURCE_DIR}/runtime/seatbelt/sbx_plan.c ${CMAKE_SOURCE_DIR}/runtime/seatbelt/sbx_run.c)
  target_compile_definitions(cagerun_fakesbx PRIVATE CAGE_RUN_SEATBELT
    SBX_SANDBOX_EXEC="${CMAKE_CURRENT_SOURCE_DIR}/seatbelt/fake-sandbox-exec.sh")
  target_link_libraries(cagerun_fakesbx PRIVATE cage)
  add_test(NAME seatbelt/launch
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/seatbelt/launch.sh $<TARGET_FILE:cagerun_fakesbx>)
  set_tests_properties(seatbelt/launch PROPERTIES TIMEOUT 180)
endif()
# The same with the portable proxy (what macOS runs): the command's
# requests through the poll-based proxy, and its signal self-pipe.
if(NOT APPLE AND TARGET cagerun AND TARGET cage_prx_portable)
  add_executable(cagerun_fakesbx_portable ${CMAKE_SOURCE_DIR}/runtime/cagerun_main.c
    ${CMAKE_SOURCE_DIR}/runtime/seatbelt/sbx_plan.c ${CMAKE_SOURCE_DIR}/runtime/seatbelt/sbx_run.c
    $<TARGET_OBJECTS:cage_prx_portable>)
  target_compile_definitions(cagerun_fakesbx_portable PRIVATE CAGE_PORTABLE_PROXY CAGE_RUN_SEATBELT
    SBX_SANDBOX_EXEC="${CMAKE_CURRENT_SOURCE_DIR}/seatbelt/fake-sandbox-exec.sh")
  target_link_libraries(cagerun_fakesbx_portable PRIVATE cage)
  add_test(NAME seatbelt/launch/portable-proxy
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/seatbelt/launch.sh $<TARGET_FILE:cagerun_fakesbx_portable>)
  set_tests_properties(seatbelt/launch/portable-proxy PROPERTIES TIMEOUT 180)
endif()

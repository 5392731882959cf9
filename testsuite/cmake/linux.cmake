# The Linux sandbox against its own plan: lnx_difftest asks the plan about
# every path and access of a fixture tree and has lnx_probe try each one
# for real under cagerun. The probe runs inside the sandbox, where the
# sanitizers' runtimes (LeakSanitizer traces itself with ptrace, which
# seccomp refuses) do not belong: it is built without them.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND TARGET cagerun)
  add_executable(lnx_probe ${CMAKE_CURRENT_SOURCE_DIR}/linux/lnx_probe.c)
  target_compile_options(lnx_probe PRIVATE -fno-sanitize=all)
  target_link_options(lnx_probe PRIVATE -fno-sanitize=all)
  add_executable(lnx_difftest ${CMAKE_CURRENT_SOURCE_DIR}/linux/lnx_difftest.c)
  target_link_libraries(lnx_difftest PRIVATE cage)
  add_test(NAME linux/plan-vs-sandbox
    COMMAND lnx_difftest $<TARGET_FILE:cagerun> $<TARGET_FILE:lnx_probe>)
  set_tests_properties(linux/plan-vs-sandbox PROPERTIES TIMEOUT 120)
  # Fail closed: each set-up step broken from outside by lnx_failinj.
  add_executable(lnx_failinj ${CMAKE_CURRENT_SOURCE_DIR}/linux/lnx_failinj.c)
  target_link_libraries(lnx_failinj PRIVATE PkgConfig::SECCOMP)
  add_test(NAME linux/fail-closed COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/failclosed.sh
    $<TARGET_FILE:cagerun> $<TARGET_FILE:lnx_failinj>)
  set_tests_properties(linux/fail-closed PROPERTIES TIMEOUT 300)
  # The same two as the unprivileged user cage-test (when CTest runs as root).
  set(CAGE_AS_USER sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/as_user.sh cage-test)
  add_test(NAME linux/plan-vs-sandbox/user COMMAND ${CAGE_AS_USER}
    $<TARGET_FILE:lnx_difftest> $<TARGET_FILE:cagerun> $<TARGET_FILE:lnx_probe>)
  add_test(NAME linux/fail-closed/user COMMAND ${CAGE_AS_USER}
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/failclosed.sh
    $<TARGET_FILE:cagerun> $<TARGET_FILE:lnx_failinj>)
  set_tests_properties(linux/plan-vs-sandbox/user linux/fail-closed/user PROPERTIES TIMEOUT 300)
  # Private caches: the real ones refused, npm/pip/cargo/go warm in the
  # agent's own folder (testsuite/linux/caches.sh), as root and as cage-test.
  add_test(NAME linux/caches COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/caches.sh
    $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  add_test(NAME linux/caches/user COMMAND ${CAGE_AS_USER}
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/caches.sh $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  set_tests_properties(linux/caches linux/caches/user PROPERTIES TIMEOUT 600)
endif()

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
  # The README's first command as cage-test under the default soft
  # open-files limit (1024), in a clone of the checkout that user owns.
  add_test(NAME linux/readme-user COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/readme_user.sh
    $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR} cage-test)
  set_tests_properties(linux/readme-user PROPERTIES TIMEOUT 300)
  # Denials while a full-screen program owns the terminal (tmux): the
  # screen stays the program's, cagerun denials --follow shows them live,
  # the summary at exit names them. As root and as cage-test.
  add_test(NAME linux/terminal COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/terminal.sh
    $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  add_test(NAME linux/terminal/user COMMAND ${CAGE_AS_USER}
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/terminal.sh $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  set_tests_properties(linux/terminal linux/terminal/user PROPERTIES TIMEOUT 120)
  # Resource limits: a fork bomb, a disk filler, a file-descriptor hog and
  # an allocation, each beside its control, as root and as cage-test.
  add_executable(lnx_hog ${CMAKE_CURRENT_SOURCE_DIR}/linux/lnx_hog.c)
  target_compile_options(lnx_hog PRIVATE -fno-sanitize=all)
  target_link_options(lnx_hog PRIVATE -fno-sanitize=all)
  add_test(NAME linux/limits COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/limits.sh
    $<TARGET_FILE:cagerun> $<TARGET_FILE:lnx_hog> ${CMAKE_SOURCE_DIR})
  add_test(NAME linux/limits/user COMMAND ${CAGE_AS_USER}
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/limits.sh
    $<TARGET_FILE:cagerun> $<TARGET_FILE:lnx_hog> ${CMAKE_SOURCE_DIR})
  # One at a time: each counts the processes of its user.
  set_tests_properties(linux/limits linux/limits/user PROPERTIES TIMEOUT 300
    RESOURCE_LOCK cage-limits)
  # Private caches: the real ones refused, npm/pip/cargo/go warm in the
  # agent's own folder (testsuite/linux/caches.sh), as root and as cage-test.
  add_test(NAME linux/caches COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/caches.sh
    $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  add_test(NAME linux/caches/user COMMAND ${CAGE_AS_USER}
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/caches.sh $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR})
  set_tests_properties(linux/caches linux/caches/user PROPERTIES TIMEOUT 600)
endif()
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  # The kept plan (docs/plan-format.md): a stale one never grants more than
  # a fresh build, a tampered one is rebuilt, no cage writes the cache
  # (testsuite/linux/plancache.sh), as root and as cage-test.
  add_test(NAME linux/plan-cache COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/plancache.sh
    $<TARGET_FILE:cagerun> $<TARGET_FILE:cagec>)
  add_test(NAME linux/plan-cache/user COMMAND ${CAGE_AS_USER}
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/plancache.sh $<TARGET_FILE:cagerun> $<TARGET_FILE:cagec>)
  set_tests_properties(linux/plan-cache linux/plan-cache/user PROPERTIES TIMEOUT 300)
  # The compile kept on disk (docs/cagerun.md): taken only for the same
  # request with nothing it read changed (testsuite/linux/keptcompile.sh),
  # as root and as cage-test.
  add_test(NAME linux/kept-compile COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/keptcompile.sh
    $<TARGET_FILE:cagerun>)
  add_test(NAME linux/kept-compile/user COMMAND ${CAGE_AS_USER}
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/keptcompile.sh $<TARGET_FILE:cagerun>)
  set_tests_properties(linux/kept-compile linux/kept-compile/user PROPERTIES TIMEOUT 300)
  # The layered form's kept compile: taken only under the layers found on
  # this run, a project layer still approved (testsuite/linux/keptlayers.sh).
  add_test(NAME linux/kept-layers COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/keptlayers.sh
    $<TARGET_FILE:cagerun>)
  add_test(NAME linux/kept-layers/user COMMAND ${CAGE_AS_USER}
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/keptlayers.sh $<TARGET_FILE:cagerun>)
  set_tests_properties(linux/kept-layers linux/kept-layers/user PROPERTIES TIMEOUT 300)
endif()
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND TARGET cage-launch)
  # The per-user launcher and its client (testsuite/linux/launcher.sh), as
  # root and as cage-test.
  add_executable(lnx_confine ${CMAKE_CURRENT_SOURCE_DIR}/linux/lnx_confine.c)
  target_compile_options(lnx_confine PRIVATE -fno-sanitize=all)
  target_link_options(lnx_confine PRIVATE -fno-sanitize=all)
  set(cage_launcher_args $<TARGET_FILE:cagerun> $<TARGET_FILE:cage-launch>
    $<TARGET_FILE:lnx_confine> ${CMAKE_CURRENT_SOURCE_DIR}/linux/launcher_client.py)
  add_test(NAME linux/launcher COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/launcher.sh
    ${cage_launcher_args})
  add_test(NAME linux/launcher/user COMMAND ${CAGE_AS_USER}
    /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/launcher.sh ${cage_launcher_args})
  set_tests_properties(linux/launcher linux/launcher/user PROPERTIES TIMEOUT 300)
endif()

# Monitor mode end to end (Linux): a scripted session monitored, its
# would-block list, suggest -> enforce round trips (the session and a make
# build), toggles, and the supervisor's memory over a long session; the observer's
# fast path against its full path; also as
# the unprivileged user cage-test when CTest runs as root.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND TARGET cagerun)
  add_test(NAME monitor/session COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/monitor/monitor.sh
    $<TARGET_FILE:cagerun> $<TARGET_FILE:cagec> ${CMAKE_SOURCE_DIR})
  add_test(NAME monitor/session/user COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/as_user.sh
    cage-test /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/monitor/monitor.sh
    $<TARGET_FILE:cagerun> $<TARGET_FILE:cagec> ${CMAKE_SOURCE_DIR})
  set_tests_properties(monitor/session monitor/session/user PROPERTIES TIMEOUT 300)
  # The observer's fast path (classify, then look at the file system only
  # for what is recorded) gives the records the full path gives.
  add_test(NAME monitor/differential COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/monitor/differential.sh
    $<TARGET_FILE:cagerun>)
  add_test(NAME monitor/differential/user COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/linux/as_user.sh
    cage-test /bin/sh ${CMAKE_CURRENT_SOURCE_DIR}/monitor/differential.sh $<TARGET_FILE:cagerun>)
  set_tests_properties(monitor/differential monitor/differential/user PROPERTIES TIMEOUT 120
    SKIP_RETURN_CODE 77)
endif()

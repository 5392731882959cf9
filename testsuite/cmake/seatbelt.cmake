# The Seatbelt launcher where there is no Seatbelt: `cagerun --backend
# seatbelt` goes through plan, lease and proxy and fails closed, the
# command never running (testsuite/seatbelt/failclosed.sh). On a Mac the
# real checks are testsuite/macos/qual.sh.
if(TARGET cagerun)
  add_test(NAME seatbelt/fail-closed
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/seatbelt/failclosed.sh $<TARGET_FILE:cagerun>)
  set_tests_properties(seatbelt/fail-closed PROPERTIES TIMEOUT 120)
  if(TARGET cagerun_portable)
    add_test(NAME seatbelt/fail-closed/portable-proxy
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/seatbelt/failclosed.sh $<TARGET_FILE:cagerun_portable>)
    set_tests_properties(seatbelt/fail-closed/portable-proxy PROPERTIES TIMEOUT 120)
  endif()
endif()

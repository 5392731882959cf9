# Benchmark programs (built with everything, run by testsuite/bench/*.sh,
# never by CTest: a unit test must not depend on timing).
add_executable(gen_policy ${CMAKE_CURRENT_SOURCE_DIR}/bench/gen_policy.c)
add_executable(bench_run ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_run.c)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(create_bench ${CMAKE_CURRENT_SOURCE_DIR}/bench/create_bench.c)
  add_executable(ns_floor ${CMAKE_CURRENT_SOURCE_DIR}/bench/ns_floor.c)
endif()
# The generator's output must compile: a cheap guard that the benchmark input
# stays valid as the language evolves.
add_test(NAME bench/generated-policy-compiles
  COMMAND sh -c "$<TARGET_FILE:gen_policy> 1000 > gen1000.cage && $<TARGET_FILE:cagec> gen1000.cage --emit ir -o gen1000.ir --home /home/u"
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

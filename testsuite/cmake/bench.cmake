# Benchmark programs (built with everything, run by testsuite/bench/*.sh,
# never by CTest: a unit test must not depend on timing).
add_executable(gen_policy ${CMAKE_CURRENT_SOURCE_DIR}/bench/gen_policy.c)
add_executable(bench_run ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_run.c)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(create_bench ${CMAKE_CURRENT_SOURCE_DIR}/bench/create_bench.c)
  add_executable(ns_floor ${CMAKE_CURRENT_SOURCE_DIR}/bench/ns_floor.c)
  # cagerun's own clone of init into a cgroup v2, each way it has.
  add_executable(cgroup_join ${CMAKE_CURRENT_SOURCE_DIR}/bench/cgroup_join.c)
  target_link_libraries(cgroup_join PRIVATE cage)
endif()
# The generator's output must compile: a cheap guard that the benchmark input
# stays valid as the language evolves.
add_test(NAME bench/generated-policy-compiles
  COMMAND sh -c "$<TARGET_FILE:gen_policy> 1000 > gen1000.cage && $<TARGET_FILE:cagec> gen1000.cage --emit ir -o gen1000.ir --home /home/u"
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# bench_run -j N: every round starts N copies at once, and every copy is a
# sample. Each copy below leaves a file and waits (at most 5 s) until its
# round's other copy has left one too, so copies run one after the other
# would fail; the samples are counted from what bench_run prints.
add_test(NAME bench/bench-run-jobs
  COMMAND sh -c "d=$(mktemp -d) && trap 'rm -rf \"$d\"' EXIT && \
    $<TARGET_FILE:bench_run> -j 2 3 -- sh -c 'd=$0; : > \"$d/$$\"; i=0; \
      while [ $(ls \"$d\" | wc -l) -lt 2 ]; do i=$((i+1)); [ $i -le 500 ] || exit 1; sleep 0.01; done; \
      sleep 0.5; rm -f \"$d/$$\"' \"$d\" > \"$d.out\" && grep -q 'runs=6 ' \"$d.out\" && rm -f \"$d.out\"")

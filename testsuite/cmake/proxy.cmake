# Proxy integration tests: prx_testproxy runs libcage's proxy with rules from
# its command line; prx_itest starts local servers on 127.0.0.x (echo, HTTP,
# a never-accepting listener, openssl s_server) and drives the proxy with raw
# sockets and curl. Needs the curl and openssl programs.
add_executable(prx_testproxy ${CMAKE_CURRENT_SOURCE_DIR}/proxy/prx_testproxy.c)
target_link_libraries(prx_testproxy PRIVATE cage)
find_package(Threads REQUIRED)
add_executable(prx_itest ${CMAKE_CURRENT_SOURCE_DIR}/proxy/prx_itest.c
  ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_net.c)
target_link_libraries(prx_itest PRIVATE PkgConfig::XXHASH Threads::Threads)
add_test(NAME proxy/integration COMMAND prx_itest $<TARGET_FILE:prx_testproxy>)
set_tests_properties(proxy/integration PROPERTIES TIMEOUT 300)
if(TARGET cagerun)
  add_test(NAME proxy/cagerun COMMAND prx_itest $<TARGET_FILE:prx_testproxy> --cagerun $<TARGET_FILE:cagerun>)
  set_tests_properties(proxy/cagerun PROPERTIES TIMEOUT 120)
endif()

# Benchmarks (not tests): build/testsuite/prx_bench build/testsuite/prx_testproxy,
# and tun_bench, run by testsuite/bench/tunnel.sh.
add_executable(prx_bench ${CMAKE_SOURCE_DIR}/testsuite/bench/prx_bench.c
  ${CMAKE_SOURCE_DIR}/testsuite/bench/bench_net.c)
target_link_libraries(prx_bench PRIVATE Threads::Threads)
add_executable(tun_bench ${CMAKE_SOURCE_DIR}/testsuite/bench/tun_bench.c
  ${CMAKE_SOURCE_DIR}/testsuite/bench/bench_net.c)
target_link_libraries(tun_bench PRIVATE Threads::Threads)

# libFuzzer target for the request parser, only with -DCAGE_FUZZ=ON and clang:
#   mkdir -p /tmp/fh/seeds && cd /tmp/fh && .../build-fuzz/testsuite/fuzz_prx_http -max_total_time=300 seeds
if(CAGE_FUZZ)
  add_executable(fuzz_prx_http ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_prx_http.c)
  target_link_libraries(fuzz_prx_http PRIVATE cage)
  target_compile_options(fuzz_prx_http PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_prx_http PRIVATE -fsanitize=fuzzer)
endif()

# What the user sees of a denial (host, port, rule; the rule that would
# allow an internal address; the mode note) from cagerun --proxy-only and
# from the proxy of a sandboxed command. Needs curl and python3.
if(TARGET cagerun AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME proxy/denials COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/proxy/denials.sh
    $<TARGET_FILE:cagerun>)
  set_tests_properties(proxy/denials PROPERTIES TIMEOUT 180)
endif()

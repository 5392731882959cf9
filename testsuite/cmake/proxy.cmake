# Proxy integration tests: prx_testproxy runs libcage's proxy with rules from
# its command line; prx_itest starts local servers on 127.0.0.x (echo, HTTP,
# a never-accepting listener, openssl s_server) and drives the proxy with raw
# sockets and curl. Needs the curl and openssl programs. prx_itest is
# Linux-only: it counts the proxy's descriptors in /proc/PID/fd, ties its
# servers' lives to its own with PR_SET_PDEATHSIG and shares bench_net.c's
# epoll servers. Everywhere else the proxy is tested in process
# (unit/proxy/test_prx_server.c, portable).
add_executable(prx_testproxy ${CMAKE_CURRENT_SOURCE_DIR}/proxy/prx_testproxy.c)
target_link_libraries(prx_testproxy PRIVATE cage)
find_package(Threads REQUIRED)
# With -DCAGE_PORTABLE_PROXY=ON, and off Linux, libcage's own proxy is the
# portable one.
if(CAGE_PORTABLE_PROXY OR NOT CMAKE_SYSTEM_NAME STREQUAL "Linux")
  set(CAGE_PROXY_IS_PORTABLE ON)
  set(PRX_ITEST_PORTABLE --portable)
endif()
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(prx_itest ${CMAKE_CURRENT_SOURCE_DIR}/proxy/prx_itest.c
    ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_net.c)
  target_link_libraries(prx_itest PRIVATE PkgConfig::XXHASH Threads::Threads)
  add_test(NAME proxy/integration COMMAND prx_itest $<TARGET_FILE:prx_testproxy> ${PRX_ITEST_PORTABLE})
  set_tests_properties(proxy/integration PROPERTIES TIMEOUT 300)
  if(TARGET cagerun)
    add_test(NAME proxy/cagerun COMMAND prx_itest $<TARGET_FILE:prx_testproxy> ${PRX_ITEST_PORTABLE}
      --cagerun $<TARGET_FILE:cagerun>)
    set_tests_properties(proxy/cagerun PROPERTIES TIMEOUT 120)
  endif()
endif()

# The portable proxy (event/prx_ev_poll.c: poll, a pipe for wake-ups, the
# read/write relay; what macOS builds run) is compiled here a second time
# and driven through the same suites: the integration and hostile-request
# cases (prx_itest), cagerun --proxy-only, and the server's unit tests. Its
# objects come first on the link line, so libcage's epoll objects of the
# same names are never pulled in. (Where libcage's proxy is the portable
# one, the tests above already are these.)
if(NOT CAGE_PROXY_IS_PORTABLE)
  file(GLOB PRX_PORTABLE_SOURCES CONFIGURE_DEPENDS
    ${CMAKE_SOURCE_DIR}/runtime/proxy/prx_*.c ${CMAKE_SOURCE_DIR}/runtime/proxy/event/*.c)
  add_library(cage_prx_portable OBJECT ${PRX_PORTABLE_SOURCES})
  target_compile_definitions(cage_prx_portable PRIVATE CAGE_PORTABLE_PROXY)
  target_link_libraries(cage_prx_portable PRIVATE cage)
  add_executable(prx_testproxy_portable ${CMAKE_CURRENT_SOURCE_DIR}/proxy/prx_testproxy.c
    $<TARGET_OBJECTS:cage_prx_portable>)
  target_link_libraries(prx_testproxy_portable PRIVATE cage)
  add_test(NAME proxy/portable/integration COMMAND prx_itest $<TARGET_FILE:prx_testproxy_portable> --portable)
  set_tests_properties(proxy/portable/integration PROPERTIES TIMEOUT 300)
  if(TARGET cagerun)
    add_executable(cagerun_portable ${CMAKE_SOURCE_DIR}/runtime/cagerun_main.c
      $<TARGET_OBJECTS:cage_prx_portable>)
    target_compile_definitions(cagerun_portable PRIVATE CAGE_RUN_SEATBELT)
    target_link_libraries(cagerun_portable PRIVATE cage)
    add_test(NAME proxy/portable/cagerun COMMAND prx_itest $<TARGET_FILE:prx_testproxy_portable>
      --portable --cagerun $<TARGET_FILE:cagerun_portable>)
    set_tests_properties(proxy/portable/cagerun PROPERTIES TIMEOUT 120)
  endif()
  add_executable(test_prx_server_portable ${CMAKE_CURRENT_SOURCE_DIR}/unit/proxy/test_prx_server.c
    $<TARGET_OBJECTS:cage_prx_portable>)
  target_link_libraries(test_prx_server_portable PRIVATE cage cagetest PkgConfig::CRITERION)
  target_compile_definitions(test_prx_server_portable PRIVATE CAGE_PORTABLE_PROXY
    CAGE_SOURCE_DIR="${CMAKE_SOURCE_DIR}" CAGE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  add_test(NAME unit/test_prx_server_portable COMMAND test_prx_server_portable --jobs 1)
  set_tests_properties(unit/test_prx_server_portable PROPERTIES TIMEOUT 300)
endif()

# Benchmarks (not tests): build/testsuite/prx_bench build/testsuite/prx_testproxy,
# and tun_bench, run by testsuite/bench/tunnel.sh. Linux-only: their
# servers (bench_net.c) run on epoll, and the benchmarks are Linux's.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_executable(prx_bench ${CMAKE_SOURCE_DIR}/testsuite/bench/prx_bench.c
    ${CMAKE_SOURCE_DIR}/testsuite/bench/bench_net.c)
  target_link_libraries(prx_bench PRIVATE Threads::Threads)
  add_executable(tun_bench ${CMAKE_SOURCE_DIR}/testsuite/bench/tun_bench.c
    ${CMAKE_SOURCE_DIR}/testsuite/bench/bench_net.c)
  target_link_libraries(tun_bench PRIVATE Threads::Threads)
endif()

# libFuzzer target for the request parser, only with -DCAGE_FUZZ=ON and clang.
cage_fuzz_target(fuzz_prx_http SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_prx_http.c
  SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/prx_http)

# What the user sees of a denial (host, port, rule; the rule that would
# allow an internal address; the mode note) from cagerun --proxy-only and
# from the proxy of a sandboxed command. Needs curl and python3.
if(TARGET cagerun AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME proxy/denials COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/proxy/denials.sh
    $<TARGET_FILE:cagerun>)
  set_tests_properties(proxy/denials PROPERTIES TIMEOUT 180)
endif()

# The prx_itest runs open hundreds of loopback connections at once and
# bound each wait to seconds: two at a time on a loaded two-core machine
# (the epoll and the portable proxy, under the sanitizers) miss those
# bounds, so they take turns.
foreach(t proxy/integration proxy/cagerun proxy/portable/integration proxy/portable/cagerun)
  if(TEST ${t})
    set_tests_properties(${t} PROPERTIES RESOURCE_LOCK prx_itest)
  endif()
endforeach()

# libFuzzer target for the monitor's record readers (the input of
# `cagec monitor-report` and `cagec suggest`, and Seatbelt's log lines;
# testsuite/fuzz/fuzz_monitor.c), built only with -DCAGE_FUZZ=ON and clang.
cage_fuzz_target(fuzz_monitor SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_monitor.c
  SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/monitor OPTIONS -max_len=4096)

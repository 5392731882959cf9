# libFuzzer target for the version managers' file readers
# (testsuite/fuzz/fuzz_shimcfg.c), built only with -DCAGE_FUZZ=ON and clang.
cage_fuzz_target(fuzz_shimcfg SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_shimcfg.c
  SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seeds/shimcfg OPTIONS -max_len=8192)

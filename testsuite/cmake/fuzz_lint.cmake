# libFuzzer target for the checker and pat_rel (see testsuite/fuzz/fuzz_lint.c),
# built only with -DCAGE_FUZZ=ON and clang.
cage_fuzz_target(fuzz_lint SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_lint.c
  SEEDS ${CMAKE_CURRENT_SOURCE_DIR}/corpus/lint OPTIONS -max_len=4096)

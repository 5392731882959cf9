# libFuzzer target for the plan artifact's reader (testsuite/fuzz/fuzz_pf.c),
# built only with -DCAGE_FUZZ=ON and clang. Seed: a real artifact written by
# `cagec --emit plan` from fuzz/seed_plan.cage at build time (it depends on this
# machine's files, so it is not committed).
if(CAGE_FUZZ)
  set(FUZZ_PF_CORPUS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_pf_corpus)
  add_custom_command(OUTPUT ${FUZZ_PF_CORPUS}/seed.plan
    COMMAND ${CMAKE_COMMAND} -E make_directory ${FUZZ_PF_CORPUS}
    COMMAND $<TARGET_FILE:cagec> --target linux --emit plan
      ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seed_plan.cage -o ${FUZZ_PF_CORPUS}/seed.plan
    DEPENDS cagec ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seed_plan.cage)
  add_custom_target(fuzz_pf_corpus ALL DEPENDS ${FUZZ_PF_CORPUS}/seed.plan)
  cage_fuzz_target(fuzz_pf SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_pf.c
    SEEDS ${FUZZ_PF_CORPUS} OPTIONS -max_len=65536)
  add_dependencies(fuzz_pf fuzz_pf_corpus)
endif()

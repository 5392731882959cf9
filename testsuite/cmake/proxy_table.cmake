# Proxy table: cagec --emit table / --dump-table end to end, the lookup
# benchmark as a smoke test, and the libFuzzer target when CAGE_FUZZ=ON.
add_test(NAME cpt/cli
  COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/cpt/cli.sh $<TARGET_FILE:cagec> ${CMAKE_CURRENT_BINARY_DIR}/cpt-cli)
set_tests_properties(cpt/cli PROPERTIES TIMEOUT 60)

# Every example and every standard library module compiles to a table that
# loads and dumps: the writer refuses host names a proxy could never be asked
# for, so this catches a shipped policy it would reject.
file(GLOB CPT_EXAMPLES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.cage)
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/cpt-examples)
foreach(example ${CPT_EXAMPLES})
  get_filename_component(name ${example} NAME_WE)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/cpt-examples/${name}.cpt)
  add_test(NAME cpt/example/${name}
    COMMAND sh -c "$<TARGET_FILE:cagec> '${example}' --home /Users/alice -D workspace=/Users/alice/src/app --emit table -o '${out}' && $<TARGET_FILE:cagec> --dump-table '${out}'")
  set_tests_properties(cpt/example/${name} PROPERTIES PASS_REGULAR_EXPRESSION "rules: [0-9]+, keys: [0-9]+, slots: ")
endforeach()
include(${CMAKE_CURRENT_SOURCE_DIR}/stdlib/modules.cmake)
cage_stdlib_modules(CPT_STD_MODULES)
foreach(import_name ${CPT_STD_MODULES})
  string(REPLACE "/" "_" stem "${import_name}")
  foreach(target linux macos)
    set(check ${CMAKE_CURRENT_BINARY_DIR}/cpt-examples/std_${stem}.cage)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/cpt-examples/std_${stem}_${target}.cpt)
    # beside std/guard, which declares the param workspace (see stdlib.cmake)
    file(WRITE ${check} "cage 1\nimport \"${import_name}\"\nimport \"std/guard\"\n")
    add_test(NAME cpt/stdlib/${target}/${import_name}
      COMMAND sh -c "$<TARGET_FILE:cagec> '${check}' --target ${target} --home /Users/alice -D workspace=/Users/alice/src/app --emit table -o '${out}' && $<TARGET_FILE:cagec> --dump-table '${out}'")
    set_tests_properties(cpt/stdlib/${target}/${import_name} PROPERTIES PASS_REGULAR_EXPRESSION "rules: [0-9]+, keys: [0-9]+, slots: ")
  endforeach()
endforeach()

# The lookup benchmark's workload (run by testsuite/bench/cpt.sh, timed with
# bench_run). The test only checks that its policy compiles and its decisions
# are the intended mix; it measures nothing.
add_executable(bench_cpt ${CMAKE_CURRENT_SOURCE_DIR}/bench/bench_cpt.c)
target_link_libraries(bench_cpt PRIVATE cage)
add_test(NAME bench/cpt-workload
  COMMAND sh -c "$<TARGET_FILE:bench_cpt> gen 2000 > cpt2000.cage && $<TARGET_FILE:cagec> cpt2000.cage -o cpt2000.cpt && $<TARGET_FILE:bench_cpt> lookup cpt2000.cpt 65536 | grep -Eq '^allowed=[1-9][0-9]* denied_rule=[1-9][0-9]* denied_default=[1-9][0-9]* bad=0$'"
  WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})

# libFuzzer target for the table loader and the host normaliser. It compiles
# the few sources it exercises itself, instrumented, instead of changing how
# libcage is built.
if(CAGE_FUZZ)
  add_executable(fuzz_cpt ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_cpt.c
    ${CMAKE_SOURCE_DIR}/compiler/format/cpt.c ${CMAKE_SOURCE_DIR}/compiler/format/cpt_dump.c
    ${CMAKE_SOURCE_DIR}/compiler/format/host.c ${CMAKE_SOURCE_DIR}/compiler/format/cpt_write.c
    ${CMAKE_SOURCE_DIR}/lang/arena.c)
  target_include_directories(fuzz_cpt PRIVATE ${CMAKE_SOURCE_DIR}/compiler/format
    ${CMAKE_SOURCE_DIR}/compiler/ir ${CMAKE_SOURCE_DIR}/lang)
  target_compile_options(fuzz_cpt PRIVATE -fsanitize=fuzzer,address,undefined
    -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(fuzz_cpt PRIVATE -fsanitize=fuzzer,address,undefined)
  target_link_libraries(fuzz_cpt PRIVATE PkgConfig::XXHASH)
  # Seed corpus: a real table compiled by cagec, plus a few host strings.
  set(FUZZ_CPT_CORPUS ${CMAKE_CURRENT_BINARY_DIR}/fuzz_cpt_corpus)
  add_custom_command(OUTPUT ${FUZZ_CPT_CORPUS}/seed.cpt
    COMMAND ${CMAKE_COMMAND} -E make_directory ${FUZZ_CPT_CORPUS}
    COMMAND $<TARGET_FILE:cagec> ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seed.cage -o ${FUZZ_CPT_CORPUS}/seed.cpt
    COMMAND ${CMAKE_COMMAND} -E echo_append "0x7f.1" > ${FUZZ_CPT_CORPUS}/host1
    COMMAND ${CMAKE_COMMAND} -E echo_append "[::ffff:127.0.0.1]" > ${FUZZ_CPT_CORPUS}/host2
    COMMAND ${CMAKE_COMMAND} -E echo_append "A.b-c.Example.COM." > ${FUZZ_CPT_CORPUS}/host3
    DEPENDS cagec ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/seed.cage)
  add_custom_target(fuzz_cpt_corpus ALL DEPENDS ${FUZZ_CPT_CORPUS}/seed.cpt)
  add_dependencies(fuzz_cpt fuzz_cpt_corpus)
  # A smoke run as a test; real campaigns run the binary by hand
  # (docs/proxy-table.md, "Fuzzing").
  cage_fuzz_smoke(fuzz_cpt SEEDS ${FUZZ_CPT_CORPUS} OPTIONS -max_len=4096)
endif()

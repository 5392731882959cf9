# cagec lint: the per-finding corpus (testsuite/corpus/lint/<id>/{bad,ok}-N),
# the command line (formats, controls, explain), and the pre-commit hook
# driven by the real pre-commit program in a scratch repository.
file(GLOB CAGE_LINT_CASES CONFIGURE_DEPENDS
  ${CMAKE_CURRENT_SOURCE_DIR}/corpus/lint/*/bad-*.cage
  ${CMAKE_CURRENT_SOURCE_DIR}/corpus/lint/*/ok-*.cage)
foreach(case ${CAGE_LINT_CASES})
  get_filename_component(name ${case} NAME_WE)
  get_filename_component(dir ${case} DIRECTORY)
  get_filename_component(id ${dir} NAME)
  add_test(NAME lint-corpus/${id}/${name}
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/corpus/lint/run.sh $<TARGET_FILE:cagec> ${case})
  set_tests_properties(lint-corpus/${id}/${name} PROPERTIES TIMEOUT 60)
endforeach()
# Debian's python3 (with python3-jsonschema) validates the SARIF logs.
find_program(CAGE_DEBIAN_PYTHON3 python3 PATHS /usr/bin NO_DEFAULT_PATH)
if(NOT CAGE_DEBIAN_PYTHON3)
  set(CAGE_DEBIAN_PYTHON3 python3)
endif()
add_test(NAME lint/cli COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lint/cli.sh
  $<TARGET_FILE:cagec> ${CMAKE_SOURCE_DIR} ${CAGE_DEBIAN_PYTHON3})
set_tests_properties(lint/cli PROPERTIES TIMEOUT 120)
find_program(PRE_COMMIT pre-commit)
find_program(GIT git)
if(PRE_COMMIT AND GIT)
  add_test(NAME lint/pre-commit COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/lint/precommit.sh
    $<TARGET_FILE:cagec> ${CMAKE_SOURCE_DIR})
  set_tests_properties(lint/pre-commit PROPERTIES TIMEOUT 300)
else()
  message(WARNING "pre-commit or git not found: the lint/pre-commit test is not registered")
endif()
# The shipped examples must lint clean (-Werror: with std/guard in place no
# finding is left), in one call as pre-commit would run it, for each target
# (each loads its own platform modules).
file(GLOB CAGE_LINT_EXAMPLES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.cage)
if(CAGE_LINT_EXAMPLES)
  foreach(target linux macos)
    add_test(NAME lint/examples/${target}
      COMMAND $<TARGET_FILE:cagec> lint -Werror --target ${target} --home /Users/u
        --stdlib ${CMAKE_SOURCE_DIR}/stdlib --color=never ${CAGE_LINT_EXAMPLES})
  endforeach()
endif()
# Every standard library module lints clean on its own (std/guard included,
# and every module that imports it), for each target. Two ids are left out
# on purpose: the macOS modules write /etc, /var as people do (the SBPL
# backend rewrites them, noncanonical-path), and std/presets/offline's Mach
# protects mean nothing on Linux (unsupported-on-target, documented).
foreach(target linux macos)
  file(GLOB_RECURSE CAGE_LINT_MODULES CONFIGURE_DEPENDS
    ${CMAKE_SOURCE_DIR}/stdlib/std/*.cage ${CMAKE_SOURCE_DIR}/stdlib/${target}/std/*.cage)
  add_test(NAME lint/stdlib/${target}
    COMMAND $<TARGET_FILE:cagec> lint -Werror -Wno-unsupported-on-target -Wno-noncanonical-path
      --target ${target} --home /Users/u --stdlib ${CMAKE_SOURCE_DIR}/stdlib --color=never
      ${CAGE_LINT_MODULES})
endforeach()

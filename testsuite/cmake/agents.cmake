# The real agent programs (Claude Code, Codex, Gemini CLI), installed from
# npm, run under their example policies and layered with a fake home whose
# SSH key stays unreadable: `--version`, their own state, planted hooks and
# settings, and a model turn against a fake model server on loopback
# (testsuite/agents/agents.sh says what each run checks). agents/install installs the pinned releases once per build
# directory (about 900 MB installed, 370 MB of cached tarballs); it and the
# runs pass with a SKIP line only when npm cannot reach its registry. Each
# agent runs as root and as the unprivileged cage-test (ulimit -Sn 1024).
find_program(CAGE_AGENTS_NPM npm)
find_program(CAGE_AGENTS_NODE node)
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND TARGET cagerun)
  if(CAGE_AGENTS_NPM AND CAGE_AGENTS_NODE)
    set(CAGE_AGENTS_WORK ${CMAKE_CURRENT_BINARY_DIR}/agents-work)
    set(CAGE_AGENTS_SH ${CMAKE_CURRENT_SOURCE_DIR}/agents/agents.sh)
    add_test(NAME agents/install COMMAND sh ${CAGE_AGENTS_SH} install ${CAGE_AGENTS_WORK})
    set_tests_properties(agents/install PROPERTIES TIMEOUT 1000 FIXTURES_SETUP cage_agents)
    foreach(agent claude codex gemini)
      add_test(NAME agents/${agent}
        COMMAND sh ${CAGE_AGENTS_SH} run ${CAGE_AGENTS_WORK} $<TARGET_FILE:cagec>
          $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR} ${agent})
      # The same as the unprivileged cage-test, soft open-files limit 1024.
      add_test(NAME agents/${agent}/user
        COMMAND sh ${CAGE_AGENTS_SH} run-user cage-test ${CAGE_AGENTS_WORK} $<TARGET_FILE:cagec>
          $<TARGET_FILE:cagerun> ${CMAKE_SOURCE_DIR} ${agent})
      set_tests_properties(agents/${agent} agents/${agent}/user PROPERTIES TIMEOUT 600
        FIXTURES_REQUIRED cage_agents)
    endforeach()
  else()
    message(WARNING "node or npm not found: the agents/* tests are not registered")
  endif()
endif()

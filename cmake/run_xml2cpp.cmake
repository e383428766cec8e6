# Runs sdbus-c++-xml2cpp, failing on its errors but dropping the one notice it prints for every
# org.freedesktop.DBus.DocString annotation (the generator does not know it; the docs need it),
# so that a build prints no warnings.
set(args)
if(ADAPTOR)
  list(APPEND args "--adaptor=${ADAPTOR}")
endif()
if(PROXY)
  list(APPEND args "--proxy=${PROXY}")
endif()
execute_process(COMMAND "${TOOL}" "${XML}" ${args}
                RESULT_VARIABLE result OUTPUT_QUIET ERROR_VARIABLE errors)
string(REGEX REPLACE "[^\n]*DocString' not allowed or supported[^\n]*\n?" "" errors "${errors}")
if(errors)
  message("${errors}")
endif()
if(NOT result EQUAL 0)
  message(FATAL_ERROR "sdbus-c++-xml2cpp failed on ${XML} (${result})")
endif()

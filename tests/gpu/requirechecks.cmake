# Runs one GPU suite for ctest (the gpu preset) and fails when it checked nothing. Without a
# usable device a GPU suite reports a skip with the reason and exits 0, which ctest would count
# as passed: a gpu preset that passes on a machine without a GPU would say nothing true.
#
#   cmake -DSUITE=/path/to/tst_x -P requirechecks.cmake

if(NOT SUITE)
    message(FATAL_ERROR "requirechecks.cmake: give the suite to run as -DSUITE=path")
endif()
execute_process(COMMAND "${SUITE}" RESULT_VARIABLE status OUTPUT_VARIABLE output ERROR_VARIABLE output)
message("${output}")
if(NOT status STREQUAL "0")
    message(FATAL_ERROR "${SUITE} failed (exit status ${status})")
endif()
# Qt Test reports every test function as PASS, FAIL! or SKIP; initTestCase and cleanupTestCase
# pass even when every test function skipped.
string(REGEX REPLACE "PASS   : [^\n]*::(initTestCase|cleanupTestCase)\\(\\)" "" checks "${output}")
if(NOT checks MATCHES "PASS   : ")
    message(FATAL_ERROR "${SUITE}: every test was skipped, nothing was checked (the reason is above); the gpu "
                        "preset needs a machine with a usable GPU")
endif()

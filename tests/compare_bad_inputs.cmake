# ctest bad_inputs_generated: regenerates the bad-input corpus into the build
# tree and requires it to equal the committed fixtures/bad/ byte for byte,
# file for file, so the committed corpus is always the generator's output.
# Variables: GENERATOR (amn_make_bad_inputs), OUTPUT (scratch dir), COMMITTED.
file(REMOVE_RECURSE "${OUTPUT}")
execute_process(COMMAND "${GENERATOR}" "${OUTPUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${GENERATOR} failed: ${rc}")
endif()
file(GLOB generated RELATIVE "${OUTPUT}" "${OUTPUT}/*")
file(GLOB committed RELATIVE "${COMMITTED}" "${COMMITTED}/*")
list(SORT generated)
list(SORT committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "file lists differ:\n generated: ${generated}\n committed: ${committed}")
endif()
foreach(name IN LISTS generated)
  file(SHA256 "${OUTPUT}/${name}" want)
  file(SHA256 "${COMMITTED}/${name}" have)
  if(NOT want STREQUAL have)
    message(FATAL_ERROR "${name} differs from the generator's output: rerun "
                        "amn_make_bad_inputs fixtures/bad and commit")
  endif()
endforeach()
list(LENGTH generated count)
message(STATUS "${count} files match")

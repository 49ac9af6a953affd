# Runs one embedding example (EXAMPLE) on the fixture safetensors_reference/
# fp8.safetensors (MODEL) as BF16 on the calling thread and as F32 on three
# threads, and checks every line it prints. The hashes are FNV-1a of the
# bytes an independent numpy computation gives (E4M3 code times its 4x4
# block's F32 scale, in F32, rounded to BF16 to nearest even; the BF16 norm
# kept or widened exactly), not of anything amn wrote.
set(expected_bf16
  "model.layers.0.weight BF16 [8, 8] from F8_E4M3, FP8 E4M3, 4x4 blocks fnv1a=8421ae126c7ced25"
  "model.norm.weight BF16 [8] from BF16 fnv1a=fda58d9c0fa03e45"
  "loaded 2 tensors, 144 bytes")
set(expected_f32
  "model.layers.0.weight F32 [8, 8] from F8_E4M3, FP8 E4M3, 4x4 blocks fnv1a=d80ac658736bb725"
  "model.norm.weight F32 [8] from BF16 fnv1a=eb87129436c8da65"
  "loaded 2 tensors, 288 bytes")
# EMULATOR: the cross build's emulator command (space-separated), under
# which every run uses one thread.
separate_arguments(emulator UNIX_COMMAND "${EMULATOR}")
foreach(run IN ITEMS "bf16;1" "f32;3")
  list(GET run 0 type)
  list(GET run 1 threads)
  if(emulator)
    set(threads 1)
  endif()
  execute_process(COMMAND ${emulator} ${EXAMPLE} ${MODEL} ${type} ${threads}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${EXAMPLE} ${MODEL} ${type} ${threads} failed (${rc}): ${err}")
  endif()
  string(REPLACE ";" "\n" want "${expected_${type}}")
  string(STRIP "${out}" got)
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${EXAMPLE} ${type} printed:\n${got}\nexpected:\n${want}")
  endif()
endforeach()

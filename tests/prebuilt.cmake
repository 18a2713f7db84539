# Proves the built-in kernels prebuilt by nvcc or hipcc are the ones that run: the copies group
# (8-byte fills use kernels/fill.gp) must say it used the prebuilt binary, never compiled it.
# Skipped (exit message "SKIP") when the backend has no device here.
execute_process(COMMAND ${CMAKE_COMMAND} -E env GPUPORT_DEBUG=compile ${TESTS} --backend ${BACKEND} --group copies
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 77)
  message("SKIP: no ${BACKEND} device")
  return()
endif()
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the copies group failed on ${BACKEND} (${rc}):\n${out}\n${err}")
endif()
if(NOT err MATCHES "prebuilt binary")
  message(FATAL_ERROR "no prebuilt binary was used on ${BACKEND}:\n${err}")
endif()
if(err MATCHES "built [0-9]+ bytes of")
  message(FATAL_ERROR "a built-in kernel was compiled at run time on ${BACKEND}:\n${err}")
endif()
message("${BACKEND}: the prebuilt fill kernel ran")

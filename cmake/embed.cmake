# gpuport_embed(OUT_C SYMBOL FILE...): a C source defining `const char SYMBOL[]` as the files'
# text joined, so kernel sources and preludes travel inside the binaries that use them.
function(gpuport_embed out_c symbol)
  add_custom_command(OUTPUT ${out_c}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out_c} -DSYMBOL=${symbol} "-DFILES=${ARGN}"
            -P ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    DEPENDS ${ARGN} ${PROJECT_SOURCE_DIR}/cmake/embed_run.cmake
    COMMENT "Embedding ${symbol}" VERBATIM)
endfunction()

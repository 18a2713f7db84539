# Built-in kernels compiled ahead of time by the vendor's compiler and embedded in a plugin, so
# they run without a run-time compiler and without a first-use compile. Each entry of
# GPUPORT_BUILTIN_KERNELS is "path/in/project.gp|-DNAME=VALUE -DOTHER" (options may be empty;
# "a.gp+b.gp" joins files into one source); the plugin hands out the binary when a program's
# source, composed as core composes it (the options as #define lines after the prelude),
# matches an entry exactly.
#
# gpuport_prebuilt(OUT_C KIND PRELUDE COMPILER FLAGS...): KIND is CUDA (nvcc --fatbin) or HIP
# (hipcc --genco); PRELUDE the list of prelude files, joined in order as the plugin joins them;
# with no COMPILER the table is empty and everything is compiled at run time.
function(gpuport_prebuilt out_c kind prelude compiler)
  set(dir ${CMAKE_CURRENT_BINARY_DIR}/prebuilt)
  set(manifest "")
  set(bins "")
  set(i 0)
  if(compiler)
    foreach(entry IN LISTS GPUPORT_BUILTIN_KERNELS)
      string(FIND "${entry}" "|" bar)
      string(SUBSTRING "${entry}" 0 ${bar} file)
      math(EXPR after "${bar} + 1")
      string(SUBSTRING "${entry}" ${after} -1 opts)
      string(STRIP "${opts}" opts)
      string(REGEX REPLACE " +" " " opts "${opts}")
      # The options become #defines after the prelude: on the command line they would reach
      # the vendor's own headers too (a -DT=float breaks HIP's templates).
      set(wrapper "")
      foreach(p IN LISTS prelude)
        string(APPEND wrapper "#include \"${p}\"\n")
      endforeach()
      set(defines "")
      separate_arguments(words UNIX_COMMAND "${opts}")
      foreach(w IN LISTS words)
        string(REGEX REPLACE "^-D([^=]+)=?(.*)$" "\\1;\\2" nv "${w}")
        list(GET nv 0 name)
        list(GET nv 1 value)
        if(value STREQUAL "")
          set(value 1)
        endif()
        string(APPEND defines "#define ${name} ${value}\n")
      endforeach()
      string(APPEND wrapper "${defines}")
      string(REPLACE "+" ";" parts "${file}")
      set(paths "")
      foreach(part IN LISTS parts)
        string(APPEND wrapper "#include \"${PROJECT_SOURCE_DIR}/${part}\"\n")
        list(APPEND paths ${PROJECT_SOURCE_DIR}/${part})
      endforeach()
      file(GENERATE OUTPUT ${dir}/${i}.cu CONTENT "${wrapper}")
      if(kind STREQUAL "CUDA")
        set(cmd ${compiler} -x cu --fatbin ${ARGN} -o ${dir}/${i}.bin ${dir}/${i}.cu)
      else()
        set(cmd ${compiler} -x hip --genco ${ARGN} -o ${dir}/${i}.bin ${dir}/${i}.cu)
      endif()
      add_custom_command(OUTPUT ${dir}/${i}.bin COMMAND ${cmd}
        DEPENDS ${paths} ${prelude} ${dir}/${i}.cu
        COMMENT "Prebuilding ${file} ${opts} for ${kind}" VERBATIM)
      string(APPEND manifest "set(SOURCES_${i} \"${paths}\")\n"
                             "set(HEAD_${i} \"${defines}\")\nlist(APPEND BINS \"${dir}/${i}.bin\")\n")
      list(APPEND bins ${dir}/${i}.bin)
      math(EXPR i "${i} + 1")
    endforeach()
  endif()
  if(kind STREQUAL "CUDA")
    set(code_kind 4) # GP__CH_CODE_FATBIN
  else()
    set(code_kind 3) # GP__CH_CODE_HIP
  endif()
  file(GENERATE OUTPUT ${dir}/manifest.cmake CONTENT "set(KIND ${code_kind})\n${manifest}")
  add_custom_command(OUTPUT ${out_c}
    COMMAND ${CMAKE_COMMAND} -DMANIFEST=${dir}/manifest.cmake -DOUT=${out_c}
            -P ${PROJECT_SOURCE_DIR}/cmake/prebuilt_table.cmake
    DEPENDS ${bins} ${dir}/manifest.cmake ${PROJECT_SOURCE_DIR}/cmake/prebuilt_table.cmake
    COMMENT "Embedding ${i} prebuilt ${kind} kernels" VERBATIM)
endfunction()

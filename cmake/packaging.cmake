# Debian packages from the same build (CPack's DEB generator): `cpack -G DEB` in the build tree,
# or scripts/package. One package per part, so that a user installs only the vendor plugin they
# have; names and sonames after Debian's library policy; the version is the project's.
set(ver ${PROJECT_VERSION})
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuport)
set(CPACK_PACKAGE_VERSION ${ver})
set(CPACK_PACKAGE_VENDOR "the gpuport developers")
set(CPACK_PACKAGE_CONTACT "the gpuport developers <gpuport@users.noreply.github.com>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "one C API for compute on CUDA, HIP and OpenCL devices")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS OFF) # the dependencies below are stated by hand: plugins load vendors at run time
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/gpuport/gpuport")
set(CPACK_COMPONENTS_ALL runtime dev tools)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME libgpuport0)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "libc6, ocl-icd-libopencl1 | libopencl1")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS "pocl-opencl-icd | opencl-icd")
set(CPACK_COMPONENT_RUNTIME_DESCRIPTION "gpuport: one C API for compute on CUDA, HIP and OpenCL devices
 libgpuport runs the same compute work (buffers, streams, kernels in one dialect, map, reduce,
 scan, stencils and GEMM) on NVIDIA GPUs, AMD GPUs and any OpenCL device, pocl on a CPU
 included. This package holds the library and its OpenCL backend; the CUDA and HIP backends
 come in libgpuport0-cuda and libgpuport0-hip.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libgpuport-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS "libgpuport0 (= ${ver})")
set(CPACK_COMPONENT_DEV_DESCRIPTION "gpuport: development files
 The header gpuport.h, the CMake package (find_package(gpuport)), the pkg-config file and the
 link to the library.")

set(tools_depends "libgpuport0 (= ${ver})")
if(TARGET gpuport-mpi)
  string(APPEND tools_depends ", libgpuport-mpi0 (= ${ver})")
endif()
set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME gpuport-tools)
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS "${tools_depends}")
set(CPACK_DEBIAN_TOOLS_PACKAGE_RECOMMENDS "python3")
set(CPACK_COMPONENT_TOOLS_DESCRIPTION "gpuport: the conformance suite and tools
 gpuport-test runs gpuport's whole test suite on every device found (JUnit XML and JSON
 reports); gpuport-info lists backends and devices; gpuport-bench times the kernel set next to
 the vendors' libraries; gpuport-compare merges results of several machines into one table.")

if(TARGET gpuport-cuda)
  list(APPEND CPACK_COMPONENTS_ALL cuda)
  set(CPACK_DEBIAN_CUDA_PACKAGE_NAME libgpuport0-cuda)
  set(CPACK_DEBIAN_CUDA_PACKAGE_SECTION libs)
  set(CPACK_DEBIAN_CUDA_PACKAGE_DEPENDS "libgpuport0 (= ${ver})")
  # The driver API and NVRTC are opened at run time: Debian's NVIDIA driver packages (non-free),
  # or the vendor's own installation.
  set(CPACK_DEBIAN_CUDA_PACKAGE_RECOMMENDS "libcuda1 | libnvidia-tesla-cuda1")
  set(CPACK_DEBIAN_CUDA_PACKAGE_SUGGESTS "libnvrtc12, libcublas12")
  set(CPACK_COMPONENT_CUDA_DESCRIPTION "gpuport: the CUDA backend
 The plugin that runs gpuport on NVIDIA GPUs through the CUDA driver API and NVRTC.")
endif()
if(TARGET gpuport-hip)
  list(APPEND CPACK_COMPONENTS_ALL hip)
  set(CPACK_DEBIAN_HIP_PACKAGE_NAME libgpuport0-hip)
  set(CPACK_DEBIAN_HIP_PACKAGE_SECTION libs)
  set(CPACK_DEBIAN_HIP_PACKAGE_DEPENDS "libgpuport0 (= ${ver}), libamdhip64-5")
  set(CPACK_DEBIAN_HIP_PACKAGE_SUGGESTS "librocblas0")
  set(CPACK_COMPONENT_HIP_DESCRIPTION "gpuport: the HIP backend
 The plugin that runs gpuport on AMD GPUs through the HIP runtime and hiprtc (ROCm).")
endif()
if(TARGET gpuport-mpi)
  list(APPEND CPACK_COMPONENTS_ALL mpi mpidev)
  set(CPACK_DEBIAN_MPI_PACKAGE_NAME libgpuport-mpi0)
  set(CPACK_DEBIAN_MPI_PACKAGE_SECTION libs)
  set(CPACK_DEBIAN_MPI_PACKAGE_DEPENDS "libgpuport0 (= ${ver}), libopenmpi3")
  set(CPACK_COMPONENT_MPI_DESCRIPTION "gpuport over MPI: stencil grids over many ranks
 libgpuport-mpi splits gpuport's stencils over MPI ranks, one device each, with halo exchanges
 that overlap the computation.")
  set(CPACK_DEBIAN_MPIDEV_PACKAGE_NAME libgpuport-mpi-dev)
  set(CPACK_DEBIAN_MPIDEV_PACKAGE_SECTION libdevel)
  set(CPACK_DEBIAN_MPIDEV_PACKAGE_DEPENDS "libgpuport-mpi0 (= ${ver}), libgpuport-dev (= ${ver}), libopenmpi-dev")
  set(CPACK_COMPONENT_MPIDEV_DESCRIPTION "gpuport over MPI: development files
 The header gpuport_mpi.h, its CMake targets (find_package(gpuport COMPONENTS mpi)) and pkg-config file.")
endif()
if(TARGET gpuport-python)
  list(APPEND CPACK_COMPONENTS_ALL python)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_NAME python3-gpuport)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_SECTION python)
  set(CPACK_DEBIAN_PYTHON_PACKAGE_DEPENDS "libgpuport0 (= ${ver}), python3, python3-numpy")
  set(CPACK_COMPONENT_PYTHON_DESCRIPTION "gpuport from Python
 NumPy-like arrays on any gpuport device, its primitives and kernels of your own.")
endif()
include(CPack)

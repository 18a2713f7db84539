"""CuPy's RawKernel and RawModule: kernels in CUDA C, on every device (gp_program_create_cuda:
NVRTC as written on CUDA, hiprtc on HIP, translated to the kernel dialect on OpenCL)."""
import ctypes

from ._array import Array, MemoryPointer
from ._device import _handle_out, device as _device
from ._ffi import check as _check, lib as _lib
from ._primitives import Kernel, local


class _CudaProgram:
    def __init__(self, code, options, dev):
        self.device = dev
        defines = [o for o in options if o.startswith("-D")]  # the rest are nvcc's; NVRTC's defaults stand
        self._h = _handle_out(_lib.gp_program_create_cuda, dev._h, code.encode(),
                              " ".join(defines).encode() if defines else None)

    def __del__(self, _destroy=_lib.gp_program_destroy):
        if getattr(self, "_h", None):
            _destroy(self._h)
            self._h = None


class RawModule:
    """CuPy's RawModule(code=...): CUDA C compiled for each device it is used on (the current one
    first); get_function(name) gives a kernel launched as kernel(grid, block, args, shared_mem=)."""

    def __init__(self, code=None, *, path=None, options=(), backend="nvrtc", translate_cucomplex=False,
                 name_expressions=None, jitify=False):
        if code is None:
            if path is None:
                raise TypeError("gpuport.RawModule: give code= (CUDA C source) or path=")
            with open(path) as f:
                code = f.read()
        if name_expressions:
            raise NotImplementedError("gpuport.RawModule: name_expressions (C++ templates) are not supported")
        self.code, self.options, self._programs = code, tuple(options), {}
        self._program(_device())  # compile errors show here, as CuPy's do at first use

    def _program(self, dev):
        if dev.spec not in self._programs:
            self._programs[dev.spec] = _CudaProgram(self.code, self.options, dev)
        return self._programs[dev.spec]

    def get_function(self, name):
        return RawKernel(self.code, name, self.options, _module=self)

    def get_global(self, name):
        """A file-scope __constant__ or __device__ variable of the module, on the current device, as
        a MemoryPointer: gp.ndarray(shape, dtype, memptr) makes an array of it to write and read."""
        prog = self._program(_device())
        buf = _handle_out(_lib.gp_program_get_global, prog._h, name.encode())
        size = ctypes.c_size_t()
        _check(_lib.gp_buffer_get_size(buf, ctypes.byref(size)))
        return MemoryPointer(buf, 0, size.value, prog.device, prog)


class RawKernel:
    """CuPy's RawKernel(code, name): kernel(grid, block, args, shared_mem=0, stream=None), grid and
    block ints or tuples of up to three; args a tuple of gpuport arrays and numbers (converted to
    the kernel's parameter types); shared_mem sizes an extern __shared__ array."""

    def __init__(self, code, name, options=(), backend="nvrtc", translate_cucomplex=False,
                 enable_cooperative_groups=False, jitify=False, *, _module=None):
        self.code, self.name, self.options = code, name, tuple(options)
        self._module = _module or RawModule(code=code, options=options)
        self._kernels = {}

    def _kernel(self, dev):
        k = self._kernels.get(dev.spec)
        if k is None:
            k = self._kernels[dev.spec] = Kernel(self._module._program(dev), self.name)
        return k

    def __call__(self, grid, block, args, *, shared_mem=0, stream=None):
        grid, block = _dims(grid), _dims(block)
        if not 1 <= len(block) <= 3 or not 1 <= len(grid) <= 3:
            raise ValueError("gpuport.RawKernel: grid and block have 1 to 3 dimensions")
        if len(grid) != len(block):
            dims = max(len(grid), len(block))
            grid, block = grid + (1,) * (dims - len(grid)), block + (1,) * (dims - len(block))
        for a in args:  # the arrays' device, as theirs is
            if isinstance(a, Array):
                dev = a.device
                break
        else:
            dev = stream.device if stream is not None else _device()
        k = self._kernels.get(dev.spec) or self._kernel(dev)
        if k.params is not None and len(k.params) == len(args) + 1 and k.params[-1]["kind"] == "local":
            args = tuple(args) + (local(max(int(shared_mem), 1)),)  # its extern __shared__ array
        k(*args, global_size=tuple(g * b for g, b in zip(grid, block)), local_size=block, stream=stream)

    @property
    def attributes(self):
        return {"max_threads_per_block": _device().info["max_work_group_size"]}


def _dims(x):
    """A grid's or block's sizes as a tuple of ints (an int or a tuple of up to three)."""
    return (int(x),) if not isinstance(x, tuple) else tuple(int(v) for v in x)

"""CuPy's cupyx.profiler.benchmark on any gpuport device: the host's and each device's time of
a function, run by run, and the report CuPy prints."""
import math
import time

import numpy as np

from ._device import Event, device as _device


class _PerfCaseResult:
    """benchmark's result: cpu_times (seconds, one per run) and gpu_times (seconds, a row per
    device); printing it gives CuPy's report line."""

    def __init__(self, name, cpu, gpu, devices):
        self.name, self.cpu_times, self.gpu_times, self.devices = name, cpu, gpu, devices

    @staticmethod
    def _item(label, t):
        us = t * 1e6
        text = "    %s: %9.03f us" % (label, us.mean())
        if t.size > 1:
            text += "   +/- %6.03f (min: %9.03f / max: %9.03f) us" % (us.std(), us.min(), us.max())
        return text

    def to_str(self, show_gpu=False):
        parts = [self._item("CPU", self.cpu_times)]
        if show_gpu:
            parts += [self._item("GPU-%d" % d.id, t) for d, t in zip(self.devices, self.gpu_times)]
        return "%-20s:%s" % (self.name, " ".join(parts))

    def __str__(self):
        return self.to_str(show_gpu=True)

    __repr__ = __str__


def benchmark(func, args=(), kwargs={}, n_repeat=10000, *, name=None, n_warmup=10, max_duration=math.inf,
              devices=None):
    """Runs func(*args, **kwargs) n_warmup times, then up to n_repeat times (or until
    max_duration seconds have passed), timing each run on the host and, with events on each
    device's default stream, on each device (devices: gpuport devices or their indices in
    gpuport.devices(); the current device by default). The GPU-N of the report is that index."""
    from ._device import devices as _all
    devs = [_device()] if devices is None else [_all()[d] if isinstance(d, int) else _device(d) for d in devices]
    for _ in range(n_warmup):
        func(*args, **kwargs)
    cpu, gpu = [], [[] for _ in devs]
    events = [(Event(d), Event(d)) for d in devs]
    spent = 0.0
    while len(cpu) < n_repeat and spent < max_duration:
        for start, _ in events:
            start.record()
        t = time.perf_counter()
        func(*args, **kwargs)
        took = time.perf_counter() - t
        for times, (start, end) in zip(gpu, events):
            end.record()
            end.synchronize()
            times.append(start.elapsed_ms(end) * 1e-3)
        cpu.append(took)
        spent += max(took, max((g[-1] for g in gpu), default=0.0))
    return _PerfCaseResult(name or getattr(func, "__name__", "func"), np.array(cpu), np.array(gpu), devs)

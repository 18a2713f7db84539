"""Proves gp.free_memory(), garbage collection and arrays made and computed on other threads are
safe together: every thread's results stay right while one thread keeps freeing the pool."""
import gc
import threading

import numpy as np

import gpuport as gp


def test_free_memory_races_launches(dev):
    stop, errors = threading.Event(), []

    def compute(seed):
        try:
            with gp.Device(dev):
                for i in range(60):
                    n = 1000 + 512 * (i % 5)  # sizes the pool rounds alike and apart
                    x = gp.arange(n, dtype=gp.float32) + seed
                    y = (x * 2 + 1).get()
                    del x
                    if not np.array_equal(y, (np.arange(n, dtype=np.float32) + seed) * 2 + 1):
                        errors.append("thread %d, round %d: wrong values" % (seed, i))
        except Exception as e:  # the assertion is made on the main thread
            errors.append("thread %d: %r" % (seed, e))

    def free():
        while not stop.is_set():
            gp.free_memory()
            gc.collect()

    freer = threading.Thread(target=free)
    workers = [threading.Thread(target=compute, args=(s,)) for s in range(4)]
    freer.start()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    freer.join()
    assert not errors, errors[:3]

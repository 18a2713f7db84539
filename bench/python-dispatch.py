"""The host's time per element-wise operation of Python arrays, gpuport's or CuPy's: what a loop of
many small operations (a lesson's Jacobi step) pays besides the device's work. Each series queues
2000 operations on 256 x 256 float32 arrays and waits for the device at its end; the best of five
series, after 100 untimed, in microseconds an operation (then the results are checked):
  add   x + y
  scale y * 0.25
  step  x[1:-1, 1:-1] = 0.25 * (y[:-2, 1:-1] + y[2:, 1:-1] + y[1:-1, :-2] + y[1:-1, 2:]) (6 operations)

    PYTHONPATH=build/python python3 bench/python-dispatch.py [gpuport|cupy]
gpuport runs on GPUPORT_DEVICE (default: the best device)."""
import sys
import time


def main():
    name = sys.argv[1] if len(sys.argv) > 1 else "gpuport"
    if name not in ("gpuport", "cupy"):
        sys.exit("usage: python-dispatch.py [gpuport|cupy]")
    xp = __import__(name)
    x = xp.zeros((256, 256), dtype=xp.float32)
    y = xp.ones((256, 256), dtype=xp.float32)
    wait = (lambda: xp.cuda.Device().synchronize()) if name == "cupy" else (lambda: float(x[0, 0]))

    def add():
        return x + y

    def scale():
        return y * 0.25

    def step():
        x[1:-1, 1:-1] = 0.25 * (y[:-2, 1:-1] + y[2:, 1:-1] + y[1:-1, :-2] + y[1:-1, 2:])

    where = xp.device() if name == "gpuport" else "CUDA device %d" % xp.cuda.Device().id
    results = []
    for run, ops in ((add, 1), (scale, 1), (step, 6)):
        for _ in range(100):
            run()
        wait()
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(2000):
                run()
            wait()
            best = min(best, (time.perf_counter() - start) / 2000 / ops)
        results.append("%s %.1f" % (run.__name__, best * 1e6))
    print("%s on %s, us an operation: %s" % (name, where, ", ".join(results)))
    # what the operations made: the step leaves x 1 inside and 0 on its edges; x + y is x + 1;
    # y * 0.25 is 0.25
    s, a, c = xp.asnumpy(scale()), xp.asnumpy(add()), xp.asnumpy(x)
    inside = c[1:-1, 1:-1]
    right = (s == 0.25).all() and (a == c + 1).all() and (inside == 1).all() and c.sum() == inside.size
    print("results checked:", "right" if right else "WRONG")
    return 0 if right else 1


if __name__ == "__main__":
    sys.exit(main())

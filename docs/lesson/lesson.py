# A first GPU lesson, written for CuPy. docs/lesson/run.py runs it unchanged but for the one
# import line: on CuPy, on gpuport (any device: GPUPORT_DEVICE=cuda:0, opencl:1, cpu, ...) and,
# for the comparison, on NumPy. Each "# %%" starts a step that run.py times.
import os

import numpy as np
import cupy as cp

QUICK = os.environ.get("LESSON_QUICK") == "1"  # small sizes, for the test suite

# %% 1. Arrays live on the GPU; asnumpy brings them back
x_gpu = cp.array([1, 2, 3])
x_cpu = cp.asnumpy(x_gpu)
a = cp.arange(9).reshape(3, 3)
assert np.array_equal(cp.asnumpy(a.T), np.arange(9).reshape(3, 3).T)
assert np.array_equal(cp.asnumpy(a[1:, ::-1]), np.arange(9).reshape(3, 3)[1:, ::-1])
assert np.array_equal(cp.asnumpy(a.sum(axis=0)), [9, 12, 15]) and float(a.mean()) == 4.0
print("a =", a, "row sums", a.sum(axis=1), "x on the host:", x_cpu)

# %% 2. Element-wise math over a million points
n = 100_000 if QUICK else 10_000_000
x = cp.linspace(0, 2 * np.pi, n, dtype=cp.float32)
y = cp.sin(x) ** 2 + cp.cos(x) ** 2
assert cp.allclose(y, 1, atol=1e-5)
z = cp.exp(-x) * cp.sqrt(x + 1)
ref = np.exp(-cp.asnumpy(x)) * np.sqrt(cp.asnumpy(x) + 1)
assert np.allclose(cp.asnumpy(z), ref, rtol=1e-5, atol=1e-6)
print("max of exp(-x) sqrt(x + 1):", float(z.max()), "at", int(z.argmax()))

# %% 3. Bytes: a lookup table
table = cp.zeros(256, dtype=cp.uint8)
table[:] = cp.asarray(np.arange(256, dtype=np.uint8))  # CuPy 14 refuses a NumPy array here; gpuport takes both
inverted = 255 - table
assert cp.asnumpy(inverted)[0] == 255 and inverted.dtype == np.uint8

# %% 4. Matrix product
N = 256 if QUICK else 4096
cp.random.seed(0)
A = cp.random.rand(N, N, dtype=cp.float32)
B = cp.random.rand(N, N, dtype=cp.float32)
C = cp.dot(A, B)
D = A @ B.T
assert np.allclose(cp.asnumpy(C)[:8], cp.asnumpy(A)[:8] @ cp.asnumpy(B), rtol=1e-3)
assert np.allclose(cp.asnumpy(D)[:8], cp.asnumpy(A)[:8] @ cp.asnumpy(B).T, rtol=1e-3)
print("C[0, :3] =", C[0, :3])

# %% 5. Monte Carlo pi
samples = 1_000_000 if QUICK else 100_000_000
cp.random.seed(1)
px = cp.random.rand(samples, dtype=cp.float32)
py = cp.random.rand(samples, dtype=cp.float32)
inside = (px * px + py * py <= 1.0).sum()
pi = 4 * float(inside) / samples
assert abs(pi - np.pi) < 5e-3, pi
print("pi is about", pi)

# %% 6. Heat: Jacobi steps with slices until the update is small
M = 64 if QUICK else 1024
p = cp.zeros((M, M), dtype=cp.float32)
p[0, :] = 1.0  # a hot edge
steps = 200 if QUICK else 2000
for it in range(steps):
    q = p.copy()
    q[1:-1, 1:-1] = 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
    change = cp.linalg.norm(q - p)
    p = q
err = float(change)
near = float(p[4, M // 2])
print("after", steps, "steps: 4 cells from the hot edge", near, "last change", err)
assert 0 < near < 1 and err < 1

# %% 7. Statistics, comparisons and where
data = cp.random.randn(1000, 50, dtype=cp.float32)
mu, sigma = data.mean(axis=0), data.std(axis=0)
clipped = cp.where(data > 2 * sigma, 2 * sigma, data)
assert abs(float(mu.mean())) < 0.05 and abs(float(sigma.mean()) - 1) < 0.05
assert float(clipped.max()) <= float((2 * sigma).max()) + 1e-6
print("column means within", float(cp.abs(mu).max()), "of 0")

# %% 8. Choosing the device
with cp.cuda.Device(0):
    w = cp.ones(10)
print("w lives on", getattr(w, "device", "the host"))  # NumPy 1 arrays have no .device

"""NumPy's linalg names that gpuport has: norm (vectors, and matrices but for the 2-norm)."""
from ._reduction import norm

__all__ = ["norm"]

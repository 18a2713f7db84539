/* Built-in map kernels: written by the primitives work in progress. */

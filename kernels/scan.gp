/* Built-in scan kernels: written by the primitives work in progress. */

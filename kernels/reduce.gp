/* Built-in reduce kernels: written by the primitives work in progress. */

/* Compiled, not run: gpuport.h and every macro it offers, in strict C++ (see tests/CMakeLists.txt). */
#include <gpuport.h>

int gpuport_header_use(gp_stream *s, gp_kernel *k, gp_buffer *b);
int gpuport_header_use(gp_stream *s, gp_kernel *k, gp_buffer *b)
{
    unsigned n = 4;
    size_t global = 4;
    gp_arg args[3];
    args[0] = GP_BUFFER(b);
    args[1] = GP_VALUE(n);
    args[2] = GP_LOCAL_BYTES(16);
    gp_view v = GP_VIEW(b), w = GP_VIEW_AT(b, 2);
    return (int)gp_kernel_launch(s, k, 1, &global, NULL, 3, args) + (int)(v.offset + w.offset);
}

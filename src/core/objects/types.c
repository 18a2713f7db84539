/* The element types: their sizes, their names in the dialect, the option that builds a
 * built-in source for one. */
#include "internal.h"

size_t gp_type_size(gp_type type)
{
    switch (type) {
    case GP_F32: case GP_I32: case GP_U32: return 4;
    case GP_F64: case GP_I64: case GP_U64: return 8;
    case GP_TYPE_NONE: break;
    }
    return 0;
}

const char *gp__type_name(gp_type type)
{
    static const char *const names[] = {"value of no gp_type", "float", "double", "int", "uint", "long", "ulong"};
    return gp_type_size(type) ? names[type] : names[0];
}

const char *gp__type_option(gp_device *dev, gp_type type, const char *fn)
{
    static const char *const options[] = {NULL, "-DGP_TYPE=1", "-DGP_TYPE=2", "-DGP_TYPE=3",
                                          "-DGP_TYPE=4", "-DGP_TYPE=5", "-DGP_TYPE=6"};
    if (gp_type_size(type) == 0) {
        gp__fail(GP_ERROR_INVALID_ARGUMENT, "%s: %d is not a gp_type", fn, (int)type);
        return NULL;
    }
    if (type == GP_F64 && !dev->info.fp64) {
        gp__fail(GP_ERROR_UNSUPPORTED, "%s: %s:%zu (%s) has no double precision", fn, dev->info.backend,
                 dev->info.backend_index, dev->info.name);
        return NULL;
    }
    return options[type];
}

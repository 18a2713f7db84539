/* gpuport-info: every backend with its state and, where it is unavailable, why; every device
 * with its properties; the kernel cache's folder, or why it is kept in memory. -l: one line a
 * device (and a line for the cache only when it is not on disk). --json: the same facts. */
#include <gpuport.h>

#include <stdio.h>
#include <string.h>

static const char *type_name(gp_device_type t)
{
    return t == GP_DEVICE_GPU ? "gpu" : t == GP_DEVICE_CPU ? "cpu" : "other";
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

static void print_json(size_t nb, size_t nd)
{
    printf("{\"version\": ");
    json_string(gp_version_string());
    printf(",\n \"backends\": [");
    for (size_t i = 0; i < nb; i++) {
        gp_backend_info b;
        gp_backend_get_info(i, &b);
        printf("%s\n  {\"name\": ", i ? "," : "");
        json_string(b.name);
        printf(", \"available\": %s, \"devices\": %zu, \"version\": ", b.available ? "true" : "false", b.device_count);
        json_string(b.version);
        printf(", \"plugin\": ");
        json_string(b.plugin_path);
        printf(", \"reason\": ");
        json_string(b.reason);
        printf("}");
    }
    printf("],\n \"devices\": [");
    for (size_t i = 0; i < nd; i++) {
        gp_device *d;
        gp_device_info di;
        gp_device_get(i, &d);
        gp_device_get_info(d, &di);
        printf("%s\n  {\"id\": \"%s:%zu\", \"name\": ", i ? "," : "", di.backend, di.backend_index);
        json_string(di.name);
        printf(", \"vendor\": ");
        json_string(di.vendor);
        printf(", \"backend\": \"%s\", \"type\": \"%s\", \"global_mem_bytes\": %llu, \"local_mem_bytes\": %llu, "
               "\"local_mem_own_bytes\": %llu, \"compute_units\": %u, \"max_work_group_size\": %zu, "
               "\"max_work_item_sizes\": [%zu, %zu, %zu], \"subgroup_size\": %u, \"fp64\": %s, \"unified_memory\": %s, "
               "\"driver_version\": ",
               di.backend, type_name(di.type), (unsigned long long)di.global_mem_bytes,
               (unsigned long long)di.local_mem_bytes, (unsigned long long)di.local_mem_own_bytes, di.compute_units,
               di.max_work_group_size, di.max_work_item_sizes[0], di.max_work_item_sizes[1], di.max_work_item_sizes[2],
               di.subgroup_size, di.fp64 ? "true" : "false", di.unified_memory ? "true" : "false");
        json_string(di.driver_version);
        printf(", \"runtime_version\": ");
        json_string(di.runtime_version);
        printf("}");
    }
    gp_cache_info c;
    gp_cache_get_info(&c);
    printf("],\n \"cache\": {\"folder\": ");
    json_string(c.folder);
    printf(", \"on_disk\": %s, \"writable\": %s, \"reason\": ", c.on_disk ? "true" : "false",
           c.writable ? "true" : "false");
    json_string(c.reason);
    printf("}}\n");
}

static void print_cache(int one_line)
{
    gp_cache_info c;
    gp_cache_get_info(&c);
    if (!one_line) printf("\nKernel cache:\n  %s%s\n", c.folder, c.on_disk ? "" : " (not used)");
    if (c.reason[0]) printf(one_line ? "%-10s %s\n" : "  %s%s\n", one_line ? "cache" : "", c.reason);
}

static void print_text(size_t nb, size_t nd, int one_line)
{
    if (!one_line) printf("gpuport %s\n\nBackends:\n", gp_version_string());
    for (size_t i = 0; i < nb; i++) {
        gp_backend_info b;
        gp_backend_get_info(i, &b);
        if (one_line) {
            if (!b.available) printf("%-10s unavailable: %s\n", b.name, b.reason);
        } else if (b.available) {
            printf("  %-7s available, %zu device%s; %s\n          plugin %s\n", b.name, b.device_count,
                   b.device_count == 1 ? "" : "s", b.version, b.plugin_path);
            if (b.reason[0]) printf("          %s\n", b.reason);
        } else {
            printf("  %-7s unavailable: %s\n", b.name, b.reason);
        }
    }
    if (!one_line) printf("\nDevices:\n");
    for (size_t i = 0; i < nd; i++) {
        gp_device *d;
        gp_device_info di;
        gp_device_get(i, &d);
        gp_device_get_info(d, &di);
        char id[32];
        snprintf(id, sizeof id, "%s:%zu", di.backend, di.backend_index);
        if (one_line) {
            printf("%-10s %-3s %s, %u CUs, %.1f GiB, fp64 %s, %s\n", id, type_name(di.type), di.name, di.compute_units,
                   di.global_mem_bytes / 1073741824.0, di.fp64 ? "yes" : "no", di.driver_version);
            continue;
        }
        printf("  %s  %s\n", id, di.name);
        printf("      vendor %s, type %s\n", di.vendor, type_name(di.type));
        printf("      global memory %.2f GiB, local memory %llu KiB per group (%llu KiB a kernel's own arrays)%s\n",
               di.global_mem_bytes / 1073741824.0, (unsigned long long)di.local_mem_bytes / 1024,
               (unsigned long long)di.local_mem_own_bytes / 1024, di.unified_memory ? ", shared with the host" : "");
        printf("      compute units %u, max work-group %zu (%zu x %zu x %zu)", di.compute_units, di.max_work_group_size,
               di.max_work_item_sizes[0], di.max_work_item_sizes[1], di.max_work_item_sizes[2]);
        if (di.subgroup_size) printf(", subgroup %u", di.subgroup_size);
        printf("\n      fp64 %s\n      driver %s\n      runtime %s\n", di.fp64 ? "yes" : "no", di.driver_version,
               di.runtime_version);
    }
    if (!one_line && nd == 0) printf("  none\n");
    print_cache(one_line);
}

int main(int argc, char **argv)
{
    int one_line = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-l") == 0) one_line = 1;
        else if (strcmp(argv[i], "--json") == 0) json = 1;
        else {
            fprintf(stderr, "usage: %s [-l | --json]\n  -l      one line per device (and per unavailable backend)\n"
                            "  --json  everything as JSON\n", argv[0]);
            return strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    size_t nb = 0, nd = 0;
    if (gp_backend_count(&nb) != GP_SUCCESS || gp_device_count(&nd) != GP_SUCCESS) {
        fprintf(stderr, "gpuport-info: %s\n", gp_last_error());
        return 1;
    }
    if (json) print_json(nb, nd);
    else print_text(nb, nd, one_line);
    return 0;
}

/* The process's resident memory, for the soak runs' growth checks (Linux: /proc/self/statm). */
#ifndef GPUPORT_TESTS_RSS_H
#define GPUPORT_TESTS_RSS_H

#include <stdio.h>
#include <unistd.h>

static inline double tst_rss_mib(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long pages = 0, resident = 0;
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0;
}

#endif

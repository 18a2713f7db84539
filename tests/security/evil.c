/* Another user's code dressed as a plugin: loading it leaves a mark (tests/security/plugins.sh
 * fails on any), so that a run that ran it is seen even though it is no gpuport plugin. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((constructor)) static void mark(void)
{
    const char *dir = getenv("GPUPORT_EVIL_MARKS");
    char path[512];
    snprintf(path, sizeof path, "%s/ran-%ld", dir ? dir : "/tmp", (long)getpid());
    int fd = open(path, O_WRONLY | O_CREAT, 0666);
    if (fd >= 0) close(fd);
}

/* The attacker's half of tests/security/plugins.sh: exchanges two paths (files or folders) with
 * renameat2(RENAME_EXCHANGE) as fast as it can, until the file STOP appears.
 * Usage: gpuport-test-swap A B STOP */
#define _GNU_SOURCE /* renameat2 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s A B STOP\n", argv[0]);
        return 2;
    }
    for (unsigned long i = 0; access(argv[3], F_OK) != 0; i++)
        if (renameat2(AT_FDCWD, argv[1], AT_FDCWD, argv[2], RENAME_EXCHANGE) != 0) {
            perror("renameat2");
            return 1;
        }
    return 0;
}

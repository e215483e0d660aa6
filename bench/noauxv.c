/* Runs a command with prctl(PR_GET_AUXV) refused (EINVAL), for bench/instructions.sh.
 *
 * Why: under valgrind, a program that reads its aux vector through PR_GET_AUXV (rustix does,
 * on Linux >= 6.4, to find the vDSO) gets the host's real vector, whose vDSO address valgrind
 * has not mapped for it, and crashes. Refused, rustix falls back to /proc/self/auxv, which
 * valgrind answers with the vector it gave the program. Nothing else is changed.
 *
 * usage: noauxv COMMAND [ARG]...
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef PR_GET_AUXV
#define PR_GET_AUXV 0x41555856
#endif

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: noauxv COMMAND [ARG]...\n");
        return 64;
    }
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_GET_AUXV, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EINVAL & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof(filter) / sizeof(filter[0]), .filter = filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("noauxv: seccomp");
        return 1;
    }
    execvp(argv[1], argv + 1);
    perror("noauxv: exec");
    return 127;
}

/* How each system call ends under the container's seccomp profile, one line per probe, each in
   a fresh child: `nr N` for every system call number up to argv[1], called with zero arguments,
   then `arg NAME` for the calls whose filter looks at their arguments, called with realistic
   ones (a socket of every address family and type, netlink protocols, socketpair, clone's
   namespace flags, personality). A line says the return sign and errno, a signal, or the exit.
   Two runs that differ only in their profile differ exactly where the profiles do. */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run nr(a..f) in a child and print "<label> <outcome>". */
static void probe(const char *label, long nr, long a, long b, long c, long d, long e, long f) {
    int fds[2];
    if (pipe(fds) != 0) exit(1);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        struct itimerval timer = {{0, 0}, {0, 200000}};  /* pause() and friends end in SIGALRM */
        setitimer(ITIMER_REAL, &timer, NULL);
        pid_t me = getpid();
        long r = syscall(nr, a, b, c, d, e, f);
        if (getpid() != me) _exit(0);  /* the child of a clone or fork: only the caller reports */
        char buf[64];
        int n = snprintf(buf, sizeof buf, "ret=%ld errno=%d", r < 0 ? -1L : (r > 0 ? 1L : 0L), r < 0 ? errno : 0);
        if (write(fds[1], buf, n) < 0) _exit(3);
        _exit(0);
    }
    close(fds[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    char buf[64] = {0};
    ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    if (n > 0) printf("%s %s\n", label, buf);
    else if (WIFSIGNALED(status)) printf("%s signal=%d\n", label, WTERMSIG(status));
    else printf("%s exit=%d\n", label, WEXITSTATUS(status));
    fflush(stdout);
}

int main(int argc, char **argv) {
    int last = argc > 1 ? atoi(argv[1]) : 470;
    char label[64];
    for (long nr = 0; nr <= last; nr++) {
        snprintf(label, sizeof label, "nr %ld", nr);
        probe(label, nr, 0, 0, 0, 0, 0, 0);
    }
    /* Every address family, as a stream, datagram and raw socket (the first type the kernel
       takes decides: a family is refused by the profile only if all three are). */
    int types[] = {SOCK_STREAM, SOCK_DGRAM, SOCK_RAW, SOCK_SEQPACKET};
    for (int family = 0; family < AF_MAX; family++) {
        for (int t = 0; t < 4; t++) {
            snprintf(label, sizeof label, "arg socket/%d/%d", family, types[t]);
            probe(label, SYS_socket, family, types[t] | SOCK_CLOEXEC, 0, 0, 0, 0);
        }
    }
    for (int proto = 0; proto < 23; proto++) {  /* NETLINK_ROUTE is 0; audit, uevent, ... follow */
        snprintf(label, sizeof label, "arg netlink/%d", proto);
        probe(label, SYS_socket, AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, proto, 0, 0, 0);
    }
    int pair_families[] = {AF_UNIX, AF_INET, AF_VSOCK, AF_NETLINK};
    for (int i = 0; i < 4; i++) {
        int sv[2];
        snprintf(label, sizeof label, "arg socketpair/%d", pair_families[i]);
        probe(label, SYS_socketpair, pair_families[i], SOCK_STREAM, 0, (long)sv, 0, 0);
    }
    long clones[] = {SIGCHLD, CLONE_NEWUSER | SIGCHLD, CLONE_NEWNS | SIGCHLD, CLONE_NEWNET | SIGCHLD,
                     CLONE_NEWPID | SIGCHLD, CLONE_NEWUTS | SIGCHLD, CLONE_NEWIPC | SIGCHLD, CLONE_NEWCGROUP | SIGCHLD};
    for (int i = 0; i < 8; i++) {
        snprintf(label, sizeof label, "arg clone/%#lx", clones[i]);
        probe(label, SYS_clone, clones[i], 0, 0, 0, 0, 0);
    }
    long personas[] = {0, 8, 0x20000, 0x20008, 0xffffffff, 0x0040000 /* ADDR_NO_RANDOMIZE */};
    for (int i = 0; i < 6; i++) {
        snprintf(label, sizeof label, "arg personality/%#lx", personas[i]);
        probe(label, SYS_personality, personas[i], 0, 0, 0, 0, 0);
    }
    return 0;
}

/* For every system call number up to argv[1]: call it once with zero arguments in a fresh
   child and print how it ended (return sign and errno, a signal, or the exit). Two runs that
   differ only in their seccomp profile differ exactly where the profiles do. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int last = argc > 1 ? atoi(argv[1]) : 470;
    for (long nr = 0; nr <= last; nr++) {
        int fds[2];
        if (pipe(fds) != 0) return 1;
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            struct itimerval timer = {{0, 0}, {0, 200000}};  /* pause() and friends end in SIGALRM */
            setitimer(ITIMER_REAL, &timer, NULL);
            pid_t me = getpid();
            long r = syscall(nr, 0, 0, 0, 0, 0, 0);
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
        if (n > 0) printf("%ld %s\n", nr, buf);
        else if (WIFSIGNALED(status)) printf("%ld signal=%d\n", nr, WTERMSIG(status));
        else printf("%ld exit=%d\n", nr, WEXITSTATUS(status));
        fflush(stdout);
    }
    return 0;
}

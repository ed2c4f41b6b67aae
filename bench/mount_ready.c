/*
 * mount_ready MNT CMD [ARG...]: start CMD (a FUSE daemon in the foreground), poll stat(MNT)
 * every 50 us until it answers from a different device than before, and print
 * "<nanoseconds from exec to ready> <daemon pid>". The daemon keeps running; the caller
 * unmounts it. Exit 1 if the mount does not appear within 30 s or the daemon dies first.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	struct stat before, st;
	long long t0;
	pid_t pid;

	if (argc < 3) {
		fprintf(stderr, "usage: mount_ready MNT CMD [ARG...]\n");
		return 2;
	}
	if (stat(argv[1], &before) != 0) {
		perror(argv[1]);
		return 2;
	}
	t0 = now_ns();
	pid = fork();
	if (pid == 0) {
		dup2(2,
		     1); /* the caller reads our stdout to its end: the daemon must not hold it */
		execvp(argv[2], argv + 2);
		_exit(127);
	}
	for (;;) {
		int status;

		if (stat(argv[1], &st) == 0 && st.st_dev != before.st_dev)
			break;
		if (waitpid(pid, &status, WNOHANG) == pid) {
			fprintf(stderr, "mount_ready: daemon exited before the mount appeared\n");
			return 1;
		}
		if (now_ns() - t0 > 30000000000LL) {
			kill(pid, SIGTERM);
			fprintf(stderr, "mount_ready: no mount after 30 s\n");
			return 1;
		}
		usleep(50);
	}
	printf("%lld %d\n", now_ns() - t0, (int)pid);
	return 0;
}

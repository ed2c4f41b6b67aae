/*
 * errno_probe: perform one file-system operation and print its outcome as "OK" or the errno
 * name ("EROFS"), so shell tests can assert the exact errno of each operation.
 * usage: errno_probe OP PATH [PATH2]
 * OPs: stat lstat access_w open_r open_w open_rw open_creat open_trunc open_dir read readdir
 *      truncate mkdir rmdir unlink rename link symlink chmod chown utime setxattr
 *      removexattr mknod
 * Exit 0 whenever the operation ran (whatever its outcome), 2 on a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

static int open_read(const char *p)
{
	char b[4096];
	int fd = open(p, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	do
		n = read(fd, b, sizeof b);
	while (n > 0);
	if (n < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

static int list_dir(const char *p)
{
	DIR *d = opendir(p);

	if (!d)
		return -1;
	errno = 0;
	while (readdir(d))
		;
	if (errno) {
		int e = errno;

		closedir(d);
		errno = e;
		return -1;
	}
	closedir(d);
	return 0;
}

static int open_close(const char *p, int flags)
{
	int fd = open(p, flags, 0644);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *op, *p, *p2;
	struct stat st;
	int r;

	if (argc < 3 || argc > 4) {
		fprintf(stderr, "usage: errno_probe OP PATH [PATH2]\n");
		return 2;
	}
	op = argv[1];
	p = argv[2];
	p2 = argc == 4 ? argv[3] : NULL;
	errno = 0;
	if (!strcmp(op, "stat"))
		r = stat(p, &st);
	else if (!strcmp(op, "lstat"))
		r = lstat(p, &st);
	else if (!strcmp(op, "access_w"))
		r = access(p, W_OK);
	else if (!strcmp(op, "open_r"))
		r = open_close(p, O_RDONLY);
	else if (!strcmp(op, "open_w"))
		r = open_close(p, O_WRONLY);
	else if (!strcmp(op, "open_rw"))
		r = open_close(p, O_RDWR);
	else if (!strcmp(op, "open_creat"))
		r = open_close(p, O_WRONLY | O_CREAT);
	else if (!strcmp(op, "open_trunc"))
		r = open_close(p, O_RDONLY | O_TRUNC);
	else if (!strcmp(op, "open_dir"))
		r = open_close(p, O_RDONLY | O_DIRECTORY);
	else if (!strcmp(op, "read"))
		r = open_read(p);
	else if (!strcmp(op, "readdir"))
		r = list_dir(p);
	else if (!strcmp(op, "truncate"))
		r = truncate(p, 0);
	else if (!strcmp(op, "mkdir"))
		r = mkdir(p, 0755);
	else if (!strcmp(op, "rmdir"))
		r = rmdir(p);
	else if (!strcmp(op, "unlink"))
		r = unlink(p);
	else if (!strcmp(op, "rename") && p2)
		r = rename(p, p2);
	else if (!strcmp(op, "link") && p2)
		r = link(p, p2);
	else if (!strcmp(op, "symlink") && p2)
		r = symlink(p2, p);
	else if (!strcmp(op, "chmod"))
		r = chmod(p, 0777);
	else if (!strcmp(op, "chown"))
		r = chown(p, getuid(), getgid());
	else if (!strcmp(op, "utime"))
		r = utimensat(AT_FDCWD, p, NULL, 0);
	else if (!strcmp(op, "setxattr"))
		r = setxattr(p, "user.psgfs", "x", 1, 0);
	else if (!strcmp(op, "removexattr"))
		r = removexattr(p, "user.psgfs");
	else if (!strcmp(op, "mknod"))
		r = mknod(p, S_IFIFO | 0644, 0);
	else {
		fprintf(stderr, "errno_probe: unknown op '%s' (or missing PATH2)\n", op);
		return 2;
	}
	if (r == 0) {
		puts("OK");
	} else {
		const char *name = strerrorname_np(errno);

		puts(name ? name : "E?");
	}
	return 0;
}

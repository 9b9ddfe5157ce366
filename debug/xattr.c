/*
 * xattr.c - sufs-debug's commands for extended attributes, as debugfs
 * has them: ea_list, ea_get, ea_set, ea_rm.
 *
 * They act on the inode a path names (a symbolic link itself, not its
 * target), as its owner with every privilege: the debugger sees and
 * changes trusted. attributes too.  ea_set and ea_rm need -w and go
 * through the library's operations, under the same ordering as any
 * other change: with write-back left to the user, `deps` shows what they
 * left pending.
 */
#include "config.h"

#include "commands.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

static int xattr_usage(const char *cmd)
{
	const struct command *c = command_find(cmd);
	return fail(cmd, NULL, "usage: %s%s%s", c->name, *c->args ? " " : "", c->args);
}

/* A value as text: in quotes, print_name()'s escapes for control bytes,
 * NULs and what is not UTF-8; or with hex, as 0x and two digits a byte
 * (what setfattr -v and sufs-replay's setxattr take back). */
void print_value(FILE *f, const uint8_t *v, size_t len, int hex)
{
	size_t i;

	if (hex) {
		fputs("0x", f);
		for (i = 0; i < len; i++)
			fprintf(f, "%02x", v[i]);
		return;
	}
	fputc('"', f);
	print_name(f, (const char *)v, len);
	fputc('"', f);
}

/* Print "  NAME (LEN) = VALUE" for each attribute of ino; 0, or the
 * library's error. */
int print_xattrs(struct session *s, uint32_t ino, const char *indent, int hex)
{
	char *list = NULL, *name;
	uint8_t *value = NULL;
	size_t len = 0, vlen;
	int rc = sufs_listxattr(s->fs, ino, NULL, 0, &len, NULL);

	if (!rc && len && !(list = malloc(len)))
		rc = -ENOMEM;
	if (!rc && len)
		rc = sufs_listxattr(s->fs, ino, list, len, &len, NULL);
	if (!rc && !(value = malloc(SUFS_XATTR_SIZE_MAX)))
		rc = -ENOMEM;
	for (name = list; !rc && name && name < list + len; name += strlen(name) + 1) {
		rc = sufs_getxattr(s->fs, ino, name, value, SUFS_XATTR_SIZE_MAX, &vlen, NULL);
		if (rc)
			break;
		fputs(indent, stdout);
		print_name(stdout, name, strlen(name));
		printf(" (%zu) = ", vlen);
		print_value(stdout, value, vlen, hex);
		putchar('\n');
	}
	free(list);
	free(value);
	return rc;
}

/* ea_list [-x] PATH */
int cmd_ea_list(struct session *s, int argc, char **argv)
{
	uint32_t ino;
	int hex = argc == 3 && strcmp(argv[1], "-x") == 0, rc;

	if (argc != 2 + hex)
		return xattr_usage(argv[0]);
	if (resolve(s, argv[0], argv[argc - 1], 0, &ino))
		return 1;
	rc = print_xattrs(s, ino, "", hex);
	return rc ? fail(argv[0], argv[argc - 1], "%s", sufs_strerror(rc)) : 0;
}

/* Write len bytes to the host file path (made, or truncated). */
static int write_host(const char *cmd, const char *path, const uint8_t *v, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	ssize_t n;

	if (fd < 0)
		return fail(cmd, path, "%s", strerror(errno));
	n = len ? write(fd, v, len) : 0;
	if (n != (ssize_t)len || close(fd)) {
		int e = n < 0 ? errno : EIO;
		if (n == (ssize_t)len)
			e = errno;
		return fail(cmd, path, "%s", strerror(e));
	}
	return 0;
}

/* ea_get [-x] [-s SIZE] [-f HOSTFILE] PATH NAME: SIZE is the buffer the
 * library is given (0: ask for the length only), to see its ERANGE. */
int cmd_ea_get(struct session *s, int argc, char **argv)
{
	const char *out = NULL;
	uint64_t size = SUFS_XATTR_SIZE_MAX;
	uint8_t *value;
	size_t len;
	uint32_t ino;
	int i, hex = 0, rc;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-x") == 0)
			hex = 1;
		else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc)
			out = argv[++i];
		else if (strcmp(argv[i], "-s") != 0 || i + 1 == argc)
			return xattr_usage(argv[0]);
		else if (parse_u64(argv[++i], &size) || size > SUFS_XATTR_SIZE_MAX)
			return fail(argv[0], argv[i], "not a size from 0 to %u", SUFS_XATTR_SIZE_MAX);
	}
	if (i != argc - 2)
		return xattr_usage(argv[0]);
	if (resolve(s, argv[0], argv[i], 0, &ino))
		return 1;
	value = malloc(size ? size : 1);
	if (!value)
		return fail(argv[0], NULL, "%s", strerror(ENOMEM));
	rc = sufs_getxattr(s->fs, ino, argv[i + 1], value, size, &len, NULL);
	if (rc) {
		free(value);
		return fail(argv[0], argv[i + 1], "%s", sufs_strerror(rc));
	}
	if (!size)
		printf("%zu\n", len);
	else if (out)
		rc = write_host(argv[0], out, value, len);
	else {
		print_value(stdout, value, len, hex);
		putchar('\n');
	}
	free(value);
	return rc;
}

/* The bytes of a host file, at most SUFS_XATTR_SIZE_MAX + 1 of them (one
 * more is the library's E2BIG to give). */
static int read_host(const char *cmd, const char *path, uint8_t **v, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return fail(cmd, path, "%s", strerror(errno));
	*v = malloc(SUFS_XATTR_SIZE_MAX + 1);
	if (!*v) {
		close(fd);
		return fail(cmd, path, "%s", strerror(ENOMEM));
	}
	*len = 0;
	while (*len <= SUFS_XATTR_SIZE_MAX &&
	       (n = read(fd, *v + *len, SUFS_XATTR_SIZE_MAX + 1 - *len)) > 0)
		*len += (size_t)n;
	if (n < 0) {
		int e = errno;
		close(fd);
		free(*v);
		return fail(cmd, path, "%s", strerror(e));
	}
	close(fd);
	return 0;
}

/* ea_set [-c | -r] [-f HOSTFILE] PATH NAME [VALUE]: -c only a new one
 * (XATTR_CREATE), -r only an existing one (XATTR_REPLACE). */
int cmd_ea_set(struct session *s, int argc, char **argv)
{
	const char *in = NULL;
	uint8_t *value = NULL;
	size_t len = 0;
	uint32_t ino;
	int i, flags = 0, rc;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "-c") == 0)
			flags |= SUFS_XATTR_CREATE;
		else if (strcmp(argv[i], "-r") == 0)
			flags |= SUFS_XATTR_REPLACE;
		else if (strcmp(argv[i], "-f") == 0 && i + 1 < argc)
			in = argv[++i];
		else
			return xattr_usage(argv[0]);
	}
	if (argc - i != (in ? 2 : 3))
		return xattr_usage(argv[0]);
	if (resolve(s, argv[0], argv[i], 0, &ino))
		return 1;
	if (in && read_host(argv[0], in, &value, &len))
		return 1;
	if (!in) {
		value = (uint8_t *)strdup(argv[i + 2]);
		len = strlen(argv[i + 2]);
		if (!value)
			return fail(argv[0], NULL, "%s", strerror(ENOMEM));
	}
	rc = sufs_setxattr(s->fs, ino, argv[i + 1], value, len, flags, NULL);
	free(value);
	return rc ? fail(argv[0], argv[i + 1], "%s", sufs_strerror(rc)) : 0;
}

/* ea_rm PATH NAME... */
int cmd_ea_rm(struct session *s, int argc, char **argv)
{
	uint32_t ino;
	int i, rc, status = 0;

	if (argc < 3)
		return xattr_usage(argv[0]);
	if (resolve(s, argv[0], argv[1], 0, &ino))
		return 1;
	for (i = 2; i < argc; i++) {
		rc = sufs_removexattr(s->fs, ino, argv[i], NULL);
		if (rc)
			status = fail(argv[0], argv[i], "%s", sufs_strerror(rc));
	}
	return status;
}

/* Set one attribute on the host file (fd, or else the path src, its link
 * not followed): 0, or the errno. */
static int host_set(int fd, const char *src, const char *name, const uint8_t *v, size_t len)
{
	int rc = fd >= 0 ? fsetxattr(fd, name, v, len, 0) : lsetxattr(src, name, v, len, 0);

	return rc ? errno : 0;
}

int restore_xattrs(struct session *s, const char *cmd, const char *what, uint32_t ino, int fd,
		   int dirfd, const char *name)
{
	char src[64 + SUFS_NAME_MAX], *list = NULL, *n;
	uint8_t *value = NULL;
	size_t len = 0, vlen;
	int rc = sufs_listxattr(s->fs, ino, NULL, 0, &len, NULL), e, status = 0;

	if (!rc && !len)
		return 0;
	if (!rc && (!(list = malloc(len)) || !(value = malloc(SUFS_XATTR_SIZE_MAX))))
		rc = -ENOMEM;
	if (!rc)
		rc = sufs_listxattr(s->fs, ino, list, len, &len, NULL);
	snprintf(src, sizeof(src), "/proc/self/fd/%d/%s", dirfd, name ? name : "");
	for (n = list; !rc && n < list + len; n += strlen(n) + 1) {
		rc = sufs_getxattr(s->fs, ino, n, value, SUFS_XATTR_SIZE_MAX, &vlen, NULL);
		if (rc)
			break;
		e = host_set(fd, src, n, value, vlen);
		if (!e)
			continue;
		if (strncmp(n, "user.", 5) != 0 &&
		    (e == EPERM || e == EACCES || e == EOPNOTSUPP || e == ENOTSUP)) {
			warnmsg("%s: not restoring %s: %s", shown(what), shown(n), strerror(e));
			continue;
		}
		status = fail(cmd, what, "setting extended attribute %s: %s", shown(n), strerror(e));
	}
	if (rc)
		status = fail(cmd, what, "reading its extended attributes: %s", sufs_strerror(rc));
	free(list);
	free(value);
	return status;
}

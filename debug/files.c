/*
 * files.c - sufs-debug's commands on the blocks of one file, as debugfs
 * has them: write (a host file copied in as a new file), punch and
 * filefrag.
 *
 * `write` has two forms, told apart by their number of words: debugfs's
 * `write HOSTFILE PATH`, and the script language's `write PATH OFFSET
 * LENGTH [SEED]` (sufs-replay(8)), which writes pattern bytes into a file
 * that exists and goes on meaning that.
 */
#include "config.h"

#include "commands.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WRITE_CHUNK (1u << 20)     /* bytes read from the host file at a time */

static int files_usage(const char *cmd)
{
	const struct command *c = command_find(cmd);
	return fail(cmd, NULL, "usage: %s%s%s", c->name, *c->args ? " " : "", c->args);
}

static int all_zero(const uint8_t *b, size_t n)
{
	return n == 0 || (b[0] == 0 && memcmp(b, b + 1, n - 1) == 0);
}

/* Copy the host file on fd into inode ino, a block at a time, leaving the
 * blocks of zeros as holes (as mkfs.sufs -d does); the size is the host
 * file's.  0, or 1 after a message. */
static int copy_in(struct session *s, const char *cmd, const char *path, int fd, uint32_t ino)
{
	uint32_t bs = sufs_get_super(s->fs)->block_size;
	struct sufs_setattr sa = { .mask = SUFS_SET_SIZE };
	uint8_t *buf = malloc(WRITE_CHUNK);
	uint64_t off = 0;
	ssize_t n;
	size_t i, piece;
	int rc;

	if (!buf)
		return fail(cmd, path, "%s", sufs_strerror(-ENOMEM));
	while ((n = pread(fd, buf, WRITE_CHUNK, (off_t)off)) != 0) {
		if (n < 0 && errno == EINTR && !debug_interrupted())
			continue;
		if (n < 0 || debug_interrupted()) {
			rc = n < 0 ? fail(cmd, path, "reading the host file: %s", strerror(errno))
				   : fail(cmd, path, "interrupted");
			free(buf);
			return rc;
		}
		for (i = 0; i < (size_t)n; i += piece) {
			piece = bs - (size_t)((off + i) % bs);
			if (piece > (size_t)n - i)
				piece = (size_t)n - i;
			if (all_zero(buf + i, piece))
				continue;
			rc = sufs_write(s->fs, ino, off + i, buf + i, piece);
			if (rc) {
				free(buf);
				return fail(cmd, path, "%s", sufs_strerror(rc));
			}
		}
		off += (uint64_t)n;
	}
	free(buf);
	sa.size = off;     /* a trailing hole */
	rc = sufs_setattr(s->fs, ino, &sa);
	return rc ? fail(cmd, path, "%s", sufs_strerror(rc)) : 0;
}

/* write HOSTFILE PATH: a new regular file with the host file's contents and
 * permissions, owned by the caller. */
static int write_host_file(struct session *s, const char *cmd, const char *host,
			   const char *path)
{
	struct sufs_cred cred = { (uint32_t)getuid(), (uint32_t)getgid() };
	const char *name;
	struct stat st = { 0 };
	uint32_t dir, ino;
	size_t len;
	int fd, rc;

	fd = open(host, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(cmd, host, "%s", strerror(errno));
	errno = 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = fail(cmd, host, "%s", errno && !st.st_mode ? strerror(errno) :
				     S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
		close(fd);
		return rc;
	}
	rc = sufs_namei_parent(s->fs, s->cwd, path, &dir, &name, &len);
	if (!rc)
		rc = sufs_create(s->fs, dir, name, len, st.st_mode & 07777, &cred, &ino);
	if (rc) {
		close(fd);
		return fail(cmd, path, "%s", sufs_strerror(rc));
	}
	rc = copy_in(s, cmd, path, fd, ino);
	close(fd);
	return rc;
}

/* write HOSTFILE PATH | write PATH OFFSET LENGTH [SEED] */
int cmd_write(struct session *s, int argc, char **argv)
{
	if (argc == 3)
		return write_host_file(s, argv[0], argv[1], argv[2]);
	if (argc < 3)
		return files_usage(argv[0]);
	return cmd_script(s, argc, argv);
}

/* punch PATH START [END]: free logical blocks START to END (to the end of
 * the file without END), which then read as zeros; the size stays. */
int cmd_punch(struct session *s, int argc, char **argv)
{
	uint32_t bs = sufs_get_super(s->fs)->block_size;
	uint64_t start, end = UINT64_MAX, len;
	uint32_t ino;
	int rc;

	if (argc != 3 && argc != 4)
		return files_usage(argv[0]);
	if (parse_u64(argv[2], &start) || start > UINT64_MAX / bs)
		return fail(argv[0], argv[2], "not a logical block number");
	if (argc == 4 && (parse_u64(argv[3], &end) || end < start))
		return fail(argv[0], argv[3], "not a logical block number from %llu on",
			    (unsigned long long)start);
	if (resolve(s, argv[0], argv[1], 1, &ino))
		return 1;
	len = end == UINT64_MAX || end - start + 1 > UINT64_MAX / bs ? UINT64_MAX
								      : (end - start + 1) * bs;
	rc = sufs_punch(s->fs, ino, start * bs, len);
	return rc ? fail(argv[0], argv[1], "%s", sufs_strerror(rc)) : 0;
}

/* Runs of blocks consecutive both in the file and on the device. */
struct frag {
	uint64_t first_l, first_p, count; /* the run being gathered */
	uint64_t extents, blocks;
	int verbose, bad;
};

static void frag_end(struct frag *f)
{
	if (!f->count)
		return;
	if (f->verbose)
		printf("%4llu %10llu %10llu %8llu\n", (unsigned long long)f->extents,
		       (unsigned long long)f->first_l, (unsigned long long)f->first_p,
		       (unsigned long long)f->count);
	f->extents++;
	f->count = 0;
}

static int frag_block(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		      int level, int bad, void *arg)
{
	struct frag *f = arg;

	(void)fs;
	(void)ino;
	if (bad) {
		f->bad = 1;
		return 0;
	}
	if (level != 0)
		return 0;
	f->blocks++;
	if (f->count && f->first_l + f->count == lblk && f->first_p + f->count == pblk) {
		f->count++;
		return 0;
	}
	frag_end(f);
	f->first_l = lblk;
	f->first_p = pblk;
	f->count = 1;
	return 0;
}

/* filefrag [-v] PATH: how many runs of contiguous blocks hold the file's
 * data (-v: each run, its logical and physical start and length). */
int cmd_filefrag(struct session *s, int argc, char **argv)
{
	struct frag f = { 0 };
	uint32_t ino;
	int rc, i = 1;

	if (argc == 3 && strcmp(argv[1], "-v") == 0) {
		f.verbose = 1;
		i = 2;
	}
	if (argc != i + 1)
		return files_usage(argv[0]);
	if (resolve(s, argv[0], argv[i], 0, &ino))
		return 1;
	if (f.verbose)
		printf(" ext    logical   physical   length\n");
	rc = sufs_block_iterate(s->fs, ino, frag_block, &f);
	frag_end(&f);
	print_name(stdout, argv[i], strlen(argv[i]));
	printf(": %llu contiguous extent%s, %llu block%s\n", (unsigned long long)f.extents,
	       f.extents == 1 ? "" : "s", (unsigned long long)f.blocks, f.blocks == 1 ? "" : "s");
	if (rc)
		return fail(argv[0], argv[i], "%s", sufs_strerror(rc));
	if (f.bad)
		return fail(argv[0], argv[i], "a block pointer out of range (not counted)");
	return 0;
}

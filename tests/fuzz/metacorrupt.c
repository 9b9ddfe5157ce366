/*
 * metacorrupt - copy a sufs image and corrupt random bytes of its metadata,
 * for tests/fuzz/e2fuzz (after e2fsprogs' e2fuzz).
 *
 *   metacorrupt [-n BYTES] [-s SEED] [-v] IN OUT
 *   metacorrupt -l IN
 *
 * The metadata blocks are found on IN, which must be a sound image: every
 * superblock copy, the group descriptor table, the bitmaps and the inode
 * tables (all of them: a damaged free inode is damage too), and, for every
 * inode in use, all blocks of a directory, the block of a symlink whose
 * target does not fit in the inode, the indirect blocks of a regular
 * file, and its attribute block.  File data is never touched.  -l prints their numbers, one a line.
 *
 * IN is copied to OUT, then BYTES bytes (default 16), each at a place drawn
 * uniformly from all the metadata bytes, are changed: half of them by one
 * flipped bit (a value that is nearly right), half to a random other value.
 * The same SEED gives the same damage.  -v prints each change as
 * "BLOCK OFFSET OLD NEW" (hex bytes).
 *
 * -c COUNT runs e2fuzz's whole loop in this process, on the library's
 * checker over a device in memory (see check_loop).
 *
 * Exit status: 0 done, 1 usage, 2 IN cannot be read, 3 OUT cannot be made.
 */
#include "config.h"

#include <sufs.h>

#include "memdev.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct blocks {
	uint64_t *v;
	size_t n, cap;
};

static int add(struct blocks *b, uint64_t blk)
{
	if (b->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		uint64_t *v = realloc(b->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		b->v = v;
		b->cap = cap;
	}
	b->v[b->n++] = blk;
	return 0;
}

static int add_range(struct blocks *b, uint64_t first, uint64_t count)
{
	int rc = 0;

	for (uint64_t i = 0; i < count && !rc; i++)
		rc = add(b, first + i);
	return rc;
}

struct mapped {
	struct blocks *b;
	int all;                   /* every block, not only the indirect ones */
};

static int add_mapped(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk,
		      int level, int bad, void *arg)
{
	struct mapped *m = arg;

	(void)fs; (void)ino; (void)lblk;
	if (bad || (level == 0 && !m->all))
		return 0;
	return add(m->b, pblk);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The metadata blocks of the image, sorted, each once. */
static int find_metadata(struct sufs_fs *fs, struct blocks *b)
{
	const struct sufs_super *sb = sufs_get_super(fs);
	struct sufs_group_layout l;
	struct sufs_inode in;
	size_t i, j;
	int rc = 0;

	for (uint32_t g = 0; g < sb->groups_count && !rc; g++) {
		sufs_group_layout(sb, g, &l);
		if (l.sb_block != UINT64_MAX)
			rc = add(b, l.sb_block);
		if (!rc && l.gdt_blocks)
			rc = add_range(b, l.gdt_start, l.gdt_blocks);
		if (!rc)
			rc = add(b, l.block_bitmap);
		if (!rc)
			rc = add(b, l.inode_bitmap);
		if (!rc)
			rc = add_range(b, l.inode_table, l.inode_table_blocks);
	}
	for (uint32_t ino = 1; ino <= sb->inodes_count && !rc; ino++) {
		struct mapped m = { b, 0 };
		int set;

		if (sufs_bitmap_test(fs, SUFS_BITMAP_INODE, ino, &set) || !set)
			continue;
		if (sufs_inode_get(fs, ino, &in))
			continue;
		if (in.xattr_block && in.xattr_block < sb->blocks_count &&
		    (rc = add(b, in.xattr_block)) != 0)
			break;
		switch (in.mode & S_IFMT) {
		case S_IFDIR:
			m.all = 1;
			break;
		case S_IFLNK:
			m.all = in.size > SUFS_FAST_SYMLINK_MAX;
			break;
		case S_IFREG:
			break;
		default:
			continue;
		}
		rc = sufs_block_iterate(fs, ino, add_mapped, &m);
	}
	if (rc)
		return rc;
	qsort(b->v, b->n, sizeof(*b->v), cmp_u64);
	for (i = j = 0; i < b->n; i++)
		if (!j || b->v[j - 1] != b->v[i])
			b->v[j++] = b->v[i];
	b->n = j;
	return 0;
}

/* SplitMix64: small, and the same sequence everywhere for a seed. */
static uint64_t next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The whole file at path, in memory. */
static int read_file(const char *path, uint8_t **out, size_t *size)
{
	struct stat st;
	uint8_t *buf;
	size_t done = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		rc = -errno;
		close(fd);
		return rc;
	}
	buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (done < (size_t)st.st_size && (n = read(fd, buf + done, (size_t)st.st_size - done)) > 0)
		done += (size_t)n;
	if (done < (size_t)st.st_size)
		rc = -EIO;
	close(fd);
	if (rc) {
		free(buf);
		return rc;
	}
	*out = buf;
	*size = done;
	return 0;
}

static int write_file(const char *path, const uint8_t *buf, size_t size)
{
	size_t done = 0;
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), rc = 0;

	if (fd < 0)
		return -errno;
	while (done < size && (n = write(fd, buf + done, size - done)) > 0)
		done += (size_t)n;
	if (done < size)
		rc = errno ? -errno : -EIO;
	if (close(fd) && !rc)
		rc = -errno;
	return rc;
}

/* Change nbytes bytes of the metadata blocks of img, as seed says. */
static void corrupt(uint8_t *img, size_t size, const struct blocks *b, uint32_t bsize,
		    uint32_t nbytes, uint64_t seed, FILE *verbose)
{
	uint64_t state = seed, total = (uint64_t)b->n * bsize;

	for (uint32_t i = 0; i < nbytes && total; i++) {
		uint64_t r = next(&state), at = r % total, blk = b->v[at / bsize];
		uint64_t off = blk * bsize + at % bsize;
		uint8_t old, new;

		r = next(&state);
		if (off >= size)
			continue; /* the image ends before its last block: nothing there */
		old = img[off];
		if (r & 1)
			new = old ^ (uint8_t)(1u << ((r >> 1) & 7));
		else
			new = old ^ (uint8_t)(1 + (r >> 1) % 255);
		img[off] = new;
		if (verbose)
			fprintf(verbose, "%llu %llu %02x %02x\n", (unsigned long long)blk,
				(unsigned long long)(at % bsize), old, new);
	}
}

/*
 * -c: e2fuzz's loop in one process, on the library's checker (what fsck.sufs
 * -fy runs) over a device in memory, much faster than a program per run.
 * Each iteration prints "begin SEED" first, then "SEED VERDICT" (the
 * verdicts of tests/fuzz/e2fuzz).  A crash ends the process: the last
 * "begin" names the seed.  A hang ends it by SIGALRM after limit seconds.
 */
static void check_loop(const uint8_t *img, size_t size, const struct blocks *b, uint32_t bsize,
		       uint32_t nbytes, uint64_t seed, uint64_t n, unsigned limit)
{
	struct sufs_check_opts o = { .flags = SUFS_CHECK_YES | SUFS_CHECK_FORCE };
	struct sufs_check_result r;
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy) {
		errmsg("out of memory");
		exit(2);
	}
	for (uint64_t i = 1; i <= n; i++) {
		const char *verdict = "not-clean";
		uint64_t s = seed + i;

		printf("begin %llu\n", (unsigned long long)s);
		fflush(stdout);
		memcpy(copy, img, size);
		corrupt(copy, size, b, bsize, nbytes, s, NULL);
		alarm(limit);
		for (int pass = 1; pass <= 3; pass++) {
			struct sufs_dev *dev = memdev_new(copy, size, 1);
			int rc;

			if (!dev) {
				errmsg("out of memory");
				exit(2);
			}
			rc = sufs_check_dev(dev, &o, &r);
			sufs_dev_close(dev);
			if (rc || (r.status & ~SUFS_EXIT_CORRECTED)) {
				verdict = "uncorrected";
				break;
			}
			if (r.status == 0) {
				verdict = pass == 1 ? "clean" : pass == 2 ? "repaired" : "not-clean";
				break;
			}
			if (pass == 2)
				break; /* still repairing: not clean within 2 runs */
		}
		alarm(0);
		printf("%llu %s\n", (unsigned long long)s, verdict);
	}
	free(copy);
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: %s [-n BYTES] [-s SEED] [-v] IN OUT\n"
		"       %s -l IN\n"
		"       %s -c COUNT [-n BYTES] [-s SEED] [-t SECONDS] IN\n"
		"Copy the sufs image IN to OUT and change BYTES random bytes (default 16)\n"
		"of its metadata; -l lists the metadata blocks of IN instead.\n"
		"-v prints each change as \"BLOCK OFFSET OLD NEW\".\n"
		"-c runs e2fuzz's loop COUNT times in this process (seeds SEED+1...):\n"
		"damage a copy in memory, check and repair it like fsck.sufs -fy, at most\n"
		"3 times, each iteration within SECONDS (default 30).\n",
		prog, prog, prog);
}

int main(int argc, char **argv)
{
	struct sufs_fs *fs;
	struct blocks b = { 0 };
	uint32_t nbytes = 16, bsize = 0, limit = 30;
	uint64_t seed = 0, count = 0;
	uint8_t *img = NULL;
	size_t size = 0;
	int list = 0, verbose = 0, opt, rc;

	prog_init("metacorrupt", argv);
	while ((opt = getopt(argc, argv, "c:ln:s:t:vh")) != -1) {
		switch (opt) {
		case 'c':
			if (parse_u64(optarg, &count) || !count) {
				errmsg("bad count: %s", optarg);
				return 1;
			}
			break;
		case 'l': list = 1; break;
		case 'n':
			if (parse_u32(optarg, &nbytes)) {
				errmsg("bad byte count: %s", optarg);
				return 1;
			}
			break;
		case 's':
			if (parse_u64(optarg, &seed)) {
				errmsg("bad seed: %s", optarg);
				return 1;
			}
			break;
		case 't':
			if (parse_u32(optarg, &limit) || !limit) {
				errmsg("bad time limit: %s", optarg);
				return 1;
			}
			break;
		case 'v': verbose = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 1;
		}
	}
	if (argc - optind != (list || count ? 1 : 2)) {
		usage(stderr);
		return 1;
	}
	rc = sufs_open(argv[optind], 0, &fs);
	if (!rc) {
		bsize = sufs_get_super(fs)->block_size;
		rc = find_metadata(fs, &b);
		sufs_close(fs);
	}
	if (!rc && !list)
		rc = read_file(argv[optind], &img, &size);
	if (rc) {
		errmsg("%s: %s", argv[optind], sufs_strerror(rc));
		free(b.v);
		return 2;
	}
	if (list) {
		for (size_t i = 0; i < b.n; i++)
			printf("%llu\n", (unsigned long long)b.v[i]);
	} else if (count) {
		check_loop(img, size, &b, bsize, nbytes, seed, count, limit);
	} else {
		corrupt(img, size, &b, bsize, nbytes, seed, verbose ? stdout : NULL);
		rc = write_file(argv[optind + 1], img, size);
		if (rc) {
			errmsg("%s: %s", argv[optind + 1], sufs_strerror(rc));
			rc = 3;
		}
	}
	free(img);
	free(b.v);
	return rc;
}

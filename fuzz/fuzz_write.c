/*
 * fuzz_write.c - libFuzzer target: the operations on any image, as
 * sufs-replay and sufs-debug -w run them.
 *
 * The input is an image, copied (the input stays the fuzzer's) and opened
 * read-write in one of the three write modes, with checksums verified (as
 * the tools open it) or ignored (as fsck.sufs repairs, and as a hostile
 * image with its checksums recomputed would pass), and with or without a
 * snapshot taken first and deleted last; the input's last byte chooses.
 * A fixed round of operations then runs on what the image holds: each of
 * the first names in the root directory, and the first few in each
 * directory there, is written to, truncated, linked, renamed, removed, and
 * created under when it is a directory; new files are written through the
 * indirect blocks, with a symlink and a fifo beside them, and removed; each
 * name's extended attributes are set (in the inode, then grown into a
 * block), replaced, listed and removed; then sync and close.  The cache is small, so that write-back runs in the
 * middle.  The engine's invariants are asserted after every operation
 * (SUFS_DEBUG).  Any crash, sanitizer report, failed assertion or leak is a
 * finding; errors are expected.
 * FUZZ_VERBOSE=1 prints each operation and what it returned.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memdev.h"
#include "sufs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_NAMES 8
#define MAX_IMAGE (8u << 20)

struct names {
	unsigned n;
	struct {
		char name[256];
		size_t len;
		uint32_t ino;
	} e[MAX_NAMES];
};

static int collect(void *arg, const char *name, size_t len, uint32_t ino, unsigned ftype)
{
	struct names *s = arg;

	(void)ftype;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (len >= sizeof(s->e[0].name))
		return 0;
	memcpy(s->e[s->n].name, name, len);
	s->e[s->n].name[len] = 0;
	s->e[s->n].len = len;
	s->e[s->n].ino = ino;
	return ++s->n == MAX_NAMES;
}

#define NAME(s) (s), strlen(s)

static int verbose;

/* Run one operation; its result only shows with FUZZ_VERBOSE. */
#define OP(call)                                                               \
	do {                                                                   \
		int rc_ = (call);                                              \
		if (verbose)                                                   \
			fprintf(stderr, "  %s: %s\n", #call, sufs_strerror(rc_)); \
	} while (0)

/* Extended attributes: one in the inode, one that grows the set into a
 * block, a change in place, the list, a removal that shrinks it back. */
static void work_xattrs(struct sufs_fs *fs, uint32_t ino)
{
	static uint8_t big[700];
	char list[512];
	size_t len;

	memset(big, 'v', sizeof(big));
	OP(sufs_setxattr(fs, ino, "user.fz", "1", 1, 0, NULL));
	OP(sufs_setxattr(fs, ino, "user.fz-big", big, sizeof(big) / 2, 0, NULL));
	OP(sufs_setxattr(fs, ino, "user.fz-big", big, sizeof(big), SUFS_XATTR_REPLACE, NULL));
	OP(sufs_listxattr(fs, ino, list, sizeof(list), &len, NULL));
	OP(sufs_removexattr(fs, ino, "user.fz-big", NULL));
}

/* What a name of dir (the root, or a directory in it) goes through. */
static void work_on(struct sufs_fs *fs, uint32_t dir, const char *name, size_t len,
		    uint32_t ino, const struct sufs_cred *cred, unsigned depth)
{
	static uint8_t buf[3 * 4096];
	struct sufs_setattr sa = { .mask = SUFS_SET_MODE | SUFS_SET_MTIME, .mode = 0640 };
	struct sufs_stat st;
	struct names sub = { 0 };
	uint32_t child, bsize = sufs_get_super(fs)->block_size;
	size_t done;
	unsigned i;

	if (verbose)
		fprintf(stderr, "%*s%s (inode %u in %u)\n", (int)depth + 1, "", name, ino, dir);
	if (sufs_stat(fs, ino, &st))
		return;
	OP(sufs_setattr(fs, ino, &sa));
	work_xattrs(fs, ino);
	switch (st.mode & 0170000) {
	case 0100000:
		OP(sufs_read(fs, ino, 0, buf, sizeof(buf), &done));
		OP(sufs_write(fs, ino, 100, buf, sizeof(buf)));
		OP(sufs_write(fs, ino, st.size, buf, 1000));
		OP(sufs_truncate(fs, ino, st.size / 2));
		OP(sufs_truncate(fs, ino, st.size + 3 * (uint64_t)bsize)); /* a hole */
		OP(sufs_link(fs, ino, SUFS_ROOT_INO, NAME("fz-link")));
		OP(sufs_rename(fs, dir, name, len, SUFS_ROOT_INO, NAME("fz-moved")));
		OP(sufs_unlink(fs, SUFS_ROOT_INO, NAME("fz-link")));
		OP(sufs_fsync(fs, ino));
		OP(sufs_unlink(fs, SUFS_ROOT_INO, NAME("fz-moved")));
		break;
	case 0040000:
		OP(sufs_create(fs, ino, NAME("fz-new"), 0644, cred, &child));
		OP(sufs_mkdir(fs, ino, NAME("fz-dir"), 0755, cred, &child));
		OP(sufs_rename(fs, dir, name, len, ino, NAME("fz-into"))); /* EINVAL */
		OP(sufs_rename(fs, ino, NAME("fz-new"), SUFS_ROOT_INO, NAME("fz-out")));
		OP(sufs_rename(fs, ino, NAME("fz-dir"), SUFS_ROOT_INO, NAME("fz-outdir")));
		OP(sufs_fsync(fs, ino));
		if (depth == 0) {
			/* and the first names in it, one level down */
			sufs_readdir(fs, ino, collect, &sub);
			for (i = 0; i < sub.n && i < 4; i++)
				work_on(fs, ino, sub.e[i].name, sub.e[i].len, sub.e[i].ino, cred,
					depth + 1);
		}
		/* over an empty directory, and back */
		OP(sufs_rename(fs, dir, name, len, SUFS_ROOT_INO, NAME("fz-outdir")));
		OP(sufs_rename(fs, SUFS_ROOT_INO, NAME("fz-outdir"), dir, name, len));
		OP(sufs_rmdir(fs, dir, name, len)); /* ENOTEMPTY, or it goes */
		OP(sufs_rmdir(fs, SUFS_ROOT_INO, NAME("fz-outdir")));
		OP(sufs_unlink(fs, SUFS_ROOT_INO, NAME("fz-out")));
		break;
	default:
		OP(sufs_rename(fs, dir, name, len, SUFS_ROOT_INO, NAME("fz-other")));
		OP(sufs_unlink(fs, SUFS_ROOT_INO, NAME("fz-other")));
		break;
	}
}

/* New files and directories, through every level of indirection. */
static void work_new(struct sufs_fs *fs, const struct sufs_cred *cred)
{
	static const uint8_t bytes[2048] = { 1, 2, 3 };
	uint32_t bsize = sufs_get_super(fs)->block_size, f, d, g;
	uint64_t ptrs = bsize / 8;
	uint64_t offs[] = { 0, 11 * (uint64_t)bsize, (12 + ptrs) * bsize,
			    (12 + ptrs + ptrs * ptrs) * bsize };
	unsigned i;

	if (sufs_mkdir(fs, SUFS_ROOT_INO, NAME("fz-d"), 0755, cred, &d))
		return;
	for (i = 0; i < 4; i++) {
		char n[8] = { 'f', (char)('0' + i) };
		if (!sufs_create(fs, d, n, 2, 0644, cred, &f))
			OP(sufs_write(fs, f, offs[i], bytes, sizeof(bytes)));
	}
	OP(sufs_symlink(fs, d, NAME("s"), "f0", cred, &f));
	OP(sufs_mknod(fs, d, NAME("p"), 0010644, 0, 0, cred, &f));
	OP(sufs_mkdir(fs, d, NAME("sub"), 0755, cred, &g));
	OP(sufs_rename(fs, d, NAME("f1"), d, NAME("f2")));    /* over a file */
	OP(sufs_rename(fs, SUFS_ROOT_INO, NAME("fz-d"), d, NAME("x"))); /* EINVAL */
	if (!sufs_lookup(fs, d, NAME("f3"), &f))
		OP(sufs_truncate(fs, f, 1));
	OP(sufs_sync(fs));
	OP(sufs_unlink(fs, d, NAME("f0")));
	OP(sufs_unlink(fs, d, NAME("f2")));
	OP(sufs_unlink(fs, d, NAME("f3")));
	OP(sufs_unlink(fs, d, NAME("s")));
	OP(sufs_unlink(fs, d, NAME("p")));
	OP(sufs_rmdir(fs, d, NAME("sub")));
	OP(sufs_rmdir(fs, SUFS_ROOT_INO, NAME("fz-d")));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned modes[] = { SUFS_MODE_SOFTDEP, SUFS_MODE_SYNC, SUFS_MODE_ASYNC };
	struct sufs_cred cred = { 0, 0 };
	struct sufs_snap_info snap;
	struct sufs_dev *dev;
	struct sufs_fs *fs;
	struct names names = { 0 };
	uint8_t *image;
	unsigned i, flags, mode, snapshot;
	int rc;

	if (size == 0 || size > MAX_IMAGE)
		return 0;
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	mode = modes[data[size - 1] % 3];
	snapshot = data[size - 1] / 6 % 2;
	image = malloc(size);
	if (!image)
		abort();
	memcpy(image, data, size);
	dev = memdev_new(image, size, 1);
	if (!dev)
		abort();
	flags = SUFS_OPEN_RDWR | (data[size - 1] / 3 % 2 ? SUFS_OPEN_IGNORE_CSUM : 0);
	rc = sufs_open_dev(dev, flags, 0, &fs);
	if (verbose)
		fprintf(stderr, "open (%s, checksums %s): %s\n", sufs_mode_name(mode),
			flags & SUFS_OPEN_IGNORE_CSUM ? "ignored" : "verified", sufs_strerror(rc));
	if (rc) {
		sufs_dev_close(dev);
		free(image);
		return 0;
	}
	sufs_set_mode(fs, mode);
	sufs_set_cache_size(fs, 0); /* the least: write-back in the middle */
	if (snapshot)
		OP(sufs_snap_create(fs, "fz", &snap));
	sufs_readdir(fs, SUFS_ROOT_INO, collect, &names);
	for (i = 0; i < names.n; i++)
		work_on(fs, SUFS_ROOT_INO, names.e[i].name, names.e[i].len, names.e[i].ino,
			&cred, 0);
	work_new(fs, &cred);
	if (snapshot)
		OP(sufs_snap_delete(fs, "fz"));
	OP(sufs_sync(fs));
	OP(sufs_close(fs));
	free(image);
	return 0;
}

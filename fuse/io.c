/*
 * io.c - a file's contents: open, read, write, fsync, fallocate, lseek.
 *
 * An open file needs no state of its own here, so opening costs no
 * request (op_open), and neither does closing: there is no flush, since
 * every write reached the library when it returned (the kernel asks once,
 * hears ENOSYS from libfuse, and stops asking).  The kernel is the only
 * writer of the mount, so it may keep a file's pages from one open to the
 * next.
 */
#include "config.h"

#include "sufs-fuse.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Nothing to do at open, so the kernel is told so once (ENOSYS): it then
 * opens files without asking (FUSE's "no open"), keeping their pages
 * cached, and sends no release either.  What keeps an unlinked file alive
 * is its lookup count (nodes.c), which outlives every open file.
 */
void op_open(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	(void)node;
	(void)fi;
	fuse_reply_err(req, ENOSYS);
}

void op_read(fuse_req_t req, fuse_ino_t node, size_t size, off_t off,
	     struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	uint32_t ino = ino_of(node);
	size_t done = 0;
	char *buf;
	int rc, err;

	(void)fi;
	buf = malloc(size ? size : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	sufs_lock(m->fs);
	rc = sufs_read(m->fs, ino, (uint64_t)off, buf, size, &done);
	err = fuse_errno(m, rc, "reading", ino);
	sufs_unlock(m->fs);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, done);
	free(buf);
}

/*
 * How much of a write that failed reached the file: the library writes
 * block after block and keeps what it wrote, so the write stopped at the
 * first block of the range that is still a hole.  Under the lock.
 */
static size_t written_before_hole(struct mount *m, uint32_t ino, uint64_t off, size_t size)
{
	uint64_t bs = m->block_size, blk, pblk, end = off + size;

	for (blk = off / bs; blk * bs < end; blk++) {
		if (sufs_bmap(m->fs, ino, blk, &pblk) || !pblk)
			return blk * bs > off ? (size_t)(blk * bs - off) : 0;
	}
	return 0; /* every block there, and still it failed: report the error */
}

void op_write(fuse_req_t req, fuse_ino_t node, const char *buf, size_t size, off_t off,
	      struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	uint32_t ino = ino_of(node);
	size_t done = size;
	int rc, err = 0;

	(void)fi;
	sufs_lock(m->fs);
	rc = sufs_write(m->fs, ino, (uint64_t)off, buf, size);
	/* out of room part way: the program gets a short write, and the
	 * error when it writes the rest (as write(2) says) */
	if (rc == -ENOSPC || rc == -EDQUOT)
		done = written_before_hole(m, ino, (uint64_t)off, size);
	if (rc && !(done && (rc == -ENOSPC || rc == -EDQUOT)))
		err = fuse_errno(m, rc, "writing", ino);
	sufs_unlock(m->fs);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, done);
}

void op_release(fuse_req_t req, fuse_ino_t node, struct fuse_file_info *fi)
{
	(void)node;
	(void)fi;
	fuse_reply_err(req, 0); /* a file made by create: nothing of it kept here */
}

/*
 * Make ino durable: its data, its inode and the names that reach it from
 * the root, and what those wait for; nothing else is written (a file's
 * fsync does not wait for the rest of the pending work).  For a
 * directory, its entries too, with the inodes they name.  Under the lock.
 */
int sync_inode(struct mount *m, uint32_t ino)
{
	return sufs_fsync(m->fs, ino);
}

/* fsync and fdatasync alike (an inode's size and block map are what
 * fdatasync must write as well). */
void op_fsync(fuse_req_t req, fuse_ino_t node, int datasync, struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	uint32_t ino = ino_of(node);
	int rc;

	(void)datasync;
	(void)fi;
	sufs_lock(m->fs);
	rc = sync_inode(m, ino);
	sufs_unlock(m->fs);
	fuse_reply_err(req, fuse_errno(m, rc, "syncing", ino));
}

/* ---- fallocate ------------------------------------------------------------------ */

/*
 * Plain fallocate: every block of the range is there afterwards, and the
 * size at least reaches its end.  The library has no unwritten blocks, so
 * the holes of the range are written with zeros (what glibc's
 * posix_fallocate does where a file system cannot), which is what reads
 * of them returned anyway.  Refused with ENOSPC before anything is
 * written when the holes cannot fit.  Under the lock.
 */
static int allocate(struct mount *m, uint32_t ino, uint64_t off, uint64_t len)
{
	const struct sufs_super *sb = sufs_get_super(m->fs);
	uint64_t bs = m->block_size, end = off + len, blk, pblk, holes = 0, lo, hi;
	struct sufs_stat s;
	static const char zeros[65536];
	int rc;

	rc = sufs_stat(m->fs, ino, &s);
	if (rc)
		return rc;
	if (!S_ISREG(s.mode))
		return S_ISDIR(s.mode) ? -EISDIR : -ENODEV;
	if (len / bs > sb->free_blocks)
		return -ENOSPC;
	for (blk = off / bs; blk * bs < end; blk++) {
		rc = sufs_bmap(m->fs, ino, blk, &pblk);
		if (rc)
			return rc;
		holes += !pblk;
	}
	if (holes > sb->free_blocks)
		return -ENOSPC;
	for (blk = off / bs; blk * bs < end; blk++) {
		rc = sufs_bmap(m->fs, ino, blk, &pblk);
		if (rc)
			return rc;
		if (pblk)
			continue;
		lo = blk * bs > off ? blk * bs : off;
		hi = (blk + 1) * bs < end ? (blk + 1) * bs : end;
		rc = sufs_write(m->fs, ino, lo, zeros, (size_t)(hi - lo));
		if (rc)
			return rc;
	}
	rc = sufs_stat(m->fs, ino, &s);
	if (!rc && s.size < end)
		rc = sufs_truncate(m->fs, ino, end); /* its last block is there already */
	return rc;
}

void op_fallocate(fuse_req_t req, fuse_ino_t node, int mode, off_t off, off_t len,
		  struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	uint32_t ino = ino_of(node);
	int rc;

	(void)fi;
	if (off < 0 || len <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (mode != 0 && mode != (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)) {
		/* no unwritten blocks: nothing to keep past the size, nor to
		 * zero or collapse a range with */
		fuse_reply_err(req, EOPNOTSUPP);
		return;
	}
	if ((uint64_t)off + (uint64_t)len > (uint64_t)INT64_MAX) {
		fuse_reply_err(req, EFBIG);
		return;
	}
	sufs_lock(m->fs);
	if (mode == 0)
		rc = allocate(m, ino, (uint64_t)off, (uint64_t)len);
	else /* the blocks wholly in the range go, the edges are zeroed */
		rc = sufs_punch(m->fs, ino, (uint64_t)off, (uint64_t)len);
	sufs_unlock(m->fs);
	fuse_reply_err(req, fuse_errno(m, rc, "allocating in", ino));
}

/* ---- lseek: SEEK_DATA and SEEK_HOLE --------------------------------------------- */

/*
 * Where the data or the hole at or after a block starts, from the
 * file's block map in logical order (sufs_block_iterate visits only
 * blocks that are there, so a large hole costs nothing).
 */
struct seek {
	int whence;
	uint64_t from;             /* the first block looked at */
	uint64_t found;            /* SEEK_DATA: the block found; SEEK_HOLE:
	                              the first block not yet seen mapped */
};

static int seek_fn(struct sufs_fs *fs, uint32_t ino, uint64_t lblk, uint64_t pblk, int level,
		   int bad, void *arg)
{
	struct seek *s = arg;

	(void)fs;
	(void)ino;
	(void)pblk;
	if (level != 0 || bad || lblk < s->from)
		return 0;
	if (s->whence == SEEK_DATA) {
		s->found = lblk;
		return 1;
	}
	if (lblk > s->found)
		return 1; /* a gap before this block: the hole */
	s->found = lblk + 1;
	return 0;
}

/* The offset, or a negative error; under the lock. */
static int64_t seek(struct mount *m, uint32_t ino, uint64_t off, int whence)
{
	struct seek s = { whence, off / m->block_size, UINT64_MAX };
	struct sufs_stat st;
	uint64_t at;
	int rc = sufs_stat(m->fs, ino, &st);

	if (rc)
		return rc;
	if (off >= st.size)
		return -ENXIO;
	if (whence == SEEK_HOLE)
		s.found = s.from;
	rc = sufs_block_iterate(m->fs, ino, seek_fn, &s);
	if (rc < 0)
		return rc;
	if (whence == SEEK_DATA && s.found == UINT64_MAX)
		return -ENXIO; /* only a hole up to the end */
	at = s.found * m->block_size;
	if (at < off)
		at = off;
	return (int64_t)(at < st.size ? at : st.size); /* the end is a hole too */
}

void op_lseek(fuse_req_t req, fuse_ino_t node, off_t off, int whence,
	      struct fuse_file_info *fi)
{
	struct mount *m = mount_of(req);
	int64_t at;

	(void)fi;
	if (whence != SEEK_DATA && whence != SEEK_HOLE) {
		fuse_reply_err(req, EINVAL); /* the kernel answers the others */
		return;
	}
	if (off < 0) {
		fuse_reply_err(req, ENXIO);
		return;
	}
	sufs_lock(m->fs);
	at = seek(m, ino_of(node), (uint64_t)off, whence);
	sufs_unlock(m->fs);
	if (at < 0)
		fuse_reply_err(req, fuse_errno(m, (int)at, "seeking in", ino_of(node)));
	else
		fuse_reply_lseek(req, at);
}

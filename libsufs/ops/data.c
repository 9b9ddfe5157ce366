/*
 * data.c - file contents and attributes: write, truncate, punch,
 * setattr.
 */
#include "config.h"
#include "ops_int.h"

#include <stdlib.h>
#include <string.h>

/*
 * Write len bytes at off.  A new block is filled before the pointer to it
 * is set, and the pointer waits for the block's contents and bitmap bit
 * (rule 1); a block being overwritten is just changed.
 */
static int do_write(struct sufs_fs *fs, uint32_t ino, uint64_t off, const void *buf, size_t len)
{
	struct sufs_inode in;
	struct waits iw = { 0 }, pw = { 0 };
	const uint8_t *src = buf;
	uint64_t pblk, goal, maxbytes;
	struct buf *b;
	int err = writable(fs);

	if (!err)
		err = load_mutable(fs, ino, &in);
	if (err)
		return err;
	if (S_ISDIR(in.mode))
		return -EISDIR;
	if (!S_ISREG(in.mode))
		return -EINVAL;
	maxbytes = inode_max_blocks(fs) << fs->bshift;
	if (off > maxbytes || len > maxbytes - off)
		return -EFBIG;
	if (len == 0)
		return 0;
	goal = 0;
	if (off >> fs->bshift)
		bmap_get(fs, &in, (off >> fs->bshift) - 1, &goal);
	goal = goal ? goal + 1 : inode_goal(fs, ino);
	while (len) {
		uint32_t boff = (uint32_t)(off & (fs->bsize - 1));
		size_t n = fs->bsize - boff < len ? fs->bsize - boff : len;
		uint64_t lblk = off >> fs->bshift;

		err = bmap_get(fs, &in, lblk, &pblk);
		if (err)
			break;
		if (!pblk) {
			pw.n = 0;
			err = bmap_room(fs, &in, lblk, 1);
			if (!err)
				err = bmap_set(fs, &in, lblk, 0, goal, NULL, &iw, NULL);
			if (!err)
				err = block_new(fs, goal, BUF_DATA, UPD_DATA, &pblk, &b, &pw);
			if (err)
				break;
			memcpy(b->data + boff, src, n); /* part of the new block's update */
			buf_put(fs, b);
			err = bmap_set(fs, &in, lblk, pblk, goal, &pw, &iw, NULL);
		} else {
			err = n == fs->bsize ? buf_get_new(fs, pblk, BUF_DATA, &b)
					     : buf_get(fs, pblk, BUF_DATA, &b);
			if (err)
				break;
			buf_update(fs, b, boff, (uint32_t)n, UPD_DATA, NULL);
			memcpy(b->data + boff, src, n);
			buf_put(fs, b);
		}
		if (err)
			break;
		goal = pblk + 1;
		src += n;
		off += n;
		len -= n;
		if (off > in.size)
			in.size = off;
	}
	/* what was written so far stays written, error or not */
	set_now(fs, &in, 0, 1, 1);
	if (inode_store(fs, ino, &in, UPD_INODEDEP, &iw, NULL) && !err)
		err = -EIO;
	return err;
}

int sufs_write(struct sufs_fs *fs, uint32_t ino, uint64_t off, const void *buf, size_t len)
{
	return fs_op_end(fs, do_write(fs, ino, off, buf, len));
}

/*
 * Cut out of the tree under ptr (an indirect block of the given level
 * mapping logical blocks from base) the blocks of [lo, hi).  Freed blocks
 * go to f; the pointer clearing in this block waits for nothing and goes
 * into w (the frees wait for it).  *whole says the block itself goes too:
 * all it maps lies in the range.  (A truncate cuts [keep, UINT64_MAX).)
 */
static int trunc_tree(struct sufs_fs *fs, uint64_t ptr, int level, uint64_t base,
		      uint64_t lo, uint64_t hi, struct freeing *f, struct waits *w, int *whole)
{
	uint64_t span = 1, child;
	uint32_t i, first = UINT32_MAX, last = 0;
	struct buf *b;
	int err, gone, l;

	for (l = 1; l < level; l++)
		span *= fs->ptrs;
	/* hi > base first: a range that ends before the tree (a hole punched
	 * in front of it) would make hi - base wrap around */
	*whole = base >= lo && hi > base && hi - base >= span * fs->ptrs;
	if (*whole) {
		struct sufs_inode one = { 0 };
		one.mode = S_IFREG;
		one.block[SUFS_IND + level - 1] = ptr;
		/* the whole subtree: walk it as if it hung from an inode */
		return inode_walk(fs, 0, &one, collect_fn, &f->blocks);
	}
	if (!block_in_range(fs, ptr))
		return -SUFS_ECORRUPT;
	for (i = 0; i < fs->ptrs; i++) {
		uint64_t start = base + i * span;
		if (start + span <= lo || start >= hi)
			continue;
		if (start >= lo && hi - start >= span)
			last = i; /* the last slot wholly in the range */
		err = buf_get(fs, ptr, BUF_IND, &b);
		if (err)
			return err;
		child = get64(b->data + IND_PTR(i));
		buf_put(fs, b);
		if (!child)
			continue;
		if (level == 1) {
			gone = 1;
			err = blist_add(&f->blocks, child);
		} else {
			err = trunc_tree(fs, child, level - 1, start, lo, hi, f, w, &gone);
		}
		if (err)
			return err;
		if (gone && first == UINT32_MAX)
			first = i;
	}
	if (first != UINT32_MAX) {
		err = buf_get(fs, ptr, BUF_IND, &b);
		if (err)
			return err;
		waits_add(w, buf_update(fs, b, IND_PTR(first), IND_PTR(last + 1 - first), UPD_FREEBLKS,
					NULL));
		memset(b->data + IND_PTR(first), 0, IND_PTR(last + 1 - first));
		buf_put(fs, b);
	}
	return 0;
}

/*
 * Free the blocks of logical blocks [lo, hi) of an inode: their pointers
 * are cleared now, the blocks go back once that is on disk (rule 2).  The
 * inode's store (with whatever else the caller changed in it) is part of
 * the same wait.
 */
static int free_range(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint64_t lo,
		      uint64_t hi)
{
	uint64_t p = fs->ptrs;
	uint64_t first[3] = { SUFS_NDIR, SUFS_NDIR + p, SUFS_NDIR + p + p * p };
	struct freeing *f = calloc(1, sizeof(*f));
	struct waits w = { 0 };
	upd_id id;
	uint32_t i;
	int err = 0, whole;

	if (!f)
		return -ENOMEM;
	for (i = 0; i < SUFS_NDIR && !err; i++) {
		if (i >= lo && i < hi && in->block[i]) {
			err = blist_add(&f->blocks, in->block[i]);
			in->block[i] = 0;
		}
	}
	for (i = 0; i < 3 && !err; i++) {
		if (!in->block[SUFS_IND + i])
			continue;
		err = trunc_tree(fs, in->block[SUFS_IND + i], (int)i + 1, first[i], lo, hi, f, &w,
				 &whole);
		if (!err && whole)
			in->block[SUFS_IND + i] = 0;
	}
	if (err)
		goto fail;
	in->blocks = in->blocks > f->blocks.n ? in->blocks - f->blocks.n : 0;
	set_now(fs, in, 0, 1, 1);
	err = inode_store(fs, ino, in, UPD_FREEBLKS, NULL, &id);
	if (err)
		goto fail;
	waits_add(&w, id);
	return deps_defer(fs, w.id, w.n, freeing_run, f);
fail:
	free(f->blocks.blk);
	free(f);
	return err;
}

/* Zero bytes [from, to) of the block of lblk, if it has one: a block
 * partly in a range cut out keeps its other bytes. */
static int zero_part(struct sufs_fs *fs, const struct sufs_inode *in, uint64_t lblk,
		     uint32_t from, uint32_t to)
{
	uint64_t pblk;
	struct buf *b;
	int err;

	if (from >= to || bmap_get(fs, in, lblk, &pblk) != 0 || !pblk)
		return 0;
	err = buf_get(fs, pblk, BUF_DATA, &b);
	if (err)
		return err;
	buf_update(fs, b, from, to - from, UPD_DATA, NULL);
	memset(b->data + from, 0, to - from);
	buf_put(fs, b);
	return 0;
}

/*
 * Truncate to size.  Growing leaves a hole.  Shrinking zeroes the tail of
 * the last block kept, clears the pointers to what goes, and frees those
 * blocks only once the cleared pointers are on disk (rule 2).
 */
static int do_truncate(struct sufs_fs *fs, uint32_t ino, struct sufs_inode *in, uint64_t size)
{
	uint64_t keep = (size + fs->bsize - 1) >> fs->bshift;
	uint32_t tail = (uint32_t)(size & (fs->bsize - 1));
	int err;

	if (size >= in->size) {
		in->size = size;
		return 0;
	}
	if (tail && (err = zero_part(fs, in, keep - 1, tail, fs->bsize)) != 0)
		return err;
	in->size = size;
	return free_range(fs, ino, in, keep, UINT64_MAX);
}

/*
 * Punch a hole: bytes [off, off + len) read as zeros afterwards, the blocks
 * wholly inside go back (once their pointers are cleared on disk), the
 * size stays (fallocate's PUNCH_HOLE | KEEP_SIZE).
 */
static int do_punch(struct sufs_fs *fs, uint32_t ino, uint64_t off, uint64_t len)
{
	struct sufs_inode in;
	uint64_t end, lo, hi, bmask = fs->bsize - 1;
	int err = writable(fs);

	if (!err)
		err = load_mutable(fs, ino, &in);
	if (err)
		return err;
	if (S_ISDIR(in.mode))
		return -EISDIR;
	if (!S_ISREG(in.mode))
		return -EINVAL;
	if (len == 0)
		return 0;
	end = len > UINT64_MAX - off ? UINT64_MAX : off + len;
	if (end > in.size)
		end = in.size; /* nothing past the end to zero */
	if (off >= end)
		return 0;
	lo = (off + bmask) >> fs->bshift;           /* the first whole block */
	hi = end == in.size ? (end + bmask) >> fs->bshift : end >> fs->bshift;
	if ((off >> fs->bshift) == (end >> fs->bshift) && end != in.size) {
		/* within one block */
		err = zero_part(fs, &in, off >> fs->bshift, (uint32_t)(off & bmask),
				(uint32_t)(end & bmask));
	} else {
		if (off & bmask)
			err = zero_part(fs, &in, off >> fs->bshift, (uint32_t)(off & bmask),
					fs->bsize);
		if (!err && (end & bmask) && end != in.size)
			err = zero_part(fs, &in, end >> fs->bshift, 0, (uint32_t)(end & bmask));
	}
	if (err)
		return err;
	return free_range(fs, ino, &in, lo, hi > lo ? hi : lo);
}

int sufs_punch(struct sufs_fs *fs, uint32_t ino, uint64_t off, uint64_t len)
{
	return fs_op_end(fs, do_punch(fs, ino, off, len));
}

/* Free the blocks an inode maps past its size (a leak the background check
 * found: a truncation cut short by a crash). */
int ops_trim_inode(struct sufs_fs *fs, uint32_t ino)
{
	struct sufs_inode in;
	uint64_t size;
	int err = load_live(fs, ino, &in);

	if (err || !(S_ISREG(in.mode) || S_ISDIR(in.mode)))
		return err;
	size = in.size;
	in.size = UINT64_MAX; /* so that everything past size goes */
	return do_truncate(fs, ino, &in, size);
}

static int do_setattr(struct sufs_fs *fs, uint32_t ino, const struct sufs_setattr *sa)
{
	struct sufs_inode in;
	int err = writable(fs);

	if (!err)
		err = load_mutable(fs, ino, &in);
	if (err)
		return err;
	if ((sa->mask & SUFS_SET_ATIME && sa->atime_ns >= 1000000000u) ||
	    (sa->mask & SUFS_SET_MTIME && sa->mtime_ns >= 1000000000u) ||
	    (sa->mask & SUFS_SET_CTIME && sa->ctime_ns >= 1000000000u))
		return -EINVAL;
	if (sa->mask & SUFS_SET_SIZE) {
		if (S_ISDIR(in.mode))
			return -EISDIR;
		if (!S_ISREG(in.mode))
			return -EINVAL;
		if (sa->size > (inode_max_blocks(fs) << fs->bshift))
			return -EFBIG;
		if (sa->size != in.size) {
			err = do_truncate(fs, ino, &in, sa->size);
			if (err)
				return err;
			set_now(fs, &in, 0, 1, 0);
		}
	}
	if (sa->mask & SUFS_SET_MODE) {
		in.mode = (uint16_t)((in.mode & S_IFMT) | (sa->mode & 07777));
		err = xattr_acl_chmod(fs, &in);
		if (err)
			return err;
	}
	if (sa->mask & SUFS_SET_UID)
		in.uid = sa->uid;
	if (sa->mask & SUFS_SET_GID)
		in.gid = sa->gid;
	if (sa->mask & SUFS_SET_ATIME) {
		in.atime = sa->atime;
		in.atime_ns = sa->atime_ns;
	}
	if (sa->mask & SUFS_SET_MTIME) {
		in.mtime = sa->mtime;
		in.mtime_ns = sa->mtime_ns;
	}
	if (sa->mask & SUFS_SET_CTIME) {
		in.ctime = sa->ctime;
		in.ctime_ns = sa->ctime_ns;
	} else {
		set_now(fs, &in, 0, 0, 1);
	}
	return inode_store(fs, ino, &in, UPD_INODEDEP, NULL, NULL);
}

int sufs_setattr(struct sufs_fs *fs, uint32_t ino, const struct sufs_setattr *sa)
{
	return fs_op_end(fs, do_setattr(fs, ino, sa));
}

int sufs_truncate(struct sufs_fs *fs, uint32_t ino, uint64_t size)
{
	struct sufs_setattr sa = { .mask = SUFS_SET_SIZE, .size = size };
	return sufs_setattr(fs, ino, &sa);
}
